//===- CommandLine.h - The options every runner takes -----------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// epl-run (the JIT) and epl-exec (ahead-of-time artifacts) run a step with
// the same options and outputs: ranks, backend, seed, parameter and data
// files, steps, report, trace, results dump, checkpoint, timeout, and
// datasets. They are declared once here; constructing a RunCommandLine (a
// DatasetCommandLine) registers them in the caller's category before it
// parses its command line. No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_COMMANDLINE_H
#define EPL_RUNNER_COMMANDLINE_H

#include "epl/Runner/Arguments.h"
#include "epl/Runner/Run.h"

#include "llvm/Support/CommandLine.h"

#include <optional>

namespace mlir::epl {

class RunCommandLine {
public:
  explicit RunCommandLine(llvm::cl::OptionCategory &category);

  /// The options as given, checked (ranks, timeout, steps, the MPI backend
  /// built in, the inputs regular files, every output path writable and
  /// none an input, `otherInputs` and `otherOutputs` (flag, path) of the
  /// tool's own included): fails with `error` before anything compiles or
  /// runs. `defaultRanks` is --ranks when not given.
  llvm::FailureOr<RunOptions>
  runOptions(std::string &error, int defaultRanks = 1,
             llvm::ArrayRef<std::string> otherInputs = {},
             llvm::ArrayRef<std::pair<std::string, std::string>> otherOutputs =
                 {}) const;
  ArgumentSources sources() const;

  llvm::cl::opt<int> ranks;
  llvm::cl::opt<::epl::rt::BackendKind> backend;
  llvm::cl::opt<::epl::rt::Options::GPUCollectives> gpuCollectives;
  llvm::cl::opt<bool> gpuTF32;
  llvm::cl::opt<uint64_t> seed;
  llvm::cl::opt<std::string> paramsFile;
  llvm::cl::opt<std::string> dataFile;
  llvm::cl::opt<int> steps;
  llvm::cl::opt<std::string> reportFile;
  llvm::cl::opt<std::string> traceFile;
  llvm::cl::opt<std::string> dumpFile;
  llvm::cl::opt<std::string> saveFile;
  llvm::cl::opt<double> timeout;
  llvm::cl::opt<int> threads;
};

/// Training on a dataset (--dataset, --epochs, --shuffle), the same in
/// epl-run and epl-exec: each step reads the next global batch.
class DatasetCommandLine {
public:
  explicit DatasetCommandLine(llvm::cl::OptionCategory &category);

  /// Fails with `error` on options that contradict each other or
  /// `runLine`'s (--epochs without --dataset, --epochs beside --steps,
  /// --data beside --dataset), before anything compiles or runs.
  llvm::LogicalResult check(const RunCommandLine &runLine,
                            std::string &error) const;
  /// With --dataset, opens it as `program`'s data into `dataset` (which
  /// must outlive the run) and points `run` at it; unless --steps was
  /// given, the run trains --epochs epochs. Without, does nothing.
  llvm::LogicalResult open(const Program &program,
                           const RunCommandLine &runLine, RunOptions &run,
                           std::optional<Dataset> &dataset,
                           std::string &error) const;

  llvm::cl::opt<std::string> file;
  llvm::cl::opt<int> epochs;
  llvm::cl::opt<bool> shuffle;
};

/// Evaluation options both runners take: --eval-dataset and
/// --eval-each-epoch. What to evaluate is each runner's own (epl-run
/// compiles the forward, epl-exec loads an artifact of it).
class EvalCommandLine {
public:
  explicit EvalCommandLine(llvm::cl::OptionCategory &category);

  /// Fails with `error` on --eval-each-epoch without --eval-dataset or
  /// without `datasetLine`'s --dataset (no epochs to evaluate after).
  llvm::LogicalResult check(const DatasetCommandLine &datasetLine,
                            std::string &error) const;
  /// With --eval-dataset, checks that `evaluation` evaluates what
  /// `trained` trains (checkEvaluation), opens the dataset as its data into
  /// `dataset` (which must outlive the run) and points `run` at it; the
  /// caller points `run.evaluation` at the loaded forward.
  llvm::LogicalResult open(const Program &trained, const Program &evaluation,
                           const RunCommandLine &runLine, RunOptions &run,
                           std::optional<Dataset> &dataset,
                           std::string &error) const;

  llvm::cl::opt<std::string> file;
  llvm::cl::opt<bool> eachEpoch;
};

/// Fails, naming it, when an option was given more than once: the command
/// line parser lets the last occurrence win (`--params a --params b`
/// trained from b), which a run must not guess at; lists may repeat. Also
/// when a text option (a file name) was given empty, which would read as
/// not given.
llvm::LogicalResult checkOptionsGivenOnce(std::string &error);

} // namespace mlir::epl

#endif // EPL_RUNNER_COMMANDLINE_H
