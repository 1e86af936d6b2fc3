//===- BatchSplitting.cpp - A model on a fraction of its batch ------------===//
//
// Part of EPL-MLIR.
//
// Which dimensions are "the batch" follows from the same information as
// sharding propagation: a loop that indexes the batch dimension of one
// operand of a linalg.generic indexes it in every operand that uses it.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/BatchSplitting.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/Transforms/ShardingUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::epl;

namespace {
class BatchAnalysis {
public:
  explicit BatchAnalysis(func::FuncOp fn) : fn(fn) {}

  LogicalResult run() {
    for (BlockArgument arg : fn.getArguments()) {
      StringRef kind = getArgKind(fn, arg.getArgNumber());
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!kind.empty() && kind != "param" && type && type.getRank() > 0)
        dims[arg] = 0;
    }
    // Propagate forwards and backwards until nothing changes.
    for (bool changed = true; changed;) {
      changed = false;
      for (Operation &op : fn.front()) {
        FailureOr<bool> step = visit(&op);
        if (failed(step))
          return failure();
        changed |= *step;
      }
    }
    return success();
  }

  /// The batch dimension of `v`, if it has one.
  std::optional<int64_t> dimOf(Value v) const {
    auto it = dims.find(v);
    if (it == dims.end())
      return std::nullopt;
    return it->second;
  }

  /// The loops of `op` that run over the batch.
  llvm::SmallDenseSet<unsigned> batchLoops(linalg::GenericOp op) const {
    llvm::SmallDenseSet<unsigned> loops;
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    for (OpOperand &operand : op->getOpOperands())
      if (std::optional<int64_t> d = dimOf(operand.get()))
        if (auto expr = dyn_cast<AffineDimExpr>(
                maps[operand.getOperandNumber()].getResult(*d)))
          loops.insert(expr.getPosition());
    if (std::optional<int64_t> d = dimOf(op.getResult(0)))
      if (auto expr = dyn_cast<AffineDimExpr>(maps.back().getResult(*d)))
        loops.insert(expr.getPosition());
    return loops;
  }

private:
  /// Marks dimension `d` of `v`; fails on a second, different one.
  FailureOr<bool> mark(Operation *op, Value v, int64_t d) {
    auto [it, inserted] = dims.try_emplace(v, d);
    if (!inserted && it->second != d)
      return op->emitError()
             << "cannot split the batch through this op: a value would be "
                "batched along dimensions "
             << it->second << " and " << d;
    return inserted;
  }

  FailureOr<bool> visit(Operation *op) {
    return llvm::TypeSwitch<Operation *, FailureOr<bool>>(op)
        .Case([&](linalg::GenericOp g) { return visitGeneric(g); })
        .Case([&](tensor::ExpandShapeOp e) {
          return visitReshape(op, e.getSrc(), e.getResult(),
                              e.getReassociationIndices(),
                              /*collapses=*/false);
        })
        .Case([&](tensor::CollapseShapeOp c) {
          return visitReshape(op, c.getSrc(), c.getResult(),
                              c.getReassociationIndices(),
                              /*collapses=*/true);
        })
        .Case<tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::CastOp>(
            [&](Operation *) { return visitSameRank(op); })
        .Case([&](tensor::ConcatOp c) -> FailureOr<bool> {
          FailureOr<bool> r = visitSameRank(op);
          if (succeeded(r))
            if (std::optional<int64_t> d = dimOf(c.getResult());
                d && *d == static_cast<int64_t>(c.getDim()))
              return op->emitError("cannot split the batch: this concat "
                                   "joins along the batch dimension");
          return r;
        })
        .Default([&](Operation *) -> FailureOr<bool> {
          for (Value v : op->getOperands())
            if (dimOf(v) && !isa<func::ReturnOp>(op))
              return op->emitError() << "cannot split the batch through '"
                                     << op->getName() << "'";
          return false;
        });
  }

