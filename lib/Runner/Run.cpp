//===- Run.cpp - Running a compiled step on every rank --------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/Run.h"
#include "epl/Runner/Shards.h"

#include <chrono>
#include <cstring>

using namespace mlir::epl;
namespace rt = ::epl::rt;

namespace {
/// A ranked memref descriptor over `data` (see Runtime.h).
std::vector<int64_t> descriptorOf(void *data,
                                  const std::vector<int64_t> &shape) {
  std::vector<int64_t> d = {reinterpret_cast<int64_t>(data),
                            reinterpret_cast<int64_t>(data), 0};
  d.insert(d.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}

std::optional<double> scalarLoss(const HostTensor &t) {
  if (!t.shape.empty())
    return std::nullopt;
  if (t.dtype == DType::F32) {
    float v;
    std::memcpy(&v, t.data.data(), 4);
    return v;
  }
  if (t.dtype == DType::F64) {
    double v;
    std::memcpy(&v, t.data.data(), 8);
    return v;
  }
  return std::nullopt;
}

template <typename T> std::vector<char> bytesOf(const std::vector<T> &v) {
  const char *p = reinterpret_cast<const char *>(v.data());
  return std::vector<char>(p, p + v.size() * sizeof(T));
}
template <typename T> std::vector<T> valuesOf(const std::vector<char> &b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

/// Training steps feed their new parameters and optimizer state back into
/// the arguments of the same name before the next step: (result, argument)
/// pairs.
std::vector<std::pair<size_t, size_t>> feedbackOf(const EntryPoint &entry) {
  std::vector<std::pair<size_t, size_t>> feedback;
  for (size_t r = 0; r < entry.results.size(); ++r) {
    const EntryResult &result = entry.results[r];
    if (result.kind != ResultKind::Param && result.kind != ResultKind::OptState)
      continue;
    ArgKind wanted =
        result.kind == ResultKind::Param ? ArgKind::Param : ArgKind::OptState;
    for (size_t a = 0; a < entry.args.size(); ++a)
      if (entry.args[a].kind == wanted && entry.args[a].name == result.name)
        feedback.push_back({r, a});
  }
  return feedback;
}

/// One rank's buffers of a call: its arguments, result buffers, and the
/// packed descriptors of both for the entry's C interface.
class RankCall {
public:
  /// Without feedback and shards, arguments are read-only and ranks share
  /// the host copies (`global`); otherwise a rank owns its shard.
  RankCall(const Program &program, std::vector<HostTensor> &global,
           bool ownArgs, const MeshInfo &mesh, int rank)
      : program(program), args(ownArgs ? owned : global) {
    if (ownArgs)
      for (size_t a = 0; a < global.size(); ++a)
        owned.push_back(
            sliceShard(global[a], program.entry.args[a].shard, mesh, rank));
    for (const EntryResult &er : program.entry.results) {
      HostTensor r;
      r.name = er.name;
      r.dtype = *er.dtype;
      r.shape = er.localShape;
      r.data.assign(r.numElements() * dtypeSize(r.dtype), 0);
      results.push_back(std::move(r));
    }
    for (HostTensor &a : args)
      descriptors.push_back(descriptorOf(a.data.data(), a.shape));
    for (HostTensor &r : results)
      descriptors.push_back(descriptorOf(r.data.data(), r.shape));
    for (auto &d : descriptors)
      descriptorPtrs.push_back(d.data());
    for (void *&p : descriptorPtrs)
      packed.push_back(&p);
  }
  RankCall(const RankCall &) = delete;

  void operator()() { program.call(packed.data()); }

  const Program &program;
  /// What this rank passes: `owned`, or the shared global arguments.
  std::vector<HostTensor> &args;
  std::vector<HostTensor> results;

private:
  std::vector<HostTensor> owned;
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<void *> descriptorPtrs;
  std::vector<void *> packed;
};

std::vector<StepRecord>
runSteps(RankCall &call, const std::vector<std::pair<size_t, size_t>> &feedback,
         int numSteps, int rank) {
  std::vector<StepRecord> steps;
  for (int step = 1; step <= numSteps; ++step) {
    auto start = std::chrono::steady_clock::now();
    call();
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    std::optional<double> loss =
        call.results.empty() ? std::nullopt : scalarLoss(call.results[0]);
    steps.push_back({step, loss, ms});
    for (auto [r, a] : feedback)
      std::memcpy(call.args[a].data.data(), call.results[r].data.data(),
                  call.results[r].data.size());
    if (rank == 0)
      printStep(steps.back());
  }
  return steps;
}

/// After the last step: every rank takes part in the gathers, then rank 0
/// prints the summary and writes the files.
void finishRun(RankCall &call, const std::vector<StepRecord> &steps,
               const RunOptions &options, const MeshInfo &mesh, int rank) {
  const EntryPoint &entry = call.program.entry;
  std::vector<int64_t> peaks;
  for (auto &b : rt::allGatherBytes(
           bytesOf(std::vector<int64_t>{rt::currentStats().peakBytes})))
    peaks.push_back(valuesOf<int64_t>(b)[0]);
  std::vector<std::vector<std::vector<char>>> allResults(call.results.size());
  if (!options.dumpFile.empty())
    for (size_t i = 0; i < call.results.size(); ++i)
      allResults[i] = rt::allGatherBytes(call.results[i].data);
  // Checkpoints hold global values: put the shards back together.
  std::vector<HostTensor> saved;
  if (!options.saveFile.empty())
    for (size_t a = 0; a < entry.args.size(); ++a) {
      const EntryArg &arg = entry.args[a];
      if (arg.kind == ArgKind::Param || arg.kind == ArgKind::OptState)
        saved.push_back(assembleShards(call.args[a], arg.shape, arg.shard, mesh,
                                       rt::allGatherBytes(call.args[a].data)));
    }
  // Results are named after what they hold in a training step; dumps keep
  // positional names so that every result is there exactly once.
  for (size_t i = 0; i < call.results.size(); ++i)
    call.results[i].name = "result" + std::to_string(i);
  if (rank != 0)
    return;

  int ranks = rt::worldSize();
  const char *backend = backendName(options.ranks.backend);
  printSummary(entry.name, options.steps, steps, ranks, backend, peaks);
  if (!options.reportFile.empty())
    writeReport(options.reportFile, steps, ranks, backend, peaks,
                rt::currentStats(), call.program.meshes);
  if (!options.dumpFile.empty())
    writeResults(options.dumpFile, entry, call.results, allResults, mesh,
                 ranks);
  if (!options.saveFile.empty())
    writeCheckpoint(options.saveFile, entry.name, std::move(saved));
}
} // namespace

int mlir::epl::numDevices(const rt::Options &options) {
  return options.backend == rt::BackendKind::MPI ? rt::launcherWorldSize()
                                                 : options.ranks;
}

const char *mlir::epl::backendName(rt::BackendKind backend) {
  return backend == rt::BackendKind::MPI ? "mpi" : "threads";
}

llvm::LogicalResult mlir::epl::checkMeshes(const std::vector<MeshInfo> &meshes,
                                           const rt::Options &options,
                                           std::string &error) {
  if (options.backend != rt::BackendKind::Threads)
    return llvm::success();
  for (const MeshInfo &mesh : meshes) {
    // Only meshes the program communicates on need every device.
    if (!mesh.communicates || mesh.numDevices() == options.ranks)
      continue;
    std::string devices = std::to_string(mesh.numDevices());
    error = "mesh @" + mesh.name + " has " + devices +
            " devices but the run has " + std::to_string(options.ranks) +
            " rank(s); pass --ranks " + devices;
    return llvm::failure();
  }
  return llvm::success();
}

int mlir::epl::runProgram(const Program &program, std::vector<HostTensor> args,
                          const RunOptions &options) {
  std::vector<rt::MeshName> meshNames;
  for (const MeshInfo &m : program.meshes)
    meshNames.push_back({m.name, m.axes});
  rt::setMeshNames(std::move(meshNames));

  std::vector<std::pair<size_t, size_t>> feedback = feedbackOf(program.entry);
  // Shards are cut from the global values; whole arguments are shared while
  // read-only, copied when training updates them.
  bool sharded =
      std::any_of(program.entry.args.begin(), program.entry.args.end(),
                  [](const EntryArg &a) { return !a.shard.isWhole(); });
  MeshInfo mesh = program.meshes.empty() ? MeshInfo() : program.meshes.front();
  rt::runRanks(options.ranks, [&](int rank) {
    RankCall call(program, args, !feedback.empty() || sharded, mesh, rank);
    std::vector<StepRecord> steps =
        runSteps(call, feedback, options.steps, rank);
    rt::finishProgram();
    finishRun(call, steps, options, mesh, rank);
  });
  return 0;
}
