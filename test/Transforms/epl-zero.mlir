// RUN: epl-opt %s --split-input-file --epl-parallelize="devices=2" --mlir-print-ir-after=epl-zero -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: epl-opt %s --split-input-file --epl-parallelize="devices=2" | FileCheck %s

// ZeRO on 2 data-parallel devices: y = x w, u = y v, loss = sum(u^2).
// epl-zero (after propagation) shards each gradient result over "data";
// epl-insert-collectives reduce-scatters it; epl-apply-optimizer updates
// the parameter's shard with a shard of its state, then all-gathers it.

// v0: optimizer state and reduced gradients are 1/2 per device.
// ZERO-LABEL: IR Dump After EPLZeroPass
// ZERO: %{{.*}}: tensor<4x2xf32> {epl.arg = "param", epl.name = "w", epl.sharding = #epl.sharding<@mesh, {{\[\[}}], []]>}
// ZERO-SAME: tensor<4x2xf32> {epl.name = "w", epl.result = "grad", epl.sharding = #epl.sharding<@mesh, {{\[\[}}"data"], []]>}
// ZERO-NOT: epl.sharding_constraint
// ZERO: return

// CHECK-LABEL: func.func @model
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x2xf32> {epl.arg = "param", epl.name = "w", epl.shard = #epl.sharding<@mesh, {{\[\[}}], []]>}
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<2x2xf32> {epl.arg = "opt_state", epl.name = "w.momentum_buffer", epl.shard = #epl.sharding<@mesh, {{\[\[}}"data"], []]>}
// CHECK-SAME: tensor<4x2xf32> {epl.grad_shard = #epl.sharding<@mesh, {{\[\[}}"data"], []]>, epl.name = "w", epl.result = "param", epl.shard = #epl.sharding<@mesh, {{\[\[}}], []]>}
// CHECK-NOT: epl.all_reduce {{.*}} tensor<4x2xf32>
// CHECK: %[[G:.*]] = epl.reduce_scatter %{{.*}} on @mesh over ["data"] sum dim 0 {epl.phase = #epl.phase<backward_weight>} : tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK: %[[I:.*]] = epl.group_index on @mesh over ["data"] {epl.phase = #epl.phase<optimizer>}
// CHECK: %[[OFF:.*]] = arith.muli %[[I]]
// CHECK: %[[MINE:.*]] = tensor.extract_slice %[[W]][%[[OFF]], 0] [2, 2] [1, 1]
// CHECK: %[[UPD:.*]]:2 = linalg.generic {{.*}} ins(%[[MINE]], %[[G]], %[[M]] :
// CHECK: %[[NEW:.*]] = epl.all_gather %[[UPD]]#0 on @mesh over ["data"] dim 0 {epl.phase = #epl.phase<optimizer>} : tensor<2x2xf32> -> tensor<4x2xf32>
// CHECK: return %{{.*}}, %[[NEW]], %{{.*}}, %[[UPD]]#1,
#id = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
module attributes {epl.config = {"zero.level" = "v0", "optimizer.type" = "momentum"}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"},
                   %v: tensor<2x2xf32> {epl.arg = "param", epl.name = "v"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x2xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
    %y = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
    %u = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%y, %v : tensor<8x2xf32>, tensor<2x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
        ins(%u : tensor<8x2xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// v1 with 2 micro-batches: each micro-batch's gradient is reduce-scattered
// (a constraint on what the loop adds up), so the loop carries 1/2
// accumulators; nothing is reduced after the loop but the loss.
// ZERO-LABEL: IR Dump After EPLZeroPass
// ZERO: scf.for
// ZERO: epl.sharding_constraint %{{.*}} <@mesh, {{\[\[}}"data"], []]> {epl.phase = #epl.phase<backward_weight>{{.*}} : tensor<4x2xf32>
// ZERO: scf.yield

// CHECK-LABEL: func.func @model
// CHECK: scf.for {{.*}} -> (tensor<f32>, tensor<2x2xf32>, tensor<1x2xf32>)
// CHECK: epl.reduce_scatter %{{.*}} on @mesh over ["data"] sum dim 0 {epl.phase = #epl.phase<backward_weight>} : tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK: epl.reduce_scatter %{{.*}} on @mesh over ["data"] sum dim 0 {epl.phase = #epl.phase<backward_weight>} : tensor<2x2xf32> -> tensor<1x2xf32>
// CHECK: scf.yield
// CHECK-NOT: epl.reduce_scatter
// CHECK: epl.all_reduce %{{.*}} on @mesh over ["data"] sum {epl.phase = #epl.phase<forward>} : tensor<f32>
// CHECK-NOT: epl.reduce_scatter
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
module attributes {epl.config = {"zero.level" = "v1", "pipeline.num_micro_batch" = 2 : i64, "optimizer.type" = "momentum"}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"},
                   %v: tensor<2x2xf32> {epl.arg = "param", epl.name = "v"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x2xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
    %y = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
    %u = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%y, %v : tensor<8x2xf32>, tensor<2x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
        ins(%u : tensor<8x2xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// v2: parameters are shards at rest, gathered before the forward and
// again for the backward (v only: the backward does not read w).
// ZERO-LABEL: IR Dump After EPLZeroPass
// ZERO: %[[W:[a-z0-9]+]]: tensor<4x2xf32> {epl.arg = "param", epl.name = "w", epl.sharding = #epl.sharding<@mesh, {{\[\[}}"data"], []]>}
// ZERO: epl.sharding_constraint %[[W]] <@mesh, {{\[\[}}], []]> {epl.phase = #epl.phase<forward>
// ZERO: epl.sharding_constraint %{{.*}} <@mesh, {{\[\[}}], []]> {epl.phase = #epl.phase<forward>
// ZERO: epl.sharding_constraint %{{.*}} <@mesh, {{\[\[}}], []]> {epl.phase = #epl.phase<backward_input>
// ZERO-NOT: epl.sharding_constraint

// CHECK-LABEL: func.func @model
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<2x2xf32> {epl.arg = "param", epl.name = "w", epl.shard = #epl.sharding<@mesh, {{\[\[}}"data"], []]>}
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<1x2xf32> {epl.arg = "param", epl.name = "v", epl.shard = #epl.sharding<@mesh, {{\[\[}}"data"], []]>}
// CHECK: epl.all_gather %[[W]] on @mesh over ["data"] dim 0 {epl.phase = #epl.phase<forward>} : tensor<2x2xf32> -> tensor<4x2xf32>
// CHECK: epl.all_gather %[[V]] on @mesh over ["data"] dim 0 {epl.phase = #epl.phase<forward>} : tensor<1x2xf32> -> tensor<2x2xf32>
// CHECK: epl.all_gather %[[V]] on @mesh over ["data"] dim 0 {epl.phase = #epl.phase<backward_input>} : tensor<1x2xf32> -> tensor<2x2xf32>
// CHECK: %[[GW:.*]] = epl.reduce_scatter %{{.*}} : tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK: %[[UPD:.*]]:2 = linalg.generic {{.*}} ins(%[[W]], %[[GW]], %{{.*}} :
// CHECK-NOT: epl.all_gather
// CHECK: return %{{.*}}, %[[UPD]]#0,
#id = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
module attributes {epl.config = {"zero.level" = "v2", "optimizer.type" = "momentum"}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"},
                   %v: tensor<2x2xf32> {epl.arg = "param", epl.name = "v"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x2xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
    %y = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
    %u = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%y, %v : tensor<8x2xf32>, tensor<2x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
        ins(%u : tensor<8x2xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
