// RUN: epl-opt %s --epl-autodiff --split-input-file | FileCheck %s

// Micro-batches of hand-written IR: a named matmul accumulating into a
// dense zero constant, next to a tensor.empty nobody uses (once a crash).
// CHECK-LABEL: func.func private @model_micro_batch
// CHECK-SAME: tensor<4x4xf32>
// CHECK: arith.constant {{.*}}dense<0.000000e+00> : tensor<4x2xf32>
// CHECK-LABEL: func.func @model
// CHECK: scf.for
#id = affine_map<(i) -> (i)>
#none = affine_map<(i) -> ()>
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %unused = tensor.empty() : tensor<8x2xf32>
    %z = arith.constant dense<0.0> : tensor<8x2xf32>
    %h = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
    %c = tensor.collapse_shape %h [[0, 1]] : tensor<8x2xf32> into tensor<16xf32>
    %es = tensor.empty() : tensor<f32>
    %zero = arith.constant 0.0 : f32
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction"]}
        ins(%c : tensor<16xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %t = arith.addf %acc, %v : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// The batch merged below a dimension of size 1 and split off again
// (timm's qkv.reshape(B, N, 3, H, d).permute(2, 0, ...).unbind(0) drops a
// 1 x B): each micro-batch is still one contiguous part of it.
// CHECK-LABEL: func.func private @unit_micro_batch
// CHECK: tensor.expand_shape %{{.*}} output_shape [1, 4, 4] {{.*}}: tensor<4x4xf32> into tensor<1x4x4xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x4x4xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] {{.*}}: tensor<1x4x4xf32> into tensor<4x4xf32>
// CHECK-LABEL: func.func @unit
// CHECK: scf.for
#id2 = affine_map<(i, j) -> (i, j)>
#none2 = affine_map<(i, j) -> ()>
#id3 = affine_map<(i, j, k) -> (i, j, k)>
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @unit(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                  %w: tensor<4x4xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %z = arith.constant dense<0.0> : tensor<8x4xf32>
    %h = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %e = tensor.expand_shape %h [[0, 1], [2]] output_shape [1, 8, 4] : tensor<8x4xf32> into tensor<1x8x4xf32>
    %e3 = tensor.empty() : tensor<1x8x4xf32>
    %s = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%e : tensor<1x8x4xf32>) outs(%e3 : tensor<1x8x4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %sq = arith.mulf %v, %v : f32
      linalg.yield %sq : f32
    } -> tensor<1x8x4xf32>
    %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<1x8x4xf32> into tensor<8x4xf32>
    %es = tensor.empty() : tensor<f32>
    %zero = arith.constant 0.0 : f32
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id2, #none2], iterator_types = ["reduction", "reduction"]}
        ins(%c : tensor<8x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %t = arith.addf %acc, %v : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A seq-first layout: the batch-first input moved to (L, B, E) and merged
// below the sequence, (L * B, E), as torch-mlir writes a linear layer of
// nn.TransformerEncoderLayer or nn.GRU. Each micro-batch is every L-th
// block of rows of the merged dimension; the function of a micro-batch is
// the same ops on (L * B / 2, E), and the expand back gives (L, B / 2, F).
// CHECK-LABEL: func.func private @seq_first_micro_batch
// CHECK-SAME: tensor<4x3x4xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x3x4xf32>) outs(%{{.*}} : tensor<3x4x4xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] {{.*}}: tensor<3x4x4xf32> into tensor<12x4xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<12x4xf32>, tensor<4x2xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [3, 4, 2] {{.*}}: tensor<12x2xf32> into tensor<3x4x2xf32>
// CHECK-LABEL: func.func @seq_first
// CHECK: scf.for
#sf_id3 = affine_map<(l, b, f) -> (l, b, f)>
#sf_none3 = affine_map<(l, b, f) -> ()>
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @seq_first(%x: tensor<8x3x4xf32> {epl.arg = "input", epl.name = "x"},
                       %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %t0 = tensor.empty() : tensor<3x8x4xf32>
    %t = linalg.transpose ins(%x : tensor<8x3x4xf32>) outs(%t0 : tensor<3x8x4xf32>) permutation = [1, 0, 2]
    %c = tensor.collapse_shape %t [[0, 1], [2]] : tensor<3x8x4xf32> into tensor<24x4xf32>
    %z = arith.constant dense<0.0> : tensor<24x2xf32>
    %h = linalg.matmul ins(%c, %w : tensor<24x4xf32>, tensor<4x2xf32>) outs(%z : tensor<24x2xf32>) -> tensor<24x2xf32>
    %e = tensor.expand_shape %h [[0, 1], [2]] output_shape [3, 8, 2] : tensor<24x2xf32> into tensor<3x8x2xf32>
    %es = tensor.empty() : tensor<f32>
    %zero = arith.constant 0.0 : f32
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#sf_id3, #sf_none3], iterator_types = ["reduction", "reduction", "reduction"]}
        ins(%e : tensor<3x8x2xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %sq = arith.mulf %v, %v : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Pieces that each hold the batch whole, stacked along it (torch-mlir's
// h_n of a 2-layer GRU: (B, H) pieces into (2 * B, H), then (2, B, H)):
// each micro-batch is the same part of every piece.
// CHECK-LABEL: func.func private @stack_micro_batch
// CHECK: tensor.concat dim(0) %{{.*}}, %{{.*}} {{.*}}: (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
// CHECK: tensor.expand_shape %{{.*}} output_shape [2, 4, 4] {{.*}}: tensor<8x4xf32> into tensor<2x4x4xf32>
// CHECK-LABEL: func.func @stack
// CHECK: scf.for
#st_id3 = affine_map<(l, b, f) -> (l, b, f)>
#st_none3 = affine_map<(l, b, f) -> ()>
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @stack(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x4xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %z = arith.constant dense<0.0> : tensor<8x4xf32>
    %h = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %s = tensor.concat dim(0) %x, %h : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
    %e = tensor.expand_shape %s [[0, 1], [2]] output_shape [2, 8, 4] : tensor<16x4xf32> into tensor<2x8x4xf32>
    %es = tensor.empty() : tensor<f32>
    %zero = arith.constant 0.0 : f32
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#st_id3, #st_none3], iterator_types = ["reduction", "reduction", "reduction"]}
        ins(%e : tensor<2x8x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %sq = arith.mulf %v, %v : f32
      %t = arith.addf %acc, %sq : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A sum over the batch starting from a generic that yields a constant zero
// (what --linalg-generalize-named-ops --linalg-fuse-elementwise-ops make
// of linalg.fill) is a sum from zero: it was refused as a sum that "starts
// from a value that is not zero".
// CHECK-LABEL: func.func private @model_micro_batch
// CHECK-SAME: tensor<4x4xf32>
// CHECK-LABEL: func.func @model
// CHECK: scf.for
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%e0 : tensor<f32>) {
    ^bb0(%o: f32):
      linalg.yield %zero : f32
    } -> tensor<f32>
    %s = linalg.generic {indexing_maps = [affine_map<(b, k) -> (b, k)>, affine_map<(b, k) -> (k)>, affine_map<(b, k) -> ()>],
                         iterator_types = ["reduction", "reduction"]}
        ins(%x, %w : tensor<8x4xf32>, tensor<4xf32>) outs(%f0 : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %q = arith.mulf %p, %p : f32
      %r = arith.addf %acc, %q : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %s : tensor<f32>
  }
}
