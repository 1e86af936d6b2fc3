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
#include "mlir/Support/LLVM.h"

namespace mlir::epl {

struct CPULoweringOptions : public PassPipelineOptions<CPULoweringOptions> {
  PassOptions::Option<bool> blas{
      *this, "blas",
      llvm::cl::desc("Run matmul-like ops through CBLAS (else as loops)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> emulateGPU{
      *this, "emulate-gpu",
      llvm::cl::desc("Map linalg ops to GPU kernels as epl-lower-to-cuda "
                     "does, then run the kernels on the CPU thread by thread "
                     "(checks the GPU lowering's numbers without a GPU)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> threadsPerBlock{
      *this, "threads-per-block",
      llvm::cl::desc("GPU threads per block (with emulate-gpu)"),
      llvm::cl::init(256)};
};

/// The lowering's rewrites on tensors that decide which buffers a step
/// holds: aggregates decomposed, strided windows split by phase, window
/// contractions reading patches for BLAS (`blas`; a cache-sized tile at a
/// time unless `gpu`). Every lowering starts with them, and epl-run's memory
/// estimate runs them too, so that it sees the buffers the lowering makes.
void addTensorRewrites(OpPassManager &pm, bool blas, bool gpu);

/// What follows them on tensors, and decides the kernels: element-wise
/// fusion (contractions kept for BLAS where `blas` says so) and long
/// reductions split over many threads, summed in parts (finer on a GPU,
/// `gpu`). The memory estimate runs them too.
void addKernelFormation(OpPassManager &pm, bool blas, bool gpu);

/// `epl-lower-to-cpu`: a tensor-level module (L0 to L3) down to the LLVM
/// dialect, ready for the JIT: communication to runtime calls, one-shot
/// bufferization with deallocation, matmuls to BLAS, the rest to loops.
void buildCPULoweringPipeline(OpPassManager &pm,
                              const CPULoweringOptions &options);

struct CUDALoweringOptions : public PassPipelineOptions<CUDALoweringOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture of the kernels"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features of the kernels (default: the PTX version "
                     "`chip` needs, ptxFeaturesFor)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What the kernels are embedded as: bin (a cubin, made "
                     "by CUDA's ptxas), isa (PTX, compiled by the driver "
                     "when loaded) or fatbin"),
      llvm::cl::init("bin")};
  PassOptions::Option<int64_t> threadsPerBlock{
      *this, "threads-per-block", llvm::cl::desc("GPU threads per block"),
      llvm::cl::init(256)};
  PassOptions::Option<bool> hostKernels{
      *this, "host-kernels",
      llvm::cl::desc("Compile the kernels for the host instead of the GPU, "
                     "for the test suite's fake CUDA driver "
                     "(epl-host-kernel-images); the host code is unchanged"),
      llvm::cl::init(false)};
};

/// The PTX version the kernels for `chip` (`sm_90`, `sm_100a`) are written
/// in, as a target feature (`+ptx80`): 8.0 where that suffices, else the
/// first that knows the chip; fails with `error` on a chip CUDA 13 does not
/// compile for or this compiler does not know.
FailureOr<std::string> ptxFeaturesFor(llvm::StringRef chip, std::string &error);

/// `epl-lower-to-cuda`: a tensor-level module down to the LLVM dialect for
/// NVIDIA GPUs: the same bufferization as the CPU's; every linalg op a
/// kernel (epl-linalg-to-gpu), compiled to NVVM and embedded as a cubin;
/// contractions and communication calls of the runtime, which runs them
/// with cuBLAS and NCCL on device buffers; launches calls of the runtime's
/// mgpu* functions.
void buildCUDALoweringPipeline(OpPassManager &pm,
                               const CUDALoweringOptions &options);

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
