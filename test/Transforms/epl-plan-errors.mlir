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

// The devices do not fit the widest scope: said at its first op.
module {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x12xf32> {epl.arg = "param"}) -> tensor<8x12xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x12xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
    // expected-error @+1 {{epl-plan: 4 devices are not divisible by the stage's device count 3 (split(3), replicate(1))}}
    %y = linalg.matmul {epl.scope = #epl.split<devices = 3>} ins(%x, %w : tensor<8x16xf32>, tensor<16x12xf32>) outs(%z : tensor<8x12xf32>) -> tensor<8x12xf32>
    return %y : tensor<8x12xf32>
  }
}

// -----

module {
  // expected-error @+1 {{epl-plan: the batch (dimension 0) of input 'arg0' (6) is not divisible by the 4 devices it is split over}}
  func.func @model(%x: tensor<6x16xf32> {epl.arg = "input"}) -> tensor<6x16xf32> {
    return %x : tensor<6x16xf32>
  }
}

// -----

module attributes {epl.config = {"pipeline.num_micro_batch" = 4 : i64}} {
  // expected-error @+1 {{epl-plan: the batch (dimension 0) of label 'y' (8) is not divisible by 4 devices x 4 micro-batches ("pipeline.num_micro_batch")}}
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "label", epl.name = "y"}) -> tensor<8x16xf32> {
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

// -----

// A stage may only use values of earlier stages: stages are numbered in
// the order the model first uses their names.
module {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"}) -> tensor<8x4xf32> {
    // expected-note @+1 {{stages are numbered in the order the model first uses their scopes: "first" is stage 0 from this op on}}
    %a = math.tanh %x {epl.scope = #epl.replicate<devices = 1, name = "first">} : tensor<8x4xf32>
    // expected-note @+1 {{the value of stage 1 ("second") is made here}}
    %b = math.exp %a {epl.scope = #epl.replicate<devices = 1, name = "second">} : tensor<8x4xf32>
    // expected-error @+1 {{epl-plan: this op of pipeline stage 0 ("first") uses a value of the later stage 1 ("second"); a stage may only use values of earlier stages}}
    %c = arith.addf %a, %b {epl.scope = #epl.replicate<devices = 1, name = "first">} : tensor<8x4xf32>
    return %c : tensor<8x4xf32>
  }
}

// -----

// 4 devices do not hold 3 stages.
module {
  // expected-error @+1 {{epl-plan: 4 devices are not divisible by 3 stage devices x 1 device(s) per stage}}
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"}) -> tensor<8x4xf32> {
    %a = math.tanh %x {epl.scope = #epl.replicate<devices = 1, name = "a">} : tensor<8x4xf32>
    %b = math.exp %a {epl.scope = #epl.replicate<devices = 1, name = "b">} : tensor<8x4xf32>
    %c = math.exp %b {epl.scope = #epl.replicate<devices = 1, name = "c">} : tensor<8x4xf32>
    return %c : tensor<8x4xf32>
  }
}

// -----

// Two stages interleaved two per device are one stage device: no pipeline,
// the schedule would be ignored.
// expected-error @+1 {{epl-plan: "pipeline.num_virtual_stages" = 2 puts all 2 pipeline stages on one stage device, so nothing is pipelined; interleave fewer stages per device (at most 1)}}
module attributes {epl.config = {"pipeline.num_virtual_stages" = 2 : i64, "pipeline.strategy" = "Interleaved1F1B", "pipeline.num_micro_batch" = 2 : i64}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"}) -> tensor<8x4xf32> {
    %a = math.tanh %x {epl.scope = #epl.replicate<devices = 1, name = "a">} : tensor<8x4xf32>
    %b = math.exp %a {epl.scope = #epl.replicate<devices = 1, name = "b">} : tensor<8x4xf32>
    return %b : tensor<8x4xf32>
  }
}

// -----

// Stages use as many devices each, as in EPL.
module {
  // expected-error @+1 {{epl-plan: pipeline stage 0 ("a") uses 1 device(s) but stage 1 ("b") uses 2; every stage must use as many devices}}
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"}) -> tensor<8x4xf32> {
    %a = math.tanh %x {epl.scope = #epl.replicate<devices = 1, name = "a">} : tensor<8x4xf32>
    %b = math.exp %a {epl.scope = #epl.replicate<devices = 2, name = "b">} : tensor<8x4xf32>
    return %b : tensor<8x4xf32>
  }
}

// -----

// Virtual stages are for the interleaved schedule only.
// expected-error @+1 {{epl-plan: "pipeline.num_virtual_stages" = 2 needs "pipeline.strategy" = "Interleaved1F1B", not "PreferBackward"}}
module attributes {epl.config = {"pipeline.num_virtual_stages" = 2 : i64}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"}) -> tensor<8x4xf32> {
    %a = math.tanh %x {epl.scope = #epl.replicate<devices = 1, name = "a">} : tensor<8x4xf32>
    %b = math.exp %a {epl.scope = #epl.replicate<devices = 1, name = "b">} : tensor<8x4xf32>
    return %b : tensor<8x4xf32>
  }
}

// -----

// expected-error @+1 {{epl-plan: 3 pipeline stages are not divisible by "pipeline.num_virtual_stages" = 2}}
module attributes {epl.config = {"pipeline.num_virtual_stages" = 2 : i64, "pipeline.strategy" = "Interleaved1F1B"}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"}) -> tensor<8x4xf32> {
    %a = math.tanh %x {epl.scope = #epl.replicate<devices = 1, name = "a">} : tensor<8x4xf32>
    %b = math.exp %a {epl.scope = #epl.replicate<devices = 1, name = "b">} : tensor<8x4xf32>
    %c = math.exp %b {epl.scope = #epl.replicate<devices = 1, name = "c">} : tensor<8x4xf32>
    return %c : tensor<8x4xf32>
  }
}

// -----

// Each device of a stage cuts its micro-batches from its shard of the batch.
module attributes {epl.config = {"pipeline.num_micro_batch" = 3 : i64}} {
  // expected-error @+1 {{epl-plan: the batch (dimension 0) of input 'arg0' (8) is not divisible by 2 devices x 3 micro-batches ("pipeline.num_micro_batch")}}
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"}) -> tensor<8x4xf32> {
    %a = math.tanh %x {epl.scope = #epl.replicate<devices = 1, name = "a">} : tensor<8x4xf32>
    %b = math.exp %a {epl.scope = #epl.replicate<devices = 1, name = "b">} : tensor<8x4xf32>
    return %b : tensor<8x4xf32>
  }
}

// -----

// A mesh the model brings is the plan's only if it has the plan's axes
// (the seeds name them): an error naming it, not arguments sharded over
// axes it lacks (issue 16).
module {
  // expected-error @+1 {{epl-plan: the model's mesh @mesh does not have the axes the plan for its scopes needs ("data" = 4); remove it and epl-plan makes one}}
  epl.mesh @mesh ["x" = 4]
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"}) -> tensor<8x16xf32> {
    return %x : tensor<8x16xf32>
  }
}

// -----

// A stage index past the devices is an error before anything is sized by
// it (an index of 2^32 once made a vector of that many stages).
module {
  // expected-error @+1 {{epl-plan: 4294967299 pipeline stages (the stage indices reach 4294967298) need more than the 4 devices x 1 virtual stages per device there are}}
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"}) -> tensor<8x4xf32> {
    %a = math.exp %x {epl.stage = #epl.stage<index = 0>} : tensor<8x4xf32>
    %b = math.exp %a {epl.stage = #epl.stage<index = 4294967298>} : tensor<8x4xf32>
    return %b : tensor<8x4xf32>
  }
}

// -----

// A name is one stage's, and a stage has one name (both were taken, the
// trace and messages naming two stages alike).
module {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"}) -> tensor<8x4xf32> {
    %a = math.exp %x {epl.stage = #epl.stage<index = 0, name = "s0">} : tensor<8x4xf32>
    // expected-error @+1 {{epl-plan: stages 0 and 1 are both named "s0"; a name is one stage's}}
    %b = math.exp %a {epl.stage = #epl.stage<index = 1, name = "s0">} : tensor<8x4xf32>
    return %b : tensor<8x4xf32>
  }
}

// -----

module {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"}) -> tensor<8x4xf32> {
    %a = math.exp %x {epl.stage = #epl.stage<index = 0, name = "s0">} : tensor<8x4xf32>
    // expected-error @+1 {{epl-plan: stage 0 is named "s0" and "first"; a stage has one name}}
    %b = math.exp %a {epl.stage = #epl.stage<index = 0, name = "first">} : tensor<8x4xf32>
    %c = math.exp %b {epl.stage = #epl.stage<index = 1>} : tensor<8x4xf32>
    return %c : tensor<8x4xf32>
  }
}

// -----

// Virtual stages of a model without stages would be ignored.
// expected-error @+1 {{epl-plan: "pipeline.num_virtual_stages" = 2 splits pipeline stages, but the model has none (name its scopes, or drop the key)}}
module attributes {epl.config = {"pipeline.num_virtual_stages" = 2 : i64,
                                 "pipeline.strategy" = "Interleaved1F1B"}} {
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

// So would a schedule; one named scope is no pipeline.
// expected-error @+1 {{epl-plan: "pipeline.strategy" = "PreferForward" schedules pipeline stages, but the model has none (name its scopes, or drop the key)}}
module attributes {epl.config = {"pipeline.strategy" = "PreferForward"}} {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x12xf32> {epl.arg = "param"}) -> tensor<8x12xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x12xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
    %y = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "body">} ins(%x, %w : tensor<8x16xf32>, tensor<16x12xf32>) outs(%z : tensor<8x12xf32>) -> tensor<8x12xf32>
    return %y : tensor<8x12xf32>
  }
}

// -----

// A training step already built (epl-training-step run twice).
module {
  // expected-error @+1 {{epl-plan: @model is a training step already (result 1 is epl.result = "param"); epl-plan, epl-training-step and epl-parallelize take the model, which returns its loss: run them once}}
  func.func @model(%x: tensor<4x2xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<2xf32> {epl.arg = "param", epl.name = "w"})
      -> (tensor<f32> {epl.result = "loss"}, tensor<2xf32> {epl.result = "param", epl.name = "w"}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

// replicate(2) and split(2) on separate devices: said at the split scope,
// with a note at the replicate scope.
module {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x12xf32> {epl.arg = "param"},
                   %v: tensor<12x4xf32> {epl.arg = "param"}) -> tensor<8x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x12xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
    // expected-note @+1 {{the replicate scope}}
    %y = linalg.matmul {epl.scope = #epl.replicate<devices = 2>} ins(%x, %w : tensor<8x16xf32>, tensor<16x12xf32>) outs(%z : tensor<8x12xf32>) -> tensor<8x12xf32>
    %e2 = tensor.empty() : tensor<8x4xf32>
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
    // expected-error @+1 {{epl-plan: replicate(2) and split(2) on different devices is not planned yet; set "cluster.colocate_split_and_replicate" to share them}}
    %o = linalg.matmul {epl.scope = #epl.split<devices = 2>} ins(%y, %v : tensor<8x12xf32>, tensor<12x4xf32>) outs(%z2 : tensor<8x4xf32>) -> tensor<8x4xf32>
    return %o : tensor<8x4xf32>
  }
}

// -----

// Colocated, they use as many devices.
module attributes {epl.config = {"cluster.colocate_split_and_replicate" = true}} {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w: tensor<16x12xf32> {epl.arg = "param"},
                   %v: tensor<12x4xf32> {epl.arg = "param"}) -> tensor<8x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x12xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
    // expected-note @+1 {{the replicate scope}}
    %y = linalg.matmul {epl.scope = #epl.replicate<devices = 4>} ins(%x, %w : tensor<8x16xf32>, tensor<16x12xf32>) outs(%z : tensor<8x12xf32>) -> tensor<8x12xf32>
    %e2 = tensor.empty() : tensor<8x4xf32>
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
    // expected-error @+1 {{epl-plan: colocated replicate(4) and split(2) must use as many devices}}
    %o = linalg.matmul {epl.scope = #epl.split<devices = 2>} ins(%y, %v : tensor<8x12xf32>, tensor<12x4xf32>) outs(%z2 : tensor<8x4xf32>) -> tensor<8x4xf32>
    return %o : tensor<8x4xf32>
  }
}
