// RUN: epl-opt %s -split-input-file -verify-diagnostics

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{split(0) is invalid: a scope must use at least one device (devices >= 1)}}
  %0 = arith.addf %x, %x {epl.scope = #epl.split<devices = 0>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{replicate(-2) is invalid: a scope must use at least one device (devices >= 1)}}
  %0 = arith.addf %x, %x {epl.scope = #epl.replicate<devices = -2>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{replicate scope name must not be empty; omit 'name' for an unnamed scope}}
  %0 = arith.addf %x, %x {epl.scope = #epl.replicate<devices = 1, name = "">} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'epl.scope' expects a strategy scope (#epl.replicate<...> or #epl.split<...>), got "replicate"}}
  %0 = arith.addf %x, %x {epl.scope = "replicate"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown EPL attribute 'epl.scopes' on an operation; expected 'epl.config' (on the module), 'epl.scope', 'epl.phase', 'epl.id', 'epl.origin', 'epl.micro_batch', 'epl.stage', 'epl.action', 'epl.checkpoint', 'epl.source', 'epl.shardings', 'epl.loop_axes', 'epl.host' (on a memref.global), 'epl.memory_estimate' or 'epl.wraps' (on a function)}}
  %0 = arith.addf %x, %x {epl.scopes = #epl.split<devices = 2>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'epl.source' expects a non-empty string (what of the user's model the op was made of), got 3 : i64}}
  %0 = arith.addf %x, %x {epl.source = 3} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument 0: 'epl.arg' must be "param", "input", "label", "state" or "opt_state", got "weight"}}
func.func @f(%x: tensor<4xf32> {epl.arg = "weight"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 1: 'epl.name' must be a non-empty string, got ""}}
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32> {epl.name = ""}) {
  return
}

// -----

