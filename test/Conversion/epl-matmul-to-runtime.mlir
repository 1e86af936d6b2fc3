// RUN: epl-opt %s --epl-matmul-to-runtime | FileCheck %s

#map_mk = affine_map<(m, n, k) -> (m, k)>
#map_km = affine_map<(m, n, k) -> (k, m)>
#map_kn = affine_map<(m, n, k) -> (k, n)>
#map_nk = affine_map<(m, n, k) -> (n, k)>
#map_mn = affine_map<(m, n, k) -> (m, n)>

// CHECK-LABEL: func @named
// CHECK-SAME: (%[[A:.*]]: memref<32x64xf32>, %[[B:.*]]: memref<64x16xf32>, %[[C:.*]]: memref<32x16xf32>)
func.func @named(%a: memref<32x64xf32>, %b: memref<64x16xf32>, %c: memref<32x16xf32>) {
  // CHECK: %[[AU:.*]] = memref.cast %[[A]] : memref<32x64xf32> to memref<*xf32>
  // CHECK: %[[BU:.*]] = memref.cast %[[B]] : memref<64x16xf32> to memref<*xf32>
  // CHECK: %[[CU:.*]] = memref.cast %[[C]] : memref<32x16xf32> to memref<*xf32>
  // CHECK: call @epl_rt_matmul_f32(%[[AU]], %[[BU]], %[[CU]])
  // CHECK-NOT: linalg.matmul
  linalg.matmul ins(%a, %b : memref<32x64xf32>, memref<64x16xf32>) outs(%c : memref<32x16xf32>)
  return
}

