//===- EPLDialect.td - EPL dialect definition --------------*- tablegen -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_TD
#define EPL_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def EPL_Dialect : Dialect {
  let name = "epl";
  let cppNamespace = "::mlir::epl";
  let summary = "Strategies, shardings and communication for distributed training";
  let description = [{
    The `epl` dialect carries what EPL (Easy Parallel Library) users say about
    how a model is trained on many devices, and what the compiler derives from
    it. Compute stays in upstream `linalg`, `tensor`, `arith` and `math`; this
    dialect adds:

    * strategy scopes attached to compute ops as `epl.scope`:
      `#epl.replicate<...>` (data parallelism, pipeline stages when named) and
      `#epl.split<...>` (tensor parallelism);
    * the training configuration on the module as `epl.config`, checked
      against EPL's `epl.Config` keys;
    * device meshes with named axes (`epl.mesh`), value shardings over them
      (`#epl.sharding<...>`) and sharding constraints;
    * collectives over mesh axes (`all_reduce`, `all_gather`,
      `reduce_scatter`, `all_to_all`, `broadcast`) and point-to-point
      `send`/`recv` between pipeline stages.

    Discardable attributes understood by the dialect:

    | name | where | value |
    |---|---|---|
    | `epl.config` | `builtin.module` | dictionary of EPL config keys |
    | `epl.scope` | any compute op | `#epl.replicate<...>` or `#epl.split<...>` |
    | `epl.arg` | function argument | `"param"`, `"input"`, `"label"`, `"state"` (model state that is not trained: batch norm's running statistics) or `"opt_state"` |
    | `epl.name` | function argument or result | string: the tensor's name in files |
    | `epl.init` | function argument | `"normal"`, `"zeros"` or `"ones"`: how `epl-run` initialises a parameter |
    | `epl.sharding` | function argument or result | `#epl.sharding<...>` |
    | `epl.shard` | function argument or result of a per-device program | `#epl.sharding<...>`: the value is this device's shard of a value laid out so |
    | `epl.result` | function result | `"loss"`, `"param"`, `"state"`, `"opt_state"` or `"grad"`: what a model or training step returns; a `"grad"` result is the gradient of the parameter argument its `epl.name` names (checked: that parameter exists and has the result's type), a `"state"` result the next value of the state argument its `epl.name` names (checked likewise, and once per state) |
    | `epl.phase` | any op of a training step | `#epl.phase<...>` |
    | `epl.id`, `epl.origin` | ops of a training step | integer: a forward op's id, and the id a backward op comes from |
    | `epl.source` | any op | string: what a frontend made the op of (`epl.torch.export`: the PyTorch module's path and the torch op, `"blocks.0.attn: linear_3"`), printed on the op's line, so an error at the op names it |

    ```mlir
    module attributes {epl.config = {"pipeline.num_micro_batch" = 4 : i64}} {
      epl.mesh @mesh ["data" = 2, "tensor" = 4]
      func.func @model(%x: tensor<32x784xf32> {epl.arg = "input"},
                       %w: tensor<784x512xf32> {epl.arg = "param", epl.name = "w1"})
          -> tensor<32x512xf32> {
        %init = tensor.empty() : tensor<32x512xf32>
        %h = linalg.matmul {epl.scope = #epl.split<devices = 4>}
               ins(%x, %w : tensor<32x784xf32>, tensor<784x512xf32>)
               outs(%init : tensor<32x512xf32>) -> tensor<32x512xf32>
        return %h : tensor<32x512xf32>
      }
    }
    ```
  }];

  // epl.scatter_add decomposes into these (linalg::AggregatedOpInterface):
  // any pass may decompose it.
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;

  let extraClassDeclaration = [{
    /// Names of the discardable attributes this dialect understands.
    static constexpr ::llvm::StringLiteral kConfigAttrName = "epl.config";
    static constexpr ::llvm::StringLiteral kScopeAttrName = "epl.scope";
    static constexpr ::llvm::StringLiteral kArgAttrName = "epl.arg";
    static constexpr ::llvm::StringLiteral kNameAttrName = "epl.name";
    static constexpr ::llvm::StringLiteral kInitAttrName = "epl.init";
    static constexpr ::llvm::StringLiteral kResultAttrName = "epl.result";
    static constexpr ::llvm::StringLiteral kShardAttrName = "epl.shard";
    static constexpr ::llvm::StringLiteral kPhaseAttrName = "epl.phase";
    static constexpr ::llvm::StringLiteral kIdAttrName = "epl.id";
    static constexpr ::llvm::StringLiteral kOriginAttrName = "epl.origin";
    static constexpr ::llvm::StringLiteral kShardingAttrName = "epl.sharding";
    /// On a new parameter (`epl.result = "param"`): the layout of the
    /// gradient its update read (finer than the parameter's under ZeRO),
    /// for reports.
    static constexpr ::llvm::StringLiteral kGradShardAttrName =
        "epl.grad_shard";
    /// On the batch slice of a micro-batch loop: each device takes its
    /// micro-batches from its own shard of the batch.
    static constexpr ::llvm::StringLiteral kMicroBatchAttrName =
        "epl.micro_batch";
    /// The pipeline stage of an op (#epl.stage), and the schedule unit a
    /// call of a stage program is (#epl.action).
    static constexpr ::llvm::StringLiteral kStageAttrName = "epl.stage";
    static constexpr ::llvm::StringLiteral kActionAttrName = "epl.action";
    /// On an op of an L0 model: keep its results for the backward under
    /// gradient_checkpoint.type = "collection" (EPL's collection of
    /// tensors to keep); everything else the backward reads is recomputed.
    static constexpr ::llvm::StringLiteral kCheckpointAttrName =
        "epl.checkpoint";
    /// On an op a frontend made: what of the user's model it comes from.
    static constexpr ::llvm::StringLiteral kSourceAttrName = "epl.source";
    /// On a function: epl-estimate-memory's figures, in bytes.
    static constexpr ::llvm::StringLiteral kMemoryEstimateAttrName =
        "epl.memory_estimate";
    /// On a `memref.global` only the runtime reads (device group
    /// descriptors, assertion messages): it stays in host memory when the
    /// step's buffers live on a GPU (epl-linalg-to-gpu).
    static constexpr ::llvm::StringLiteral kHostGlobalAttrName = "epl.host";
    /// On an argument of a function a runner calls with its buffers: the
    /// function never writes it (a device copy need not go back).
    static constexpr ::llvm::StringLiteral kReadOnlyAttrName =
        "epl.read_only";
    /// On an argument of such a function that receives a result: the
    /// runner passes the buffer of the argument this names (a parameter or
    /// optimizer state updated in place), so the function may write the
    /// result there directly (epl-tie-in-place-arguments).
    static constexpr ::llvm::StringLiteral kInPlaceOfAttrName =
        "epl.in_place_of";
    /// On the function a runner calls for a step (its entry wrapper): the
    /// function whose body it holds, a stage program of an `epl.pipeline`
    /// or the step function. epl-lower-to-runtime checks a wrapper's
    /// grouped and direct messages as those of the program it wraps.
    static constexpr ::llvm::StringLiteral kWrapsAttrName = "epl.wraps";
    /// The mesh axis epl-plan makes for pipeline stages.
    static constexpr ::llvm::StringLiteral kStageAxisName = "stage";

    void registerAttributes();
  }];
}

class EPL_Op<string mnemonic, list<Trait> traits = []>
    : Op<EPL_Dialect, mnemonic, traits>;

class EPL_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<EPL_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // EPL_DIALECT_TD
