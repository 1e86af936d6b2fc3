//===- ApplyOptimizer.cpp - Gradients to parameter updates ----------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLAttrs.h"
#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/Transforms/Optimizers.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/Dialect/EPL/Transforms/ShardingUtils.h"
#include "epl/Dialect/EPL/Transforms/TrainingStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringMap.h"

#define DEBUG_TYPE "epl-apply-optimizer"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLAPPLYOPTIMIZERPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
/// Tags the ops the optimizer inserts into the step's body (not those in
/// linalg bodies) with the optimizer phase.
struct OptimizerTagger : public OpBuilder::Listener {
  Block *body;
  int64_t count = 0;
  explicit OptimizerTagger(Block *body) : body(body) {}

  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    if (op->getBlock() != body)
      return;
    op->setAttr(EPLDialect::kPhaseAttrName,
                PhaseAttr::get(op->getContext(), Phase::Optimizer));
    ++count;
  }
};

/// The result kinds (`epl.result`) of `fn`.
SmallVector<StringRef> resultKinds(func::FuncOp fn) {
  SmallVector<StringRef> kinds;
  for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
    if (auto kind =
            fn.getResultAttrOfType<StringAttr>(i, EPLDialect::kResultAttrName))
      kinds.push_back(kind.getValue());
  return kinds;
}

/// How argument `index` is laid out (`epl.sharding` before partitioning,
/// `epl.shard` after): its state is laid out the same way.
SmallVector<NamedAttribute> layoutAttrs(func::FuncOp fn, unsigned index,
                                        bool ofResult) {
  SmallVector<NamedAttribute> attrs;
  for (StringRef name :
       {EPLDialect::kShardingAttrName, EPLDialect::kShardAttrName}) {
    Attribute a =
        ofResult ? fn.getResultAttr(index, name) : fn.getArgAttr(index, name);
    if (a)
      attrs.push_back(NamedAttribute(name, a));
  }
  return attrs;
}

DictionaryAttr withLayout(DictionaryAttr tags,
                          ArrayRef<NamedAttribute> layout) {
  NamedAttrList attrs(tags);
  for (NamedAttribute a : layout)
    attrs.set(a.getName(), a.getValue());
  return attrs.getDictionary(tags.getContext());
}

/// The same layout for a scalar (the step counter): replicated on the
/// parameters' mesh.
SmallVector<NamedAttribute> scalarLayout(ArrayRef<NamedAttribute> of) {
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute a : of)
    if (auto s = dyn_cast<ShardingAttr>(a.getValue()))
      attrs.push_back(
          NamedAttribute(a.getName(), ShardingAttr::get(s.getMesh(), {})));
  return attrs;
}

/// The layout attribute (`epl.shard`, else `epl.sharding`) in `attrs`.
ShardingAttr layoutIn(ArrayRef<NamedAttribute> attrs) {
  for (NamedAttribute a : attrs)
    if (auto s = dyn_cast<ShardingAttr>(a.getValue()))
      return s;
  return {};
}

/// How a parameter laid out as `param` is cut into the shards of its
/// gradient, laid out as `grad` (ZeRO, see epl-zero): per dimension, the
/// axes the gradient adds after the parameter's. Fails when the gradient's
/// layout does not refine the parameter's.
FailureOr<SmallVector<AxisList>> refinement(const Layout &param,
                                            const Layout &grad) {
  if (param.dims.size() != grad.dims.size())
    return failure();
  SmallVector<AxisList> extra(param.dims.size());
  for (auto [d, p] : llvm::enumerate(param.dims)) {
    const AxisList &g = grad.dims[d];
    if (g.size() < p.size() ||
        !llvm::equal(p, ArrayRef(g).take_front(p.size())))
      return failure();
    extra[d].append(g.begin() + p.size(), g.end());
  }
  return extra;
}

