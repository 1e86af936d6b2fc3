// RUN: epl-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{'epl.mesh' op has two axes named "data"}}
epl.mesh @mesh ["data" = 2, "data" = 4]

// -----

// expected-error @+1 {{'epl.mesh' op axis "tensor" must have at least one device, got 0}}
epl.mesh @mesh ["data" = 2, "tensor" = 0]

// -----

// expected-error @+1 {{'epl.mesh' op needs at least one axis}}
epl.mesh @mesh []

// -----

// expected-error @+1 {{'epl.mesh' op axis names must not be empty}}
epl.mesh @mesh ["" = 2]

// -----

func.func @f() {
  // expected-error @+1 {{'epl.mesh' op expects parent op 'builtin.module'}}
  epl.mesh @mesh ["data" = 2]
  return
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<8x10xf32>) -> tensor<8x10xf32> {
  // expected-error @+1 {{'epl.sharding_constraint' op sharding splits dimension 1 of size 10 over mesh axes ["tensor"] of total size 4, which does not divide it}}
  %0 = epl.sharding_constraint %x <@mesh, [[], ["tensor"]]> : tensor<8x10xf32>
  return %0 : tensor<8x10xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'epl.sharding_constraint' op mesh axis "model" is not in mesh @mesh (its axes are "data", "tensor")}}
  %0 = epl.sharding_constraint %x <@mesh, [["model"], []]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'epl.sharding_constraint' op sharding has 3 dimension entries but 'tensor<8x8xf32>' has rank 2}}
  %0 = epl.sharding_constraint %x <@mesh, [[], [], []]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'epl.all_reduce' op no epl.mesh named @mesh}}
  %0 = epl.all_reduce %x on @mesh over ["data"] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'epl.all_reduce' op mesh axis "stage" is not in mesh @mesh (its axes are "data", "tensor")}}
  %0 = epl.all_reduce %x on @mesh over ["stage"] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'epl.all_reduce' op mesh axis "data" is named more than once}}
  %0 = epl.all_reduce %x on @mesh over ["data", "data"] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'epl.all_reduce' op needs at least one mesh axis to communicate over}}
  %0 = epl.all_reduce %x on @mesh over [] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{expected a reduction kind (sum, max, min or mean), got 'prod'}}
  %0 = epl.all_reduce %x on @mesh over ["data"] prod : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<4x2xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{'epl.all_gather' op gathering over ["tensor"] (4 devices) along dimension 1 of 'tensor<4x2xf32>' gives dimension 1 of size 8, but the result type 'tensor<4x6xf32>' has 6}}
  %0 = epl.all_gather %x on @mesh over ["tensor"] dim 1 : tensor<4x2xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<4x2xf32>) -> tensor<5x8xf32> {
  // expected-error @+1 {{'epl.all_gather' op only the gathered/scattered dimensions change: 'tensor<4x2xf32>' gives dimension 0 of size 4, but the result type 'tensor<5x8xf32>' has 5}}
  %0 = epl.all_gather %x on @mesh over ["tensor"] dim 1 : tensor<4x2xf32> -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<4x2xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'epl.all_gather' op dim 2 is out of range for rank 2}}
  %0 = epl.all_gather %x on @mesh over ["tensor"] dim 2 : tensor<4x2xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<4x2xf32>) -> tensor<4x8xf16> {
  // expected-error @+1 {{'epl.all_gather' op changes the element type from 'f32' to 'f16'}}
  %0 = epl.all_gather %x on @mesh over ["tensor"] dim 1 : tensor<4x2xf32> -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<4x2xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'epl.all_gather' op changes the rank from 2 to 1}}
  %0 = epl.all_gather %x on @mesh over ["tensor"] dim 0 : tensor<4x2xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<10x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'epl.reduce_scatter' op cannot split dimension 0 of size 10 over mesh axes ["tensor"] (4 devices)}}
  %0 = epl.reduce_scatter %x on @mesh over ["tensor"] sum dim 0 : tensor<10x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<16x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'epl.reduce_scatter' op scattering over ["tensor"] (4 devices) along dimension 0 of 'tensor<16x4xf32>' gives dimension 0 of size 4, but the result type 'tensor<8x4xf32>' has 8}}
  %0 = epl.reduce_scatter %x on @mesh over ["tensor"] sum dim 0 : tensor<16x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<8x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'epl.all_to_all' op all_to_all over ["tensor"] (4 devices) from dimension 1 to 0 of 'tensor<8x32xf32>' gives dimension 1 of size 8, but the result type 'tensor<8x32xf32>' has 32}}
  %0 = epl.all_to_all %x on @mesh over ["tensor"] split 1 concat 0 : tensor<8x32xf32> -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<8x6xf32>) -> tensor<32x1xf32> {
  // expected-error @+1 {{'epl.all_to_all' op cannot split dimension 1 of size 6 over mesh axes ["tensor"] (4 devices)}}
  %0 = epl.all_to_all %x on @mesh over ["tensor"] split 1 concat 0 : tensor<8x6xf32> -> tensor<32x1xf32>
  return %0 : tensor<32x1xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<8x32xf32>) -> tensor<32x8xf32> {
  // expected-error @+1 {{'epl.all_to_all' op concat dimension -1 is out of range for rank 2}}
  %0 = epl.all_to_all %x on @mesh over ["tensor"] split 1 concat -1 : tensor<8x32xf32> -> tensor<32x8xf32>
  return %0 : tensor<32x8xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'epl.broadcast' op root 2 is not a device of the group over ["data"], which has 2 devices (0 to 1)}}
  %0 = epl.broadcast %x on @mesh over ["data"] root 2 : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

