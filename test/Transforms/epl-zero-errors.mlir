// On one device epl-plan also warns that fp16 has no reduction to act on;
// the errors are what this file checks.
// RUN: epl-opt %s --split-input-file --epl-training-step -verify-diagnostics=only-expected
// RUN: epl-opt %s --split-input-file --epl-parallelize="devices=2" -verify-diagnostics

// ZeRO shards over data-parallel workers: one device has none (EPL needs
// at least 2 workers). Under epl-parallelize, 2 devices of a split model
// are 1 data-parallel worker.
#id = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
// expected-error @+1 {{epl-zero: zero.level = "v0": ZeRO needs at least 2 data-parallel workers (EPL: >= 2 workers); @model has 1}}
module attributes {epl.config = {"zero.level" = "v0"}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x2xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
    %y = linalg.matmul {epl.scope = #epl.split<devices = 2>} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
        ins(%y : tensor<8x2xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// ZeRO reduce-scatters each gradient in its own type: gradients in fp16
// (all-reduce buckets) would be ignored.
#id = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
// expected-error @+1 {{epl-zero: communication.fp16 is not implemented with zero.level = "v1" (ZeRO reduce-scatters each gradient on its own, in its own type, not in buckets); turn one of them off}}
module attributes {epl.config = {"zero.level" = "v1", "communication.fp16" = true}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x2xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
    %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
        ins(%y : tensor<8x2xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Nor in buckets: communication.max_splits would be ignored.
#id = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
// expected-error @+1 {{epl-zero: communication.max_splits is not implemented with zero.level = "v0" (ZeRO reduce-scatters each gradient on its own, in its own type, not in buckets); remove the key}}
module attributes {epl.config = {"zero.level" = "v0", "communication.max_splits" = 1 : i64}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x2xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
    %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
        ins(%y : tensor<8x2xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
