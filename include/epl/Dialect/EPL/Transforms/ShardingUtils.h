//===- ShardingUtils.h - Working with shardings -----------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// Shared by epl-plan, epl-sharding-propagation and epl-insert-collectives:
// building shardings, their local types, and reading and writing the
// shardings that propagation attaches to values.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_SHARDINGUTILS_H
#define EPL_DIALECT_EPL_TRANSFORMS_SHARDINGUTILS_H

#include "epl/Dialect/EPL/IR/EPLOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::epl {

/// Names of the attributes propagation leaves on ops: the sharding of each
/// result, and for linalg ops the mesh axes of each loop.
constexpr llvm::StringLiteral kShardingsAttrName = "epl.shardings";
constexpr llvm::StringLiteral kLoopAxesAttrName = "epl.loop_axes";

using AxisList = SmallVector<StringRef, 2>;

/// A mutable sharding: axes per dimension, pending partial axes and kind.
struct Layout {
  SmallVector<AxisList> dims;
  AxisList partial;
  ReductionKind kind = ReductionKind::Sum;

  static Layout replicated(int64_t rank) {
    Layout l;
    l.dims.resize(rank);
    return l;
  }
  static Layout of(ShardingAttr attr);
  ShardingAttr toAttr(MLIRContext *ctx, StringRef mesh) const;
  bool isReplicated() const;
  bool operator==(const Layout &other) const {
    return dims == other.dims && partial == other.partial &&
           (partial.empty() || kind == other.kind);
  }
  bool operator!=(const Layout &other) const { return !(*this == other); }
  /// Every axis the layout uses (dimensions and partial).
  AxisList allAxes() const;
};

/// The one mesh of a module (epl-plan makes one), or null.
MeshOp getMesh(ModuleOp module);

/// The mesh axes the batch is split over: those dimension 0 of `fn`'s
/// inputs and labels is sharded over (epl-plan's seeds), in order.
AxisList dataAxes(func::FuncOp fn);

/// Whether `v` is all zeros: a zero splat constant, or a fill of zero
/// (`linalg.fill` or its generic form).
bool isZeroTensor(Value v);

/// Whether `v` is cheaper to make again on every device, in whatever layout
/// each user needs, than to communicate: a `tensor.empty`, a splat
/// constant, a fill with a constant, or an element-wise or broadcasting
/// `linalg.generic` of such values and constants. Propagation gives these
/// no say (they carry no data) and partitioning recreates them per use.
/// `cache`, when given, remembers the answers: a long element-wise chain
/// would otherwise be walked again for each of its ops.
bool isCheap(Value v, llvm::DenseMap<Value, bool> *cache = nullptr);

/// How the value a linalg.generic yields depends on the block arguments
/// marked in `linear` (the others are constants): not at all, linearly
/// (sums and differences of them, each scaled by constants), or otherwise.
/// Linear ops keep a sum of partial sums a partial sum, and a sum over the
/// batch a sum over the batch.
enum class Linearity { Constant, Linear, Nonlinear };
Linearity linearityOf(linalg::GenericOp op, ArrayRef<bool> linear);

/// The pipeline stage `v` is made on: its op's `epl.stage`, else the
/// latest stage of what the op reads (through a loop's results, what the
/// loop yields), or std::nullopt when it depends on no stage.
std::optional<int64_t> pipelineStageOf(Value v);

/// Product of the sizes of `axes` in `mesh`.
int64_t groupSize(MeshOp mesh, ArrayRef<StringRef> axes);

/// The per-device type of `type` laid out as `layout`; fails when a split
/// does not divide its dimension.
FailureOr<RankedTensorType> localType(MeshOp mesh, RankedTensorType type,
                                      const Layout &layout);

/// An ArrayAttr of strings.
ArrayAttr axesAttr(MLIRContext *ctx, ArrayRef<StringRef> axes);

/// Whether `block` makes `a` before `b`: by the ops of `block` that make
/// them (their ancestors there); a value it does not make (an argument)
/// comes first. The order in which a step's gradients become final.
bool madeBefore(Block *block, Value a, Value b);

/// Splits items of `sizes`, in that order, into at most `parts` runs of
/// consecutive items of about equal total size; returns the run (0 ..
/// parts - 1) of each. A run ends once it has its share, or before an item
/// that would overshoot the share by more than the run falls short of it
/// (so that a large last item is not joined to the small ones before it).
SmallVector<unsigned> consecutiveShares(ArrayRef<int64_t> sizes, int64_t parts);

} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_TRANSFORMS_SHARDINGUTILS_H
