//===- epl-compile.cpp - Compile an EPL step ahead of time ----------------===//
//
// Part of EPL-MLIR.
//
// Builds the step of a tensor-level module exactly as epl-run does (the
// training step of an L0 model, planned and partitioned over --devices),
// lowers it with the same `epl-lower-to-cpu` pipeline and the same LLVM
// pipeline, and writes it as a shared object with its manifest (an
// artifact, docs/aot.md) that epl-exec runs without MLIR or LLVM.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/InitEPL.h"
#include "epl/Runner/CommandLine.h"
#include "epl/Runner/Compile.h"
#include "epl/Runner/Run.h"
#include "epl/Runtime/Backend.h"
#include "epl/Support/Signals.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/TargetSelect.h"

using namespace mlir;
using namespace mlir::epl;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory category("epl-compile options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("The artifact to write"),
                                cl::value_desc("file.so"), cl::Required,
                                cl::cat(category));
cl::opt<int64_t> devices("devices",
                         cl::desc("Devices an L0 model is parallelized over "
                                  "(epl-run's --ranks, or mpirun -np)"),
                         cl::init(1), cl::cat(category));
cl::alias ranksAlias("ranks", cl::desc("Alias for --devices"),
                     cl::aliasopt(devices), cl::cat(category));
cl::opt<std::string> hostCPU(
    "host-cpu",
    cl::desc("CPU the host code is compiled for, as LLVM names it (default: "
             "this machine's; x86-64-v3 runs on any x86 server of the last "
             "decade)"),
    cl::value_desc("name"), cl::cat(category));
cl::opt<bool> gpuHostKernels(
    "gpu-host-kernels",
    cl::desc("With --target cuda: embed the kernels compiled for this CPU "
             "instead of cubins, to run the artifact under the test suite's "
             "fake CUDA driver (docs/gpu.md); a real GPU refuses them"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> linker("linker",
                            cl::desc("C compiler driver that links the "
                                     "shared object"),
                            cl::init("cc"), cl::cat(category));

[[noreturn]] void fail(const llvm::Twine &message) {
  // One write: under mpirun every rank may fail at once, into one stream.
  llvm::errs() << ("epl-compile: error: " + message + "\n").str();
  std::exit(1);
}

/// Exit code 1, after printing `error` unless diagnostics already did.
int exitWith(const std::string &error) {
  if (!error.empty())
    fail(error);
  return 1;
}
} // namespace

int main(int argc, char **argv) {
  IgnoredSignals ignored;
  llvm::InitLLVM initLLVM(argc, argv);
  ignored.restore();
  ::epl::rt::setToolName("epl-compile");
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  addVersionPrinter();
  CompileCommandLine compileLine(category);
  CompileCommandLine::addPassManagerOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "epl-compile: compiles an EPL module's step ahead of time into an "
      "artifact (a shared object with a manifest) for epl-exec\n");

  std::string error;
  if (failed(checkOptionsGivenOnce(error)))
    fail(error);
  FailureOr<CompileOptions> compile = compileLine.compileOptions(error);
  if (failed(compile))
    fail(error);
  if (devices < 1)
    fail("--devices must be at least 1");
  compile->devices = devices;
  compile->hostCPU = hostCPU;
  if (gpuHostKernels && compile->target != Target::CUDA)
    fail("--gpu-host-kernels is for --target cuda");
  // Kernels for the host have no GPU architecture or format.
  for (const cl::Option *gpuOnly : std::initializer_list<const cl::Option *>{
           &compileLine.gpuChip, &compileLine.gpuFormat})
    if (gpuHostKernels && gpuOnly->getNumOccurrences())
      fail("--" + gpuOnly->ArgStr +
           " is for the GPU's kernels, not "
           "--gpu-host-kernels");
  compile->gpuHostKernels = gpuHostKernels;
  if (failed(checkInputs({inputFile}, error)))
    fail(error);
  if (sameFile(outputFile, inputFile))
    fail("-o " + outputFile + " would overwrite the model");
  if (failed(checkOutputFile("-o", outputFile, error)))
    fail(error);

  PhaseTimer timer(compile->timing);
  SourceModule module;
  if (failed(module.parse(inputFile, timer, error)))
    return exitWith(error);
  Config config = Config::get(module.get());
  if (compile->train && config.getBool("gradient_checkpoint.check_gradients") &&
      !config.getString("gradient_checkpoint.type").empty())
    llvm::errs() << "epl-compile: warning: gradient_checkpoint.check_gradients "
                    "is checked by epl-run only; the artifact trains without "
                    "the check\n";
  FailureOr<Step> step = buildStep(module.get(), *compile, timer, error);
  if (failed(step))
    return exitWith(error);
  ArtifactOptions artifact;
  artifact.output = outputFile;
  artifact.devices = devices;
  artifact.linker = linker;
  if (failed(writeArtifact(module.get(), std::move(*step), *compile, artifact,
                           timer, error)))
    return exitWith(error);
  return 0;
}
