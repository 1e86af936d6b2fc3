//===- Plan.cpp - Meshes and seed shardings from strategy scopes ----------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/Dialect/EPL/Transforms/ShardingUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "llvm/ADT/DenseSet.h"

#define DEBUG_TYPE "epl-plan"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLPLANPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
std::string describe(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "'" << op->getName() << "'";
  return s;
}

struct EPLPlanPass : public mlir::epl::impl::EPLPlanPassBase<EPLPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (devices < 1) {
      module.emitError() << "epl-plan: devices must be at least 1, got "
                         << static_cast<int64_t>(devices);
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> models;
    for (auto fn : module.getOps<func::FuncOp>())
      if (hasTaggedArguments(fn))
        models.push_back(fn);
    for (func::FuncOp fn : models)
      if (failed(plan(module, fn)))
        return signalPassFailure();
  }

  LogicalResult plan(ModuleOp module, func::FuncOp fn) {
    int64_t numDevices = devices;
    if (numDevices == 1)
      return success(); // One device runs the model as written.
    // The scopes of the model.
    int64_t splitDevices = 1, replicateDevices = 1;
    llvm::SmallSetVector<StringRef, 4> stages;
    fn.walk([&](Operation *op) {
      auto scope =
          op->getAttrOfType<ScopeAttrInterface>(EPLDialect::kScopeAttrName);
      if (!scope)
        return;
      if (isa<SplitAttr>(scope))
        splitDevices = std::max(splitDevices, scope.getDevices());
      else
        replicateDevices = std::max(replicateDevices, scope.getDevices());
      if (isa<ReplicateAttr>(scope) && scope.getName())
        stages.insert(scope.getName().getValue());
    });
    if (stages.size() > 1)
      return fn.emitError() << "epl-plan: " << stages.size()
                            << " pipeline stages; pipeline parallelism is not "
                               "planned yet";

    Config config = Config::get(module);
    int64_t microBatches = config.getInt("pipeline.num_micro_batch");
    bool colocate = config.getBool("cluster.colocate_split_and_replicate");
    int64_t stageDevices = std::max(splitDevices, replicateDevices);
    if (numDevices % stageDevices != 0)
      return fn.emitError()
             << "epl-plan: " << numDevices
             << " devices are not divisible by the stage's device count "
             << stageDevices << " (split(" << splitDevices << "), replicate("
             << replicateDevices << "))";
    if (!colocate && replicateDevices > 1 && splitDevices > 1)
      return fn.emitError()
             << "epl-plan: replicate(" << replicateDevices << ") and split("
             << splitDevices
             << ") on different devices is not planned yet; set "
                "\"cluster.colocate_split_and_replicate\" to share them";
    if (colocate && replicateDevices > 1 && splitDevices > 1 &&
        replicateDevices != splitDevices)
      return fn.emitError()
             << "epl-plan: colocated replicate(" << replicateDevices
             << ") and split(" << splitDevices << ") must use as many devices";
    int64_t replicas = numDevices / stageDevices;
    // Without split parts, a stage of replicate(n) holds n copies of the
    // model: data parallel like its replicas, so one data axis spans them all.
    if (splitDevices == 1) {
      replicas = numDevices;
      stageDevices = 1;
    }

    SmallVector<std::pair<StringRef, int64_t>> axes;
    if (replicas > 1)
      axes.push_back({"data", replicas});
    if (stageDevices > 1)
      axes.push_back({"tensor", stageDevices});
    if (axes.empty())
      return success(); // One device: nothing to shard.
    // The batch goes over the data axis, and over the stage's devices too
    // when replicated parts share them with split ones.
    AxisList batchAxes;
    if (replicas > 1)
      batchAxes.push_back("data");
    if (colocate && stageDevices > 1)
      batchAxes.push_back("tensor");

    MLIRContext *ctx = &getContext();
    MeshOp mesh = getMesh(module);
    if (!mesh) {
      OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
      SmallVector<Attribute> names;
      SmallVector<int64_t> sizes;
      for (auto [name, size] : axes) {
        names.push_back(b.getStringAttr(name));
        sizes.push_back(size);
      }
      mesh = MeshOp::create(b, module.getLoc(), "mesh", b.getArrayAttr(names),
                            b.getDenseI64ArrayAttr(sizes));
    }

    // Inputs and labels: the batch over the data axes.
    for (BlockArgument arg : fn.getArguments()) {
      StringRef kind = getArgKind(fn, arg.getArgNumber());
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (kind.empty() || kind == "param" || !type || type.getRank() == 0 ||
          batchAxes.empty())
        continue;
      int64_t g = groupSize(mesh, batchAxes);
      if (type.getDimSize(0) % g != 0)
        return fn.emitError()
               << "epl-plan: the batch of argument " << arg.getArgNumber()
               << " (" << type.getDimSize(0) << ") is not divisible by the "
               << g << " devices it is split over";
      // Each device cuts its shard of the batch into the micro-batches.
      if (type.getDimSize(0) % (g * microBatches) != 0)
        return fn.emitError()
               << "epl-plan: the batch of argument " << arg.getArgNumber()
               << " (" << type.getDimSize(0) << ") is not divisible by " << g
               << " devices x " << microBatches
               << " micro-batches (\"pipeline.num_micro_batch\")";
      Layout l = Layout::replicated(type.getRank());
      l.dims[0] = batchAxes;
      fn.setArgAttr(arg.getArgNumber(), EPLDialect::kShardingAttrName,
                    l.toAttr(ctx, mesh.getSymName()));
    }

    return seedSplitWeights(fn, mesh);
  }

  /// Seeds the weights of split contractions: column parallel, or row
  /// parallel when the activation derives from a column-parallel product
  /// (its features are split; attention's heads too), as Megatron pairs
  /// them. A row parallel product's result is whole again.
  LogicalResult seedSplitWeights(func::FuncOp fn, MeshOp mesh) {
    MLIRContext *ctx = &getContext();
    llvm::DenseSet<Value> featureSplit;
    WalkResult result = fn.walk([&](Operation *o) -> WalkResult {
      auto op = dyn_cast<linalg::LinalgOp>(o);
      auto scope = o->getAttrOfType<SplitAttr>(EPLDialect::kScopeAttrName);
      bool weighted =
          op && scope && linalg::isaContractionOpInterface(op) &&
          llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *in) {
            auto arg = dyn_cast<BlockArgument>(in->get());
            return arg && arg.getOwner()->getParentOp() == fn &&
                   getArgKind(fn, arg.getArgNumber()) == "param";
          });
      if (!weighted) {
        if (llvm::any_of(o->getOperands(),
                         [&](Value v) { return featureSplit.contains(v); }))
          featureSplit.insert(o->getResults().begin(), o->getResults().end());
        return WalkResult::advance();
      }
      FailureOr<linalg::ContractionDimensions> cd =
          linalg::inferContractionDims(op);
      if (failed(cd) || cd->n.size() != 1 || cd->k.size() != 1)
        return WalkResult::advance();
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      for (OpOperand *in : op.getDpsInputOperands()) {
        auto weight = dyn_cast<BlockArgument>(in->get());
        if (!weight || weight.getOwner()->getParentOp() != fn)
          continue;
        if (getArgKind(fn, weight.getArgNumber()) != "param")
          continue;
        // The activation is the other input.
        Value activation;
        for (OpOperand *other : op.getDpsInputOperands())
          if (other != in)
            activation = other->get();
        bool rowParallel = activation && featureSplit.contains(activation);
        unsigned loop = rowParallel ? cd->k[0] : cd->n[0];
        AffineMap map = maps[in->getOperandNumber()];
        std::optional<unsigned> dim =
            map.getResultPosition(getAffineDimExpr(loop, ctx));
        if (!dim)
          continue;
        auto type = cast<RankedTensorType>(weight.getType());
        if (type.getDimSize(*dim) % scope.getDevices() != 0)
          return op->emitError()
                 << "split(" << scope.getDevices() << ") of " << describe(op)
                 << " does not divide dimension " << *dim << " of size "
                 << type.getDimSize(*dim) << " of weight '"
                 << (fn.getArgAttrOfType<StringAttr>(weight.getArgNumber(),
                                                     EPLDialect::kNameAttrName)
                         ? fn.getArgAttrOfType<StringAttr>(
                                 weight.getArgNumber(),
                                 EPLDialect::kNameAttrName)
                               .getValue()
                         : StringRef("?"))
                 << "'";
        Layout l = Layout::replicated(type.getRank());
        l.dims[*dim] = {"tensor"};
        fn.setArgAttr(weight.getArgNumber(), EPLDialect::kShardingAttrName,
                      l.toAttr(ctx, mesh.getSymName()));
        if (!rowParallel)
          featureSplit.insert(op->getResult(0));
      }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }
};
} // namespace
