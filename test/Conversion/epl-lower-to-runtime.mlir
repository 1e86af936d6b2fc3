// RUN: epl-opt %s --epl-lower-to-runtime --split-input-file | FileCheck %s
// RUN: epl-opt %s --epl-lower-to-runtime=gpu=1 --split-input-file | FileCheck %s --check-prefix=GPU

// Device groups are constant descriptors: [mesh id, mesh rank, sizes...,
// number of axes, axes...]; meshes disappear once nothing uses them.
// CHECK-NOT: epl.mesh
// CHECK-DAG: memref.global "private" constant @[[TENSOR:.*]] : memref<6xi64> = dense<[0, 2, 2, 4, 1, 1]>
// CHECK-DAG: memref.global "private" constant @[[BOTH:.*]] : memref<7xi64> = dense<[0, 2, 2, 4, 2, 0, 1]>
epl.mesh @mesh ["data" = 2, "tensor" = 4]

// CHECK-LABEL: func @all_reduce
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[I:.*]]: tensor<3xi64>)
func.func @all_reduce(%x: tensor<4x8xf32>, %i: tensor<3xi64>) -> (tensor<4x8xf32>, tensor<3xi64>) {
  // CHECK: %[[OUT:.*]] = memref.alloc() : memref<4x8xf32>
  // CHECK: %[[IN:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<4x8xf32> to memref<4x8xf32>
  // CHECK: %[[IN_U:.*]] = memref.cast %[[IN]] : memref<4x8xf32> to memref<*xf32>
  // CHECK: %[[OUT_U:.*]] = memref.cast %[[OUT]] : memref<4x8xf32> to memref<*xf32>
  // CHECK: %[[G:.*]] = memref.get_global @[[TENSOR]]
  // CHECK: %[[G_U:.*]] = memref.cast %[[G]]
  // CHECK: %[[MEAN:.*]] = arith.constant 3 : i32
  // CHECK: call @epl_rt_all_reduce_f32(%[[IN_U]], %[[OUT_U]], %[[G_U]], %[[MEAN]])
  // CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
  %0 = epl.all_reduce %x on @mesh over ["tensor"] mean : tensor<4x8xf32>
  // CHECK: memref.get_global @[[BOTH]]
  // CHECK: %[[MAX:.*]] = arith.constant 1 : i32
  // CHECK: call @epl_rt_all_reduce_i64({{.*}}, %[[MAX]])
  %1 = epl.all_reduce %i on @mesh over ["data", "tensor"] max : tensor<3xi64>
  // CHECK: return %[[R]]
  return %0, %1 : tensor<4x8xf32>, tensor<3xi64>
}
// Runtime functions are declared once, with the C interface.
// CHECK-DAG: func.func private @epl_rt_all_reduce_f32(memref<*xf32>, memref<*xf32>, memref<*xi64>, i32) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @epl_rt_all_reduce_i64(memref<*xi64>, memref<*xi64>, memref<*xi64>, i32) attributes {llvm.emit_c_interface}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]

// The runtime gathers whole buffers ([g, ...]); along an inner dimension
// the group is moved next to it and merged.
// CHECK-LABEL: func @all_gather_inner
func.func @all_gather_inner(%x: tensor<4x2xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[OUT:.*]] = memref.alloc() : memref<4x4x2xf32>
  // CHECK: call @epl_rt_all_gather_f32
  // CHECK: %[[G:.*]] = bufferization.to_tensor %[[OUT]]
  // CHECK: %[[T:.*]] = linalg.transpose ins(%[[G]] : tensor<4x4x2xf32>) outs(%{{.*}} : tensor<4x4x2xf32>) permutation = [1, 0, 2]
  // CHECK: tensor.collapse_shape %[[T]] {{\[\[}}0], [1, 2]] : tensor<4x4x2xf32> into tensor<4x8xf32>
  %0 = epl.all_gather %x on @mesh over ["tensor"] dim 1 : tensor<4x2xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// Along the outermost dimension no transpose is needed.
