//===- SimulatePipeline.cpp - Timing the stage programs of a pipeline -----===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLOps.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/Dialect/EPL/Transforms/StagePrograms.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLSIMULATEPIPELINEPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
struct EPLSimulatePipelinePass
    : public mlir::epl::impl::EPLSimulatePipelinePassBase<
          EPLSimulatePipelinePass> {
  using Base::Base;

  void runOnOperation() override {
    pipeline::Costs costs;
    costs.forward = forward;
    costs.backwardInput = backwardInput;
    costs.backwardWeight = backwardWeight;
    costs.send = send;
    if (getOperation().getOps<PipelineOp>().empty()) {
      getOperation().emitError(
          "epl-simulate-pipeline: the module has no epl.pipeline to simulate; "
          "partition a model with stages first (epl-pipeline-partition, as "
          "--epl-parallelize=devices=N does)");
      return signalPassFailure();
    }
    for (PipelineOp pipe : getOperation().getOps<PipelineOp>()) {
      SmallVector<func::FuncOp> programs = pipe.getStageFunctions();
      int64_t stages = virtualStagesOf(programs);
      FailureOr<pipeline::Program> events = readStagePrograms(programs, stages);
      if (failed(events))
        return signalPassFailure();
      std::string error;
      FailureOr<pipeline::Simulation> simulation =
          pipeline::simulate(*events, costs, error);
      if (failed(simulation)) {
        pipe.emitError() << "epl-simulate-pipeline: " << error;
        return signalPassFailure();
      }
      llvm::outs() << "pipeline @" << pipe.getSymName() << ": "
                   << pipe.getStrategy() << ", " << programs.size()
                   << " stage devices, " << stages << " stages, "
                   << pipe.getMicroBatches() << " micro-batches\n";
      pipeline::print(*simulation, llvm::outs());
    }
  }
};
} // namespace
