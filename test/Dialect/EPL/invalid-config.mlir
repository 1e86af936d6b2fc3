// RUN: epl-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{unknown EPL config key "pipeline.num_micro_batches"; did you mean "pipeline.num_micro_batch"?}}
module attributes {epl.config = {"pipeline.num_micro_batches" = 4 : i64}} {
}

// -----

// expected-error @+1 {{unknown EPL config key "zero.levl"; did you mean "zero.level"?}}
module attributes {epl.config = {"zero.levl" = "v1"}} {
}

// -----

// No key is close: list them all.
// expected-error @+1 {{unknown EPL config key "tensorflow.graph"; valid keys are "pipeline.num_micro_batch", "pipeline.strategy"}}
module attributes {epl.config = {"tensorflow.graph" = 1 : i64}} {
}

// -----

// expected-error @+1 {{EPL config key "pipeline.num_micro_batch" expects an integer, got "4"}}
module attributes {epl.config = {"pipeline.num_micro_batch" = "4"}} {
}

// -----

// expected-error @+1 {{EPL config key "pipeline.num_micro_batch" expects an integer, got 4.000000e+00 : f32}}
module attributes {epl.config = {"pipeline.num_micro_batch" = 4.0 : f32}} {
}

// -----

// expected-error @+1 {{EPL config key "pipeline.num_micro_batch" expects an integer, got true}}
module attributes {epl.config = {"pipeline.num_micro_batch" = true}} {
}

// -----

// expected-error @+1 {{EPL config key "pipeline.num_micro_batch" must be at least 1, got 0 : i64}}
module attributes {epl.config = {"pipeline.num_micro_batch" = 0 : i64}} {
}

// -----

// expected-error @+1 {{EPL config key "optimizer.lr" must be greater than 0, got -1.000000e-01 : f64}}
module attributes {epl.config = {"optimizer.lr" = -0.1 : f64}} {
}

// -----

// expected-error @+1 {{EPL config key "optimizer.lr" expects a number, got "fast"}}
module attributes {epl.config = {"optimizer.lr" = "fast"}} {
}

// -----

// expected-error @+1 {{EPL config key "communication.fp16" expects a boolean (true or false), got 1 : i64}}
module attributes {epl.config = {"communication.fp16" = 1 : i64}} {
}

// -----

// expected-error @+1 {{EPL config key "zero.level" expects one of "", "v0", "v1", "v2", got "v3"}}
module attributes {epl.config = {"zero.level" = "v3"}} {
}

// -----

// expected-error @+1 {{EPL config key "zero.level" expects a string, got 1 : i64}}
module attributes {epl.config = {"zero.level" = 1 : i64}} {
}

// -----

// expected-error @+1 {{EPL config key "optimizer.type" expects one of "sgd", "momentum", "adam", "adamw", got "lamb"}}
module attributes {epl.config = {"optimizer.type" = "lamb"}} {
}

// -----

// expected-error @+1 {{EPL config key "pipeline.strategy" expects one of "PreferForward", "PreferBackward", "PreferBackwardOptimizer", "Interleaved1F1B", "ZeroBubbleH1", got "GPipe"}}
module attributes {epl.config = {"pipeline.strategy" = "GPipe"}} {
}

// -----

// expected-error @+1 {{EPL config key "communication.gradients_reduce_method" expects one of "mean", "sum", got "max"}}
module attributes {epl.config = {"communication.gradients_reduce_method" = "max"}} {
}

// -----

// expected-error @+1 {{EPL config key "amp.loss_scale" expects a number or one of "dynamic", got "static"}}
module attributes {epl.config = {"amp.loss_scale" = "static"}} {
}

// -----

// expected-error @+1 {{'epl.config' expects a dictionary of EPL config keys, got ["pipeline.num_micro_batch"]}}
module attributes {epl.config = ["pipeline.num_micro_batch"]} {
}

// -----

module {
  // expected-error @+1 {{'epl.config' belongs on the top-level module, not on 'func.func'}}
  func.func @f() attributes {epl.config = {}} {
    return
  }
}

// -----

// expected-error @+1 {{EPL config key "optimizer.beta2" must be less than 1, got 1.000000e+00 : f64}}
module attributes {epl.config = {"optimizer.beta2" = 1.0 : f64}} {
}

// -----

// expected-error @+1 {{EPL config key "optimizer.lr_schedule" = "cosine" needs "optimizer.decay_steps" of at least 1: the steps over which the learning rate falls to 0}}
module attributes {epl.config = {"optimizer.lr_schedule" = "cosine"}} {
}

// -----

// expected-error @+1 {{EPL config key "optimizer.decay_steps" = 100 is read only by "optimizer.lr_schedule" = "cosine"; the schedule is constant}}
module attributes {epl.config = {"optimizer.decay_steps" = 100 : i64}} {
}

// -----

// Each optimizer's own keys beside another optimizer would change nothing:
// momentum beside the default "sgd" is no momentum.
// expected-error @+1 {{EPL config key "optimizer.momentum" is read only by "optimizer.type" = "momentum"; the optimizer is "sgd"}}
module attributes {epl.config = {"optimizer.momentum" = 0.9 : f64}} {
}

// -----

// expected-error @+1 {{EPL config key "optimizer.eps" is read only by "optimizer.type" = "adam" or "adamw"; the optimizer is "momentum"}}
module attributes {epl.config = {"optimizer.type" = "momentum", "optimizer.eps" = 1.0e-06 : f64}} {
}

// -----

// expected-error @+1 {{EPL config key "communication.fp16_scale" is read only with "communication.fp16" = true}}
module attributes {epl.config = {"communication.fp16_scale" = 1024.0 : f64}} {
}

// -----

// An unsigned integer is read as such: 255, not -1; the largest int64_t
// fits.
module attributes {epl.config = {"pipeline.num_micro_batch" = 255 : ui8}} {
}

// -----

module attributes {epl.config = {"pipeline.num_micro_batch" = 9223372036854775807 : i64}} {
}

// -----

// expected-error @+1 {{EPL config key "pipeline.num_micro_batch" must fit in 64 bits, got 18446744073709551616 : i128}}
module attributes {epl.config = {"pipeline.num_micro_batch" = 18446744073709551616 : i128}} {
}

// -----

// expected-error @+1 {{EPL config key "optimizer.decay_steps" = 200 is read only by "optimizer.lr_schedule" = "cosine"; the schedule is constant}}
module attributes {epl.config = {"optimizer.decay_steps" = 200 : ui8}} {
}
