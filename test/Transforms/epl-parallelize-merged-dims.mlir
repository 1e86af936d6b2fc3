// RUN: epl-opt %s --epl-parallelize=devices=2 | FileCheck %s

// Data parallelism of a seq-first linear layer: the batch-first input is
// moved to (L, B, E) and flattened to L * B rows, whose block a device's
// batch cannot be. The activations were gathered and every device computed
// the whole batch; with the rows folded back into (l, b) loops
// (epl-fold-reshapes) each device computes its half of b, and the only
// collectives are the reductions of the gradient and the loss.
// CHECK-LABEL: func.func @model
// CHECK-SAME: tensor<2x6x16xf32>
// CHECK-NOT: epl.all_gather
// CHECK: epl.all_reduce {{.*}} over ["data"] sum {epl.phase = #epl.phase<backward_weight>} : tensor<128xf32>
// CHECK-NOT: epl.all_gather
// CHECK: epl.all_reduce {{.*}} over ["data"] sum {epl.phase = #epl.phase<forward>} : tensor<f32>
// CHECK-NOT: epl.all_gather
// CHECK: return
module {
  func.func @model(%x: tensor<4x6x16xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<16x8xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %et = tensor.empty() : tensor<6x4x16xf32>
    %t = linalg.transpose ins(%x : tensor<4x6x16xf32>) outs(%et : tensor<6x4x16xf32>) permutation = [1, 0, 2]
    %rows = tensor.collapse_shape %t [[0, 1], [2]] : tensor<6x4x16xf32> into tensor<24x16xf32>
    %e = tensor.empty() : tensor<24x8xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<24x8xf32>) -> tensor<24x8xf32>
    %y = linalg.matmul ins(%rows, %w : tensor<24x16xf32>, tensor<16x8xf32>) outs(%z : tensor<24x8xf32>) -> tensor<24x8xf32>
    %h = math.tanh %y : tensor<24x8xf32>
    %out = tensor.expand_shape %h [[0, 1], [2]] output_shape [6, 4, 8] : tensor<24x8xf32> into tensor<6x4x8xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%out : tensor<6x4x8xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %sq = arith.mulf %v, %v : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
