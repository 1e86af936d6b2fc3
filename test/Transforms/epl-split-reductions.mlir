// RUN: epl-opt %s --epl-split-reductions="target-threads=4096" --split-input-file | FileCheck %s
// RUN: epl-opt %s --epl-split-reductions="target-threads=4096 keep-gemms=false" --split-input-file | FileCheck %s --check-prefix=LOOPS
// RUN: epl-opt %s --epl-split-reductions="target-threads=1 max-per-thread=64" --split-input-file | FileCheck %s --check-prefix=CPU
// RUN: not epl-opt %s --epl-split-reductions="target-threads=0" 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not epl-opt %s --epl-split-reductions="max-per-thread=8" 2>&1 | FileCheck %s --check-prefix=MAX
// RUN: not epl-opt %s --epl-split-reductions="min-per-thread=1" 2>&1 | FileCheck %s --check-prefix=CHUNK

// THREADS: epl-split-reductions: target-threads must be at least 1, not 0
// CHUNK: epl-split-reductions: min-per-thread must be at least 2, not 1
// MAX: epl-split-reductions: max-per-thread must be 0 (none) or at least min-per-thread (16), not 8

// A sum of 65536 values into one result: 4096 threads of 16 values (value
// r in part r mod 4096: neighbouring threads read neighbouring values),
// then the 4096 partial sums split again (256 threads, 16 threads), and
// one thread sums the last 16 into the original accumulator.
// As the CPU lowering splits (parts of at most 64 values, whatever the
// number of results): 1024 parts of 64, 16 of 64, then the last 16.
// CPU-LABEL: func.func @total
// CPU: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [64, 1024]
// CPU: linalg.generic {{.*}} outs(%{{.*}} : tensor<1024xf32>)
// CPU: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [64, 16]
// CPU: linalg.generic {{.*}} outs(%{{.*}} : tensor<16xf32>)
// CPU: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}} : tensor<16xf32>)
// CHECK-LABEL: func.func @total
// CHECK-SAME: (%[[X:.*]]: tensor<65536xf32>, %[[Z:.*]]: tensor<f32>)
// CHECK: %[[X2:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1]] output_shape [16, 4096]
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[P0:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<4096xf32>)
// CHECK: %[[S0:.*]] = linalg.generic {indexing_maps = [#[[ID2:.*]], #[[INNER:.*]]], iterator_types = ["reduction", "parallel"]} ins(%[[X2]] : tensor<16x4096xf32>) outs(%[[P0]] : tensor<4096xf32>)
// CHECK: tensor.expand_shape %[[S0]] {{\[\[}}0, 1]] output_shape [16, 256]
// CHECK: %[[S1:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} {{.*}} outs(%{{.*}} : tensor<256xf32>)
// CHECK: tensor.expand_shape %[[S1]] {{\[\[}}0, 1]] output_shape [16, 16]
// CHECK: %[[S2:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} {{.*}} outs(%{{.*}} : tensor<16xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[S2]] : tensor<16xf32>) outs(%[[Z]] : tensor<f32>)
// CHECK: return %[[S]]
func.func @total(%x: tensor<65536xf32>, %z: tensor<f32>) -> tensor<f32> {
  %s = linalg.generic {indexing_maps = [affine_map<(r) -> (r)>, affine_map<(r) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%x : tensor<65536xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// A bias's gradient over batch (32) and sequence (128): the loop with the
// most parts is split, the sequence in 64 (4096 threads of 64 values, the
// result's dimension fastest), the body's square included; the 64 parts
// of each result are then combined 16 at a time (256 threads), then 4.
// CHECK-LABEL: func.func @bias_gradient
// CHECK: %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3]] output_shape [32, 2, 64, 64]
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[ALL:.*]], #[[PART:.*]]], iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%[[E]] : tensor<32x2x64x64xf32>) outs(%{{.*}} : tensor<64x64xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]} {{.*}} outs(%{{.*}} : tensor<4x64xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} {{.*}} outs(%arg1 : tensor<64xf32>)
#m3 = affine_map<(b, s, n) -> (b, s, n)>
#n3 = affine_map<(b, s, n) -> (n)>
func.func @bias_gradient(%x: tensor<32x128x64xf32>, %z: tensor<64xf32>) -> tensor<64xf32> {
  %s = linalg.generic {indexing_maps = [#m3, #n3], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%x : tensor<32x128x64xf32>) outs(%z : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    %t = arith.addf %o, %m : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  return %s : tensor<64xf32>
}

// -----

// Batch norm's mean as torch writes it: a keep-dim sum over batch, height
// and width. The unit dimensions go first; the batch (the loop with the
// most parts, 32) is split, 2048 threads each summing a 16x16 plane.
// CHECK-LABEL: func.func @batch_norm_mean
// CHECK: %[[Z:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1, 2, 3]] : tensor<1x64x1x1xf32> into tensor<64xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel", "reduction", "reduction"]} {{.*}} outs(%{{.*}} : tensor<32x64xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} {{.*}} outs(%[[Z]] : tensor<64xf32>)
// CHECK: tensor.expand_shape %[[S]] {{\[\[}}0, 1, 2, 3]] output_shape [1, 64, 1, 1]
func.func @batch_norm_mean(%x: tensor<32x64x16x16xf32>, %z: tensor<1x64x1x1xf32>) -> tensor<1x64x1x1xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (0, c, 0, 0)>],
                       iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<32x64x16x16xf32>) outs(%z : tensor<1x64x1x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<1x64x1x1xf32>
  return %s : tensor<1x64x1x1xf32>
}

// -----

// A maximum along rows: the parts start from -inf; the new parallel loop
// is just inside the reduction's, so thread (row, k) reads row[j * 256 + k].
// CHECK-LABEL: func.func @row_max
// CHECK: tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [4, 16, 256]
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction", "parallel"]} {{.*}} outs(%{{.*}} : tensor<4x256xf32>)
// CHECK: arith.maximumf
func.func @row_max(%x: tensor<4x4096xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(p, r) -> (p, r)>, affine_map<(p, r) -> (p)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4096xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.maximumf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// Left whole: enough results for the threads; a length with no divisor
// (4099 is prime); a body that reads its position; a GEMM, which BLAS or
// cuBLAS runs (keep-gemms); short reductions; no results at all; an index
// maximum (upstream has no valid neutral constant for it); a "reduction"
// loop that indexes the result.
// CHECK-LABEL: func.func @left_whole
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor.collapse_shape
// CHECK: return
func.func @left_whole(%many: tensor<4096x64xf32>, %z4096: tensor<4096xf32>,
                      %prime: tensor<4099xf32>, %z: tensor<f32>,
                      %a: tensor<8x512xf32>, %b: tensor<512x8xf32>, %c: tensor<8x8xf32>,
                      %short: tensor<16xf32>, %long: tensor<65536xf32>,
                      %none: tensor<0x4096xf32>, %znone: tensor<0xf32>,
                      %ids: tensor<4096xindex>, %zid: tensor<index>,
                      %square: tensor<4x65536xf32>)
    -> (tensor<4096xf32>, tensor<f32>, tensor<f32>, tensor<8x8xf32>, tensor<f32>,
        tensor<0xf32>, tensor<index>, tensor<4x65536xf32>) {
  %rows = linalg.generic {indexing_maps = [affine_map<(p, r) -> (p, r)>, affine_map<(p, r) -> (p)>],
                          iterator_types = ["parallel", "reduction"]}
      ins(%many : tensor<4096x64xf32>) outs(%z4096 : tensor<4096xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.addf %x, %o : f32
    linalg.yield %t : f32
  } -> tensor<4096xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(r) -> (r)>, affine_map<(r) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%prime : tensor<4099xf32>) outs(%z : tensor<f32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.addf %x, %o : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %i = linalg.generic {indexing_maps = [affine_map<(r) -> (r)>, affine_map<(r) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%long : tensor<65536xf32>) outs(%z : tensor<f32>) {
  ^bb0(%x: f32, %o: f32):
    %r = linalg.index 0 : index
    %ri = arith.index_cast %r : index to i32
    %rf = arith.sitofp %ri : i32 to f32
    %w = arith.mulf %x, %rf : f32
    %t = arith.addf %w, %o : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %mm = linalg.matmul ins(%a, %b : tensor<8x512xf32>, tensor<512x8xf32>)
                      outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(r) -> (r)>, affine_map<(r) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%short : tensor<16xf32>) outs(%z : tensor<f32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.addf %x, %o : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %n = linalg.generic {indexing_maps = [affine_map<(p, r) -> (p, r)>, affine_map<(p, r) -> (p)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%none : tensor<0x4096xf32>) outs(%znone : tensor<0xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.addf %x, %o : f32
    linalg.yield %t : f32
  } -> tensor<0xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(r) -> (r)>, affine_map<(r) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%ids : tensor<4096xindex>) outs(%zid : tensor<index>) {
  ^bb0(%x: index, %o: index):
    %t = arith.maxsi %x, %o : index
    linalg.yield %t : index
  } -> tensor<index>
  %o = linalg.generic {indexing_maps = [affine_map<(p, r) -> (p, r)>, affine_map<(p, r) -> (p, r)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%square : tensor<4x65536xf32>) outs(%square : tensor<4x65536xf32>) {
  ^bb0(%x: f32, %y: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<4x65536xf32>
  return %rows, %p, %i, %mm, %s, %n, %m, %o
      : tensor<4096xf32>, tensor<f32>, tensor<f32>, tensor<8x8xf32>, tensor<f32>, tensor<0xf32>, tensor<index>, tensor<4x65536xf32>
}

// -----

// A weight's gradient over a batch of 4096 (x^T dy, 16x16 results): a
// GEMM that BLAS blocks stays whole; as loops (keep-gemms=false, the
// lowering's --blas=false) its sum over the batch is split like any other.
// CHECK-LABEL: func.func @weight_gradient
// CHECK-NOT: tensor.expand_shape
// CHECK: return
// LOOPS-LABEL: func.func @weight_gradient
// LOOPS: tensor.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [256, 16, 16]
// LOOPS: linalg.generic {{.*}} outs(%{{.*}} : tensor<16x16x16xf32>)
// LOOPS: arith.mulf
// LOOPS: arith.addf
// LOOPS: linalg.generic {{.*}} outs(%arg2 : tensor<16x16xf32>)
func.func @weight_gradient(%x: tensor<4096x16xf32>, %dy: tensor<4096x16xf32>,
                           %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %g = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i)>,
                                        affine_map<(b, i, j) -> (b, j)>,
                                        affine_map<(b, i, j) -> (i, j)>],
                       iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%x, %dy : tensor<4096x16xf32>, tensor<4096x16xf32>)
      outs(%w : tensor<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %m, %o : f32
    linalg.yield %t : f32
  } -> tensor<16x16xf32>
  return %g : tensor<16x16xf32>
}

// -----

// An integer sum with `nsw`: in another order it may overflow where the
// sequential sum did not, so the parts and their sum wrap instead.
// CHECK-LABEL: func.func @no_signed_wrap
// CHECK-NOT: overflow<nsw>
// CHECK: arith.addi %{{.*}}, %{{.*}} : i32
// CHECK-NOT: overflow<nsw>
// CHECK: return
func.func @no_signed_wrap(%x: tensor<65536xi32>, %z: tensor<i32>) -> tensor<i32> {
  %s = linalg.generic {indexing_maps = [affine_map<(r) -> (r)>, affine_map<(r) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%x : tensor<65536xi32>) outs(%z : tensor<i32>) {
  ^bb0(%a: i32, %o: i32):
    %t = arith.addi %a, %o overflow<nsw> : i32
    linalg.yield %t : i32
  } -> tensor<i32>
  return %s : tensor<i32>
}
