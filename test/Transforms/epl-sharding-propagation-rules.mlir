// RUN: epl-opt %s --epl-sharding-propagation --split-input-file | FileCheck %s
// RUN: epl-opt %s --epl-sharding-propagation=print-decisions --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// Sharding rules per op family (ShardingRuleOpInterface), and how
// propagation settles between them.

// Reshapes: the factors are the dimensions of the bigger side, so a split
// of the merged dimension [h*d] is a split of its major factor, the heads,
// and survives the round trip (attention's [b, s, h*d] -> [b, s, h, d]).
module {
  epl.mesh @mesh ["tensor" = 4]
  // CHECK-LABEL: func.func @heads
  func.func @heads(%x: tensor<8x16x64xf32> {epl.sharding = #epl.sharding<@mesh, [[], [], ["tensor"]]>})
      -> tensor<8x16x64xf32> {
    // CHECK: tensor.expand_shape {{.*}}epl.loop_axes = {{\[\[}}], [], ["tensor"], []], epl.shardings = [#epl.sharding<@mesh, {{\[\[}}], [], ["tensor"], []]>]
    // REMARK: remark: factors sharded as {{\[\[}}], [], ["tensor"], []]
    %e = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [8, 16, 4, 16]
        : tensor<8x16x64xf32> into tensor<8x16x4x16xf32>
    // CHECK: tensor.collapse_shape {{.*}}epl.shardings = [#epl.sharding<@mesh, {{\[\[}}], [], ["tensor"]]>]
    // REMARK: remark: factors sharded as {{\[\[}}], [], ["tensor"], []]; factor 2 from operand 0 (propagated 1 op(s) from a seed)
    %c = tensor.collapse_shape %e [[0], [1], [2, 3]]
        : tensor<8x16x4x16xf32> into tensor<8x16x64xf32>
    return %c : tensor<8x16x64xf32>
  }
}

// -----

// To and from a 0-d tensor (a [1, 1] parameter broadcast): no groups, and
// nothing to shard; the reshapes get replicated shardings like any other.
module {
  epl.mesh @mesh ["tensor" = 4]
  // CHECK-LABEL: func.func @scalar
  func.func @scalar(%x: tensor<1x1xf32>) -> tensor<1x1xf32> {
    // CHECK: tensor.collapse_shape {{.*}}epl.shardings = [#epl.sharding<@mesh, []>]
    %c = tensor.collapse_shape %x [] : tensor<1x1xf32> into tensor<f32>
    // CHECK: tensor.expand_shape {{.*}}epl.shardings = [#epl.sharding<@mesh, {{\[\[}}], []]>]
    %e = tensor.expand_shape %c [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
    return %e : tensor<1x1xf32>
  }
}

// -----

// A split of a minor factor is no block of the merged dimension: the
// collapsed value stays whole (and the conflict is counted).
module {
  epl.mesh @mesh ["tensor" = 4]
  // CHECK-LABEL: func.func @minor
  func.func @minor(%x: tensor<8x64xf32> {epl.sharding = #epl.sharding<@mesh, [[], ["tensor"]]>})
      -> tensor<512xf32> {
    // CHECK: tensor.collapse_shape {{.*}}epl.loop_axes = {{\[\[}}], []], epl.shardings = [#epl.sharding<@mesh, {{\[\[}}]]>]
    %c = tensor.collapse_shape %x [[0, 1]] : tensor<8x64xf32> into tensor<512xf32>
    return %c : tensor<512xf32>
  }
}

// -----

// Slices keep the split of a dimension they take whole; a cut dimension
// is whole on every device. A concat keeps every dimension but the one it
// joins along.
module {
  epl.mesh @mesh ["tensor" = 2]
  // CHECK-LABEL: func.func @slices
  func.func @slices(%x: tensor<8x16xf32> {epl.sharding = #epl.sharding<@mesh, [["tensor"], []]>},
                    %y: tensor<4x16xf32> {epl.sharding = #epl.sharding<@mesh, [[], ["tensor"]]>})
      -> (tensor<8x8xf32>, tensor<4x16xf32>, tensor<8x16xf32>) {
    // CHECK: tensor.extract_slice {{.*}}epl.shardings = [#epl.sharding<@mesh, {{\[\[}}"tensor"], []]>]
    %a = tensor.extract_slice %x[0, 0] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
    // CHECK: tensor.extract_slice {{.*}}epl.shardings = [#epl.sharding<@mesh, {{\[\[}}], []]>]
    %b = tensor.extract_slice %x[4, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
    // CHECK: tensor.concat {{.*}}epl.shardings = [#epl.sharding<@mesh, {{\[\[}}], ["tensor"]]>]
    %c = tensor.concat dim(0) %y, %y : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
    return %a, %b, %c : tensor<8x8xf32>, tensor<4x16xf32>, tensor<8x16xf32>
  }
}

// -----

// Revision: @revise's matmul is visited before anything is known about w,
// but w is not frozen whole: the add after it brings the seed of w2, and
// the matmul is revisited with w split by columns (the old propagation kept
// the first layout a value got: w whole, y split by rows only).
#xk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>
module {
  epl.mesh @mesh ["data" = 2, "tensor" = 2]
  // CHECK-LABEL: func.func @revise
  // CHECK-SAME: tensor<4x6xf32> {epl.sharding = #epl.sharding<@mesh, {{\[\[}}], ["tensor"]]>}
  func.func @revise(%x: tensor<8x4xf32> {epl.sharding = #epl.sharding<@mesh, [["data"], []]>},
                    %w: tensor<4x6xf32>,
                    %w2: tensor<4x6xf32> {epl.sharding = #epl.sharding<@mesh, [[], ["tensor"]]>})
      -> (tensor<8x6xf32>, tensor<4x6xf32>) {
    %e = tensor.empty() : tensor<8x6xf32>
    // CHECK: linalg.generic {{.*}}epl.loop_axes = {{\[\[}}"data"], ["tensor"], []], epl.shardings = [#epl.sharding<@mesh, {{\[\[}}"data"], ["tensor"]]>]
    %y = linalg.generic {indexing_maps = [#xk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%e : tensor<8x6xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<8x6xf32>
    %ew = tensor.empty() : tensor<4x6xf32>
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w, %w2 : tensor<4x6xf32>, tensor<4x6xf32>) outs(%ew : tensor<4x6xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<4x6xf32>
    return %y, %s : tensor<8x6xf32>, tensor<4x6xf32>
  }
}

// -----

// Priorities: a constraint's own value is the strongest evidence, and
// what propagates from anything is weaker than a seed. The add follows the
// constraint's rows; the product z = x @ w keeps w's seeded columns (the
// rows reach it only propagated), so x stays whole and z is resharded for
// the add (by epl-insert-collectives).
#xk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>
module {
  epl.mesh @mesh ["tensor" = 2]
  // CHECK-LABEL: func.func @priorities
  // CHECK-SAME: %{{.*}}: tensor<8x4xf32> {epl.sharding = #epl.sharding<@mesh, {{\[\[}}], []]>}
  // CHECK-SAME: %{{.*}}: tensor<4x6xf32> {epl.sharding = #epl.sharding<@mesh, {{\[\[}}], ["tensor"]]>}
  func.func @priorities(%x: tensor<8x4xf32>,
                        %w: tensor<4x6xf32> {epl.sharding = #epl.sharding<@mesh, [[], ["tensor"]]>},
                        %u: tensor<8x6xf32>) -> tensor<8x6xf32> {
    %e = tensor.empty() : tensor<8x6xf32>
    // CHECK: linalg.generic {{.*}}epl.loop_axes = {{\[\[}}], ["tensor"], []]
    // REMARK: remark: factors sharded as {{\[\[}}], ["tensor"], []]; factor 1 from operand 1 (a seed)
    %z = linalg.generic {indexing_maps = [#xk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%e : tensor<8x6xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<8x6xf32>
    %c = epl.sharding_constraint %u <@mesh, [["tensor"], []]> : tensor<8x6xf32>
    // CHECK: linalg.generic {{.*}}epl.loop_axes = {{\[\[}}"tensor"], []]
    // REMARK: remark: factors sharded as {{\[\[}}"tensor"], []]; factor 0 from operand 1 (a sharding constraint)
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%z, %c : tensor<8x6xf32>, tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<8x6xf32>
    return %s : tensor<8x6xf32>
  }
}

// -----

// Partial sums pass through element-wise ops linear in them (a mean's
// scaling, a sum of two), not through an affine one (a bias would be added
// once per device) or a product of two. A partial sum several ops read is
// reduced where it is made, once, even for its linear readers: passed on,
// it would be reduced on each path.
#rows = affine_map<(i, j) -> (i, j)>
#cols = affine_map<(i, j) -> (j)>
#id = affine_map<(j) -> (j)>
module {
  epl.mesh @mesh ["data" = 2]
  // CHECK-LABEL: func.func @linear
  func.func @linear(%x: tensor<8x3xf32> {epl.sharding = #epl.sharding<@mesh, [["data"], []]>},
                    %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
    %e = tensor.empty() : tensor<3xf32>
    %half = arith.constant 0.5 : f32
    // CHECK: iterator_types = ["reduction", "parallel"]{{.*}}epl.shardings = [#epl.sharding<@mesh, {{\[\[}}]], partial sum ["data"]>]
    %s = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
        ins(%x : tensor<8x3xf32>) outs(%e : tensor<3xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %t = arith.addf %acc, %v : f32
      linalg.yield %t : f32
    } -> tensor<3xf32>
    // CHECK: ins(%{{.*}} : tensor<3xf32>) outs({{.*}}epl.shardings = [#epl.sharding<@mesh, {{\[\[}}]], partial sum ["data"]>]
    %mean = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%s : tensor<3xf32>) outs(%e : tensor<3xf32>) {
    ^bb0(%v: f32, %o: f32):
      %t = arith.mulf %v, %half : f32
      linalg.yield %t : f32
    } -> tensor<3xf32>
    // CHECK: iterator_types = ["reduction", "parallel"]{{.*}}epl.shardings = [#epl.sharding<@mesh, {{\[\[}}]], partial sum ["data"]>]
    %s2 = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
        ins(%x : tensor<8x3xf32>) outs(%e : tensor<3xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %t = arith.addf %acc, %v : f32
      linalg.yield %t : f32
    } -> tensor<3xf32>
    // CHECK: ins(%{{.*}} : tensor<3xf32>) outs({{.*}}epl.shardings = [#epl.sharding<@mesh, {{\[\[}}]]>]
    %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%s2 : tensor<3xf32>) outs(%e : tensor<3xf32>) {
    ^bb0(%v: f32, %o: f32):
      %t = arith.mulf %v, %half : f32
      linalg.yield %t : f32
    } -> tensor<3xf32>
    // CHECK: ins(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>) outs({{.*}}epl.shardings = [#epl.sharding<@mesh, {{\[\[}}]]>]
    %biased = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%s2, %b : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
    ^bb0(%v: f32, %w: f32, %o: f32):
      %t = arith.addf %v, %w : f32
      linalg.yield %t : f32
    } -> tensor<3xf32>
    // CHECK: ins(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>) outs({{.*}}epl.shardings = [#epl.sharding<@mesh, {{\[\[}}]]>]
    %square = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%s2, %s2 : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
    ^bb0(%v: f32, %w: f32, %o: f32):
      %t = arith.mulf %v, %w : f32
      linalg.yield %t : f32
    } -> tensor<3xf32>
    return %mean, %scaled, %biased, %square : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  }
}
