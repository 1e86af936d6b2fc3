// A regression whose first layer normalizes the inputs by the batch's own
// mean and variance, as torch's nn.BatchNorm1d(affine=False,
// track_running_stats=False) does in training mode:
//
//   xn   = (x - mean_b x) / sqrt(var_b x + 1e-5)
//   loss = mean((xn @ w + b - y)^2)
//
// The statistics read the inputs alone: micro-batches take them over the
// whole batch (each micro-batch's own would differ).

module attributes {epl.config = {"optimizer.type" = "sgd",
                                 "optimizer.lr" = 5.0e-02 : f64}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %y: tensor<8x2xf32> {epl.arg = "label", epl.name = "y"},
                   %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"},
                   %b: tensor<2xf32> {epl.arg = "param", epl.name = "b"})
      -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e4 = tensor.empty() : tensor<4xf32>
    %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
    %mean = linalg.generic {
        indexing_maps = [affine_map<(b, d) -> (b, d)>, affine_map<(b, d) -> (d)>],
        iterator_types = ["reduction", "parallel"]}
        ins(%x : tensor<8x4xf32>) outs(%f4 : tensor<4xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %n = arith.constant 0.125 : f32
      %s = arith.mulf %a, %n : f32
      %r = arith.addf %acc, %s : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    %var = linalg.generic {
        indexing_maps = [affine_map<(b, d) -> (b, d)>, affine_map<(b, d) -> (d)>,
                         affine_map<(b, d) -> (d)>],
        iterator_types = ["reduction", "parallel"]}
        ins(%x, %mean : tensor<8x4xf32>, tensor<4xf32>) outs(%f4 : tensor<4xf32>) {
    ^bb0(%a: f32, %m: f32, %acc: f32):
      %n = arith.constant 0.125 : f32
      %d = arith.subf %a, %m : f32
      %sq = arith.mulf %d, %d : f32
      %s = arith.mulf %sq, %n : f32
      %r = arith.addf %acc, %s : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    %ex = tensor.empty() : tensor<8x4xf32>
    %xn = linalg.generic {
        indexing_maps = [affine_map<(b, d) -> (b, d)>, affine_map<(b, d) -> (d)>,
                         affine_map<(b, d) -> (d)>, affine_map<(b, d) -> (b, d)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x, %mean, %var : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>)
        outs(%ex : tensor<8x4xf32>) {
    ^bb0(%a: f32, %m: f32, %v: f32, %o: f32):
      %eps = arith.constant 1.0e-05 : f32
      %d = arith.subf %a, %m : f32
      %ve = arith.addf %v, %eps : f32
      %sd = math.sqrt %ve : f32
      %r = arith.divf %d, %sd : f32
      linalg.yield %r : f32
    } -> tensor<8x4xf32>
    %ep = tensor.empty() : tensor<8x2xf32>
    %fp = linalg.fill ins(%zero : f32) outs(%ep : tensor<8x2xf32>) -> tensor<8x2xf32>
    %p = linalg.matmul ins(%xn, %w : tensor<8x4xf32>, tensor<4x2xf32>)
                       outs(%fp : tensor<8x2xf32>) -> tensor<8x2xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {
        indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (j)>,
                         affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> ()>],
        iterator_types = ["reduction", "reduction"]}
        ins(%p, %b, %y : tensor<8x2xf32>, tensor<2xf32>, tensor<8x2xf32>)
        outs(%f0 : tensor<f32>) {
    ^bb0(%pv: f32, %bv: f32, %yv: f32, %acc: f32):
      %n = arith.constant 0.0625 : f32
      %q = arith.addf %pv, %bv : f32
      %d = arith.subf %q, %yv : f32
      %sq = arith.mulf %d, %d : f32
      %s = arith.mulf %sq, %n : f32
      %r = arith.addf %acc, %s : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}
