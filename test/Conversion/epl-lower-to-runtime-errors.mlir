// RUN: epl-opt %s --epl-lower-to-runtime --split-input-file -verify-diagnostics

epl.mesh @mesh ["data" = 2]
func.func @f(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error @+1 {{'epl.all_reduce' op cannot run on the CPU runtime: it moves f32, f64, f16, i32 and i64 tensors, not 'bf16'}}
  %0 = epl.all_reduce %x on @mesh over ["data"] sum : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

epl.mesh @mesh ["data" = 2]
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'epl.all_gather' op cannot be lowered to the runtime with a dynamic shape ('tensor<?x4xf32>')}}
  %0 = epl.all_gather %x on @mesh over ["data"] dim 1 : tensor<?x4xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

epl.mesh @mesh ["data" = 2]
func.func @f(%x: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @+1 {{'epl.all_reduce' op cannot sum 'tensor<4xi8>' on the runtime: a narrow integer sum would overflow}}
  %y = epl.all_reduce %x on @mesh over ["data"] sum : tensor<4xi8>
  return %y : tensor<4xi8>
}