/// This device's part of local value `v` when dimension d is further split
/// over `extra[d]`, the shape of `to`.
Value sliceTo(OpBuilder &b, Location loc, Value v, RankedTensorType to,
              FlatSymbolRefAttr mesh, ArrayRef<AxisList> extra) {
  for (auto [d, axes] : llvm::enumerate(extra)) {
    if (axes.empty())
      continue;
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[d] = to.getDimSize(d);
    auto sliced = RankedTensorType::get(shape, type.getElementType());
    Value index =
        GroupIndexOp::create(b, loc, mesh, axesAttr(b.getContext(), axes));
    Value offset = arith::MulIOp::create(
        b, loc, index, arith::ConstantIndexOp::create(b, loc, shape[d]));
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes,
        strides(type.getRank(), b.getIndexAttr(1));
    offsets[d] = offset;
    for (int64_t n : shape)
      sizes.push_back(b.getIndexAttr(n));
    v = tensor::ExtractSliceOp::create(b, loc, sliced, v, offsets, sizes,
                                       strides);
  }
  return v;
}

/// The inverse of sliceTo: gathers the shards back into the shape of `to`.
Value gatherTo(OpBuilder &b, Location loc, Value v, RankedTensorType to,
               FlatSymbolRefAttr mesh, ArrayRef<AxisList> extra) {
  for (auto [d, axes] : llvm::enumerate(extra)) {
    if (axes.empty())
      continue;
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[d] = to.getDimSize(d);
    v = AllGatherOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), v, mesh,
        axesAttr(b.getContext(), axes), b.getI64IntegerAttr(d));
  }
  return v;
}

/// Bytes of a tensor type.
int64_t bytesOf(Type type) {
  auto t = cast<RankedTensorType>(type);
  return t.getNumElements() *
         std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
}

/// The last op (in block order) of those making `values`.
Operation *updatedLast(Value updated, ArrayRef<Value> states) {
  Operation *last = updated.getDefiningOp();
  for (Value v : states)
    if (Operation *def = v.getDefiningOp();
        def && (!last || last->isBeforeInBlock(def)))
      last = def;
  return last;
}

/// Whether nothing reads `arg`: it has no uses but as an argument of calls
/// (the micro-batch function's) whose callee reads nothing of it either.
static bool readByNothing(BlockArgument arg, SymbolTableCollection &symbols) {
  for (OpOperand &use : arg.getUses()) {
    auto call = dyn_cast<func::CallOp>(use.getOwner());
    auto callee = call ? symbols.lookupNearestSymbolFrom<func::FuncOp>(
                             call, call.getCalleeAttr())
                       : func::FuncOp();
    if (!callee || callee.isExternal() ||
        !readByNothing(callee.getArgument(use.getOperandNumber()), symbols))
      return false;
  }
  return true;
}

