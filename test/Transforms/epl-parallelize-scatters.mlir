// RUN: epl-opt %s --epl-parallelize-scatters --split-input-file | FileCheck %s

// Cross-entropy's label pick: each example's row of the scores is its own;
// one iteration per example scatters the example's update into its row.
// CHECK-LABEL: func.func @label_pick
// CHECK-SAME: (%[[U:.*]]: tensor<8xf32>, %[[L:.*]]: tensor<8xi64>, %[[Z:.*]]: tensor<8x4xf32>)
// CHECK: %[[R:.*]] = scf.forall (%[[B:.*]]) in (8) shared_outs(%[[OUT:.*]] = %[[Z]]) -> (tensor<8x4xf32>)
// CHECK-DAG: %[[LB:.*]] = tensor.extract_slice %[[L]][%[[B]]] [1] [1] : tensor<8xi64> to tensor<i64>
// CHECK-DAG: %[[UB:.*]] = tensor.extract_slice %[[U]][%[[B]]] [1] [1] : tensor<8xf32> to tensor<f32>
// CHECK-DAG: %[[ROW:.*]] = tensor.extract_slice %[[OUT]][%[[B]], 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<4xf32>
// CHECK: %[[S:.*]] = epl.scatter_add %[[UB]] at (%[[LB]]) into %[[ROW]] : tensor<f32>, tensor<i64> into tensor<4xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[S]] into %[[OUT]][%[[B]], 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<8x4xf32>
// CHECK: return %[[R]]
func.func @label_pick(%u: tensor<8xf32>, %l: tensor<8xi64>, %z: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %r = epl.scatter_add %u at (%l) into %z
         {dest_batching_dims = array<i64: 0>, updates_batching_dims = array<i64: 0>}
         : tensor<8xf32>, tensor<8xi64> into tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// An embedding table's gradient: column d of the table gets the updates at
// position d of the innermost dimension, from every example and position,
// in their order. The table's rows may be dynamic.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[U:.*]]: tensor<2x3x5xf32>, %[[I:.*]]: tensor<2x3x5xi64>, %[[Z:.*]]: tensor<?x5xf32>)
// CHECK: scf.forall (%[[D:.*]]) in (5) shared_outs(%[[OUT:.*]] = %[[Z]]) -> (tensor<?x5xf32>)
// CHECK-DAG: tensor.extract_slice %[[I]][0, 0, %[[D]]] [2, 3, 1] [1, 1, 1] : tensor<2x3x5xi64> to tensor<2x3xi64>
// CHECK-DAG: tensor.extract_slice %[[U]][0, 0, %[[D]]] [2, 3, 1] [1, 1, 1] : tensor<2x3x5xf32> to tensor<2x3xf32>
// CHECK-DAG: %[[ROWS:.*]] = tensor.dim %[[OUT]], %c0
// CHECK-DAG: %[[COL:.*]] = tensor.extract_slice %[[OUT]][0, %[[D]]] [%[[ROWS]], 1] [1, 1] : tensor<?x5xf32> to tensor<?xf32>
// CHECK: %[[S:.*]] = epl.scatter_add %{{.*}} at (%{{.*}}) into %[[COL]] : tensor<2x3xf32>, tensor<2x3xi64> into tensor<?xf32>
// CHECK: tensor.parallel_insert_slice %[[S]] into %[[OUT]][0, %[[D]]] [%[[ROWS]], 1] [1, 1] : tensor<?xf32> into tensor<?x5xf32>
func.func @embedding(%u: tensor<2x3x5xf32>, %i: tensor<2x3x5xi64>, %z: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %r = epl.scatter_add %u at (%i) into %z
         {dest_batching_dims = array<i64: 1>, updates_batching_dims = array<i64: 2>}
         : tensor<2x3x5xf32>, tensor<2x3x5xi64> into tensor<?x5xf32>
  return %r : tensor<?x5xf32>
}

// -----

// Two batching dimensions: one iteration per pair; nothing indexed is left
// of a destination all of whose dimensions are batching ones but the last.
// CHECK-LABEL: func.func @two_batching_dims
// CHECK: scf.forall (%[[A:.*]], %[[B:.*]]) in (3, 2)
// CHECK: tensor.extract_slice %{{.*}}[%[[B]], %[[A]]] [1, 1] [1, 1] : tensor<2x3xf32> to tensor<f32>
// CHECK: tensor.extract_slice %{{.*}}[%[[A]], %[[B]], 0] [1, 1, 7] [1, 1, 1] : tensor<3x2x7xf32> to tensor<7xf32>
// CHECK: epl.scatter_add %{{.*}} : tensor<f32>, tensor<i64> into tensor<7xf32>
func.func @two_batching_dims(%u: tensor<2x3xf32>, %i: tensor<2x3xi64>, %z: tensor<3x2x7xf32>) -> tensor<3x2x7xf32> {
  %r = epl.scatter_add %u at (%i) into %z
         {dest_batching_dims = array<i64: 0, 1>, updates_batching_dims = array<i64: 1, 0>}
         : tensor<2x3xf32>, tensor<2x3xi64> into tensor<3x2x7xf32>
  return %r : tensor<3x2x7xf32>
}

// -----

// Without batching dimensions, two ids may name one row: nothing to split.
// CHECK-LABEL: func.func @no_batching
// CHECK-NOT: scf.forall
// CHECK: epl.scatter_add
func.func @no_batching(%u: tensor<2xf32>, %i: tensor<2xi64>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %r = epl.scatter_add %u at (%i) into %z : tensor<2xf32>, tensor<2xi64> into tensor<4xf32>
  return %r : tensor<4xf32>
}
