// RUN: epl-opt %s | epl-opt | FileCheck %s
// RUN: epl-opt %s --mlir-print-op-generic | epl-opt | FileCheck %s

// CHECK: epl.mesh @mesh ["data" = 2, "tensor" = 4]
epl.mesh @mesh ["data" = 2, "tensor" = 4]
// CHECK: epl.mesh @pipe ["stage" = 2, "data" = 2]
epl.mesh @pipe ["stage" = 2, "data" = 2]

// CHECK-LABEL: func @sharding_constraint
func.func @sharding_constraint(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: epl.sharding_constraint %{{.*}} <@mesh, {{\[\[}}"data"], ["tensor"]]> : tensor<8x16xf32>
  %0 = epl.sharding_constraint %x <@mesh, [["data"], ["tensor"]]> : tensor<8x16xf32>
  // CHECK: epl.sharding_constraint %{{.*}} <@mesh, {{\[\[}}], []], partial sum ["tensor", "data"]> : tensor<8x16xf32>
  %1 = epl.sharding_constraint %0 <@mesh, [[], []], partial sum ["tensor", "data"]> : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// CHECK-LABEL: func @all_reduce
func.func @all_reduce(%x: tensor<4x8xf32>, %i: tensor<3xi32>) -> (tensor<4x8xf32>, tensor<3xi32>) {
  // CHECK: %[[S:.*]] = epl.all_reduce %{{.*}} on @mesh over ["tensor"] sum : tensor<4x8xf32>
  %0 = epl.all_reduce %x on @mesh over ["tensor"] sum : tensor<4x8xf32>
  // CHECK: %[[M:.*]] = epl.all_reduce %[[S]] on @mesh over ["data", "tensor"] mean : tensor<4x8xf32>
  %1 = epl.all_reduce %0 on @mesh over ["data", "tensor"] mean : tensor<4x8xf32>
  // CHECK: epl.all_reduce %{{.*}} on @mesh over ["data"] max : tensor<3xi32>
  %2 = epl.all_reduce %i on @mesh over ["data"] max : tensor<3xi32>
  // CHECK: epl.all_reduce %{{.*}} on @mesh over ["data"] min : tensor<3xi32>
  %3 = epl.all_reduce %2 on @mesh over ["data"] min : tensor<3xi32>
  return %1, %3 : tensor<4x8xf32>, tensor<3xi32>
}

// CHECK-LABEL: func @all_gather
func.func @all_gather(%x: tensor<4x2xf32>, %d: tensor<?x2xf32>) -> (tensor<4x8xf32>, tensor<8x2xf32>, tensor<?x2xf32>) {
  // CHECK: epl.all_gather %{{.*}} on @mesh over ["tensor"] dim 1 : tensor<4x2xf32> -> tensor<4x8xf32>
  %0 = epl.all_gather %x on @mesh over ["tensor"] dim 1 : tensor<4x2xf32> -> tensor<4x8xf32>
  // Gathering over both axes multiplies by the whole mesh (2 x 4).
  // CHECK: epl.all_gather %{{.*}} on @mesh over ["data"] dim 0 : tensor<4x2xf32> -> tensor<8x2xf32>
  %1 = epl.all_gather %x on @mesh over ["data"] dim 0 : tensor<4x2xf32> -> tensor<8x2xf32>
  // Dynamic sizes are checked at run time.
  // CHECK: epl.all_gather %{{.*}} on @mesh over ["data", "tensor"] dim 0 : tensor<?x2xf32> -> tensor<?x2xf32>
  %2 = epl.all_gather %d on @mesh over ["data", "tensor"] dim 0 : tensor<?x2xf32> -> tensor<?x2xf32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<8x2xf32>, tensor<?x2xf32>
}

// CHECK-LABEL: func @reduce_scatter
func.func @reduce_scatter(%x: tensor<16x4xf32>) -> (tensor<4x4xf32>, tensor<2x4xf32>) {
  // CHECK: epl.reduce_scatter %{{.*}} on @mesh over ["tensor"] sum dim 0 : tensor<16x4xf32> -> tensor<4x4xf32>
  %0 = epl.reduce_scatter %x on @mesh over ["tensor"] sum dim 0 : tensor<16x4xf32> -> tensor<4x4xf32>
  // CHECK: epl.reduce_scatter %{{.*}} on @mesh over ["data", "tensor"] max dim 0 : tensor<16x4xf32> -> tensor<2x4xf32>
  %1 = epl.reduce_scatter %x on @mesh over ["data", "tensor"] max dim 0 : tensor<16x4xf32> -> tensor<2x4xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func @all_to_all
func.func @all_to_all(%x: tensor<8x32xf32>) -> (tensor<32x8xf32>, tensor<8x32xf32>) {
  // CHECK: epl.all_to_all %{{.*}} on @mesh over ["tensor"] split 1 concat 0 : tensor<8x32xf32> -> tensor<32x8xf32>
  %0 = epl.all_to_all %x on @mesh over ["tensor"] split 1 concat 0 : tensor<8x32xf32> -> tensor<32x8xf32>
  // CHECK: epl.all_to_all %{{.*}} on @mesh over ["data"] split 1 concat 1 : tensor<8x32xf32> -> tensor<8x32xf32>
  %1 = epl.all_to_all %x on @mesh over ["data"] split 1 concat 1 : tensor<8x32xf32> -> tensor<8x32xf32>
  return %0, %1 : tensor<32x8xf32>, tensor<8x32xf32>
}

// CHECK-LABEL: func @broadcast
func.func @broadcast(%x: tensor<784x512xf32>) -> tensor<784x512xf32> {
  // CHECK: epl.broadcast %{{.*}} on @mesh over ["data"] root 1 : tensor<784x512xf32>
  %0 = epl.broadcast %x on @mesh over ["data"] root 1 : tensor<784x512xf32>
  return %0 : tensor<784x512xf32>
}

// CHECK-LABEL: func @send_recv
func.func @send_recv(%x: tensor<8x512xf32>) -> tensor<8x512xf32> {
  // CHECK: epl.send %{{.*}} on @pipe over ["stage"] to 1 : tensor<8x512xf32>
  epl.send %x on @pipe over ["stage"] to 1 : tensor<8x512xf32>
  // CHECK: epl.send %{{.*}} on @pipe over ["stage"] to 1 tag 3 : tensor<8x512xf32>
  epl.send %x on @pipe over ["stage"] to 1 tag 3 : tensor<8x512xf32>
  // CHECK: epl.recv on @pipe over ["stage"] from 0 : tensor<8x512xf32>
  %0 = epl.recv on @pipe over ["stage"] from 0 : tensor<8x512xf32>
  // CHECK: epl.recv on @pipe over ["stage"] from 0 tag 3 : tensor<8x512xf32>
  %1 = epl.recv on @pipe over ["stage"] from 0 tag 3 : tensor<8x512xf32>
  // CHECK: epl.send %{{.*}} on @pipe over ["stage"] to 1 tag 3 grouped : tensor<8x512xf32>
  epl.send %x on @pipe over ["stage"] to 1 tag 3 grouped : tensor<8x512xf32>
  // CHECK: epl.recv on @pipe over ["stage"] from 0 grouped : tensor<8x512xf32>
  %2 = epl.recv on @pipe over ["stage"] from 0 grouped : tensor<8x512xf32>
  // CHECK: epl.send %{{.*}} on @pipe over ["stage"] to 1 tag 2 direct : tensor<8x512xf32>
  epl.send %x on @pipe over ["stage"] to 1 tag 2 direct : tensor<8x512xf32>
  // CHECK: epl.recv on @pipe over ["stage"] from 0 tag 2 direct : tensor<8x512xf32>
  %3 = epl.recv on @pipe over ["stage"] from 0 tag 2 direct : tensor<8x512xf32>
  return %1 : tensor<8x512xf32>
}

// CHECK-LABEL: func @group_index
func.func @group_index() -> (index, index) {
  // CHECK: epl.group_index on @mesh over ["tensor"]
  %0 = epl.group_index on @mesh over ["tensor"]
  // CHECK: epl.group_index on @mesh over ["data", "tensor"]
  %1 = epl.group_index on @mesh over ["data", "tensor"]
  return %0, %1 : index, index
}

// Point-to-point ops must survive dead-code elimination; pure collectives
// whose results are unused need not.
// RUN: epl-opt %s --canonicalize | FileCheck %s --check-prefix=DCE
// DCE-LABEL: func @send_recv
// DCE-COUNT-2: epl.send
// DCE-COUNT-2: epl.recv
// DCE: epl.send {{.*}} grouped
// DCE: epl.recv {{.*}} grouped

// CHECK: epl.mesh @pp ["stage" = 2, "data" = 2]
// CHECK: epl.pipeline @pipelined on @pp over "stage" stages [@stage0, @stage1] strategy "PreferBackward" micro_batches 2
epl.mesh @pp ["stage" = 2, "data" = 2]
epl.pipeline @pipelined on @pp over "stage" stages [@stage0, @stage1] strategy "PreferBackward" micro_batches 2
// CHECK-LABEL: func.func @stage0
// CHECK: call @stage0_forward({{.*}}) {epl.action = #epl.action<phase = forward, micro_batch = 1, stage = 0>}
// CHECK: epl.send {{.*}} on @pp over ["stage"] to 1 tag 3
func.func @stage0(%x: tensor<4xf32>) {
  %c1 = arith.constant 1 : index
  %a = func.call @stage0_forward(%c1, %x) {epl.action = #epl.action<phase = forward, micro_batch = 1, stage = 0>} : (index, tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @pp over ["stage"] to 1 tag 3 : tensor<4xf32>
  return
}
func.func private @stage0_forward(%i: index, %x: tensor<4xf32>) -> tensor<4xf32> attributes {epl.stage = #epl.stage<index = 0, name = "stage_0">}
func.func @stage1() { return }

// CHECK-LABEL: func.func @scatter_add
// CHECK: epl.scatter_add %{{.*}} at (%{{.*}}, %{{.*}}) into %{{.*}} : tensor<3x2xf32>, tensor<3x2xi64>, tensor<3x2xi64> into tensor<5x4xf32>
func.func @scatter_add(%u: tensor<3x2xf32>, %i: tensor<3x2xi64>, %j: tensor<3x2xi64>,
                       %d: tensor<5x4xf32>) -> tensor<5x4xf32> {
  %r = epl.scatter_add %u at (%i, %j) into %d
         : tensor<3x2xf32>, tensor<3x2xi64>, tensor<3x2xi64> into tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}

// Every dimension a batching one: no index tensors (a row of
// epl-parallelize-scatters whose destination is the batching dimensions).
// CHECK-LABEL: func.func @scatter_add_all_batching
// CHECK: epl.scatter_add %{{.*}} at () into %{{.*}} {dest_batching_dims = array<i64: 0>, updates_batching_dims = array<i64: 0>} : tensor<3xf32> into tensor<3xf32>
func.func @scatter_add_all_batching(%u: tensor<3xf32>, %d: tensor<3xf32>) -> tensor<3xf32> {
  %r = epl.scatter_add %u at () into %d
         {dest_batching_dims = array<i64: 0>, updates_batching_dims = array<i64: 0>}
         : tensor<3xf32> into tensor<3xf32>
  return %r : tensor<3xf32>
}

// Row b of %d gets %u[b] at column %i[b] (batching dimension 0).
// CHECK-LABEL: func.func @scatter_add_batching
// CHECK: epl.scatter_add %{{.*}} at (%{{.*}}) into %{{.*}} {dest_batching_dims = array<i64: 0>, updates_batching_dims = array<i64: 0>} : tensor<3xf32>, tensor<3xi64> into tensor<3x4xf32>
func.func @scatter_add_batching(%u: tensor<3xf32>, %i: tensor<3xi64>,
                                %d: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %r = epl.scatter_add %u at (%i) into %d
         {dest_batching_dims = array<i64: 0>, updates_batching_dims = array<i64: 0>}
         : tensor<3xf32>, tensor<3xi64> into tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
