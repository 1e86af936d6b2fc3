// RUN: epl-opt %s --epl-parallelize="devices=4" | FileCheck %s
// RUN: epl-opt %s --epl-parallelize="devices=4" --mlir-print-ir-after=epl-insert-collectives -o /dev/null 2>&1 | FileCheck %s --check-prefix=GRADS

// Gradient accumulation under data parallelism: each device cuts its own
// shard of the batch into the micro-batches, the loop carries unreduced
// (partial-sum) gradients and loss, and each is all-reduced once, after the
// loop, before the update.

// Between epl-insert-collectives and epl-apply-optimizer, the step's
// structure is in the IR: the reduced gradient is a result.
// GRADS-LABEL: IR Dump After EPLInsertCollectivesPass
// GRADS: -> (tensor<f32> {epl.result = "loss", epl.shard = #epl.sharding<@mesh, []>}, tensor<4x2xf32> {epl.name = "w", epl.result = "grad", epl.shard = #epl.sharding<@mesh, {{\[}}[], []]>})
// GRADS: scf.for
// GRADS: %[[R:.*]] = epl.all_reduce %{{.*}} on @mesh over ["data"] sum {epl.phase = #epl.phase<backward_weight>} : tensor<8xf32>
// GRADS: %[[PIECE:.*]] = tensor.extract_slice %[[R]]
// GRADS: %[[G:.*]] = tensor.expand_shape %[[PIECE]]
// GRADS-NOT: #epl.phase<optimizer>
// GRADS: return %{{.*}}, %[[G]]

#id = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
// CHECK: epl.mesh @mesh ["data" = 4]
// CHECK-LABEL: func.func @model(%{{.*}}: tensor<2x4xf32> {{.*}}epl.shard = #epl.sharding<@mesh, {{\[\[}}"data"], []]>}
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<f32>, tensor<4x2xf32>) {
// CHECK:   %[[GLOBAL:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:   %[[LOCAL:.*]] = arith.divui %[[GLOBAL]], %{{.*}} : index
// CHECK:   tensor.extract_slice %{{.*}}[%[[LOCAL]], 0] [1, 4] [1, 1] {epl.micro_batch} : tensor<2x4xf32> to tensor<1x4xf32>
// CHECK-NOT: epl.all_reduce
// CHECK:   scf.yield
// CHECK: }
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[LOOP]]#1
// CHECK: epl.all_reduce %[[FLAT]] on @mesh over ["data"] sum {epl.phase = #epl.phase<backward_weight>} : tensor<8xf32>
// Then each device applies the update (epl-apply-optimizer) to its copy.
// CHECK: %[[NEW:.*]] = linalg.generic {{.*}}epl.phase = #epl.phase<optimizer>
// CHECK: epl.all_reduce %[[LOOP]]#0 on @mesh over ["data"] sum {epl.phase = #epl.phase<forward>} : tensor<f32>
// CHECK-NOT: epl.all_reduce
// CHECK: return %{{.*}}, %[[NEW]]
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64, "optimizer.type" = "sgd"}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x2xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
    %y = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
        ins(%y : tensor<8x2xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %sq = arith.mulf %v, %v : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
