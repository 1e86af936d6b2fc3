//===- Compile.h - From a module to a loaded program ------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// The JIT path of the runner, in two stages so that a run can check its
// inputs in between, before the expensive part:
//  1. `buildStep` finds the entry and, for an L0 model, builds its training
//     step (`epl-autodiff`, or `epl-parallelize` on several devices), then
//     describes it (Program.h), one stage per function of a pipeline;
//  2. `loadProgram` wraps each stage's function, lowers the module with
//     `epl-lower-to-cpu` and JIT-compiles it for the host, with the
//     runtime's symbols (epl/Runtime/Symbols.h) resolved.
// Ahead of time, `writeArtifact` replaces stage 2: the same lowering and
// LLVM pipeline, code generated into a shared object with a manifest
// (Artifact.h) that epl-exec runs.
// Errors: a failing function fills `error`, or leaves it empty when the
// module's diagnostics already reported what is wrong.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_COMPILE_H
#define EPL_RUNNER_COMPILE_H

#include "epl/Runner/EntryPoint.h"
#include "epl/Runner/Program.h"
#include "epl/Runner/ShortSourceLines.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <memory>

namespace mlir::epl {

/// What a step is compiled for.
enum class Target { CPU, CUDA };

/// What the cuda target's kernels are embedded as: machine code for the
/// chip alone (a cubin), that and its PTX (a fatbin: GPUs newer than the
/// chip compile the PTX when they load it), or PTX alone.
enum class GPUFormat { Cubin, Fatbin, PTX };

struct CompileOptions {
  /// The function to run; empty: see findEntryPoint.
  std::string entry;
  /// Build an L0 model's training step (else run its forward).
  bool train = true;
  /// Devices an L0 model is parallelized over.
  int64_t devices = 1;
  /// Matmuls through CBLAS.
  bool blas = true;
  /// Lower for the GPU (epl-linalg-to-gpu), then run the kernels on the CPU
  /// thread by thread (epl-gpu-kernels-to-host): checks the GPU lowering's
  /// numbers where there is no GPU.
  bool emulateGPU = false;
  /// CPU, or NVIDIA GPUs: kernels compiled for `gpuChip`, the step's
  /// buffers on the device (epl-lower-to-cuda).
  Target target = Target::CPU;
  std::string gpuChip = "sm_90";
  GPUFormat gpuFormat = GPUFormat::Cubin;
  /// The cuda target's kernels compiled for the host, for the fake CUDA
  /// driver of the tests (epl-host-kernel-images); epl-compile only.
  bool gpuHostKernels = false;
  /// LLVM IR optimization level of the JIT (0-3).
  unsigned optLevel = 2;
  /// Code generator level (0-3) of the kernels (`__epl_kernel_*`). The
  /// glue around them is always selected by FastISel (optimizeLLVMModule):
  /// SelectionDAG took 10 s on the glue of a 2-block transformer step that
  /// FastISel compiles in 0.5 s, while on the kernels it costs 0.3 s and
  /// runs that step 1.3x faster than FastISel's code.
  unsigned codegenOptLevel = 2;
  /// Print the LLVM IR's size before and after optimization.
  bool timing = false;
  /// The CPU the host code is compiled for (LLVM's name: `x86-64-v3`,
  /// `sapphirerapids`); empty: this machine's. epl-compile only: an artifact
  /// run on another machine must not use instructions its CPU lacks.
  std::string hostCPU;
  /// JIT only: write the compiled machine code of the step here.
  std::string objectDumpPath;
};

/// The options of the compile stages every compiling tool (epl-run,
/// epl-compile) takes: --entry, --no-train, --target, --gpu-chip,
/// --gpu-format, --blas,
/// --emulate-gpu, -O, --codegen-opt, --timing. Constructing it registers them
/// in `category`.
class CompileCommandLine {
public:
  explicit CompileCommandLine(llvm::cl::OptionCategory &category);
  /// The options as given; fails with `error` on a level out of range.
  FailureOr<CompileOptions> compileOptions(std::string &error) const;
  /// Registers MLIR's pass-manager options (--mlir-timing,
  /// --mlir-print-ir-after=PASS, ...; the passes first, whose names they
  /// read) and hides every option outside `category` from --help
  /// (docs/epl-run.md lists them). Call after the tool's own options.
  static void addPassManagerOptions(llvm::cl::OptionCategory &category);

