// RUN: epl-opt %s --epl-parallelize="devices=4" | FileCheck %s

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
