// RUN: epl-opt %s --epl-apply-optimizer --split-input-file | FileCheck %s

// Each gradient result becomes its parameter's update, with PyTorch's
// arithmetic; the optimizer's state becomes arguments and results.

// Momentum SGD, PyTorch's: buf = buf * momentum + g; w = w + (-lr) * buf.
module attributes {epl.config = {"optimizer.type" = "momentum", "optimizer.lr" = 0.5 : f64}} {
  // CHECK-LABEL: func.func @momentum
  // CHECK-SAME: %[[G:[a-z0-9_]+]]: tensor<4x3xf32> {epl.arg = "input"}
  // CHECK-SAME: %[[W:[a-z0-9_]+]]: tensor<4x3xf32> {epl.arg = "param", epl.name = "w"}
  // CHECK-SAME: %[[M:[a-z0-9_]+]]: tensor<4x3xf32> {epl.arg = "opt_state", epl.name = "w.momentum_buffer"}
  // CHECK-SAME: -> (tensor<f32> {epl.result = "loss"},
  // CHECK-SAME: tensor<4x3xf32> {epl.name = "w", epl.result = "param"},
  // CHECK-SAME: tensor<4x3xf32> {epl.name = "w.momentum_buffer", epl.result = "opt_state"})
  // CHECK: %[[UPD:.*]]:2 = linalg.generic {{.*}} ins(%[[W]], %[[G]], %[[M]] : {{.*}}) outs({{.*}}) attrs = {{.*}}epl.phase = #epl.phase<optimizer>}
  // CHECK: arith.constant 0.899999976 : f32
  // CHECK: arith.constant -5.000000e-01 : f32
  // CHECK: return %{{.*}}, %[[UPD]]#0, %[[UPD]]#1
  func.func @momentum(%g: tensor<4x3xf32> {epl.arg = "input"},
                      %w: tensor<4x3xf32> {epl.arg = "param", epl.name = "w"})
      -> (tensor<f32> {epl.result = "loss"},
          tensor<4x3xf32> {epl.result = "grad", epl.name = "w"}) {
    // The loss reads w (a step always does: else nothing updates it).
    %c0 = arith.constant 0 : index
    %w0 = tensor.extract %w[%c0, %c0] : tensor<4x3xf32>
    %l = tensor.from_elements %w0 : tensor<f32>
    return %l, %g : tensor<f32>, tensor<4x3xf32>
  }
}

// -----

// Plain SGD keeps no state; weight decay is folded into the gradient.
module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 0.25 : f64, "optimizer.weight_decay" = 0.5 : f64}} {
  // CHECK-LABEL: func.func @sgd
  // CHECK-SAME: %[[G:[a-z0-9_]+]]: tensor<3xf32> {epl.arg = "input"}, %[[W:[a-z0-9_]+]]: tensor<3xf32> {epl.arg = "param", epl.name = "w"})
  // CHECK-SAME: -> (tensor<f32> {epl.result = "loss"}, tensor<3xf32> {epl.name = "w", epl.result = "param"})
  // CHECK-NOT: opt_state
  // CHECK: %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[G]] : {{.*}}) outs({{.*}}) attrs = {{.*}}epl.phase = #epl.phase<optimizer>}
  // CHECK: arith.constant 5.000000e-01 : f32
  // CHECK: arith.constant -2.500000e-01 : f32
  // CHECK: return %{{.*}}, %[[NEW]]
  func.func @sgd(%g: tensor<3xf32> {epl.arg = "input"},
                 %w: tensor<3xf32> {epl.arg = "param", epl.name = "w"})
      -> (tensor<f32> {epl.result = "loss"},
          tensor<3xf32> {epl.result = "grad", epl.name = "w"}) {
    // The loss reads w (a step always does: else nothing updates it).
    %c0 = arith.constant 0 : index
    %w0 = tensor.extract %w[%c0] : tensor<3xf32>
    %l = tensor.from_elements %w0 : tensor<f32>
    return %l, %g : tensor<f32>, tensor<3xf32>
  }
}

// -----

