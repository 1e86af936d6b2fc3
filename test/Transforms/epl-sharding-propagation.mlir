// RUN: epl-opt %s --epl-sharding-propagation | FileCheck %s

// Rules from indexing maps: the batch loop of x @ w carries "data" to the
// result; the weight gradient x^T @ dy contracts over it, so it is a
// pending partial sum over "data".

#xk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#gk = affine_map<(k, n, m) -> (m, k)>
#gm = affine_map<(k, n, m) -> (m, n)>
#gw = affine_map<(k, n, m) -> (k, n)>

module {
  epl.mesh @mesh ["data" = 4]
  // CHECK-LABEL: func.func @f
  // Arguments without a seed get what propagation found.
  // CHECK-SAME: %{{.*}}: tensor<4x3xf32> {epl.sharding = #epl.sharding<@mesh, {{\[\[}}], []]>}
  // CHECK-SAME: %{{.*}}: tensor<8x3xf32> {epl.sharding = #epl.sharding<@mesh, {{\[\[}}"data"], []]>}
  // Results are laid out as computed, partial sums resolved: the weight
  // gradient is whole.
  // CHECK-SAME: -> (tensor<8x3xf32> {epl.sharding = #epl.sharding<@mesh, {{\[\[}}"data"], []]>}, tensor<4x3xf32> {epl.sharding = #epl.sharding<@mesh, {{\[\[}}], []]>})
  func.func @f(%x: tensor<8x4xf32> {epl.sharding = #epl.sharding<@mesh, [["data"], []]>},
               %w: tensor<4x3xf32>, %dy: tensor<8x3xf32>) -> (tensor<8x3xf32>, tensor<4x3xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x3xf32>
    // CHECK: linalg.generic {{.*}}epl.loop_axes = {{\[\[}}"data"], [], []], epl.shardings = [#epl.sharding<@mesh, {{\[\[}}"data"], []]>]
    %y = linalg.generic {indexing_maps = [#xk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<8x4xf32>, tensor<4x3xf32>) outs(%e : tensor<8x3xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<8x3xf32>
    %ew = tensor.empty() : tensor<4x3xf32>
    // CHECK: linalg.generic {{.*}}epl.loop_axes = {{\[\[}}], [], ["data"]], epl.shardings = [#epl.sharding<@mesh, {{\[\[}}], []], partial sum ["data"]>]
    %dw = linalg.generic {indexing_maps = [#gk, #gm, #gw], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %dy : tensor<8x4xf32>, tensor<8x3xf32>) outs(%ew : tensor<4x3xf32>) {
    ^bb0(%a: f32, %g: f32, %acc: f32):
      %p = arith.mulf %a, %g : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    return %y, %dw : tensor<8x3xf32>, tensor<4x3xf32>
  }
}
