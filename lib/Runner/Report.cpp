//===- Report.cpp - What a run prints and writes --------------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/Report.h"
#include "epl/Runner/Shards.h"
#include "epl/Support/Safetensors.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

using namespace mlir::epl;
namespace rt = ::epl::rt;
namespace json = llvm::json;

/// A step's loss as the digits that give it back: 9 for an f32 value, 17
/// for an f64 one (whose last digits 9 dropped); -0 as 0. (Means over
/// steps and batches keep 9.)
static std::string lossText(double loss) {
  char text[40];
  double value = loss == 0 ? 0.0 : loss;
  std::snprintf(text, sizeof(text),
                static_cast<double>(static_cast<float>(value)) == value ||
                        !std::isfinite(value)
                    ? "%.9g"
                    : "%.17g",
                value);
  return text;
}

void mlir::epl::printStep(const StepRecord &s) {
  if (s.loss)
    std::printf("step %d loss %s time_ms %.3f", s.step,
                lossText(*s.loss).c_str(), s.timeMs);
  else
    std::printf("step %d time_ms %.3f", s.step, s.timeMs);
  if (s.samplesPerSecond)
    std::printf(" samples_per_s %.1f", *s.samplesPerSecond);
  std::printf("\n");
  std::fflush(stdout);
}

void mlir::epl::printEpoch(const EpochRecord &e) {
  std::printf("epoch %d", e.epoch);
  if (e.meanLoss)
    std::printf(" mean_loss %.9g", *e.meanLoss);
  std::printf(" samples_per_s %.1f steps %d\n", e.samplesPerSecond, e.steps);
  std::fflush(stdout);
}

void mlir::epl::printEvaluation(const EvalRecord &e) {
  std::printf("eval");
  if (e.loss)
    std::printf(" loss %.9g", *e.loss);
  if (e.accuracy)
    std::printf(" accuracy %.6f", *e.accuracy);
  std::printf(" samples %lld\n", static_cast<long long>(e.samples));
  std::fflush(stdout);
}

