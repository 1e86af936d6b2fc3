//===- ShardingRule.h - How an op's dimensions shard together ---*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// A sharding rule describes an op in terms of *factors* (as Shardy's
// OpShardingRule does): the independent index spaces its operands and
// results are made of. A linalg.generic's factors are its loops, read off
// its indexing maps; a reshape's are the dimensions of its bigger-rank
// side, so that the head dimension of `[b, s, h*d] -> [b, s, h, d]` is one
// factor on both sides. Each tensor dimension is a list of factors, major
// first. Propagation, partitioning and batch splitting are drivers over
// these rules: supporting a new op means giving it a rule
// (ShardingRuleOpInterface), nothing else.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_IR_SHARDINGRULE_H
#define EPL_DIALECT_EPL_IR_SHARDINGRULE_H

#include "epl/Dialect/EPL/IR/EPLAttrs.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace mlir {
class DialectRegistry;
namespace linalg {
class LinalgOp;
} // namespace linalg
namespace tensor {
class ExtractOp;
} // namespace tensor
namespace epl {

struct ShardingRule {
  enum class FactorKind {
    /// Split over some axes, every value holding it holds a slice.
    Parallel,
    /// Combined over (summed, maxed): split, the results are pending
    /// partial values of the rule's combiner.
    Reduction,
    /// Must stay whole on every device: a sliced or concatenated
    /// dimension, a loop whose index the body reads, a reduction no
    /// collective can finish.
    Whole,
  };
  /// A dimension: its factors, major first (several for a reshape's
  /// merged dimension, none for one indexed by an expression). A factor
  /// keeps the size of the op's reference shape (a slice's source, a pad's
  /// result); where other values differ in that dimension it is Whole.
  using Dim = SmallVector<unsigned, 1>;
  using Dims = SmallVector<Dim>;

  SmallVector<int64_t> factorSizes;
  SmallVector<FactorKind> factorKinds;
  /// How Reduction factors combine.
  std::optional<ReductionKind> combiner;
  /// The dimensions of each operand and each result (none for non-tensors).
  SmallVector<Dims> operands, results;
  /// Operands whose contents the op does not read (an init that only
  /// gives a result its shape): never communicated, made locally.
  SmallVector<bool> unread;
  /// The single result is a linear function of the single tensor operand
  /// that keeps its elements (reshape, cast): a pending partial value may
  /// pass through it unreduced.
  bool passesPartial = false;
  /// Tensors the op's body reads from outside it (`tensor.extract` of a
  /// gather's table, or of scores picked at a label), each with its
  /// dimensions: a dimension read at a loop's own position (`linalg.index`)
  /// is that loop's factor, as an operand's would be, so a device reads
  /// its own shard with its own positions; one read at a computed index
  /// (a token id, a class) has no factor and stays whole.
  SmallVector<std::pair<Value, Dims>> captured;

  unsigned addFactor(int64_t size, FactorKind kind) {
    factorSizes.push_back(size);
    factorKinds.push_back(kind);
    return factorSizes.size() - 1;
  }
  /// A rule of `numOperands` operands (none a tensor yet) and no results.
  static ShardingRule withOperands(unsigned numOperands) {
    ShardingRule rule;
    rule.operands.resize(numOperands);
    rule.unread.assign(numOperands, false);
    return rule;
  }
};

/// Whether `dims` (an operand's or result's entry of a rule) describes
/// `v`: a ranked tensor with one entry per dimension.
inline bool describes(const ShardingRule::Dims &dims, Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == static_cast<int64_t>(dims.size());
}

/// The values of `op` that `rule` describes, each with its dimensions:
/// the operands, the tensors its body reads, then the results; without the
/// operands the op does not read unless `withUnread`.
inline SmallVector<std::pair<Value, const ShardingRule::Dims *>>
describedValues(Operation *op, const ShardingRule &rule,
                bool withUnread = false) {
  SmallVector<std::pair<Value, const ShardingRule::Dims *>> values;
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (describes(rule.operands[i], v) && (withUnread || !rule.unread[i]))
      values.push_back({v, &rule.operands[i]});
  for (const auto &[v, dims] : rule.captured)
    values.push_back({v, &dims});
  for (auto [i, r] : llvm::enumerate(op->getResults()))
    values.push_back({r, &rule.results[i]});
  return values;
}

/// For each dimension of the tensor that `read` (a tensor.extract in the
/// body of `op`) reads, the loop of `op` at whose own position
/// (`linalg.index`) it reads it, if any: a loop of the dimension's static
/// size, placed on that dimension alone (a loop on two, a diagonal, is
/// neither's). One rule for the forward and the backward: a captured
/// read's dimension is that loop's factor, and a gather's gradient
/// scatters along it (a batching dimension).
SmallVector<std::optional<unsigned>> readPositions(linalg::LinalgOp op,
                                                   tensor::ExtractOp read);

/// Attaches ShardingRuleOpInterface to the upstream ops EPL shards: every
/// linalg structured op, and tensor's reshapes, slices, concat, pad and
/// cast.
void registerShardingRuleModels(DialectRegistry &registry);

/// Checks what upstream verifiers leave unchecked and EPL's passes index
/// with: a reshape's reassociation indices (upstream reads them as 32-bit)
/// are each dimension of the bigger side once, in order. Reports an error
/// on `op` prefixed by `pass`; success for every other op.
LogicalResult verifyUpstreamGaps(Operation *op, StringRef pass);

/// verifyUpstreamGaps on every op nested in `root`.
LogicalResult verifyUpstreamGapsIn(Operation *root, StringRef pass);

} // namespace epl
} // namespace mlir

#endif // EPL_DIALECT_EPL_IR_SHARDINGRULE_H
