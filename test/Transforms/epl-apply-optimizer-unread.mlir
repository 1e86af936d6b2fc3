// RUN: epl-opt %s --epl-apply-optimizer --split-input-file -verify-diagnostics | FileCheck %s

// A parameter nothing reads does not affect the loss: PyTorch's optimizers
// skip it (its gradient is None) where a zero gradient would still decay
// it (AdamW, weight decay). It keeps its value and its state, said once.
module attributes {epl.config = {"optimizer.type" = "adamw", "optimizer.lr" = 0.1 : f64, "optimizer.weight_decay" = 0.5 : f64}} {
  // CHECK-LABEL: func.func @unread
  // CHECK-SAME: %[[W:[a-z0-9_]+]]: tensor<3xf32> {epl.arg = "param", epl.name = "w"}
  // CHECK-SAME: %[[U:[a-z0-9_]+]]: tensor<2xf32> {epl.arg = "param", epl.name = "unused"}
  // CHECK-SAME: %[[M:[a-z0-9_]+]]: tensor<2xf32> {epl.arg = "opt_state", epl.name = "unused.exp_avg"}
  // CHECK-SAME: %[[V:[a-z0-9_]+]]: tensor<2xf32> {epl.arg = "opt_state", epl.name = "unused.exp_avg_sq"}
  // CHECK: %[[NEW:.*]]:3 = linalg.generic {{.*}} ins(%[[W]]
  // CHECK-NOT: ins(%[[U]]
  // CHECK: return %{{.*}}, %[[NEW]]#0, %[[U]], %[[NEW]]#1, %[[NEW]]#2, %[[M]], %[[V]], %{{.*}} :
  // expected-warning @+1 {{epl-apply-optimizer: parameter 'unused' does not affect the loss; it is not updated (PyTorch's optimizers skip a parameter without a gradient)}}
  func.func @unread(%w: tensor<3xf32> {epl.arg = "param", epl.name = "w"},
                    %u: tensor<2xf32> {epl.arg = "param", epl.name = "unused"})
      -> (tensor<f32> {epl.result = "loss"},
          tensor<3xf32> {epl.result = "grad", epl.name = "w"},
          tensor<2xf32> {epl.result = "grad", epl.name = "unused"}) {
    %l = tensor.empty() : tensor<f32>
    %zero = arith.constant dense<0.0> : tensor<2xf32>
    return %l, %w, %zero : tensor<f32>, tensor<3xf32>, tensor<2xf32>
  }
}

// -----

// With micro-batches the step passes every argument to the micro-batch
// function; one that function reads nowhere is read by nothing.
module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 0.1 : f64, "optimizer.weight_decay" = 0.5 : f64}} {
  func.func private @micro(%w: tensor<3xf32>, %u: tensor<2xf32>) -> tensor<3xf32> {
    return %w : tensor<3xf32>
  }
  // CHECK-LABEL: func.func @step
  // CHECK-SAME: %[[W:[a-z0-9_]+]]: tensor<3xf32> {epl.arg = "param", epl.name = "w"}, %[[U:[a-z0-9_]+]]: tensor<2xf32>
  // CHECK: %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[W]]
  // CHECK: return %{{.*}}, %[[NEW]], %[[U]] :
  // expected-warning @+1 {{parameter 'unused' does not affect the loss}}
  func.func @step(%w: tensor<3xf32> {epl.arg = "param", epl.name = "w"},
                  %u: tensor<2xf32> {epl.arg = "param", epl.name = "unused"})
      -> (tensor<f32> {epl.result = "loss"},
          tensor<3xf32> {epl.result = "grad", epl.name = "w"},
          tensor<2xf32> {epl.result = "grad", epl.name = "unused"}) {
    %g = func.call @micro(%w, %u) : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
    %l = tensor.empty() : tensor<f32>
    %zero = arith.constant dense<0.0> : tensor<2xf32>
    return %l, %g, %zero : tensor<f32>, tensor<3xf32>, tensor<2xf32>
  }
}

// -----

// Groups update in the order their gradients are ready: a group of unread
// parameters between two others updates nothing, and the next group still
// follows the one before it.
module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 0.1 : f64, "optimizer.num_apply_group" = 3 : i64}} {
  // CHECK-LABEL: func.func @groups
  // CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<4xf32> {epl.arg = "param", epl.name = "a"}, %[[U:[a-z0-9_]+]]: tensor<4xf32> {epl.arg = "param", epl.name = "unused"}, %[[C:[a-z0-9_]+]]: tensor<4xf32> {epl.arg = "param", epl.name = "c"}
  // CHECK: ins(%[[A]]
  // CHECK-NOT: ins(%[[U]]
  // CHECK: ins(%[[C]]
  // expected-warning @+1 {{parameter 'unused' does not affect the loss}}
  func.func @groups(%a: tensor<4xf32> {epl.arg = "param", epl.name = "a"},
                    %u: tensor<4xf32> {epl.arg = "param", epl.name = "unused"},
                    %c: tensor<4xf32> {epl.arg = "param", epl.name = "c"})
      -> (tensor<f32> {epl.result = "loss"},
          tensor<4xf32> {epl.result = "grad", epl.name = "a"},
          tensor<4xf32> {epl.result = "grad", epl.name = "unused"},
          tensor<4xf32> {epl.result = "grad", epl.name = "c"}) {
    %g = arith.addf %a, %c : tensor<4xf32>
    %l = tensor.empty() : tensor<f32>
    return %l, %g, %g, %g : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}
