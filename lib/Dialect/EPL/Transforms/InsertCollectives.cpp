//===- InsertCollectives.cpp - The per-device program ---------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/Dialect/EPL/Transforms/ShardingUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#define DEBUG_TYPE "epl-insert-collectives"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLINSERTCOLLECTIVESPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

/// Why a layout has no local type (ShardingUtils' localType).
static constexpr llvm::StringLiteral kCannotSplit =
    "a split dimension is dynamic or not divisible by its devices";

namespace {
/// The layout of a value whose dimensions are `dims` (sharding rule
/// factors, major first) when the factors are sharded over `factors`.
Layout layoutThrough(const ShardingRule::Dims &dims,
                     ArrayRef<AxisList> factors) {
  Layout l = Layout::replicated(dims.size());
  for (auto [pos, dim] : llvm::enumerate(dims))
    if (!dim.empty())
      l.dims[pos] = factors[dim.front()];
  return l;
}

class Partitioner {
public:
  Partitioner(func::FuncOp fn, MeshOp mesh, int64_t &numCollectives)
      : fn(fn), mesh(mesh), b(fn.getContext()), numCollectives(numCollectives),
        recorder(created) {
    b.setListener(&recorder);
  }

  LogicalResult run() {
    // Rules read global shapes (which dimensions a slice cuts): take them
    // all before any value becomes local.
    fn.walk([&](ShardingRuleOpInterface op) {
      if (FailureOr<ShardingRule> rule = op.getShardingRule(); succeeded(rule))
        rules.try_emplace(op, std::move(*rule));
    });
    for (BlockArgument arg : fn.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type)
        continue;
      auto s = fn.getArgAttrOfType<ShardingAttr>(arg.getArgNumber(),
                                                 EPLDialect::kShardingAttrName);
      Layout l = s ? Layout::of(s) : Layout::replicated(type.getRank());
      if (failed(localize(fn, arg, l)))
        return failure();
    }
    SmallVector<Operation *> ops;
    for (Operation &op : fn.front())
      ops.push_back(&op);
    for (Operation *op : ops)
      if (failed(partition(op)))
        return failure();
    // Cheap values every user made anew for itself. Users before what they
    // use, and an op's regions before it (reverse pre-order): nothing is
    // visited after the op holding it is erased (a fill's body was).
    SmallVector<Operation *> all;
    fn.walk<WalkOrder::PreOrder>([&](Operation *op) { all.push_back(op); });
    for (Operation *op : llvm::reverse(all))
      if (op->getNumResults() == 1 && op->use_empty() &&
          isCheap(op->getResult(0)))
        op->erase();
    fn.setType(
        FunctionType::get(fn.getContext(), fn.front().getArgumentTypes(),
                          fn.front().getTerminator()->getOperandTypes()));
    // Arguments and results are now shards: say of what. (All at once:
    // setting one argument's attributes rebuilds the whole list.)
    auto renamed = [&](ArrayRef<DictionaryAttr> all) {
      SmallVector<DictionaryAttr> out;
      for (DictionaryAttr dict : all) {
        NamedAttrList attrs(dict);
        if (Attribute s = attrs.erase(EPLDialect::kShardingAttrName))
          attrs.set(EPLDialect::kShardAttrName, s);
        out.push_back(attrs.getDictionary(fn.getContext()));
      }
      return out;
    };
    SmallVector<DictionaryAttr> args, results;
    fn.getAllArgAttrs(args);
    fn.getAllResultAttrs(results);
    fn.setAllArgAttrs(renamed(args));
    fn.setAllResultAttrs(renamed(results));
    return success();
  }

private:
  /// Gives `v` its local type under layout `l`.
  LogicalResult localize(Operation *where, Value v, const Layout &l) {
    auto type = cast<RankedTensorType>(v.getType());
    FailureOr<RankedTensorType> local = localType(mesh, type, l);
    if (failed(local))
      return where->emitError()
             << "epl-insert-collectives: cannot shard " << type << " as "
             << l.toAttr(fn.getContext(), mesh.getSymName()) << ": "
             << kCannotSplit;
    globals[v] = type;
    layouts[v] = l;
    v.setType(*local);
    return success();
  }

  Layout layoutOfResult(Operation *op, unsigned i) {
    auto all = op->getAttrOfType<ArrayAttr>(kShardingsAttrName);
    if (all && i < all.size())
      if (auto s = dyn_cast<ShardingAttr>(all[i]))
        return Layout::of(s);
    return Layout::replicated(
        cast<RankedTensorType>(op->getResult(i).getType()).getRank());
  }

  ArrayAttr axes(ArrayRef<StringRef> names) {
    return axesAttr(fn.getContext(), names);
  }

  /// Brings local value `v` to layout `to`; one reshard per value and
  /// layout, reused by later consumers (everything is in one block, so the
  /// first one dominates the rest), unless not `shared`: a sharding
  /// constraint communicates where it stands, and keeps its copy to itself.
  FailureOr<Value> reshard(Location loc, Value v, Layout to,
                           bool shared = true) {
    Attribute layout = to.toAttr(fn.getContext(), mesh.getSymName());
    // Reused within a pipeline stage only: a reshard on stage s read by
    // stage t would travel between them, and in the backward the later
    // stage runs first.
    auto key = std::make_pair(
        v, consumerStage
               ? ArrayAttr::get(fn.getContext(), {layout, consumerStage})
               : layout);
    if (Value cached = resharded.lookup(key); cached && shared)
      return cached;
    // Cheap values are made again in the layout wanted, never sent (a sum
    // of a non-zero value over devices would count it once per device).
    Operation *def = v.getDefiningOp();
    bool remake = layouts.lookup(v) != to && isCheap(v) &&
                  (!isa<linalg::LinalgOp>(def) || rules.count(def)) &&
                  (to.partial.empty() || to.kind != ReductionKind::Sum ||
                   isZeroTensor(v));
    FailureOr<Value> r =
        remake ? rematerialize(loc, v, to) : reshardUncached(loc, v, to);
    if (succeeded(r) && shared) {
      resharded[key] = *r;
      // (A value already in the layout is its own reshard, made of nothing:
      // it keeps what an earlier reshard that made it was made of.)
      if (!created.empty())
        madeBy[*r] = created;
    }
    return r;
  }

