//===- Pipelines.cpp - Named EPL pass pipelines ---------------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Pipelines/Pipelines.h"
#include "epl/Conversion/Passes.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::epl;

void mlir::epl::addTensorRewrites(OpPassManager &pm, bool blas, bool gpu) {
  // arith and math on tensors (a forward run as written: a training step
  // has them as linalg already) become linalg, which the rest lowers
  // (epl-expand-math wrote a tensor tanh's scalar compares on tensors).
  pm.addPass(createConvertElementwiseToLinalgPass());
  // A scatter-add's rows become GPU threads of their own.
  if (gpu)
    pm.addPass(createEPLParallelizeScattersPass());
  pm.addPass(createEPLDecomposeAggregatesPass());
  // A strided convolution's input gradient skips the stride's zeros.
  pm.addPass(createEPLSplitStridedWindowsPass());
  // Convolutions (and their gradients) read patches, so BLAS runs them; on
  // a CPU a cache-sized tile of patches at a time, on a GPU all at once.
  if (blas) {
    EPLIm2ColPassOptions im2col;
    if (gpu)
      im2col.tileBytes = 0;
    pm.addPass(createEPLIm2ColPass(im2col));
  }
}

void mlir::epl::addKernelFormation(OpPassManager &pm, bool blas, bool gpu) {
  // A reduction's results are its threads (a GPU's, or a CPU rank's), and
  // each adds its values one after another: a loss's sum would be one
  // thread, and drift from the exact sum as the batch grows. Long
  // reductions with few results are split, and nothing they cannot split
  // is fused into them. A GPU wants threads: parts of 16 values, as many
  // as make 65536 threads. A CPU wants accuracy: parts of at most 64
  // values (of at least 16), however many results.
  EPLSplitReductionsPassOptions split;
  split.keepGemms = blas;
  if (!gpu) {
    split.targetThreads = 1;
    split.maxPerThread = 64;
  }
  EPLFuseElementwisePassOptions fuse;
  fuse.keepContractions = blas;
  fuse.splitTargetThreads = split.targetThreads;
  fuse.splitMinPerThread = split.minPerThread;
  fuse.splitMaxPerThread = split.maxPerThread;
  pm.addPass(createEPLFuseElementwisePass(fuse));
  pm.addPass(createEPLSplitReductionsPass(split));
  // Each buffer comes into being where it is first written (a shared
  // tensor.empty would allocate at its own place): what the estimate
  // counts.
  pm.addPass(createEPLEmptyTensorPerUsePass());
}

/// The lowering's steps on tensors, and bufferization: the same for every
/// target. Contractions become the runtime's GEMM where `blas` says so.
static void addBufferization(OpPassManager &pm, bool blas, bool gpu,
                             bool deviceAssertions = false) {
  addTensorRewrites(pm, blas, gpu);
  pm.addPass(createEPLExpandMathPass());
  EPLLowerToRuntimePassOptions runtime;
  runtime.deviceAssertions = deviceAssertions;
  runtime.gpu = gpu;
  pm.addPass(createEPLLowerToRuntimePass(runtime));
  addKernelFormation(pm, blas, gpu);
  // epl-run's entry wrappers hold the step's body and write its results
  // into the runner's buffers; what is left of the step is dead.
  pm.addPass(createSymbolDCEPass());
  // A result built in a fresh tensor is built in its destination instead.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // Plain row-major buffers at function boundaries: that is what the
  // runtime and epl-run pass.
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A loop whose body computes its carried tensor anew (into a tensor it
  // does not carry) yields a new buffer each iteration, which
  // ownership-based deallocation frees: otherwise an error in
  // bufferization's terms.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Private functions (a pipeline stage's pieces) write their results into
  // buffers their caller allocates: the caller then owns every buffer it
  // holds, and frees each at its last use (below) instead of at its end.
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // Upstream's buffer-deallocation-pipeline, with the buffers that alias
  // nothing a function returns freed first: its simplification is quadratic
  // in the number of buffers a function allocates.
  memref::ExpandReallocPassOptions expandRealloc;
  expandRealloc.emitDeallocs = false;
  pm.addPass(memref::createExpandReallocPass(expandRealloc));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createEPLFreeLocalBuffersPass());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // Clones the deallocation pipeline leaves become allocations and copies.
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Buffers die at their last use, not at the end of the step: a pipeline
  // stage holds only the micro-batches its schedule has in flight. (Upstream's
  // optimize-allocation-liveness, in time linear in the step's size.)
  pm.addNestedPass<func::FuncOp>(createEPLOptimizeAllocationLivenessPass());
  // A gradient's sum over the ranks written over its contributions (every
  // backend accepts one buffer for both; epl-estimate-memory counts it so).
  pm.addPass(createEPLAllReduceInPlacePass());

  if (blas)
    pm.addPass(createEPLMatmulToRuntimePass());
}

