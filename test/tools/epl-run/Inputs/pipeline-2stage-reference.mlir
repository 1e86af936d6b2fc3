// The training step of pipeline-2stage.mlir on one device, written as one
// function over the whole batch of 4: what the pipelined run must equal.
func.func @model(
    %x: tensor<4x3xf32> {epl.arg = "input", epl.name = "x"},
    %y: tensor<4x2xf32> {epl.arg = "label", epl.name = "y"},
    %w0: tensor<3x5xf32> {epl.arg = "param", epl.name = "fc0/kernel", epl.init = "normal"},
    %w1: tensor<5x2xf32> {epl.arg = "param", epl.name = "fc1/kernel", epl.init = "normal"},
    %v1: tensor<5x2xf32> {epl.arg = "opt_state", epl.name = "fc1/kernel.momentum_buffer"})
    -> (tensor<f32> {epl.result = "loss"},
        tensor<3x5xf32> {epl.result = "param", epl.name = "fc0/kernel"},
        tensor<5x2xf32> {epl.result = "param", epl.name = "fc1/kernel"},
        tensor<5x2xf32> {epl.result = "opt_state", epl.name = "fc1/kernel.momentum_buffer"}) {
  %cst = arith.constant 0.0 : f32
  %p = arith.constant dense<[[1.0, 0.0], [0.0, 1.0], [0.5, -0.5]]> : tensor<3x2xf32>
  // Forward: h = x w0, out = h w1 + x p, loss = sum((out - y)^2).
  %eh = tensor.empty() : tensor<4x5xf32>
  %zh = linalg.fill ins(%cst : f32) outs(%eh : tensor<4x5xf32>) -> tensor<4x5xf32>
  %h = linalg.matmul ins(%x, %w0 : tensor<4x3xf32>, tensor<3x5xf32>) outs(%zh : tensor<4x5xf32>) -> tensor<4x5xf32>
  %eo = tensor.empty() : tensor<4x2xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<4x2xf32>) -> tensor<4x2xf32>
  %t = linalg.matmul ins(%h, %w1 : tensor<4x5xf32>, tensor<5x2xf32>) outs(%zo : tensor<4x2xf32>) -> tensor<4x2xf32>
  %out = linalg.matmul ins(%x, %p : tensor<4x3xf32>, tensor<3x2xf32>) outs(%t : tensor<4x2xf32>) -> tensor<4x2xf32>
  %el = tensor.empty() : tensor<f32>
  %zl = linalg.fill ins(%cst : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%out, %y : tensor<4x2xf32>, tensor<4x2xf32>) outs(%zl : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    %sq = arith.mulf %d, %d : f32
    %s = arith.addf %c, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  // Backward: dout = 2 (out - y), dw1 = h^T dout, dh = dout w1^T,
  // dw0 = x^T dh.
  %gout = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%out, %y : tensor<4x2xf32>, tensor<4x2xf32>) outs(%eo : tensor<4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %two = arith.constant 2.0 : f32
    %d = arith.subf %a, %b : f32
    %g = arith.mulf %two, %d : f32
    linalg.yield %g : f32
  } -> tensor<4x2xf32>
  %e1 = tensor.empty() : tensor<5x2xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<5x2xf32>) -> tensor<5x2xf32>
  %dw1 = linalg.generic {indexing_maps = [affine_map<(i, j, r) -> (r, i)>, affine_map<(i, j, r) -> (r, j)>, affine_map<(i, j, r) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %gout : tensor<4x5xf32>, tensor<4x2xf32>) outs(%z1 : tensor<5x2xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<5x2xf32>
  %dh = linalg.generic {indexing_maps = [affine_map<(r, j, k) -> (r, k)>, affine_map<(r, j, k) -> (j, k)>, affine_map<(r, j, k) -> (r, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%gout, %w1 : tensor<4x2xf32>, tensor<5x2xf32>) outs(%zh : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  %e0 = tensor.empty() : tensor<3x5xf32>
  %z0 = linalg.fill ins(%cst : f32) outs(%e0 : tensor<3x5xf32>) -> tensor<3x5xf32>
  %dw0 = linalg.generic {indexing_maps = [affine_map<(i, j, r) -> (r, i)>, affine_map<(i, j, r) -> (r, j)>, affine_map<(i, j, r) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dh : tensor<4x3xf32>, tensor<4x5xf32>) outs(%z0 : tensor<3x5xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x5xf32>
  // Updates: SGD on w0, momentum on w1, both lr 0.01.
  %w0n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w0, %dw0 : tensor<3x5xf32>, tensor<3x5xf32>) outs(%e0 : tensor<3x5xf32>) {
  ^bb0(%a: f32, %g: f32, %o: f32):
    %lr = arith.constant 0.01 : f32
    %s = arith.mulf %lr, %g : f32
    %n = arith.subf %a, %s : f32
    linalg.yield %n : f32
  } -> tensor<3x5xf32>
  %w1n:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %v1, %dw1 : tensor<5x2xf32>, tensor<5x2xf32>, tensor<5x2xf32>) outs(%e1, %e1 : tensor<5x2xf32>, tensor<5x2xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32, %q: f32):
    %mu = arith.constant 0.9 : f32
    %lr = arith.constant 0.01 : f32
    %bv = arith.mulf %mu, %b : f32
    %nv = arith.addf %bv, %c : f32
    %s = arith.mulf %lr, %nv : f32
    %nw = arith.subf %a, %s : f32
    linalg.yield %nw, %nv : f32, f32
  } -> (tensor<5x2xf32>, tensor<5x2xf32>)
  return %loss, %w0n, %w1n#0, %w1n#1 : tensor<f32>, tensor<3x5xf32>, tensor<5x2xf32>, tensor<5x2xf32>
}