  /// This device's part of cheap value `v` (see isCheap) under layout
  /// `to`, made anew from the same constants.
  FailureOr<Value> rematerialize(Location loc, Value v, const Layout &to) {
    RankedTensorType global = globals.lookup(v);
    FailureOr<RankedTensorType> local = localType(mesh, global, to);
    if (failed(local))
      return emitError(loc)
             << "epl-insert-collectives: cannot shard " << global << " as "
             << to.toAttr(fn.getContext(), mesh.getSymName()) << ": "
             << kCannotSplit;
    Operation *def = v.getDefiningOp();
    Value made;
    if (auto c = dyn_cast<arith::ConstantOp>(def)) {
      auto splat = cast<DenseElementsAttr>(c.getValue());
      made = arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(*local, splat.getSplatValue<Attribute>()));
    } else if (isa<tensor::EmptyOp>(def)) {
      made = tensor::EmptyOp::create(b, loc, local->getShape(),
                                     local->getElementType());
    } else {
      // A fill or element-wise generic: its factors are its result's
      // dimensions (isCheap), so its tensor operands follow from `to`.
      const ShardingRule &rule = rules.find(def)->second;
      SmallVector<AxisList> factors(rule.factorSizes.size());
      for (auto [pos, dim] : llvm::enumerate(rule.results[0]))
        factors[dim.front()] = to.dims[pos];
      IRMapping mapping;
      for (OpOperand &operand : def->getOpOperands()) {
        if (!describes(rule.operands[operand.getOperandNumber()],
                       operand.get()))
          continue;
        FailureOr<Value> in = reshard(
            loc, operand.get(),
            layoutThrough(rule.operands[operand.getOperandNumber()], factors));
        if (failed(in))
          return failure();
        mapping.map(operand.get(), *in);
      }
      Operation *copy = b.clone(*def, mapping);
      copy->getResult(0).setType(*local);
      made = copy->getResult(0);
    }
    globals[made] = global;
    layouts[made] = to;
    return made;
  }

  FailureOr<Value> reshardUncached(Location loc, Value v, Layout to) {
    Layout cur = layouts.lookup(v);
    RankedTensorType global = globals.lookup(v);
    if (cur == to)
      return v;
    FlatSymbolRefAttr meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
    // Every failure below is this one: said here, once.
    auto typeOf = [&](const Layout &l) -> FailureOr<RankedTensorType> {
      FailureOr<RankedTensorType> local = localType(mesh, global, l);
      if (failed(local))
        emitError(loc) << "epl-insert-collectives: cannot shard " << global
                       << " as " << l.toAttr(fn.getContext(), mesh.getSymName())
                       << ": " << kCannotSplit;
      return local;
    };
    auto record = [&](Value result, const Layout &l) {
      globals[result] = global;
      layouts[result] = l;
      ++numCollectives;
      return result;
    };

    // 1. Resolve a pending partial value, unless it is wanted pending as
    // it is: what follows moves and slices values, which commutes with
    // their reduction (a gradient accumulated into one split otherwise).
    if (!cur.partial.empty() &&
        (cur.partial != to.partial || cur.kind != to.kind)) {
      AxisList p = cur.partial;
      std::optional<int64_t> scatterDim;
      // Scattered along a dimension the consumer wants split over the
      // partial axes, after any it is split over already (ZeRO's shards of
      // a tensor-parallel gradient: ["tensor", "data"]).
      if (cur.kind == ReductionKind::Sum)
        for (int64_t d = 0; d < (int64_t)to.dims.size(); ++d) {
          ArrayRef<StringRef> want = to.dims[d], have = cur.dims[d];
          if (want.size() == have.size() + p.size() &&
              want.take_front(have.size()) == have &&
              want.drop_front(have.size()) == ArrayRef<StringRef>(p))
            scatterDim = d;
        }
      Layout next = cur;
      next.partial.clear();
      if (scatterDim) {
        next.dims[*scatterDim].append(p.begin(), p.end());
        FailureOr<RankedTensorType> t = typeOf(next);
        if (failed(t))
          return failure();
        v = record(ReduceScatterOp::create(
                       b, loc, *t, v, meshRef, axes(p),
                       ReductionKindAttr::get(b.getContext(), cur.kind),
                       b.getI64IntegerAttr(*scatterDim)),
                   next);
      } else {
        v = record(AllReduceOp::create(
                       b, loc, v, meshRef, axes(p),
                       ReductionKindAttr::get(b.getContext(), cur.kind)),
                   next);
      }
      cur = next;
    }
    // 2. Dimensions split the wrong way: move or gather them.
    for (int64_t d = 0; d < (int64_t)cur.dims.size(); ++d) {
      if (cur.dims[d].empty() || cur.dims[d] == to.dims[d])
        continue;
      AxisList moving = cur.dims[d];
      Layout next = cur;
      std::optional<int64_t> target;
      for (int64_t e = 0; e < (int64_t)cur.dims.size(); ++e)
        if (e != d && to.dims[e] == moving && cur.dims[e].empty() &&
            to.dims[d].empty())
          target = e;
      next.dims[d].clear();
      if (target)
        next.dims[*target] = moving;
      FailureOr<RankedTensorType> t = typeOf(next);
      if (failed(t))
        return failure();
      if (target)
        v = record(AllToAllOp::create(b, loc, *t, v, meshRef, axes(moving),
                                      b.getI64IntegerAttr(*target),
                                      b.getI64IntegerAttr(d)),
                   next);
      else
        v = record(AllGatherOp::create(b, loc, *t, v, meshRef, axes(moving),
                                       b.getI64IntegerAttr(d)),
                   next);
      cur = next;
    }
    // 3. Dimensions whole where they should be split: take this device's
    // slice.
    for (int64_t d = 0; d < (int64_t)cur.dims.size(); ++d) {
      if (!cur.dims[d].empty() || to.dims[d].empty())
        continue;
      Layout next = cur;
      next.dims[d] = to.dims[d];
      FailureOr<RankedTensorType> t = typeOf(next);
      if (failed(t))
        return failure();
      Value index = GroupIndexOp::create(b, loc, meshRef, axes(to.dims[d]));
      Value size = arith::ConstantIndexOp::create(b, loc, t->getDimSize(d));
      Value offset = arith::MulIOp::create(b, loc, index, size);
      auto vType = cast<RankedTensorType>(v.getType());
      SmallVector<OpFoldResult> offsets(vType.getRank(), b.getIndexAttr(0));
      offsets[d] = offset;
      SmallVector<OpFoldResult> sizes,
          strides(vType.getRank(), b.getIndexAttr(1));
      for (int64_t s : t->getShape())
        sizes.push_back(b.getIndexAttr(s));
      Value slice = tensor::ExtractSliceOp::create(b, loc, *t, v, offsets,
                                                   sizes, strides);
      globals[slice] = global;
      layouts[slice] = next;
      v = slice;
      cur = next;
    }
    if (cur != to)
      return emitError(loc)
             << "epl-insert-collectives: cannot reshard "
             << cur.toAttr(fn.getContext(), mesh.getSymName()) << " to "
             << to.toAttr(fn.getContext(), mesh.getSymName());
    return v;
  }

  /// Reshards operand `i` of `op` to `to`. The communication belongs to
  /// the phase of the op that needs it (or `phase`, for a terminator).
  LogicalResult require(Operation *op, unsigned i, const Layout &to,
                        Attribute phase = {}) {
    Value v = op->getOperand(i);
    if (!layouts.count(v))
      return success(); // not a sharded tensor (scalars, indices)
    b.setInsertionPoint(op);
    created.clear();
    consumerStage = op->getAttr(EPLDialect::kStageAttrName);
    FailureOr<Value> r = reshard(op->getLoc(), v, to);
    if (failed(r))
      return failure();
    if (!phase)
      phase = op->getAttr(EPLDialect::kPhaseAttrName);
    belongTo(phase);
    // A reshard made for an earlier consumer and reused: it belongs to the
    // earliest phase that needs it (a reduced input gradient that a weight
    // gradient read first is still on the input gradients' path).
    if (auto it = madeBy.find(*r);
        phase && created.empty() && it != madeBy.end())
      for (Operation *c : it->second)
        if (precedes(phase, c->getAttr(EPLDialect::kPhaseAttrName)))
          c->setAttr(EPLDialect::kPhaseAttrName, phase);
    op->setOperand(i, *r);
    return success();
  }

  /// The communication just made (`created`) runs in `phase`, where given,
  /// and on the pipeline stage of the op it was made for: else it took the
  /// stage of what it reads, and a weight gradient's gather of an earlier
  /// stage's activation ran in that stage's backward, after the backward
  /// of the stage that needs it.
  void belongTo(Attribute phase) {
    for (Operation *c : created) {
      if (phase)
        c->setAttr(EPLDialect::kPhaseAttrName, phase);
      if (consumerStage)
        c->setAttr(EPLDialect::kStageAttrName, consumerStage);
    }
    consumerStage = {};
  }

  /// Whether phase `a` runs before phase `b` in a step (forward, input
  /// gradients, weight gradients, update); recomputation is none of these.
  static bool precedes(Attribute a, Attribute b) {
    auto x = dyn_cast_or_null<PhaseAttr>(a), y = dyn_cast_or_null<PhaseAttr>(b);
    auto rank = [](PhaseAttr p) {
      return p.getValue() == Phase::Recompute ? -1
                                              : static_cast<int>(p.getValue());
    };
    return x && y && rank(x) >= 0 && rank(y) >= 0 && rank(x) < rank(y);
  }

  /// The phase of what makes result `i` of a training step: the loss and
  /// model state are forward's, a gradient backward's.
  Attribute resultPhase(unsigned i) {
    auto kind =
        fn.getResultAttrOfType<StringAttr>(i, EPLDialect::kResultAttrName);
    if (!kind || (kind.getValue() != "loss" && kind.getValue() != "state" &&
                  kind.getValue() != "grad"))
      return {};
    return PhaseAttr::get(fn.getContext(), kind.getValue() == "grad"
                                               ? Phase::BackwardWeight
                                               : Phase::Forward);
  }

  /// Records the ops the rewriter creates (to tag them).
  struct Recorder : public OpBuilder::Listener {
    SmallVectorImpl<Operation *> &ops;
    explicit Recorder(SmallVectorImpl<Operation *> &ops) : ops(ops) {}
    void notifyOperationInserted(Operation *op,
                                 OpBuilder::InsertPoint) override {
      ops.push_back(op);
    }
  };

  /// Whether `init` of `op` accumulates a sum whose result is a partial
  /// sum over the same axes as the init already is.
  bool accumulatesPartial(Operation *op, OpOperand &init) {
    // The accumulator must only be added to (the combiner's operand).
    if (auto g = dyn_cast<linalg::GenericOp>(op);
        !g || !g.getMatchingBlockArgument(&init).hasOneUse())
      return false;
    Layout in = layouts.lookup(init.get());
    Layout out = layoutOfResult(op, cast<DestinationStyleOpInterface>(op)
                                        .getTiedOpResult(&init)
                                        .getResultNumber());
    return !in.partial.empty() && in.kind == ReductionKind::Sum &&
           out.kind == ReductionKind::Sum && in.partial == out.partial;
  }

  /// A tensor an op's body reads from outside (a gather's table) is
  /// indexed with global positions, so every device needs it whole, except
  /// along the dimensions `rule` reads at a loop's own position: those are
  /// sharded as that loop is, each device reading its shard at its local
  /// positions.
  LogicalResult localizeCaptured(Operation *op, const ShardingRule *rule,
                                 ArrayRef<AxisList> factors) {
    llvm::SetVector<Value> captured;
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, captured);
    // A read the rule names but the body no longer makes would leave the
    // tensor whole while the body reads it at local positions.
    if (rule)
      for (const auto &entry : rule->captured)
        if (!captured.contains(entry.first))
          return op->emitError("epl-insert-collectives: internal error: the "
                               "sharding rule names a tensor this op's body "
                               "no longer reads");
    for (Value v : captured) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || !layouts.count(v))
        continue;
      Layout want = Layout::replicated(type.getRank());
      if (rule)
        if (const auto *entry = llvm::find_if(
                rule->captured, [&](const auto &c) { return c.first == v; });
            entry != rule->captured.end())
          want = layoutThrough(entry->second, factors);
      if (layouts.lookup(v) == want)
        continue;
      b.setInsertionPoint(op);
      created.clear();
      consumerStage = op->getAttr(EPLDialect::kStageAttrName);
      FailureOr<Value> local = reshard(op->getLoc(), v, want);
      if (failed(local))
        return failure();
      belongTo(op->getAttr(EPLDialect::kPhaseAttrName));
      for (Region &region : op->getRegions())
        replaceAllUsesInRegionWith(v, *local, region);
    }
    return success();
  }

  /// Partitions an op by its sharding rule: each operand is brought to
  /// the layout its factors give it, each result takes its local type.
  LogicalResult partitionByRule(Operation *op, const ShardingRule &rule) {
    SmallVector<AxisList> factors(rule.factorSizes.size());
    if (auto attr = op->getAttrOfType<ArrayAttr>(kLoopAxesAttrName))
      for (auto [i, a] : llvm::enumerate(attr))
        for (Attribute name : cast<ArrayAttr>(a))
          factors[i].push_back(cast<StringAttr>(name).getValue());
    // A partial result without a sharded reduction is one propagation found
    // linear in its partial operands (a sum of partial sums, one scaled),
    // or a reshape passing a pending partial value on: the partial
    // operands stay unreduced.
    Layout out0 = op->getNumResults() ? layoutOfResult(op, 0) : Layout();
    bool reduces = llvm::any_of(llvm::enumerate(factors), [&](auto f) {
      return !f.value().empty() &&
             rule.factorKinds[f.index()] == ShardingRule::FactorKind::Reduction;
    });
    // A reshape passes a pending max or min on as well (propagation
    // decided so); only a sum is linear in its operands otherwise.
    bool passPartial = !out0.partial.empty() && !reduces &&
                       (out0.kind == ReductionKind::Sum || rule.passesPartial);
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    for (OpOperand &operand : op->getOpOperands()) {
      unsigned i = operand.getOperandNumber();
      if (!describes(rule.operands[i], operand.get()))
        continue;
      Layout want = layoutThrough(rule.operands[i], factors);
      if (passPartial &&
          layouts.lookup(operand.get()).partial == out0.partial) {
        want.partial = out0.partial;
        want.kind = out0.kind;
      }
      // A sum accumulated into a partial sum over the same axes (autodiff
      // adds each contribution to a gradient into the previous ones) is
      // partial too: the accumulator stays unreduced.
      if (dps && dps.isDpsInit(&operand) && accumulatesPartial(op, operand))
        want.partial = layouts.lookup(operand.get()).partial;
      // An operand the op does not read only gives a result its shape: a
      // fresh one of the local shape, not communication.
      if (rule.unread[i] && layouts.count(operand.get()) &&
          layouts.lookup(operand.get()) != want && !isCheap(operand.get())) {
        b.setInsertionPoint(op);
        RankedTensorType global = globals.lookup(operand.get());
        auto empty = tensor::EmptyOp::create(b, op->getLoc(), global.getShape(),
                                             global.getElementType());
        if (failed(localize(op, empty, want)))
          return failure();
        operand.set(empty);
        continue;
      }
      if (failed(require(op, i, want)))
        return failure();
    }
    if (failed(localizeCaptured(op, &rule, factors)))
      return failure();
    for (auto [i, result] : llvm::enumerate(op->getResults())) {
      Layout out = layoutOfResult(op, i);
      // A sum over a sharded loop adds the initial value on every device:
      // keep it on the first device of the group only.
      OpOperand *init = dps ? dps.getDpsInitOperand(i) : nullptr;
      if (init && !out.partial.empty() && out.kind == ReductionKind::Sum &&
          !passPartial && !isZero(init->get()) &&
          layouts.lookup(init->get()).partial != out.partial)
        maskInit(op, init, out.partial);
      if (failed(localize(op, result, out)))
        return failure();
    }
    cast<ShardingRuleOpInterface>(op).adaptToLocalTypes();
    if (auto s = dyn_cast<tensor::ExtractSliceOp>(op);
        s && s->hasAttr(EPLDialect::kMicroBatchAttrName))
      localMicroBatch(s, layoutOfResult(op, 0));
    return success();
  }

  /// A micro-batch slice cuts each device's own shard of the batch: its
  /// offsets along split dimensions shrink with the shard.
  void localMicroBatch(tensor::ExtractSliceOp s, const Layout &out) {
    b.setInsertionPoint(s);
    Location loc = s.getLoc();
    SmallVector<int64_t> staticOffsets(s.getStaticOffsets());
    SmallVector<Value> dynamicOffsets(s.getOffsets());
    unsigned next = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(staticOffsets.size()); ++d) {
      bool dynamic = ShapedType::isDynamic(staticOffsets[d]);
      if (!out.dims[d].empty()) {
        int64_t devices = groupSize(mesh, out.dims[d]);
        if (dynamic)
          dynamicOffsets[next] = arith::DivUIOp::create(
              b, loc, dynamicOffsets[next],
              arith::ConstantIndexOp::create(b, loc, devices));
        else
          staticOffsets[d] /= devices;
      }
      next += dynamic;
    }
    s.getOffsetsMutable().assign(dynamicOffsets);
    s.setStaticOffsets(staticOffsets);
  }

  /// Whether an init contributes nothing to a sum: zeros, or a
  /// tensor.empty (whose contents are undefined anyway).
  static bool isZero(Value v) {
    return isZeroTensor(v) || v.getDefiningOp<tensor::EmptyOp>();
  }

  void maskInit(Operation *op, OpOperand *initOperand,
                const AxisList &partial) {
    b.setInsertionPoint(op);
    Location loc = op->getLoc();
    Value init = initOperand->get();
    auto type = cast<RankedTensorType>(init.getType());
    Value index = GroupIndexOp::create(
        b, loc, FlatSymbolRefAttr::get(mesh.getSymNameAttr()), axes(partial));
    Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, index,
                                        zeroIndex);
    AffineMap id = b.getMultiDimIdentityMap(type.getRank());
    Value empty =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    auto masked = linalg::GenericOp::create(
        b, loc, TypeRange{type}, ValueRange{init}, ValueRange{empty},
        SmallVector<AffineMap>{id, id},
        SmallVector<utils::IteratorType>(type.getRank(),
                                         utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value zero = arith::ConstantOp::create(
              nb, nl, args[0].getType(), nb.getZeroAttr(args[0].getType()));
          linalg::YieldOp::create(
              nb, nl,
              ValueRange{arith::SelectOp::create(nb, nl, first, args[0], zero)
                             .getResult()});
        });
    globals[masked.getResult(0)] = globals.lookup(init);
    layouts[masked.getResult(0)] = layouts.lookup(init);
    initOperand->set(masked.getResult(0));
  }

  LogicalResult partition(Operation *op) {
    // What propagation decided is on the ops; a pass in between that made
    // new ops (canonicalize, CSE) would otherwise go unnoticed.
    if (llvm::any_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>) &&
        !op->hasAttr(kShardingsAttrName))
      return op->emitError(
          "epl-insert-collectives: this op has no sharding; run "
          "epl-sharding-propagation right before (epl-parallelize does)");
    if (auto it = rules.find(op); it != rules.end())
      return partitionByRule(op, it->second);
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](tensor::EmptyOp e) {
          return localize(op, e.getResult(), layoutOfResult(op, 0));
        })
        .Case([&](arith::ConstantOp c) -> LogicalResult {
          auto type = dyn_cast<RankedTensorType>(c.getType());
          if (!type)
            return success();
          Layout l = layoutOfResult(op, 0);
          auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
          // A constant of distinct values (torch-mlir's index tables of a
          // GroupNorm, a loss's target of +-1) stays whole on every device;
          // each consumer that wants it sharded reads its device's slice.
          if (!l.isReplicated() && (!dense || !dense.isSplat()))
            l = Layout::replicated(type.getRank());
          if (failed(localize(op, c.getResult(), l)))
            return failure();
          if (!l.isReplicated()) {
            c.setValueAttr(
                DenseElementsAttr::get(cast<ShapedType>(c.getType()),
                                       dense.getSplatValue<Attribute>()));
          }
          return success();
        })
        .Case([&](scf::ForOp loop) -> LogicalResult {
          for (unsigned i = 0; i < loop.getNumResults(); ++i) {
            if (!isa<RankedTensorType>(loop.getResult(i).getType()))
              continue;
            Layout l = layoutOfResult(op, i);
            if (failed(require(op, loop.getNumControlOperands() + i, l)) ||
                failed(localize(op, loop.getRegionIterArgs()[i], l)) ||
                failed(localize(op, loop.getResult(i), l)))
              return failure();
          }
          // Reshards made in the body do not dominate what follows it.
          auto outside = resharded;
          SmallVector<Operation *> body;
          for (Operation &inner : *loop.getBody())
            body.push_back(&inner);
          for (Operation *inner : body)
            if (failed(partition(inner)))
              return failure();
          resharded = std::move(outside);
          return success();
        })
        .Case([&](scf::YieldOp y) -> LogicalResult {
          Operation *loop = y->getParentOp();
          for (unsigned i = 0; i < y.getNumOperands(); ++i)
            if (isa<RankedTensorType>(loop->getResult(i).getType()) &&
                failed(require(op, i, layoutOfResult(loop, i))))
              return failure();
          return success();
        })
        .Case([&](ShardingConstraintOp c) -> LogicalResult {
          b.setInsertionPoint(op);
          created.clear();
          consumerStage = op->getAttr(EPLDialect::kStageAttrName);
          FailureOr<Value> r =
              reshard(op->getLoc(), c.getInput(), Layout::of(c.getSharding()),
                      /*shared=*/false);
          if (failed(r))
            return failure();
          belongTo(op->getAttr(EPLDialect::kPhaseAttrName));
          // Rules taken before name the tensors a body reads: they read
          // the resharded value now.
          for (auto &[ruled, rule] : rules)
            for (auto &[read, dims] : rule.captured)
              if (read == c.getResult())
                read = *r;
          c.getResult().replaceAllUsesWith(*r);
          op->erase();
          return success();
        })
        .Case([&](tensor::ExtractOp e) -> LogicalResult {
          // One element of a split tensor, read outside a body (a body's
          // reads are its captures): made whole first, as a body's are.
          if (!layouts.count(e.getTensor()))
            return success();
          return require(op, 0,
                         Layout::replicated(e.getTensor().getType().getRank()));
        })
        .Case([&](tensor::DimOp d) -> LogicalResult {
          // The global size: a static one is a constant, a dimension no
          // device splits has it everywhere (a dynamic one never is split),
          // and another is asked of the whole tensor.
          std::optional<int64_t> dim = d.getConstantIndex();
          if (!layouts.count(d.getSource()))
            return success();
          RankedTensorType global = globals.lookup(d.getSource());
          // (An index out of range is undefined only if it runs: left.)
          if (dim && (*dim < 0 || *dim >= global.getRank()))
            return success();
          const Layout &layout = layouts.lookup(d.getSource());
          if (dim && !global.isDynamicDim(*dim)) {
            b.setInsertionPoint(d);
            d.replaceAllUsesWith(arith::ConstantIndexOp::create(
                                     b, d.getLoc(), global.getDimSize(*dim))
                                     .getResult());
            d.erase();
            return success();
          }
          if (dim ? layout.dims[*dim].empty()
                  : llvm::all_of(layout.dims,
                                 [](const AxisList &a) { return a.empty(); }))
            return success();
          return require(op, 0, Layout::replicated(global.getRank()));
        })
        .Case([&](func::ReturnOp r) -> LogicalResult {
          for (unsigned i = 0; i < r.getNumOperands(); ++i) {
            auto type = dyn_cast<RankedTensorType>(r.getOperand(i).getType());
            if (!type)
              continue;
            auto s = fn.getResultAttrOfType<ShardingAttr>(
                i, EPLDialect::kShardingAttrName);
            if (failed(require(
                    op, i,
                    s ? Layout::of(s)
                      : Layout::replicated(
                            globals.lookup(r.getOperand(i))
                                ? globals.lookup(r.getOperand(i)).getRank()
                                : type.getRank()),
                    resultPhase(i))))
              return failure();
          }
          return success();
        })
        .Default([&](Operation *) -> LogicalResult {
          for (Value v : op->getOperands())
            if (layouts.count(v) && !layouts.lookup(v).isReplicated())
              return op->emitError()
                     << "epl-insert-collectives: cannot partition '"
                     << op->getName() << "': an operand is "
                     << (layouts.lookup(v).partial.empty()
                             ? "split over the mesh (by the batch, a split "
                               "scope, ZeRO or a sharding constraint)"
                             : "a partial sum over the mesh")
                     << " and the op has no rule to run on its part; compute "
                        "it with linalg ops, or read the value inside a "
                        "linalg body";
          if (failed(localizeCaptured(op, nullptr, {})))
            return failure();
          // Any other op computes its tensors whole on every device.
          for (Value r : op->getResults())
            if (auto t = dyn_cast<RankedTensorType>(r.getType()))
              if (failed(localize(op, r, Layout::replicated(t.getRank()))))
                return failure();
          return success();
        });
  }

  func::FuncOp fn;
  MeshOp mesh;
  IRRewriter b;
  int64_t &numCollectives;
  llvm::DenseMap<Operation *, ShardingRule> rules;
  llvm::DenseMap<Value, RankedTensorType> globals;
  llvm::DenseMap<Value, Layout> layouts;
  llvm::DenseMap<std::pair<Value, Attribute>, Value> resharded;
  /// The ops each shared reshard was made of.
  llvm::DenseMap<Value, SmallVector<Operation *>> madeBy;
  SmallVector<Operation *> created;
  /// The pipeline stage (epl.stage) of the op the reshard being made is
  /// for, if it has one.
  Attribute consumerStage;
  Recorder recorder;
};

