// Gradient check input (test_gradients.py): a padded stride-2 convolution,
// tanh, a 2x2 max pool, a dilated convolution, in f64; x is a parameter so
// that every window gradient (stride, padding, dilation, pooling) is checked.
module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 1.0e-01 : f64}} {
  func.func @model(%x: tensor<2x7x7x3xf64> {epl.arg = "param", epl.name = "x"},
                   %w: tensor<3x3x3x4xf64> {epl.arg = "param", epl.name = "w"},
                   %w2: tensor<2x2x4x5xf64> {epl.arg = "param", epl.name = "w2"}) -> tensor<f64> {
    %zero = arith.constant 0.0 : f64
    %ninf = arith.constant 0xFFF0000000000000 : f64
    %n = arith.constant 40.0 : f64
    %xp = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f64
    } : tensor<2x7x7x3xf64> to tensor<2x9x9x3xf64>
    %e1 = tensor.empty() : tensor<2x4x4x4xf64>
    %f1 = linalg.fill ins(%zero : f64) outs(%e1 : tensor<2x4x4x4xf64>) -> tensor<2x4x4x4xf64>
    %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
           ins(%xp, %w : tensor<2x9x9x3xf64>, tensor<3x3x3x4xf64>) outs(%f1 : tensor<2x4x4x4xf64>) -> tensor<2x4x4x4xf64>
    %t = linalg.generic {indexing_maps = [affine_map<(a,b,c,d) -> (a,b,c,d)>, affine_map<(a,b,c,d) -> (a,b,c,d)>],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
         ins(%c : tensor<2x4x4x4xf64>) outs(%e1 : tensor<2x4x4x4xf64>) {
    ^bb0(%v: f64, %o: f64):
      %y = math.tanh %v : f64
      linalg.yield %y : f64
    } -> tensor<2x4x4x4xf64>
    // max pool 2x2 stride 1 -> 3x3
    %win = tensor.empty() : tensor<2x2xf64>
    %e2 = tensor.empty() : tensor<2x3x3x4xf64>
    %f2 = linalg.fill ins(%ninf : f64) outs(%e2 : tensor<2x3x3x4xf64>) -> tensor<2x3x3x4xf64>
    %mp = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
           ins(%t, %win : tensor<2x4x4x4xf64>, tensor<2x2xf64>) outs(%f2 : tensor<2x3x3x4xf64>) -> tensor<2x3x3x4xf64>
    // conv 2x2 dilation 2 -> 1x1... use stride 1 dilation 2 : 3 - 2*(2-1) = 1
    %e3 = tensor.empty() : tensor<2x1x1x5xf64>
    %f3 = linalg.fill ins(%zero : f64) outs(%e3 : tensor<2x1x1x5xf64>) -> tensor<2x1x1x5xf64>
    %c2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
           ins(%mp, %w2 : tensor<2x3x3x4xf64>, tensor<2x2x4x5xf64>) outs(%f3 : tensor<2x1x1x5xf64>) -> tensor<2x1x1x5xf64>
    %e0 = tensor.empty() : tensor<f64>
    %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
    %s = linalg.generic {indexing_maps = [affine_map<(a,b,c,d) -> (a,b,c,d)>, affine_map<(a,b,c,d) -> ()>],
                         iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
         ins(%c2 : tensor<2x1x1x5xf64>) outs(%f0 : tensor<f64>) {
    ^bb0(%v: f64, %acc: f64):
      %sq = arith.mulf %v, %v : f64
      %r = arith.addf %acc, %sq : f64
      linalg.yield %r : f64
    } -> tensor<f64>
    %l = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
         ins(%s : tensor<f64>) outs(%e0 : tensor<f64>) {
    ^bb0(%v: f64, %o: f64):
      %r = arith.divf %v, %n : f64
      linalg.yield %r : f64
    } -> tensor<f64>
    return %l : tensor<f64>
  }
}
