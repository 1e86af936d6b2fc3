// RUN: epl-opt %s -split-input-file --epl-estimate-memory | FileCheck %s
// RUN: epl-opt %s -split-input-file --epl-estimate-memory -o /dev/null | FileCheck %s --check-prefix=PRINT

// An op writes into its destination when nothing reads that buffer later:
// %y cannot overwrite %x (the add reads %x after it), the add overwrites
// %y. Two 64-byte buffers are live at the add; the returned one to the end.

// CHECK-LABEL: func.func @in_place
// CHECK-SAME: epl.memory_estimate = {grads = 0 : i64, inputs = 64 : i64, opt_state = 0 : i64, params = 0 : i64, peak = 128 : i64}
// PRINT: memory estimate @in_place: params 0 B, opt_state 0 B, inputs 64 B, grads 0 B, peak buffers 128 B (128 bytes)
func.func @in_place(%a: tensor<4x4xf32> {epl.arg = "input"}) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %x = linalg.exp ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.negf ins(%x : tensor<4x4xf32>) outs(%x : tensor<4x4xf32>) -> tensor<4x4xf32>
  %z = linalg.add ins(%x, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%y : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %z : tensor<4x4xf32>
}

// -----

// A buffer dies at its last use: the three temporaries of the chain are
// never live together. An argument is never written: the first op
// allocates.

// CHECK-LABEL: func.func @last_use
// CHECK-SAME: peak = 128 : i64
func.func @last_use(%a: tensor<4x4xf32>) -> tensor<f32> {
  %x = linalg.exp ins(%a : tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %y = linalg.exp ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %z = linalg.exp ins(%y : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = tensor.empty() : tensor<f32>
  %r = linalg.reduce ins(%z : tensor<4x4xf32>) outs(%s : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  return %r : tensor<f32>
}

// -----

// A call's results are buffers the caller allocates; the callee's own
// temporaries (its 64-byte %t) add to the caller's at the call. Slices are
// views, but one passed to a call is copied (16 bytes here).

// CHECK-LABEL: func.func @caller
// CHECK-SAME: peak = 160 : i64
func.func private @piece(%a: tensor<4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.broadcast ins(%a : tensor<4xf32>) outs(%e : tensor<4x4xf32>) dimensions = [0]
  %r = linalg.exp ins(%t : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
func.func @caller(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %s = tensor.extract_slice %a[1, 0] [1, 4] [1, 1] : tensor<4x4xf32> to tensor<4xf32>
  %r = func.call @piece(%s) : (tensor<4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
