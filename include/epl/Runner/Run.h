//===- Run.h - Running a compiled step on every rank ------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// The run loop shared by every runner: each rank runs its stage's function
// (every rank the one function, unless pipelined). It cuts the rank's
// shards of the arguments its stage takes from the global arguments, packs
// them with result buffers for the function's C interface, calls it, feeds
// a training step's new parameters and optimizer state back into its
// arguments, and at the end prints the summary and writes the report, the
// trace, the results dump and the checkpoint (Report.h). No MLIR: a Program
// is all it needs.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_RUN_H
#define EPL_RUNNER_RUN_H

#include "epl/Runner/Dataset.h"
#include "epl/Runner/Program.h"
#include "epl/Runner/Report.h"
#include "epl/Runtime/Backend.h"

#include "llvm/Support/LogicalResult.h"

namespace mlir::epl {

struct RunOptions {
  /// Backend, ranks and timeout.
  ::epl::rt::Options ranks;
  int steps = 1;
  /// Where to write the JSON report, the Chrome trace, the results and the
  /// checkpoint after the last step; empty: not written.
  std::string reportFile;
  std::string traceFile;
  std::string dumpFile;
  std::string saveFile;
  /// gradient_checkpoint.check_gradients: the same step without gradient
  /// checkpointing. Before training, every rank runs one step of each on
  /// the same arguments; the run fails unless their results (loss, new
  /// parameters and optimizer state, all functions of the gradients) agree
  /// within `checkTolerance`, relative.
  const Program *reference = nullptr;
  double checkTolerance = 1e-5;
  /// Training data (Dataset.h): step k reads the next global batch of it,
  /// epoch after epoch (each rank its shard), and rank 0 prints a line per
  /// epoch. Null: every step reads the same arguments.
  const Dataset *dataset = nullptr;
  /// Evaluation: after the last step (and, with `evaluateEachEpoch`, after
  /// each epoch of `dataset`), the forward `evaluation` (checkEvaluation)
  /// runs on every batch of `evalDataset` with the trained parameters, the
  /// batches dealt round-robin to the ranks; rank 0 prints the mean loss
  /// and the accuracy (scoresResult).
  const Program *evaluation = nullptr;
  const Dataset *evalDataset = nullptr;
  bool evaluateEachEpoch = false;
};

/// Checks that output `path` (of option `flag`, "--save") may be written
/// whole and renamed over: it is no directory, pipe or device, and not the
/// run's own standard output or error; its links end (no loop). `file`,
/// when given, gets the file the links name, which is what is written.
llvm::LogicalResult checkOutputFile(llvm::StringRef flag, llvm::StringRef path,
                                    std::string &error,
                                    llvm::SmallString<256> *file = nullptr);

/// Checks that each file `options` names, and each of `otherOutputs`
/// (flag, path: a tool's own, epl-run's --dump-object), can be written (by
/// creating and removing a temporary file next to it) and is not a
/// directory, and that no two name the same file, nor any of them one of
/// `inputs` (the model or artifact, parameters, data, each file of a
/// dataset), so that a bad path fails before anything runs and no input is
/// overwritten.
llvm::LogicalResult
checkOutputs(const RunOptions &options, llvm::ArrayRef<std::string> inputs,
             llvm::ArrayRef<std::pair<std::string, std::string>> otherOutputs,
             std::string &error);

/// Whether paths `a` and `b` name one file (which need not exist yet).
bool sameFile(llvm::StringRef a, llvm::StringRef b);

/// Checks that each of `inputs` that is given is a regular file (not a
/// directory or a device such as /dev/zero, which would be read without
/// end).
llvm::LogicalResult checkInputs(llvm::ArrayRef<std::string> inputs,
                                std::string &error);

/// How many devices a run with `options` has: the launcher's processes
/// under MPI, else the threads.
int numDevices(const ::epl::rt::Options &options);

/// "threads" or "mpi".
const char *backendName(::epl::rt::BackendKind backend);

/// Checks that every mesh a program communicates on has one device per
/// rank of a threads run (under MPI the runtime checks against the
/// launcher).
llvm::LogicalResult checkMeshes(const std::vector<MeshInfo> &meshes,
                                const ::epl::rt::Options &options,
                                std::string &error);

/// Whether GPU ranks can run `program` here (epl::rt::gpuAvailable):
/// the driver starts, loading every kernel eagerly where the program's
/// channels go over NCCL; else `error` says why.
bool gpusAvailableFor(const Program &program, const ::epl::rt::Options &ranks,
                      std::string &error);

/// Runs `options.steps` steps of `program` from the global `args`
/// (Arguments.h, in the order of `program.args`) on every rank. Rank 0
/// prints a line per step (with the loss from the stage that returns it)
/// and the summary, and writes the files `options` asks for. Returns the
/// exit code.
int runProgram(const Program &program, std::vector<HostTensor> args,
               const RunOptions &options);

} // namespace mlir::epl

#endif // EPL_RUNNER_RUN_H
