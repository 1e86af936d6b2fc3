// A transposed weight (linalg.transpose, and a transposed-map matmul
// generic), a softmax and an integer-label NLL: seeded, the model and its
// training step built already (epl-opt --epl-training-step) train alike.
#id2 = affine_map<(i, j) -> (i, j)>
#bc = affine_map<(i, j) -> (j)>
module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 0.5 : f64}} {
  func.func @model(%x: tensor<8x6xf32> {epl.arg = "input", epl.name = "x"},
                   %y: tensor<8xi64> {epl.arg = "label", epl.name = "y"},
                   %w1: tensor<5x6xf32> {epl.arg = "param", epl.name = "w1"},
                   %b1: tensor<5xf32> {epl.arg = "param", epl.name = "b1"},
                   %w2: tensor<4x5xf32> {epl.arg = "param", epl.name = "w2"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %slope = arith.constant 0.1 : f32
    %nb = arith.constant 8.0 : f32
    %et = tensor.empty() : tensor<6x5xf32>
    %w1t = linalg.transpose ins(%w1 : tensor<5x6xf32>) outs(%et : tensor<6x5xf32>) permutation = [1, 0]
    %e1 = tensor.empty() : tensor<8x5xf32>
    %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x5xf32>) -> tensor<8x5xf32>
    %xw = linalg.matmul ins(%x, %w1t : tensor<8x6xf32>, tensor<6x5xf32>) outs(%f1 : tensor<8x5xf32>) -> tensor<8x5xf32>
    %pre = linalg.generic {indexing_maps = [#id2, #bc, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%xw, %b1 : tensor<8x5xf32>, tensor<5xf32>) outs(%e1 : tensor<8x5xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    } -> tensor<8x5xf32>
    %h = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%pre : tensor<8x5xf32>) outs(%e1 : tensor<8x5xf32>) {
    ^bb0(%a: f32, %o: f32):
      %c = arith.cmpf ogt, %a, %zero : f32
      %m = arith.mulf %a, %slope : f32
      %r = arith.select %c, %a, %m : f32
      linalg.yield %r : f32
    } -> tensor<8x5xf32>
    %e2 = tensor.empty() : tensor<8x4xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %logits = linalg.generic {indexing_maps = [affine_map<(b, c, k) -> (b, k)>, affine_map<(b, c, k) -> (c, k)>, affine_map<(b, c, k) -> (b, c)>],
                              iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h, %w2 : tensor<8x5xf32>, tensor<4x5xf32>) outs(%f2 : tensor<8x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<8x4xf32>
    %sm = linalg.softmax dimension(1) ins(%logits : tensor<8x4xf32>) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %nll = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>], iterator_types = ["reduction"]}
        ins(%y : tensor<8xi64>) outs(%f0 : tensor<f32>) {
    ^bb0(%l: i64, %acc: f32):
      %row = linalg.index 0 : index
      %col = arith.index_cast %l : i64 to index
      %p = tensor.extract %sm[%row, %col] : tensor<8x4xf32>
      %lp = math.log %p : f32
      %s = arith.subf %acc, %lp : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
        ins(%nll : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %d = arith.divf %a, %nb : f32
      linalg.yield %d : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}
