// RUN: epl-opt %s --inline | FileCheck %s

// EPL's ops inline like upstream ones: gradient accumulation inlines the
// micro-batch's gradient function, which holds an embedding's scatter-add
// or a user's sharding constraint, before sharding propagation (which
// cannot look into calls).

// CHECK-LABEL: func.func @step
// CHECK-NOT: call
// CHECK: epl.sharding_constraint
// CHECK: epl.scatter_add
// CHECK: return
epl.mesh @mesh ["data" = 2]
func.func private @grad(%u: tensor<4xf32>, %i: tensor<4xi64>, %d: tensor<8xf32>) -> tensor<8xf32> {
  %c = epl.sharding_constraint %u <@mesh, [["data"]]> : tensor<4xf32>
  %r = epl.scatter_add %c at (%i) into %d : tensor<4xf32>, tensor<4xi64> into tensor<8xf32>
  return %r : tensor<8xf32>
}
func.func @step(%u: tensor<4xf32>, %i: tensor<4xi64>, %d: tensor<8xf32>) -> tensor<8xf32> {
  %r = call @grad(%u, %i, %d) : (tensor<4xf32>, tensor<4xi64>, tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
