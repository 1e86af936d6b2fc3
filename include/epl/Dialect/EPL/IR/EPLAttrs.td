//===- EPLAttrs.td - EPL attributes ------------------------*- tablegen -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_ATTRS_TD
#define EPL_ATTRS_TD

include "epl/Dialect/EPL/IR/EPLDialect.td"
include "epl/Dialect/EPL/IR/EPLInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Reduction kinds
//===----------------------------------------------------------------------===//

def EPL_ReductionKind : I32EnumAttr<"ReductionKind",
    "how values from several devices are combined", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">,
      I32EnumAttrCase<"Mean", 3, "mean">,
    ]> {
  let cppNamespace = "::mlir::epl";
  let genSpecializedAttr = 0;
}

def EPL_ReductionKindAttr : EnumAttr<EPL_Dialect, EPL_ReductionKind, "reduction"> {
  let summary = "reduction kind of a collective or of a pending partial value";
  let description = [{
    One of `sum`, `max`, `min`, `mean`. Written bare inside ops
    (`epl.all_reduce %x on @mesh over ["data"] mean`) and as
    `#epl.reduction<sum>` on its own.
  }];
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Training phases
//===----------------------------------------------------------------------===//

def EPL_Phase : I32EnumAttr<"Phase", "the part of a training step an op is in", [
      I32EnumAttrCase<"Forward", 0, "forward">,
      I32EnumAttrCase<"BackwardInput", 1, "backward_input">,
      I32EnumAttrCase<"BackwardWeight", 2, "backward_weight">,
      I32EnumAttrCase<"Optimizer", 3, "optimizer">,
      I32EnumAttrCase<"Recompute", 4, "recompute">,
    ]> {
  let cppNamespace = "::mlir::epl";
  let genSpecializedAttr = 0;
}

def EPL_PhaseAttr : EnumAttr<EPL_Dialect, EPL_Phase, "phase"> {
  let summary = "phase of an op in a training step";
  let description = [{
    `epl-autodiff` tags every op of the training step it builds with its
    phase, as `epl.phase`: `forward`, `backward_input` (gradients flowing
    to activations) or `backward_weight` (gradients of parameters, which
    zero-bubble pipeline schedules may delay); `epl-apply-optimizer` tags
    the update `optimizer`; `epl-rematerialize` tags the forward ops it
    copies into the backward (gradient checkpointing) `recompute`: they run
    with the backward, and pipeline schedules count them in its cost.
    Backward and recomputed ops also carry `epl.origin`, the
    `epl.id` of the forward op they come from. Phases describe the step for
    readers and schedules; no pass finds gradients by them.

    ```mlir
    %g = linalg.generic {..., epl.phase = #epl.phase<backward_weight>, epl.origin = 3 : i64} ...
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Strategy scopes
//===----------------------------------------------------------------------===//

def EPL_ReplicateAttr : EPL_Attr<"Replicate", "replicate",
    [EPL_ScopeAttrInterface]> {
  let summary = "data-parallel strategy scope (EPL's `replicate`)";
  let description = [{
    Marks the op it is attached to (as `epl.scope`) as part of a replicated
    region of the model: each replica of that part uses `devices` devices, and
    the global batch is split across replicas. Consecutive `replicate` scopes
    with different `name`s are pipeline stages, fed micro-batches as
    `pipeline.num_micro_batch` says. Ops without a scope belong to the default
    strategy, `replicate<devices = 1>`, as in EPL.

    ```mlir
    %h = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "stage_0">}
           ins(%x, %w : tensor<32x784xf32>, tensor<784x512xf32>)
           outs(%init : tensor<32x512xf32>) -> tensor<32x512xf32>
    ```
  }];
  let parameters = (ins "int64_t":$devices,
                        OptionalParameter<"::mlir::StringAttr">:$name);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def EPL_SplitAttr : EPL_Attr<"Split", "split",
    [EPL_ScopeAttrInterface]> {
  let summary = "tensor-parallel strategy scope (EPL's `split`)";
  let description = [{
    Marks the op it is attached to (as `epl.scope`) as split across `devices`
    devices: its weights are sharded (along their output features, or their
    input features when the input is already split, as Megatron does) and
    the compiler inserts the communication this needs.

    ```mlir
    %logits = linalg.matmul {epl.scope = #epl.split<devices = 8>}
                ins(%h, %w2 : tensor<32x512xf32>, tensor<512x10xf32>)
                outs(%init : tensor<32x10xf32>) -> tensor<32x10xf32>
    ```
  }];
  let parameters = (ins "int64_t":$devices,
                        OptionalParameter<"::mlir::StringAttr">:$name);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Pipeline stages and actions
//===----------------------------------------------------------------------===//

def EPL_StageAttr : EPL_Attr<"Stage", "stage"> {
  let summary = "the pipeline stage an op of a training step runs on";
  let description = [{
    `epl-plan` puts `epl.stage` on every op of a model with several
    pipeline stages: a forward op in a named scope (`replicate` or `split`)
    gets that scope's stage (names are stages 0, 1, ..., in the order the
    model first uses them, as in EPL); an op without a scope gets the
    latest stage of its operands (the loss after the last stage is on the
    last stage), or, when it reads no stage's value, the first stage that
    uses it (a layer before the first scope); an op cheap to make (a
    constant, a fill) gets none: every stage that uses it makes its own.
    Users may also write `epl.stage` directly instead of scopes.
    `epl-autodiff` gives each backward op the stage of its forward origin,
    and the sum of a value's gradient contributions the value's stage.
    With interleaved schedules `index` is the virtual stage; it runs on
    stage device `index mod p`.

    ```mlir
    %h = linalg.matmul {epl.stage = #epl.stage<index = 1, name = "stage_1">}
           ins(%a, %w : tensor<8x16xf32>, tensor<16x16xf32>)
           outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
    ```
  }];
  let parameters = (ins "int64_t":$index,
                        OptionalParameter<"::mlir::StringAttr">:$name);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def EPL_ActionAttr : EPL_Attr<"Action", "action"> {
  let summary = "one unit of a pipeline schedule";
  let description = [{
    `epl-pipeline-partition` turns a training step into one program per
    stage device whose body is the schedule, spelled out: calls of the
    stage's forward (F), input-gradient (B) and weight-gradient (W)
    functions for each micro-batch, in the order the schedule runs them,
    between the `epl.send`s and `epl.recv`s that move activations and their
    gradients. Each such call carries `epl.action`: its phase, micro-batch
    and (virtual) stage, for readers, tests, the schedule simulator and the
    runtime's trace.

    ```mlir
    %act, %res = func.call @model_s1_forward(%c3, %in, %w)
        {epl.action = #epl.action<phase = forward, micro_batch = 3, stage = 1>}
        : (index, tensor<4x16xf32>, tensor<16x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
    ```
  }];
  let parameters = (ins EnumParameter<EPL_Phase>:$phase,
                        "int64_t":$micro_batch, "int64_t":$stage);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Sharding
//===----------------------------------------------------------------------===//

def EPL_ShardingAttr : EPL_Attr<"Sharding", "sharding"> {
  let summary = "how a tensor value is laid out over a device mesh";
  let description = [{
    For each dimension of a tensor, the list of mesh axes it is split over
    (major to minor; an empty list means the dimension is replicated), plus
    optionally the mesh axes over which the value is a *pending partial
    reduction*: every device holds a partial result and the true value is the
    `sum` (or `max`, `min`) of them over those axes. A contraction over a split
    dimension produces such a value; resolving it is an `all_reduce`, or a
    `reduce_scatter` when the consumer wants the value split.

    A sharding is checked against the value it describes: its rank must match
    the tensor's, every axis must exist in the mesh and be used at most once,
    and the product of the axis sizes of a dimension must divide it.

    ```mlir
    epl.mesh @mesh ["data" = 2, "tensor" = 4]
    // Rows split over "data", columns over "tensor".
    #epl.sharding<@mesh, [["data"], ["tensor"]]>
    // Rows split over "data"; each device holds a partial sum over "tensor".
    #epl.sharding<@mesh, [["data"], []], partial sum ["tensor"]>
    // A scalar, fully replicated.
    #epl.sharding<@mesh, []>
    ```
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$mesh,
    ArrayRefParameter<"::mlir::ArrayAttr", "mesh axes per tensor dimension">:$dims,
    "::mlir::ArrayAttr":$partial_axes,
    "::mlir::epl::ReductionKind":$partial_kind
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilderWithInferredContext<(ins
        "::mlir::FlatSymbolRefAttr":$mesh,
        "::llvm::ArrayRef<::mlir::ArrayAttr>":$dims), [{
      return $_get(mesh.getContext(), mesh, dims,
                   ::mlir::ArrayAttr::get(mesh.getContext(), {}),
                   ::mlir::epl::ReductionKind::Sum);
    }]>
  ];
  let extraClassDeclaration = [{
    /// Mesh axes that dimension `dim` is split over, major to minor.
    ::llvm::SmallVector<::llvm::StringRef> getDimAxes(unsigned dim) const;
    /// Mesh axes over which the value is a pending partial reduction.
    ::llvm::SmallVector<::llvm::StringRef> getPartialAxisNames() const;
    /// Whether the value is a pending partial reduction.
    bool isPartial() const { return !getPartialAxes().empty(); }
    /// Whether no dimension is split and nothing is pending.
    bool isFullyReplicated() const;
  }];
}

#endif // EPL_ATTRS_TD
