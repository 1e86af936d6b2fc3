// y = W x (x's columns are the examples), loss = sum(y * y) / 1000.
// With offload v0 the input x's device copy is freed right after the
// memref.transpose that views it for the weight gradient's GEMM
// (dW = dY x^T), before the GEMM reads it.
module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 1.0e-02 : f64,
                                 "pipeline.num_micro_batch" = 1 : i64, "offload.level" = "v0"}} {
  func.func @model(%x: tensor<64x32xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<16x64xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x32xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
    %y = linalg.matmul ins(%w, %x : tensor<16x64xf32>, tensor<64x32xf32>)
           outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
    %es = tensor.empty() : tensor<f32>
    %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                         iterator_types = ["reduction", "reduction"]}
        ins(%y : tensor<16x32xf32>) outs(%fs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %c = arith.constant 1.0e-03 : f32
      %t = arith.mulf %sq, %c : f32
      %r = arith.addf %acc, %t : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %s : tensor<f32>
  }
}
