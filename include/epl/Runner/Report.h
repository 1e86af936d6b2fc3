//===- Report.h - What a run prints and writes ------------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// The lines a run prints (one per step, then a summary) and the files it
// writes: the JSON report, the Chrome trace, the dump of the entry's results
// and the checkpoint. Every file is written atomically (to a temporary file,
// then renamed); a file that cannot be written ends the run
// (rt::fatalError). docs/epl-run.md describes the formats.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_REPORT_H
#define EPL_RUNNER_REPORT_H

#include "epl/Runner/Program.h"
#include "epl/Runtime/Backend.h"

#include <map>

namespace mlir::epl {

/// What one rank did in one step, from the runtime's events.
struct StepActivity {
  /// Time in pipeline actions, and blocked in receives.
  double busyMs = 0, waitMs = 0;
  /// Steady-clock nanoseconds from the first action's start to the last
  /// one's end; both 0 when the step ran no action.
  int64_t firstBegin = 0, lastEnd = 0;
};

/// One step on one rank.
struct StepRecord {
  int step;
  /// The loss (EntryPoint::lossResult) when it is a scalar float.
  std::optional<double> loss;
  double timeMs;
  StepActivity activity;
  /// Samples of the global batch per second of `timeMs`, when the step
  /// read a batch of a dataset.
  std::optional<double> samplesPerSecond;
  /// Page faults the rank's thread took during the step (minor and major):
  /// near zero once the runtime's buffers are reused instead of returned to
  /// the OS and faulted back in, zero-filled.
  int64_t pageFaults = 0;
};

/// What an epoch over a dataset did (printed by rank 0).
struct EpochRecord {
  int epoch;
  int steps;
  /// The mean of the steps' losses, when they have one.
  std::optional<double> meanLoss;
  /// Samples trained on per second of the epoch's wall time (steps and
  /// the copying of their batches).
  double samplesPerSecond;
};

/// An evaluation over a dataset.
struct EvalRecord {
  /// The mean of the batches' losses, when the entry returns one.
  std::optional<double> loss;
  /// The fraction of samples whose highest score is their label's class,
  /// when the entry returns scores.
  std::optional<double> accuracy;
  int64_t samples = 0;
};

/// What one rank measured over the run.
struct RankReport {
  int stage = 0;
  /// Threads the rank ran its split kernels on (`--threads-per-rank`).
  int64_t threads = 1;
  int64_t peakBytes = 0;
  /// The static estimate of peakBytes (Stage::estimatedPeakBytes).
  std::optional<int64_t> estimatedPeakBytes;
  /// Point-to-point payload.
  int64_t p2pSentBytes = 0, p2pReceivedBytes = 0;
  /// What the step holds on this rank between steps (its arguments and
  /// results by kind): parameters, optimizer state, and the gradients the
  /// updates read.
  int64_t paramBytes = 0, optStateBytes = 0, gradBytes = 0;
  /// The buffers the runner holds for the rank's calls: its arguments, and
  /// the result buffers of the results not updated in place.
  int64_t hostBytes = 0;
  /// Collectives per step by kind ("all_reduce", ...): calls, input bytes
  /// and ring traffic (see rt::CollectiveStat).
  struct Communication {
    double count = 0, bytes = 0, trafficBytes = 0;
  };
  std::map<std::string, Communication> communication;
  /// Means over the steps.
  double busyMs = 0, waitMs = 0;
  /// The mean over steps of 1 - busy / span, where a step's span runs from
  /// the first action's start to the last action's end over all ranks;
  /// std::nullopt when no step ran an action.
  std::optional<double> bubble;
};

/// "step <k> loss <value> time_ms <t>", or without the loss; with
/// " samples_per_s <s>" at the end when the step read a dataset.
void printStep(const StepRecord &step);

/// "epoch <e> mean_loss <x> samples_per_s <s> steps <k>".
void printEpoch(const EpochRecord &epoch);

/// "eval loss <x> accuracy <a> samples <n>" (without what it lacks).
void printEvaluation(const EvalRecord &eval);

/// "epl-run: <n> steps of @<name> on <r> ranks (<backend>): mean step ...,
/// peak memory ... per rank", then for a pipelined program a line per rank.
/// `backend` says where the ranks ran ("threads"; "threads, on GPUs,
/// collectives over NCCL").
void printSummary(const Program &program, int numSteps,
                  const std::vector<StepRecord> &steps, const char *backend,
                  const std::vector<RankReport> &ranks);

/// The JSON report: steps, ranks, backend, whether the ranks ran on GPUs
/// (then the GEMM library is cuBLAS, and how their collectives went), what
/// each rank measured and what rank 0 communicated (`stats`), with mesh and
/// axis names from `meshes`.
void writeReport(const std::string &path, const std::vector<StepRecord> &steps,
                 const char *backend, bool gpu,
                 const std::vector<RankReport> &ranks,
                 const ::epl::rt::RankStats &stats,
                 const std::vector<MeshInfo> &meshes);

/// A Chrome trace (Perfetto opens it) of every rank's `events`.
void writeTrace(const std::string &path, const Program &program,
                const std::vector<std::vector<::epl::rt::Event>> &events);

/// The bytes of one value on every rank, indexed by rank.
using RankParts = std::vector<std::vector<char>>;

/// The results of every stage: `parts[s][i]`, result i of stage s on every
/// rank (meaningful on the ranks of stage s). A sharded result is put back
/// together; of a whole one, the stage's first rank's is written as
/// `result<i>`, every other's as `rank<r>/result<i>`. Pipelined programs
/// prefix each name with `stage<s>/`.
void writeResults(const std::string &path, const Program &program,
                  const std::vector<std::vector<RankParts>> &parts, int ranks);

/// A checkpoint of global `tensors` (parameters and optimizer state), which
/// a parameters file of a later run resumes from; `metadata` adds to its
/// header (a dataset's position, Dataset::position).
void writeCheckpoint(const std::string &path, const std::string &entry,
                     std::vector<HostTensor> tensors,
                     const std::map<std::string, std::string> &metadata = {});

} // namespace mlir::epl

#endif // EPL_RUNNER_REPORT_H