// Transposed operands, from the indexing maps of the named op or of a
// generic, become transposed views: BLAS reads them in place.
// CHECK-LABEL: func @transposed
func.func @transposed(%at: memref<64x32xf64>, %bt: memref<16x64xf64>, %c: memref<32x16xf64>,
                      %a: memref<32x64xf64>) {
  // CHECK: %[[AT:.*]] = memref.transpose %{{.*}} (d0, d1) -> (d1, d0) : memref<64x32xf64> to memref<32x64xf64, strided<[1, 32]>>
  // CHECK: %[[BT:.*]] = memref.transpose %{{.*}} (d0, d1) -> (d1, d0) : memref<16x64xf64> to memref<64x16xf64, strided<[1, 64]>>
  // CHECK: call @epl_rt_matmul_f64
  linalg.matmul indexing_maps = [#map_km, #map_nk, #map_mn]
      ins(%at, %bt : memref<64x32xf64>, memref<16x64xf64>) outs(%c : memref<32x16xf64>)
  // CHECK: memref.transpose
  // CHECK: call @epl_rt_matmul_f64
  // CHECK-NOT: linalg.generic
  linalg.generic {indexing_maps = [#map_mk, #map_nk, #map_mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %bt : memref<32x64xf64>, memref<16x64xf64>) outs(%c : memref<32x16xf64>) {
  ^bb0(%x: f64, %y: f64, %acc: f64):
    %p = arith.mulf %x, %y : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  }
  return
}

// CHECK-LABEL: func @batched
func.func @batched(%a: memref<3x4x5xf32>, %b: memref<3x5x6xf32>, %c: memref<3x4x6xf32>) {
  // CHECK: call @epl_rt_matmul_f32
  linalg.batch_matmul ins(%a, %b : memref<3x4x5xf32>, memref<3x5x6xf32>) outs(%c : memref<3x4x6xf32>)
  return
}

// Attention scores q k^T over batch and heads: one batched GEMM over both
// (one strided batched cuBLAS call on a GPU), k read transposed in place.
// CHECK-LABEL: func @two_batch_dims
func.func @two_batch_dims(%q: memref<2x3x4x5xf32>, %k: memref<2x3x6x5xf32>, %s: memref<2x3x4x6xf32>) {
  // CHECK: %[[KT:.*]] = memref.transpose %{{.*}} (d0, d1, d2, d3) -> (d0, d1, d3, d2)
  // CHECK-NOT: scf.for
  // CHECK: %[[Q:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : memref<2x3x4x5xf32> into memref<6x4x5xf32>
  // CHECK: %[[K:.*]] = memref.collapse_shape %[[KT]] {{\[}}[0, 1], [2], [3]] : memref<2x3x5x6xf32, strided<[90, 30, 1, 5]>> into memref<6x5x6xf32, strided<[30, 1, 5]>>
  // CHECK: %[[S:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : memref<2x3x4x6xf32> into memref<6x4x6xf32>
  // CHECK: call @epl_rt_matmul_f32
  // CHECK-NOT: linalg.generic
  linalg.generic {indexing_maps = [affine_map<(b, h, m, n, k) -> (b, h, m, k)>,
                                   affine_map<(b, h, m, n, k) -> (b, h, n, k)>,
                                   affine_map<(b, h, m, n, k) -> (b, h, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<2x3x4x5xf32>, memref<2x3x6x5xf32>) outs(%s : memref<2x3x4x6xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  }
  return
}

// q in [batch, seq, heads, dim] order: its batch and heads are not one
// strided dimension, so a loop goes over the batch, one batched GEMM over
// the heads per iteration.
// CHECK-LABEL: func @two_batch_dims_apart
func.func @two_batch_dims_apart(%q: memref<2x4x3x5xf32>, %k: memref<2x3x6x5xf32>, %s: memref<2x3x4x6xf32>) {
  // CHECK: %[[QT:.*]] = memref.transpose %{{.*}} (d0, d1, d2, d3) -> (d0, d2, d1, d3)
  // CHECK: %[[KT:.*]] = memref.transpose %{{.*}} (d0, d1, d2, d3) -> (d0, d1, d3, d2)
  // CHECK-NOT: memref.collapse_shape
  // CHECK: scf.for %[[B:.*]] = %c0 to %c2 step %c1 {
  // CHECK:   %[[QB:.*]] = memref.subview %[[QT]][%[[B]], 0, 0, 0] [1, 3, 4, 5] [1, 1, 1, 1] : memref<2x3x4x5xf32, strided<[60, 5, 15, 1]>> to memref<3x4x5xf32, strided<[5, 15, 1], offset: ?>>
  // CHECK:   %[[KB:.*]] = memref.subview %[[KT]][%[[B]], 0, 0, 0] [1, 3, 5, 6] [1, 1, 1, 1]
  // CHECK:   %[[SB:.*]] = memref.subview %{{.*}}[%[[B]], 0, 0, 0] [1, 3, 4, 6] [1, 1, 1, 1]
  // CHECK:   call @epl_rt_matmul_f32
  // CHECK: }
  linalg.generic {indexing_maps = [affine_map<(b, h, m, n, k) -> (b, m, h, k)>,
                                   affine_map<(b, h, m, n, k) -> (b, h, n, k)>,
                                   affine_map<(b, h, m, n, k) -> (b, h, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<2x4x3x5xf32>, memref<2x3x6x5xf32>) outs(%s : memref<2x3x4x6xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  }
  return
}

// A dense layer on [batch, seq, dim]: batch and seq are both m loops, one
// GEMM row dimension after collapsing; its weight gradient contracts over
// both (k = batch x seq), reading x transposed.
// CHECK-LABEL: func @grouped_loops
func.func @grouped_loops(%x: memref<2x3x4xf32>, %w: memref<4x5xf32>, %y: memref<2x3x5xf32>,
                         %dy: memref<2x3x5xf32>, %dw: memref<4x5xf32>) {
  // CHECK: %[[X:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : memref<2x3x4xf32> into memref<6x4xf32>
  // CHECK: %[[Y:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : memref<2x3x5xf32> into memref<6x5xf32>
  // CHECK: call @epl_rt_matmul_f32
  linalg.generic {indexing_maps = [affine_map<(b, s, n, k) -> (b, s, k)>,
                                   affine_map<(b, s, n, k) -> (k, n)>,
                                   affine_map<(b, s, n, k) -> (b, s, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x3x4xf32>, memref<4x5xf32>) outs(%y : memref<2x3x5xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.mulf %u, %v : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  }
  // CHECK: %[[XT:.*]] = memref.transpose %{{.*}} (d0, d1, d2) -> (d2, d0, d1)
  // CHECK: memref.collapse_shape %[[XT]] {{\[\[}}0], [1, 2]] : memref<4x2x3xf32, strided<[1, 12, 4]>> into memref<4x6xf32, strided<[1, 4]>>
  // CHECK: memref.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : memref<2x3x5xf32> into memref<6x5xf32>
  // CHECK: call @epl_rt_matmul_f32
  linalg.generic {indexing_maps = [affine_map<(m, n, b, s) -> (b, s, m)>,
                                   affine_map<(m, n, b, s) -> (b, s, n)>,
                                   affine_map<(m, n, b, s) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %dy : memref<2x3x4xf32>, memref<2x3x5xf32>) outs(%dw : memref<4x5xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.mulf %u, %v : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  }
  return
}

// Grouped loops read in different orders by A and B (k = (s, b) in A,
// (b, s) in B): B's view in A's order is no single strided dimension, so
// it is staged in a contiguous copy in (k, n) order, then one GEMM.
// CHECK-LABEL: func @grouped_loops_mismatched
func.func @grouped_loops_mismatched(%a: memref<3x2x4xf32>, %b: memref<2x3x5xf32>, %c: memref<4x5xf32>) {
  // CHECK: memref.transpose
  // CHECK: %[[STAGED:.*]] = memref.alloc() : memref<3x2x5xf32>
  // CHECK: memref.copy
  // CHECK: memref.collapse_shape %[[STAGED]] {{\[}}[0, 1], [2]]
  // CHECK: call @epl_rt_matmul_f32
  // CHECK: memref.dealloc %[[STAGED]]
  // CHECK-NOT: linalg.generic
  linalg.generic {indexing_maps = [affine_map<(m, n, b, s) -> (s, b, m)>,
                                   affine_map<(m, n, b, s) -> (b, s, n)>,
                                   affine_map<(m, n, b, s) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<3x2x4xf32>, memref<2x3x5xf32>) outs(%c : memref<4x5xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.mulf %u, %v : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  }
  return
}

// Not GEMMs: a max-plus contraction, integer matmuls, tensors. They stay.
// CHECK-LABEL: func @left_alone
func.func @left_alone(%a: memref<4x5xf32>, %b: memref<5x6xf32>, %c: memref<4x6xf32>,
                      %ia: memref<4x5xi32>, %ib: memref<5x6xi32>, %ic: memref<4x6xi32>,
                      %ta: tensor<4x5xf32>, %tb: tensor<5x6xf32>, %tc: tensor<4x6xf32>) -> tensor<4x6xf32> {
  // CHECK: linalg.generic
  linalg.generic {indexing_maps = [#map_mk, #map_kn, #map_mn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x5xf32>, memref<5x6xf32>) outs(%c : memref<4x6xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.addf %x, %y : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  // CHECK: linalg.matmul
  linalg.matmul ins(%ia, %ib : memref<4x5xi32>, memref<5x6xi32>) outs(%ic : memref<4x6xi32>)
  // CHECK: linalg.matmul
  %r = linalg.matmul ins(%ta, %tb : tensor<4x5xf32>, tensor<5x6xf32>) outs(%tc : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// An operand whose grouped loops are not one strided dimension (a slice of
// a padded buffer) is staged in a contiguous copy; an output so is copied
// back after the GEMM. Every copy is freed.
// CHECK-LABEL: func @staged
// CHECK-SAME: (%[[A:.*]]: memref<2x4x4x3xf32, strided<[108, 18, 3, 1], offset: 21>>, %{{.*}}: memref<3x5xf32>, %[[C:.*]]: memref<2x4x4x5xf32, strided<[180, 30, 5, 1], offset: 35>>)
// CHECK: %[[SA:.*]] = memref.alloc() : memref<2x4x4x3xf32>
// CHECK: memref.copy %[[A]], %[[SA]]
// CHECK: %[[SC:.*]] = memref.alloc() : memref<2x4x4x5xf32>
// CHECK: memref.copy %[[C]], %[[SC]]
// CHECK: call @epl_rt_matmul_f32
// CHECK: memref.dealloc %[[SA]]
// CHECK: memref.copy %[[SC]], %[[C]]
// CHECK: memref.dealloc %[[SC]]
func.func @staged(%a: memref<2x4x4x3xf32, strided<[108, 18, 3, 1], offset: 21>>, %b: memref<3x5xf32>,
                  %c: memref<2x4x4x5xf32, strided<[180, 30, 5, 1], offset: 35>>) {
  linalg.generic {indexing_maps = [affine_map<(n, i, j, f, c) -> (n, i, j, c)>,
                                   affine_map<(n, i, j, f, c) -> (c, f)>,
                                   affine_map<(n, i, j, f, c) -> (n, i, j, f)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x4x4x3xf32, strided<[108, 18, 3, 1], offset: 21>>, memref<3x5xf32>)
      outs(%c : memref<2x4x4x5xf32, strided<[180, 30, 5, 1], offset: 35>>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// A matrix with no unit stride (every other element of every other row):
// BLAS and cuBLAS read neither its rows nor its columns in place, so it is
// staged in a contiguous copy; a unit-stride view is passed as it is.
// CHECK-LABEL: func @no_unit_stride
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32, strided<[32, 2]>>, %[[B:.*]]: memref<8x3xf32>, %[[C:.*]]: memref<4x3xf32>)
// CHECK: %[[SA:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: memref.copy %[[A]], %[[SA]]
// CHECK-NOT: memref.copy
// CHECK: call @epl_rt_matmul_f32
// CHECK: memref.dealloc %[[SA]]
func.func @no_unit_stride(%a: memref<4x8xf32, strided<[32, 2]>>, %b: memref<8x3xf32>, %c: memref<4x3xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32, strided<[32, 2]>>, memref<8x3xf32>)
                outs(%c : memref<4x3xf32>)
  return
}

// A zero fill of C right before C += A B: the GEMM writes C = A B (BLAS's
// beta = 0) and the fill goes. So does the copy of a zero-filled buffer
// that bufferization makes for a fill several users share; that buffer's
// own fill stays.
// CHECK-LABEL: func @overwrite
func.func @overwrite(%a: memref<32x64xf32>, %b: memref<64x16xf32>, %c: memref<32x16xf32>,
                     %d: memref<32x16xf32>, %z: memref<32x16xf32>) {
  %zero = arith.constant 0.0 : f32
  // CHECK-NOT: linalg.fill ins(%{{.*}} : f32) outs(%arg2
  // CHECK: call @epl_rt_matmul_overwrite_f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x16xf32>)
  linalg.matmul ins(%a, %b : memref<32x64xf32>, memref<64x16xf32>) outs(%c : memref<32x16xf32>)
  // CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg4
  // CHECK-NOT: memref.copy
  // CHECK: call @epl_rt_matmul_overwrite_f32
  linalg.fill ins(%zero : f32) outs(%z : memref<32x16xf32>)
  memref.copy %z, %d : memref<32x16xf32> to memref<32x16xf32>
  linalg.matmul ins(%a, %b : memref<32x64xf32>, memref<64x16xf32>) outs(%d : memref<32x16xf32>)
  return
}

// Not when anything touches C in between (here a copy reads it: the
// search is conservative), or the fill is not zeros.
// CHECK-LABEL: func @accumulate
func.func @accumulate(%a: memref<32x64xf32>, %b: memref<64x16xf32>, %c: memref<32x16xf32>,
                      %e: memref<32x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  // CHECK: linalg.fill
  // CHECK: memref.copy
  // CHECK: call @epl_rt_matmul_f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x16xf32>)
  memref.copy %c, %e : memref<32x16xf32> to memref<32x16xf32>
  linalg.matmul ins(%a, %b : memref<32x64xf32>, memref<64x16xf32>) outs(%c : memref<32x16xf32>)
  // CHECK: linalg.fill
  // CHECK: call @epl_rt_matmul_f32
  linalg.fill ins(%one : f32) outs(%e : memref<32x16xf32>)
  linalg.matmul ins(%a, %b : memref<32x64xf32>, memref<64x16xf32>) outs(%e : memref<32x16xf32>)
  return
}
