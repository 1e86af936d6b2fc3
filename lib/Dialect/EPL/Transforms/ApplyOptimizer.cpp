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
#include "epl/Dialect/EPL/Transforms/TrainingStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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

/// Replaces each gradient result of `fn` by its parameter's update.
LogicalResult applyOptimizer(func::FuncOp fn, const Optimizer &optimizer,
                             int64_t &numUpdated, int64_t &numOps) {
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

  auto addState = [&](Type type, StringRef name,
                      ArrayRef<NamedAttribute> layout) -> FailureOr<Value> {
    DictionaryAttr attrs = withLayout(
        getKindAndName(ctx, EPLDialect::kArgAttrName, "opt_state", name),
        layout);
    if (failed(fn.insertArgument(fn.getNumArguments(), type, attrs, loc)))
      return failure();
    return Value(fn.getArguments().back());
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

  SmallVector<Value> results(ret.getOperands());
  SmallVector<DictionaryAttr> resultAttrs;
  fn.getAllResultAttrs(resultAttrs);
  SmallVector<Value> newStates;
  SmallVector<std::pair<std::string, SmallVector<NamedAttribute>>> stateTags;
  for (auto [resultIndex, paramIndex] : grads) {
    std::string name = getArgName(fn, paramIndex);
    SmallVector<NamedAttribute> layout = layoutAttrs(fn, paramIndex, false);
    Type type = fn.getArgumentTypes()[paramIndex];
    SmallVector<Value> states;
    for (StringRef suffix : optimizer.stateSuffixes()) {
      stateTags.push_back({name + "." + suffix.str(), layout});
      FailureOr<Value> s = addState(type, stateTags.back().first, layout);
      if (failed(s))
        return failure();
      states.push_back(*s);
    }
    results[resultIndex] =
        optimizer.update(b, loc, fn.getArgument(paramIndex),
                         results[resultIndex], states, step, newStates);
    resultAttrs[resultIndex] = withLayout(
        getKindAndName(ctx, EPLDialect::kResultAttrName, "param", name),
        layoutAttrs(fn, resultIndex, true));
    ++numUpdated;
  }
  for (auto [value, tag] : llvm::zip(newStates, stateTags)) {
    results.push_back(value);
    resultAttrs.push_back(
        withLayout(getKindAndName(ctx, EPLDialect::kResultAttrName, "opt_state",
                                  tag.first),
                   tag.second));
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
    if (failed(Config::get(module).checkImplemented(&getContext(), [&] {
          return module.emitError("epl-apply-optimizer: ");
        })))
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
    Optimizer optimizer = Optimizer::fromConfig(Config::get(module));
    int64_t updated = 0, ops = 0;
    for (func::FuncOp fn : steps)
      if (failed(applyOptimizer(fn, optimizer, updated, ops)))
        return signalPassFailure();
    numUpdated += updated;
    numOptimizer += ops;
  }
};
} // namespace
