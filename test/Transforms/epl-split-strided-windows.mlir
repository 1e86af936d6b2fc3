// RUN: epl-opt %s --epl-split-strided-windows --split-input-file | FileCheck %s

// A stride-2 input gradient: dx[n, i, c] += spread[n, i - k + 2, f] * w[k, c, f]
// with dy's values at positions 2, 4, 6 of the spread. Output positions
// 0, 2, 4 (a = 0) meet values only through taps 0 and 2, positions 1, 3, 5
// (a = 1) only through tap 1; both read dy with one zero before it (phase 0
// reaches position -1 through tap 2 at q = 0).
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 - d3 + 1, d4)>
// CHECK-LABEL: func.func @stride2
// CHECK-SAME: (%[[DY:.*]]: tensor<1x3x4xf32>, %[[W:.*]]: tensor<3x2x4xf32>, %[[INIT:.*]]: tensor<1x6x2xf32>)
// CHECK-NOT: tensor<1x8x4xf32>
// CHECK: %[[DENSE:.*]] = tensor.pad %[[DY]] low[0, 1, 0] high[0, 0, 0]
// CHECK: tensor<1x3x4xf32> to tensor<1x4x4xf32>
// CHECK: %[[W0:.*]] = tensor.extract_slice %[[W]][0, 0, 0] [2, 2, 4] [2, 1, 1]
// CHECK: %[[O0:.*]] = tensor.extract_slice %[[INIT]][0, 0, 0] [1, 3, 2] [1, 2, 1]
// CHECK: %[[P0:.*]] = linalg.generic {indexing_maps = [#[[WIN]], {{.*}}]{{.*}} ins(%[[DENSE]], %[[W0]] : tensor<1x4x4xf32>, tensor<2x2x4xf32>) outs(%[[O0]] : tensor<1x3x2xf32>)
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[P0]] into %[[INIT]][0, 0, 0] [1, 3, 2] [1, 2, 1]
// CHECK: %[[W1:.*]] = tensor.extract_slice %[[W]][1, 0, 0] [1, 2, 4] [2, 1, 1]
// CHECK: %[[O1:.*]] = tensor.extract_slice %[[R0]][0, 1, 0] [1, 3, 2] [1, 2, 1]
// CHECK: %[[P1:.*]] = linalg.generic {indexing_maps = [#[[WIN]], {{.*}}]{{.*}} ins(%[[DENSE]], %[[W1]] : tensor<1x4x4xf32>, tensor<1x2x4xf32>) outs(%[[O1]] : tensor<1x3x2xf32>)
// CHECK: %[[R1:.*]] = tensor.insert_slice %[[P1]] into %[[R0]][0, 1, 0] [1, 3, 2] [1, 2, 1]
// CHECK: return %[[R1]]
func.func @stride2(%dy: tensor<1x3x4xf32>, %w: tensor<3x2x4xf32>, %init: tensor<1x6x2xf32>) -> tensor<1x6x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %spread = tensor.insert_slice %dy into %z[0, 2, 0] [1, 3, 4] [1, 2, 1]
      : tensor<1x3x4xf32> into tensor<1x8x4xf32>
  %dx = linalg.generic {
      indexing_maps = [affine_map<(n, i, c, k, f) -> (n, i - k + 2, f)>,
                       affine_map<(n, i, c, k, f) -> (k, c, f)>,
                       affine_map<(n, i, c, k, f) -> (n, i, c)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%spread, %w : tensor<1x8x4xf32>, tensor<3x2x4xf32>) outs(%init : tensor<1x6x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x6x2xf32>
  return %dx : tensor<1x6x2xf32>
}

// -----

// A spread of something other than zeros, or a tap loop that also reads
// another dimension, is left as it is.
// CHECK-LABEL: func.func @not_zeros
// CHECK: tensor.insert_slice
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
func.func @not_zeros(%dy: tensor<1x3x4xf32>, %w: tensor<3x2x4xf32>, %init: tensor<1x6x2xf32>) -> tensor<1x6x2xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x8x4xf32>
  %z = linalg.fill ins(%one : f32) outs(%e : tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %spread = tensor.insert_slice %dy into %z[0, 2, 0] [1, 3, 4] [1, 2, 1]
      : tensor<1x3x4xf32> into tensor<1x8x4xf32>
  %dx = linalg.generic {
      indexing_maps = [affine_map<(n, i, c, k, f) -> (n, i - k + 2, f)>,
                       affine_map<(n, i, c, k, f) -> (k, c, f)>,
                       affine_map<(n, i, c, k, f) -> (n, i, c)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%spread, %w : tensor<1x8x4xf32>, tensor<3x2x4xf32>) outs(%init : tensor<1x6x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x6x2xf32>
  return %dx : tensor<1x6x2xf32>
}

// -----

// Two output loops read the strided dimension (i + j - k + 2): no single
// phase variable; left as it is.
// CHECK-LABEL: func.func @two_output_loops
// CHECK: tensor.insert_slice
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
func.func @two_output_loops(%dy: tensor<3x2xf32>, %w: tensor<3x2x2xf32>, %init: tensor<3x4x2xf32>) -> tensor<3x4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<10x2xf32>) -> tensor<10x2xf32>
  %spread = tensor.insert_slice %dy into %z[2, 0] [3, 2] [2, 1]
      : tensor<3x2xf32> into tensor<10x2xf32>
  %dx = linalg.generic {
      indexing_maps = [affine_map<(i, j, c, k, f) -> (i + j - k + 2, f)>,
                       affine_map<(i, j, c, k, f) -> (k, c, f)>,
                       affine_map<(i, j, c, k, f) -> (i, j, c)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%spread, %w : tensor<10x2xf32>, tensor<3x2x2xf32>) outs(%init : tensor<3x4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x4x2xf32>
  return %dx : tensor<3x4x2xf32>
}
