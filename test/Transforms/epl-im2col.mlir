// RUN: epl-opt %s --epl-im2col --split-input-file | FileCheck %s
// RUN: epl-opt %s --epl-im2col=tile-bytes=1024 --split-input-file | FileCheck %s --check-prefix=TILE

// A convolution reads its input's patches ([n, oh, ow, kh, kw, c]), so the
// contraction is a GEMM over projections: m = (n, oh, ow), k = (kh, kw, c).
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d3, d2 * 2 + d4, d5)>
// CHECK-DAG: #[[ID6:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d4, d5, d6)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
// CHECK-LABEL: func.func @conv
// CHECK: %[[PATCHES:.*]] = linalg.generic {indexing_maps = [#[[WIN]], #[[ID6]]]
// CHECK-SAME: ins(%{{.*}} : tensor<2x9x9x3xf32>) outs(%{{.*}} : tensor<2x4x4x3x3x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[P]], #[[W]], {{.*}}]
// CHECK-SAME: ins(%[[PATCHES]], %{{.*}} : tensor<2x4x4x3x3x3xf32>, tensor<3x3x3x8xf32>)
// Patches over 1024 bytes are made an image at a time, each contracted
// right after it is copied, into that image's rows of the result.
// TILE-LABEL: func.func @conv
// TILE: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// TILE: %[[X:.*]] = tensor.extract_slice %{{.*}}[%[[N]], 0, 0, 0] [1, 9, 9, 3]
// TILE: %[[EMPTY:.*]] = tensor.empty() : tensor<1x4x4x3x3x3xf32>
// TILE: %[[TILE:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x9x9x3xf32>) outs(%[[EMPTY]] : tensor<1x4x4x3x3x3xf32>)
// TILE: %[[OUT:.*]] = tensor.extract_slice %[[ACC]][%[[N]], 0, 0, 0] [1, 4, 4, 8]
// TILE: %[[G:.*]] = linalg.generic {{.*}} ins(%[[TILE]], %{{.*}} : tensor<1x4x4x3x3x3xf32>, tensor<3x3x3x8xf32>) outs(%[[OUT]] : tensor<1x4x4x8xf32>)
// TILE: tensor.insert_slice %[[G]] into %[[ACC]][%[[N]], 0, 0, 0] [1, 4, 4, 8]
// TILE-NOT: tensor<2x4x4x3x3x3xf32>
func.func @conv(%x: tensor<2x9x9x3xf32>, %w: tensor<3x3x3x8xf32>, %z: tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32> {
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
         ins(%x, %w : tensor<2x9x9x3xf32>, tensor<3x3x3x8xf32>) outs(%z : tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32>
  return %y : tensor<2x4x4x8xf32>
}

// -----

// An input gradient (epl-autodiff's transposed window) contracts over
// (kh, kw, f): the filter, held (kh, kw, c, f), is copied into
// (kh, kw, f, c) so that k is one run of its dimensions.
// CHECK-LABEL: func.func @input_gradient
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x6x6x3x3x4xf32>)
// CHECK: %[[WT:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<3x3x2x4xf32>) outs(%{{.*}} : tensor<3x3x4x2xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[WT]] : tensor<2x6x6x3x3x4xf32>, tensor<3x3x4x2xf32>)
// The filter's copy is made once, outside the loop over images.
// TILE-LABEL: func.func @input_gradient
// TILE: %[[WT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x3x4x2xf32>)
// TILE: scf.for
// TILE: tensor.empty() : tensor<1x6x6x3x3x4xf32>
// TILE-NOT: outs(%{{.*}} : tensor<3x3x4x2xf32>)
// TILE: linalg.generic {{.*}} ins(%{{.*}}, %[[WT]] : tensor<1x6x6x3x3x4xf32>, tensor<3x3x4x2xf32>)
func.func @input_gradient(%g: tensor<2x8x8x4xf32>, %w: tensor<3x3x2x4xf32>, %z: tensor<2x6x6x2xf32>) -> tensor<2x6x6x2xf32> {
  %dx = linalg.generic {
      indexing_maps = [affine_map<(n, i, j, c, kh, kw, f) -> (n, i - kh + 2, j - kw + 2, f)>,
                       affine_map<(n, i, j, c, kh, kw, f) -> (kh, kw, c, f)>,
                       affine_map<(n, i, j, c, kh, kw, f) -> (n, i, j, c)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%g, %w : tensor<2x8x8x4xf32>, tensor<3x3x2x4xf32>) outs(%z : tensor<2x6x6x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x6x6x2xf32>
  return %dx : tensor<2x6x6x2xf32>
}

// -----

// A filter gradient contracts over (n, oh, ow) into (kh, kw, c, f): the
// window reads channels (an m loop) innermost, so the patches are laid out
// (k, m) = [n, oh, ow, kh, kw, c], copied along channels, and BLAS reads
// them transposed.
// CHECK-LABEL: func.func @filter_gradient
// CHECK: %[[PATCHES:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x6x6x4xf32>) outs(%{{.*}} : tensor<2x4x4x3x3x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[PATCHES]], %{{.*}} : tensor<2x4x4x3x3x4xf32>, tensor<2x4x4x8xf32>) outs(%{{.*}} : tensor<3x3x4x8xf32>)
// Images are a reduction of the filter gradient: each adds into all of it.
// TILE-LABEL: func.func @filter_gradient
// TILE: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// TILE: tensor.empty() : tensor<1x4x4x3x3x4xf32>
// TILE: %[[DY:.*]] = tensor.extract_slice %{{.*}}[%[[N]], 0, 0, 0] [1, 4, 4, 8]
// TILE: %[[G:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[DY]] : tensor<1x4x4x3x3x4xf32>, tensor<1x4x4x8xf32>) outs(%[[ACC]] : tensor<3x3x4x8xf32>)
// TILE: scf.yield %[[G]]
func.func @filter_gradient(%x: tensor<2x6x6x4xf32>, %dy: tensor<2x4x4x8xf32>, %z: tensor<3x3x4x8xf32>) -> tensor<3x3x4x8xf32> {
  %dw = linalg.generic {
      indexing_maps = [affine_map<(kh, kw, c, f, n, i, j) -> (n, i + kh, j + kw, c)>,
                       affine_map<(kh, kw, c, f, n, i, j) -> (n, i, j, f)>,
                       affine_map<(kh, kw, c, f, n, i, j) -> (kh, kw, c, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<2x6x6x4xf32>, tensor<2x4x4x8xf32>) outs(%z : tensor<3x3x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x3x4x8xf32>
  return %dw : tensor<3x3x4x8xf32>
}

// -----

// Pooling is no contraction: it stays as it is.
// CHECK-LABEL: func.func @pool
// CHECK-NOT: tensor<2x3x3x2x2x4xf32>
func.func @pool(%x: tensor<2x4x4x4xf32>, %z: tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32> {
  %win = tensor.empty() : tensor<2x2xf32>
  %y = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %win : tensor<2x4x4x4xf32>, tensor<2x2xf32>) outs(%z : tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
  return %y : tensor<2x3x3x4xf32>
}

// -----

// A loop only the filter reduces over (not read by the window) is no GEMM
// dimension: the op stays as it is.
// CHECK-LABEL: func.func @extra_reduction
// CHECK-NOT: tensor<2x3x2x3xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : tensor<2x7x3xf32>, tensor<3x3x4x2xf32>)
func.func @extra_reduction(%x: tensor<2x7x3xf32>, %w: tensor<3x3x4x2xf32>, %z: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %y = linalg.generic {
      indexing_maps = [affine_map<(n, o, f, k, c, r) -> (n, o * 2 + k, c)>,
                       affine_map<(n, o, f, k, c, r) -> (k, c, f, r)>,
                       affine_map<(n, o, f, k, c, r) -> (n, o, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<2x7x3xf32>, tensor<3x3x4x2xf32>) outs(%z : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// A convolution nobody reads is still tiled (dead code is not this pass's
// to remove), and tidying the loop it leaves reads no erased op.
// TILE-LABEL: func.func @unused
// TILE: scf.for
// TILE: return %arg2
func.func @unused(%x: tensor<4x9x9x3xf32>, %w: tensor<3x3x3x8xf32>, %z: tensor<4x4x4x8xf32>) -> tensor<4x4x4x8xf32> {
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
         ins(%x, %w : tensor<4x9x9x3xf32>, tensor<3x3x3x8xf32>) outs(%z : tensor<4x4x4x8xf32>) -> tensor<4x4x4x8xf32>
  return %z : tensor<4x4x4x8xf32>
}