// Adam keeps two moments per parameter and a step counter: arguments and
// results in the order runners and checkpoints have always seen (the
// parameters, then their states, then the counter).
module attributes {epl.config = {"optimizer.type" = "adam"}} {
  // CHECK-LABEL: func.func @adam
  // CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<3xf32> {epl.arg = "param", epl.name = "a"}
  // CHECK-SAME: %[[B:[a-z0-9_]+]]: tensor<2xf32> {epl.arg = "param"}
  // CHECK-SAME: %[[STEP:[a-z0-9_]+]]: tensor<i64> {epl.arg = "opt_state", epl.name = "optimizer.step"}
  // CHECK-SAME: %{{.*}}: tensor<3xf32> {epl.arg = "opt_state", epl.name = "a.exp_avg"}
  // CHECK-SAME: %{{.*}}: tensor<3xf32> {epl.arg = "opt_state", epl.name = "a.exp_avg_sq"}
  // CHECK-SAME: %{{.*}}: tensor<2xf32> {epl.arg = "opt_state", epl.name = "arg1.exp_avg"}
  // CHECK-SAME: %{{.*}}: tensor<2xf32> {epl.arg = "opt_state", epl.name = "arg1.exp_avg_sq"}
  // CHECK-SAME: -> (tensor<f32> {epl.result = "loss"},
  // CHECK-SAME: tensor<3xf32> {epl.name = "a", epl.result = "param"},
  // CHECK-SAME: tensor<2xf32> {epl.name = "arg1", epl.result = "param"},
  // CHECK-SAME: tensor<3xf32> {epl.name = "a.exp_avg", epl.result = "opt_state"},
  // CHECK-SAME: tensor<3xf32> {epl.name = "a.exp_avg_sq", epl.result = "opt_state"},
  // CHECK-SAME: tensor<2xf32> {epl.name = "arg1.exp_avg", epl.result = "opt_state"},
  // CHECK-SAME: tensor<2xf32> {epl.name = "arg1.exp_avg_sq", epl.result = "opt_state"},
  // CHECK-SAME: tensor<i64> {epl.name = "optimizer.step", epl.result = "opt_state"})
  // The bias corrections once per step (in double, rounded once), then one
  // loop over each parameter for all of Adam's element-wise arithmetic.
  // CHECK: %[[CA:.*]]:2 = linalg.generic {{.*}} iterator_types = []} ins(%[[STEP]] : tensor<i64>)
  // CHECK: math.powf {{.*}} : f64
  // CHECK: math.sqrt {{.*}} : f64
  // CHECK: %[[UA:.*]]:3 = linalg.generic {{.*}} ins(%[[A]], %{{.*}}, %{{.*}}, %{{.*}}, %[[CA]]#0, %[[CA]]#1 :
  // CHECK-NOT: math.powf
  // CHECK: math.sqrt {{.*}} : f32
  // CHECK-NOT: math.powf
  // CHECK: } -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  // CHECK: %[[CB:.*]]:2 = linalg.generic {{.*}} ins(%[[STEP]] : tensor<i64>)
  // CHECK: %[[UB:.*]]:3 = linalg.generic {{.*}} ins(%[[B]], %{{.*}}, %{{.*}}, %{{.*}}, %[[CB]]#0, %[[CB]]#1 :
  // CHECK: %[[NEXT:.*]] = linalg.generic {{.*}} ins(%[[STEP]] : tensor<i64>)
  // CHECK: arith.addi
  // CHECK: return %{{.*}}, %[[UA]]#0, %[[UB]]#0, %[[UA]]#1, %[[UA]]#2, %[[UB]]#1, %[[UB]]#2, %[[NEXT]]
  func.func @adam(%a: tensor<3xf32> {epl.arg = "param", epl.name = "a"},
                  %b: tensor<2xf32> {epl.arg = "param"})
      -> (tensor<f32> {epl.result = "loss"},
          tensor<3xf32> {epl.result = "grad", epl.name = "a"},
          tensor<2xf32> {epl.result = "grad", epl.name = "arg1"}) {
    %l = tensor.empty() : tensor<f32>
    return %l, %a, %b : tensor<f32>, tensor<3xf32>, tensor<2xf32>
  }
}

// -----

// AdamW decays the parameter itself, before the Adam step:
// p * (1 - lr * wd) = p * (1 - 0.1 * 0.5).
module attributes {epl.config = {"optimizer.type" = "adamw", "optimizer.lr" = 0.1 : f64, "optimizer.weight_decay" = 0.5 : f64}} {
  // CHECK-LABEL: func.func @adamw
  // CHECK-SAME: {epl.arg = "opt_state", epl.name = "optimizer.step"}
  // CHECK-SAME: {epl.arg = "opt_state", epl.name = "w.exp_avg"}
  // CHECK-SAME: {epl.arg = "opt_state", epl.name = "w.exp_avg_sq"}
  // CHECK: math.powf
  // CHECK: arith.constant 0.949999988 : f32
  func.func @adamw(%w: tensor<3xf32> {epl.arg = "param", epl.name = "w"})
      -> (tensor<f32> {epl.result = "loss"},
          tensor<3xf32> {epl.result = "grad", epl.name = "w"}) {
    %l = tensor.empty() : tensor<f32>
    return %l, %w : tensor<f32>, tensor<3xf32>
  }
}

