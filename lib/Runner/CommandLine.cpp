//===- CommandLine.cpp - The options every runner takes -------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/CommandLine.h"
#include "epl/Runner/Notes.h"
#include "epl/Runtime/Backend.h"
#include "epl/Support/Safetensors.h"

#include <limits>

using namespace mlir::epl;
namespace cl = llvm::cl;
namespace rt = ::epl::rt;

/// The longest --timeout, in seconds: a year.
static constexpr double kMaxTimeout = 365.0 * 24 * 3600;

/// Whether the safetensors file at `path` holds some of `program`'s
/// optimizer state (an unreadable file is reported with the parameters).
static bool holdsOptimizerState(const Program &program,
                                const std::string &path) {
  auto names = readSafetensorsNames(path);
  if (!names) {
    llvm::consumeError(names.takeError());
    return false;
  }
  return llvm::any_of(program.args, [&](const EntryArg &arg) {
    return arg.kind == ArgKind::OptState &&
           llvm::is_contained(*names, arg.name);
  });
}

RunCommandLine::RunCommandLine(cl::OptionCategory &category)
    : ranks("ranks", cl::desc("Ranks for the threads backend"), cl::init(1),
            cl::cat(category)),
      backend("backend",
              cl::desc("Communication backend (default: mpi under an MPI "
                       "launcher, else threads)"),
              cl::values(clEnumValN(rt::BackendKind::Threads, "threads",
                                    "N ranks as threads of this process"),
                         clEnumValN(rt::BackendKind::MPI, "mpi",
                                    "one rank per process (mpirun)")),
              cl::cat(category)),
      gpuCollectives(
          "gpu-collectives",
          cl::desc("How GPU ranks communicate (--target cuda)"),
          cl::values(
              clEnumValN(rt::Options::GPUCollectives::Auto, "auto",
                         "NCCL where each rank has a GPU of its own, else "
                         "host (default)"),
              clEnumValN(rt::Options::GPUCollectives::NCCL, "nccl",
                         "NCCL on the device buffers"),
              clEnumValN(rt::Options::GPUCollectives::Host, "host",
                         "staged through host memory over the backend")),
          cl::init(rt::Options::GPUCollectives::Auto), cl::cat(category)),
      gpuTF32("gpu-tf32",
              cl::desc("fp32 GEMMs on GPUs in TF32 (tensor cores; inputs "
                       "rounded to 10 bits of mantissa) instead of full "
                       "fp32 (--target cuda)"),
              cl::init(false), cl::cat(category)),
      seed("seed", cl::desc("Seed of parameters and data"), cl::init(0),
           cl::cat(category)),
      paramsFile("params", cl::desc("Parameters by name (safetensors)"),
                 cl::value_desc("file"), cl::cat(category)),
      dataFile("data", cl::desc("Inputs and labels by name (safetensors)"),
               cl::value_desc("file"), cl::cat(category)),
      steps("steps", cl::desc("Steps to run"), cl::init(1), cl::cat(category)),
      reportFile("report", cl::desc("Write a JSON report"),
                 cl::value_desc("file"), cl::cat(category)),
      traceFile("trace",
                cl::desc("Write a Chrome trace (Perfetto): a row per rank, a "
                         "slice per pipeline action, send and receive wait"),
                cl::value_desc("file"), cl::cat(category)),
      dumpFile("dump-results",
               cl::desc("Write the entry's results (safetensors)"),
               cl::value_desc("file"), cl::cat(category)),
      saveFile("save",
               cl::desc("After the last step, write the parameters, model "
                        "state and optimizer state (safetensors; --params "
                        "resumes from it)"),
               cl::value_desc("file"), cl::cat(category)),
      timeout("timeout",
              cl::desc("Seconds a rank waits for its peers in one operation "
                       "(on a GPU, also for its GPU to finish the work it "
                       "was given) before the run fails"),
              cl::init(120), cl::cat(category)),
      threads("threads-per-rank",
              cl::desc("Threads of each rank for large loop kernels and "
                       "GEMMs; default: the cores with one rank, else 1"),
              cl::init(0), cl::cat(category)) {}

