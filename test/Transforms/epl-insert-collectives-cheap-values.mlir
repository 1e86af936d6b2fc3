// RUN: epl-opt %s --epl-sharding-propagation --epl-insert-collectives | FileCheck %s

// What `--cse` makes of a Megatron block: the column- and the row-parallel
// layer share one zero-filled accumulator. The fill carries no data, so it
// has no say in propagation, and each layer makes its own zeros in the
// layout it needs: a 16x4 block for the column-parallel layer, the whole
// 16x16 (the original) for the row-parallel one. Nothing but the block's partial sum is
// communicated.

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

module {
  epl.mesh @mesh ["tensor" = 4]

  // CHECK-LABEL: func.func @block
  func.func @block(%x: tensor<16x16xf32>,
                   %w1: tensor<16x16xf32> {epl.sharding = #epl.sharding<@mesh, [[], ["tensor"]]>},
                   %w2: tensor<16x16xf32> {epl.sharding = #epl.sharding<@mesh, [["tensor"], []]>})
      -> tensor<16x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x16xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
    // CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16x16xf32>) -> tensor<16x16xf32>
    // CHECK: %[[Z1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16x4xf32>) -> tensor<16x4xf32>
    // CHECK: %[[H:.*]] = linalg.generic {{.*}} outs(%[[Z1]] : tensor<16x4xf32>)
    %h = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w1 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%z : tensor<16x16xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<16x16xf32>
    // CHECK-NOT: epl.all_gather
    // CHECK-NOT: arith.select
    // CHECK: %[[O:.*]] = linalg.generic {{.*}} ins(%[[H]], %{{.*}} : tensor<16x4xf32>, tensor<4x16xf32>) outs(%[[Z]] : tensor<16x16xf32>)
    %o = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h, %w2 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%z : tensor<16x16xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<16x16xf32>
    // CHECK: %[[R:.*]] = epl.all_reduce %[[O]]
    // CHECK-NOT: epl.all_gather
    // CHECK: return %[[R]]
    return %o : tensor<16x16xf32>
  }
}
