//===- ShardingPropagation.cpp - A sharding for every value ---------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/Dialect/EPL/Transforms/ShardingUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "epl-sharding-propagation"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLSHARDINGPROPAGATIONPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
enum Priority { kPropagated = 1, kSeed = 2, kUser = 3 };

/// The combiner of a reduction body, if it has one the partial state can
/// express.
std::optional<ReductionKind> combinerOf(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  Value acc = body.getArgument(op.getNumDpsInputs());
  Operation *comb =
      cast<linalg::YieldOp>(body.getTerminator()).getOperand(0).getDefiningOp();
  if (!comb || !llvm::is_contained(comb->getOperands(), acc))
    return std::nullopt;
  if (isa<arith::AddFOp>(comb) ||
      (isa<arith::SubFOp>(comb) && comb->getOperand(0) == acc))
    return ReductionKind::Sum;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(comb))
    return ReductionKind::Max;
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(comb))
    return ReductionKind::Min;
  return std::nullopt;
}

class Propagation {
public:
  Propagation(func::FuncOp fn, MeshOp mesh, bool explain)
      : fn(fn), mesh(mesh), explain(explain) {}

  LogicalResult run(int64_t &numSharded, int64_t &numConflicts) {
    for (BlockArgument arg : fn.getArguments())
      if (auto s = fn.getArgAttrOfType<ShardingAttr>(
              arg.getArgNumber(), EPLDialect::kShardingAttrName))
        set(arg, Layout::of(s), kSeed);
    // Ops in program order; a loop is visited before its body and again
    // after it, to carry what the body found to its results.
    SmallVector<Operation *> ops, visits;
    std::function<LogicalResult(Block &)> collect =
        [&](Block &block) -> LogicalResult {
      for (Operation &op : block) {
        if (isa<func::CallOp>(op))
          return op.emitError("epl-sharding-propagation: cannot shard "
                              "through a call; inline it first");
        if (auto c = dyn_cast<ShardingConstraintOp>(op))
          set(c.getResult(), Layout::of(c.getSharding()), kUser);
        ops.push_back(&op);
        visits.push_back(&op);
        if (auto loop = dyn_cast<scf::ForOp>(op)) {
          if (failed(collect(*loop.getBody())))
            return failure();
          visits.push_back(&op);
        }
      }
      return success();
    };
    if (failed(collect(fn.front())))
      return failure();

    for (bool changed = true; changed;) {
      changed = false;
      for (Operation *op : visits)
        changed |= visit(op);
      for (Operation *op : llvm::reverse(visits))
        changed |= visit(op);
    }
    numConflicts += conflicts;

    // Record the result: shardings of results and loops, and of the
    // function's arguments and results.
    MLIRContext *ctx = fn.getContext();
    for (Operation *op : ops) {
      if (auto g = dyn_cast<linalg::GenericOp>(op)) {
        SmallVector<Attribute> loops;
        for (const AxisList &axes : loopAxes(g))
          loops.push_back(axesAttr(ctx, axes));
        op->setAttr(kLoopAxesAttrName, ArrayAttr::get(ctx, loops));
        if (explain)
          op->emitRemark() << "loops sharded as "
                           << op->getAttr(kLoopAxesAttrName);
      }
      SmallVector<Attribute> results;
      bool any = false;
      for (Value r : op->getResults()) {
        auto type = dyn_cast<RankedTensorType>(r.getType());
        if (!type) {
          results.push_back(UnitAttr::get(ctx));
          continue;
        }
        Layout l = layoutOf(r);
        numSharded += !l.isReplicated();
        any = true;
        results.push_back(l.toAttr(ctx, mesh.getSymName()));
      }
      if (any)
        op->setAttr(kShardingsAttrName, ArrayAttr::get(ctx, results));
    }
    // All at once: setting one argument's attributes rebuilds the list.
    SmallVector<DictionaryAttr> argAttrs;
    fn.getAllArgAttrs(argAttrs);
    for (BlockArgument arg : fn.getArguments())
      if (isa<RankedTensorType>(arg.getType())) {
        NamedAttrList attrs(argAttrs[arg.getArgNumber()]);
        attrs.set(EPLDialect::kShardingAttrName,
                  layoutOf(arg).toAttr(ctx, mesh.getSymName()));
        argAttrs[arg.getArgNumber()] = attrs.getDictionary(ctx);
      }
    fn.setAllArgAttrs(argAttrs);
    auto ret = cast<func::ReturnOp>(fn.front().getTerminator());
    for (auto [i, v] : llvm::enumerate(ret.getOperands()))
      if (isa<RankedTensorType>(v.getType()))
        fn.setResultAttr(i, EPLDialect::kShardingAttrName,
                         resultLayout(i, v).toAttr(ctx, mesh.getSymName()));
    return success();
  }

private:
  Layout layoutOf(Value v) {
    auto it = layouts.find(v);
    if (it != layouts.end())
      return it->second;
    return Layout::replicated(cast<RankedTensorType>(v.getType()).getRank());
  }
  bool has(Value v) const { return layouts.count(v); }
  int prio(Value v) const {
    auto it = priorities.find(v);
    return it == priorities.end() ? 0 : it->second;
  }
  bool set(Value v, Layout l, int priority) {
    if (has(v))
      return false;
    layouts[v] = std::move(l);
    priorities[v] = priority;
    return true;
  }