  FailureOr<bool> visitGeneric(linalg::GenericOp op) {
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> values(op->getOperands());
    // The init and the result share the output's map.
    values.push_back(op.getResult(0));
    maps.push_back(maps.back());
    if (op.getNumResults() != 1)
      return op.emitError("cannot split the batch through a linalg.generic "
                          "with several results");

    llvm::SmallDenseSet<unsigned> loops;
    for (auto [v, map] : llvm::zip(values, maps)) {
      std::optional<int64_t> d = dimOf(v);
      if (!d)
        continue;
      auto expr = dyn_cast<AffineDimExpr>(map.getResult(*d));
      if (!expr)
        return op.emitError("cannot split the batch: it is indexed by a "
                            "non-trivial expression here");
      loops.insert(expr.getPosition());
    }
    bool changed = false;
    for (auto [v, map] : llvm::zip(values, maps)) {
      if (!isa<RankedTensorType>(v.getType()))
        continue;
      for (auto [pos, expr] : llvm::enumerate(map.getResults()))
        if (auto dim = dyn_cast<AffineDimExpr>(expr);
            dim && loops.contains(dim.getPosition())) {
          FailureOr<bool> m = mark(op, v, pos);
          if (failed(m))
            return failure();
          changed |= *m;
        }
    }
    return changed;
  }

  /// Through a reshape the batch is the major dimension of its group.
  FailureOr<bool> visitReshape(Operation *op, Value src, Value result,
                               ArrayRef<ReassociationIndices> groups,
                               bool collapses) {
    // `groups` index the bigger-rank side, one group per dimension of the
    // smaller-rank side.
    Value small = collapses ? result : src, big = collapses ? src : result;
    bool changed = false;
    if (std::optional<int64_t> d = dimOf(small)) {
      FailureOr<bool> m = mark(op, big, groups[*d].front());
      if (failed(m))
        return failure();
      changed |= *m;
    }
    if (std::optional<int64_t> d = dimOf(big)) {
      for (auto [i, group] : llvm::enumerate(groups)) {
        if (!llvm::is_contained(group, *d))
          continue;
        if (group.front() != *d)
          return op->emitError("cannot split the batch: this reshape "
                               "merges it below another dimension");
        FailureOr<bool> m = mark(op, small, i);
        if (failed(m))
          return failure();
        changed |= *m;
      }
    }
    return changed;
  }

  /// Ops that keep dimensions in place: every tensor operand and result
  /// share the batch dimension.
  FailureOr<bool> visitSameRank(Operation *op) {
    std::optional<int64_t> d;
    SmallVector<Value> values(op->getOperands());
    llvm::append_range(values, op->getResults());
    for (Value v : values)
      if (auto vd = dimOf(v))
        d = vd;
    if (!d)
      return false;
    bool changed = false;
    for (Value v : values) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type)
        continue;
      if (type.getRank() <= *d)
        return op->emitError("cannot split the batch through this "
                             "rank-reducing op");
      FailureOr<bool> m = mark(op, v, *d);
      if (failed(m))
        return failure();
      changed |= *m;
    }
    return changed;
  }

  func::FuncOp fn;
  llvm::DenseMap<Value, int64_t> dims;
};

/// Micro-batches compute the loss of each micro-batch and add them up,
/// which equals the loss of the whole batch exactly when every statistic
/// over the batch is a sum that reaches the loss linearly (a mean is a sum
/// scaled by a constant). Anything else (a batch mean subtracted from each
/// example, a max over the batch, a constant added to the loss) would
/// silently change the result: it is an error naming the op.
class BatchLinearity {
public:
  BatchLinearity(func::FuncOp fn, const BatchAnalysis &batch, int64_t parts)
      : fn(fn), batch(batch), parts(parts) {}

  LogicalResult run() {
    for (Operation &op : fn.front())
      if (failed(visit(&op)))
        return failure();
    return success();
  }

private:
  /// How a scalar of a body depends on the whole-batch statistics.
  enum class Dep { Constant, Linear, Other };

  InFlightDiagnostic fail(Operation *op, const Twine &why, Value statistic) {
    InFlightDiagnostic diag =
        op->emitError() << "cannot split the batch into " << parts
                        << " micro-batches (pipeline.num_micro_batch): " << why
                        << "; micro-batches reproduce only sums over the "
                           "batch that reach the loss linearly";
    if (statistic)
      diag.attachNote(origin.lookup(statistic)->getLoc())
          << "the statistic over the whole batch is computed here";
    return diag;
  }