llvm::FailureOr<RunOptions> RunCommandLine::runOptions(
    std::string &error, int defaultRanks,
    llvm::ArrayRef<std::string> otherInputs,
    llvm::ArrayRef<std::pair<std::string, std::string>> otherOutputs) const {
  RunOptions run;
  run.ranks.ranks = ranks.getNumOccurrences() ? ranks : defaultRanks;
  run.ranks.timeoutSeconds = timeout;
  run.ranks.backend = backend.getNumOccurrences()
                          ? backend.getValue()
                          : (rt::launchedByMPI() ? rt::BackendKind::MPI
                                                 : rt::BackendKind::Threads);
  quietProcess() =
      run.ranks.backend == rt::BackendKind::MPI && rt::launcherRank() != 0;
  run.ranks.gpuCollectives = gpuCollectives;
  run.ranks.gpuTF32 = gpuTF32;
  run.ranks.threadsPerRank = threads;
  run.steps = steps;
  run.reportFile = reportFile;
  run.traceFile = traceFile;
  run.dumpFile = dumpFile;
  run.saveFile = saveFile;
  auto fail = [&](const std::string &message) {
    error = message;
    return llvm::failure();
  };
  if (run.ranks.ranks < 1)
    return fail("--ranks must be at least 1");
  // NaN fails both comparisons; beyond a year, a deadline in nanoseconds
  // from now comes close to overflowing (9.2e9 s).
  if (!(timeout > 0) || !(timeout <= kMaxTimeout))
    return fail("--timeout must be a positive number of seconds, at most " +
                std::to_string(static_cast<int64_t>(kMaxTimeout)) +
                " (a year)");
  if (steps < 0)
    return fail("--steps must not be negative");
  if (steps == 0 && !dumpFile.empty())
    return fail("--dump-results writes the last step's results; --steps 0 "
                "runs none");
  // Each rank of the threads backend is a thread with its own buffers.
  if (run.ranks.backend == rt::BackendKind::Threads && run.ranks.ranks > 4096)
    return fail("--ranks must be at most 4096 (threads of one process; use "
                "mpirun for more)");
  if (threads.getNumOccurrences() && (threads < 1 || threads > 1024))
    return fail("--threads-per-rank must be between 1 and 1024");
  if (run.ranks.backend == rt::BackendKind::MPI && !rt::mpiAvailable())
    return fail("this runner was built without MPI");
  // Under MPI the processes are the ranks: another count would be ignored.
  if (run.ranks.backend == rt::BackendKind::MPI && ranks.getNumOccurrences() &&
      ranks != rt::launcherWorldSize())
    return fail("--ranks " + std::to_string(ranks) + " is not the " +
                std::to_string(rt::launcherWorldSize()) +
                " process(es) the MPI launcher started, which are the "
                "ranks; drop --ranks or start as many");
  std::vector<std::string> inputs(otherInputs.begin(), otherInputs.end());
  inputs.push_back(paramsFile);
  inputs.push_back(dataFile);
  if (failed(checkInputs(inputs, error)) ||
      failed(checkOutputs(run, inputs, otherOutputs, error)))
    return llvm::failure();
  rt::injectFault("start", rt::launcherRank());
  return run;
}

ArgumentSources RunCommandLine::sources() const {
  return {paramsFile, dataFile, seed};
}

EvalCommandLine::EvalCommandLine(cl::OptionCategory &category)
    : file("eval-dataset",
           cl::desc("After training, evaluate the forward on this dataset "
                    "(loss, accuracy)"),
           cl::value_desc("file"), cl::cat(category)),
      eachEpoch("eval-each-epoch",
                cl::desc("Evaluate after every epoch, not only after the "
                         "last step"),
                cl::init(false), cl::cat(category)) {}

llvm::LogicalResult
EvalCommandLine::check(const DatasetCommandLine &datasetLine,
                       std::string &error) const {
  if (eachEpoch && file.empty()) {
    error = "--eval-each-epoch needs --eval-dataset";
    return llvm::failure();
  }
  // Without a dataset there are no epochs to evaluate after.
  if (eachEpoch && datasetLine.file.empty()) {
    error = "--eval-each-epoch needs --dataset (it evaluates after each "
            "epoch of it)";
    return llvm::failure();
  }
  return llvm::success();
}

