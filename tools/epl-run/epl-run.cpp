//===- epl-run.cpp - Run an EPL module on CPU ranks -----------------------===//
//
// Part of EPL-MLIR.
//
// Parses a tensor-level module (L0 to L3), lowers what it still needs with
// the `epl-lower-to-cpu` pipeline, JIT-compiles it once per process and calls
// its entry on every rank: threads of this process (--ranks N) or one process
// per rank under mpirun; a pipelined step (`epl.pipeline`) runs each
// stage's function on that stage's ranks. Parameters come from a seed or a
// safetensors file, inputs from a file or a seeded generator. Rank 0 reports
// each step, and optionally writes a JSON report, a Chrome trace and the
// results as safetensors. The work is the runner library's (lib/Runner);
// this is its command line.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/InitEPL.h"
#include "epl/Runner/Arguments.h"
#include "epl/Runner/Compile.h"
#include "epl/Runner/Dataset.h"
#include "epl/Runner/Run.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/TargetSelect.h"

using namespace mlir;
using namespace mlir::epl;
namespace cl = llvm::cl;
namespace rt = ::epl::rt;

namespace {
cl::OptionCategory category("epl-run options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> entryName("entry",
                               cl::desc("Function to run (default: the one "
                                        "tagging arguments with epl.arg, "
                                        "else @main)"),
                               cl::value_desc("name"), cl::cat(category));
cl::opt<int> numRanks("ranks", cl::desc("Ranks for the threads backend"),
                      cl::init(1), cl::cat(category));
cl::opt<rt::BackendKind>
    backendKind("backend",
                cl::desc("Communication backend (default: mpi under an MPI "
                         "launcher, else threads)"),
                cl::values(clEnumValN(rt::BackendKind::Threads, "threads",
                                      "N ranks as threads of this process"),
                           clEnumValN(rt::BackendKind::MPI, "mpi",
                                      "one rank per process (mpirun)")),
                cl::cat(category));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of parameters and data"),
                       cl::init(0), cl::cat(category));
