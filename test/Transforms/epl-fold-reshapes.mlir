// RUN: epl-opt %s --split-input-file --epl-fold-reshapes | FileCheck %s
// RUN: epl-opt %s --split-input-file --epl-fold-reshapes --verify-each

// A seq-first linear layer as PyTorch writes it: (L, B, E) flattened to
// rows, multiplied, unflattened. The generic reads (L, B, E) itself, over
// loops (l, b, n, k), keeping its epl attributes.
// CHECK-LABEL: func.func @seq_first_linear
// CHECK-SAME: (%[[X:.*]]: tensor<6x4x16xf32>, %[[W:.*]]: tensor<16x8xf32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[X]], %[[W]] : tensor<6x4x16xf32>, tensor<16x8xf32>)
// CHECK-SAME: epl.phase = #epl.phase<forward>, epl.scope = #epl.replicate<devices = 2>
// CHECK: return %[[Y]] : tensor<6x4x8xf32>
#mm = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
func.func @seq_first_linear(%x: tensor<6x4x16xf32>, %w: tensor<16x8xf32>) -> tensor<6x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %rows = tensor.collapse_shape %x [[0, 1], [2]] : tensor<6x4x16xf32> into tensor<24x16xf32>
  %e = tensor.empty() : tensor<24x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<24x8xf32>) -> tensor<24x8xf32>
  %y = linalg.generic {indexing_maps = #mm, iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%rows, %w : tensor<24x16xf32>, tensor<16x8xf32>) outs(%z : tensor<24x8xf32>) attrs = {epl.phase = #epl.phase<forward>, epl.scope = #epl.replicate<devices = 2>} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<24x8xf32>
  %out = tensor.expand_shape %y [[0, 1], [2]] output_shape [6, 4, 8] : tensor<24x8xf32> into tensor<6x4x8xf32>
  return %out : tensor<6x4x8xf32>
}

// -----

// Attention's scores with batch and heads merged for bmm, (B * H, S, D):
// one generic over (b, h, i, j, d) that reads the (B, H, S, D) queries and
// keys, so a split of the heads stays a split of the h loop.
// CHECK-LABEL: func.func @merged_heads
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<2x4x3x5xf32>, tensor<2x4x5x3xf32>)
// CHECK-SAME: outs(%{{.*}} : tensor<2x4x3x3xf32>)
// CHECK-NOT: tensor.expand_shape
func.func @merged_heads(%q: tensor<2x4x3x5xf32>, %k: tensor<2x4x5x3xf32>) -> tensor<2x4x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %qm = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x3x5xf32> into tensor<8x3x5xf32>
  %km = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<2x4x5x3xf32> into tensor<8x5x3xf32>
  %e = tensor.empty() : tensor<8x3x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x3x3xf32>) -> tensor<8x3x3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, d, j)>, affine_map<(b, i, j, d) -> (b, i, j)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%qm, %km : tensor<8x3x5xf32>, tensor<8x5x3xf32>) outs(%z : tensor<8x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %c, %p : f32
    linalg.yield %t : f32
  } -> tensor<8x3x3xf32>
  %out = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [2, 4, 3, 3] : tensor<8x3x3xf32> into tensor<2x4x3x3xf32>
  return %out : tensor<2x4x3x3xf32>
}
