// loss = x[0,0] * sum((x @ w)^2) / 8, x[0,0] read with tensor.extract outside
// any body (test_parallel.py: an element of an input the batch splits).
module attributes {epl.config = {"optimizer.lr" = 0.1 : f64}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x3xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %n = arith.constant 8.0 : f32
    %x00 = tensor.extract %x[%c0, %c0] : tensor<8x4xf32>
    %e = tensor.empty() : tensor<8x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
    %m = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x3xf32>) outs(%f : tensor<8x3xf32>) -> tensor<8x3xf32>
    %es = tensor.empty() : tensor<f32>
    %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
         ins(%m : tensor<8x3xf32>) outs(%fs : tensor<f32>) {
    ^bb0(%p: f32, %acc: f32):
      %s = arith.mulf %p, %p : f32
      %s2 = arith.mulf %s, %x00 : f32
      %s3 = arith.divf %s2, %n : f32
      %r = arith.addf %acc, %s3 : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %t : tensor<f32>
  }
}