  LogicalResult visit(Operation *op) {
    if (auto g = dyn_cast<linalg::GenericOp>(op))
      return visitGeneric(g);
    Value statistic;
    for (Value v : op->getOperands())
      if (origin.count(v))
        statistic = v;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      Value loss = ret.getOperand(0);
      if (!origin.count(loss) && !batch.dimOf(loss))
        return fail(op, "the loss does not depend on the batch", Value());
      return success();
    }
    if (!statistic)
      return success();
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
            tensor::ExtractSliceOp>(op)) {
      origin[op->getResult(0)] = origin.lookup(statistic);
      return success();
    }
    return fail(op,
                "'" + op->getName().getStringRef() +
                    "' uses a statistic over the whole batch",
                statistic);
  }

  LogicalResult visitGeneric(linalg::GenericOp op) {
    llvm::SmallDenseSet<unsigned> loops = batch.batchLoops(op);
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    bool reducesBatch = llvm::any_of(loops, [&](unsigned l) {
      return iterators[l] == utils::IteratorType::reduction;
    });
    Block &body = op.getRegion().front();
    llvm::DenseMap<Value, Dep> deps;
    Value statistic;
    for (OpOperand &operand : op->getOpOperands()) {
      Value arg = body.getArgument(operand.getOperandNumber());
      Dep d = Dep::Constant;
      if (origin.count(operand.get())) {
        statistic = operand.get();
        d = Dep::Linear;
      } else if (op.isDpsInit(&operand) &&
                 op.payloadUsesValueFromOperand(&operand) &&
                 (reducesBatch || statistic)) {
        // An accumulator must start at zero: a sum starting elsewhere adds
        // its start once per micro-batch.
        if (!isZeroTensor(operand.get()))
          return fail(op,
                      "this sum over the batch starts from a value that is "
                      "not zero",
                      statistic);
        d = Dep::Linear;
      }
      deps[arg] = d;
    }
    if (reducesBatch) {
      if (statistic)
        return fail(op,
                    "this sum over the batch combines the examples with a "
                    "statistic over the whole batch",
                    statistic);
      Value acc = body.getArgument(op.getNumDpsInputs());
      Operation *comb = cast<linalg::YieldOp>(body.getTerminator())
                            .getOperand(0)
                            .getDefiningOp();
      if (!comb || !isa<arith::AddFOp>(comb) ||
          !llvm::is_contained(comb->getOperands(), acc))
        return fail(op, "this op reduces over the batch other than by a sum",
                    Value());
      origin[op.getResult(0)] = op;
      return success();
    }
    if (!statistic)
      return success();
    if (!loops.empty())
      return fail(op,
                  "this op combines each example with a statistic over the "
                  "whole batch",
                  statistic);
    // Element-wise in the statistics: the body must be linear in them.
    auto depOf = [&](Value v) {
      auto it = deps.find(v);
      return it == deps.end() ? Dep::Constant : it->second;
    };
    for (Operation &inner : body.without_terminator()) {
      SmallVector<Dep> in = llvm::map_to_vector(inner.getOperands(), depOf);
      auto count = [&](Dep d) { return llvm::count(in, d); };
      Dep out =
          count(Dep::Linear) || count(Dep::Other) ? Dep::Other : Dep::Constant;
      if (count(Dep::Other) == 0) {
        if (isa<arith::AddFOp, arith::SubFOp>(inner) && count(Dep::Linear) == 2)
          out = Dep::Linear;
        else if (isa<arith::MulFOp>(inner) && count(Dep::Linear) == 1)
          out = Dep::Linear;
        else if (isa<arith::DivFOp>(inner) && in[0] == Dep::Linear &&
                 in[1] == Dep::Constant)
          out = Dep::Linear;
        else if (isa<arith::NegFOp>(inner) && in[0] == Dep::Linear)
          out = Dep::Linear;
      }
      for (Value r : inner.getResults())
        deps[r] = out;
    }
    Dep result = depOf(body.getTerminator()->getOperand(0));
    if (result == Dep::Other)
      return fail(op,
                  "this op is not linear in a statistic over the whole batch",
                  statistic);
    if (result == Dep::Linear)
      origin[op.getResult(0)] = origin.lookup(statistic);
    return success();
  }

  func::FuncOp fn;
  const BatchAnalysis &batch;
  int64_t parts;
  /// The statistics over the whole batch, and the op that computed each
  /// (its reduction over the batch).
  llvm::DenseMap<Value, Operation *> origin;
};

