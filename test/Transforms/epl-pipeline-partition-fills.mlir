// RUN: epl-opt %s --epl-plan=devices=2 --epl-autodiff --inline="default-pipeline=" --linalg-generalize-named-ops --epl-sharding-propagation --epl-insert-collectives --epl-pipeline-partition | FileCheck %s

// A fill of the first stage that the second reads too (torch-mlir's CSE
// shares fills between layers): each stage makes its own. It was sent to
// the second stage every micro-batch, more bytes than the activations.
// Stage 0 sends each micro-batch's activations alone, tag 1.

// CHECK-LABEL: func.func @model_stage0(
// CHECK-NOT: epl.send {{.*}} tag 2
// CHECK: epl.send {{.*}} to 1 tag 1 grouped : tensor<4x4xf32>
// CHECK-NOT: epl.send {{.*}} tag 2
// CHECK: epl.send {{.*}} to 1 tag 1 grouped : tensor<4x4xf32>
// CHECK-NOT: epl.send {{.*}} tag 2
// CHECK-LABEL: func.func @model_stage1(
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w0: tensor<4x4xf32> {epl.arg = "param", epl.name = "w0"},
                   %w1: tensor<4x4xf32> {epl.arg = "param", epl.name = "w1"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() {epl.scope = #epl.replicate<devices = 1, name = "embed">} : tensor<8x4xf32>
    %z = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "embed">} ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %m0 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "embed">} ins(%x, %w0 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %h0 = math.tanh %m0 {epl.scope = #epl.replicate<devices = 1, name = "embed">} : tensor<8x4xf32>
    %m1 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "head">} ins(%h0, %w1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%m1 : tensor<8x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
