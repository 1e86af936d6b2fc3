// RUN: epl-opt %s --split-input-file --epl-plan=devices=2 -verify-diagnostics
// Keys the plan has nothing to act on are said, not ignored.

// expected-warning @+1 {{epl-plan: "cluster.colocate_split_and_replicate" has no split part to share devices with; it changes nothing in this plan}}
module attributes {epl.config = {"cluster.colocate_split_and_replicate" = true}} {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x12xf32> {epl.arg = "param"}) -> tensor<8x12xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x12xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
    %y = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%x, %w : tensor<8x16xf32>, tensor<16x12xf32>) outs(%z : tensor<8x12xf32>) -> tensor<8x12xf32>
    return %y : tensor<8x12xf32>
  }
}

// -----

// Tensor parallelism alone reduces no gradients over the batch.
// expected-warning @+1 {{epl-plan: "communication.fp16" compresses data-parallel gradient reductions, and this plan ("tensor" = 2) has none; gradients are not sent}}
module attributes {epl.config = {"communication.fp16" = true}} {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x12xf32> {epl.arg = "param"}) -> tensor<8x12xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x12xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
    %y = linalg.matmul {epl.scope = #epl.split<devices = 2>} ins(%x, %w : tensor<8x16xf32>, tensor<16x12xf32>) outs(%z : tensor<8x12xf32>) -> tensor<8x12xf32>
    return %y : tensor<8x12xf32>
  }
}

// -----

// expected-warning @+1 {{epl-plan: "communication.max_splits" buckets data-parallel gradient reductions, and this plan ("tensor" = 2) has none; gradients are not sent}}
module attributes {epl.config = {"communication.max_splits" = 3 : i64}} {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x12xf32> {epl.arg = "param"}) -> tensor<8x12xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x12xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
    %y = linalg.matmul {epl.scope = #epl.split<devices = 2>} ins(%x, %w : tensor<8x16xf32>, tensor<16x12xf32>) outs(%z : tensor<8x12xf32>) -> tensor<8x12xf32>
    return %y : tensor<8x12xf32>
  }
}

// -----

// Data parallel: fp16 has the gradients to compress, nothing is said.
module attributes {epl.config = {"communication.fp16" = true, "communication.max_splits" = 3 : i64}} {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x12xf32> {epl.arg = "param"}) -> tensor<8x12xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x12xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
    %y = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%x, %w : tensor<8x16xf32>, tensor<16x12xf32>) outs(%z : tensor<8x12xf32>) -> tensor<8x12xf32>
    return %y : tensor<8x12xf32>
  }
}