epl.mesh @mesh ["stage" = 2, "data" = 2]
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'epl.send' op peer 2 is not a device of the group over ["stage"], which has 2 devices (0 to 1)}}
  epl.send %x on @mesh over ["stage"] to 2 : tensor<8xf32>
  return
}

// -----

epl.mesh @mesh ["stage" = 2, "data" = 2]
func.func @f() -> tensor<8xf32> {
  // expected-error @+1 {{'epl.recv' op peer -1 is not a device of the group over ["stage"], which has 2 devices (0 to 1)}}
  %0 = epl.recv on @mesh over ["stage"] from -1 : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

epl.mesh @mesh ["data" = 2]
func.func @f(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'epl.all_reduce' op requires the same type for all operands and results}}
  %0 = "epl.all_reduce"(%x) <{mesh = @mesh, axes = ["data"], kind = #epl.reduction<sum>}> : (tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'epl.mesh' op has 2 axis names but 1 sizes}}
"epl.mesh"() <{sym_name = "mesh", axis_names = ["data", "tensor"], axis_sizes = array<i64: 2>}> : () -> ()

// -----

epl.mesh @mesh ["data" = 2]
func.func @f() -> index {
  // expected-error @+1 {{'epl.group_index' op mesh axis "tensor" is not in mesh @mesh (its axes are "data")}}
  %0 = epl.group_index on @mesh over ["tensor"]
  return %0 : index
}

// -----

epl.mesh @mesh ["stage" = 2, "data" = 2]
// expected-error @+1 {{'epl.pipeline' op lists 1 stage functions for the 2 devices of axis "stage"}}
epl.pipeline @model on @mesh over "stage" stages [@s0] strategy "PreferBackward" micro_batches 4
func.func @s0() { return }

// -----

epl.mesh @mesh ["data" = 2]
// expected-error @+1 {{'epl.pipeline' op mesh @mesh has no axis "stage"}}
epl.pipeline @model on @mesh over "stage" stages [@s0, @s0] strategy "PreferBackward" micro_batches 4
func.func @s0() { return }

// -----

epl.mesh @mesh ["stage" = 2]
// expected-error @+1 {{'epl.pipeline' op stage @s1 is not a function of the module}}
epl.pipeline @model on @mesh over "stage" stages [@s0, @s1] strategy "PreferBackward" micro_batches 4
func.func @s0() { return }

// -----

func.func @scatter_add_rank(%u: tensor<3xf32>, %i: tensor<3xi64>, %d: tensor<5x4xf32>) -> tensor<5x4xf32> {
  // expected-error @+1 {{'epl.scatter_add' op has 1 index tensors for a destination of rank 2; it needs one per dimension}}
  %r = epl.scatter_add %u at (%i) into %d : tensor<3xf32>, tensor<3xi64> into tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}

// -----

func.func @scatter_add_batching_rank(%u: tensor<3x4xf32>, %i: tensor<3x4xi64>, %d: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'epl.scatter_add' op has 1 index tensors for a destination of rank 2 with 2 batching dimension(s); it needs one per other dimension}}
  %r = epl.scatter_add %u at (%i) into %d {dest_batching_dims = array<i64: 0, 1>, updates_batching_dims = array<i64: 0, 1>} : tensor<3x4xf32>, tensor<3x4xi64> into tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

