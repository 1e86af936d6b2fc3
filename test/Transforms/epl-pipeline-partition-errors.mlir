// RUN: epl-opt %s --split-input-file --epl-parallelize=devices=2 -verify-diagnostics

// Pipeline stages cannot share a parameter (tied weights across stages):
// said at the op that reads it on the second stage, with a note at the
// first's.
module {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x4xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    // expected-note @+1 {{read here on stage device 0}}
    %a = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "a">} ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    // expected-error @+1 {{epl-pipeline-partition: parameter 'w' is used on stage devices 0 and 1; pipeline stages cannot share a parameter}}
    %b = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "b">} ins(%a, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%b : tensor<8x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Interleaved 1F1B: stages 0 and 2 are both stage device 0's, and they
// cannot share a parameter either (it said that stage 0's weight gradient
// used a value of stage 2 that no schedule had made by then).
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64, "pipeline.strategy" = "Interleaved1F1B", "pipeline.num_virtual_stages" = 2 : i64}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x4xf32> {epl.arg = "param", epl.name = "w"},
                   %v: tensor<4x4xf32> {epl.arg = "param", epl.name = "v"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    // expected-note @+1 {{read here on stage 0}}
    %a = linalg.matmul {epl.stage = #epl.stage<index = 0>} ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %b = linalg.matmul {epl.stage = #epl.stage<index = 1>} ins(%a, %v : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    // expected-error @+1 {{epl-pipeline-partition: parameter 'w' is used on pipeline stages 0 and 2 (virtual stages of stage device 0, pipeline.num_virtual_stages); pipeline stages cannot share a parameter}}
    %c = linalg.matmul {epl.stage = #epl.stage<index = 2>} ins(%b, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %d = math.tanh %c {epl.stage = #epl.stage<index = 3>} : tensor<8x4xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%d : tensor<8x4xf32>) outs(%zs : tensor<f32>) attrs = {epl.stage = #epl.stage<index = 3>} {
    ^bb0(%q: f32, %acc: f32):
      %s = arith.addf %acc, %q : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Megatron's interleaved schedule needs whole groups of micro-batches.
module attributes {epl.config = {"pipeline.num_micro_batch" = 3 : i64, "pipeline.strategy" = "Interleaved1F1B", "pipeline.num_virtual_stages" = 2 : i64}} {
  // expected-error @+1 {{epl-pipeline-partition: interleaved 1F1B needs a number of micro-batches that is a multiple of the 2 stage devices}}
  func.func @model(%x: tensor<6x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x4xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<6x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<6x4xf32>) -> tensor<6x4xf32>
    %a = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "a">} ins(%x, %w : tensor<6x4xf32>, tensor<4x4xf32>) outs(%z : tensor<6x4xf32>) -> tensor<6x4xf32>
    %b = math.tanh %a {epl.scope = #epl.replicate<devices = 1, name = "b">} : tensor<6x4xf32>
    %c = math.tanh %b {epl.scope = #epl.replicate<devices = 1, name = "c">} : tensor<6x4xf32>
    %d = math.tanh %c {epl.scope = #epl.replicate<devices = 1, name = "d">} : tensor<6x4xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%d : tensor<6x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

