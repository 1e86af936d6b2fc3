// RUN: epl-opt %s --epl-sharding-propagation --epl-insert-collectives --split-input-file | FileCheck %s

// Partitioning by the same sharding rules as propagation: named linalg ops
// keep their form, a pad or a slice keeps a split of a dimension it does
// not cut (rules are read on the global shapes, before anything is local).

module {
  epl.mesh @mesh ["tensor" = 2]
  // CHECK-LABEL: func.func @named_and_pad
  func.func @named_and_pad(%x: tensor<8x4xf32>,
                           %w: tensor<4x6xf32> {epl.sharding = #epl.sharding<@mesh, [[], ["tensor"]]>})
      -> tensor<10x6xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x6xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
    // CHECK: %[[Y:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<4x3xf32>) outs(%{{.*}} : tensor<8x3xf32>) -> tensor<8x3xf32>
    %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
    // CHECK-NOT: epl.all_gather
    // CHECK: tensor.pad %[[Y]] low[1, 0] high[1, 0]
    // CHECK: tensor<8x3xf32> to tensor<10x3xf32>
    %p = tensor.pad %y low[1, 0] high[1, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    } : tensor<8x6xf32> to tensor<10x6xf32>
    return %p : tensor<10x6xf32>
  }
}

// -----

module {
  epl.mesh @mesh ["tensor" = 2]
  // CHECK-LABEL: func.func @slices
  func.func @slices(%x: tensor<8x16xf32> {epl.sharding = #epl.sharding<@mesh, [["tensor"], []]>})
      -> (tensor<8x8xf32>, tensor<4x16xf32>) {
    // The rows stay split; the cut columns are whole.
    // CHECK: tensor.extract_slice %{{.*}}[0, 0] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
    %a = tensor.extract_slice %x[0, 0] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
    // Cutting the split rows needs them whole first.
    // CHECK: %[[G:.*]] = epl.all_gather %{{.*}} on @mesh over ["tensor"] dim 0 : tensor<4x16xf32> -> tensor<8x16xf32>
    // CHECK: tensor.extract_slice %[[G]][4, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
    %b = tensor.extract_slice %x[4, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
    return %a, %b : tensor<8x8xf32>, tensor<4x16xf32>
  }
}

// -----

// One reduction of a partial sum serves every op that reads it, and belongs
// to the earliest phase among them: here a weight gradient reads it first
// in program order, but an input gradient needs it too, so a pipeline
// schedule must not put it off with the weight gradients.
#id = affine_map<(i, j) -> (i, j)>
#cols = affine_map<(i, j) -> (j)>
module {
  epl.mesh @mesh ["tensor" = 2]
  // CHECK-LABEL: func.func @reduced_once
  // CHECK: %[[R:.*]] = epl.all_reduce %{{.*}} on @mesh over ["tensor"] sum {epl.phase = #epl.phase<backward_input>} : tensor<8x6xf32>
  // CHECK-NOT: epl.all_reduce
  // CHECK: ins(%[[R]] : tensor<8x6xf32>) {{.*}}epl.phase = #epl.phase<backward_weight>
  // CHECK: ins(%[[R]] : tensor<8x6xf32>) {{.*}}epl.phase = #epl.phase<backward_input>
  func.func @reduced_once(%dy: tensor<8x4xf32>,
                          %w: tensor<6x4xf32> {epl.sharding = #epl.sharding<@mesh, [[], ["tensor"]]>})
      -> (tensor<6xf32>, tensor<8x6xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x6xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
    %wt = tensor.empty() : tensor<4x6xf32>
    %t = linalg.transpose ins(%w : tensor<6x4xf32>) outs(%wt : tensor<4x6xf32>) permutation = [1, 0]
    %dx = linalg.matmul {epl.phase = #epl.phase<backward_input>}
        ins(%dy, %t : tensor<8x4xf32>, tensor<4x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
    %eb = tensor.empty() : tensor<6xf32>
    %zb = linalg.fill ins(%zero : f32) outs(%eb : tensor<6xf32>) -> tensor<6xf32>
    %db = linalg.generic {indexing_maps = [#id, #cols], iterator_types = ["reduction", "parallel"]}
        ins(%dx : tensor<8x6xf32>) outs(%zb : tensor<6xf32>) attrs = {epl.phase = #epl.phase<backward_weight>} {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<6xf32>
    %dz = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%dx : tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) attrs = {epl.phase = #epl.phase<backward_input>} {
    ^bb0(%v: f32, %o: f32):
      %s = math.tanh %v : f32
      linalg.yield %s : f32
    } -> tensor<8x6xf32>
    return %db, %dz : tensor<6xf32>, tensor<8x6xf32>
  }
}

// -----

// A cast to a dynamic size makes its tensor whole: the runtime moves only
// static shapes, so it is gathered before the cast.
module {
  epl.mesh @mesh ["tensor" = 2]
  // CHECK-LABEL: func.func @cast_to_dynamic
  func.func @cast_to_dynamic(%x: tensor<8x16xf32> {epl.sharding = #epl.sharding<@mesh, [["tensor"], []]>},
                             %y: tensor<8x16xf32> {epl.sharding = #epl.sharding<@mesh, [[], ["tensor"]]>})
      -> (tensor<?x16xf32>, tensor<?x16xf32>) {
    // CHECK: %[[G:.*]] = epl.all_gather %{{.*}} on @mesh over ["tensor"] dim 0 : tensor<4x16xf32> -> tensor<8x16xf32>
    // CHECK: tensor.cast %[[G]] : tensor<8x16xf32> to tensor<?x16xf32>
    %a = tensor.cast %x : tensor<8x16xf32> to tensor<?x16xf32>
    // CHECK: %[[H:.*]] = epl.all_gather %{{.*}} on @mesh over ["tensor"] dim 1 : tensor<8x8xf32> -> tensor<8x16xf32>
    // CHECK: tensor.cast %[[H]] : tensor<8x16xf32> to tensor<?x16xf32>
    %b = tensor.cast %y : tensor<8x16xf32> to tensor<?x16xf32>
    return %a, %b : tensor<?x16xf32>, tensor<?x16xf32>
  }
}

// -----

// A gradient accumulated into another that is split the other way, both
// partial sums over "data" (a tied embedding under data x tensor
// parallelism): the pending sum moves with the split (an all_to_all, which
// commutes with the sum) and is reduced once, at the end. Before, it was
// reduced first and could not be made partial again.
// CHECK-LABEL: func.func @accumulate_across_splits
// CHECK-NOT: epl.all_reduce
// CHECK: epl.all_to_all %{{.*}} on @mesh over ["tensor"] split 1 concat 0 : tensor<4x6xf32> -> tensor<8x3xf32>
// CHECK-NOT: epl.all_reduce
// CHECK: linalg.generic
// CHECK: %[[R:.*]] = epl.all_reduce %{{.*}} on @mesh over ["data"] sum : tensor<8x3xf32>
// CHECK-NEXT: return %[[R]]
#bvj_d = affine_map<(b, v, j) -> (b, v)>
#bvj_h = affine_map<(b, v, j) -> (b, j)>
#bvj_g = affine_map<(b, v, j) -> (j, v)>
#vj = affine_map<(v, j) -> (v, j)>
#vj_t = affine_map<(v, j) -> (j, v)>
#bjv_a = affine_map<(b, j, v) -> (b, j)>
#bjv_o = affine_map<(b, j, v) -> (b, v)>
#bjv_g = affine_map<(b, j, v) -> (v, j)>
module {
  epl.mesh @mesh ["data" = 2, "tensor" = 2]
  func.func @accumulate_across_splits(
      %d: tensor<4x8xf32> {epl.sharding = #epl.sharding<@mesh, [["data"], ["tensor"]]>},
      %h: tensor<4x6xf32> {epl.sharding = #epl.sharding<@mesh, [["data"], []]>},
      %a: tensor<4x6xf32> {epl.sharding = #epl.sharding<@mesh, [["data"], ["tensor"]]>},
      %o: tensor<4x8xf32> {epl.sharding = #epl.sharding<@mesh, [["data"], []]>}) -> tensor<8x6xf32> {
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<6x8xf32>
    %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<6x8xf32>) -> tensor<6x8xf32>
    %g1 = linalg.generic {indexing_maps = [#bvj_d, #bvj_h, #bvj_g], iterator_types = ["reduction", "parallel", "parallel"]}
        ins(%d, %h : tensor<4x8xf32>, tensor<4x6xf32>) outs(%z1 : tensor<6x8xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<6x8xf32>
    %e2 = tensor.empty() : tensor<8x6xf32>
    %g1t = linalg.generic {indexing_maps = [#vj_t, #vj], iterator_types = ["parallel", "parallel"]}
        ins(%g1 : tensor<6x8xf32>) outs(%e2 : tensor<8x6xf32>) {
    ^bb0(%x: f32, %o2: f32):
      linalg.yield %x : f32
    } -> tensor<8x6xf32>
    %g = linalg.generic {indexing_maps = [#bjv_a, #bjv_o, #bjv_g], iterator_types = ["reduction", "parallel", "parallel"]}
        ins(%a, %o : tensor<4x6xf32>, tensor<4x8xf32>) outs(%g1t : tensor<8x6xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<8x6xf32>
    return %g : tensor<8x6xf32>
  }
}

// -----

// The size of a dimension is the global one: a constant where it is static
// (no gather of a split tensor to ask it).
module {
  epl.mesh @mesh ["tensor" = 2]
  // CHECK-LABEL: func.func @dim_of_split
  // CHECK-NOT: epl.all_gather
  // CHECK-DAG: %[[N:.*]] = arith.constant 8 : index
  // CHECK-DAG: %[[M:.*]] = arith.constant 16 : index
  // CHECK: return %[[N]], %[[M]]
  func.func @dim_of_split(%x: tensor<8x16xf32> {epl.sharding = #epl.sharding<@mesh, [[], ["tensor"]]>})
      -> (index, index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = tensor.dim %x, %c0 : tensor<8x16xf32>
    %m = tensor.dim %x, %c1 : tensor<8x16xf32>
    return %n, %m : index, index
  }
  // An index out of range is undefined only where it runs: left as it is.
  // CHECK-LABEL: func.func @dim_out_of_range
  // CHECK: tensor.dim %{{.*}}, %{{.*}} : tensor<8x8xf32>
  func.func @dim_out_of_range(%x: tensor<8x16xf32> {epl.sharding = #epl.sharding<@mesh, [[], ["tensor"]]>})
      -> index {
    %c5 = arith.constant 5 : index
    %n = tensor.dim %x, %c5 : tensor<8x16xf32>
    return %n : index
  }
}
