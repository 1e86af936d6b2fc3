//===- Zero.cpp - ZeRO as shardings ---------------------------------------===//
//
// Part of EPL-MLIR.
//
// ZeRO (Rajbhandari et al., SC 2020) by `zero.level`, expressed as shardings
// over the data-parallel axes that epl-sharding-propagation and
// epl-insert-collectives resolve like any other: sharded gradient results
// become reduce-scatters, constraints on parameters all-gathers.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/Dialect/EPL/Transforms/ShardingUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/MapVector.h"

#define DEBUG_TYPE "epl-zero"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLZEROPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
/// `param` laid out as `layout`, further split over the data axes `data`
/// (those it does not use yet): on the first dimension nothing splits that
/// they divide, else after the axes of the first split dimension they
/// divide. std::nullopt when no dimension can take them.
std::optional<Layout> zeroLayout(MeshOp mesh, RankedTensorType type,
                                 const Layout &layout, const AxisList &data) {
  AxisList used = layout.allAxes();
  AxisList axes;
  for (StringRef a : data)
    if (!llvm::is_contained(used, a))
      axes.push_back(a);
  if (axes.empty())
    return layout; // Already split over the data axes.
  int64_t n = groupSize(mesh, axes);
  for (bool afterSplit : {false, true})
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (layout.dims[d].empty() == afterSplit || type.isDynamicDim(d))
        continue;
      int64_t split = groupSize(mesh, layout.dims[d]);
      if (type.getDimSize(d) % (split * n) != 0)
        continue;
      Layout l = layout;
      l.dims[d].append(axes.begin(), axes.end());
      return l;
    }
  return std::nullopt;
}

/// Tags `op` like `like`: its phase and pipeline stage.
void tagLike(Operation *op, Operation *like) {
  for (StringRef name :
       {EPLDialect::kPhaseAttrName, EPLDialect::kStageAttrName})
    if (Attribute a = like->getAttr(name))
      op->setAttr(name, a);
}

