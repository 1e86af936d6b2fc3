//===- Pipelines.h - Named EPL pass pipelines -------------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// Every pipeline the tools run is defined here once, so that epl-opt,
// epl-run and the Python frontend run the same passes.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_PIPELINES_PIPELINES_H
#define EPL_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::epl {

struct CPULoweringOptions : public PassPipelineOptions<CPULoweringOptions> {
  PassOptions::Option<bool> blas{
      *this, "blas",
      llvm::cl::desc("Run matmul-like ops through CBLAS (else as loops)"),
      llvm::cl::init(true)};
};

/// `epl-lower-to-cpu`: a tensor-level module (L0 to L3) down to the LLVM
/// dialect, ready for the JIT: communication to runtime calls, one-shot
/// bufferization with deallocation, matmuls to BLAS, the rest to loops.
void buildCPULoweringPipeline(OpPassManager &pm,
                              const CPULoweringOptions &options);

struct ParallelizeOptions : public PassPipelineOptions<ParallelizeOptions> {
  PassOptions::Option<int64_t> devices{
      *this, "devices", llvm::cl::desc("Number of devices"), llvm::cl::init(1)};
};

/// `epl-parallelize`: an L0 model to the per-device training step: plan,
/// autodiff, sharding propagation, collectives (gradient reduction), then
/// the optimizer on each device's shard.
void buildParallelizePipeline(OpPassManager &pm,
                              const ParallelizeOptions &options);

/// `epl-training-step`: an L0 model to the training step `epl-run` runs:
/// autodiff and the optimizer on one device, `epl-parallelize` on several.
void buildTrainingStepPipeline(OpPassManager &pm,
                               const ParallelizeOptions &options);

/// Registers every EPL pass and named pipeline with the global registry.
void registerEPLPassesAndPipelines();

} // namespace mlir::epl

#endif // EPL_PIPELINES_PIPELINES_H
