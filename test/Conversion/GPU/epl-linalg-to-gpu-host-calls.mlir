// RUN: epl-opt %s --epl-linalg-to-gpu=allow-host-calls=1 --split-input-file --verify-diagnostics | FileCheck %s

// Kernels run on the host (--emulate-gpu) may call the runtime (a gather's
// bounds check), and nothing else: a function of the model is refused as
// on the GPU, so that the emulated kernels are the GPU's.
#id = affine_map<(i) -> (i)>
func.func private @host(f32)
func.func @calls_the_model(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{cannot run as a GPU kernel: its body calls a host function (@host)}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    // expected-note @+1 {{called here}}
    func.call @host(%x) : (f32) -> ()
    linalg.yield %x : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @calls_the_runtime
// CHECK: gpu.launch
// CHECK: call @epl_rt_check_index
#id = affine_map<(i) -> (i)>
func.func private @epl_rt_check_index(i64, i64)
func.func @calls_the_runtime(%a: memref<4xf32>, %b: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = arith.constant 3 : i64
    func.call @epl_rt_check_index(%i, %i) : (i64, i64) -> ()
    linalg.yield %x : f32
  }
  return
}
