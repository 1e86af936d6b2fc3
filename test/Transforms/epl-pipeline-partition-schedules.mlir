// RUN: epl-opt %S/Inputs/four-stages.mlir -split-input-file --epl-parallelize=devices=4 | FileCheck %s
// RUN: epl-opt %S/Inputs/four-stages.mlir -split-input-file --epl-parallelize=devices=4 | FileCheck %s --check-prefix=GROUPED

// The schedule IR of each strategy for p = 4 stage devices and m = 8
// micro-batches: the order of the calls of stage devices 0 and 3.

// GPipe (EPL's PreferForward): every forward, then every backward.
// CHECK-LABEL: func.func @model_stage0(
// CHECK: #epl.action<phase = forward, micro_batch = 0, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 1, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 2, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 3, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 4, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 5, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 6, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 7, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 0, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 0, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 1, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 1, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 2, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 2, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 3, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 3, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 4, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 4, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 5, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 5, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 6, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 6, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 7, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 7, stage = 0>
// CHECK-NOT: #epl.action
// CHECK: return
// CHECK-LABEL: func.func @model_stage3(
// CHECK: #epl.action<phase = forward, micro_batch = 0, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 1, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 2, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 3, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 4, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 5, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 6, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 7, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 0, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 0, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 1, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 1, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 2, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 2, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 3, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 3, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 4, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 4, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 5, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 5, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 6, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 6, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 7, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 7, stage = 3>
// CHECK-NOT: #epl.action
// CHECK: return

// 1F1B (PreferBackward): stage s warms up with p - s - 1 forwards, so it
// never holds more than p - s micro-batches (4 on stage 0, 1 on stage 3).
// CHECK-LABEL: func.func @model_stage0(
// CHECK: #epl.action<phase = forward, micro_batch = 0, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 1, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 2, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 3, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 0, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 0, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 4, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 1, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 1, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 5, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 2, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 2, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 6, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 3, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 3, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 7, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 4, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 4, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 5, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 5, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 6, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 6, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 7, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 7, stage = 0>
// CHECK-NOT: #epl.action
// CHECK: return
// CHECK-LABEL: func.func @model_stage3(
// CHECK: #epl.action<phase = forward, micro_batch = 0, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 0, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 0, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 1, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 1, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 1, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 2, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 2, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 2, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 3, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 3, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 3, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 4, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 4, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 4, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 5, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 5, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 5, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 6, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 6, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 6, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 7, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 7, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 7, stage = 3>
// CHECK-NOT: #epl.action
// CHECK: return

// ZB-H1 (Qi et al. 2024, Fig. 3; torch's schedule): 1F1B's forwards and
// input gradients, with stage s's weight gradients deferred by s micro-batches
// into the cool-down bubble.
// CHECK-LABEL: func.func @model_stage0(
// CHECK: #epl.action<phase = forward, micro_batch = 0, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 1, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 2, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 3, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 0, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 0, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 4, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 1, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 1, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 5, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 2, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 2, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 6, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 3, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 3, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 7, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 4, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 4, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 5, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 5, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 6, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 6, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 7, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 7, stage = 0>
// CHECK-NOT: #epl.action
// CHECK: return
// CHECK-LABEL: func.func @model_stage3(
// CHECK: #epl.action<phase = forward, micro_batch = 0, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 0, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 1, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 1, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 2, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 2, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 3, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 3, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 0, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 4, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 4, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 1, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 5, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 5, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 2, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 6, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 6, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 3, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 7, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 7, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 4, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 5, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 6, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 7, stage = 3>
// CHECK-NOT: #epl.action
// CHECK: return