// Two parameters of one name would share a checkpoint entry, one's update
// overwriting the other's.
// expected-error @+1 {{'func.func' op argument 2: 'epl.name' "w" names argument 0 too; arguments are read, saved and updated by name, so each needs its own}}
func.func @f(%w: tensor<4xf32> {epl.arg = "param", epl.name = "w"}, %x: tensor<4xf32> {epl.arg = "input", epl.name = "x"}, %u: tensor<4xf32> {epl.arg = "param", epl.name = "w"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 1: 'epl.in_place_of' must be the index of another argument, got 1 : i64}}
func.func @f(%x: memref<4xf32>, %y: memref<4xf32> {epl.in_place_of = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 1: 'epl.in_place_of' must be the index of another argument, got 2 : i64}}
func.func @f(%x: memref<4xf32>, %y: memref<4xf32> {epl.in_place_of = 2 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 1: 'epl.in_place_of' names argument 0 of type 'memref<8xf32>', but this argument is 'memref<4xf32>'}}
func.func @f(%x: memref<8xf32>, %y: memref<4xf32> {epl.in_place_of = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 0: unknown EPL argument attribute 'epl.param'; expected 'epl.arg', 'epl.name', 'epl.init', 'epl.sharding', 'epl.shard', 'epl.read_only' or 'epl.in_place_of'}}
func.func @f(%x: tensor<4xf32> {epl.param}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result 0: unknown EPL result attribute 'epl.arg'; expected 'epl.result', 'epl.name', 'epl.sharding', 'epl.shard' or 'epl.grad_shard'}}
func.func @f() -> (tensor<4xf32> {epl.arg = "param"}) {
  %0 = tensor.empty() : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
// expected-error @+1 {{'func.func' op argument 0: mesh axis "model" is not in mesh @mesh (its axes are "data", "tensor")}}
func.func @f(%x: tensor<8x8xf32> {epl.sharding = #epl.sharding<@mesh, [["model"], []]>}) {
  return
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
// expected-error @+1 {{'func.func' op argument 0: sharding splits dimension 1 of size 10 over mesh axes ["tensor"] of total size 4, which does not divide it}}
func.func @f(%x: tensor<8x10xf32> {epl.sharding = #epl.sharding<@mesh, [[], ["tensor"]]>}) {
  return
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
// Two axes on one dimension multiply: 2 x 4 does not divide 12.
// expected-error @+1 {{'func.func' op argument 0: sharding splits dimension 0 of size 12 over mesh axes ["data", "tensor"] of total size 8, which does not divide it}}
func.func @f(%x: tensor<12xf32> {epl.sharding = #epl.sharding<@mesh, [["data", "tensor"]]>}) {
  return
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
// expected-error @+1 {{'func.func' op result 0: sharding has 1 dimension entries but 'tensor<8x8xf32>' has rank 2}}
func.func @f() -> (tensor<8x8xf32> {epl.sharding = #epl.sharding<@mesh, [["data"]]>}) {
  %0 = tensor.empty() : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
// expected-error @+1 {{'func.func' op argument 0: a sharding describes a ranked tensor, not 'f32'}}
func.func @f(%x: f32 {epl.sharding = #epl.sharding<@mesh, []>}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 0: no epl.mesh named @nowhere}}
func.func @f(%x: tensor<8xf32> {epl.sharding = #epl.sharding<@nowhere, [[]]>}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 0: @g is a 'func.func', not an epl.mesh}}
func.func @f(%x: tensor<8xf32> {epl.sharding = #epl.sharding<@g, [[]]>}) {
  return
}
func.func @g() {
  return
}

// -----

epl.mesh @mesh ["data" = 2, "tensor" = 4]
// expected-error @+1 {{'func.func' op argument 0: 'epl.sharding' expects an #epl.sharding, got #epl.split<devices = 2>}}
func.func @f(%x: tensor<8xf32> {epl.sharding = #epl.split<devices = 2>}) {
  return
}

// -----

// expected-error @+1 {{sharding uses mesh axis "data" more than once}}
func.func @f(%x: tensor<8x8xf32> {epl.sharding = #epl.sharding<@mesh, [["data"], ["data"]]>}) {
  return
}

// -----

// expected-error @+1 {{sharding uses mesh axis "tensor" more than once}}
func.func @f(%x: tensor<8x8xf32> {epl.sharding = #epl.sharding<@mesh, [["tensor"], []], partial sum ["tensor"]>}) {
  return
}

// -----

// expected-error @+1 {{a pending partial value is a sum, max or min; express a mean as a sum and a division}}
func.func @f(%x: tensor<8xf32> {epl.sharding = #epl.sharding<@mesh, [[]], partial mean ["data"]>}) {
  return
}

// -----

// expected-error @+1 {{expected a partial reduction kind (sum, max or min), got 'avg'}}
func.func @f(%x: tensor<8xf32> {epl.sharding = #epl.sharding<@mesh, [[]], partial avg ["data"]>}) {
  return
}

// -----

// expected-error @+1 {{sharding has a partial reduction kind but no partial axes}}
func.func @f(%x: tensor<8xf32> {epl.sharding = #epl.sharding<@mesh, [[]], partial max []>}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 0: 'epl.init' must be "normal", "zeros" or "ones", got "xavier"}}
func.func @f(%x: tensor<4xf32> {epl.arg = "param", epl.init = "xavier"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result 0: 'epl.result' must be "loss", "param", "state", "opt_state" or "grad", got "weights"}}
func.func @f() -> (tensor<4xf32> {epl.result = "weights"}) {
  %0 = tensor.empty() : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A gradient says whose it is.
// expected-error @+1 {{'func.func' op result 0: a "grad" result must name its parameter with 'epl.name'}}
func.func @f(%w: tensor<4xf32> {epl.arg = "param", epl.name = "w"}) -> (tensor<4xf32> {epl.result = "grad"}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result 0: a gradient of 'v', but no parameter argument has that name}}
func.func @f(%w: tensor<4xf32> {epl.arg = "param", epl.name = "w"}) -> (tensor<4xf32> {epl.result = "grad", epl.name = "v"}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result 0: a gradient of 'arg0', but no parameter argument has that name}}
func.func @f(%x: tensor<4xf32> {epl.arg = "input"}) -> (tensor<4xf32> {epl.result = "grad", epl.name = "arg0"}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result 0: the gradient of 'w' is 'tensor<2xf32>' but the parameter is 'tensor<4xf32>'}}
func.func @f(%w: tensor<4xf32> {epl.arg = "param", epl.name = "w"}) -> (tensor<2xf32> {epl.result = "grad", epl.name = "w"}) {
  %0 = tensor.empty() : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'epl.phase' expects an #epl.phase, got "forward"}}
  %0 = arith.addf %x, %x {epl.phase = "forward"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'epl.origin' expects an integer op id, got "matmul"}}
  %0 = arith.addf %x, %x {epl.origin = "matmul"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{pipeline stage -1 is invalid: stages count from 0}}
  %0 = arith.addf %x, %x {epl.stage = #epl.stage<index = -1>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'epl.action' expects an #epl.action on a func.call, got #epl.action<phase = forward, micro_batch = 0, stage = 0> on 'arith.addf'}}
  %0 = arith.addf %x, %x {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func private @g(%x: tensor<4xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a pipeline action is a forward, backward_input or backward_weight unit, not optimizer}}
  %0 = func.call @g(%x) {epl.action = #epl.action<phase = optimizer, micro_batch = 0, stage = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'epl.checkpoint' is a unit attribute (on ops whose results gradient checkpointing keeps)}}
  %0 = arith.addf %x, %x {epl.checkpoint = 1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A parameter is differentiated and updated: an integer one would make
// epl-apply-optimizer emit float arithmetic on integers (issue 16).
// expected-error @+1 {{'func.func' op argument 0: a "param" is trained, so its elements must be floats, not 'i32' ('tensor<4xi32>')}}
func.func @f(%w: tensor<4xi32> {epl.arg = "param"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result 1: a "state" result must name its state with 'epl.name'}}
func.func @f(%m: tensor<4xf32> {epl.arg = "state", epl.name = "bn/mean"})
    -> (tensor<f32> {epl.result = "loss"}, tensor<4xf32> {epl.result = "state"}) {
  %0 = tensor.empty() : tensor<f32>
  return %0, %m : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result 1: the next value of 'bn/var', but no state argument has that name}}
func.func @f(%m: tensor<4xf32> {epl.arg = "state", epl.name = "bn/mean"})
    -> (tensor<f32> {epl.result = "loss"},
        tensor<4xf32> {epl.result = "state", epl.name = "bn/var"}) {
  %0 = tensor.empty() : tensor<f32>
  return %0, %m : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result 1: state 'bn/mean' is 'tensor<4xf32>' but its next value is 'tensor<8xf32>'}}
func.func @f(%m: tensor<4xf32> {epl.arg = "state", epl.name = "bn/mean"})
    -> (tensor<f32> {epl.result = "loss"},
        tensor<8xf32> {epl.result = "state", epl.name = "bn/mean"}) {
  %0 = tensor.empty() : tensor<f32>
  %1 = tensor.empty() : tensor<8xf32>
  return %0, %1 : tensor<f32>, tensor<8xf32>
}

// -----

// expected-error @+1 {{'func.func' op result 2: state 'bn/mean' already has its next value in result 1}}
func.func @f(%m: tensor<4xf32> {epl.arg = "state", epl.name = "bn/mean"})
    -> (tensor<f32> {epl.result = "loss"},
        tensor<4xf32> {epl.result = "state", epl.name = "bn/mean"},
        tensor<4xf32> {epl.result = "state", epl.name = "bn/mean"}) {
  %0 = tensor.empty() : tensor<f32>
  return %0, %m, %m : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{'epl.wraps' expects the symbol of the function a function wraps, on a function, got 1 : i64}}
func.func @f() attributes {epl.wraps = 1} { return }