struct EPLZeroPass : public mlir::epl::impl::EPLZeroPassBase<EPLZeroPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Config config = Config::get(module);
    StringRef level = config.getString("zero.level");
    if (level.empty())
      return;
    // The communication keys that shape the all-reduce buckets of
    // gradients: ZeRO reduce-scatters each gradient on its own, in its own
    // type, so either key would be ignored.
    auto refuse =
        [&](StringRef key, StringRef fix) {
          module.emitError()
              << "epl-zero: " << key
              << " is not implemented with zero.level = \"" << level
              << "\" (ZeRO reduce-scatters each gradient on its own, "
                 "in its own type, not in buckets); "
              << fix;
          signalPassFailure();
        };
    if (config.getBool("communication.fp16"))
      return refuse("communication.fp16", "turn one of them off");
    if (config.isSet("communication.max_splits"))
      return refuse("communication.max_splits", "remove the key");
    bool shardAccumulators = level != "v0", shardParams = level == "v2";
    MeshOp mesh = getMesh(module);
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      SmallVector<std::pair<unsigned, unsigned>> grads;
      for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i) {
        auto kind =
            fn.getResultAttrOfType<StringAttr>(i, EPLDialect::kResultAttrName);
        auto name =
            fn.getResultAttrOfType<StringAttr>(i, EPLDialect::kNameAttrName);
        if (!kind || kind.getValue() != "grad" || !name)
          continue;
        if (std::optional<unsigned> p = findParamArg(fn, name.getValue()))
          grads.push_back({i, *p});
      }
      if (grads.empty())
        continue;
      AxisList data = mesh ? dataAxes(fn) : AxisList();
      int64_t workers = mesh ? groupSize(mesh, data) : 1;
      if (workers < 2) {
        // Located where the config is written.
        module.emitError() << "epl-zero: zero.level = \"" << level
                           << "\": ZeRO needs at least 2 data-parallel workers "
                              "(EPL: >= 2 workers); @"
                           << fn.getSymName() << " has " << workers;
        return signalPassFailure();
      }
      if (failed(shard(fn, mesh, data, grads, shardAccumulators, shardParams)))
        return signalPassFailure();
    }
    // The rest of the program follows the new shardings.
    OpPassManager propagation(ModuleOp::getOperationName());
    propagation.addPass(createEPLShardingPropagationPass());
    if (mesh && failed(runPipeline(propagation, module)))
      return signalPassFailure();
  }

  LogicalResult shard(func::FuncOp fn, MeshOp mesh, const AxisList &data,
                      ArrayRef<std::pair<unsigned, unsigned>> grads,
                      bool shardAccumulators, bool shardParams) {
    MLIRContext *ctx = fn.getContext();
    StringRef meshName = mesh.getSymName();
    auto ret = cast<func::ReturnOp>(fn.front().getTerminator());
    SmallVector<DictionaryAttr> argAttrs, resultAttrs;
    fn.getAllArgAttrs(argAttrs);
    fn.getAllResultAttrs(resultAttrs);
    for (auto [resultIndex, paramIndex] : grads) {
      auto type = dyn_cast<RankedTensorType>(fn.getArgumentTypes()[paramIndex]);
      if (!type)
        continue;
      auto s = fn.getArgAttrOfType<ShardingAttr>(paramIndex,
                                                 EPLDialect::kShardingAttrName);
      Layout param = s ? Layout::of(s) : Layout::replicated(type.getRank());
      std::optional<Layout> zero = zeroLayout(mesh, type, param, data);
      if (!zero) {
        fn.emitRemark() << "epl-zero: parameter '" << getArgName(fn, paramIndex)
                        << "' (" << type
                        << ") has no dimension divisible by the "
                        << groupSize(mesh, data)
                        << " data-parallel workers: it stays whole (its "
                           "gradient all-reduced, its optimizer state "
                           "replicated)";
        continue;
      }
      if (*zero == param)
        continue;
      ShardingAttr zeroAttr = zero->toAttr(ctx, meshName);
      ++numSharded;
      // The reduced gradient is a shard: its all-reduce becomes a
      // reduce-scatter (after the micro-batch loop for v0).
      NamedAttrList resultList(resultAttrs[resultIndex]);
      resultList.set(EPLDialect::kShardingAttrName, zeroAttr);
      resultAttrs[resultIndex] = resultList.getDictionary(ctx);
      // v1: each micro-batch's gradient is reduce-scattered into a shard
      // of the accumulator: a constraint on what the loop adds to it (a
      // constraint passes nothing back to what it reads, so the gradient
      // is computed as before).
      Value g = ret.getOperand(resultIndex);
      if (auto loop = g.getDefiningOp<scf::ForOp>();
          loop && shardAccumulators) {
        unsigned j = cast<OpResult>(g).getResultNumber();
        auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
        Value acc = loop.getRegionIterArgs()[j];
        auto add = yield.getOperand(j).getDefiningOp<linalg::GenericOp>();
        OpOperand *micro = nullptr;
        if (add && add.getNumDpsInputs() == 2 &&
            llvm::is_contained(add.getDpsInputs(), acc))
          for (OpOperand *in : add.getDpsInputOperands())
            if (in->get() != acc)
              micro = in;
        if (!micro)
          return add ? add.emitError()
                           << "epl-zero: cannot find the micro-batch "
                              "gradient this accumulation adds"
                     : loop.emitError()
                           << "epl-zero: cannot find the accumulation of "
                              "gradient result "
                           << resultIndex;
        OpBuilder b(add);
        auto c = ShardingConstraintOp::create(b, add.getLoc(), micro->get(),
                                              zeroAttr);
        tagLike(c, add);
        if (!c->hasAttr(EPLDialect::kPhaseAttrName))
          c->setAttr(EPLDialect::kPhaseAttrName,
                     PhaseAttr::get(ctx, Phase::BackwardWeight));
        micro->set(c);
        ++numConstraints;
      }
      if (!shardParams)
        continue;
      // v2: the parameter is a shard at rest, gathered where it is used:
      // once per block and phase, so that the backward gathers again
      // instead of keeping the forward's copy. Recomputation (gradient
      // checkpointing) runs in the backward, right before the gradients
      // that read what it recomputes: it shares the backward's gather, as
      // ZeRO-3 with checkpointing gathers each parameter once per backward
      // (gathered apart, the step moved 1.69x a plain all-reduce's bytes,
      // above ZeRO-3's 1.5x).
      auto phaseOf = [&](Operation *user) -> Attribute {
        auto phase = user->getAttrOfType<PhaseAttr>(EPLDialect::kPhaseAttrName);
        if (phase && phase.getValue() == Phase::Recompute)
          return PhaseAttr::get(ctx, Phase::BackwardInput);
        return phase;
      };
      BlockArgument arg = fn.getArgument(paramIndex);
      NamedAttrList attrs(argAttrs[paramIndex]);
      attrs.set(EPLDialect::kShardingAttrName, zeroAttr);
      argAttrs[paramIndex] = attrs.getDictionary(ctx);
      llvm::MapVector<std::pair<Block *, Attribute>, SmallVector<OpOperand *>>
          uses;
      for (OpOperand &use : arg.getUses()) {
        Operation *user = use.getOwner();
        uses[{user->getBlock(), phaseOf(user)}].push_back(&use);
      }
      ShardingAttr whole = param.toAttr(ctx, meshName);
      for (auto &[key, operands] : uses) {
        Operation *first = operands.front()->getOwner();
        for (OpOperand *use : operands)
          if (use->getOwner()->isBeforeInBlock(first))
            first = use->getOwner();
        OpBuilder b(first);
        auto c = ShardingConstraintOp::create(b, arg.getLoc(), arg, whole);
        tagLike(c, first);
        for (OpOperand *use : operands)
          use->set(c);
        ++numConstraints;
      }
    }
    // All at once: one at a time rebuilds the list per parameter.
    fn.setAllArgAttrs(argAttrs);
    fn.setAllResultAttrs(resultAttrs);
    return success();
  }
};
} // namespace