/// Tags the ops a builder inserts into `body` (not into their regions)
/// with a phase: the gradient reduction belongs to the backward.
struct GradientPhase : public OpBuilder::Listener {
  Block *body;
  Attribute phase;
  GradientPhase(func::FuncOp fn)
      : body(&fn.front()),
        phase(PhaseAttr::get(fn.getContext(), Phase::BackwardWeight)) {}
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    if (op->getBlock() == body)
      op->setAttr(EPLDialect::kPhaseAttrName, phase);
  }
};

/// x * scale, converted to `to`: one element-wise generic (the arithmetic
/// in at least f32). With `notFinite`, a `cf.assert` in its body ends the
/// run with that message where an element of `x` is infinite or NaN.
Value scaleAndConvert(OpBuilder &b, Location loc, Value x, Type to,
                      double scale, StringRef notFinite = {}) {
  auto type = cast<RankedTensorType>(x.getType());
  auto resultType = RankedTensorType::get(type.getShape(), to);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), to);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{x}, ValueRange{empty},
             SmallVector<AffineMap>{id, id},
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = args[0];
               Type wide = nb.getF32Type();
               if (v.getType() != wide &&
                   v.getType().getIntOrFloatBitWidth() < 32)
                 v = arith::ExtFOp::create(nb, nl, wide, v);
               if (!notFinite.empty()) {
                 // `one` is false for NaN as for the infinity itself.
                 auto isNot = [&](double inf) {
                   return arith::CmpFOp::create(
                       nb, nl, arith::CmpFPredicate::ONE, v,
                       arith::ConstantOp::create(
                           nb, nl, v.getType(),
                           nb.getFloatAttr(v.getType(), inf)));
                 };
                 Value finite = arith::AndIOp::create(
                     nb, nl, isNot(std::numeric_limits<double>::infinity()),
                     isNot(-std::numeric_limits<double>::infinity()));
                 cf::AssertOp::create(nb, nl, finite, notFinite);
               }
               if (scale != 1.0)
                 v = arith::MulFOp::create(
                     nb, nl, v,
                     arith::ConstantOp::create(
                         nb, nl, v.getType(),
                         nb.getFloatAttr(v.getType(), scale)));
               if (v.getType() != to)
                 v = arith::TruncFOp::create(nb, nl, to, v);
               linalg::YieldOp::create(nb, nl, ValueRange{v});
             })
      .getResult(0);
}

