// A linear layer with a squared-error loss, momentum SGD: a tiny L0 model
// for epl-estimate-memory.mlir.
module attributes {epl.config = {"optimizer.type" = "momentum",
                                 "optimizer.lr" = 1.0e-01 : f64,
                                 "optimizer.momentum" = 9.0e-01 : f64}} {
  func.func @linear(%x: tensor<4x3xf32> {epl.arg = "input", epl.name = "x"},
                    %y: tensor<4x2xf32> {epl.arg = "label", epl.name = "y"},
                    %w: tensor<3x2xf32> {epl.arg = "param", epl.name = "w"})
      -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x2xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
    %p = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x2xf32>)
           outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
    %es = tensor.empty() : tensor<f32>
    %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                             affine_map<(i, j) -> (i, j)>,
                                             affine_map<(i, j) -> ()>],
                            iterator_types = ["reduction", "reduction"]}
              ins(%p, %y : tensor<4x2xf32>, tensor<4x2xf32>) outs(%fs : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %d = arith.subf %a, %b : f32
      %s = arith.mulf %d, %d : f32
      %r = arith.addf %acc, %s : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}
