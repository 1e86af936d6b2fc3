// RUN: epl-opt %s --epl-plan=devices=4 | FileCheck %s
// RUN: epl-opt %s --epl-plan=devices=4 --epl-autodiff | FileCheck %s --check-prefix=STEP

// Named scopes are pipeline stages in the order the model first uses them;
// the mesh puts the stage axis first: 2 stages x 2 replicas. An op outside
// every scope runs on the latest stage of what it reads (the loss on the
// last stage); an op that reads no stage's value (the fill) gets none: each
// stage that needs it makes its own. A stage the user writes wins.

// CHECK: epl.mesh @mesh ["stage" = 2, "data" = 2]
// CHECK-LABEL: func.func @model
// CHECK: linalg.fill ins({{.*}}) outs({{.*}}) -> tensor<8x4xf32>
// CHECK: linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "encoder">, epl.stage = #epl.stage<index = 0, name = "encoder">}
// CHECK: math.tanh {{.*}}epl.stage = #epl.stage<index = 0, name = "encoder">
// CHECK: linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "decoder">, epl.stage = #epl.stage<index = 1, name = "decoder">}
// CHECK: math.exp {{.*}}{epl.stage = #epl.stage<index = 1, name = "decoder">}
// CHECK: linalg.generic {{.*}}epl.stage = #epl.stage<index = 1, name = "decoder">

// Backward ops run on the stage of their forward origin; with stages the
// step is a micro-batch loop even for one micro-batch.
// STEP-LABEL: func.func private @model_micro_batch
// STEP: {{.*}}epl.origin = {{[0-9]+}} : i64, epl.phase = #epl.phase<backward_input>, epl.stage = #epl.stage<index = 1, name = "decoder">
// STEP: {{.*}}epl.origin = {{[0-9]+}} : i64, epl.phase = #epl.phase<backward_weight>, epl.stage = #epl.stage<index = 0, name = "encoder">
// STEP-LABEL: func.func @model
// STEP: scf.for
module {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w0: tensor<4x4xf32> {epl.arg = "param", epl.name = "w0"},
                   %w1: tensor<4x4xf32> {epl.arg = "param", epl.name = "w1"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %m0 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "encoder">} ins(%x, %w0 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %h0 = math.tanh %m0 {epl.scope = #epl.replicate<devices = 1, name = "encoder">} : tensor<8x4xf32>
    %m1 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "decoder">} ins(%h0, %w1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %h1 = math.exp %m1 {epl.stage = #epl.stage<index = 1>} : tensor<8x4xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%h1 : tensor<8x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