/// The mesh axes the batch is split over: those of dimension 0 of the
/// inputs' and labels' shards. Gradients reduced over them are the
/// data-parallel reductions.
AxisList batchAxes(func::FuncOp fn) {
  AxisList axes;
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
    StringRef kind = getArgKind(fn, i);
    auto shard =
        fn.getArgAttrOfType<ShardingAttr>(i, EPLDialect::kShardAttrName);
    if ((kind != "input" && kind != "label") || !shard ||
        shard.getDims().empty())
      continue;
    for (StringRef axis : shard.getDimAxes(0))
      if (!llvm::is_contained(axes, axis))
        axes.push_back(axis);
  }
  return axes;
}

/// The sum all-reduce that makes gradient `v` (a result of the step), found
/// through what may follow it: reshapes, a local slice, element-wise
/// single-input generics (the micro-batch factor). Null when there is none,
/// or when its value is used elsewhere too.
AllReduceOp gradientReduction(Value v) {
  while (v.hasOneUse()) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return {};
    if (auto ar = dyn_cast<AllReduceOp>(def))
      return ar.getKind() == ReductionKind::Sum ? ar : AllReduceOp();
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(def))
      v = e.getSrc();
    else if (auto c = dyn_cast<tensor::CollapseShapeOp>(def))
      v = c.getSrc();
    else if (auto s = dyn_cast<tensor::ExtractSliceOp>(def))
      v = s.getSource();
    else if (auto g = dyn_cast<linalg::GenericOp>(def);
             g && g.getNumDpsInputs() == 1 && g.getNumDpsInits() == 1 &&
             g.getNumReductionLoops() == 0 &&
             llvm::all_of(g.getIndexingMapsArray(),
                          [](AffineMap m) { return m.isIdentity(); }) &&
             !g.payloadUsesValueFromOperand(g.getDpsInitOperand(0)))
      v = g.getDpsInputOperand(0)->get();
    else
      return {};
  }
  return {};
}