  /// A result returned under the name of an argument (a new parameter or
  /// optimizer state) must be laid out like it, to feed the next step; a
  /// parameter's gradient like the parameter, to update it element-wise.
  Layout resultLayout(unsigned index, Value v) {
    auto name =
        fn.getResultAttrOfType<StringAttr>(index, EPLDialect::kNameAttrName);
    auto kind =
        fn.getResultAttrOfType<StringAttr>(index, EPLDialect::kResultAttrName);
    if (name && kind &&
        (kind.getValue() == "param" || kind.getValue() == "opt_state" ||
         kind.getValue() == "grad"))
      for (BlockArgument arg : fn.getArguments())
        if (getArgName(fn, arg.getArgNumber()) == name.getValue())
          return layoutOf(arg);
    if (kind && kind.getValue() == "loss")
      return Layout::replicated(0);
    Layout l = layoutOf(v);
    l.partial.clear();
    return l;
  }

  /// The mesh axes of each loop of `op`, from its operands' layouts:
  /// higher priority first, then the bigger tensor (moving it would cost
  /// the most), then operand order.
  SmallVector<AxisList> loopAxes(linalg::GenericOp op) {
    unsigned numLoops = op.getNumLoops();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    struct Candidate {
      Value v;
      AffineMap map;
      int priority;
      int64_t bytes;
      unsigned order;
    };
    SmallVector<Candidate> candidates;
    SmallVector<Value> values(op->getOperands());
    // Results share their init's map.
    for (auto [i, r] : llvm::enumerate(op->getResults())) {
      values.push_back(r);
      maps.push_back(maps[op.getNumDpsInputs() + i]);
    }
    for (auto [i, v] : llvm::enumerate(values)) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || !has(v))
        continue;
      // An init the body does not read carries no data: it has no vote.
      if (i >= static_cast<size_t>(op.getNumDpsInputs()) &&
          i < op->getNumOperands() &&
          !op.payloadUsesValueFromOperand(&op->getOpOperand(i)))
        continue;
      int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth();
      candidates.push_back({v, maps[i], prio(v), bytes, (unsigned)i});
    }
    llvm::stable_sort(candidates, [](const Candidate &a, const Candidate &b) {
      if (a.priority != b.priority)
        return a.priority > b.priority;
      return a.bytes > b.bytes;
    });
    std::optional<ReductionKind> combiner = combinerOf(op);
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<AxisList> loops(numLoops);
    llvm::SmallDenseSet<StringRef> used;
    bool conflict = false;
    for (const Candidate &c : candidates) {
      Layout l = layoutOf(c.v);
      for (auto [pos, expr] : llvm::enumerate(c.map.getResults())) {
        auto dim = dyn_cast<AffineDimExpr>(expr);
        if (!dim || pos >= l.dims.size() || l.dims[pos].empty())
          continue;
        unsigned loop = dim.getPosition();
        // A reduction loop can only be sharded when the body's combiner
        // can be resolved later.
        if (iterators[loop] == utils::IteratorType::reduction && !combiner)
          continue;
        const AxisList &axes = l.dims[pos];
        if (!loops[loop].empty() ||
            llvm::any_of(axes, [&](StringRef a) { return used.contains(a); })) {
          conflict |= loops[loop] != axes;
          continue;
        }
        loops[loop] = axes;
        used.insert(axes.begin(), axes.end());
      }
    }
    conflicts += conflict;
    return loops;
  }

  /// The partial-sum axes an element-wise sum `a + b` keeps: a sum of
  /// partial sums is a partial sum (gradients accumulated over
  /// micro-batches stay unreduced until the update). Both must be partial
  /// sums over the same axes, or one the loop's accumulator.
  std::optional<AxisList> linearSum(linalg::GenericOp op) {
    if (!isElementwiseSum(op))
      return std::nullopt;
    std::optional<AxisList> partial;
    for (OpOperand *in : op.getDpsInputOperands()) {
      // Unknown yet: only a loop's accumulator, which the sum then defines
      // (anything else, e.g. a bias, would be added once per device).
      if (!has(in->get())) {
        auto arg = dyn_cast<BlockArgument>(in->get());
        if (!arg || !isa<scf::ForOp>(arg.getOwner()->getParentOp()))
          return std::nullopt;
        continue;
      }
      Layout l = layoutOf(in->get());
      if (l.partial.empty() || l.kind != ReductionKind::Sum ||
          (partial && *partial != l.partial))
        return std::nullopt;
      partial = l.partial;
    }
    return partial;
  }

  bool visitGeneric(linalg::GenericOp op) {
    // Nothing known about any operand: leave it to the others.
    if (llvm::none_of(op->getOperands(), [&](Value v) { return has(v); }) &&
        llvm::none_of(op->getResults(), [&](Value v) { return has(v); }))
      return false;
    SmallVector<AxisList> loops = loopAxes(op);
    std::optional<AxisList> sum = linearSum(op);
    std::optional<ReductionKind> combiner = combinerOf(op);
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    auto layoutThrough = [&](AffineMap map, int64_t rank) {
      Layout l = Layout::replicated(rank);
      for (auto [pos, expr] : llvm::enumerate(map.getResults()))
        if (auto dim = dyn_cast<AffineDimExpr>(expr))
          l.dims[pos] = loops[dim.getPosition()];
      return l;
    };
    bool changed = false;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type)
        continue;
      Layout l =
          layoutThrough(maps[operand.getOperandNumber()], type.getRank());
      if (sum) {
        l.partial = *sum;
        l.kind = ReductionKind::Sum;
      }
      changed |= set(operand.get(), l, kPropagated);
    }
    for (auto [i, result] : llvm::enumerate(op->getResults())) {
      Layout out =
          layoutThrough(maps[op.getNumDpsInputs() + i],
                        cast<RankedTensorType>(result.getType()).getRank());
      for (auto [loop, axes] : llvm::enumerate(loops))
        if (iterators[loop] == utils::IteratorType::reduction)
          out.partial.append(axes.begin(), axes.end());
      if (!out.partial.empty())
        out.kind = *combiner;
      if (sum) {
        out.partial = *sum;
        out.kind = ReductionKind::Sum;
      }
      changed |= set(result, out, kPropagated);
    }
    return changed;
  }

  /// Through a reshape, a group's major dimension carries the axes.
  bool visitReshape(Value small, Value big,
                    ArrayRef<ReassociationIndices> groups) {
    bool changed = false;
    int64_t smallRank = cast<RankedTensorType>(small.getType()).getRank();
    int64_t bigRank = cast<RankedTensorType>(big.getType()).getRank();
    if (has(small) && !has(big)) {
      Layout s = layoutOf(small), l = Layout::replicated(bigRank);
      for (auto [i, group] : llvm::enumerate(groups))
        l.dims[group.front()] = s.dims[i];
      l.partial = s.partial;
      l.kind = s.kind;
      changed |= set(big, l, kPropagated);
    } else if (has(big) && !has(small)) {
      Layout s = layoutOf(big), l = Layout::replicated(smallRank);
      for (auto [i, group] : llvm::enumerate(groups))
        l.dims[i] = s.dims[group.front()];
      l.partial = s.partial;
      l.kind = s.kind;
      changed |= set(small, l, kPropagated);
    }
    return changed;
  }

  /// Ops that keep dimensions in place, except the `cut` ones.
  bool visitSameRank(Operation *op, ArrayRef<int64_t> cut) {
    std::optional<Layout> known;
    SmallVector<Value> values;
    for (Value v : op->getOperands())
      if (auto t = dyn_cast<RankedTensorType>(v.getType()))
        values.push_back(v);
    llvm::append_range(values, op->getResults());
    int64_t rank = cast<RankedTensorType>(op->getResult(0).getType()).getRank();
    for (Value v : values)
      if (has(v) && cast<RankedTensorType>(v.getType()).getRank() == rank) {
        known = layoutOf(v);
        break;
      }
    if (!known)
      return false;
    known->partial.clear();
    for (int64_t d : cut)
      known->dims[d].clear();
    bool changed = false;
    for (Value v : values)
      if (cast<RankedTensorType>(v.getType()).getRank() == rank)
        changed |= set(v, *known, kPropagated);
    return changed;
  }

  /// A loop-carried value, its initial value, what the body yields and
  /// the loop's result are one value: one layout, partial state included.
  bool visitLoop(scf::ForOp loop) {
    bool changed = false;
    for (unsigned i = 0; i < loop.getNumResults(); ++i) {
      Value tied[] = {loop.getYieldedValues()[i], loop.getRegionIterArgs()[i],
                      loop.getResult(i), loop.getInitArgs()[i]};
      if (!isa<RankedTensorType>(tied[0].getType()))
        continue;
      Value best;
      for (Value v : tied)
        if (has(v) && (!best || prio(v) > prio(best)))
          best = v;
      if (!best)
        continue;
      Layout l = layoutOf(best);
      for (Value v : tied)
        changed |= set(v, l, kPropagated);
    }
    return changed;
  }

  bool visit(Operation *op) {
    return llvm::TypeSwitch<Operation *, bool>(op)
        .Case([&](linalg::GenericOp g) { return visitGeneric(g); })
        .Case([&](scf::ForOp loop) { return visitLoop(loop); })
        .Case([&](tensor::ExpandShapeOp e) {
          return visitReshape(e.getSrc(), e.getResult(),
                              e.getReassociationIndices());
        })
        .Case([&](tensor::CollapseShapeOp c) {
          return visitReshape(c.getResult(), c.getSrc(),
                              c.getReassociationIndices());
        })
        .Case([&](tensor::ExtractSliceOp s) {
          // A micro-batch of the batch is cut from each device's shard.
          SmallVector<int64_t> cut;
          if (!s->hasAttr(EPLDialect::kMicroBatchAttrName))
            for (int64_t d = 0; d < s.getSourceType().getRank(); ++d)
              if (s.getStaticSizes()[d] != s.getSourceType().getDimSize(d))
                cut.push_back(d);
          return s.getSourceType().getRank() == s.getResultType().getRank() &&
                 visitSameRank(s, cut);
        })
        .Case([&](tensor::InsertSliceOp s) {
          SmallVector<int64_t> cut;
          for (int64_t d = 0; d < s.getDestType().getRank(); ++d)
            if (s.getStaticSizes()[d] != s.getDestType().getDimSize(d))
              cut.push_back(d);
          return s.getSourceType().getRank() == s.getDestType().getRank() &&
                 visitSameRank(s, cut);
        })
        .Case([&](tensor::ConcatOp c) {
          return visitSameRank(c, {static_cast<int64_t>(c.getDim())});
        })
        .Case([&](tensor::CastOp c) { return visitSameRank(c, {}); })
        .Default([](Operation *) { return false; });
  }

  func::FuncOp fn;
  MeshOp mesh;
  bool explain;
  llvm::DenseMap<Value, Layout> layouts;
  llvm::DenseMap<Value, int> priorities;
  int64_t conflicts = 0;
};

struct EPLShardingPropagationPass
    : public mlir::epl::impl::EPLShardingPropagationPassBase<
          EPLShardingPropagationPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MeshOp mesh = getMesh(module);
    if (!mesh)
      return; // One device: nothing to propagate.
    int64_t sharded = 0, conflicts = 0;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      Propagation propagation(fn, mesh, printDecisions);
      if (failed(propagation.run(sharded, conflicts)))
        return signalPassFailure();
    }
    numSharded += sharded;
    numConflicts += conflicts;
  }
};
} // namespace
