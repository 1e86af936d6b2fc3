//===- Report.h - What a run prints and writes ------------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// The lines a run prints (one per step, then a summary) and the files it
// writes: the JSON report, the dump of the entry's results and the
// checkpoint. Every file is written atomically (to a temporary file, then
// renamed); a file that cannot be written ends the run (rt::fatalError).
// docs/epl-run.md describes the formats.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_REPORT_H
#define EPL_RUNNER_REPORT_H

#include "epl/Runner/Program.h"
#include "epl/Runtime/Backend.h"

namespace mlir::epl {

/// One step on one rank.
struct StepRecord {
  int step;
  /// The first result when it is a scalar float (a training step's loss).
  std::optional<double> loss;
  double timeMs;
};

/// "step <k> loss <value> time_ms <t>", or without the loss.
void printStep(const StepRecord &step);

/// "epl-run: <n> steps of @<entry> on <r> ranks (<backend>): mean step ...,
/// peak memory ... per rank".
void printSummary(const std::string &entry, int numSteps,
                  const std::vector<StepRecord> &steps, int ranks,
                  const char *backend, const std::vector<int64_t> &peakBytes);

/// The JSON report: steps, ranks, backend, peak memory per rank and what
/// rank 0 communicated (`stats`), with mesh and axis names from `meshes`.
void writeReport(const std::string &path, const std::vector<StepRecord> &steps,
                 int ranks, const char *backend,
                 const std::vector<int64_t> &peakBytes,
                 const ::epl::rt::RankStats &stats,
                 const std::vector<MeshInfo> &meshes);

/// The entry's results: `results` are rank 0's (named `result<i>`),
/// `allResults[i]` the bytes of result i on every rank. A sharded result
/// is put back together; a whole one is written as rank 0's `result<i>`
/// and every other rank's `rank<r>/result<i>`.
void writeResults(const std::string &path, const EntryPoint &entry,
                  const std::vector<HostTensor> &results,
                  const std::vector<std::vector<std::vector<char>>> &allResults,
                  const MeshInfo &mesh, int ranks);

/// A checkpoint of global `tensors` (parameters and optimizer state), which
/// a parameters file of a later run resumes from.
void writeCheckpoint(const std::string &path, const std::string &entry,
                     std::vector<HostTensor> tensors);

} // namespace mlir::epl

#endif // EPL_RUNNER_REPORT_H
