// RUN: epl-opt %s --epl-empty-tensor-per-use --split-input-file | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>

// One empty tensor for a run of element-wise ops and for both results of
// a fused op: each use gets its own, made right before it.
// CHECK-LABEL: func @shared
func.func @shared(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  // CHECK: %[[E0:.*]] = tensor.empty() : tensor<4x16xf32>
  // CHECK-NEXT: %[[A:.*]] = linalg.generic {{.*}} outs(%[[E0]] : tensor<4x16xf32>)
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x16xf32>
  // CHECK: %[[E1:.*]] = tensor.empty() : tensor<4x16xf32>
  // CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<4x16xf32>
  // CHECK-NEXT: linalg.generic {{.*}} outs(%[[E1]], %[[E2]] : tensor<4x16xf32>, tensor<4x16xf32>)
  %b:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x16xf32>) outs(%e, %e : tensor<4x16xf32>, tensor<4x16xf32>) {
  ^bb0(%in: f32, %o0: f32, %o1: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %in, %m : f32, f32
  } -> (tensor<4x16xf32>, tensor<4x16xf32>)
  // CHECK-NOT: tensor.empty
  return %b#0, %b#1 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Dynamic sizes: each copy has the original's; a use in a loop's body gets
// its copy before the loop, in the original's block.
// CHECK-LABEL: func @dynamic_and_nested
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[N:.*]]: index)
func.func @dynamic_and_nested(%x: tensor<?xf32>, %n: index) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty(%n) : tensor<?xf32>
  // CHECK: %[[E0:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
  // CHECK-NEXT: linalg.copy ins(%[[X]] : tensor<?xf32>) outs(%[[E0]] : tensor<?xf32>)
  %c = linalg.copy ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  // CHECK: %[[E1:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
  // CHECK-NEXT: scf.for {{.*}} iter_args(%[[T:.*]] = %[[X]])
  // CHECK: linalg.copy ins(%[[T]] : tensor<?xf32>) outs(%[[E1]] : tensor<?xf32>)
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %x) -> tensor<?xf32> {
    %y = linalg.copy ins(%t : tensor<?xf32>) outs(%e : tensor<?xf32>) -> tensor<?xf32>
    scf.yield %y : tensor<?xf32>
  }
  return %c, %r : tensor<?xf32>, tensor<?xf32>
}

// -----

// One use: the empty tensor moves right before it (torch-mlir makes a
// reduction's before the ops that compute its input).
// CHECK-LABEL: func @one_use
func.func @one_use(%x: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK-NEXT: %[[N:.*]] = arith.negf
  // CHECK-NEXT: %[[Y:.*]] = linalg.copy
  // CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<8xf32>
  // CHECK-NEXT: linalg.copy ins(%[[Y]] : tensor<8xf32>) outs(%[[E]] : tensor<8xf32>)
  // CHECK-NOT: tensor.empty
  %e = tensor.empty() : tensor<8xf32>
  %n = arith.negf %x : tensor<8xf32>
  %y = linalg.copy ins(%n : tensor<8xf32>) outs(%x : tensor<8xf32>) -> tensor<8xf32>
  %c = linalg.copy ins(%y : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %c : tensor<8xf32>
}
