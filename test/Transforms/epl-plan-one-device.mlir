// RUN: epl-opt %s --split-input-file --epl-training-step -verify-diagnostics
// Fewer than one device is an error (it was taken for one).
// RUN: not epl-opt %s --split-input-file --epl-training-step=devices=0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: epl-plan: devices must be at least 1, got 0
// A model means the same on any number of devices: on one, where nothing is
// partitioned, epl-training-step's epl-plan still refuses pipeline keys
// that do not fit the model's stages (epl-plan-errors.mlir has them on 4).

// expected-error @+1 {{epl-plan: "pipeline.strategy" = "PreferForward" schedules pipeline stages, but the model has none (name its scopes, or drop the key)}}
module attributes {epl.config = {"pipeline.strategy" = "PreferForward"}} {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x12xf32> {epl.arg = "param"}) -> tensor<8x12xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x12xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
    %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x12xf32>) outs(%z : tensor<8x12xf32>) -> tensor<8x12xf32>
    return %y : tensor<8x12xf32>
  }
}

// -----

// With stages, one device runs them in sequence under any schedule.
module attributes {epl.config = {"pipeline.strategy" = "PreferForward", "pipeline.num_micro_batch" = 2 : i64}} {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x16xf32> {epl.arg = "param"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "a">} ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %b = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "b">} ins(%a, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
        ins(%b : tensor<8x16xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Virtual stages need the interleaved schedule, on one device as on many.
// expected-error @+1 {{epl-plan: "pipeline.num_virtual_stages" = 2 needs "pipeline.strategy" = "Interleaved1F1B", not "PreferBackward"}}
module attributes {epl.config = {"pipeline.num_virtual_stages" = 2 : i64}} {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x16xf32> {epl.arg = "param"}) -> tensor<8x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "a">} ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %b = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "b">} ins(%a, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    return %b : tensor<8x16xf32>
  }
}

// -----

// ... and must divide the stages.
// expected-error @+1 {{epl-plan: 3 pipeline stages are not divisible by "pipeline.num_virtual_stages" = 2}}
module attributes {epl.config = {"pipeline.num_virtual_stages" = 2 : i64, "pipeline.strategy" = "Interleaved1F1B"}} {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x16xf32> {epl.arg = "param"}) -> tensor<8x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "a">} ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %b = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "b">} ins(%a, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %c = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "c">} ins(%b, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    return %c : tensor<8x16xf32>
  }
}

// -----