/// Replaces each gradient result of `fn` by its parameter's update.
LogicalResult applyOptimizer(func::FuncOp fn, const Optimizer &optimizer,
                             int64_t numGroups, int64_t &numUpdated,
                             int64_t &numOps) {
  MLIRContext *ctx = fn.getContext();
  Location loc = fn.getLoc();
  auto ret = cast<func::ReturnOp>(fn.front().getTerminator());
  OptimizerTagger tagger(&fn.front());
  OpBuilder b(ret);
  b.setListener(&tagger);

  // Gradient results and the parameters they belong to (the verifier
  // checked that each names one).
  SmallVector<std::pair<unsigned, unsigned>> grads;
  for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i) {
    auto kind =
        fn.getResultAttrOfType<StringAttr>(i, EPLDialect::kResultAttrName);
    if (!kind || kind.getValue() != "grad")
      continue;
    auto name =
        fn.getResultAttrOfType<StringAttr>(i, EPLDialect::kNameAttrName);
    std::optional<unsigned> param =
        name ? findParamArg(fn, name.getValue()) : std::nullopt;
    if (!param)
      return fn.emitError()
             << "epl-apply-optimizer: result " << i << " of @"
             << fn.getSymName() << " is a gradient of no parameter";
    grads.push_back({i, *param});
  }

  // A parameter the step reads nowhere does not affect the loss: PyTorch's
  // optimizers skip it (its gradient is None), where a zero gradient would
  // still decay it. It keeps its value and its state.
  llvm::SmallDenseSet<unsigned> unread;
  SymbolTableCollection symbols;
  for (auto [resultIndex, paramIndex] : grads)
    if (readByNothing(fn.getArgument(paramIndex), symbols)) {
      unread.insert(paramIndex);
      fn.emitWarning() << "epl-apply-optimizer: parameter '"
                       << getArgName(fn, paramIndex)
                       << "' does not affect the loss; it is not updated "
                          "(PyTorch's optimizers skip a parameter without a "
                          "gradient)";
    }

  // The state arguments are added to the body here and to the function's
  // type and argument attributes once, after the last: inserting them one
  // at a time rebuilds both per state, memory quadratic in the parameters.
  SmallVector<DictionaryAttr> newArgAttrs;
  // Arguments are read and saved by name: a state named like an argument
  // of the model (a parameter "w.exp_avg" beside "w", under Adam) would be
  // two of one name.
  llvm::StringMap<unsigned> taken;
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    taken.try_emplace(getArgName(fn, i), i);
  auto addState = [&](Type type, StringRef name,
                      ArrayRef<NamedAttribute> layout) -> FailureOr<Value> {
    if (auto [it, fresh] = taken.try_emplace(name, fn.getNumArguments());
        !fresh)
      return fn.emitError()
             << "epl-apply-optimizer: the optimizer's state \"" << name
             << "\" would have the name of argument " << it->second << " of @"
             << fn.getSymName() << "; rename that argument";
    newArgAttrs.push_back(withLayout(
        getKindAndName(ctx, EPLDialect::kArgAttrName, "opt_state", name),
        layout));
    return Value(fn.front().addArgument(type, loc));
  };

  SmallVector<NamedAttribute> firstLayout =
      grads.empty() ? SmallVector<NamedAttribute>()
                    : layoutAttrs(fn, grads.front().second, false);
  Value step;
  if (optimizer.countsSteps()) {
    FailureOr<Value> s = addState(RankedTensorType::get({}, b.getI64Type()),
                                  "optimizer.step", scalarLayout(firstLayout));
    if (failed(s))
      return failure();
    step = *s;
  }

  // Each update reads the parameter in its gradient's layout: with ZeRO
  // (epl-zero), the gradient is a finer shard than the parameter, and the
  // update, its state included, works on that shard alone; the new
  // parameter is then gathered back to the parameter's layout.
  struct Update {
    unsigned result, param;
    std::string name;
    SmallVector<NamedAttribute> paramLayout, gradLayout;
    SmallVector<AxisList> extra;
    SmallVector<Value> states, newStates;
  };
  std::vector<Update> updates;
  SmallVector<int64_t> sizes;
  for (auto [resultIndex, paramIndex] : grads) {
    Update u{resultIndex,
             paramIndex,
             getArgName(fn, paramIndex),
             layoutAttrs(fn, paramIndex, false),
             layoutAttrs(fn, resultIndex, true),
             {},
             {},
             {}};
    ShardingAttr p = layoutIn(u.paramLayout), g = layoutIn(u.gradLayout);
    if (g && (!p || p != g)) {
      Layout pl = p ? Layout::of(p) : Layout::replicated(g.getDims().size());
      FailureOr<SmallVector<AxisList>> extra = refinement(pl, Layout::of(g));
      if (failed(extra))
        return fn.emitError()
               << "epl-apply-optimizer: the gradient of '" << u.name
               << "' is laid out as " << g
               << ", which does not split the parameter's layout " << p
               << " further";
      u.extra = std::move(*extra);
    } else {
      u.gradLayout = u.paramLayout;
    }
    Type type = ret.getOperand(resultIndex).getType();
    for (StringRef suffix : optimizer.stateSuffixes()) {
      FailureOr<Value> s =
          addState(type, u.name + "." + suffix.str(), u.gradLayout);
      if (failed(s))
        return failure();
      u.states.push_back(*s);
    }
    sizes.push_back(bytesOf(type));
    updates.push_back(std::move(u));
  }
  {
    SmallVector<DictionaryAttr> argAttrs;
    fn.getAllArgAttrs(argAttrs);
    argAttrs.append(newArgAttrs);
    fn.setType(FunctionType::get(ctx, fn.front().getArgumentTypes(),
                                 fn.getResultTypes()));
    fn.setAllArgAttrs(argAttrs);
  }

  SmallVector<Value> results(ret.getOperands());
  DenseMap<unsigned, Operation *> lastInserted;
  SmallVector<DictionaryAttr> resultAttrs;
  fn.getAllResultAttrs(resultAttrs);
  // optimizer.num_apply_group: the updates in groups of about equal bytes,
  // each group as soon as its gradients are final (right after the last
  // op making one), groups in the order they become ready, so that with
  // more groups gradients die earlier. With one group, all updates follow
  // the last gradient.
  Block &body = fn.front();
  // Groups of about equal bytes, each of updates consecutive in the order
  // their gradients are made. (Groups of sizes alone, largest first into
  // the lightest, mixed the first layer's bias with the last layer's
  // weight: every group was ready only at the end of the backward, and
  // with data parallelism, whose buckets are consecutive too, no bucket
  // could be freed before it.)
  auto byReadiness = llvm::to_vector(llvm::seq<unsigned>(0, updates.size()));
  llvm::stable_sort(byReadiness, [&](unsigned x, unsigned y) {
    return madeBefore(&body, results[updates[x].result],
                      results[updates[y].result]);
  });
  SmallVector<int64_t> ordered;
  for (unsigned i : byReadiness)
    ordered.push_back(sizes[i]);
  SmallVector<unsigned> groupOf(updates.size());
  for (auto [i, group] :
       llvm::zip(byReadiness, consecutiveShares(ordered, numGroups)))
    groupOf[i] = group;
  DenseMap<unsigned, Operation *> readyAfter;
  auto order = llvm::to_vector(llvm::seq<unsigned>(0, updates.size()));
  for (unsigned i : order) {
    Operation *def = results[updates[i].result].getDefiningOp();
    Operation *top = def ? body.findAncestorOpInBlock(*def) : nullptr;
    Operation *&ready = readyAfter[groupOf[i]];
    if (top && (!ready || ready->isBeforeInBlock(top)))
      ready = top;
  }
  // Group by group, in the order they become ready (ties: by group), each
  // in argument order.
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    Operation *ra = readyAfter.lookup(groupOf[a]),
              *rb = readyAfter.lookup(groupOf[b]);
    if (ra != rb)
      return !ra || (rb && ra->isBeforeInBlock(rb));
    return groupOf[a] < groupOf[b];
  });
  Operation *previousGroupEnd = nullptr;
  for (auto [k, i] : llvm::enumerate(order)) {
    Update &u = updates[i];
    unsigned group = groupOf[i];
    // A group of unread parameters updates nothing and ends nowhere: the
    // next group follows the last group that did.
    if (k > 0 && groupOf[order[k - 1]] != group)
      if (Operation *end = lastInserted.lookup(groupOf[order[k - 1]]))
        previousGroupEnd = end;
    // Group by group: after the group's gradients and the previous group;
    // within a group, after its previous update.
    Operation *after = readyAfter.lookup(group);
    if (previousGroupEnd &&
        (!after || after->isBeforeInBlock(previousGroupEnd)))
      after = previousGroupEnd;
    if (Operation *last = lastInserted.lookup(group))
      after = last;
    if (after)
      b.setInsertionPointAfter(after);
    else
      b.setInsertionPointToStart(&body);
    Value grad = results[u.result];
    auto gradType = cast<RankedTensorType>(grad.getType());
    auto paramType = cast<RankedTensorType>(fn.getArgumentTypes()[u.param]);
    ShardingAttr g = layoutIn(u.gradLayout);
    FlatSymbolRefAttr mesh = g ? g.getMesh() : FlatSymbolRefAttr();
    Value param = fn.getArgument(u.param);
    if (unread.contains(u.param)) {
      results[u.result] = param;
      u.newStates.assign(u.states);
    } else {
      if (!u.extra.empty())
        param = sliceTo(b, loc, param, gradType, mesh, u.extra);
      Value updated =
          optimizer.update(b, loc, param, grad, u.states, step, u.newStates);
      if (!u.extra.empty())
        updated = gatherTo(b, loc, updated, paramType, mesh, u.extra);
      results[u.result] = updated;
      lastInserted[group] = updatedLast(updated, u.newStates);
    }
    NamedAttrList attrs(withLayout(
        getKindAndName(ctx, EPLDialect::kResultAttrName, "param", u.name),
        u.paramLayout));
    if (g)
      attrs.set(EPLDialect::kGradShardAttrName, g);
    resultAttrs[u.result] = attrs.getDictionary(ctx);
    numUpdated += !unread.contains(u.param);
  }
  b.setInsertionPoint(ret);
  for (Update &u : updates)
    for (auto [value, suffix] :
         llvm::zip(u.newStates, optimizer.stateSuffixes())) {
      results.push_back(value);
      resultAttrs.push_back(
          withLayout(getKindAndName(ctx, EPLDialect::kResultAttrName,
                                    "opt_state", u.name + "." + suffix.str()),
                     u.gradLayout));
    }
  if (step) {
    results.push_back(Optimizer::incrementStep(b, loc, step));
    resultAttrs.push_back(
        withLayout(getKindAndName(ctx, EPLDialect::kResultAttrName, "opt_state",
                                  "optimizer.step"),
                   scalarLayout(firstLayout)));
  }

  setStepResults(fn, results, resultAttrs);
  numOps += tagger.count;
  return success();
}