// CHECK-LABEL: func @all_gather_outer
func.func @all_gather_outer(%x: tensor<4x2xf32>) -> tensor<8x2xf32> {
  // CHECK: call @epl_rt_all_gather_f32
  // CHECK-NOT: linalg.transpose
  // CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x4x2xf32> into tensor<8x2xf32>
  %0 = epl.all_gather %x on @mesh over ["data"] dim 0 : tensor<4x2xf32> -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

epl.mesh @mesh ["tensor" = 4]

// reduce_scatter and all_to_all bring the shards of the split dimension to
// the front, where the runtime scatters contiguous chunks.
// CHECK-LABEL: func @reduce_scatter
func.func @reduce_scatter(%x: tensor<2x16xf32>) -> tensor<2x4xf32> {
  // CHECK: %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [2, 4, 4] : tensor<2x16xf32> into tensor<2x4x4xf32>
  // CHECK: %[[T:.*]] = linalg.transpose ins(%[[E]] : tensor<2x4x4xf32>) outs(%{{.*}} : tensor<4x2x4xf32>) permutation = [1, 0, 2]
  // CHECK: bufferization.to_buffer %[[T]] read_only
  // CHECK: %[[SUM:.*]] = arith.constant 0 : i32
  // CHECK: call @epl_rt_reduce_scatter_f32({{.*}}, %[[SUM]])
  %0 = epl.reduce_scatter %x on @mesh over ["tensor"] sum dim 1 : tensor<2x16xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// CHECK-LABEL: func @all_to_all
func.func @all_to_all(%x: tensor<8x32xf32>) -> tensor<32x8xf32> {
  // CHECK: linalg.transpose {{.*}} permutation = [1, 0, 2]
  // CHECK: call @epl_rt_all_to_all_f32
  // CHECK-NOT: linalg.transpose
  // CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<4x8x8xf32> into tensor<32x8xf32>
  %0 = epl.all_to_all %x on @mesh over ["tensor"] split 1 concat 0 : tensor<8x32xf32> -> tensor<32x8xf32>
  return %0 : tensor<32x8xf32>
}

// -----

epl.mesh @pipe ["stage" = 2]

// CHECK-LABEL: func @point_to_point
// CHECK-NOT: message_group
func.func @point_to_point(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, index) {
  // CHECK: %[[ROOT:.*]] = arith.constant 1 : i64
  // CHECK: call @epl_rt_broadcast_f32({{.*}}, %[[ROOT]])
  %b = epl.broadcast %x on @pipe over ["stage"] root 1 : tensor<4xf32>
  // CHECK: %[[PEER:.*]] = arith.constant 1 : i64
  // CHECK: %[[TAG:.*]] = arith.constant 5 : i64
  // CHECK: call @epl_rt_send_f32(%{{.*}}, %{{.*}}, %[[PEER]], %[[TAG]])
  epl.send %x on @pipe over ["stage"] to 1 tag 5 : tensor<4xf32>
  // CHECK: call @epl_rt_recv_f32
  %r = epl.recv on @pipe over ["stage"] from 1 tag 5 : tensor<4xf32>
  // CHECK: %[[IDX:.*]] = call @epl_rt_group_index(%{{.*}}) : (memref<*xi64>) -> i64
  // CHECK: arith.index_cast %[[IDX]] : i64 to index
  %i = epl.group_index on @pipe over ["stage"]
  return %b, %r, %i : tensor<4xf32>, tensor<4xf32>, index
}

// -----

// A pipeline's schedule: each action call is timed by the runtime, and the
// pipeline op (read by the runner) goes with the mesh.
// CHECK-NOT: epl.pipeline
// CHECK-NOT: epl.mesh
epl.mesh @pp ["stage" = 2]
epl.pipeline @model on @pp over "stage" stages [@stage0, @stage1] strategy "PreferBackward" micro_batches 1

// CHECK-LABEL: func @stage0
func.func @stage0(%x: tensor<4xf32>) {
  // CHECK-DAG: %[[PHASE:.*]] = arith.constant 2 : i32
  // CHECK-DAG: %[[MB:.*]] = arith.constant 3 : i64
  // CHECK-DAG: %[[STAGE:.*]] = arith.constant 0 : i64
  // CHECK: call @epl_rt_action_begin(%[[PHASE]], %[[MB]], %[[STAGE]]) : (i32, i64, i64) -> ()
  // CHECK-NEXT: %[[A:.*]] = call @piece(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: call @epl_rt_action_end() : () -> ()
  // CHECK-NOT: epl.action
  // CHECK: call @epl_rt_send_f32
  %a = func.call @piece(%x) {epl.action = #epl.action<phase = backward_weight, micro_batch = 3, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @pp over ["stage"] to 1 tag 0 : tensor<4xf32>
  return
}
func.func @stage1() { return }
func.func private @piece(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
// CHECK: func.func private @epl_rt_action_begin(i32, i64, i64) attributes {llvm.emit_c_interface}
// CHECK: func.func private @epl_rt_action_end() attributes {llvm.emit_c_interface}

// -----

// Grouped messages (a pipeline's stage programs, which the pass simulates
// as NCCL moves them): each run of them between actions (constants and
// empty tensors may sit between) is one group, bracketed for the runtime;
// an action ends a run (ungrouped messages, @point_to_point, are not
// bracketed). A
// narrow integer a group receives is narrowed after the group's end, when
// it is there.
epl.mesh @pp ["stage" = 2]
epl.pipeline @model on @pp over "stage" stages [@stage0, @stage1] strategy "PreferBackward" micro_batches 1

// CHECK-LABEL: func @stage0
func.func @stage0(%x: tensor<4xf32>) -> tensor<4xi8> {
  // CHECK: call @epl_rt_action_end
  // CHECK-NEXT: call @epl_rt_message_group_begin() : () -> ()
  // CHECK-NOT: call @
  // CHECK: call @epl_rt_send_f32
  // CHECK-NOT: call @
  // CHECK: call @epl_rt_recv_i32
  // CHECK-NOT: arith.trunci
  // CHECK-NOT: call @
  // CHECK: call @epl_rt_message_group_end() : () -> ()
  // CHECK: arith.trunci %{{.*}} : i32 to i8
  // CHECK: call @epl_rt_action_begin
  %a = func.call @f0(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @pp over ["stage"] to 1 tag 0 grouped : tensor<4xf32>
  %c = arith.constant 0 : index
  %e = tensor.empty() : tensor<4xf32>
  %g = epl.recv on @pp over ["stage"] from 1 tag 1 grouped : tensor<4xi8>
  %b = func.call @b0(%g) {epl.action = #epl.action<phase = backward_input, micro_batch = 0, stage = 0>} : (tensor<4xi8>) -> tensor<4xi8>
  return %b : tensor<4xi8>
}
// CHECK-LABEL: func @stage1
func.func @stage1() {
  // CHECK: call @epl_rt_message_group_begin() : () -> ()
  // CHECK-NOT: call @
  // CHECK: call @epl_rt_recv_f32
  // CHECK-NOT: call @
  // CHECK: call @epl_rt_message_group_end() : () -> ()
  // CHECK: call @epl_rt_action_begin
  // CHECK: call @epl_rt_action_end
  // CHECK: call @epl_rt_message_group_begin() : () -> ()
  // CHECK-NOT: call @
  // CHECK: call @epl_rt_send_i32
  // CHECK-NOT: call @
  // CHECK: call @epl_rt_message_group_end() : () -> ()
  %a = epl.recv on @pp over ["stage"] from 0 grouped : tensor<4xf32>
  %g = func.call @f1(%a) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 1>} : (tensor<4xf32>) -> tensor<4xi8>
  epl.send %g on @pp over ["stage"] to 0 tag 1 grouped : tensor<4xi8>
  return
}
func.func private @f0(%x: tensor<4xf32>) -> tensor<4xf32>
func.func private @b0(%x: tensor<4xi8>) -> tensor<4xi8>
func.func private @f1(%x: tensor<4xf32>) -> tensor<4xi8>

// -----

// A model's assertion (torch-mlir checks gathered indices) ends the run
// with its message through the runtime, not with an abort; the message
// says where the check is ("bound at model.mlir:3:5": torch-mlir's name
// no op), unless it has no file location.
// CHECK-DAG: memref.global "private" constant @__epl_assert_0 : memref<23xi8> = dense<[98, 111, 117, 110, 100, 32, 97, 116, 32, 109, 111, 100, 101, 108, 46, 109, 108, 105, 114, 58, 51, 58, 53]>
// CHECK-DAG: memref.global "private" constant @__epl_assert_1 : memref<5xi8> = dense<[98, 111, 117, 110, 100]>
// CHECK-LABEL: func.func @assert
// CHECK: %[[FAILED:.*]] = arith.xori %{{.*}}, %true
// CHECK: scf.if %[[FAILED]] {
// CHECK:   %[[MSG:.*]] = memref.get_global @__epl_assert_0 : memref<23xi8>
// CHECK:   %[[U:.*]] = memref.cast %[[MSG]] : memref<23xi8> to memref<*xi8>
// CHECK:   call @epl_rt_assert_failed(%[[U]])
// CHECK: memref.get_global @__epl_assert_1 : memref<5xi8>
// CHECK-NOT: cf.assert
func.func @assert(%i: index) {
  %c4 = arith.constant 4 : index
  %ok = arith.cmpi ult, %i, %c4 : index
  cf.assert %ok, "bound" loc("model.mlir":3:5)
  cf.assert %ok, "bound" loc(unknown)
  return
}

// -----

// Narrow integers (masks) cross devices as i32; a sum of them is refused
// (epl-lower-to-runtime-errors.mlir).
epl.mesh @mesh ["data" = 2]
// CHECK-LABEL: func.func @narrow
// CHECK: arith.extui %{{.*}} : i1 to i32
// CHECK: call @epl_rt_all_gather_i32
// CHECK: arith.trunci %{{.*}} : i32 to i1
func.func @narrow(%x: tensor<4xi1>) -> tensor<8xi1> {
  %y = epl.all_gather %x on @mesh over ["data"] dim 0 : tensor<4xi1> -> tensor<8xi1>
  return %y : tensor<8xi1>
}

// -----

// A gather's computed indices (a tensor.extract in a linalg body) are
// checked against the table's sizes; the message says where the gather is.
// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic
// CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %c0
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[N]]
// CHECK: scf.if
// CHECK: call @epl_rt_assert_failed
// CHECK: tensor.extract
func.func @gather(%t: tensor<5xf32>, %ids: tensor<3xindex>, %o: tensor<3xf32>) -> tensor<3xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%ids : tensor<3xindex>) outs(%o : tensor<3xf32>) {
  ^bb0(%i: index, %out: f32):
    %v = tensor.extract %t[%i] : tensor<5xf32>
    linalg.yield %v : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// Reads outside linalg bodies (the loops decomposed ops become) index
// their own bounds: no check.
// CHECK-LABEL: func.func @not_a_gather
// CHECK-NOT: epl_rt_assert_failed
func.func @not_a_gather(%t: tensor<5xf32>, %i: index) -> f32 {
  %v = tensor.extract %t[%i] : tensor<5xf32>
  return %v : f32
}

// -----

// Direct messages (a pipeline's stage programs whose messages the pass
// checks arrive in the order sent, per direction) go over channels, which
// each program opens first thing, to its peers in ascending order. A
// direct send reads its buffer when its receive takes it: on a GPU it
// sends a copy of its own, which nothing else writes (the CPU backends
// copy at the send).
epl.mesh @pp ["stage" = 3]
epl.pipeline @model on @pp over "stage" stages [@direct0, @direct1, @direct2] strategy "PreferForward" micro_batches 1

// CHECK-LABEL: func @direct0
// CHECK-NEXT: memref.get_global
// CHECK-NEXT: memref.cast
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @epl_rt_open_channel(%{{.*}}, %[[ONE]])
// CHECK-NOT: memref.copy
// A direct message's tag says so (EPL_RT_DIRECT_TAG, 1 << 62 over tag 0).
// CHECK: %[[DIRECT:.*]] = arith.constant 4611686018427387904 : i64
// CHECK-NEXT: call @epl_rt_send_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[DIRECT]])
// GPU-LABEL: func @direct0
// GPU: memref.copy
// GPU-NEXT: memref.cast
// GPU: call @epl_rt_send_f32
func.func @direct0(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @fwd(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @pp over ["stage"] to 1 tag 0 direct : tensor<4xf32>
  %g = epl.recv on @pp over ["stage"] from 1 tag 1 direct : tensor<4xf32>
  %b = func.call @bwd(%a, %g) {epl.action = #epl.action<phase = backward_input, micro_batch = 0, stage = 0>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
// CHECK-LABEL: func @direct1
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @epl_rt_open_channel(%{{.*}}, %[[ZERO]])
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : i64
// CHECK-NEXT: call @epl_rt_open_channel(%{{.*}}, %[[TWO]])
// CHECK-NOT: memref.copy
// CHECK: return
// GPU-LABEL: func @direct1
// GPU: call @epl_rt_recv_f32
// GPU: memref.copy
// GPU: call @epl_rt_send_f32
// GPU: call @epl_rt_recv_f32
// GPU: memref.copy
// GPU: call @epl_rt_send_f32
func.func @direct1() {
  %a = epl.recv on @pp over ["stage"] from 0 tag 0 direct : tensor<4xf32>
  %h = func.call @fwd(%a) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 1>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %h on @pp over ["stage"] to 2 tag 2 direct : tensor<4xf32>
  %g = epl.recv on @pp over ["stage"] from 2 tag 3 direct : tensor<4xf32>
  %b = func.call @bwd_in_place(%h, %g) {epl.action = #epl.action<phase = backward_input, micro_batch = 0, stage = 1>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  epl.send %b on @pp over ["stage"] to 0 tag 1 direct : tensor<4xf32>
  return
}
// CHECK-LABEL: func @direct2
// CHECK: call @epl_rt_open_channel
// GPU-LABEL: func @direct2
// GPU: call @epl_rt_recv_f32
// GPU: memref.copy
// GPU: call @epl_rt_send_f32
func.func @direct2() {
  %a = epl.recv on @pp over ["stage"] from 1 tag 2 direct : tensor<4xf32>
  %p = func.call @pass(%a) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 2>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %p on @pp over ["stage"] to 1 tag 3 direct : tensor<4xf32>
  return
}
func.func private @fwd(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @bwd(%a: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.mul ins(%a, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
// Writes its first argument's buffer (in place, as its last use).
func.func private @bwd_in_place(%a: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  %y = linalg.mul ins(%a, %g : tensor<4xf32>, tensor<4xf32>) outs(%a : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @pass(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// A program with channels prepares its collectives' groups (its callees'
// too) first thing, once each, in the order of their mesh and axes,
// before it opens its channels: an NCCL communicator made at the gradient
// reduction would wait for a channel's send in flight.
epl.mesh @m ["stage" = 2, "data" = 2]
epl.pipeline @model on @m over "stage" stages [@stage0, @stage1] strategy "PreferForward" micro_batches 1

// CHECK-LABEL: func @stage0
// CHECK-NEXT: %[[DATA:.*]] = memref.get_global @[[DATA_GROUP:__epl_group_[0-9]+]] : memref<6xi64>
// CHECK-NEXT: %[[DATA_CAST:.*]] = memref.cast %[[DATA]]
// CHECK-NEXT: call @epl_rt_prepare_group(%[[DATA_CAST]])
// CHECK-NEXT: %[[BOTH:.*]] = memref.get_global @[[BOTH_GROUP:__epl_group_[0-9]+]] : memref<7xi64>
// CHECK-NEXT: %[[BOTH_CAST:.*]] = memref.cast %[[BOTH]]
// CHECK-NEXT: call @epl_rt_prepare_group(%[[BOTH_CAST]])
// CHECK-NOT: epl_rt_prepare_group
// CHECK: call @epl_rt_open_channel
// CHECK: call @epl_rt_send_f32
// CHECK: memref.get_global @[[DATA_GROUP]]
// CHECK-NEXT: memref.cast
// CHECK-NEXT: arith.constant
// CHECK-NEXT: call @epl_rt_all_reduce_f32
// CHECK: call @reduce_all
// CHECK: memref.get_global @[[DATA_GROUP]]
// CHECK-NEXT: memref.cast
// CHECK-NEXT: arith.constant
// CHECK-NEXT: call @epl_rt_all_reduce_f32
func.func @stage0(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = func.call @fwd(%x) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  epl.send %a on @m over ["stage"] to 1 tag 0 direct : tensor<4xf32>
  %r = epl.all_reduce %a on @m over ["data"] sum : tensor<4xf32>
  %s = func.call @reduce_all(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %t = epl.all_reduce %s on @m over ["data"] sum : tensor<4xf32>
  return %r, %s, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
// A callee's collectives are the program's: not prepared again here.
// CHECK-LABEL: func private @reduce_all
// CHECK-NOT: epl_rt_prepare_group
// CHECK: memref.get_global @[[BOTH_GROUP]]
// CHECK-NEXT: memref.cast
// CHECK-NEXT: arith.constant
// CHECK-NEXT: call @epl_rt_all_reduce_f32
func.func private @reduce_all(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = epl.all_reduce %x on @m over ["stage", "data"] sum : tensor<4xf32>
  return %s : tensor<4xf32>
}
// The other stage joins the group spanning both; a group's index
// communicates nothing and is not prepared.
// CHECK-LABEL: func @stage1
// CHECK-NEXT: memref.get_global @[[BOTH_GROUP]] : memref<7xi64>
// CHECK-NEXT: memref.cast
// CHECK-NEXT: call @epl_rt_prepare_group
// CHECK-NOT: epl_rt_prepare_group
// CHECK: call @epl_rt_open_channel
func.func @stage1(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, index) {
  %a = epl.recv on @m over ["stage"] from 0 tag 0 direct : tensor<4xf32>
  %s = epl.all_reduce %x on @m over ["stage", "data"] sum : tensor<4xf32>
  %i = epl.group_index on @m over ["data"]
  return %a, %s, %i : tensor<4xf32>, tensor<4xf32>, index
}
func.func private @fwd(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