cl::opt<std::string> paramsFile("params",
                                cl::desc("Parameters by name (safetensors)"),
                                cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> dataFile("data",
                              cl::desc("Inputs and labels by name "
                                       "(safetensors)"),
                              cl::value_desc("file"), cl::cat(category));
cl::opt<int> numSteps("steps", cl::desc("Steps to run"), cl::init(1),
                      cl::cat(category));
cl::opt<std::string> reportFile("report", cl::desc("Write a JSON report"),
                                cl::value_desc("file"), cl::cat(category));
cl::opt<std::string>
    traceFile("trace",
              cl::desc("Write a Chrome trace (Perfetto): a row per rank, a "
                       "slice per pipeline action, send and receive wait"),
              cl::value_desc("file"), cl::cat(category));
cl::opt<std::string>
    dumpFile("dump-results",
             cl::desc("Write the entry's results (safetensors)"),
             cl::value_desc("file"), cl::cat(category));
cl::opt<double> timeout("timeout",
                        cl::desc("Seconds a rank waits for its peers in one "
                                 "operation before the run fails"),
                        cl::init(120), cl::cat(category));
cl::opt<bool> showTiming("timing",
                         cl::desc("Print how long compiling took, by phase"),
                         cl::init(false), cl::cat(category));
cl::opt<unsigned> codegenOpt(
    "codegen-opt",
    cl::desc("Code generator optimization level of the JIT (0-3); 0 selects "
             "instructions quickly"),
    cl::init(0), cl::cat(category));
cl::opt<unsigned> optLevel("O",
                           cl::desc("LLVM optimization level of the JIT "
                                    "(0-3)"),
                           cl::init(2), cl::Prefix, cl::cat(category));
cl::opt<bool> useBlas("blas", cl::desc("Run matmuls through CBLAS"),
                      cl::init(true), cl::cat(category));
cl::opt<std::string>
    saveFile("save",
             cl::desc("After the last step, write the parameters and optimizer "
                      "state (safetensors; --params resumes from it)"),
             cl::value_desc("file"), cl::cat(category));
cl::opt<std::string>
    datasetFile("dataset",
                cl::desc("Train on a dataset: a safetensors file with one "
                         "tensor of N samples per input and label; each step "
                         "reads the next global batch (docs/epl-run.md)"),
                cl::value_desc("file"), cl::cat(category));
cl::opt<int> numEpochs("epochs",
                       cl::desc("With --dataset: epochs to train (default 1; "
                                "--steps counts steps instead)"),
                       cl::init(1), cl::cat(category));
cl::opt<bool> shuffle("shuffle",
                      cl::desc("With --dataset: visit the samples of each "
                               "epoch in a permutation drawn from --seed"),
                      cl::init(false), cl::cat(category));
cl::opt<std::string>
    evalDatasetFile("eval-dataset",
                    cl::desc("After training, evaluate the forward on this "
                             "dataset (loss, accuracy)"),
                    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string>
    evalModelFile("eval-model",
                  cl::desc("The forward to evaluate (default: the model "
                           "file): returns the loss, then the scores"),
                  cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> evalEntryName("eval-entry",
                                   cl::desc("Function of --eval-model to "
                                            "evaluate"),
                                   cl::value_desc("name"), cl::cat(category));
cl::opt<bool> evalEachEpoch("eval-each-epoch",
                            cl::desc("Evaluate after every epoch, not only "
                                     "after the last step"),
                            cl::init(false), cl::cat(category));
cl::opt<bool> noTrain("no-train",
                      cl::desc("Evaluate an L0 model's forward only, without "
                               "building its training step"),
                      cl::init(false), cl::cat(category));

/// The longest --timeout, in seconds: a year.
constexpr double kMaxTimeout = 365.0 * 24 * 3600;

[[noreturn]] void fail(const llvm::Twine &message) {
  llvm::errs() << "epl-run: error: " << message << "\n";
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
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  addVersionPrinter();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "epl-run: runs an EPL module on CPU ranks (threads or MPI)\n");

  RunOptions run;
  run.ranks.ranks = numRanks;
  run.ranks.timeoutSeconds = timeout;
  run.ranks.backend = backendKind.getNumOccurrences()
                          ? backendKind.getValue()
                          : (rt::launchedByMPI() ? rt::BackendKind::MPI
                                                 : rt::BackendKind::Threads);
  run.steps = numSteps;
  run.reportFile = reportFile;
  run.traceFile = traceFile;
  run.dumpFile = dumpFile;
  run.saveFile = saveFile;
  if (numRanks < 1)
    fail("--ranks must be at least 1");
  // NaN fails both comparisons; beyond a year, a deadline in nanoseconds
  // from now comes close to overflowing (9.2e9 s).
  if (!(timeout > 0) || !(timeout <= kMaxTimeout))
    fail("--timeout must be a positive number of seconds, at most " +
         llvm::Twine(static_cast<int64_t>(kMaxTimeout)) + " (a year)");
  if (optLevel > 3)
    fail("-O must be 0, 1, 2 or 3");
  if (codegenOpt > 3)
    fail("--codegen-opt must be 0, 1, 2 or 3");
  if (numSteps < 0)
    fail("--steps must not be negative");
  if (numEpochs < 0)
    fail("--epochs must not be negative");
  if (datasetFile.empty() &&
      (numEpochs.getNumOccurrences() || shuffle.getNumOccurrences()))
    fail("--epochs and --shuffle need --dataset");
  if (numEpochs.getNumOccurrences() && numSteps.getNumOccurrences())
    fail("--epochs and --steps both say how long to train; give one");
  if (evalDatasetFile.empty() &&
      (evalModelFile.getNumOccurrences() || evalEntryName.getNumOccurrences() ||
       evalEachEpoch.getNumOccurrences()))
    fail("--eval-model, --eval-entry and --eval-each-epoch need "
         "--eval-dataset");
  if (!datasetFile.empty() && noTrain)
    fail("--dataset trains; --no-train runs the forward once (use "
         "--eval-dataset to evaluate a forward on a dataset)");
  if (run.ranks.backend == rt::BackendKind::MPI && !rt::mpiAvailable())
    fail("this epl-run was built without MPI");
  std::string error;
  if (failed(checkOutputs(run, error)))
    fail(error);
  rt::injectFault("start", rt::launcherRank());

  CompileOptions compile;
  compile.entry = entryName;
  compile.train = !noTrain;
  compile.devices = numDevices(run.ranks);
  compile.blas = useBlas;
  compile.optLevel = optLevel;
  compile.codegenOptLevel = codegenOpt;
  compile.timing = showTiming;

  PhaseTimer timer(showTiming);
  SourceModule module;
  if (failed(module.parse(inputFile, timer, error)))
    return exitWith(error);
  FailureOr<Step> step = buildStep(module.get(), compile, timer, error);
  if (failed(step))
    return exitWith(error);
  if (failed(checkMeshes(step->program.meshes, run.ranks, error)))
    return exitWith(error);
  // Load and check every input before compiling or running anything.
  FailureOr<std::vector<HostTensor>> args =
      prepareArguments(step->program, {paramsFile, dataFile, seed}, error);
  if (failed(args))
    return exitWith(error);
  // The dataset and the evaluation are checked before anything compiles.
  FailureOr<Dataset> dataset = failure();
  if (!datasetFile.empty()) {
    dataset = openDataset(step->program, datasetFile, shuffle, seed, error);
    if (failed(dataset))
      return exitWith(error);
    run.dataset = &*dataset;
    if (!numSteps.getNumOccurrences())
      run.steps = numEpochs * static_cast<int>(dataset->batchesPerEpoch);
  }
  SourceModule evalModule;
  FailureOr<Step> evalStep = failure();
  FailureOr<Dataset> evalDataset = failure();
  CompileOptions evalCompile = compile;
  if (!evalDatasetFile.empty()) {
    PhaseTimer quiet(false);
    std::string evalPath = evalModelFile.empty() ? inputFile : evalModelFile;
    evalCompile.entry = evalEntryName;
    evalCompile.train = false;
    evalCompile.devices = 1;
    if (failed(evalModule.parse(evalPath, quiet, error)))
      return exitWith(error);
    evalStep = buildStep(evalModule.get(), evalCompile, quiet, error);
    if (failed(evalStep))
      return exitWith(error);
    if (failed(checkEvaluation(step->program, evalStep->program, error)))
      return exitWith(error);
    evalDataset = openDataset(evalStep->program, evalDatasetFile,
                              /*shuffle=*/false, seed, error);
    if (failed(evalDataset))
      return exitWith(error);
    run.evalDataset = &*evalDataset;
    run.evaluateEachEpoch = evalEachEpoch;
  }
  // gradient_checkpoint.check_gradients: the same step without
  // checkpointing, to compare the first step with.
  Config config = Config::get(module.get());
  OwningOpRef<ModuleOp> plainModule;
  FailureOr<LoadedProgram> plain = failure();
  if (compile.train && config.getBool("gradient_checkpoint.check_gradients") &&
      !config.getString("gradient_checkpoint.type").empty()) {
    plainModule = module.get().clone();
    NamedAttrList keys(module.get()->getAttrOfType<DictionaryAttr>(
        EPLDialect::kConfigAttrName));
    for (StringRef key :
         {"gradient_checkpoint.type", "gradient_checkpoint.memory_budget",
          "gradient_checkpoint.check_gradients"})
      keys.erase(key);
    plainModule->getOperation()->setAttr(
        EPLDialect::kConfigAttrName,
        keys.getDictionary(plainModule->getContext()));
    PhaseTimer quiet(false);
    FailureOr<Step> plainStep =
        buildStep(plainModule.get(), compile, quiet, error);
    if (failed(plainStep))
      return exitWith(error);
    plain = loadProgram(plainModule.get(), std::move(*plainStep), compile,
                        quiet, error);
    if (failed(plain))
      return exitWith(error);
    run.reference = &plain->program;
  }
  FailureOr<LoadedProgram> evaluation = failure();
  if (succeeded(evalStep)) {
    PhaseTimer quiet(false);
    evaluation = loadProgram(evalModule.get(), std::move(*evalStep),
                             evalCompile, quiet, error);
    if (failed(evaluation))
      return exitWith(error);
    run.evaluation = &evaluation->program;
  }
  FailureOr<LoadedProgram> loaded =
      loadProgram(module.get(), std::move(*step), compile, timer, error);
  if (failed(loaded))
    return exitWith(error);
  return runProgram(loaded->program, std::move(*args), run);
}
