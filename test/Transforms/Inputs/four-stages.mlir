module attributes {epl.config = {"pipeline.num_micro_batch" = 8 : i64, "pipeline.strategy" = "PreferForward"}} {
  func.func @model(%x: tensor<16x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w0: tensor<4x4xf32> {epl.arg = "param", epl.name = "w0"},
                   %w1: tensor<4x4xf32> {epl.arg = "param", epl.name = "w1"},
                   %w2: tensor<4x4xf32> {epl.arg = "param", epl.name = "w2"},
                   %w3: tensor<4x4xf32> {epl.arg = "param", epl.name = "w3"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x4xf32>) -> tensor<16x4xf32>
    %m0 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%x, %w0 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h0 = math.tanh %m0 {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<16x4xf32>
    %m1 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%h0, %w1 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h1 = math.tanh %m1 {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<16x4xf32>
    %m2 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s2">} ins(%h1, %w2 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h2 = math.tanh %m2 {epl.scope = #epl.replicate<devices = 1, name = "s2">} : tensor<16x4xf32>
    %m3 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s3">} ins(%h2, %w3 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h3 = math.tanh %m3 {epl.scope = #epl.replicate<devices = 1, name = "s3">} : tensor<16x4xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%h3 : tensor<16x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module attributes {epl.config = {"pipeline.num_micro_batch" = 8 : i64, "pipeline.strategy" = "PreferBackward"}} {
  func.func @model(%x: tensor<16x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w0: tensor<4x4xf32> {epl.arg = "param", epl.name = "w0"},
                   %w1: tensor<4x4xf32> {epl.arg = "param", epl.name = "w1"},
                   %w2: tensor<4x4xf32> {epl.arg = "param", epl.name = "w2"},
                   %w3: tensor<4x4xf32> {epl.arg = "param", epl.name = "w3"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x4xf32>) -> tensor<16x4xf32>
    %m0 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%x, %w0 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h0 = math.tanh %m0 {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<16x4xf32>
    %m1 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%h0, %w1 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h1 = math.tanh %m1 {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<16x4xf32>
    %m2 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s2">} ins(%h1, %w2 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h2 = math.tanh %m2 {epl.scope = #epl.replicate<devices = 1, name = "s2">} : tensor<16x4xf32>
    %m3 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s3">} ins(%h2, %w3 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h3 = math.tanh %m3 {epl.scope = #epl.replicate<devices = 1, name = "s3">} : tensor<16x4xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%h3 : tensor<16x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module attributes {epl.config = {"pipeline.num_micro_batch" = 8 : i64, "pipeline.strategy" = "ZeroBubbleH1"}} {
  func.func @model(%x: tensor<16x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w0: tensor<4x4xf32> {epl.arg = "param", epl.name = "w0"},
                   %w1: tensor<4x4xf32> {epl.arg = "param", epl.name = "w1"},
                   %w2: tensor<4x4xf32> {epl.arg = "param", epl.name = "w2"},
                   %w3: tensor<4x4xf32> {epl.arg = "param", epl.name = "w3"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x4xf32>) -> tensor<16x4xf32>
    %m0 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%x, %w0 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h0 = math.tanh %m0 {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<16x4xf32>
    %m1 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%h0, %w1 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h1 = math.tanh %m1 {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<16x4xf32>
    %m2 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s2">} ins(%h1, %w2 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h2 = math.tanh %m2 {epl.scope = #epl.replicate<devices = 1, name = "s2">} : tensor<16x4xf32>
    %m3 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s3">} ins(%h2, %w3 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h3 = math.tanh %m3 {epl.scope = #epl.replicate<devices = 1, name = "s3">} : tensor<16x4xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%h3 : tensor<16x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module attributes {epl.config = {"pipeline.num_micro_batch" = 8 : i64, "pipeline.strategy" = "Interleaved1F1B", "pipeline.num_virtual_stages" = 2 : i64}} {
  func.func @model(%x: tensor<16x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w0: tensor<4x4xf32> {epl.arg = "param", epl.name = "w0"},
                   %w1: tensor<4x4xf32> {epl.arg = "param", epl.name = "w1"},
                   %w2: tensor<4x4xf32> {epl.arg = "param", epl.name = "w2"},
                   %w3: tensor<4x4xf32> {epl.arg = "param", epl.name = "w3"},
                   %w4: tensor<4x4xf32> {epl.arg = "param", epl.name = "w4"},
                   %w5: tensor<4x4xf32> {epl.arg = "param", epl.name = "w5"},
                   %w6: tensor<4x4xf32> {epl.arg = "param", epl.name = "w6"},
                   %w7: tensor<4x4xf32> {epl.arg = "param", epl.name = "w7"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x4xf32>) -> tensor<16x4xf32>
    %m0 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%x, %w0 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h0 = math.tanh %m0 {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<16x4xf32>
    %m1 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%h0, %w1 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h1 = math.tanh %m1 {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<16x4xf32>
    %m2 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s2">} ins(%h1, %w2 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h2 = math.tanh %m2 {epl.scope = #epl.replicate<devices = 1, name = "s2">} : tensor<16x4xf32>
    %m3 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s3">} ins(%h2, %w3 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h3 = math.tanh %m3 {epl.scope = #epl.replicate<devices = 1, name = "s3">} : tensor<16x4xf32>
    %m4 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s4">} ins(%h3, %w4 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h4 = math.tanh %m4 {epl.scope = #epl.replicate<devices = 1, name = "s4">} : tensor<16x4xf32>
    %m5 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s5">} ins(%h4, %w5 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h5 = math.tanh %m5 {epl.scope = #epl.replicate<devices = 1, name = "s5">} : tensor<16x4xf32>
    %m6 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s6">} ins(%h5, %w6 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h6 = math.tanh %m6 {epl.scope = #epl.replicate<devices = 1, name = "s6">} : tensor<16x4xf32>
    %m7 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s7">} ins(%h6, %w7 : tensor<16x4xf32>, tensor<4x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
    %h7 = math.tanh %m7 {epl.scope = #epl.replicate<devices = 1, name = "s7">} : tensor<16x4xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%h7 : tensor<16x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
