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

// -----

// A generic that reads its loops' positions keeps its shape: an index of a
// merged loop would become an affine sum the sharding rules read as no
// position, and a token-level label gather gathered the logits.
// CHECK-LABEL: func.func @reads_positions
// CHECK: tensor.collapse_shape
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<8xi64>)
func.func @reads_positions(%labels: tensor<2x4xi64>, %logits: tensor<8x5xf32>) -> tensor<8xf32> {
  %flat = tensor.collapse_shape %labels [[0, 1]] : tensor<2x4xi64> into tensor<8xi64>
  %e = tensor.empty() : tensor<8xf32>
  %picked = linalg.generic {indexing_maps = [affine_map<(r) -> (r)>, affine_map<(r) -> (r)>], iterator_types = ["parallel"]}
      ins(%flat : tensor<8xi64>) outs(%e : tensor<8xf32>) {
  ^bb0(%label: i64, %o: f32):
    %r = linalg.index 0 : index
    %c = arith.index_cast %label : i64 to index
    %v = tensor.extract %logits[%r, %c] : tensor<8x5xf32>
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %picked : tensor<8xf32>
}

// -----

// A reshape of a reshape, composed by the canonicalization patterns, keeps
// the pipeline stage and phase both had.
// CHECK-LABEL: func.func @composed
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] {epl.phase = #epl.phase<backward_input>, epl.stage = #epl.stage<index = 1>}
func.func @composed(%x: tensor<2x3x4xf32>) -> tensor<24xf32> {
  %a = tensor.collapse_shape %x [[0, 1], [2]] {epl.phase = #epl.phase<backward_input>, epl.stage = #epl.stage<index = 1>} : tensor<2x3x4xf32> into tensor<6x4xf32>
  %b = tensor.collapse_shape %a [[0, 1]] {epl.phase = #epl.phase<backward_input>, epl.stage = #epl.stage<index = 1>} : tensor<6x4xf32> into tensor<24xf32>
  return %b : tensor<24xf32>
}

// -----

// Gradient accumulation: the sum into the loop's accumulator keeps its
// shape (collective insertion reduces the accumulator once, after the
// loop; folded, it reduced each micro-batch's gradient inside it).
// CHECK-LABEL: func.func @accumulates
// CHECK: scf.for
// CHECK: tensor.collapse_shape
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<32x16xf32>)
func.func @accumulates(%g: tensor<32x2x8xf32>, %init: tensor<32x16xf32>) -> tensor<32x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %init) -> (tensor<32x16xf32>) {
    %flat = tensor.collapse_shape %g [[0], [1, 2]] : tensor<32x2x8xf32> into tensor<32x16xf32>
    %e = tensor.empty() : tensor<32x16xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%acc, %flat : tensor<32x16xf32>, tensor<32x16xf32>) outs(%e : tensor<32x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %t = arith.addf %a, %b : f32
      linalg.yield %t : f32
    } -> tensor<32x16xf32>
    scf.yield %s : tensor<32x16xf32>
  }
  return %r : tensor<32x16xf32>
}
