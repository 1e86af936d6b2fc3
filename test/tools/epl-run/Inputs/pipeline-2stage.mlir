// A pipelined training step written by hand, in the form
// epl-pipeline-partition produces: two stages of a 2-layer linear model
// with a skip connection, each device running its stage's function, a 1F1B
// schedule of two micro-batches spelled out as calls tagged epl.action
// between the sends and receives of activations and their gradients.
// Per device: 2 rows of the global batch of 4 (split over "data"), one row
// per micro-batch. The loss is the sum of squared errors; stage 0 updates
// its kernel with SGD, stage 1 with momentum. pipeline-2stage-reference.mlir
// is the same step on one device.
epl.mesh @mesh ["stage" = 2, "data" = 2]
epl.pipeline @model on @mesh over "stage" stages [@model_stage0, @model_stage1] strategy "PreferBackward" micro_batches 2

func.func @model_stage0(
    %x: tensor<2x3xf32> {epl.arg = "input", epl.name = "x", epl.shard = #epl.sharding<@mesh, [["data"], []]>},
    %w0: tensor<3x5xf32> {epl.arg = "param", epl.name = "fc0/kernel", epl.init = "normal"})
    -> (tensor<3x5xf32> {epl.result = "param", epl.name = "fc0/kernel"}) {
  %x0 = tensor.extract_slice %x[0, 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<1x3xf32>
  %x1 = tensor.extract_slice %x[1, 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<1x3xf32>
  %h0 = func.call @s0_forward(%x0, %w0) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<1x3xf32>, tensor<3x5xf32>) -> tensor<1x5xf32>
  epl.send %h0 on @mesh over ["stage"] to 1 tag 0 : tensor<1x5xf32>
  %h1 = func.call @s0_forward(%x1, %w0) {epl.action = #epl.action<phase = forward, micro_batch = 1, stage = 0>} : (tensor<1x3xf32>, tensor<3x5xf32>) -> tensor<1x5xf32>
  epl.send %h1 on @mesh over ["stage"] to 1 tag 1 : tensor<1x5xf32>
  %g0 = epl.recv on @mesh over ["stage"] from 1 tag 2 : tensor<1x5xf32>
  %d0 = func.call @s0_backward_weight(%x0, %g0) {epl.action = #epl.action<phase = backward_weight, micro_batch = 0, stage = 0>} : (tensor<1x3xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
  %g1 = epl.recv on @mesh over ["stage"] from 1 tag 3 : tensor<1x5xf32>
  %d1 = func.call @s0_backward_weight(%x1, %g1) {epl.action = #epl.action<phase = backward_weight, micro_batch = 1, stage = 0>} : (tensor<1x3xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
  %e = tensor.empty() : tensor<3x5xf32>
  %d = linalg.add ins(%d0, %d1 : tensor<3x5xf32>, tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %dw = epl.all_reduce %d on @mesh over ["data"] sum : tensor<3x5xf32>
  // SGD, lr 0.01.
  %w0n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w0, %dw : tensor<3x5xf32>, tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%w: f32, %g: f32, %o: f32):
    %lr = arith.constant 0.01 : f32
    %s = arith.mulf %lr, %g : f32
    %n = arith.subf %w, %s : f32
    linalg.yield %n : f32
  } -> tensor<3x5xf32>
  return %w0n : tensor<3x5xf32>
}

func.func @model_stage1(
    %x: tensor<2x3xf32> {epl.arg = "input", epl.name = "x", epl.shard = #epl.sharding<@mesh, [["data"], []]>},
    %y: tensor<2x2xf32> {epl.arg = "label", epl.name = "y", epl.shard = #epl.sharding<@mesh, [["data"], []]>},
    %w1: tensor<5x2xf32> {epl.arg = "param", epl.name = "fc1/kernel", epl.init = "normal"},
    %v1: tensor<5x2xf32> {epl.arg = "opt_state", epl.name = "fc1/kernel.momentum_buffer"})
    -> (tensor<f32> {epl.result = "loss"},
        tensor<5x2xf32> {epl.result = "param", epl.name = "fc1/kernel"},
        tensor<5x2xf32> {epl.result = "opt_state", epl.name = "fc1/kernel.momentum_buffer"}) {
  %x0 = tensor.extract_slice %x[0, 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<1x3xf32>
  %x1 = tensor.extract_slice %x[1, 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<1x3xf32>
  %y0 = tensor.extract_slice %y[0, 0] [1, 2] [1, 1] : tensor<2x2xf32> to tensor<1x2xf32>
  %y1 = tensor.extract_slice %y[1, 0] [1, 2] [1, 1] : tensor<2x2xf32> to tensor<1x2xf32>
  %h0 = epl.recv on @mesh over ["stage"] from 0 tag 0 : tensor<1x5xf32>
  %o0:2 = func.call @s1_forward(%h0, %x0, %y0, %w1) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 1>} : (tensor<1x5xf32>, tensor<1x3xf32>, tensor<1x2xf32>, tensor<5x2xf32>) -> (tensor<1x2xf32>, tensor<f32>)
  %g0 = func.call @s1_backward_input(%o0#0, %w1) {epl.action = #epl.action<phase = backward_input, micro_batch = 0, stage = 1>} : (tensor<1x2xf32>, tensor<5x2xf32>) -> tensor<1x5xf32>
  epl.send %g0 on @mesh over ["stage"] to 0 tag 2 : tensor<1x5xf32>
  %d0 = func.call @s1_backward_weight(%h0, %o0#0) {epl.action = #epl.action<phase = backward_weight, micro_batch = 0, stage = 1>} : (tensor<1x5xf32>, tensor<1x2xf32>) -> tensor<5x2xf32>
  %h1 = epl.recv on @mesh over ["stage"] from 0 tag 1 : tensor<1x5xf32>
  %o1:2 = func.call @s1_forward(%h1, %x1, %y1, %w1) {epl.action = #epl.action<phase = forward, micro_batch = 1, stage = 1>} : (tensor<1x5xf32>, tensor<1x3xf32>, tensor<1x2xf32>, tensor<5x2xf32>) -> (tensor<1x2xf32>, tensor<f32>)
  %g1 = func.call @s1_backward_input(%o1#0, %w1) {epl.action = #epl.action<phase = backward_input, micro_batch = 1, stage = 1>} : (tensor<1x2xf32>, tensor<5x2xf32>) -> tensor<1x5xf32>
  epl.send %g1 on @mesh over ["stage"] to 0 tag 3 : tensor<1x5xf32>
  %d1 = func.call @s1_backward_weight(%h1, %o1#0) {epl.action = #epl.action<phase = backward_weight, micro_batch = 1, stage = 1>} : (tensor<1x5xf32>, tensor<1x2xf32>) -> tensor<5x2xf32>
  %el = tensor.empty() : tensor<f32>
  %l = linalg.add ins(%o0#1, %o1#1 : tensor<f32>, tensor<f32>) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = epl.all_reduce %l on @mesh over ["data"] sum : tensor<f32>
  %e = tensor.empty() : tensor<5x2xf32>
  %d = linalg.add ins(%d0, %d1 : tensor<5x2xf32>, tensor<5x2xf32>) outs(%e : tensor<5x2xf32>) -> tensor<5x2xf32>
  %dw = epl.all_reduce %d on @mesh over ["data"] sum : tensor<5x2xf32>
  %w1n:2 = func.call @momentum(%w1, %v1, %dw) : (tensor<5x2xf32>, tensor<5x2xf32>, tensor<5x2xf32>) -> (tensor<5x2xf32>, tensor<5x2xf32>)
  return %loss, %w1n#0, %w1n#1 : tensor<f32>, tensor<5x2xf32>, tensor<5x2xf32>
}

// h = x w0
func.func private @s0_forward(%x: tensor<1x3xf32>, %w0: tensor<3x5xf32>) -> tensor<1x5xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x5xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<1x5xf32>) -> tensor<1x5xf32>
  %h = linalg.matmul ins(%x, %w0 : tensor<1x3xf32>, tensor<3x5xf32>) outs(%z : tensor<1x5xf32>) -> tensor<1x5xf32>
  return %h : tensor<1x5xf32>
}

// dw0 = x^T dh
func.func private @s0_backward_weight(%x: tensor<1x3xf32>, %dh: tensor<1x5xf32>) -> tensor<3x5xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(i, j, r) -> (r, i)>, affine_map<(i, j, r) -> (r, j)>, affine_map<(i, j, r) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dh : tensor<1x3xf32>, tensor<1x5xf32>) outs(%z : tensor<3x5xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x5xf32>
  return %d : tensor<3x5xf32>
}

// out = h w1 + x p (the skip connection reads the input on the last stage);
// returns dloss/dout = 2 (out - y) and the loss sum((out - y)^2).
func.func private @s1_forward(%h: tensor<1x5xf32>, %x: tensor<1x3xf32>, %y: tensor<1x2xf32>, %w1: tensor<5x2xf32>) -> (tensor<1x2xf32>, tensor<f32>) {
  %cst = arith.constant 0.0 : f32
  %p = arith.constant dense<[[1.0, 0.0], [0.0, 1.0], [0.5, -0.5]]> : tensor<3x2xf32>
  %e = tensor.empty() : tensor<1x2xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  %t = linalg.matmul ins(%h, %w1 : tensor<1x5xf32>, tensor<5x2xf32>) outs(%z : tensor<1x2xf32>) -> tensor<1x2xf32>
  %out = linalg.matmul ins(%x, %p : tensor<1x3xf32>, tensor<3x2xf32>) outs(%t : tensor<1x2xf32>) -> tensor<1x2xf32>
  %gout = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%out, %y : tensor<1x2xf32>, tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %two = arith.constant 2.0 : f32
    %d = arith.subf %a, %b : f32
    %g = arith.mulf %two, %d : f32
    linalg.yield %g : f32
  } -> tensor<1x2xf32>
  %el = tensor.empty() : tensor<f32>
  %zl = linalg.fill ins(%cst : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%out, %y : tensor<1x2xf32>, tensor<1x2xf32>) outs(%zl : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    %sq = arith.mulf %d, %d : f32
    %s = arith.addf %c, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %gout, %loss : tensor<1x2xf32>, tensor<f32>
}

// dh = dout w1^T
func.func private @s1_backward_input(%gout: tensor<1x2xf32>, %w1: tensor<5x2xf32>) -> tensor<1x5xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x5xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<1x5xf32>) -> tensor<1x5xf32>
  %dh = linalg.generic {indexing_maps = [affine_map<(r, j, k) -> (r, k)>, affine_map<(r, j, k) -> (j, k)>, affine_map<(r, j, k) -> (r, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%gout, %w1 : tensor<1x2xf32>, tensor<5x2xf32>) outs(%z : tensor<1x5xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x5xf32>
  return %dh : tensor<1x5xf32>
}

// dw1 = h^T dout
func.func private @s1_backward_weight(%h: tensor<1x5xf32>, %gout: tensor<1x2xf32>) -> tensor<5x2xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x2xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<5x2xf32>) -> tensor<5x2xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(i, j, r) -> (r, i)>, affine_map<(i, j, r) -> (r, j)>, affine_map<(i, j, r) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %gout : tensor<1x5xf32>, tensor<1x2xf32>) outs(%z : tensor<5x2xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<5x2xf32>
  return %d : tensor<5x2xf32>
}

// v = 0.9 v + g; w = w - 0.01 v
func.func private @momentum(%w: tensor<5x2xf32>, %v: tensor<5x2xf32>, %g: tensor<5x2xf32>) -> (tensor<5x2xf32>, tensor<5x2xf32>) {
  %e = tensor.empty() : tensor<5x2xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w, %v, %g : tensor<5x2xf32>, tensor<5x2xf32>, tensor<5x2xf32>) outs(%e, %e : tensor<5x2xf32>, tensor<5x2xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32, %p: f32):
    %mu = arith.constant 0.9 : f32
    %lr = arith.constant 0.01 : f32
    %bv = arith.mulf %mu, %b : f32
    %nv = arith.addf %bv, %c : f32
    %s = arith.mulf %lr, %nv : f32
    %nw = arith.subf %a, %s : f32
    linalg.yield %nw, %nv : f32, f32
  } -> (tensor<5x2xf32>, tensor<5x2xf32>)
  return %r#0, %r#1 : tensor<5x2xf32>, tensor<5x2xf32>
}
