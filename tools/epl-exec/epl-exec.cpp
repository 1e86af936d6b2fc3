//===- epl-exec.cpp - Run an artifact of epl-compile ----------------------===//
//
// Part of EPL-MLIR.
//
// Runs a step compiled ahead of time (epl-compile's artifact: a shared
// object with a manifest, docs/aot.md) on CPU ranks, with epl-run's options
// and outputs: threads of this process (--ranks N, by default the devices
// it was compiled for) or one process per rank under mpirun. It links the
// runner library's core and the runtime only: no MLIR, no LLVM shared
// library, no compiler. The runtime's symbols are exported for the
// artifact, which dlopen binds to them.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/Artifact.h"
#include "epl/Runner/CommandLine.h"
#include "epl/Runner/Dataset.h"
#include "epl/Runtime/Backend.h"
#include "epl/Support/Signals.h"
#include "epl/Version.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>

using namespace mlir::epl;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory category("epl-exec options");

cl::opt<std::string> artifactFile(cl::Positional, cl::desc("<artifact.so>"),
                                  cl::Required, cl::cat(category));
cl::opt<std::string> evalArtifactFile(
    "eval-artifact",
    cl::desc("With --eval-dataset: the forward to evaluate, an artifact of "
             "epl-compile --no-train --devices 1"),
    cl::value_desc("artifact.so"), cl::cat(category));
cl::opt<bool> printManifest("print-manifest",
                            cl::desc("Print the artifact's manifest (JSON) "
                                     "and exit"),
                            cl::init(false), cl::cat(category));

[[noreturn]] void fail(const std::string &message) {
  // One write: under mpirun every rank may fail at once, into one stream.
  llvm::errs() << "epl-exec: error: " + message + "\n";
  std::exit(1);
}
} // namespace

int main(int argc, char **argv) {
  IgnoredSignals ignored;
  llvm::InitLLVM initLLVM(argc, argv);
  ignored.restore();
  // A reader of the step lines that goes away (`| head`) must not end the
  // run before its checkpoint is written: printing fails quietly instead.
  std::signal(SIGPIPE, SIG_IGN);
  ::epl::rt::setToolName("epl-exec");
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "EPL-MLIR version " << EPL_VERSION_STRING
       << " (epl-exec: runs artifacts of manifest format " << kManifestFormat
       << ", runtime ABI " << runtimeInterfaceDigest() << ")\n";
  });
  RunCommandLine runLine(category);
  DatasetCommandLine datasetLine(category);
  EvalCommandLine evalLine(category);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "epl-exec: runs an artifact of epl-compile, its "
                              "ranks threads or MPI processes, on the CPU or "
                              "(a --target cuda artifact) on GPUs\n");

  std::string error;
  if (failed(checkOptionsGivenOnce(error)))
    fail(error);
  // The training step is no forward to evaluate, and nothing here compiles
  // one: the evaluation is an artifact of its own.
  if (evalLine.file.empty() != evalArtifactFile.empty())
    fail(evalLine.file.empty()
             ? "--eval-artifact needs --eval-dataset"
             : "--eval-dataset needs --eval-artifact: the forward to "
               "evaluate, compiled by epl-compile --no-train --devices 1");
  if (failed(evalLine.check(datasetLine, error)))
    fail(error);
  std::vector<std::string> artifacts = {artifactFile};
  if (!evalArtifactFile.empty())
    artifacts.push_back(evalArtifactFile);
  if (failed(checkInputs(artifacts, error)))
    fail(error);
  // The manifest is read from the file before anything is loaded.
  // --print-manifest shows what any artifact is (another machine's, an
  // older version's): what to run it with, or why it does not run here.
  llvm::FailureOr<Manifest> manifest =
      readArtifact(artifactFile, error, /*toRun=*/!printManifest);
  if (failed(manifest))
    fail(error);
  if (printManifest) {
    llvm::outs() << writeManifest(*manifest) << "\n";
    return 0;
  }
  std::vector<std::string> inputs = artifacts;
  for (const std::string &spec :
       {datasetLine.file.getValue(), evalLine.file.getValue()})
    llvm::append_range(inputs, datasetFiles(spec));
  llvm::FailureOr<RunOptions> run =
      runLine.runOptions(error, static_cast<int>(manifest->devices), inputs);
  if (failed(run) || failed(datasetLine.check(runLine, error)))
    fail(error);
  run->ranks.cuda = manifest->target == "cuda";
  if (run->ranks.cuda &&
      !gpusAvailableFor(manifest->program, run->ranks, error))
    fail(artifactFile + " targets cuda, but " + error);
  for (llvm::cl::Option *gpuOption :
       {static_cast<llvm::cl::Option *>(&runLine.gpuCollectives),
        static_cast<llvm::cl::Option *>(&runLine.gpuTF32)})
    if (gpuOption->getNumOccurrences() && !run->ranks.cuda)
      fail("--" + gpuOption->ArgStr.str() + " is for GPU ranks; " +
           artifactFile + " targets " + manifest->target);
  Program &program = manifest->program;
  if (failed(checkMeshes(program.meshes, run->ranks, error)))
    fail(error);
  // The step was planned for the devices it was compiled for: on others it
  // would be run whole on each rank, not parallelized as epl-run does.
  if (int ranks = numDevices(run->ranks); ranks != manifest->devices)
    fail(artifactFile + " was compiled for " +
         std::to_string(manifest->devices) +
         " device(s) (epl-compile --devices), but the run has " +
         std::to_string(ranks) + " rank(s)");
  // Every input is checked before the artifact is loaded.
  llvm::FailureOr<std::vector<HostTensor>> args =
      prepareArguments(program, runLine.sources(), error);
  if (failed(args))
    fail(error);
  std::optional<Dataset> dataset;
  if (failed(datasetLine.open(program, runLine, *run, dataset, error)))
    fail(error);
  // The forward runs whole on each rank, on the step's kind of device.
  llvm::FailureOr<Manifest> evaluation = llvm::failure();
  std::optional<Dataset> evalDataset;
  if (!evalArtifactFile.empty()) {
    evaluation = readArtifact(evalArtifactFile, error);
    if (failed(evaluation))
      fail(error);
    if (evaluation->devices != 1)
      fail("--eval-artifact " + evalArtifactFile + " was compiled for " +
           std::to_string(evaluation->devices) +
           " devices; the evaluation runs whole on each rank: compile it "
           "with --devices 1");
    if (evaluation->target != manifest->target)
      fail("--eval-artifact " + evalArtifactFile + " targets " +
           evaluation->target + ", the step " + manifest->target);
    if (failed(evalLine.open(program, evaluation->program, runLine, *run,
                             evalDataset, error)))
      fail(error);
    run->evaluation = &evaluation->program;
  }
  if (failed(loadArtifact(artifactFile, *manifest, error)))
    fail(error);
  if (succeeded(evaluation) &&
      failed(loadArtifact(evalArtifactFile, *evaluation, error)))
    fail(error);
  return runProgram(program, std::move(*args), *run);
}