/// Host code (and on the CPU, its kernels) from loops on buffers to the LLVM
/// dialect.
static void addHostToLLVM(OpPassManager &pm) {
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  // Generic allocation functions: the runtime counts every buffer.
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
}

/// Buffers to structured control flow on memrefs, for host and kernels.
static void addLoopsToControlFlow(OpPassManager &pm) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
}

/// What every GPU lowering does first: each linalg op on buffers a launch,
/// each launch's body a kernel of its own.
static void addKernelMapping(OpPassManager &pm, int64_t threadsPerBlock,
                             bool onHost) {
  pm.addPass(createEPLCopyArgumentsToDevicePass());
  EPLLinalgToGPUPassOptions mapping;
  mapping.threadsPerBlock = threadsPerBlock;
  mapping.allowHostCalls = onHost;
  pm.addPass(createEPLLinalgToGPUPass(mapping));
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createEPLGatherKernelsPass());
}

void mlir::epl::buildCPULoweringPipeline(OpPassManager &pm,
                                         const CPULoweringOptions &options) {
  addBufferization(pm, options.blas, /*gpu=*/options.emulateGPU);
  if (options.emulateGPU) {
    // The kernels run on the host: a gather's bounds check may call the
    // runtime, as on the CPU.
    addKernelMapping(pm, options.threadsPerBlock, /*onHost=*/true);
    pm.addPass(createEPLGPUKernelsToHostPass());
  }
  // The runner's in-place updates, said in the IR: an update's kernel reads
  // and writes one buffer, which the vectorizer needs no check for.
  pm.addNestedPass<func::FuncOp>(createEPLTieInPlaceArgumentsPass());
  pm.addPass(createEPLOutlineKernelsPass());
  // Emulated GPU kernels keep one thread per GPU thread, as on the device.
  if (!options.emulateGPU)
    pm.addPass(createEPLThreadKernelsPass());
  // A model's identical blocks leave host code that repeats: one copy is
  // compiled from here on, so compile time follows the distinct code.
  pm.addPass(createEPLOutlineRepeatsPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  addLoopsToControlFlow(pm);
  addHostToLLVM(pm);
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

/// The PTX version a chip's kernels are written in: 8.0 (CUDA 12.0) where
/// that suffices, else the first that knows the chip (LLVM refuses an older
/// one with a fatal error). The chips are those CUDA 13's ptxas compiles
/// (`ptxas --help`, --gpu-name): sm_75 and newer, `a` (architecture-
/// specific) variants from sm_90, `f` (family) variants from sm_100, which
/// PTX knows from 8.8.
FailureOr<std::string> mlir::epl::ptxFeaturesFor(StringRef chip,
                                                 std::string &error) {
  unsigned number = 0;
  StringRef digits = chip;
  bool valid = digits.consume_front("sm_");
  char variant = 0;
  if (digits.ends_with("a") || digits.ends_with("f")) {
    variant = digits.back();
    digits = digits.drop_back();
  }
  valid = valid && !digits.empty() && llvm::all_of(digits, llvm::isDigit) &&
          !digits.getAsInteger(10, number);
  if (!valid) {
    error = "--gpu-chip must name an NVIDIA architecture such as sm_90, not '" +
            chip.str() + "'";
    return failure();
  }
  if (number < 75) {
    error = "--gpu-chip " + chip.str() +
            ": CUDA 13 compiles for sm_75 (Turing) and newer";
    return failure();
  }
  static const std::pair<unsigned, unsigned> known[] = {
      {75, 80}, {80, 80},  {86, 80},  {87, 80},  {88, 90},  {89, 80},
      {90, 80}, {100, 86}, {103, 88}, {110, 90}, {120, 87}, {121, 88}};
  const auto *it = llvm::find_if(
      known, [&](const auto &entry) { return entry.first == number; });
  if (it == std::end(known) || (variant == 'a' && number < 90) ||
      (variant == 'f' && number < 100)) {
    error = "--gpu-chip " + chip.str() +
            ": not an architecture CUDA 13 compiles (sm_75, sm_80, sm_86 to "
            "sm_90, sm_100, sm_103, sm_110, sm_120, sm_121; an 'a' variant "
            "from sm_90, an 'f' variant from sm_100)";
    return failure();
  }
  unsigned ptx = variant == 'f' ? std::max(it->second, 88u) : it->second;
  return "+ptx" + std::to_string(ptx);
}

void mlir::epl::buildCUDALoweringPipeline(OpPassManager &pm,
                                          const CUDALoweringOptions &options) {
  // Contractions always go to the runtime: cuBLAS.
  addBufferization(pm, /*blas=*/true, /*gpu=*/true,
                   /*deviceAssertions=*/true);
  addKernelMapping(pm, options.threadsPerBlock, /*onHost=*/false);
  // Launches and copies in stream order, with the waits they need (what
  // gpu-to-llvm lowers to the runtime's mgpu* calls).
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  if (options.hostKernels) {
    // The same host code, kernels the fake driver runs on the CPU.
    pm.addPass(createEPLHostKernelImagesPass());
    addLoopsToControlFlow(pm);
    addHostToLLVM(pm);
    pm.addPass(createGpuToLLVMConversionPass());
    pm.addPass(createReconcileUnrealizedCastsPass());
    pm.addPass(createCanonicalizerPass());
    return;
  }
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  // Unless given, the PTX version the chip needs (an unknown chip keeps
  // LLVM's default, and LLVM's error).
  std::string error;
  target.features = options.features.empty()
                        ? ptxFeaturesFor(options.chip, error).value_or("")
                        : options.features.getValue();
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  addLoopsToControlFlow(pm);
  // Kernels first: their math becomes libdevice calls, not libm's.
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  addHostToLLVM(pm);
  // Launches and copies become calls of the runtime's mgpu* functions.
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::epl::buildParallelizePipeline(OpPassManager &pm,
                                         const ParallelizeOptions &options) {
  EPLPlanPassOptions plan;
  plan.devices = options.devices;
  pm.addPass(createEPLPlanPass(plan));
  pm.addPass(createEPLAutodiffPass());
  pm.addPass(createEPLRematerializePass());
  // Gradient accumulation calls the micro-batch's gradient function in a
  // loop: inlined, propagation sees one function (nothing else canonicalized).
  pm.addPass(createInlinerPass({}, [](OpPassManager &) {}));
  // Propagation reasons about linalg.generic only.
  pm.addPass(createLinalgGeneralizeNamedOpsPass());
  // Merged dimensions (seq-first rows, batch and heads) as loops of their
  // own, which propagation shards.
  pm.addPass(createEPLFoldReshapesPass());
  pm.addPass(createEPLShardingPropagationPass());
  // ZeRO: shardings over the data axes, propagated again, resolved like any
  // other.
  pm.addPass(createEPLZeroPass());
  // Gradients are reduced here, as the step's results...
  pm.addPass(createEPLInsertCollectivesPass());
  // A pipeline becomes one program per stage device...
  pm.addPass(createEPLPipelinePartitionPass());
  // ...and each device updates its shard of the parameters.
  pm.addPass(createEPLApplyOptimizerPass());
}

void mlir::epl::buildTrainingStepPipeline(OpPassManager &pm,
                                          const ParallelizeOptions &options) {
  if (options.devices > 1)
    return buildParallelizePipeline(pm, options);
  // On one device the plan only checks the config against the model's
  // stages: a model means the same on any number of devices.
  EPLPlanPassOptions plan;
  // (Fewer than one is epl-plan's error, not one device.)
  plan.devices = options.devices;
  pm.addPass(createEPLPlanPass(plan));
  pm.addPass(createEPLAutodiffPass());
  pm.addPass(createEPLRematerializePass());
  // Rejects ZeRO on one device.
  pm.addPass(createEPLZeroPass());
  pm.addPass(createEPLApplyOptimizerPass());
}

void mlir::epl::registerEPLPassesAndPipelines() {
  registerEPLConversionPasses();
  registerEPLTransformsPasses();
  PassPipelineRegistration<CPULoweringOptions>(
      "epl-lower-to-cpu",
      "Lowers a tensor-level EPL module to the LLVM dialect for the CPU "
      "runtime (communication and matmuls as runtime calls)",
      buildCPULoweringPipeline);
  PassPipelineRegistration<CUDALoweringOptions>(
      "epl-lower-to-cuda",
      "Lowers a tensor-level EPL module for NVIDIA GPUs: kernels to NVVM and "
      "a cubin (or PTX), contractions to cuBLAS and communication to the "
      "runtime, host code to the LLVM dialect",
      buildCUDALoweringPipeline);
  PassPipelineRegistration<ParallelizeOptions>(
      "epl-parallelize",
      "Turns an L0 model into the training step one device runs: epl-plan, "
      "epl-autodiff, epl-rematerialize, epl-sharding-propagation, epl-zero, "
      "epl-insert-collectives, "
      "epl-pipeline-partition, epl-apply-optimizer",
      buildParallelizePipeline);
  PassPipelineRegistration<ParallelizeOptions>(
      "epl-training-step",
      "Turns an L0 model into its training step: epl-plan (its checks), "
      "epl-autodiff, epl-rematerialize and epl-apply-optimizer on one "
      "device, "
      "epl-parallelize on several (what "
      "epl-run does)",
      buildTrainingStepPipeline);
}