llvm::LogicalResult EvalCommandLine::open(const Program &trained,
                                          const Program &evaluation,
                                          const RunCommandLine &runLine,
                                          RunOptions &run,
                                          std::optional<Dataset> &dataset,
                                          std::string &error) const {
  if (file.empty())
    return llvm::success();
  if (failed(checkEvaluation(trained, evaluation, error)))
    return llvm::failure();
  llvm::FailureOr<Dataset> opened =
      openDataset(evaluation, file, /*shuffle=*/false, runLine.seed, error);
  if (failed(opened))
    return llvm::failure();
  dataset = std::move(*opened);
  // Evaluating by whole batches leaves the last samples out: said, since
  // the accuracy is then over fewer samples than the file holds.
  if (int64_t left = dataset->numSamples % dataset->batchSize)
    notes() << ::epl::rt::toolName() << ": warning: the last " << left
            << " of the " << dataset->numSamples << " samples of "
            << file.getValue() << " fill no batch of " << dataset->batchSize
            << " and are not evaluated\n";
  run.evalDataset = &*dataset;
  run.evaluateEachEpoch = eachEpoch;
  return llvm::success();
}

DatasetCommandLine::DatasetCommandLine(cl::OptionCategory &category)
    : file("dataset",
           cl::desc("Train on a dataset: a safetensors file with one tensor "
                    "of N samples per input and label, or NAME=FILE.npy "
                    "pairs separated by commas; each step reads the next "
                    "global batch (docs/epl-run.md)"),
           cl::value_desc("file"), cl::cat(category)),
      epochs("epochs",
             cl::desc("With --dataset: train until this many epochs are "
                      "done, counting a --params checkpoint's (default 1; "
                      "--steps counts steps instead)"),
             cl::init(1), cl::cat(category)),
      shuffle("shuffle",
              cl::desc("With --dataset: visit the samples of each epoch in "
                       "a permutation drawn from --seed"),
              cl::init(false), cl::cat(category)) {}

llvm::LogicalResult DatasetCommandLine::check(const RunCommandLine &runLine,
                                              std::string &error) const {
  auto fail = [&](const char *message) {
    error = message;
    return llvm::failure();
  };
  if (epochs < 0)
    return fail("--epochs must not be negative");
  if (file.empty() && (epochs.getNumOccurrences() || shuffle))
    return fail("--epochs and --shuffle need --dataset");
  if (epochs.getNumOccurrences() && runLine.steps.getNumOccurrences())
    return fail("--epochs and --steps both say how long to train; give one");
  // The data file would be read and then ignored.
  if (!file.empty() && !runLine.dataFile.empty())
    return fail(
        "--data and --dataset both give the inputs and labels; give one");
  return llvm::success();
}

