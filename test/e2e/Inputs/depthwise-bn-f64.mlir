// Gradient check input (test_gradients.py): a convolution, batch
// normalization in training mode (batch statistics over n, h, w), a padded
// stride-2 depthwise convolution, a 2x2 stride-2 average pool and a global
// average pool, in f64.
#id4 = affine_map<(n, h, w, c) -> (n, h, w, c)>
#ch4 = affine_map<(n, h, w, c) -> (c)>
module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 1.0e-01 : f64}} {
  func.func @model(%x: tensor<2x6x6x2xf64> {epl.arg = "param", epl.name = "x"},
                   %w: tensor<1x1x2x3xf64> {epl.arg = "param", epl.name = "w"},
                   %gamma: tensor<3xf64> {epl.arg = "param", epl.name = "gamma"},
                   %beta: tensor<3xf64> {epl.arg = "param", epl.name = "beta"},
                   %dw: tensor<3x3x3xf64> {epl.arg = "param", epl.name = "dw"}) -> tensor<f64> {
    %zero = arith.constant 0.0 : f64
    %count = arith.constant 72.0 : f64
    %eps = arith.constant 1.0e-05 : f64
    %quarter = arith.constant 0.25 : f64
    %e1 = tensor.empty() : tensor<2x6x6x3xf64>
    %f1 = linalg.fill ins(%zero : f64) outs(%e1 : tensor<2x6x6x3xf64>) -> tensor<2x6x6x3xf64>
    %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
           ins(%x, %w : tensor<2x6x6x2xf64>, tensor<1x1x2x3xf64>) outs(%f1 : tensor<2x6x6x3xf64>) -> tensor<2x6x6x3xf64>
    // batch statistics
    %ec = tensor.empty() : tensor<3xf64>
    %fc = linalg.fill ins(%zero : f64) outs(%ec : tensor<3xf64>) -> tensor<3xf64>
    %sum = linalg.generic {indexing_maps = [#id4, #ch4], iterator_types = ["reduction", "reduction", "reduction", "parallel"]}
         ins(%c : tensor<2x6x6x3xf64>) outs(%fc : tensor<3xf64>) {
    ^bb0(%v: f64, %acc: f64):
      %r = arith.addf %acc, %v : f64
      linalg.yield %r : f64
    } -> tensor<3xf64>
    %mean = linalg.generic {indexing_maps = [affine_map<(c) -> (c)>, affine_map<(c) -> (c)>], iterator_types = ["parallel"]}
         ins(%sum : tensor<3xf64>) outs(%ec : tensor<3xf64>) {
    ^bb0(%v: f64, %o: f64):
      %r = arith.divf %v, %count : f64
      linalg.yield %r : f64
    } -> tensor<3xf64>
    %sq = linalg.generic {indexing_maps = [#id4, #ch4, #ch4], iterator_types = ["reduction", "reduction", "reduction", "parallel"]}
         ins(%c, %mean : tensor<2x6x6x3xf64>, tensor<3xf64>) outs(%fc : tensor<3xf64>) {
    ^bb0(%v: f64, %m: f64, %acc: f64):
      %d = arith.subf %v, %m : f64
      %d2 = arith.mulf %d, %d : f64
      %r = arith.addf %acc, %d2 : f64
      linalg.yield %r : f64
    } -> tensor<3xf64>
    %bn = linalg.generic {indexing_maps = [#id4, #ch4, #ch4, #ch4, #ch4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
         ins(%c, %mean, %sq, %gamma, %beta : tensor<2x6x6x3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>)
         outs(%e1 : tensor<2x6x6x3xf64>) {
    ^bb0(%v: f64, %m: f64, %s: f64, %g: f64, %b: f64, %o: f64):
      %var = arith.divf %s, %count : f64
      %ve = arith.addf %var, %eps : f64
      %rs = math.rsqrt %ve : f64
      %d = arith.subf %v, %m : f64
      %n = arith.mulf %d, %rs : f64
      %gn = arith.mulf %n, %g : f64
      %y = arith.addf %gn, %b : f64
      %t = math.tanh %y : f64
      linalg.yield %t : f64
    } -> tensor<2x6x6x3xf64>
    // depthwise 3x3 stride 2, padding 1: 8x8 -> 3x3
    %p = tensor.pad %bn low[0, 1, 1, 0] high[0, 1, 1, 0] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f64
    } : tensor<2x6x6x3xf64> to tensor<2x8x8x3xf64>
    %e2 = tensor.empty() : tensor<2x3x3x3xf64>
    %f2 = linalg.fill ins(%zero : f64) outs(%e2 : tensor<2x3x3x3xf64>) -> tensor<2x3x3x3xf64>
    %dc = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
           ins(%p, %dw : tensor<2x8x8x3xf64>, tensor<3x3x3xf64>) outs(%f2 : tensor<2x3x3x3xf64>) -> tensor<2x3x3x3xf64>
    // average pool 2x2 stride 1: 3x3 -> 2x2
    %win = tensor.empty() : tensor<2x2xf64>
    %e3 = tensor.empty() : tensor<2x2x2x3xf64>
    %f3 = linalg.fill ins(%zero : f64) outs(%e3 : tensor<2x2x2x3xf64>) -> tensor<2x2x2x3xf64>
    %ps = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
           ins(%dc, %win : tensor<2x3x3x3xf64>, tensor<2x2xf64>) outs(%f3 : tensor<2x2x2x3xf64>) -> tensor<2x2x2x3xf64>
    // global average of squares
    %e0 = tensor.empty() : tensor<f64>
    %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
    %g = linalg.generic {indexing_maps = [#id4, affine_map<(n, h, w, c) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
         ins(%ps : tensor<2x2x2x3xf64>) outs(%f0 : tensor<f64>) {
    ^bb0(%v: f64, %acc: f64):
      %a = arith.mulf %v, %quarter : f64
      %a2 = arith.mulf %a, %a : f64
      %r = arith.addf %acc, %a2 : f64
      linalg.yield %r : f64
    } -> tensor<f64>
    return %g : tensor<f64>
  }
}