/// Each tensor.empty and constant gets its own copy per use, so that a
/// value shared by batched and unbatched ops can be retyped for each.
void unshareLeaves(func::FuncOp fn) {
  SmallVector<Operation *> leaves;
  fn.walk([&](Operation *op) {
    if (op->getParentOp() == fn &&
        (isa<tensor::EmptyOp>(op) ||
         (isa<arith::ConstantOp>(op) &&
          isa<RankedTensorType>(op->getResult(0).getType()))))
      leaves.push_back(op);
  });
  for (Operation *leaf : leaves) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : leaf->getUses())
      uses.push_back(&use);
    for (OpOperand *use : llvm::drop_begin(uses)) {
      OpBuilder b(leaf);
      use->set(b.clone(*leaf)->getResult(0));
    }
  }
}
} // namespace

LogicalResult mlir::epl::splitBatch(func::FuncOp model, int64_t parts) {
  unshareLeaves(model);
  BatchAnalysis analysis(model);
  if (failed(analysis.run()))
    return failure();

  auto shrink = [&](Operation *where, Value v) -> LogicalResult {
    std::optional<int64_t> d = analysis.dimOf(v);
    if (!d)
      return success();
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(type.getShape());
    if (ShapedType::isDynamic(shape[*d]) || shape[*d] % parts != 0)
      return where->emitError()
             << "cannot split a batch of " << shape[*d] << " into " << parts
             << " micro-batches (pipeline.num_micro_batch)";
    shape[*d] /= parts;
    v.setType(type.clone(shape));
    return success();
  };

  Block &body = model.front();
  for (BlockArgument arg : body.getArguments())
    if (failed(shrink(model, arg)))
      return failure();
  for (Operation &op : body) {
    for (Value r : op.getResults())
      if (failed(shrink(&op, r)))
        return failure();
    // Ops whose attributes repeat their result's shape.
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(op))
      e.setStaticOutputShape(e.getResultType().getShape());
    if (auto s = dyn_cast<tensor::ExtractSliceOp>(op)) {
      std::optional<int64_t> d = analysis.dimOf(s.getResult());
      if (d) {
        SmallVector<int64_t> sizes(s.getStaticSizes());
        sizes[*d] = s.getResultType().getDimSize(*d);
        s.setStaticSizes(sizes);
      }
    }
    if (auto s = dyn_cast<tensor::InsertSliceOp>(op)) {
      std::optional<int64_t> d = analysis.dimOf(s.getSource());
      if (d) {
        SmallVector<int64_t> sizes(s.getStaticSizes());
        sizes[*d] = s.getSourceType().getDimSize(*d);
        s.setStaticSizes(sizes);
      }
    }
    if (auto c = dyn_cast<arith::ConstantOp>(op))
      if (analysis.dimOf(c.getResult())) {
        auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
        if (!dense || !dense.isSplat())
          return op.emitError("cannot split the batch of a non-splat "
                              "constant");
        c.setValueAttr(DenseElementsAttr::get(
            cast<ShapedType>(c.getType()), dense.getSplatValue<Attribute>()));
      }
  }
  if (failed(BatchLinearity(model, analysis, parts).run()))
    return failure();
  auto resultTypes = body.getTerminator()->getOperandTypes();
  model.setType(FunctionType::get(model.getContext(), body.getArgumentTypes(),
                                  SmallVector<Type>(resultTypes)));
  if (failed(verify(model)))
    return model.emitError()
           << "cannot split the batch of @" << model.getSymName() << " into "
           << parts << " micro-batches";
  return success();
}
