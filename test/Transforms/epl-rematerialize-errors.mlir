// RUN: epl-opt %s --split-input-file --verify-diagnostics --epl-autodiff --epl-rematerialize

// A budget below the least any plan needs names both (the least is two
// kept and a run of two, 2048 bytes of the 3072 the step holds).
#id2 = affine_map<(i, j) -> (i, j)>
#red = affine_map<(i, j) -> ()>
module attributes {epl.config = {"gradient_checkpoint.type" = "auto",
                                 "gradient_checkpoint.memory_budget" = 0.5 : f64}} {
  // expected-error @+1 {{epl-rematerialize: gradient_checkpoint.memory_budget of 1536 bytes (0.5 of 3072) is below the least any plan needs, 2048 bytes of activations}}
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input", epl.name = "x"},
                   %w1: tensor<16x16xf32> {epl.arg = "param", epl.name = "w1"},
                   %w2: tensor<16x16xf32> {epl.arg = "param", epl.name = "w2"},
                   %w3: tensor<16x16xf32> {epl.arg = "param", epl.name = "w3"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %h1 = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a1 = math.tanh %h1 : tensor<8x16xf32>
    %h2 = linalg.matmul ins(%a1, %w2 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a2 = math.tanh %h2 : tensor<8x16xf32>
    %h3 = linalg.matmul ins(%a2, %w3 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a3 = math.tanh %h3 : tensor<8x16xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id2, #red], iterator_types = ["reduction", "reduction"]}
        ins(%a3 : tensor<8x16xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %sq = arith.mulf %v, %v : f32
      %t = arith.addf %acc, %sq : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// "collection" with nothing marked.
// expected-error @+1 {{epl-rematerialize: gradient_checkpoint.type = "collection" but no tensor is marked to keep: mark ops with epl.checkpoint (frontend: epl.checkpoint(tensor)), or use "auto"}}
module attributes {epl.config = {"gradient_checkpoint.type" = "collection"}} {
  func.func @model(%x: tensor<8xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<8xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %y = arith.mulf %x, %w : tensor<8xf32>
    %zero = arith.constant dense<0.0> : tensor<f32>
    %l = linalg.reduce ins(%y : tensor<8xf32>) outs(%zero : tensor<f32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %s = arith.addf %a, %b : f32
        linalg.yield %s : f32
      }
    return %l : tensor<f32>
  }
}

// -----

// A budget is for "auto".
// expected-error @+1 {{epl-rematerialize: gradient_checkpoint.memory_budget is for gradient_checkpoint.type = "auto", not "collection"}}
module attributes {epl.config = {"gradient_checkpoint.type" = "collection",
                                 "gradient_checkpoint.memory_budget" = 4096.0 : f64}} {
  func.func @model(%x: tensor<8xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<8xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %y = arith.mulf %x, %w {epl.checkpoint} : tensor<8xf32>
    %zero = arith.constant dense<0.0> : tensor<f32>
    %l = linalg.reduce ins(%y : tensor<8xf32>) outs(%zero : tensor<f32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %s = arith.addf %a, %b : f32
        linalg.yield %s : f32
      }
    return %l : tensor<f32>
  }
}

// -----

// An unknown type is the config verifier's error, listing the valid ones.
// expected-error @+1 {{EPL config key "gradient_checkpoint.type" expects one of "", "collection", "auto", got "selective"}}
module attributes {epl.config = {"gradient_checkpoint.type" = "selective"}} {
}

// -----

// check_gradients without checkpointing would be read nowhere.
// expected-error @+1 {{epl-rematerialize: gradient_checkpoint.check_gradients needs gradient_checkpoint.type ("collection" or "auto"): without checkpointing there is nothing to check}}
module attributes {epl.config = {"gradient_checkpoint.check_gradients" = true}} {
  func.func @model(%x: tensor<8xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<8xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %y = arith.mulf %x, %w : tensor<8xf32>
    %zero = arith.constant dense<0.0> : tensor<f32>
    %l = linalg.reduce ins(%y : tensor<8xf32>) outs(%zero : tensor<f32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %s = arith.addf %a, %b : f32
        linalg.yield %s : f32
      }
    return %l : tensor<f32>
  }
}

// -----

// Marks with checkpointing off are not read: said, the step built as without them.
#id2 = affine_map<(i, j) -> (i, j)>
#red = affine_map<(i, j) -> ()>
module {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input", epl.name = "x"},
                   %w1: tensor<16x16xf32> {epl.arg = "param", epl.name = "w1"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %h1 = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    // expected-warning @+1 {{epl-rematerialize: epl.checkpoint marks this tensor to keep, which only gradient_checkpoint.type = "collection" reads; checkpointing is off (no gradient_checkpoint.type), so the marks are not read}}
    %a1 = math.tanh %h1 {epl.checkpoint} : tensor<8x16xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id2, #red], iterator_types = ["reduction", "reduction"]}
        ins(%a1 : tensor<8x16xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %sq = arith.mulf %v, %v : f32
      %t = arith.addf %acc, %sq : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