  llvm::cl::opt<std::string> entry;
  llvm::cl::opt<bool> noTrain;
  llvm::cl::opt<Target> target;
  llvm::cl::opt<std::string> gpuChip;
  llvm::cl::opt<GPUFormat> gpuFormat;
  llvm::cl::opt<bool> blas;
  llvm::cl::opt<bool> emulateGPU;
  llvm::cl::opt<unsigned> optLevel;
  llvm::cl::opt<unsigned> codegenOpt;
  llvm::cl::opt<bool> timing;
};

/// With `--timing`: prints how long each phase took since the previous one.
class PhaseTimer {
public:
  explicit PhaseTimer(bool enabled) : enabled(enabled) {}
  void done(const char *phase);

private:
  bool enabled;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
};

/// The dialects and translations a module to run needs.
void registerRunnerDialects(DialectRegistry &registry);

/// A module read from a file, with the context it lives in and a handler
/// that prints its diagnostics (one line with the source location each,
/// quoting a window of a long source line).
class SourceModule {
public:
  SourceModule();
  /// Reads and parses `path` (the phases "start" and "parse" of `timer`).
  LogicalResult parse(llvm::StringRef path, PhaseTimer &timer,
                      std::string &error);
  ModuleOp get() { return *module; }

private:
  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  ShortSourceLineDiagnosticHandler diagnostics;
  OwningOpRef<ModuleOp> module;
};

/// The step to run, built and described: `program` without its calls.
struct Step {
  /// The function of each stage.
  SmallVector<func::FuncOp> functions;
  Program program;
};

/// Stage 1 (see above).
FailureOr<Step> buildStep(ModuleOp module, const CompileOptions &options,
                          PhaseTimer &timer, std::string &error);

/// Wraps each stage's function (filling the stages' in-place pairs) and
/// lowers `module` with `epl-lower-to-cpu`.
LogicalResult lowerStep(ModuleOp module, Step &step,
                        const CompileOptions &options, PhaseTimer &timer);

/// The host's target at `options`' code generator level (what the JIT
/// generates code for).
FailureOr<llvm::orc::JITTargetMachineBuilder>
hostTargetBuilder(const CompileOptions &options, std::string &error);

/// LLVM's default pipeline at `options.optLevel`, without loop unrolling: a
/// step is hundreds of small loop nests with static trip counts, which full
/// unrolling turns into huge blocks that instruction selection handles in
/// quadratic time (13 s instead of 2 s for a 2-block transformer), for no
/// measurable gain at run time.
void optimizeLLVMModule(llvm::Module &m, const CompileOptions &options,
                        llvm::TargetMachine *tm);

/// A JIT-compiled step: the stages' calls point into `engine`.
struct LoadedProgram {
  std::unique_ptr<ExecutionEngine> engine;
  Program program;
};

/// Stage 2 (see above). Changes `module`.
FailureOr<LoadedProgram> loadProgram(ModuleOp module, Step step,
                                     const CompileOptions &options,
                                     PhaseTimer &timer, std::string &error);

struct ArtifactOptions {
  /// The shared object to write.
  std::string output;
  /// The devices the step was built for (the manifest's `devices`).
  int64_t devices = 1;
  /// The C compiler driver that links the object into a shared object.
  std::string linker = "cc";
};

/// Ahead of time: lowers the step like `loadProgram`, optimizes it with the
/// same LLVM pipeline, generates code for the host into an object with the
/// manifest (Artifact.h) in its own section and a packed function per stage
/// (artifactStageSymbol), and links it into the shared object
/// `artifact.output`, written atomically. Changes `module`.
LogicalResult writeArtifact(ModuleOp module, Step step,
                            const CompileOptions &options,
                            const ArtifactOptions &artifact, PhaseTimer &timer,
                            std::string &error);

} // namespace mlir::epl

#endif // EPL_RUNNER_COMPILE_H
