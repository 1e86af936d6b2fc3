// Batch 4, features 4, as CSE leaves it: one zero-filled tensor<4xf32>
// (%f4) starts both the inputs' mean over the batch (one per feature) and
// each example's score (one per example).
//
//   loss = mean_b (sum_d (x[b, d] - mean_b' x[b', d]) * w[d])^2
//
// The mean is a statistic of the whole batch; the scores are batched.

module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 1.0e-02 : f64,
                                 "pipeline.num_micro_batch" = 1 : i64}} {
  func.func @model(%x: tensor<4x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e4 = tensor.empty() : tensor<4xf32>
    %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
    %mean = linalg.generic {indexing_maps = [affine_map<(b, d) -> (b, d)>, affine_map<(b, d) -> (d)>],
                            iterator_types = ["reduction", "parallel"]}
        ins(%x : tensor<4x4xf32>) outs(%f4 : tensor<4xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %q = arith.constant 0.25 : f32
      %s = arith.mulf %a, %q : f32
      %r = arith.addf %acc, %s : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    %p = linalg.generic {indexing_maps = [affine_map<(b, d) -> (b, d)>, affine_map<(b, d) -> (d)>,
                                          affine_map<(b, d) -> (d)>, affine_map<(b, d) -> (b)>],
                         iterator_types = ["parallel", "reduction"]}
        ins(%x, %mean, %w : tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%f4 : tensor<4xf32>) {
    ^bb0(%a: f32, %m: f32, %ww: f32, %acc: f32):
      %d = arith.subf %a, %m : f32
      %t = arith.mulf %d, %ww : f32
      %r = arith.addf %acc, %t : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>],
                         iterator_types = ["reduction"]}
        ins(%p : tensor<4xf32>) outs(%f0 : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %q = arith.constant 0.25 : f32
      %sq = arith.mulf %v, %v : f32
      %s = arith.mulf %sq, %q : f32
      %r = arith.addf %acc, %s : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