void mlir::epl::printSummary(const Program &program, int numSteps,
                             const std::vector<StepRecord> &steps,
                             const char *backend,
                             const std::vector<RankReport> &ranks) {
  double total = 0;
  for (const StepRecord &s : steps)
    total += s.timeMs;
  int64_t peak = 0;
  std::optional<int64_t> estimated;
  for (const RankReport &r : ranks) {
    peak = std::max(peak, r.peakBytes);
    if (r.estimatedPeakBytes)
      estimated = std::max(estimated.value_or(0), *r.estimatedPeakBytes);
  }
  int n = static_cast<int>(ranks.size());
  std::printf("%s: %d step%s of @%s on %d rank%s (%s): mean step %.3f "
              "ms, peak memory %.2f MiB per rank",
              ::epl::rt::toolName().c_str(), numSteps, numSteps == 1 ? "" : "s",
              program.name.c_str(), n, n == 1 ? "" : "s", backend,
              steps.empty() ? 0.0 : total / steps.size(),
              peak / (1024.0 * 1024.0));
  if (estimated)
    std::printf(" (estimated %.2f MiB)", *estimated / (1024.0 * 1024.0));
  std::printf("\n");
  if (program.isPipelined())
    for (auto [rank, r] : llvm::enumerate(ranks)) {
      std::printf("rank %zu (stage %d): busy %.3f ms, wait %.3f ms, ", rank,
                  r.stage, r.busyMs, r.waitMs);
      if (r.bubble)
        std::printf("bubble %.3f, ", *r.bubble);
      std::printf("peak %.2f MiB, p2p sent %.1f KiB, received %.1f KiB",
                  r.peakBytes / (1024.0 * 1024.0), r.p2pSentBytes / 1024.0,
                  r.p2pReceivedBytes / 1024.0);
      if (r.estimatedPeakBytes)
        std::printf(", estimated peak %.2f MiB",
                    *r.estimatedPeakBytes / (1024.0 * 1024.0));
      std::printf("\n");
    }
  // Memory held between steps and communication per step: rank 0's, or
  // each stage's first rank's.
  for (auto [rank, r] : llvm::enumerate(ranks)) {
    if (rank != 0 && r.stage == ranks[rank - 1].stage)
      continue;
    std::printf("rank %zu: parameters %.1f KiB, optimizer state %.1f KiB, "
                "gradients %.1f KiB",
                rank, r.paramBytes / 1024.0, r.optStateBytes / 1024.0,
                r.gradBytes / 1024.0);
    if (!r.communication.empty()) {
      std::printf("; per step sent (ring)");
      for (const auto &[kind, c] : r.communication)
        std::printf(" %s %.1f KiB", kind.c_str(), c.trafficBytes / 1024.0);
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

/// Writes `value` to `path` as JSON, atomically: to a temporary file, then
/// renamed, as the safetensors files.
static void writeJSON(const std::string &path, json::Value value) {
  if (llvm::Error e = writeFileAtomically(path, [&](llvm::raw_ostream &os) {
        os << llvm::formatv("{0:2}", value) << "\n";
      }))
    rt::fatalError(llvm::toString(std::move(e)));
}

static json::Array collectivesJSON(const rt::RankStats &stats,
                                   const std::vector<MeshInfo> &meshes) {
  json::Array collectives;
  for (const auto &[key, stat] : stats.collectives) {
    json::Array axes;
    std::string mesh = "?";
    if (key.meshId >= 0 && key.meshId < static_cast<int64_t>(meshes.size())) {
      mesh = meshes[key.meshId].name;
      for (int64_t a : key.axes)
        axes.push_back(meshes[key.meshId].axes[a]);
    }
    collectives.push_back(json::Object{{"kind", key.kind},
                                       {"mesh", mesh},
                                       {"axes", std::move(axes)},
                                       {"group_size", key.groupSize},
                                       {"bytes", stat.bytes},
                                       {"traffic_bytes", stat.trafficBytes},
                                       {"count", stat.count}});
  }
  return collectives;
}

/// `x`, or null where it is not a finite number (a diverged run's loss):
/// JSON has no NaN or infinity, and a reader would refuse the report.
static json::Value finiteOrNull(double x) {
  return std::isfinite(x) ? json::Value(x) : json::Value(nullptr);
}

void mlir::epl::writeReport(const std::string &path,
                            const std::vector<StepRecord> &steps,
                            const char *backend, bool gpu,
                            const std::vector<RankReport> &ranks,
                            const rt::RankStats &stats,
                            const std::vector<MeshInfo> &meshes) {
  json::Array stepArray;
  for (const StepRecord &s : steps) {
    json::Object o{
        {"step", s.step}, {"time_ms", s.timeMs}, {"page_faults", s.pageFaults}};
    if (s.loss)
      o["loss"] = finiteOrNull(*s.loss);
    if (s.samplesPerSecond)
      o["samples_per_s"] = finiteOrNull(*s.samplesPerSecond);
    stepArray.push_back(std::move(o));
  }
  json::Array peakArray, rankArray;
  for (const RankReport &r : ranks) {
    peakArray.push_back(r.peakBytes);
    json::Object communication;
    for (const auto &[kind, c] : r.communication)
      communication[kind] =
          json::Object{{"count_per_step", c.count},
                       {"bytes_per_step", c.bytes},
                       {"traffic_bytes_per_step", c.trafficBytes}};
    rankArray.push_back(json::Object{
        {"param_bytes", r.paramBytes},
        {"opt_state_bytes", r.optStateBytes},
        {"grad_bytes", r.gradBytes},
        {"host_bytes", r.hostBytes},
        {"communication", std::move(communication)},
        {"stage", r.stage},
        {"busy_ms", r.busyMs},
        {"wait_ms", r.waitMs},
        {"bubble", r.bubble ? json::Value(*r.bubble) : json::Value(nullptr)},
        {"peak_bytes", r.peakBytes},
        {"estimated_peak_bytes", r.estimatedPeakBytes
                                     ? json::Value(*r.estimatedPeakBytes)
                                     : json::Value(nullptr)},
        {"threads", r.threads},
        {"p2p_sent_bytes", r.p2pSentBytes},
        {"p2p_received_bytes", r.p2pReceivedBytes}});
  }
  writeJSON(path,
            json::Object{
                {"steps", std::move(stepArray)},
                {"ranks", static_cast<int64_t>(ranks.size())},
                {"backend", backend},
                {"gpu", gpu},
                {"gpu_collectives", gpu ? json::Value(rt::gpuCollectivesUsed())
                                        : json::Value(nullptr)},
                {"gemm", gpu ? "cublas" : rt::gemmLibrary()},
                {"peak_bytes", std::move(peakArray)},
                {"per_rank", std::move(rankArray)},
                {"collectives", collectivesJSON(stats, meshes)}});
}

/// An action's slice is named by its phase's letter (as in the pipeline
/// papers: F, B for the input gradient, W for the weight gradient) and its
/// micro-batch.
static std::pair<char, const char *> phaseNames(int32_t phase) {
  switch (phase) {
  case EPL_RT_FORWARD:
    return {'F', "forward"};
  case EPL_RT_BACKWARD_INPUT:
    return {'B', "backward_input"};
  case EPL_RT_BACKWARD_WEIGHT:
    return {'W', "backward_weight"};
  }
  return {'?', "unknown"};
}

void mlir::epl::writeTrace(const std::string &path, const Program &program,
                           const std::vector<std::vector<rt::Event>> &events) {
  // Microseconds from the earliest event, so that numbers stay readable.
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const auto &rank : events)
    for (const rt::Event &e : rank)
      origin = std::min(origin, e.begin);
  json::Array trace;
  for (auto [rank, rankEvents] : llvm::enumerate(events)) {
    int tid = static_cast<int>(rank);
    std::string thread = "rank " + std::to_string(rank);
    if (program.isPipelined())
      thread += " (stage " + std::to_string(program.stageOf(tid)) + ")";
    trace.push_back(json::Object{{"name", "thread_name"},
                                 {"ph", "M"},
                                 {"pid", 0},
                                 {"tid", tid},
                                 {"args", json::Object{{"name", thread}}}});
    for (const rt::Event &e : rankEvents) {
      std::string name;
      json::Object args;
      switch (e.kind) {
      case rt::Event::Kind::Action: {
        auto [letter, phase] = phaseNames(e.phase);
        name = letter + std::to_string(e.microBatch);
        args = json::Object{{"phase", phase},
                            {"micro_batch", e.microBatch},
                            {"stage", e.stage}};
        break;
      }
      case rt::Event::Kind::Send:
        name = "send";
        args = json::Object{{"to", e.peer}, {"tag", e.tag}, {"bytes", e.bytes}};
        break;
      case rt::Event::Kind::RecvWait:
        name = "recv wait";
        args =
            json::Object{{"from", e.peer}, {"tag", e.tag}, {"bytes", e.bytes}};
        break;
      }
      trace.push_back(json::Object{{"name", name},
                                   {"ph", "X"},
                                   {"pid", 0},
                                   {"tid", tid},
                                   {"ts", (e.begin - origin) / 1000.0},
                                   {"dur", (e.end - e.begin) / 1000.0},
                                   {"args", std::move(args)}});
    }
  }
  writeJSON(path, json::Object{{"traceEvents", std::move(trace)},
                               {"displayTimeUnit", "ms"}});
}

void mlir::epl::writeResults(const std::string &path, const Program &program,
                             const std::vector<std::vector<RankParts>> &parts,
                             int ranks) {
  SafetensorsFile out;
  out.metadata["entry"] = program.name;
  out.metadata["ranks"] = std::to_string(ranks);
  const MeshInfo &mesh =
      program.meshes.empty() ? MeshInfo() : program.meshes[program.mesh];
  for (auto [s, stage] : llvm::enumerate(program.stages)) {
    std::vector<int> stageRanks = program.ranksOf(s, ranks);
    for (auto [i, er] : llvm::enumerate(stage.entry.results)) {
      HostTensor like;
      like.name = (program.isPipelined() ? "stage" + std::to_string(s) + "/"
                                         : std::string()) +
                  "result" + std::to_string(i);
      like.dtype = *er.dtype;
      if (!er.shard.isWhole()) {
        // A shard per rank: the dump holds the global value.
        out.tensors.push_back(assembleShards(like, er.shape, er.shard, mesh,
                                             parts[s][i], stageRanks));
        continue;
      }
      for (int rank : stageRanks) {
        HostTensor t = like;
        if (rank != stageRanks.front())
          t.name = "rank" + std::to_string(rank) + "/" + like.name;
        t.shape = er.shape;
        t.data = parts[s][i][rank];
        out.tensors.push_back(std::move(t));
      }
    }
  }
  if (llvm::Error e = writeSafetensors(path, out))
    rt::fatalError(llvm::toString(std::move(e)));
}

void mlir::epl::writeCheckpoint(
    const std::string &path, const std::string &entry,
    std::vector<HostTensor> tensors,
    const std::map<std::string, std::string> &metadata) {
  SafetensorsFile checkpoint;
  checkpoint.metadata = metadata;
  checkpoint.metadata["format"] = "epl-checkpoint";
  checkpoint.metadata["entry"] = entry;
  // In name order: the file does not depend on how the step was split
  // into stages, so a pipelined run's checkpoint is the 1-rank run's.
  llvm::sort(tensors, [](const HostTensor &a, const HostTensor &b) {
    return a.name < b.name;
  });
  checkpoint.tensors = std::move(tensors);
  if (llvm::Error e = writeSafetensors(path, checkpoint))
    rt::fatalError(llvm::toString(std::move(e)));
}