// -----

// After parallelization the update runs on each device's shard: the state
// is laid out like its parameter, the step counter is replicated.
module attributes {epl.config = {"optimizer.type" = "adam"}} {
  epl.mesh @mesh ["tensor" = 2]
  // CHECK-LABEL: func.func @sharded
  // CHECK-SAME: %{{.*}}: tensor<2x3xf32> {epl.arg = "param", epl.name = "w", epl.shard = #epl.sharding<@mesh, {{\[\[}}"tensor"], []]>}
  // CHECK-SAME: %{{.*}}: tensor<i64> {epl.arg = "opt_state", epl.name = "optimizer.step", epl.shard = #epl.sharding<@mesh, []>}
  // CHECK-SAME: %{{.*}}: tensor<2x3xf32> {epl.arg = "opt_state", epl.name = "w.exp_avg", epl.shard = #epl.sharding<@mesh, {{\[\[}}"tensor"], []]>}
  // CHECK-SAME: %{{.*}}: tensor<2x3xf32> {epl.arg = "opt_state", epl.name = "w.exp_avg_sq", epl.shard = #epl.sharding<@mesh, {{\[\[}}"tensor"], []]>}
  // CHECK-SAME: tensor<2x3xf32> {epl.grad_shard = #epl.sharding<@mesh, {{\[\[}}"tensor"], []]>, epl.name = "w", epl.result = "param", epl.shard = #epl.sharding<@mesh, {{\[\[}}"tensor"], []]>}
  // CHECK-SAME: tensor<2x3xf32> {epl.name = "w.exp_avg", epl.result = "opt_state", epl.shard = #epl.sharding<@mesh, {{\[\[}}"tensor"], []]>}
  // CHECK-SAME: tensor<2x3xf32> {epl.name = "w.exp_avg_sq", epl.result = "opt_state", epl.shard = #epl.sharding<@mesh, {{\[\[}}"tensor"], []]>}
  // CHECK-SAME: tensor<i64> {epl.name = "optimizer.step", epl.result = "opt_state", epl.shard = #epl.sharding<@mesh, []>}
  func.func @sharded(%w: tensor<2x3xf32> {epl.arg = "param", epl.name = "w", epl.shard = #epl.sharding<@mesh, [["tensor"], []]>})
      -> (tensor<f32> {epl.result = "loss", epl.shard = #epl.sharding<@mesh, []>},
          tensor<2x3xf32> {epl.result = "grad", epl.name = "w", epl.shard = #epl.sharding<@mesh, [["tensor"], []]>}) {
    %l = tensor.empty() : tensor<f32>
    return %l, %w : tensor<f32>, tensor<2x3xf32>
  }
}

// -----

// A model without parameters: nothing to update.
module attributes {epl.config = {"optimizer.type" = "momentum"}} {
  // CHECK-LABEL: func.func @constant(%{{.*}}: tensor<f32> {epl.arg = "input"}) -> (tensor<f32> {epl.result = "loss"})
  // CHECK-NOT: opt_state
  // CHECK: return
  func.func @constant(%x: tensor<f32> {epl.arg = "input"}) -> (tensor<f32> {epl.result = "loss"}) {
    return %x : tensor<f32>
  }
}

// -----

// optimizer.num_apply_group = 2: the updates in 2 groups of about equal
// bytes, consecutive in the order the gradients are made (c, a, b: {c, a}
// and {b}); each group right after its last gradient, in argument order;
// the signature does not change.
module attributes {epl.config = {"optimizer.num_apply_group" = 2 : i64}} {
  // CHECK-LABEL: func.func @groups
  // CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<2xf32> {{.*}}, %[[B:[a-z0-9]+]]: tensor<8xf32> {{.*}}, %[[C:[a-z0-9]+]]: tensor<6xf32>
  // CHECK: %[[GC:.*]] = linalg.add ins(%[[C]], %[[C]] :
  // CHECK: %[[GA:.*]] = linalg.add ins(%[[A]], %[[A]] :
  // CHECK: %[[NA:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[GA]] :
  // CHECK: %[[NC:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[GC]] :
  // CHECK: %[[GB:.*]] = linalg.add ins(%[[B]], %[[B]] :
  // CHECK: %[[NB:.*]] = linalg.generic {{.*}} ins(%[[B]], %[[GB]] :
  // CHECK: return %{{.*}}, %[[NA]], %[[NB]], %[[NC]]
  func.func @groups(%a: tensor<2xf32> {epl.arg = "param", epl.name = "a"},
                    %b: tensor<8xf32> {epl.arg = "param", epl.name = "b"},
                    %c: tensor<6xf32> {epl.arg = "param", epl.name = "c"})
      -> (tensor<f32> {epl.result = "loss"},
          tensor<2xf32> {epl.result = "grad", epl.name = "a"},
          tensor<8xf32> {epl.result = "grad", epl.name = "b"},
          tensor<6xf32> {epl.result = "grad", epl.name = "c"}) {
    %l = tensor.empty() : tensor<f32>
    %ec = tensor.empty() : tensor<6xf32>
    %gc = linalg.add ins(%c, %c : tensor<6xf32>, tensor<6xf32>) outs(%ec : tensor<6xf32>) -> tensor<6xf32>
    %ea = tensor.empty() : tensor<2xf32>
    %ga = linalg.add ins(%a, %a : tensor<2xf32>, tensor<2xf32>) outs(%ea : tensor<2xf32>) -> tensor<2xf32>
    %eb = tensor.empty() : tensor<8xf32>
    %gb = linalg.add ins(%b, %b : tensor<8xf32>, tensor<8xf32>) outs(%eb : tensor<8xf32>) -> tensor<8xf32>
    return %l, %ga, %gb, %gc : tensor<f32>, tensor<2xf32>, tensor<8xf32>, tensor<6xf32>
  }
}

// -----

// More groups than updates (here 2^32, found by test/fuzz/mutate.py: it
// used to ask a vector for 2^32 entries and abort) are one group each.
module attributes {epl.config = {"optimizer.num_apply_group" = 4294967296 : i64}} {
  // CHECK-LABEL: func.func @many_groups
  // CHECK: return
  func.func @many_groups(%a: tensor<2xf32> {epl.arg = "param", epl.name = "a"})
      -> (tensor<f32> {epl.result = "loss"},
          tensor<2xf32> {epl.result = "grad", epl.name = "a"}) {
    %l = tensor.empty() : tensor<f32>
    return %l, %a : tensor<f32>, tensor<2xf32>
  }
}

// -----

// A cosine schedule: plain SGD counts steps too, and each step's rate is a
// 0-d op of the counter, lr * (1 + cos(pi * min(t, 8) / 8)) / 2, that the
// update reads.
module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 0.5 : f64,
                                 "optimizer.lr_schedule" = "cosine",
                                 "optimizer.decay_steps" = 8 : i64}} {
  // CHECK-LABEL: func.func @cosine
  // CHECK-SAME: %[[STEP:[a-z0-9_]+]]: tensor<i64> {epl.arg = "opt_state", epl.name = "optimizer.step"}
  // CHECK-SAME: tensor<i64> {epl.name = "optimizer.step", epl.result = "opt_state"}
  // CHECK: %[[LR:.*]] = linalg.generic {{.*}} iterator_types = []} ins(%[[STEP]] : tensor<i64>)
  // CHECK:   arith.minsi %{{.*}}, %{{.*}} : i64
  // CHECK:   math.cos
  // CHECK:   arith.truncf %{{.*}} : f64 to f32
  // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[LR]] : tensor<3xf32>, tensor<3xf32>, tensor<f32>)
  func.func @cosine(%g: tensor<3xf32> {epl.arg = "input"},
                    %w: tensor<3xf32> {epl.arg = "param", epl.name = "w"})
      -> (tensor<f32> {epl.result = "loss"},
          tensor<3xf32> {epl.result = "grad", epl.name = "w"}) {
    // The loss reads w (a step always does: else nothing updates it).
    %c0 = arith.constant 0 : index
    %w0 = tensor.extract %w[%c0] : tensor<3xf32>
    %l = tensor.from_elements %w0 : tensor<f32>
    return %l, %g : tensor<f32>, tensor<3xf32>
  }
}