// One device reduces no gradients: the communication keys that tune those
// reductions are said to do nothing; nor has colocation splits to share
// devices with.
// expected-warning @+3 {{epl-plan: "cluster.colocate_split_and_replicate" has no split part to share devices with; it changes nothing in this plan}}
// expected-warning @+2 {{epl-plan: "communication.fp16" compresses data-parallel gradient reductions, and this plan (one device) has none; gradients are not sent}}
// expected-warning @+1 {{epl-plan: "communication.max_splits" buckets data-parallel gradient reductions, and this plan (one device) has none; gradients are not sent}}
module attributes {epl.config = {"communication.fp16" = true, "communication.max_splits" = 2 : i64,
                                 "cluster.colocate_split_and_replicate" = true}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"},
                   %w: tensor<4xf32> {epl.arg = "param"}) -> (tensor<f32> {epl.result = "loss"}) {
    %e = tensor.empty() : tensor<f32>
    %zero = arith.constant 0.0 : f32
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x, %w : tensor<8x4xf32>, tensor<4xf32>) outs(%z : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A split that does not divide its weight is refused here too (it trained
// on one device and failed on the devices it asks for).
module {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x10xf32> {epl.arg = "param", epl.name = "classifier"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x10xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x10xf32>) -> tensor<8x10xf32>
    // expected-error @+2 {{split(4) of 'linalg.matmul' does not divide dimension 1 of size 10 of weight 'classifier'}}
    // expected-note @+1 {{found planning the model for the 4 devices its stages and splits ask for (this run has one)}}
    %y = linalg.matmul {epl.scope = #epl.split<devices = 4>} ins(%x, %w : tensor<8x16xf32>, tensor<16x10xf32>) outs(%z : tensor<8x10xf32>) -> tensor<8x10xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.reduce ins(%y : tensor<8x10xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
      (%v: f32, %acc: f32) {
        %s = arith.addf %v, %acc : f32
        linalg.yield %s : f32
      }
    return %l : tensor<f32>
  }
}

// -----

// A stage reading a later stage's value is refused here too (it ran, its
// stages in sequence, and failed only on more devices). The one-device
// step itself carries no stages: the plan for the devices the model asks
// for is made on a copy of the module, whose warnings are not this plan's.
module {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"}) -> tensor<f32> {
    // expected-note @+1 {{stages are numbered in the order the model first uses their scopes}}
    %a = math.tanh %x {epl.scope = #epl.replicate<devices = 1, name = "first">} : tensor<8x4xf32>
    // expected-note @+1 {{the value of stage 1 ("second") is made here}}
    %b = math.exp %a {epl.scope = #epl.replicate<devices = 1, name = "second">} : tensor<8x4xf32>
    // expected-error @+2 {{epl-plan: this op of pipeline stage 0 ("first") uses a value of the later stage 1 ("second"); a stage may only use values of earlier stages}}
    // expected-note @+1 {{found planning the model for the 2 devices its stages and splits ask for (this run has one)}}
    %c = arith.addf %a, %b {epl.scope = #epl.replicate<devices = 1, name = "first">} : tensor<8x4xf32>
    %e = tensor.empty() : tensor<f32>
    %zero = arith.constant 0.0 : f32
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %l = linalg.reduce ins(%c : tensor<8x4xf32>) outs(%z : tensor<f32>) dimensions = [0, 1]
      (%v: f32, %acc: f32) {
        %s = arith.addf %v, %acc : f32
        linalg.yield %s : f32
      }
    return %l : tensor<f32>
  }
}

// -----

// What depends on the devices a run has is not asked of one device: a
// batch of 3 under two replicate(2) stages, replicate and split without
// colocation (not planned yet on several), a split scope of element-wise
// ops only (which splits nothing there). Each runs here as written.
module attributes {epl.config = {"pipeline.num_micro_batch" = 1 : i64}} {
  func.func @model(%x: tensor<3x4xf32> {epl.arg = "input"},
                   %w: tensor<4x4xf32> {epl.arg = "param"}) -> tensor<f32> {
    %a = math.tanh %x {epl.scope = #epl.replicate<devices = 2, name = "first">} : tensor<3x4xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3x4xf32>
    %z = linalg.fill {epl.scope = #epl.replicate<devices = 2, name = "second">} ins(%zero : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
    %b = linalg.matmul {epl.scope = #epl.replicate<devices = 2, name = "second">} ins(%a, %w : tensor<3x4xf32>, tensor<4x4xf32>) outs(%z : tensor<3x4xf32>) -> tensor<3x4xf32>
    %zs = arith.constant 0.0 : f32
    %es = tensor.empty() : tensor<f32>
    %fs = linalg.fill ins(%zs : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.reduce ins(%b : tensor<3x4xf32>) outs(%fs : tensor<f32>) dimensions = [0, 1]
      (%v: f32, %acc: f32) {
        %s = arith.addf %v, %acc : f32
        linalg.yield %s : f32
      }
    return %l : tensor<f32>
  }
}

// -----

module {
  func.func @model(%x: tensor<3x4xf32> {epl.arg = "input"},
                   %w: tensor<3x4xf32> {epl.arg = "param"}) -> tensor<f32> {
    %a = math.tanh %x {epl.scope = #epl.replicate<devices = 2>} : tensor<3x4xf32>
    %m = arith.mulf %a, %w {epl.scope = #epl.replicate<devices = 2>} : tensor<3x4xf32>
    %b = math.exp %m {epl.scope = #epl.split<devices = 2>} : tensor<3x4xf32>
    %zs = arith.constant 0.0 : f32
    %es = tensor.empty() : tensor<f32>
    %fs = linalg.fill ins(%zs : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.reduce ins(%b : tensor<3x4xf32>) outs(%fs : tensor<f32>) dimensions = [0, 1]
      (%v: f32, %acc: f32) {
        %s = arith.addf %v, %acc : f32
        linalg.yield %s : f32
      }
    return %l : tensor<f32>
  }
}
