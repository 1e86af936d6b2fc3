//===- EPLOps.td - EPL operations --------------------------*- tablegen -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_OPS_TD
#define EPL_OPS_TD

include "epl/Dialect/EPL/IR/EPLDialect.td"
include "epl/Dialect/EPL/IR/EPLAttrs.td"
include "epl/Dialect/EPL/IR/EPLInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/Dialect/Linalg/IR/LinalgInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Meshes and shardings
//===----------------------------------------------------------------------===//

def EPL_MeshOp : EPL_Op<"mesh", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a named grid of devices with named axes";
  let description = [{
    Declares a logical arrangement of devices as an N-dimensional grid whose
    axes have names and sizes, major to minor. A device's coordinates along
    the axes decide which devices it communicates with: a collective over
    axis `"tensor"` runs among the devices that differ only in their
    `"tensor"` coordinate.

    The EPL planner derives meshes from the user's scopes: a `"data"` axis
    for replicas, a `"stage"` axis for pipeline stages and a `"tensor"` axis
    for `split`.

    ```mlir
    epl.mesh @mesh ["data" = 2, "tensor" = 4]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       StrArrayAttr:$axis_names,
                       DenseI64ArrayAttr:$axis_sizes);
  let assemblyFormat = [{
    $sym_name custom<MeshAxes>($axis_names, $axis_sizes) attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of devices in the mesh.
    int64_t getNumDevices();
    /// Size of the axis called `name`, or std::nullopt if there is none.
    std::optional<int64_t> getAxisSize(::llvm::StringRef name);
    /// Number of devices in a group spanned by `axes` (product of sizes).
    /// The axes must exist.
    int64_t getGroupSize(::mlir::ArrayAttr axes);
  }];
}

def EPL_ShardingConstraintOp : EPL_Op<"sharding_constraint", [
    Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "pins the sharding of a value";
  let description = [{
    Returns its operand unchanged and fixes the sharding of the result, as
    Shardy's `sdy.sharding_constraint`: sharding propagation treats it as a
    user annotation that wins over propagated shardings, and inserts the
    communication needed to reach it.

    ```mlir
    %y = epl.sharding_constraint %x <@mesh, [["data"], []]> : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, EPL_ShardingAttr:$sharding);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input $sharding attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Pipelines
//===----------------------------------------------------------------------===//

def EPL_PipelineOp : EPL_Op<"pipeline", [
    Symbol, HasParent<"::mlir::ModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a training step run as one program per pipeline stage";
  let description = [{
    Names a pipelined training step: the device whose coordinate along
    mesh axis `axis` is `d` runs function `stages[d]`. Each stage function
    takes the arguments of the step its stage uses (its parameters and
    optimizer state, the inputs or labels it reads; each with `epl.name`)
    and returns what its stage produces (the loss on the last stage, its
    parameters' updates). Runners call `stages[d]` on every device of stage
    `d` and assemble the step from the stages by name. `strategy` and
    `micro_batches` record the schedule the stage bodies spell out.

    ```mlir
    epl.mesh @mesh ["stage" = 2, "data" = 2]
    epl.pipeline @model on @mesh over "stage" stages [@model_stage0, @model_stage1]
        strategy "PreferBackward" micro_batches 4
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FlatSymbolRefAttr:$mesh,
                       StrAttr:$axis, SymbolRefArrayAttr:$stages,
                       StrAttr:$strategy, I64Attr:$micro_batches);
  let assemblyFormat = [{
    $sym_name `on` $mesh `over` $axis `stages` $stages `strategy` $strategy
    `micro_batches` $micro_batches attr-dict
  }];
  let extraClassDeclaration = [{
    /// The stage functions, in stage order.
    ::llvm::SmallVector<::mlir::func::FuncOp> getStageFunctions();
  }];
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

class EPL_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : EPL_Op<mnemonic, !listconcat(traits, [
        EPL_CollectiveOpInterface,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>])>;

def EPL_AllReduceOp : EPL_CollectiveOp<"all_reduce",
    [Pure, SameOperandsAndResultType]> {
  let summary = "combines a tensor across the devices of mesh axes";
  let description = [{
    Every device in a group spanned by `axes` contributes `input`; every
    device receives the element-wise `sum` (or `max`, `min`, `mean`) of all
    contributions. Groups are the sets of devices that differ only in their
    coordinates along `axes`.

    ```mlir
    epl.mesh @mesh ["data" = 2, "tensor" = 4]
    %g = epl.all_reduce %partial on @mesh over ["tensor"] sum : tensor<32x512xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, EPL_ReductionKindAttr:$kind);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `over` $axes custom<ReductionKind>($kind) attr-dict
    `:` type($result)
  }];
}

def EPL_AllGatherOp : EPL_CollectiveOp<"all_gather", [Pure]> {
  let summary = "concatenates the shards of a tensor along a dimension";
  let description = [{
    Every device in a group spanned by `axes` contributes its shard; every
    device receives the concatenation of all shards along dimension `dim`, in
    the order of the devices' linear index within the group (major to minor
    over `axes`). The result's `dim` is the operand's times the group size;
    all other dimensions are unchanged.

    ```mlir
    epl.mesh @mesh ["data" = 2, "tensor" = 4]
    %full = epl.all_gather %shard on @mesh over ["tensor"] dim 1
              : tensor<32x128xf32> -> tensor<32x512xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `over` $axes `dim` $dim attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def EPL_ReduceScatterOp : EPL_CollectiveOp<"reduce_scatter", [Pure]> {
  let summary = "combines a tensor across devices and keeps one shard each";
  let description = [{
    The `all_reduce` of `input` over the group spanned by `axes`, split along
    dimension `dim` into as many shards as the group has devices; the device
    with linear index `i` in the group keeps shard `i`. This resolves a
    pending partial value whose consumer wants it split (ZeRO's gradient
    reduction). The operand's `dim` must be divisible by the group size.

    ```mlir
    epl.mesh @mesh ["data" = 4]
    %g = epl.reduce_scatter %partial on @mesh over ["data"] sum dim 0
           : tensor<512x10xf32> -> tensor<128x10xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, EPL_ReductionKindAttr:$kind,
                       I64Attr:$dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `over` $axes custom<ReductionKind>($kind) `dim` $dim
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def EPL_AllToAllOp : EPL_CollectiveOp<"all_to_all", [Pure]> {
  let summary = "moves a tensor's split from one dimension to another";
  let description = [{
    Each device splits its `input` along `split_dim` into as many pieces as
    the group spanned by `axes` has devices, sends piece `j` to the device
    with linear index `j`, and concatenates what it receives along
    `concat_dim`. Resharding a value from split-on-rows to split-on-columns is
    one `all_to_all`.

    ```mlir
    epl.mesh @mesh ["tensor" = 4]
    %y = epl.all_to_all %x on @mesh over ["tensor"] split 1 concat 0
           : tensor<8x32xf32> -> tensor<32x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$split_dim,
                       I64Attr:$concat_dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `over` $axes `split` $split_dim `concat` $concat_dim
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def EPL_BroadcastOp : EPL_CollectiveOp<"broadcast",
    [Pure, SameOperandsAndResultType]> {
  let summary = "copies one device's tensor to every device of its group";
  let description = [{
    Every device in a group spanned by `axes` receives the `input` of the
    device whose linear index within the group is `root`; the other devices'
    inputs only give the shape.

    ```mlir
    epl.mesh @mesh ["data" = 4]
    %w = epl.broadcast %w0 on @mesh over ["data"] root 0 : tensor<784x512xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$root);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `over` $axes `root` $root attr-dict `:` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Point-to-point
//===----------------------------------------------------------------------===//

def EPL_SendOp : EPL_CollectiveOp<"send", [
    MemoryEffects<[MemWrite]>]> {
  let summary = "sends a tensor to another device along mesh axes";
  let description = [{
    Sends `input` to the device of the same group (the devices that differ
    only in their coordinates along `axes`) whose linear index within the
    group is `peer`. Between pipeline stages the axis is `"stage"` and the
    peer is the next (or previous) stage. Messages between the same pair of
    devices arrive in the order they were sent; `tag` tells apart
    independent streams between the same pair.

    `grouped`: the send belongs to a group, the run of grouped sends and
    receives around it with nothing between them but constants and empty
    tensors. The group's messages complete together, in any order, and a
    send need not complete before its receive is posted. That is
    how NCCL moves messages between GPUs, without tags and waiting for the
    receiver, so that such sends and receives go from device to device;
    the others are staged through host memory there, where sends do not
    wait. epl-pipeline-partition groups the messages of stage programs
    that it has checked finish so, every receive getting the message it
    expects (see `checkGroupedRendezvous`).

    `direct`: the send goes over a channel to its peer, which the device
    opens when its program starts: the messages of each direction between
    two devices arrive in the order they were sent, whatever their tags,
    and a send does not hold up the sender (on GPUs with NCCL it runs on a
    stream of its own and is done when the receiver takes it, so the
    messages go from device to device). epl-pipeline-partition marks so the
    messages of stage programs it does not group (interleaved 1F1B's) once
    it has checked that each direction receives its messages in the order
    they are sent (see `checkInOrderPerDirection`).

    ```mlir
    epl.mesh @mesh ["stage" = 2, "data" = 2]
    epl.send %act on @mesh over ["stage"] to 1 : tensor<8x512xf32>
    epl.send %act on @mesh over ["stage"] to 1 grouped : tensor<8x512xf32>
    epl.send %act on @mesh over ["stage"] to 1 tag 2 direct : tensor<8x512xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$peer,
                       DefaultValuedAttr<I64Attr, "0">:$tag,
                       UnitAttr:$grouped, UnitAttr:$direct);
  let assemblyFormat = [{
    $input `on` $mesh `over` $axes `to` $peer (`tag` $tag^)?
    (`grouped` $grouped^)? (`direct` $direct^)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

// Receiving consumes a message: a write, so that an unused recv is not
// erased and the sender left waiting.
def EPL_RecvOp : EPL_CollectiveOp<"recv", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "receives a tensor from another device along mesh axes";
  let description = [{
    Receives a tensor of the result type from the device of the same group
    (see `epl.send`) whose linear index within the group is `peer`, matching
    the sender's `tag`. `grouped`: as for `epl.send`, the receive completes
    with the sends and receives right around it, and its result is there
    once they all are. `direct`: as for `epl.send`, the receive takes the
    next message of its peer's channel to this device.

    ```mlir
    epl.mesh @mesh ["stage" = 2, "data" = 2]
    %act = epl.recv on @mesh over ["stage"] from 0 : tensor<8x512xf32>
    %act = epl.recv on @mesh over ["stage"] from 0 grouped : tensor<8x512xf32>
    %act = epl.recv on @mesh over ["stage"] from 0 tag 2 direct : tensor<8x512xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes,
                       I64Attr:$peer, DefaultValuedAttr<I64Attr, "0">:$tag,
                       UnitAttr:$grouped, UnitAttr:$direct);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    `on` $mesh `over` $axes `from` $peer (`tag` $tag^)?
    (`grouped` $grouped^)? (`direct` $direct^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Device coordinates
//===----------------------------------------------------------------------===//

def EPL_GroupIndexOp : EPL_CollectiveOp<"group_index", [Pure]> {
  let summary = "this device's index within its group";
  let description = [{
    The linear index (major to minor over `axes`) of the executing device
    within its group: the devices that differ only in their coordinates
    along `axes`. A per-device program uses it to pick its own slice of a
    replicated value, and tests use it to give each device different data.

    ```mlir
    epl.mesh @mesh ["data" = 2, "tensor" = 4]
    %i = epl.group_index on @mesh over ["tensor"]   // 0, 1, 2 or 3
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes);
  let results = (outs Index:$result);
  let assemblyFormat = "`on` $mesh `over` $axes attr-dict";
}

//===----------------------------------------------------------------------===//
// Computation
//===----------------------------------------------------------------------===//

def EPL_ScatterAddOp : EPL_Op<"scatter_add", [
    Pure, DestinationStyleOpInterface, AllTypesMatch<["dest", "result"]>,
    DeclareOpInterfaceMethods<AggregatedOpInterface, ["decomposeOperation"]>,
    DeclareOpInterfaceMethods<EPL_ShardingRuleOpInterface>]> {
  let summary = "adds each update into the element its indices select";
  let description = [{
    The adjoint of a gather: `epl-autodiff` makes it for a `tensor.extract`
    of a parameter-dependent tensor inside a `linalg.generic` body (an
    embedding lookup, cross-entropy with integer labels). For every
    position `p` of `updates`,

    ```
    result[i_0, ..., i_k] += updates[p]
    ```

    starting from `dest`, where dimension `dest_batching_dims[j]` of `dest`
    is read at `p`'s own position along `updates_batching_dims[j]`, and
    every other dimension of `dest`, in order, at its index tensor's value
    `indices#n[p]` (signless i64, read as signed; each index tensor shaped
    like `updates`). Positions whose indices fall outside `dest` add
    nothing (the forward gather there had no value). Batching dimensions
    are StableHLO's: the gather they come from read each example's row at
    the example's own position (the label's score in cross-entropy), and a
    batching dimension has the size of its `updates` dimension, both static
    (positions along it are not checked when the scatter runs).

    ```mlir
    // d(sum_k w[i[k]])/dw: w = [1, 2, 3, 4], i = [1, 3] gives [0, 1, 0, 1].
    %dw = epl.scatter_add %ones at (%i) into %zeros
            : tensor<2xf32>, tensor<2xi64> into tensor<4xf32>
    // d(-sum_b logp[b, label[b]])/dlogp: row b gets -1 at column label[b].
    %dl = epl.scatter_add %minus_ones at (%labels) into %zeros
            {dest_batching_dims = array<i64: 0>,
             updates_batching_dims = array<i64: 0>}
            : tensor<8xf32>, tensor<8xi64> into tensor<8x4xf32>
    ```

    Its sharding rule shares each batching dimension's factor between
    `updates` and `dest` and makes the other positions of `updates`
    reduction factors (summed) and the other dimensions of `dest` whole:
    split over the batch, each device scatters its own positions into its
    own rows, or, where the batch meets no batching dimension (an
    embedding table), into a whole table, a partial sum.
    `epl-decompose-aggregates` lowers it to a loop nest.
  }];
  // `dest` first: the result type is inferred from a fixed operand.
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$dest,
                       RankedTensorOf<[AnyFloat]>:$updates,
                       Variadic<RankedTensorOf<[I64]>>:$indices,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$dest_batching_dims,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$updates_batching_dims);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $updates `at` ` ` `(` $indices `)` `into` $dest attr-dict `:` type($updates)
    (`,` type($indices)^)? `into` type($dest)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getDestMutable();
    }
  }];
}

#endif // EPL_OPS_TD
