// RUN: epl-opt %s --epl-parallelize="devices=4" --split-input-file | FileCheck %s

// A Megatron MLP block (column- then row-parallel) whose output rows are
// pinned split over the devices, sequence-parallel style: the block's
// partial sum is resolved by a reduce_scatter into those rows (the layer
// after it then runs on row shards), and backward, the gradient rows are
// gathered before the row-parallel layer. No weight is ever gathered.

#id = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
#split = #epl.split<devices = 4>

module {
  epl.mesh @mesh ["tensor" = 4]

  // CHECK-LABEL: func.func @model
  // The column-parallel weight is split by its output features, the
  // row-parallel one by its input features.
  // CHECK-SAME: tensor<16x8xf32> {epl.arg = "param", epl.name = "w1", epl.shard = #epl.sharding<@mesh, {{\[\[}}], ["tensor"]]>}
  // CHECK-SAME: tensor<8x16xf32> {epl.arg = "param", epl.name = "w2", epl.shard = #epl.sharding<@mesh, {{\[\[}}"tensor"], []]>}
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input", epl.name = "x"},
                   %w0: tensor<16x16xf32> {epl.arg = "param", epl.name = "w0"},
                   %w1: tensor<16x32xf32> {epl.arg = "param", epl.name = "w1"},
                   %w2: tensor<32x16xf32> {epl.arg = "param", epl.name = "w2"},
                   %w3: tensor<16x16xf32> {epl.arg = "param", epl.name = "w3"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e16 = tensor.empty() : tensor<8x16xf32>
    %z16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %h = linalg.matmul ins(%x, %w0 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z16 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %e32 = tensor.empty() : tensor<8x32xf32>
    %z32 = linalg.fill {epl.scope = #split} ins(%zero : f32) outs(%e32 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %a = linalg.matmul {epl.scope = #split} ins(%h, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z32 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<8x32xf32>) outs(%e32 : tensor<8x32xf32>) attrs = {epl.scope = #split} {
    ^bb0(%v: f32, %o: f32):
      %r = math.tanh %v : f32
      linalg.yield %r : f32
    } -> tensor<8x32xf32>
    %zb = linalg.fill {epl.scope = #split} ins(%zero : f32) outs(%e16 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %b = linalg.matmul {epl.scope = #split} ins(%t, %w2 : tensor<8x32xf32>, tensor<32x16xf32>) outs(%zb : tensor<8x16xf32>) -> tensor<8x16xf32>
    // Forward: the row-parallel partial sum goes straight into row shards.
    // CHECK: epl.reduce_scatter %{{.*}} on @mesh over ["tensor"] sum dim 0 {epl.phase = #epl.phase<forward>} : tensor<8x16xf32> -> tensor<2x16xf32>
    %rows = epl.sharding_constraint %b <@mesh, [["tensor"], []]> : tensor<8x16xf32>
    %z3 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %y = linalg.matmul ins(%rows, %w3 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z3 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
        ins(%y : tensor<8x16xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %sq = arith.mulf %v, %v : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    // Backward: the gradient's row shards are gathered for the row-parallel
    // layer, and nothing else is.
    // CHECK: epl.all_gather %{{.*}} on @mesh over ["tensor"] dim 0 {epl.phase = #epl.phase<backward_input>} : tensor<2x16xf32> -> tensor<8x16xf32>
    // CHECK-NOT: epl.all_gather
    // CHECK: return
    return %l : tensor<f32>
  }
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#none = affine_map<(i, j) -> ()>
// Data parallel: the step's gradients (its "grad" results, found from the
// IR, whatever the ops' phases say) are reduced in one bucket
// (max_splits = 1), in the order the backward makes them (b's first), as
// soon as the last is made, and, with "sum", scaled by the 4 replicas; the
// update follows, on the reduced gradients. The loss is reduced alone,
// unscaled.
// CHECK-LABEL: func.func @dp
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] {epl.phase = #epl.phase<backward_weight>} : tensor<4x2xf32> into tensor<8xf32>
// CHECK: %[[BUCKET:.*]] = tensor.concat dim(0) %{{.*}}, %[[FLAT]] {{.*}}: (tensor<2xf32>, tensor<8xf32>) -> tensor<10xf32>
// CHECK: %[[SUM:.*]] = epl.all_reduce %[[BUCKET]] on @mesh over ["data"] sum {epl.phase = #epl.phase<backward_weight>} : tensor<10xf32>
// CHECK: %[[SCALED:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<10xf32>)
// CHECK: arith.constant 4.000000e+00 : f32
// CHECK-NOT: epl.all_reduce
// CHECK: tensor.extract_slice %[[SCALED]][0] [2] [1]
// CHECK: tensor.extract_slice %[[SCALED]][2] [8] [1]
// CHECK: linalg.generic {{.*}}epl.phase = #epl.phase<optimizer>
// CHECK: linalg.generic {{.*}}epl.phase = #epl.phase<optimizer>
// CHECK: %[[LOSS:.*]] = epl.all_reduce %{{.*}} on @mesh over ["data"] sum {epl.phase = #epl.phase<forward>} : tensor<f32>
// CHECK: return %[[LOSS]],
module attributes {epl.config = {"communication.max_splits" = 1 : i64, "communication.gradients_reduce_method" = "sum", "optimizer.type" = "sgd"}} {
  func.func @dp(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"},
                %b: tensor<2xf32> {epl.arg = "param", epl.name = "b"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x2xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
    %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
    %yb = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%y, %b : tensor<8x2xf32>, tensor<2xf32>) outs(%e : tensor<8x2xf32>) {
    ^bb0(%v: f32, %c: f32, %o: f32):
      %s = arith.addf %v, %c : f32
      linalg.yield %s : f32
    } -> tensor<8x2xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
        ins(%yb : tensor<8x2xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %sq = arith.mulf %v, %v : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
// Colocated replicate(4) and split(4): the batch is split over "tensor",
// so the gradient reductions over "tensor" are the data-parallel ones:
// bucketed and sent in f16 (scaled by 128 first, by 4 / 128 after, for
// "sum"). The split layer's weight gradient is computed on the gathered
// batch, reduced by nothing: scaled by the 4 replicas alone.
// CHECK-LABEL: func.func @colocated
// CHECK-SAME: tensor<2x4xf32> {epl.arg = "input", epl.name = "x", epl.shard = #epl.sharding<@mesh, {{\[\[}}"tensor"], []]>}
// CHECK: %[[HALF:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<24xf32>) outs(%{{.*}} : tensor<24xf16>)
// CHECK: arith.constant 1.280000e+02 : f32
// CHECK: arith.truncf
// CHECK: %[[SUM:.*]] = epl.all_reduce %[[HALF]] on @mesh over ["tensor"] sum {epl.phase = #epl.phase<backward_weight>} : tensor<24xf16>
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<24xf16>) outs(%{{.*}} : tensor<24xf32>)
// CHECK: arith.extf
// CHECK: arith.cmpf one, %{{.*}}, %cst{{.*}} : f32
// CHECK: cf.assert %{{.*}}, "a gradient bucket summed in fp16 (communication.fp16) is not finite: a gradient times communication.fp16_scale = 128, or its sum over the replicas, is beyond fp16's 65504 (lower the scale), or a gradient is not finite"
// CHECK: arith.constant 3.125000e-02 : f32
// CHECK: %[[LOSS:.*]] = epl.all_reduce %{{.*}} on @mesh over ["tensor"] sum {epl.phase = #epl.phase<forward>} : tensor<f32>
// CHECK: %[[DW2:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<6x1xf32>) outs(%{{.*}} : tensor<6x1xf32>)
// CHECK: arith.constant 4.000000e+00 : f32
// CHECK-NOT: epl.all_reduce
// CHECK: return %[[LOSS]],
module attributes {epl.config = {"cluster.colocate_split_and_replicate" = true, "communication.fp16" = true, "communication.gradients_reduce_method" = "sum", "optimizer.type" = "sgd"}} {
  func.func @colocated(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                       %w1: tensor<4x6xf32> {epl.arg = "param", epl.name = "w1"},
                       %w2: tensor<6x4xf32> {epl.arg = "param", epl.name = "w2"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e6 = tensor.empty() : tensor<8x6xf32>
    %z6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<8x6xf32>) -> tensor<8x6xf32>
    %h = linalg.matmul {epl.scope = #epl.replicate<devices = 4>} ins(%x, %w1 : tensor<8x4xf32>, tensor<4x6xf32>) outs(%z6 : tensor<8x6xf32>) -> tensor<8x6xf32>
    %e4 = tensor.empty() : tensor<8x4xf32>
    %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %y = linalg.matmul {epl.scope = #epl.split<devices = 4>} ins(%h, %w2 : tensor<8x6xf32>, tensor<6x4xf32>) outs(%z4 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
        ins(%y : tensor<8x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %sq = arith.mulf %v, %v : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