/// Fuses gradient all-reduces (over the same axes) into at most
/// `maxBuckets` all-reduces, scaled by `factor`, sent in f16 with `fp16`.
int64_t fuseGradientReductions(func::FuncOp fn, MeshOp mesh,
                               SmallVector<AllReduceOp> grads,
                               int64_t maxBuckets, double factor, bool fp16,
                               double fp16Scale) {
  int64_t buckets = std::min<int64_t>(maxBuckets, grads.size());
  GradientPhase tagger(fn);
  IRRewriter b(fn.getContext(), &tagger);
  // In the order the backward makes them (the last layer's first), so that
  // a bucket holds gradients made about together and is sent, and its
  // updates start, as early as it can (in argument order a bucket held the
  // first layer's bias beside the second layer's weight, which then waited
  // for the end of the backward).
  Block *block = grads.front()->getBlock();
  llvm::stable_sort(grads, [&](AllReduceOp x, AllReduceOp y) {
    return madeBefore(block, x.getInput(), y.getInput());
  });
  SmallVector<int64_t> sizes;
  for (AllReduceOp ar : grads)
    sizes.push_back(ar.getType().getNumElements());
  SmallVector<SmallVector<AllReduceOp>> groups(buckets);
  for (auto [ar, bucket] : llvm::zip(grads, consecutiveShares(sizes, buckets)))
    groups[bucket].push_back(ar);
  int64_t made = 0;
  for (SmallVector<AllReduceOp> &bucket : groups) {
    if (bucket.empty())
      continue;
    // As soon as the bucket's gradients are made: right after the last op
    // making one. Before the first user (the step's return) every bucket
    // waited for the whole backward, and so did each group of updates of
    // optimizer.num_apply_group, which then freed nothing earlier.
    Value last = bucket.front().getInput();
    for (AllReduceOp ar : bucket)
      if (madeBefore(block, last, ar.getInput()))
        last = ar.getInput();
    Operation *def = last.getDefiningOp();
    Operation *ready = def ? block->findAncestorOpInBlock(*def) : nullptr;
    // Its users follow the last gradient (they read the reduced values,
    // which the partitioner puts where the step returns them); one that
    // would not keeps the bucket before the first user, where it was.
    Operation *firstUser = nullptr;
    for (AllReduceOp ar : bucket)
      for (Operation *u : ar->getUsers()) {
        Operation *top = block->findAncestorOpInBlock(*u);
        if (top && (!firstUser || top->isBeforeInBlock(firstUser)))
          firstUser = top;
      }
    if (firstUser && ready && !ready->isBeforeInBlock(firstUser))
      b.setInsertionPoint(firstUser);
    else if (ready)
      b.setInsertionPointAfter(ready);
    else
      b.setInsertionPointToStart(block);
    Location loc = bucket.front().getLoc();
    Type element = bucket.front().getType().getElementType();
    SmallVector<Value> flats;
    for (AllReduceOp ar : bucket) {
      RankedTensorType t = ar.getType();
      auto flatType = RankedTensorType::get({t.getNumElements()}, element);
      Value in = ar.getInput();
      if (t.getRank() == 0)
        flats.push_back(tensor::ExpandShapeOp::create(
            b, loc, flatType, in, SmallVector<ReassociationIndices>{}));
      else if (t.getRank() == 1)
        flats.push_back(in);
      else {
        ReassociationIndices all;
        for (int64_t d = 0; d < t.getRank(); ++d)
          all.push_back(d);
        flats.push_back(tensor::CollapseShapeOp::create(
            b, loc, flatType, in, SmallVector<ReassociationIndices>{all}));
      }
    }
    Value joined = flats.size() == 1
                       ? flats.front()
                       : tensor::ConcatOp::create(b, loc, 0, flats).getResult();
    Value payload = joined;
    if (fp16)
      // Sent in half precision, scaled first so small gradients survive.
      payload = scaleAndConvert(b, loc, joined, b.getF16Type(), fp16Scale);
    Value reduced = AllReduceOp::create(
        b, loc, payload, FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
        bucket.front().getAxes(),
        ReductionKindAttr::get(b.getContext(), ReductionKind::Sum));
    if (payload != joined) {
      // An element beyond fp16's range became infinite on its way; the
      // step would go on with infinite or NaN parameters.
      std::string notFinite;
      llvm::raw_string_ostream(notFinite)
          << "a gradient bucket summed in fp16 (communication.fp16) is not "
             "finite: a gradient times communication.fp16_scale = "
          << llvm::format("%g", fp16Scale)
          << ", or its sum over the replicas, is beyond fp16's 65504 "
             "(lower the scale), or a gradient is not finite";
      reduced = scaleAndConvert(b, loc, reduced, element, factor / fp16Scale,
                                notFinite);
    } else if (factor != 1.0)
      reduced = scaleAndConvert(b, loc, reduced, element, factor);
    int64_t offset = 0;
    for (AllReduceOp ar : bucket) {
      RankedTensorType t = ar.getType();
      int64_t n = t.getNumElements();
      auto flatType = RankedTensorType::get({n}, element);
      Value piece = tensor::ExtractSliceOp::create(
          b, loc, flatType, reduced,
          ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(n)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
      Value back = piece;
      if (t.getRank() == 0)
        back = tensor::CollapseShapeOp::create(
            b, loc, t, piece, SmallVector<ReassociationIndices>{});
      else if (t.getRank() > 1) {
        ReassociationIndices all;
        for (int64_t d = 0; d < t.getRank(); ++d)
          all.push_back(d);
        back = tensor::ExpandShapeOp::create(
            b, loc, t, piece, SmallVector<ReassociationIndices>{all});
      }
      ar.getResult().replaceAllUsesWith(back);
      ar.erase();
      offset += n;
    }
    ++made;
  }
  return made;
}

/// The data-parallel reductions of the step's gradients (its results
/// tagged `epl.result = "grad"`): the sum all-reduces over the batch's
/// axes are fused into buckets (per axes, at most `max_splits` each) and
/// sent in f16 with `communication.fp16`. With the "sum" reduce method,
/// every gradient is scaled by the number of batch shards (the sum of the
/// replicas' own mean gradients, as EPL).
FailureOr<int64_t> reduceGradients(func::FuncOp fn, MeshOp mesh,
                                   const Config &config) {
  AxisList batch = batchAxes(fn);
  if (batch.empty())
    return 0;
  double factor =
      config.getString("communication.gradients_reduce_method") == "sum"
          ? static_cast<double>(groupSize(mesh, batch))
          : 1.0;
  auto ret = cast<func::ReturnOp>(fn.front().getTerminator());
  // Gradient reductions by axes, element type and pipeline stage device
  // (each stage reduces its own), in result order.
  std::optional<int64_t> stageDevices =
      mesh.getAxisSize(EPLDialect::kStageAxisName);
  llvm::MapVector<std::tuple<Attribute, Type, int64_t>,
                  SmallVector<AllReduceOp>>
      reductions;
  SmallVector<unsigned> unreduced;
  for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i) {
    auto kind =
        fn.getResultAttrOfType<StringAttr>(i, EPLDialect::kResultAttrName);
    if (!kind || kind.getValue() != "grad")
      continue;
    AllReduceOp ar = gradientReduction(ret.getOperand(i));
    bool dataParallel =
        ar && llvm::any_of(ar.getAxes(), [&](Attribute axis) {
          return llvm::is_contained(batch, cast<StringAttr>(axis).getValue());
        });
    // A gradient no stage makes (a parameter the loss does not use)
    // belongs where its parameter is read, as epl-pipeline-partition puts it.
    int64_t device = 0;
    if (stageDevices && ar) {
      std::optional<int64_t> stage = pipelineStageOf(ar.getInput());
      auto name =
          fn.getResultAttrOfType<StringAttr>(i, EPLDialect::kNameAttrName);
      for (BlockArgument arg : fn.getArguments())
        if (!stage && name &&
            fn.getArgAttr(arg.getArgNumber(), EPLDialect::kNameAttrName) ==
                name)
          for (Operation *user : arg.getUsers())
            if (auto s =
                    user->getAttrOfType<StageAttr>(EPLDialect::kStageAttrName);
                s && !stage)
              stage = s.getIndex();
      device = stage.value_or(0) % *stageDevices;
    }
    if (dataParallel)
      reductions[{ar.getAxes(), ar.getType().getElementType(), device}]
          .push_back(ar);
    else
      unreduced.push_back(i);
  }
  // Half precision on the wire is for f32 gradients: others would be sent
  // as they are, the key ignored.
  if (config.getBool("communication.fp16"))
    for (auto &[key, grads] : reductions)
      if (Type element = std::get<1>(key); !element.isF32())
        return grads.front().emitError()
               << "epl-insert-collectives: communication.fp16 sends f32 "
                  "gradients in half precision; this gradient is "
               << grads.front().getType()
               << " (turn the key off for this model)";
  int64_t made = 0;
  for (auto &[key, grads] : reductions)
    made += fuseGradientReductions(
        fn, mesh, grads, config.getInt("communication.max_splits"), factor,
        config.getBool("communication.fp16"),
        config.getNumber("communication.fp16_scale").value_or(128.0));
  // A gradient the batch axes did not reduce (the batch was gathered
  // before its contraction) is scaled alone.
  if (factor != 1.0) {
    GradientPhase tagger(fn);
    OpBuilder b(ret, &tagger);
    for (unsigned i : unreduced) {
      Value g = ret.getOperand(i);
      auto type = cast<RankedTensorType>(g.getType());
      ret.setOperand(i, scaleAndConvert(b, ret.getLoc(), g,
                                        type.getElementType(), factor));
    }
  }
  return made;
}

struct EPLInsertCollectivesPass
    : public mlir::epl::impl::EPLInsertCollectivesPassBase<
          EPLInsertCollectivesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MeshOp mesh = getMesh(module);
    if (!mesh)
      return;
    if (failed(verifyUpstreamGapsIn(module, "epl-insert-collectives")))
      return signalPassFailure();
    Config config = Config::get(module);
    int64_t collectives = 0, buckets = 0;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      Partitioner partitioner(fn, mesh, collectives);
      if (failed(partitioner.run()))
        return signalPassFailure();
      FailureOr<int64_t> made = reduceGradients(fn, mesh, config);
      if (failed(made))
        return signalPassFailure();
      buckets += *made;
      fn.walk([](Operation *op) {
        op->removeAttr(kShardingsAttrName);
        op->removeAttr(kLoopAxesAttrName);
      });
    }
    numCollectives += collectives;
    numBuckets += buckets;
  }
};
} // namespace
