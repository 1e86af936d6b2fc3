// RUN: epl-opt %s --epl-apply-optimizer --split-input-file -verify-diagnostics

// The pass updates the gradients of a training step; an L0 model is none.
// expected-error @+1 {{epl-apply-optimizer: no training step (a function whose results are tagged epl.result); run epl-autodiff first}}
module {
  func.func @model(%w: tensor<4xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %l = tensor.empty() : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A step already updated is not updated twice.
module {
  // expected-error @+1 {{epl-apply-optimizer: @step already returns updated parameters}}
  func.func @step(%w: tensor<4xf32> {epl.arg = "param", epl.name = "w"})
      -> (tensor<f32> {epl.result = "loss"}, tensor<4xf32> {epl.result = "param", epl.name = "w"}) {
    %l = tensor.empty() : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// The optimizer's keys are checked with the config.
// expected-error @+1 {{optimizer.type}}
module attributes {epl.config = {"optimizer.type" = "lamb"}} {
  func.func @step(%w: tensor<4xf32> {epl.arg = "param", epl.name = "w"})
      -> (tensor<f32> {epl.result = "loss"}, tensor<4xf32> {epl.result = "grad", epl.name = "w"}) {
    %l = tensor.empty() : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A key nothing implements yet is rejected here too (a step built by
// epl-autodiff before the key was added).
// expected-error @+1 {{epl-apply-optimizer: EPL config key "amp.level" = "O1" is not implemented yet (automatic mixed precision)}}
module attributes {epl.config = {"amp.level" = "O1"}} {
  func.func @step(%w: tensor<4xf32> {epl.arg = "param", epl.name = "w"})
      -> (tensor<f32> {epl.result = "loss"}, tensor<4xf32> {epl.result = "grad", epl.name = "w"}) {
    %l = tensor.empty() : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// Adam's state of "w" is called "w.exp_avg", which a parameter of the
// model already is: two arguments of one name.
module attributes {epl.config = {"optimizer.type" = "adam"}} {
  // expected-error @+1 {{epl-apply-optimizer: the optimizer's state "w.exp_avg" would have the name of argument 1 of @step; rename that argument}}
  func.func @step(%w: tensor<4xf32> {epl.arg = "param", epl.name = "w"},
                  %v: tensor<4xf32> {epl.arg = "param", epl.name = "w.exp_avg"})
      -> (tensor<f32> {epl.result = "loss"}, tensor<4xf32> {epl.result = "grad", epl.name = "w"},
          tensor<4xf32> {epl.result = "grad", epl.name = "w.exp_avg"}) {
    %l = tensor.empty() : tensor<f32>
    return %l, %w, %v : tensor<f32>, tensor<4xf32>, tensor<4xf32>
  }
}