llvm::LogicalResult DatasetCommandLine::open(const Program &program,
                                             const RunCommandLine &runLine,
                                             RunOptions &run,
                                             std::optional<Dataset> &dataset,
                                             std::string &error) const {
  if (file.empty()) {
    // A checkpoint of a run on a dataset, resumed without one, trains on
    // seeded inputs: allowed (as any run without data), but said.
    if (!runLine.paramsFile.empty() && runLine.dataFile.empty()) {
      if (auto metadata = readSafetensorsMetadata(runLine.paramsFile)) {
        auto batches = metadata->find("dataset.batches");
        if (batches != metadata->end())
          notes() << ::epl::rt::toolName() << ": warning: the checkpoint "
                  << runLine.paramsFile << " was trained on a dataset ("
                  << batches->second
                  << (batches->second == "1" ? " batch" : " batches")
                  << " of it read); without --dataset or --data this run "
                     "trains on generated inputs\n";
      } else {
        llvm::consumeError(metadata.takeError());
      }
    }
    return llvm::success();
  }
  // A forward (an artifact of epl-compile --no-train) would run each batch
  // and learn nothing.
  bool trains = llvm::any_of(program.stages, [](const Stage &stage) {
    return llvm::any_of(stage.entry.results, [](const EntryResult &r) {
      return r.kind == ResultKind::Param;
    });
  });
  if (!trains) {
    error = "--dataset trains, but @" + program.name +
            " updates no parameter (a forward, as --no-train compiles; "
            "--eval-dataset evaluates a forward on a dataset)";
    return llvm::failure();
  }
  llvm::FailureOr<Dataset> opened =
      openDataset(program, file, shuffle, runLine.seed, error);
  if (failed(opened))
    return llvm::failure();
  dataset = std::move(*opened);
  run.dataset = &*dataset;
  // A checkpoint of a run on this dataset goes on where that run stopped
  // (a file that cannot be read is reported with the parameters).
  if (!runLine.paramsFile.empty()) {
    if (auto metadata = readSafetensorsMetadata(runLine.paramsFile)) {
      std::string note;
      bool mismatch = false;
      dataset->resumeFrom(*metadata, note, mismatch);
      if (note.empty() && !metadata->count("dataset.batches") &&
          holdsOptimizerState(program, runLine.paramsFile)) {
        // Training on with its optimizer state but from the first batch is
        // what a copy of a checkpoint that lost its metadata does: say so.
        mismatch = true;
        note = runLine.paramsFile +
               " holds optimizer state but no position in a dataset (a "
               "checkpoint of a run on no dataset, or a copy without the "
               "checkpoint's metadata): this run starts at the dataset's "
               "first batch";
      }
      if (!note.empty())
        notes() << ::epl::rt::toolName() << (mismatch ? ": warning: " : ": ")
                << note << "\n";
    } else {
      llvm::consumeError(metadata.takeError());
    }
  }
  if (!runLine.steps.getNumOccurrences()) {
    // --epochs counts the checkpoint's epochs too: it trains until that
    // many are done.
    int64_t steps = static_cast<int64_t>(epochs) *
                        static_cast<int64_t>(dataset->batchesPerEpoch) -
                    dataset->start;
    if (steps > std::numeric_limits<int>::max()) {
      error = "--epochs " + std::to_string(epochs) + " of " +
              std::to_string(dataset->batchesPerEpoch) +
              " steps each are more steps than a run takes";
      return llvm::failure();
    }
    // Without a checkpoint, --epochs 0 runs no step as --steps 0 does; with
    // one that has done the epochs asked for, a run that trains nothing is
    // more likely a mistake (--epochs counted as more epochs) than meant.
    if (dataset->start > 0 && steps <= 0) {
      error = "--epochs " + std::to_string(epochs) +
              (epochs.getNumOccurrences() ? "" : " (the default)") +
              ": the checkpoint has done those epochs; it read " +
              std::to_string(dataset->start) + " batches of " +
              std::to_string(dataset->batchesPerEpoch) +
              " per epoch; give more epochs, or --steps for more steps";
      return llvm::failure();
    }
    run.steps = static_cast<int>(steps);
    if (run.steps == 0 && !run.dumpFile.empty()) {
      error = "--dump-results writes the last step's results; --epochs " +
              std::to_string(epochs) + " runs none";
      return llvm::failure();
    }
  }
  return llvm::success();
}

llvm::LogicalResult mlir::epl::checkOptionsGivenOnce(std::string &error) {
  const auto &options = cl::getRegisteredOptions();
  for (const auto &[name, option] : options) {
    if (name != option->ArgStr || !option->getNumOccurrences())
      continue;
    // As the user wrote it: -o, --params.
    std::string flagName =
        (option->ArgStr.size() == 1 ? "-" : "--") + option->ArgStr.str();
    // A file name given empty (`--save "$CKPT"` with CKPT unset) would read
    // as the option not given: the run would train from random
    // parameters and save nothing.
    if (auto *text = dynamic_cast<cl::opt<std::string> *>(option);
        text && text->getValue().empty()) {
      error = flagName +
              " is given an empty value; give it a value, or leave it out";
      return llvm::failure();
    }
    cl::NumOccurrencesFlag flag = option->getNumOccurrencesFlag();
    if (option->getNumOccurrences() <= 1 ||
        (flag != cl::Optional && flag != cl::Required))
      continue;
    // An alias's occurrences count for its option and not for itself:
    // `--ranks 2 --devices 4` gives epl-compile's --devices twice. cl::alias
    // has no getter for what it aliases; ours say so in their description.
    std::string alias;
    std::string aliasHelp = "Alias for --" + option->ArgStr.str();
    for (const auto &[other, o] : options)
      if (o != option && o->HelpStr == aliasHelp)
        alias =
            " (--" + other.str() + " counts as --" + option->ArgStr.str() + ")";
    error = flagName + " is given " +
            std::to_string(option->getNumOccurrences()) + " times" + alias +
            "; give it once";
    return llvm::failure();
  }
  return llvm::success();
}
