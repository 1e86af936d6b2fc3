// RUN: epl-opt %s --epl-plan=devices=4 --epl-autodiff --inline="default-pipeline=" --linalg-generalize-named-ops --epl-sharding-propagation --epl-insert-collectives --epl-pipeline-partition | FileCheck %s

// Two stages x two replicas, two micro-batches (1F1B). Each stage's forward,
// input gradients and weight gradients become functions of one micro-batch;
// each stage device runs its own program: the schedule's calls, the sends
// and receives between stages, then its share of the gradient reduction.

// CHECK: epl.mesh @mesh ["stage" = 2, "data" = 2]
// CHECK: func.func private @model_s0_forward(%{{.*}}: index, {{.*}}) -> (tensor<2x4xf32>, tensor<2x4xf32>) attributes {epl.stage = #epl.stage<index = 0, name = "embed">}
// CHECK: func.func private @model_s0_backward_input(
// CHECK: func.func private @model_s0_backward_weight(
// CHECK: func.func private @model_s1_forward(
// CHECK: func.func private @model_s1_backward_input(
// CHECK: func.func private @model_s1_backward_weight(

// Stage 0 takes the inputs and its own parameter, and returns its update.
// CHECK-LABEL: func.func @model_stage0(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x4xf32> {epl.arg = "input", epl.name = "x", epl.shard = #epl.sharding<@mesh, {{\[\["data"\], \[\]\]}}>}
// CHECK-SAME: %[[W0:[^:]*]]: tensor<4x4xf32> {epl.arg = "param", epl.name = "w0"
// CHECK-SAME: -> (tensor<4x4xf32> {epl.name = "w0", epl.result = "grad"
// CHECK-NOT: "w1"
// CHECK: %[[F0:.*]]:2 = call @model_s0_forward(%{{.*}}, %[[X]], %[[W0]]) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>}
// Each run of messages between two calls is a group (1F1B's finish so):
// on GPUs they go over NCCL.
// CHECK: epl.send %[[F0]]#1 on @mesh over ["stage"] to 1 tag 1 grouped :
// CHECK: %[[F1:.*]]:2 = call @model_s0_forward({{.*}}) {epl.action = #epl.action<phase = forward, micro_batch = 1, stage = 0>}
// CHECK: epl.send %[[F1]]#1 on @mesh over ["stage"] to 1 tag 1 grouped :
// CHECK: %[[G0:.*]] = epl.recv on @mesh over ["stage"] from 1 grouped :
// CHECK: %[[B0:.*]] = call @model_s0_backward_input(%[[F0]]#0, %[[G0]]) {epl.action = #epl.action<phase = backward_input, micro_batch = 0, stage = 0>}
// CHECK: call @model_s0_backward_weight({{.*}}%[[B0]]) {epl.action = #epl.action<phase = backward_weight, micro_batch = 0, stage = 0>}
// CHECK: epl.recv on @mesh over ["stage"] from 1 grouped :
// CHECK: call @model_s0_backward_input({{.*}}micro_batch = 1
// CHECK: call @model_s0_backward_weight({{.*}}micro_batch = 1
// CHECK: epl.all_reduce {{.*}} over ["data"] sum
// CHECK: return

// The last stage returns the loss; it receives each micro-batch's
// activations before its forward and sends back their gradients.
// CHECK-LABEL: func.func @model_stage1(
// CHECK-SAME: {epl.arg = "param", epl.name = "w1"
// CHECK-SAME: -> (tensor<f32> {epl.result = "loss"
// CHECK: %[[A0:.*]] = epl.recv on @mesh over ["stage"] from 0 tag 1 grouped : tensor<2x4xf32>
// CHECK: call @model_s1_forward({{.*}}%[[A0]]) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 1>}
// CHECK: %[[D0:.*]]:2 = call @model_s1_backward_input(
// CHECK: epl.send %[[D0]]#0 on @mesh over ["stage"] to 0 grouped :
// CHECK: call @model_s1_backward_weight(%{{.*}}, %[[A0]], %[[D0]]#1)
// CHECK: epl.all_reduce {{.*}} over ["data"] sum {{.*}} : tensor<f32>
// CHECK: return

// CHECK: epl.pipeline @model on @mesh over "stage" stages [@model_stage0, @model_stage1] strategy "PreferBackward" micro_batches 2
// CHECK-NOT: func.func @model(
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w0: tensor<4x4xf32> {epl.arg = "param", epl.name = "w0"},
                   %w1: tensor<4x4xf32> {epl.arg = "param", epl.name = "w1"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %m0 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "embed">} ins(%x, %w0 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %h0 = math.tanh %m0 {epl.scope = #epl.replicate<devices = 1, name = "embed">} : tensor<8x4xf32>
    %m1 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "head">} ins(%h0, %w1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%m1 : tensor<8x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
