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
