// A two-stage pipeline written in MLIR: instead of named scopes, each op of
// the forward carries the stage it runs on (#epl.stage). epl-plan keeps the
// stages the user wrote; the backward and the update follow their forward.
//
//   build/bin/epl-run examples/pipeline.mlir --ranks 2 --steps 3
//   build/bin/epl-opt examples/pipeline.mlir --epl-parallelize=devices=2
//
// loss = sum((tanh(x @ w0) @ w1 - y)^2) / 8

#s0 = #epl.stage<index = 0, name = "encoder">
#s1 = #epl.stage<index = 1, name = "head">
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>

module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64,
                                 "pipeline.strategy" = "PreferBackward"}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %y: tensor<8x3xf32> {epl.arg = "label", epl.name = "y"},
                   %w0: tensor<4x16xf32> {epl.arg = "param", epl.name = "encoder/kernel"},
                   %w1: tensor<16x3xf32> {epl.arg = "param", epl.name = "head/kernel"})
      -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    // Stage 0: h = tanh(x @ w0).
    %e0 = tensor.empty() : tensor<8x16xf32>
    %f0 = linalg.fill {epl.stage = #s0} ins(%zero : f32) outs(%e0 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %xw = linalg.matmul {epl.stage = #s0} ins(%x, %w0 : tensor<8x4xf32>, tensor<4x16xf32>)
            outs(%f0 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
           ins(%xw : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) attrs = {epl.stage = #s0} {
    ^bb0(%a: f32, %o: f32):
      %t = math.tanh %a : f32
      linalg.yield %t : f32
    } -> tensor<8x16xf32>
    // Stage 1: the squared error of h @ w1 against y.
    %e1 = tensor.empty() : tensor<8x3xf32>
    %f1 = linalg.fill {epl.stage = #s1} ins(%zero : f32) outs(%e1 : tensor<8x3xf32>) -> tensor<8x3xf32>
    %p = linalg.matmul {epl.stage = #s1} ins(%h, %w1 : tensor<8x16xf32>, tensor<16x3xf32>)
           outs(%f1 : tensor<8x3xf32>) -> tensor<8x3xf32>
    %es = tensor.empty() : tensor<f32>
    %fs = linalg.fill {epl.stage = #s1} ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
              ins(%p, %y : tensor<8x3xf32>, tensor<8x3xf32>) outs(%fs : tensor<f32>) attrs = {epl.stage = #s1} {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %d = arith.subf %a, %b : f32
      %sq = arith.mulf %d, %d : f32
      %c = arith.constant 0.125 : f32
      %s = arith.mulf %sq, %c : f32
      %n = arith.addf %acc, %s : f32
      linalg.yield %n : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}