func.func @scatter_add_batching_pairs(%u: tensor<3xf32>, %i: tensor<3xi64>, %d: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'epl.scatter_add' op has 1 destination batching dimensions but 0 updates batching dimensions; they pair up}}
  %r = epl.scatter_add %u at (%i) into %d {dest_batching_dims = array<i64: 0>} : tensor<3xf32>, tensor<3xi64> into tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// A position along a batching dimension is not checked when the scatter
// runs: a dynamic size could be smaller than the updates'.
func.func @scatter_add_batching_dynamic(%u: tensor<4x3xf32>, %i: tensor<4x3xi64>, %d: tensor<?x5xf32>) -> tensor<?x5xf32> {
  // expected-error @+1 {{'epl.scatter_add' op batching dimension 0 of 'tensor<?x5xf32>' and 0 of 'tensor<4x3xf32>' must have static sizes}}
  %r = epl.scatter_add %u at (%i) into %d {dest_batching_dims = array<i64: 0>, updates_batching_dims = array<i64: 0>} : tensor<4x3xf32>, tensor<4x3xi64> into tensor<?x5xf32>
  return %r : tensor<?x5xf32>
}

// -----

func.func @scatter_add_batching_size(%u: tensor<3xf32>, %i: tensor<3xi64>, %d: tensor<5x4xf32>) -> tensor<5x4xf32> {
  // expected-error @+1 {{'epl.scatter_add' op batching dimension 0 of 'tensor<5x4xf32>' and 0 of 'tensor<3xf32>' differ in size}}
  %r = epl.scatter_add %u at (%i) into %d {dest_batching_dims = array<i64: 0>, updates_batching_dims = array<i64: 0>} : tensor<3xf32>, tensor<3xi64> into tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}

// -----

func.func @scatter_add_batching_dim(%u: tensor<3xf32>, %i: tensor<3xi64>, %d: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'epl.scatter_add' op destination batching dimension 2 is not a distinct dimension of 'tensor<3x4xf32>'}}
  %r = epl.scatter_add %u at (%i) into %d {dest_batching_dims = array<i64: 2>, updates_batching_dims = array<i64: 0>} : tensor<3xf32>, tensor<3xi64> into tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

func.func @scatter_add_shape(%u: tensor<3xf32>, %i: tensor<2xi64>, %d: tensor<5xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'epl.scatter_add' op index tensor #0 is 'tensor<2xi64>'; it must have the shape of the updates, 'tensor<3xf32>'}}
  %r = epl.scatter_add %u at (%i) into %d : tensor<3xf32>, tensor<2xi64> into tensor<5xf32>
  return %r : tensor<5xf32>
}

// -----

func.func @scatter_add_type(%u: tensor<3xf16>, %i: tensor<3xi64>, %d: tensor<5xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'epl.scatter_add' op adds 'f16' updates into a 'f32' destination}}
  %r = epl.scatter_add %u at (%i) into %d : tensor<3xf16>, tensor<3xi64> into tensor<5xf32>
  return %r : tensor<5xf32>
}

// -----

epl.mesh @mesh ["stage" = 2]
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'epl.send' op is both grouped and direct; a message goes in a group or over its peer's channel}}
  epl.send %x on @mesh over ["stage"] to 1 grouped direct : tensor<8xf32>
  return
}
