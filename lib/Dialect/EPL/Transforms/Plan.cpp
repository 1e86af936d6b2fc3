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
#include "llvm/ADT/ScopeExit.h"

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

  /// Planning a copy of a one-device model for the devices it asks for,
  /// only to find what those could not run.
  bool probing = false;

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
      if (failed(plan(module, fn, devices)))
        return signalPassFailure();
  }

  LogicalResult plan(ModuleOp module, func::FuncOp fn, int64_t numDevices) {
    // A step already built (a pipeline run twice) has lost its scopes'
    // stages to the partition: planning it again would misread it.
    for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i) {
      auto kind =
          fn.getResultAttrOfType<StringAttr>(i, EPLDialect::kResultAttrName);
      if (kind &&
          llvm::is_contained({"param", "opt_state", "grad"}, kind.getValue()))
        return fn.emitError()
               << "epl-plan: @" << fn.getSymName()
               << " is a training step already (result " << i
               << " is epl.result = \"" << kind.getValue()
               << "\"); epl-plan, epl-training-step and epl-parallelize "
                  "take the model, which returns its loss: run them once";
    }
    // The scopes of the model, and its pipeline stages: named scopes in
    // the order the model first uses them, as in EPL (Whale's task graphs:
    // a named split is a stage too).
    int64_t splitDevices = 1, replicateDevices = 1;
    // The first ops of the widest split and replicate scopes, where
    // diagnostics about their device counts point.
    Operation *widestSplit = fn, *widestReplicate = fn;
    llvm::SmallSetVector<StringRef, 4> stageNames;
    int64_t userStages = 0;
    fn.walk([&](Operation *op) {
      if (auto stage = op->getAttrOfType<StageAttr>(EPLDialect::kStageAttrName))
        userStages = std::max(userStages, stage.getIndex() + 1);
      auto scope =
          op->getAttrOfType<ScopeAttrInterface>(EPLDialect::kScopeAttrName);
      if (!scope)
        return;
      bool split = isa<SplitAttr>(scope);
      int64_t &widest = split ? splitDevices : replicateDevices;
      if (scope.getDevices() > widest) {
        widest = scope.getDevices();
        (split ? widestSplit : widestReplicate) = op;
      }
      if (scope.getName())
        stageNames.insert(scope.getName().getValue());
    });
    int64_t numStages = std::max<int64_t>(
        userStages, stageNames.size() > 1 ? stageNames.size() : 0);

    Config config = Config::get(module);
    // The pipeline keys are checked on any number of devices: a model
    // means the same on one (where its stages run in sequence) as on many.
    // Diagnostics about a key are located where the config is written.
    Operation *configOp = module;
    if (failed(checkPipelineKeys(configOp, config, numStages)))
      return failure();
    // Keys that have nothing to act on in this plan: said, not ignored (on
    // one device too, where the model is planned again for its devices).
    bool colocate = config.getBool("cluster.colocate_split_and_replicate");
    if (colocate && splitDevices == 1 && !probing)
      configOp->emitWarning()
          << "epl-plan: \"cluster.colocate_split_and_replicate\" "
             "has no split part to share devices with; it "
             "changes nothing in this plan";
    if (numDevices == 1) {
      warnAboutUnusedReductionKeys(configOp, config, "one device");
      // One device runs the model as written, its stages in sequence and
      // its splits whole; what the devices its stages and splits ask for
      // could not run (a stage reading a later one's value, stages of
      // different widths, a split that does not divide its weight) is an
      // error here too, found by planning a copy for them (`probing`: not
      // what depends on the devices a run has, its batch over them, nor
      // what is not planned yet there). Its warnings are about that plan,
      // not this one: dropped.
      int64_t asked = std::max<int64_t>(numStages, 1) /
                      config.getInt("pipeline.num_virtual_stages") *
                      std::max(splitDevices, replicateDevices);
      // (Stage indices the user wrote may ask for any number: past a
      // cluster's, the copy would only be sized by them.)
      constexpr int64_t kMostDevices = 1 << 16;
      if ((numStages > 1 || splitDevices > 1) && !probing &&
          asked <= kMostDevices) {
        ModuleOp copy = module.clone();
        llvm::scope_exit eraseCopy([&] {
          copy->erase();
          probing = false;
        });
        probing = true;
        auto copyFn = copy.lookupSymbol<func::FuncOp>(fn.getSymName());
        ScopedDiagnosticHandler errorsOnly(&getContext(), [&](Diagnostic &d) {
          if (d.getSeverity() != DiagnosticSeverity::Error)
            return success();
          d.attachNote() << "found planning the model for the " << asked
                         << " devices its stages and splits ask for (this "
                            "run has one)";
          return failure();
        });
        if (failed(plan(copy, copyFn, std::max<int64_t>(asked, 1))))
          return failure();
      }
      return success();
    }
    int64_t microBatches = config.getInt("pipeline.num_micro_batch");
    int64_t stageDevices = std::max(splitDevices, replicateDevices);
    // Pipeline stages: every stage uses as many devices (as in EPL), and
    // the stage axis comes first, so devices = stages x replicas x split.
    int64_t pipelineDevices = 1;
    if (numStages > 1) {
      FailureOr<int64_t> p = planStages(fn, config, stageNames.getArrayRef(),
                                        numStages, numDevices, stageDevices);
      if (failed(p))
        return failure();
      pipelineDevices = *p;
      numDevices /= pipelineDevices;
    }
    if (numDevices % stageDevices != 0)
      return (splitDevices >= replicateDevices ? widestSplit : widestReplicate)
                 ->emitError()
             << "epl-plan: " << numDevices
             << " devices are not divisible by the stage's device count "
             << stageDevices << " (split(" << splitDevices << "), replicate("
             << replicateDevices << "))";
    if (!colocate && replicateDevices > 1 && splitDevices > 1 && !probing) {
      InFlightDiagnostic diag =
          widestSplit->emitError()
          << "epl-plan: replicate(" << replicateDevices << ") and split("
          << splitDevices
          << ") on different devices is not planned yet; set "
             "\"cluster.colocate_split_and_replicate\" to share them";
      diag.attachNote(widestReplicate->getLoc()) << "the replicate scope";
      return diag;
    }
    if (colocate && replicateDevices > 1 && splitDevices > 1 &&
        replicateDevices != splitDevices) {
      InFlightDiagnostic diag = widestSplit->emitError()
                                << "epl-plan: colocated replicate("
                                << replicateDevices << ") and split("
                                << splitDevices << ") must use as many devices";
      diag.attachNote(widestReplicate->getLoc()) << "the replicate scope";
      return diag;
    }
    int64_t replicas = numDevices / stageDevices;
    // Without split parts, a stage of replicate(n) holds n copies of the
    // model: data parallel like its replicas, so one data axis spans them all.
    if (splitDevices == 1) {
      replicas = numDevices;
      stageDevices = 1;
    }

    SmallVector<std::pair<StringRef, int64_t>> axes;
    if (pipelineDevices > 1)
      axes.push_back({EPLDialect::kStageAxisName, pipelineDevices});
    if (replicas > 1)
      axes.push_back({"data", replicas});
    if (stageDevices > 1)
      axes.push_back({"tensor", stageDevices});
    if (axes.empty())
      return success(); // One device: nothing to shard.
    std::string wanted;
    {
      llvm::raw_string_ostream os(wanted);
      llvm::interleaveComma(axes, os, [&](auto axis) {
        os << '"' << axis.first << "\" = " << axis.second;
      });
    }
    // The batch goes over the data axis, and over the stage's devices too
    // when replicated parts share them with split ones.
    AxisList batchAxes;
    if (replicas > 1)
      batchAxes.push_back("data");
    if (colocate && stageDevices > 1)
      batchAxes.push_back("tensor");
    if (batchAxes.empty())
      warnAboutUnusedReductionKeys(configOp, config, wanted);

    MLIRContext *ctx = &getContext();
    MeshOp mesh = getMesh(module);
    // A mesh the user wrote is the plan's only if it has the plan's axes:
    // the seeds below name them.
    if (mesh && llvm::any_of(axes, [&](auto axis) {
          return mesh.getAxisSize(axis.first) != axis.second;
        }))
      return mesh.emitError()
             << "epl-plan: the model's mesh @" << mesh.getSymName()
             << " does not have the axes the plan for its scopes needs ("
             << wanted << "); remove it and epl-plan makes one";
    if (!mesh) {
      OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
      SmallVector<Attribute> names;
      SmallVector<int64_t> sizes;
      for (auto [name, size] : axes) {
        names.push_back(b.getStringAttr(name));
        sizes.push_back(size);
      }
      // Another symbol may be called @mesh already.
      std::string name = "mesh";
      for (int i = 0; SymbolTable::lookupSymbolIn(module, name); ++i)
        name = "mesh_" + std::to_string(i);
      mesh = MeshOp::create(b, module.getLoc(), name, b.getArrayAttr(names),
                            b.getDenseI64ArrayAttr(sizes));
    }

    // Inputs and labels: the batch over the data axes.
    FunctionAttrEdit edit(fn);
    for (BlockArgument arg : fn.getArguments()) {
      StringRef kind = getArgKind(fn, arg.getArgNumber());
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if ((kind != "input" && kind != "label") || !type ||
          type.getRank() == 0 || batchAxes.empty() || probing)
        continue;
      int64_t g = groupSize(mesh, batchAxes);
      // Every input and label is split along its dimension 0: name the one
      // that does not divide, as the user named it.
      std::string which =
          (kind + " '" + getArgName(fn, arg.getArgNumber()) + "'").str();
      // Said at the argument: the user's line that made it.
      if (type.getDimSize(0) % g != 0)
        return emitError(arg.getLoc())
               << "epl-plan: the batch (dimension 0) of " << which << " ("
               << type.getDimSize(0) << ") is not divisible by the " << g
               << " devices it is split over";
      // Each device cuts its shard of the batch into the micro-batches.
      if (type.getDimSize(0) % (g * microBatches) != 0)
        return emitError(arg.getLoc())
               << "epl-plan: the batch (dimension 0) of " << which << " ("
               << type.getDimSize(0) << ") is not divisible by " << g
               << " devices x " << microBatches
               << " micro-batches (\"pipeline.num_micro_batch\")";
      Layout l = Layout::replicated(type.getRank());
      l.dims[0] = batchAxes;
      edit.setArg(arg.getArgNumber(), EPLDialect::kShardingAttrName,
                  l.toAttr(ctx, mesh.getSymName()));
    }
    edit.apply();

    // split(1) scopes (split's default) are one device each: nothing to
    // split, as replicate(1) (the mesh has no tensor axis to split over).
    if (stageDevices == 1)
      return success();
    return seedSplitWeights(fn, mesh);
  }

  /// Fails, naming the key, where the pipeline keys do not fit the model's
  /// `numStages` stages (0 or 1: none): a schedule or virtual stages
  /// without stages would be ignored; virtual stages need the interleaved
  /// schedule and must divide the stages.
  /// The communication keys act on the reductions of gradients over the
  /// batch's devices: a plan without any (`plan`: its axes, in words)
  /// leaves them nothing to do, which is said, not ignored.
  void warnAboutUnusedReductionKeys(Operation *configOp, const Config &config,
                                    StringRef plan) {
    if (config.getBool("communication.fp16"))
      configOp->emitWarning()
          << "epl-plan: \"communication.fp16\" compresses "
             "data-parallel gradient reductions, and this plan ("
          << plan << ") has none; gradients are not sent";
    if (config.isSet("communication.max_splits"))
      configOp->emitWarning()
          << "epl-plan: \"communication.max_splits\" buckets "
             "data-parallel gradient reductions, and this plan ("
          << plan << ") has none; gradients are not sent";
  }

  LogicalResult checkPipelineKeys(Operation *configOp, const Config &config,
                                  int64_t numStages) {
    int64_t chunks = config.getInt("pipeline.num_virtual_stages");
    StringRef strategy = config.getString("pipeline.strategy");
    if (numStages <= 1) {
      if (chunks > 1)
        return configOp->emitError()
               << "epl-plan: \"pipeline.num_virtual_stages\" = " << chunks
               << " splits pipeline stages, but the model has none (name "
                  "its scopes, or drop the key)";
      if (strategy !=
          StringRef(lookupConfigKey("pipeline.strategy")->defaultValue)
              .trim('"'))
        return configOp->emitError()
               << "epl-plan: \"pipeline.strategy\" = \"" << strategy
               << "\" schedules pipeline stages, but the model has none (name "
                  "its scopes, or drop the key)";
      return success();
    }
    if (chunks > 1 && strategy != "Interleaved1F1B")
      return configOp->emitError()
             << "epl-plan: \"pipeline.num_virtual_stages\" = " << chunks
             << " needs \"pipeline.strategy\" = \"Interleaved1F1B\", not \""
             << strategy << "\"";
    if (numStages % chunks != 0)
      return configOp->emitError() << "epl-plan: " << numStages
                                   << " pipeline stages are not divisible by "
                                      "\"pipeline.num_virtual_stages\" = "
                                   << chunks;
    // Every stage on one stage device is no pipeline: the plan would be
    // data parallel, the schedule ignored.
    if (chunks > 1 && numStages == chunks)
      return configOp->emitError()
             << "epl-plan: \"pipeline.num_virtual_stages\" = " << chunks
             << " puts all " << numStages
             << " pipeline stages on one stage device, so nothing is "
                "pipelined; interleave fewer stages per device (at most "
             << numStages / 2 << ")";
    return success();
  }

  /// Checks the pipeline's numbers and puts `epl.stage` on the forward ops:
  /// an op in a named scope is on that scope's stage (or on the stage the
  /// user wrote), an op outside scopes on the latest stage of its operands,
  /// an op that reads no stage's value on the first stage that uses it,
  /// unless it is cheap to make (then each stage makes its own). Returns the
  /// number of stage devices: the stages, or the stages over the virtual stages
  /// per device of an interleaved schedule.
  FailureOr<int64_t> planStages(func::FuncOp fn, const Config &config,
                                ArrayRef<StringRef> names, int64_t numStages,
                                int64_t numDevices, int64_t stageDevices) {
    MLIRContext *ctx = &getContext();
    int64_t chunks = config.getInt("pipeline.num_virtual_stages");
    // Before anything is sized by the stages: a stage index the user wrote
    // may be any number.
    if (numStages / chunks > numDevices)
      return fn.emitError()
             << "epl-plan: " << numStages << " pipeline stages (the stage "
             << "indices reach " << numStages - 1 << ") need more than the "
             << numDevices << " devices x " << chunks
             << " virtual stages per device there are";
    int64_t p = numStages / chunks;

    // Stage names: the scopes', else those the user wrote on `epl.stage`,
    // one name per stage and one stage per name (two names would make the
    // messages and the trace name one stage twice, or two stages alike).
    llvm::DenseMap<int64_t, StringAttr> writtenNames;
    llvm::DenseMap<StringAttr, int64_t> writtenStages;
    WalkResult named = fn.walk([&](Operation *op) -> WalkResult {
      auto s = op->getAttrOfType<StageAttr>(EPLDialect::kStageAttrName);
      if (!s || !s.getName())
        return WalkResult::advance();
      auto [name, newName] =
          writtenNames.try_emplace(s.getIndex(), s.getName());
      auto [stage, newStage] =
          writtenStages.try_emplace(s.getName(), s.getIndex());
      if (name->second != s.getName())
        return op->emitError()
               << "epl-plan: stage " << s.getIndex() << " is named \""
               << name->second.getValue() << "\" and \""
               << s.getName().getValue() << "\"; a stage has one name";
      if (stage->second != s.getIndex())
        return op->emitError()
               << "epl-plan: stages " << stage->second << " and "
               << s.getIndex() << " are both named \"" << s.getName().getValue()
               << "\"; a name is one stage's";
      return WalkResult::advance();
    });
    if (named.wasInterrupted())
      return failure();
    auto nameOf = [&](int64_t stage) {
      return stage < static_cast<int64_t>(names.size())
                 ? StringAttr::get(ctx, names[stage])
                 : writtenNames.lookup(stage);
    };
    // "stage 1 (\"decoder\")", as the user named it.
    auto describeStage = [&](int64_t stage) {
      std::string s = "stage " + std::to_string(stage);
      if (StringAttr name = nameOf(stage))
        s += " (\"" + name.str() + "\")";
      return s;
    };
    llvm::DenseMap<Value, int64_t> stageOf;
    SmallVector<int64_t> scopeDevices(numStages, 0);
    for (Operation &op : fn.front().without_terminator()) {
      // The latest stage among the values the op reads, bodies included.
      int64_t latest = -1;
      Operation *from = nullptr;
      op.walk([&](Operation *nested) {
        for (Value v : nested->getOperands())
          if (auto it = stageOf.find(v);
              it != stageOf.end() && it->second > latest) {
            latest = it->second;
            from = v.getDefiningOp();
          }
      });
      int64_t stage = latest;
      auto scope =
          op.getAttrOfType<ScopeAttrInterface>(EPLDialect::kScopeAttrName);
      if (auto written =
              op.getAttrOfType<StageAttr>(EPLDialect::kStageAttrName))
        stage = written.getIndex();
      else if (scope && scope.getName())
        stage = llvm::find(names, scope.getName().getValue()) - names.begin();
      if (stage < 0)
        continue;
      if (latest > stage) {
        InFlightDiagnostic diag =
            op.emitError() << "epl-plan: this op of pipeline "
                           << describeStage(stage)
                           << " uses a value of the later "
                           << describeStage(latest)
                           << "; a stage may only use values of earlier stages";
        diag.attachNote(from->getLoc())
            << "the value of " << describeStage(latest) << " is made here";
        // Named scopes are numbered by their first op: one that comes
        // early by accident (a "*" pattern that takes the model's own
        // position ids) turns the order round.
        if (stage < static_cast<int64_t>(names.size()))
          for (Operation &first : fn.front().without_terminator())
            if (auto s = first.getAttrOfType<ScopeAttrInterface>(
                    EPLDialect::kScopeAttrName);
                s && s.getName() && s.getName().getValue() == names[stage]) {
              diag.attachNote(first.getLoc())
                  << "stages are numbered in the order the model first uses "
                     "their scopes: \""
                  << names[stage] << "\" is stage " << stage
                  << " from this op on";
              break;
            }
        return diag;
      }
      if (scope)
        scopeDevices[stage] = std::max(scopeDevices[stage], scope.getDevices());
      op.setAttr(EPLDialect::kStageAttrName,
                 StageAttr::get(ctx, stage, nameOf(stage)));
      for (Value r : op.getResults())
        stageOf[r] = stage;
    }
    // An op that reads no stage's value but computes something (a layer
    // outside every scope before the first stage) runs on the first stage
    // that uses it, which sends it on: made again in every piece and stage
    // that reads it, its parameters would be shared between stages.
    llvm::DenseMap<Value, bool> cheap;
    for (Operation &op : llvm::reverse(fn.front().without_terminator())) {
      if (op.hasAttr(EPLDialect::kStageAttrName) ||
          llvm::all_of(op.getResults(),
                       [&](Value r) { return isCheap(r, &cheap); }))
        continue;
      std::optional<int64_t> first;
      for (Operation *user : op.getUsers())
        if (Operation *top = fn.front().findAncestorOpInBlock(*user))
          if (auto s =
                  top->getAttrOfType<StageAttr>(EPLDialect::kStageAttrName))
            first = std::min(first.value_or(s.getIndex()), s.getIndex());
      if (first)
        op.setAttr(EPLDialect::kStageAttrName,
                   StageAttr::get(ctx, *first, nameOf(*first)));
    }
    int64_t widest = llvm::max_element(scopeDevices) - scopeDevices.begin();
    for (int64_t stage = 0; stage < numStages; ++stage)
      if (scopeDevices[stage] > 0 && scopeDevices[stage] != stageDevices)
        return fn.emitError()
               << "epl-plan: pipeline " << describeStage(stage) << " uses "
               << scopeDevices[stage] << " device(s) but "
               << describeStage(widest) << " uses " << stageDevices
               << "; every stage must use as many devices";
    if (numDevices % (p * stageDevices) != 0)
      return fn.emitError()
             << "epl-plan: " << numDevices << " devices are not divisible by "
             << p << " stage devices x " << stageDevices
             << " device(s) per stage";
    return p;
  }

  /// Seeds the weights of split contractions: column parallel, or row
  /// parallel when the activation derives from a column-parallel product
  /// (its features are split; attention's heads too), as Megatron pairs
  /// them. A row parallel product's result is whole again.
  /// The parameter `v` is, and which of its dimensions `dim` of `v` is:
  /// through transposes (torch's Linear multiplies by `W^T`), as written or
  /// generalized.
  std::optional<std::pair<BlockArgument, unsigned>>
  paramBehind(func::FuncOp fn, Value v, unsigned dim) {
    while (true) {
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (arg.getOwner()->getParentOp() != fn ||
            getArgKind(fn, arg.getArgNumber()) != "param")
          return std::nullopt;
        return std::make_pair(arg, dim);
      }
      if (auto t = v.getDefiningOp<linalg::TransposeOp>()) {
        dim = t.getPermutation()[dim];
        v = t.getInput();
        continue;
      }
      // A generic that only permutes its one input.
      auto g = v.getDefiningOp<linalg::GenericOp>();
      if (!g || g.getNumDpsInputs() != 1 || g.getNumReductionLoops() != 0)
        return std::nullopt;
      Block &body = g.getRegion().front();
      AffineMap in = g.getIndexingMapsArray()[0],
                out = g.getIndexingMapsArray()[1];
      if (cast<linalg::YieldOp>(body.getTerminator()).getOperand(0) !=
              body.getArgument(0) ||
          !in.isPermutation() || !out.isPermutation())
        return std::nullopt;
      std::optional<unsigned> pos = in.getResultPosition(out.getResult(dim));
      if (!pos)
        return std::nullopt;
      dim = *pos;
      v = g.getDpsInputOperand(0)->get();
    }
  }

  /// Seeds the weights of split contractions: column parallel, or row
  /// parallel when the activation derives from a column-parallel product
  /// (its features are split; attention's heads too), as Megatron pairs
  /// them. A row parallel product's result is whole again. A split scope
  /// that finds no weight to split is an error, never a silent replica.
  LogicalResult seedSplitWeights(func::FuncOp fn, MeshOp mesh) {
    MLIRContext *ctx = &getContext();
    llvm::DenseSet<Value> featureSplit;
    Operation *firstSplit = nullptr;
    bool seeded = false;
    FunctionAttrEdit edit(fn);
    WalkResult result = fn.walk([&](Operation *o) -> WalkResult {
      auto op = dyn_cast<linalg::LinalgOp>(o);
      auto scope = o->getAttrOfType<SplitAttr>(EPLDialect::kScopeAttrName);
      if (scope && !firstSplit)
        firstSplit = o;
      std::optional<linalg::ContractionDimensions> cd;
      if (op && scope && linalg::isaContractionOpInterface(op))
        if (FailureOr<linalg::ContractionDimensions> dims =
                linalg::inferContractionDims(op);
            succeeded(dims) && dims->n.size() == 1 && dims->k.size() == 1)
          cd = *dims;
      // A convolution splits like a product over its channels: the
      // filter's output channels (column parallel) or input channels (row
      // parallel, when the image's channels are split already).
      if (op && scope && !cd && linalg::isaConvolutionOpInterface(op))
        if (FailureOr<linalg::ConvolutionDimensions> dims =
                linalg::inferConvolutionDims(op);
            succeeded(dims) && dims->outputChannel.size() == 1 &&
            dims->inputChannel.size() == 1) {
          cd = linalg::ContractionDimensions();
          cd->n = dims->outputChannel;
          cd->k = dims->inputChannel;
        }
      SmallVector<AffineMap> maps =
          cd ? op.getIndexingMapsArray() : SmallVector<AffineMap>();
      bool weighted = false;
      for (OpOperand *in :
           cd ? op.getDpsInputOperands() : SmallVector<OpOperand *>()) {
        // The activation is the other input.
        Value activation;
        for (OpOperand *other : op.getDpsInputOperands())
          if (other != in)
            activation = other->get();
        bool rowParallel = activation && featureSplit.contains(activation);
        unsigned loop = rowParallel ? cd->k[0] : cd->n[0];
        std::optional<unsigned> dim =
            maps[in->getOperandNumber()].getResultPosition(
                getAffineDimExpr(loop, ctx));
        auto found = dim ? paramBehind(fn, in->get(), *dim) : std::nullopt;
        if (!found)
          continue;
        auto [weight, weightDim] = *found;
        auto type = cast<RankedTensorType>(weight.getType());
        auto name = fn.getArgAttrOfType<StringAttr>(weight.getArgNumber(),
                                                    EPLDialect::kNameAttrName);
        if (type.getDimSize(weightDim) % scope.getDevices() != 0)
          return op->emitError()
                 << "split(" << scope.getDevices() << ") of " << describe(op)
                 << " does not divide dimension " << weightDim << " of size "
                 << type.getDimSize(weightDim) << " of weight '"
                 << (name ? name.getValue() : StringRef("?")) << "'";
        Layout l = Layout::replicated(type.getRank());
        l.dims[weightDim] = {"tensor"};
        edit.setArg(weight.getArgNumber(), EPLDialect::kShardingAttrName,
                    l.toAttr(ctx, mesh.getSymName()));
        weighted = seeded = true;
        if (!rowParallel)
          featureSplit.insert(op->getResult(0));
      }
      if (!weighted && llvm::any_of(o->getOperands(), [&](Value v) {
            return featureSplit.contains(v);
          }))
        featureSplit.insert(o->getResults().begin(), o->getResults().end());
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    edit.apply();
    if (firstSplit && !seeded && !probing)
      return firstSplit->emitError()
             << "epl-plan: this split scope splits nothing: no contraction in "
                "it multiplies by a parameter (directly or through a "
                "transpose), so every device would compute all of it";
    return success();
  }
};
} // namespace