// Interleaved 1F1B (Narayanan et al. 2021, Fig. 4; Megatron-LM): 8 stages
// on 4 devices, stage k on device k mod 4; device d warms up with
// 2 (p - d - 1) + (v - 1) p forwards, micro-batches in groups of p, backward
// chunks in reverse.
// CHECK-LABEL: func.func @model_stage0(
// CHECK: #epl.action<phase = forward, micro_batch = 0, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 1, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 2, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 3, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 0, stage = 4>
// CHECK: #epl.action<phase = forward, micro_batch = 1, stage = 4>
// CHECK: #epl.action<phase = forward, micro_batch = 2, stage = 4>
// CHECK: #epl.action<phase = forward, micro_batch = 3, stage = 4>
// CHECK: #epl.action<phase = forward, micro_batch = 4, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 5, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 6, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 0, stage = 4>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 0, stage = 4>
// CHECK: #epl.action<phase = forward, micro_batch = 7, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 1, stage = 4>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 1, stage = 4>
// CHECK: #epl.action<phase = forward, micro_batch = 4, stage = 4>
// CHECK: #epl.action<phase = backward_input, micro_batch = 2, stage = 4>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 2, stage = 4>
// CHECK: #epl.action<phase = forward, micro_batch = 5, stage = 4>
// CHECK: #epl.action<phase = backward_input, micro_batch = 3, stage = 4>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 3, stage = 4>
// CHECK: #epl.action<phase = forward, micro_batch = 6, stage = 4>
// CHECK: #epl.action<phase = backward_input, micro_batch = 0, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 0, stage = 0>
// CHECK: #epl.action<phase = forward, micro_batch = 7, stage = 4>
// CHECK: #epl.action<phase = backward_input, micro_batch = 1, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 1, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 2, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 2, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 3, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 3, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 4, stage = 4>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 4, stage = 4>
// CHECK: #epl.action<phase = backward_input, micro_batch = 5, stage = 4>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 5, stage = 4>
// CHECK: #epl.action<phase = backward_input, micro_batch = 6, stage = 4>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 6, stage = 4>
// CHECK: #epl.action<phase = backward_input, micro_batch = 7, stage = 4>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 7, stage = 4>
// CHECK: #epl.action<phase = backward_input, micro_batch = 4, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 4, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 5, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 5, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 6, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 6, stage = 0>
// CHECK: #epl.action<phase = backward_input, micro_batch = 7, stage = 0>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 7, stage = 0>
// CHECK-NOT: #epl.action
// CHECK: return
// CHECK-LABEL: func.func @model_stage3(
// CHECK: #epl.action<phase = forward, micro_batch = 0, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 1, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 2, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 3, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 0, stage = 7>
// CHECK: #epl.action<phase = backward_input, micro_batch = 0, stage = 7>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 0, stage = 7>
// CHECK: #epl.action<phase = forward, micro_batch = 1, stage = 7>
// CHECK: #epl.action<phase = backward_input, micro_batch = 1, stage = 7>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 1, stage = 7>
// CHECK: #epl.action<phase = forward, micro_batch = 2, stage = 7>
// CHECK: #epl.action<phase = backward_input, micro_batch = 2, stage = 7>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 2, stage = 7>
// CHECK: #epl.action<phase = forward, micro_batch = 3, stage = 7>
// CHECK: #epl.action<phase = backward_input, micro_batch = 3, stage = 7>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 3, stage = 7>
// CHECK: #epl.action<phase = forward, micro_batch = 4, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 0, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 0, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 5, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 1, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 1, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 6, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 2, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 2, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 7, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 3, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 3, stage = 3>
// CHECK: #epl.action<phase = forward, micro_batch = 4, stage = 7>
// CHECK: #epl.action<phase = backward_input, micro_batch = 4, stage = 7>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 4, stage = 7>
// CHECK: #epl.action<phase = forward, micro_batch = 5, stage = 7>
// CHECK: #epl.action<phase = backward_input, micro_batch = 5, stage = 7>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 5, stage = 7>
// CHECK: #epl.action<phase = forward, micro_batch = 6, stage = 7>
// CHECK: #epl.action<phase = backward_input, micro_batch = 6, stage = 7>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 6, stage = 7>
// CHECK: #epl.action<phase = forward, micro_batch = 7, stage = 7>
// CHECK: #epl.action<phase = backward_input, micro_batch = 7, stage = 7>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 7, stage = 7>
// CHECK: #epl.action<phase = backward_input, micro_batch = 4, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 4, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 5, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 5, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 6, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 6, stage = 3>
// CHECK: #epl.action<phase = backward_input, micro_batch = 7, stage = 3>
// CHECK: #epl.action<phase = backward_weight, micro_batch = 7, stage = 3>
// CHECK-NOT: #epl.action
// CHECK: return

// Messages go in groups (on GPUs, NCCL's) where the programs finish so:
// every schedule but interleaved 1F1B, whose messages go directly, over
// channels (each direction's received in the order sent).
// GROUPED: epl.send {{.*}} grouped :
// GROUPED: epl.recv {{.*}} grouped :
// GROUPED: strategy "PreferForward"
// GROUPED: epl.send {{.*}} grouped :
// GROUPED: strategy "PreferBackward"
// GROUPED: epl.send {{.*}} grouped :
// GROUPED: strategy "ZeroBubbleH1"
// GROUPED-NOT: grouped
// GROUPED: epl.send {{.*}} direct :
// GROUPED: epl.recv {{.*}} direct :
// GROUPED-NOT: grouped
// GROUPED: strategy "Interleaved1F1B"
