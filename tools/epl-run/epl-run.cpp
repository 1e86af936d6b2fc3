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
#include "epl/Runner/CommandLine.h"
#include "epl/Runner/Compile.h"
#include "epl/Runner/Dataset.h"
#include "epl/Runner/Notes.h"
#include "epl/Runner/Run.h"
#include "epl/Runtime/Backend.h"
#include "epl/Support/Signals.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/TargetSelect.h"

#include <csignal>

using namespace mlir;
using namespace mlir::epl;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory category("epl-run options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::Required, cl::cat(category));
// What to evaluate (epl-run's own: it compiles the forward;
// docs/epl-run.md); the rest of the evaluation is EvalCommandLine's.
cl::opt<std::string>
    evalModelFile("eval-model",
                  cl::desc("The forward to evaluate (default: the model "
                           "file): returns the loss, then the scores"),
                  cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> evalEntryName("eval-entry",
                                   cl::desc("Function of --eval-model to "
                                            "evaluate"),
                                   cl::value_desc("name"), cl::cat(category));
cl::opt<std::string>
    dumpObject("dump-object",
               cl::desc("Write the JIT-compiled step's machine code as an "
                        "object file (to inspect it: llvm-objdump -d)"),
               cl::value_desc("file.o"), cl::cat(category));

[[noreturn]] void fail(const llvm::Twine &message) {
  // One write: under mpirun every rank may fail at once, into one stream.
  llvm::errs() << ("epl-run: error: " + message + "\n").str();
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
  // A reader of the step lines that goes away (`| head`) must not end the
  // run before its checkpoint is written: printing fails quietly instead.
  std::signal(SIGPIPE, SIG_IGN);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  addVersionPrinter();
  // The options epl-run shares with epl-exec and with epl-compile.
  RunCommandLine runLine(category);
  DatasetCommandLine datasetLine(category);
  EvalCommandLine evalLine(category);
  CompileCommandLine compileLine(category);
  CompileCommandLine::addPassManagerOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "epl-run: runs an EPL module on CPU or GPU ranks (threads or MPI)\n");

  std::string error;
  if (failed(checkOptionsGivenOnce(error)))
    fail(error);
  FailureOr<CompileOptions> compileOrFailure =
      compileLine.compileOptions(error);
  if (failed(compileOrFailure))
    fail(error);
  CompileOptions compile = *compileOrFailure;
  compile.objectDumpPath = dumpObject;
  std::vector<std::string> inputs = {inputFile, evalModelFile};
  for (const std::string &spec :
       {datasetLine.file.getValue(), evalLine.file.getValue()})
    llvm::append_range(inputs, datasetFiles(spec));
  std::vector<std::pair<std::string, std::string>> outputs;
  if (!dumpObject.empty())
    outputs.push_back({"--dump-object", dumpObject});
  FailureOr<RunOptions> runOrFailure =
      runLine.runOptions(error, 1, inputs, outputs);
  if (failed(runOrFailure))
    fail(error);
  RunOptions run = std::move(*runOrFailure);
  compile.devices = numDevices(run.ranks);
  for (cl::Option *gpuOption :
       {static_cast<cl::Option *>(&runLine.gpuCollectives),
        static_cast<cl::Option *>(&runLine.gpuTF32)})
    if (gpuOption->getNumOccurrences() && compile.target != Target::CUDA)
      fail("--" + gpuOption->ArgStr.str() +
           " is for GPU ranks; give --target cuda");
  if (compile.target == Target::CUDA) {
    // The driver starts once the program is known (gpusAvailableFor).
    if (!::epl::rt::gpuDriverFound(error))
      fail("--target cuda: " + error);
    run.ranks.cuda = true;
  }
  if (failed(datasetLine.check(runLine, error)))
    fail(error);
  if (evalLine.file.empty() &&
      (evalModelFile.getNumOccurrences() || evalEntryName.getNumOccurrences()))
    fail("--eval-model and --eval-entry need --eval-dataset");
  if (failed(evalLine.check(datasetLine, error)))
    fail(error);

  PhaseTimer timer(compile.timing);
  SourceModule module;
  if (failed(module.parse(inputFile, timer, error)))
    return exitWith(error);
  FailureOr<Step> step = buildStep(module.get(), compile, timer, error);
  if (failed(step))
    return exitWith(error);
  if (run.ranks.cuda && !gpusAvailableFor(step->program, run.ranks, error))
    return exitWith("--target cuda: " + error);
  if (failed(checkMeshes(step->program.meshes, run.ranks, error)))
    return exitWith(error);
  // Load and check every input before compiling or running anything.
  FailureOr<std::vector<HostTensor>> args =
      prepareArguments(step->program, runLine.sources(), error);
  if (failed(args))
    return exitWith(error);
  // The dataset and the evaluation are checked before anything compiles.
  std::optional<Dataset> dataset;
  if (failed(datasetLine.open(step->program, runLine, run, dataset, error)))
    return exitWith(error);
  SourceModule evalModule;
  FailureOr<Step> evalStep = failure();
  std::optional<Dataset> evalDataset;
  CompileOptions evalCompile = compile;
  if (!evalLine.file.empty()) {
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
    if (failed(evalLine.open(step->program, evalStep->program, runLine, run,
                             evalDataset, error)))
      return exitWith(error);
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
