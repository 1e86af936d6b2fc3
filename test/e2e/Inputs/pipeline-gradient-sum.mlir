// h (stage 0) is read first by a stage-1 op, then by a stage-0 op whose
// result stage 1 reads: the gradient of h sums a stage-1 and a stage-0
// contribution, on stage 0 (where h is made) whatever the users' order.
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64, "optimizer.type" = "sgd"}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w0: tensor<4x4xf32> {epl.arg = "param", epl.name = "w0"},
                   %w1: tensor<4x4xf32> {epl.arg = "param", epl.name = "w1"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %m0 = linalg.matmul {epl.stage = #epl.stage<index = 0>} ins(%x, %w0 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %h = math.tanh %m0 {epl.stage = #epl.stage<index = 0>} : tensor<8x4xf32>
    %a = linalg.matmul {epl.stage = #epl.stage<index = 1>} ins(%h, %w1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %b = math.exp %h {epl.stage = #epl.stage<index = 0>} : tensor<8x4xf32>
    %c = arith.mulf %a, %b {epl.stage = #epl.stage<index = 1>} : tensor<8x4xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%c : tensor<8x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
