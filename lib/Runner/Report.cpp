//===- Report.cpp - What a run prints and writes --------------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/Report.h"
#include "epl/Runner/Shards.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>

using namespace mlir::epl;
namespace rt = ::epl::rt;
namespace json = llvm::json;

void mlir::epl::printStep(const StepRecord &s) {
  if (s.loss)
    std::printf("step %d loss %.9g time_ms %.3f\n", s.step, *s.loss, s.timeMs);
  else
    std::printf("step %d time_ms %.3f\n", s.step, s.timeMs);
  std::fflush(stdout);
}

void mlir::epl::printSummary(const std::string &entry, int numSteps,
                             const std::vector<StepRecord> &steps, int ranks,
                             const char *backend,
                             const std::vector<int64_t> &peakBytes) {
  double total = 0;
  for (const StepRecord &s : steps)
    total += s.timeMs;
  int64_t peak = *std::max_element(peakBytes.begin(), peakBytes.end());
  std::printf("epl-run: %d step%s of @%s on %d rank%s (%s): mean step %.3f "
              "ms, peak memory %.2f MiB per rank\n",
              numSteps, numSteps == 1 ? "" : "s", entry.c_str(), ranks,
              ranks == 1 ? "" : "s", backend,
              steps.empty() ? 0.0 : total / steps.size(),
              peak / (1024.0 * 1024.0));
  std::fflush(stdout);
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
                                       {"count", stat.count}});
  }
  return collectives;
}

void mlir::epl::writeReport(const std::string &path,
                            const std::vector<StepRecord> &steps, int ranks,
                            const char *backend,
                            const std::vector<int64_t> &peakBytes,
                            const rt::RankStats &stats,
                            const std::vector<MeshInfo> &meshes) {
  json::Array stepArray;
  for (const StepRecord &s : steps) {
    json::Object o{{"step", s.step}, {"time_ms", s.timeMs}};
    if (s.loss)
      o["loss"] = *s.loss;
    stepArray.push_back(std::move(o));
  }
  json::Array peakArray;
  for (int64_t p : peakBytes)
    peakArray.push_back(p);
  json::Object report{{"steps", std::move(stepArray)},
                      {"ranks", ranks},
                      {"backend", backend},
                      {"peak_bytes", std::move(peakArray)},
                      {"collectives", collectivesJSON(stats, meshes)}};
  // Same discipline as the safetensors files: write, then rename.
  std::string temp = path + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(temp, ec);
    if (ec)
      rt::fatalError("cannot write " + path + ": " + ec.message());
    os << llvm::formatv("{0:2}", json::Value(std::move(report))) << "\n";
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0)
    rt::fatalError("cannot write " + path);
}

void mlir::epl::writeResults(
    const std::string &path, const EntryPoint &entry,
    const std::vector<HostTensor> &results,
    const std::vector<std::vector<std::vector<char>>> &allResults,
    const MeshInfo &mesh, int ranks) {
  SafetensorsFile out;
  out.metadata["entry"] = entry.name;
  out.metadata["ranks"] = std::to_string(ranks);
  for (size_t i = 0; i < results.size(); ++i) {
    const HostTensor &r = results[i];
    const EntryResult &er = entry.results[i];
    if (!er.shard.isWhole()) {
      // A shard per rank: the dump holds the global value.
      out.tensors.push_back(
          assembleShards(r, er.shape, er.shard, mesh, allResults[i]));
      continue;
    }
    out.tensors.push_back(r);
    for (int other = 1; other < ranks; ++other) {
      HostTensor t = r;
      t.name = "rank" + std::to_string(other) + "/" + r.name;
      t.data = allResults[i][other];
      out.tensors.push_back(std::move(t));
    }
  }
  if (llvm::Error e = writeSafetensors(path, out))
    rt::fatalError(llvm::toString(std::move(e)));
}

void mlir::epl::writeCheckpoint(const std::string &path,
                                const std::string &entry,
                                std::vector<HostTensor> tensors) {
  SafetensorsFile checkpoint;
  checkpoint.metadata["format"] = "epl-checkpoint";
  checkpoint.metadata["entry"] = entry;
  checkpoint.tensors = std::move(tensors);
  if (llvm::Error e = writeSafetensors(path, checkpoint))
    rt::fatalError(llvm::toString(std::move(e)));
}
