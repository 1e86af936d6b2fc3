// RUN: epl-opt %s --epl-plan="devices=4" --split-input-file -verify-diagnostics

module {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x10xf32> {epl.arg = "param", epl.name = "classifier"}) -> tensor<8x10xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x10xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x10xf32>) -> tensor<8x10xf32>
    // expected-error @+1 {{split(4) of 'linalg.matmul' does not divide dimension 1 of size 10 of weight 'classifier'}}
    %y = linalg.matmul {epl.scope = #epl.split<devices = 4>} ins(%x, %w : tensor<8x16xf32>, tensor<16x10xf32>) outs(%z : tensor<8x10xf32>) -> tensor<8x10xf32>
    return %y : tensor<8x10xf32>
  }
}

// -----

module {
  // expected-error @+1 {{epl-plan: 4 devices are not divisible by the stage's device count 3 (split(3), replicate(1))}}
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x12xf32> {epl.arg = "param"}) -> tensor<8x12xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x12xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
    %y = linalg.matmul {epl.scope = #epl.split<devices = 3>} ins(%x, %w : tensor<8x16xf32>, tensor<16x12xf32>) outs(%z : tensor<8x12xf32>) -> tensor<8x12xf32>
    return %y : tensor<8x12xf32>
  }
}

// -----

module {
  // expected-error @+1 {{epl-plan: the batch of argument 0 (6) is not divisible by the 4 devices it is split over}}
  func.func @model(%x: tensor<6x16xf32> {epl.arg = "input"}) -> tensor<6x16xf32> {
    return %x : tensor<6x16xf32>
  }
}

// -----

module {
  // expected-error @+1 {{epl-plan: 2 pipeline stages; pipeline parallelism is not planned yet}}
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"}) -> tensor<8x16xf32> {
    %a = arith.addf %x, %x {epl.scope = #epl.replicate<devices = 1, name = "stage_0">} : tensor<8x16xf32>
    %b = arith.addf %a, %a {epl.scope = #epl.replicate<devices = 1, name = "stage_1">} : tensor<8x16xf32>
    return %b : tensor<8x16xf32>
  }
}

// -----

module attributes {epl.config = {"pipeline.num_micro_batch" = 4 : i64}} {
  // expected-error @+1 {{epl-plan: the batch of argument 0 (8) is not divisible by 4 devices x 4 micro-batches ("pipeline.num_micro_batch")}}
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"}) -> tensor<8x16xf32> {
    return %x : tensor<8x16xf32>
  }
}

// -----

// A split scope with nothing to split would silently run whole on every
// device.
module {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"}) -> tensor<8x16xf32> {
    // expected-error @+1 {{epl-plan: this split scope splits nothing: no contraction in it multiplies by a parameter (directly or through a transpose), so every device would compute all of it}}
    %a = arith.addf %x, %x {epl.scope = #epl.split<devices = 4>} : tensor<8x16xf32>
    return %a : tensor<8x16xf32>
  }
}