struct EPLApplyOptimizerPass
    : public mlir::epl::impl::EPLApplyOptimizerPassBase<EPLApplyOptimizerPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto emitError = [&] { return module.emitError("epl-apply-optimizer: "); };
    if (failed(Config::checkImplemented(module, emitError)))
      return signalPassFailure();
    // Training steps: functions whose results say what they are. A step
    // of a model without parameters has no gradients, and nothing to do.
    SmallVector<func::FuncOp> steps;
    for (auto fn : module.getOps<func::FuncOp>()) {
      SmallVector<StringRef> kinds = resultKinds(fn);
      if (fn.isExternal() || kinds.empty())
        continue;
      if (llvm::is_contained(kinds, "param") ||
          llvm::is_contained(kinds, "opt_state")) {
        fn.emitError() << "epl-apply-optimizer: @" << fn.getSymName()
                       << " already returns updated parameters";
        return signalPassFailure();
      }
      steps.push_back(fn);
    }
    if (steps.empty()) {
      module.emitError("epl-apply-optimizer: no training step (a function "
                       "whose results are tagged epl.result); run "
                       "epl-autodiff first");
      return signalPassFailure();
    }
    Config config = Config::get(module);
    Optimizer optimizer = Optimizer::fromConfig(config);
    int64_t groups = config.getInt("optimizer.num_apply_group");
    int64_t updated = 0, ops = 0;
    for (func::FuncOp fn : steps)
      if (failed(applyOptimizer(fn, optimizer, groups, updated, ops)))
        return signalPassFailure();
    numUpdated += updated;
    numOptimizer += ops;
  }
};
} // namespace
