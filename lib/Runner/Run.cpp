//===- Run.cpp - Running a compiled step on every rank --------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/Run.h"
#include "epl/Runner/Artifact.h"
#include "epl/Runner/Shards.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <set>
#include <sys/resource.h>

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
  if (!v.empty())
    std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

/// Training steps feed their new parameters, model state and optimizer
/// state back into the arguments of the same name before the next step:
/// (result, argument) pairs.
std::vector<std::pair<size_t, size_t>> feedbackOf(const EntryPoint &entry) {
  std::vector<std::pair<size_t, size_t>> feedback;
  for (size_t r = 0; r < entry.results.size(); ++r) {
    const EntryResult &result = entry.results[r];
    ArgKind wanted;
    if (result.kind == ResultKind::Param)
      wanted = ArgKind::Param;
    else if (result.kind == ResultKind::State)
      wanted = ArgKind::State;
    else if (result.kind == ResultKind::OptState)
      wanted = ArgKind::OptState;
    else
      continue;
    for (size_t a = 0; a < entry.args.size(); ++a)
      if (entry.args[a].kind == wanted && entry.args[a].name == result.name)
        feedback.push_back({r, a});
  }
  return feedback;
}

/// One rank's buffers of a call of its stage: its arguments, result
/// buffers, and the packed descriptors of both for the C interface.
class RankCall {
public:
  /// Without feedback and shards, arguments are read-only and ranks share
  /// the host copies (`global`); otherwise a rank owns its shard.
  RankCall(const Stage &stage, std::vector<HostTensor> &global, bool ownArgs,
           const MeshInfo &mesh, int rank)
      : stage(stage) {
    // A stage that updates in place writes over its arguments whatever
    // buffers it is given (epl-tie-in-place-arguments): never the shared
    // host copies.
    ownArgs |= !stage.inPlace.empty();
    for (size_t a = 0; a < stage.argIndices.size(); ++a)
      if (ownArgs)
        owned.push_back(sliceShard(global[stage.argIndices[a]],
                                   stage.entry.args[a].shard, mesh, rank));
    for (size_t a = 0; a < stage.argIndices.size(); ++a)
      args.push_back(ownArgs ? &owned[a] : &global[stage.argIndices[a]]);
    // A result updated in place is written over its argument.
    for (auto [r, a] : stage.inPlace)
      inPlace[r] = a;
    for (auto [r, er] : llvm::enumerate(stage.entry.results)) {
      HostTensor t;
      t.name = er.name;
      t.dtype = *er.dtype;
      t.shape = er.localShape;
      if (!inPlace.count(r))
        t.data.assign(t.numElements() * dtypeSize(t.dtype), 0);
      results.push_back(std::move(t));
    }
    for (HostTensor *a : args)
      descriptors.push_back(descriptorOf(a->data.data(), a->shape));
    for (auto [r, t] : llvm::enumerate(results))
      descriptors.push_back(descriptorOf(
          inPlace.count(r) ? args[inPlace[r]]->data.data() : t.data.data(),
          t.shape));
    // On a GPU, what the steps copy in and out each call is pinned (EPL's
    // offload keeps parameters and optimizer state in pinned host memory);
    // not what stays on the device between calls.
    for (auto [a, t] : llvm::enumerate(owned))
      if (!stage.residentInPlace ||
          llvm::none_of(stage.inPlace,
                        [&, a = a](auto pair) { return pair.second == a; }))
        pin(t.data);
    for (auto [r, t] : llvm::enumerate(results))
      if (!inPlace.count(r))
        pin(t.data);
    for (auto &d : descriptors)
      descriptorPtrs.push_back(d.data());
    for (void *&p : descriptorPtrs)
      packed.push_back(&p);
  }
  RankCall(const RankCall &) = delete;
  ~RankCall() {
    releaseDeviceCopies();
    for (void *p : pinned)
      rt::unpinHostBuffer(p);
  }

  /// Frees the device copies of this call's buffers (epl_rt_resident_buffer):
  /// they go with the buffers.
  void releaseDeviceCopies() {
    for (HostTensor &t : owned)
      rt::releaseResidentBuffers(t.data.data(), t.data.data() + t.data.size());
  }

  void operator()() {
    stage.call(packed.data());
    // Its updates may still run on a GPU when no result was copied back (a
    // pipeline stage's step updates in place only): the step ends there.
    rt::synchronizeDevice();
    hostStale = true;
  }

  /// The bytes of result `r` after a call.
  const std::vector<char> &resultData(size_t r) const {
    syncHost();
    auto it = inPlace.find(r);
    return it == inPlace.end() ? results[r].data : args[it->second]->data;
  }

  /// Whether result `r` is written over its argument `a` (nothing to copy
  /// back).
  bool updatesInPlace(size_t r, size_t a) const {
    auto it = inPlace.find(r);
    return it != inPlace.end() && it->second == a;
  }

  /// This rank's value of the step's argument `index` (Program::args), or
  /// null when its stage does not take it.
  const HostTensor *arg(size_t index) const {
    syncHost();
    auto it = llvm::find(stage.argIndices, index);
    return it == stage.argIndices.end() ? nullptr
                                        : args[it - stage.argIndices.begin()];
  }

  const Stage &stage;
  /// What this rank passes: `owned`, or the shared global arguments.
  std::vector<HostTensor *> args;
  std::vector<HostTensor> results;

private:
  /// On a GPU, parameters and optimizer state updated in place stay on the
  /// device between calls: their host buffers are read after a copy back.
  void syncHost() const {
    if (hostStale)
      rt::syncResidentBuffers();
    hostStale = false;
  }

  void pin(std::vector<char> &data) {
    if (!data.empty() && rt::pinHostBuffer(data.data(), data.size()))
      pinned.push_back(data.data());
  }

  mutable bool hostStale = false;
  std::vector<void *> pinned;
  std::vector<HostTensor> owned;
  /// Results written over an argument: result -> argument.
  std::map<size_t, size_t> inPlace;
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<void *> descriptorPtrs;
  std::vector<void *> packed;
};

/// The first rank whose stage returns the loss (the last stage of a
/// pipeline); 0 when none does.
int lossRankOf(const Program &program, int worldSize) {
  for (int r = 0; r < worldSize; ++r)
    if (program.stages[program.stageOf(r)].entry.lossResult())
      return r;
  return 0;
}

/// Sums up the actions and receive waits of one step.
StepActivity activityOf(const std::vector<rt::Event> &events) {
  StepActivity activity;
  auto ms = [](const rt::Event &e) { return (e.end - e.begin) * 1e-6; };
  for (const rt::Event &e : events) {
    if (e.kind == rt::Event::Kind::RecvWait)
      activity.waitMs += ms(e);
    if (e.kind != rt::Event::Kind::Action)
      continue;
    activity.busyMs += ms(e);
    if (activity.lastEnd == 0)
      activity.firstBegin = e.begin;
    activity.lastEnd = e.end;
  }
  return activity;
}

/// The global value of every parameter and model state (and, with
/// `withState`, optimizer state) of `program`, put back together from the
/// shards of the stage that owns it. Every rank takes part, in the same
/// order.
std::vector<HostTensor> gatherParameters(const Program &program,
                                         const RankCall &call,
                                         const MeshInfo &mesh, bool withState) {
  std::vector<HostTensor> values;
  for (auto [a, arg] : llvm::enumerate(program.args)) {
    if (arg.kind != ArgKind::Param && arg.kind != ArgKind::State &&
        (!withState || arg.kind != ArgKind::OptState))
      continue;
    const HostTensor *value = call.arg(a);
    RankParts parts =
        rt::allGatherBytes(value ? value->data : std::vector<char>());
    int owner = 0;
    while (!llvm::is_contained(program.stages[owner].argIndices, a))
      ++owner;
    HostTensor like;
    like.name = arg.name;
    like.dtype = *arg.dtype;
    values.push_back(assembleShards(like, arg.shape, arg.shard, mesh, parts,
                                    program.ranksOf(owner, rt::worldSize())));
  }
  return values;
}

/// The class of row `row` of `t` ([B, C] floats: its highest entry, the
/// first of ties; [B] integers: the value).
int64_t classOf(const HostTensor &t, const std::vector<char> &data,
                int64_t row) {
  if (t.shape.size() == 1) {
    if (t.dtype == DType::I32)
      return reinterpret_cast<const int32_t *>(data.data())[row];
    if (t.dtype == DType::I64)
      return reinterpret_cast<const int64_t *>(data.data())[row];
    return -1;
  }
  int64_t classes = t.shape[1], best = 0;
  auto argmax = [&](auto *values) {
    for (int64_t c = 1; c < classes; ++c)
      if (values[row * classes + c] > values[row * classes + best])
        best = c;
  };
  if (t.dtype == DType::F32)
    argmax(reinterpret_cast<const float *>(data.data()));
  else if (t.dtype == DType::F64)
    argmax(reinterpret_cast<const double *>(data.data()));
  else
    return -1;
  return best;
}

/// RunOptions::evaluation over every batch of RunOptions::evalDataset with
/// the trained parameters `trained` (global, by name); batch b runs on
/// rank b mod ranks. Rank 0 prints the result.
void evaluate(const RunOptions &options, const std::vector<HostTensor> &trained,
              int rank) {
  const Program &program = *options.evaluation;
  const Dataset &data = *options.evalDataset;
  const Stage &stage = program.stages.front();
  std::vector<HostTensor> args;
  for (const EntryArg &arg : program.args) {
    auto it = llvm::find_if(
        trained, [&](const HostTensor &t) { return t.name == arg.name; });
    if (it != trained.end() &&
        (arg.kind == ArgKind::Param || arg.kind == ArgKind::State)) {
      args.push_back(*it);
      continue;
    }
    HostTensor t;
    t.name = arg.name;
    t.dtype = *arg.dtype;
    t.shape = arg.shape;
    t.data.assign(t.numElements() * dtypeSize(t.dtype), 0);
    args.push_back(std::move(t));
  }
  RankCall call(stage, args, /*ownArgs=*/true, MeshInfo(), rank);
  std::optional<size_t> lossResult = stage.entry.lossResult();
  std::optional<size_t> scores = scoresResult(stage.entry, data.batchSize);
  // The label the scores are compared with: the first the dataset feeds.
  std::optional<size_t> label;
  for (auto [a, arg] : llvm::enumerate(stage.entry.args))
    if (!label && arg.kind == ArgKind::Label)
      label = a;
  // Summed loss, batches with a loss, correct samples, samples.
  std::vector<double> totals(4, 0);
  std::vector<int64_t> order = data.order(0);
  int ranks = rt::worldSize();
  for (int64_t b = rank; b < data.batchesPerEpoch; b += ranks) {
    for (auto [a, index] : llvm::enumerate(stage.argIndices))
      if (data.feeds.count(index))
        fillBatch(data, index, program.args[index], order, b, MeshInfo(), rank,
                  *call.args[a]);
    // The evaluation reads the file in order: the samples name the rows of
    // a bad label.
    rt::setCurrentWork("evaluation batch " + std::to_string(b + 1) + " of " +
                       std::to_string(data.batchesPerEpoch) + " (samples " +
                       std::to_string(b * data.batchSize) + " to " +
                       std::to_string((b + 1) * data.batchSize - 1) + " of " +
                       data.path + ")");
    call();
    rt::setCurrentWork("");
    if (lossResult)
      if (std::optional<double> loss = scalarLoss(call.results[*lossResult])) {
        totals[0] += *loss;
        totals[1] += 1;
      }
    if (scores && label)
      for (int64_t row = 0; row < data.batchSize; ++row)
        totals[2] +=
            classOf(call.results[*scores], call.resultData(*scores), row) ==
            classOf(*call.args[*label], call.args[*label]->data, row);
    totals[3] += data.batchSize;
  }
  std::vector<double> sum(4, 0);
  for (auto &bytes : rt::allGatherBytes(bytesOf(totals))) {
    std::vector<double> theirs = valuesOf<double>(bytes);
    for (size_t i = 0; i < sum.size(); ++i)
      sum[i] += theirs[i];
  }
  if (rank != 0)
    return;
  EvalRecord record;
  record.samples = static_cast<int64_t>(sum[3]);
  if (sum[1] > 0)
    record.loss = sum[0] / sum[1];
  if (scores && label && sum[3] > 0)
    record.accuracy = sum[2] / sum[3];
  printEvaluation(record);
}

/// Page faults of the calling rank so far: its thread (each rank runs on
/// a thread of its own, or in a process of its own under MPI) and the
/// workers its split kernels run on.
int64_t threadPageFaults() {
  struct rusage usage;
  if (getrusage(RUSAGE_THREAD, &usage) != 0)
    return rt::workerPageFaults();
  return usage.ru_minflt + usage.ru_majflt + rt::workerPageFaults();
}

/// Runs the steps on one rank; with `trace`, keeps every event there. With
/// a dataset, each step first reads its batch into the rank's inputs and
/// labels, and `endOfEpoch(steps, last)` runs on every rank after each
/// epoch (`steps` run so far; `last`: after the last step).
std::vector<StepRecord>
runSteps(RankCall &call, const std::vector<std::pair<size_t, size_t>> &feedback,
         int numSteps, int rank, int lossRank, std::vector<rt::Event> *trace,
         const Dataset *data, const MeshInfo &mesh,
         const std::function<void(int, bool)> &endOfEpoch) {
  std::optional<size_t> lossResult = call.stage.entry.lossResult();
  std::vector<rt::Event> &events = rt::currentStats().events;
  std::vector<StepRecord> steps;
  // The epoch under way: its order, first step and start.
  int epoch = 0;
  std::vector<int64_t> order;
  size_t epochFirst = 0;
  auto epochStart = std::chrono::steady_clock::now();
  // Times count from a moment every rank shares, right after a barrier:
  // ranks on other hosts have other clocks, and bubbles compare them.
  rt::allGatherBytes({});
  int64_t origin = rt::nowNanoseconds();
  for (int step = 1; step <= numSteps; ++step) {
    int64_t batch = 0;
    if (data) {
      // The global batch this step reads, counting a checkpoint's.
      int64_t global = data->start + step - 1;
      batch = global % data->batchesPerEpoch;
      if (batch == 0 || step == 1) {
        epoch = static_cast<int>(global / data->batchesPerEpoch) + 1;
        order = data->order(epoch);
        epochFirst = steps.size();
        epochStart = std::chrono::steady_clock::now();
      }
      for (auto [a, index] : llvm::enumerate(call.stage.argIndices))
        if (data->feeds.count(index))
          fillBatch(*data, index, call.stage.entry.args[a], order, batch, mesh,
                    rank, *call.args[a]);
    }
    int64_t faultsBefore = threadPageFaults();
    auto start = std::chrono::steady_clock::now();
    std::string work = "step " + std::to_string(step);
    if (data) {
      // Which samples: a bad label is found by its row.
      int64_t first = batch * data->batchSize,
              last = (batch + 1) * data->batchSize - 1;
      work += " (epoch " + std::to_string(epoch) + ", batch " +
              std::to_string(batch + 1) + " of " +
              std::to_string(data->batchesPerEpoch) + ": samples ";
      work += data->shuffle
                  ? "at " + std::to_string(first) + " to " +
                        std::to_string(last) +
                        " of the epoch's order, epl.data.shuffled_order(" +
                        std::to_string(data->numSamples) + ", " +
                        std::to_string(data->seed) + ", " +
                        std::to_string(epoch) + "),"
                  : std::to_string(first) + " to " + std::to_string(last);
      work += " of " + data->path + ")";
    }
    rt::setCurrentWork(work);
    call();
    rt::setCurrentWork("");
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    int64_t faults = threadPageFaults() - faultsBefore;
    std::optional<double> loss =
        lossResult ? scalarLoss(call.results[*lossResult]) : std::nullopt;
    // Rank 0 prints the loss; in a pipeline it is the last stage's.
    if (lossRank != 0) {
      std::vector<char> mine =
          loss ? bytesOf(std::vector<double>{*loss}) : std::vector<char>();
      std::vector<char> reported = rt::allGatherBytes(mine)[lossRank];
      loss = reported.empty() ? std::nullopt
                              : std::optional(valuesOf<double>(reported)[0]);
    }
    for (rt::Event &e : events) {
      e.begin -= origin;
      e.end -= origin;
    }
    steps.push_back({step, loss, ms, activityOf(events), std::nullopt});
    steps.back().pageFaults = faults;
    if (data && ms > 0)
      steps.back().samplesPerSecond = data->batchSize / (ms * 1e-3);
    if (trace)
      trace->insert(trace->end(), events.begin(), events.end());
    events.clear();
    for (auto [r, a] : feedback)
      if (!call.updatesInPlace(r, a))
        std::memcpy(call.args[a]->data.data(), call.results[r].data.data(),
                    call.results[r].data.size());
    if (rank == 0)
      printStep(steps.back());
    if (!data || (batch + 1 != data->batchesPerEpoch && step != numSteps))
      continue;
    if (rank == 0) {
      EpochRecord record{epoch, static_cast<int>(steps.size() - epochFirst),
                         std::nullopt, 0};
      double sum = 0,
             seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - epochStart)
                           .count();
      bool allLosses = true;
      for (size_t s = epochFirst; s < steps.size(); ++s) {
        allLosses &= steps[s].loss.has_value();
        sum += steps[s].loss.value_or(0);
      }
      if (allLosses)
        record.meanLoss = sum / record.steps;
      record.samplesPerSecond =
          seconds > 0 ? record.steps * data->batchSize / seconds : 0;
      printEpoch(record);
    }
    if (endOfEpoch)
      endOfEpoch(step, step == numSteps);
  }
  return steps;
}

/// Bytes of p2p traffic of `kind` ("send" or "recv") this rank counted.
int64_t pointToPointBytes(const rt::RankStats &stats, const char *kind) {
  int64_t bytes = 0;
  for (const auto &[key, stat] : stats.collectives)
    if (key.kind == kind)
      bytes += stat.bytes;
  return bytes;
}

/// The collective kinds the report counts per rank.
constexpr const char *kCollectiveKinds[] = {
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"};

/// This rank's measures, as every rank gathers them: peak, p2p sent and
/// received, then per collective kind its calls, bytes and traffic, then
/// its threads.
std::vector<int64_t> measuresOf(const rt::RankStats &stats) {
  std::vector<int64_t> m{stats.peakBytes, pointToPointBytes(stats, "send"),
                         pointToPointBytes(stats, "recv")};
  for (const char *kind : kCollectiveKinds) {
    int64_t count = 0, bytes = 0, traffic = 0;
    for (const auto &[key, stat] : stats.collectives)
      if (key.kind == kind) {
        count += stat.count;
        bytes += stat.bytes;
        traffic += stat.trafficBytes;
      }
    m.insert(m.end(), {count, bytes, traffic});
  }
  m.push_back(rt::threadsPerRank());
  return m;
}

/// What each rank measured, from every rank's measures (`measures[r]`, see
/// measuresOf) and step activities (`activities[r]`).
std::vector<RankReport>
rankReports(const Program &program,
            const std::vector<std::vector<int64_t>> &measures,
            const std::vector<std::vector<StepActivity>> &activities) {
  size_t ranks = measures.size(), numSteps = activities.front().size();
  std::vector<RankReport> reports(ranks);
  // Bubble fractions summed over the steps that ran actions, and how many.
  std::vector<double> bubbles(ranks, 0);
  int spanned = 0;
  for (size_t step = 0; step < numSteps; ++step) {
    int64_t first = std::numeric_limits<int64_t>::max(), last = 0;
    for (const auto &rank : activities)
      if (rank[step].lastEnd != 0) {
        first = std::min(first, rank[step].firstBegin);
        last = std::max(last, rank[step].lastEnd);
      }
    double spanMs = (last - first) * 1e-6;
    bool ranActions = last != 0 && spanMs > 0;
    spanned += ranActions;
    for (size_t r = 0; r < ranks; ++r) {
      const StepActivity &a = activities[r][step];
      reports[r].busyMs += a.busyMs / numSteps;
      reports[r].waitMs += a.waitMs / numSteps;
      if (ranActions)
        bubbles[r] += 1 - a.busyMs / spanMs;
    }
  }
  for (size_t r = 0; r < ranks; ++r) {
    RankReport &report = reports[r];
    report.stage = program.stageOf(r);
    report.peakBytes = measures[r][0];
    report.estimatedPeakBytes = program.stages[report.stage].estimatedPeakBytes;
    report.p2pSentBytes = measures[r][1];
    report.p2pReceivedBytes = measures[r][2];
    report.threads = measures[r].back();
    double steps = std::max<size_t>(numSteps, 1);
    for (auto [k, kind] : llvm::enumerate(kCollectiveKinds)) {
      const int64_t *m = &measures[r][3 + 3 * k];
      if (m[0])
        report.communication[kind] = {m[0] / steps, m[1] / steps, m[2] / steps};
    }
    // What the rank's stage holds between steps, from its entry's
    // arguments and results.
    const Stage &stage = program.stages[report.stage];
    for (const EntryArg &a : stage.entry.args) {
      // Model state is held like the parameters.
      if (a.kind == ArgKind::Param || a.kind == ArgKind::State)
        report.paramBytes += a.localBytes();
      else if (a.kind == ArgKind::OptState)
        report.optStateBytes += a.localBytes();
    }
    for (const EntryResult &res : stage.entry.results)
      report.gradBytes += res.gradBytes;
    report.hostBytes = stage.callBytes();
    if (spanned)
      report.bubble = bubbles[r] / spanned;
  }
  return reports;
}

/// Runs `work` (rank 0's writing of files) on a thread of its own on rank
/// 0 while every rank meets the others in a gather at least every second
/// (a quarter of --timeout if less); returns on every rank once it is
/// done. Written by rank 0 itself, a file as slow to write as the run's
/// --timeout (a large model's state on a slow disk) held rank 0 out of the
/// collective the others then waited in (the next one, or MPI_Finalize),
/// which ended the run and lost the file. A rank 0 that stops still ends
/// the run within --timeout.
void whileRankZeroWrites(int rank, const RunOptions &options,
                         const std::function<void()> &work) {
  std::shared_future<void> writing;
  static thread_local bool writer = false;
  if (rank == 0) {
    writing = std::async(std::launch::async, [&] {
                writer = true;
                rt::injectFault("write", 0);
                work();
              }).share();
    // A rank that fails meanwhile (a peer that stopped, which rank 0's
    // gather times out on) ends the run once the file is written, whole.
    rt::finishBeforeExit([writing] {
      if (!writer)
        writing.wait();
    });
  }
  std::chrono::duration<double> period(
      std::min(1.0, options.ranks.timeoutSeconds / 4));
  while (true) {
    char done =
        rank != 0 || writing.wait_for(period) == std::future_status::ready;
    if (rt::allGatherBytes({done})[0][0])
      break;
  }
  if (rank == 0) {
    rt::finishBeforeExit(nullptr);
    writing.get();
  }
}

/// After the last step: every rank takes part in the same gathers, in the
/// same order, then rank 0 prints the summary and writes the files.
void finishRun(const Program &program, RankCall &call,
               const std::vector<StepRecord> &steps,
               const std::vector<rt::Event> &trace, const RunOptions &options,
               const MeshInfo &mesh, int rank) {
  const rt::RankStats &stats = rt::currentStats();
  std::vector<std::vector<int64_t>> measures;
  for (auto &b : rt::allGatherBytes(bytesOf(measuresOf(stats))))
    measures.push_back(valuesOf<int64_t>(b));
  std::vector<StepActivity> mine;
  for (const StepRecord &s : steps)
    mine.push_back(s.activity);
  std::vector<std::vector<StepActivity>> activities;
  for (auto &b : rt::allGatherBytes(bytesOf(mine)))
    activities.push_back(valuesOf<StepActivity>(b));
  std::vector<std::vector<rt::Event>> events;
  if (!options.traceFile.empty())
    for (auto &b : rt::allGatherBytes(bytesOf(trace)))
      events.push_back(valuesOf<rt::Event>(b));
  // Only the ranks of the stage that holds a value send it.
  int myStage = program.stageOf(rank);
  std::vector<std::vector<RankParts>> results(program.stages.size());
  if (!options.dumpFile.empty())
    for (auto [s, stage] : llvm::enumerate(program.stages))
      for (size_t i = 0; i < stage.entry.results.size(); ++i)
        results[s].push_back(rt::allGatherBytes(static_cast<int>(s) == myStage
                                                    ? call.resultData(i)
                                                    : std::vector<char>()));
  int worldSize = rt::worldSize();
  whileRankZeroWrites(rank, options, [&] {
    std::vector<RankReport> reports =
        rankReports(program, measures, activities);
    const char *backend = backendName(options.ranks.backend);
    // Where the ranks ran: on GPUs, and how their collectives went (auto
    // picks per group).
    std::string where = backend;
    if (options.ranks.cuda) {
      where += ", on GPUs";
      if (std::string used = rt::gpuCollectivesUsed(); !used.empty())
        where += ", collectives " +
                 (used == "NCCL" ? "over " + used : std::string(used));
    }
    printSummary(program, options.steps, steps, where.c_str(), reports);
    if (!options.reportFile.empty())
      writeReport(options.reportFile, steps, backend, options.ranks.cuda,
                  reports, stats, program.meshes);
    if (!options.traceFile.empty())
      writeTrace(options.traceFile, program, events);
    if (!options.dumpFile.empty())
      writeResults(options.dumpFile, program, results, worldSize);
  });
}

/// The checkpoint after `stepsDone` steps of this run, written before each
/// evaluation: an evaluation that fails (a label out of range in its file)
/// does not cost the training.
void saveCheckpoint(const Program &program, RankCall &call,
                    const RunOptions &options, const MeshInfo &mesh, int rank,
                    int stepsDone) {
  if (options.saveFile.empty())
    return;
  // Checkpoints hold global values: put the shards of the stage that owns
  // each back together.
  std::vector<HostTensor> saved =
      gatherParameters(program, call, mesh, /*withState=*/true);
  std::map<std::string, std::string> position;
  if (options.dataset)
    position = options.dataset->position(options.dataset->start + stepsDone);
  whileRankZeroWrites(rank, options, [&] {
    writeCheckpoint(options.saveFile, program.name, std::move(saved), position);
  });
}
} // namespace

/// `path` as one file is named whether it exists or not: its folder's real
/// path and its name.
static std::string fileIdentity(llvm::StringRef path) {
  llvm::SmallString<256> absolute(path), folder, real;
  llvm::sys::fs::make_absolute(absolute);
  if (!llvm::sys::fs::real_path(absolute, real))
    return std::string(real);
  folder = llvm::sys::path::parent_path(absolute);
  if (llvm::sys::fs::real_path(folder, real))
    return std::string(absolute);
  llvm::sys::path::append(real, llvm::sys::path::filename(absolute));
  return std::string(real);
}

bool mlir::epl::sameFile(llvm::StringRef a, llvm::StringRef b) {
  return fileIdentity(a) == fileIdentity(b);
}

llvm::LogicalResult mlir::epl::checkInputs(llvm::ArrayRef<std::string> inputs,
                                           std::string &error) {
  for (const std::string &path : inputs) {
    llvm::sys::fs::file_status status;
    if (path.empty() || llvm::sys::fs::status(path, status))
      continue; // missing: its reader says so
    if (status.type() == llvm::sys::fs::file_type::directory_file) {
      error = "cannot read " + path + ": it is a directory";
      return llvm::failure();
    }
    if (status.type() != llvm::sys::fs::file_type::regular_file) {
      error = "cannot read " + path + ": not a regular file";
      return llvm::failure();
    }
  }
  return llvm::success();
}

llvm::LogicalResult mlir::epl::checkOutputFile(llvm::StringRef flag,
                                               llvm::StringRef path,
                                               std::string &error,
                                               llvm::SmallString<256> *file) {
  if (llvm::sys::fs::is_directory(path)) {
    error = ("cannot write " + flag + " " + path + ": it is a directory").str();
    return llvm::failure();
  }
  // Outputs are written whole to a temporary file renamed over the path:
  // a pipe or a device there would be replaced by a file (as root,
  // /dev/null itself), and this run's own standard output or error would
  // lose what the run printed to it.
  llvm::SmallString<256> through;
  if (std::error_code ec = throughLinks(path, through)) {
    error = ("cannot write " + flag + " " + path + ": " + ec.message()).str();
    return llvm::failure();
  }
  if (file)
    *file = through;
  llvm::sys::fs::file_status target;
  if (llvm::sys::fs::status(path, target))
    return llvm::success(); // A new file.
  if (target.type() != llvm::sys::fs::file_type::regular_file) {
    error = ("cannot write " + flag + " " + path +
             ": it is not a regular file (a pipe or a device); outputs are "
             "written whole to a file, then renamed over the path")
                .str();
    return llvm::failure();
  }
  for (int fd : {1, 2}) {
    llvm::sys::fs::file_status stream;
    if (!llvm::sys::fs::status(fd, stream) &&
        stream.getUniqueID() == target.getUniqueID()) {
      error = (flag + " " + path + " is this run's standard " +
               (fd == 1 ? "output" : "error") +
               ": writing it would replace what the run prints there; name "
               "a file of its own")
                  .str();
      return llvm::failure();
    }
  }
  return llvm::success();
}

llvm::LogicalResult mlir::epl::checkOutputs(
    const RunOptions &options, llvm::ArrayRef<std::string> inputs,
    llvm::ArrayRef<std::pair<std::string, std::string>> otherOutputs,
    std::string &error) {
  std::vector<std::pair<const char *, const std::string *>> outputs = {
      {"--report", &options.reportFile},
      {"--trace", &options.traceFile},
      {"--dump-results", &options.dumpFile},
      {"--save", &options.saveFile}};
  for (const auto &[flag, path] : otherOutputs)
    outputs.push_back({flag.c_str(), &path});
  std::map<std::string, const char *> written;
  std::set<std::string> read;
  for (const std::string &input : inputs)
    if (!input.empty())
      read.insert(fileIdentity(input));
  for (auto [flag, path] : outputs) {
    if (path->empty())
      continue;
    // The file written is the one its links name.
    llvm::SmallString<256> target;
    if (failed(checkOutputFile(flag, *path, error, &target)))
      return llvm::failure();
    std::string identity = fileIdentity(target);
    if (read.count(identity)) {
      error = std::string(flag) + " " + *path +
              " would overwrite an input of the run";
      return llvm::failure();
    }
    if (auto [it, fresh] = written.insert({identity, flag}); !fresh) {
      error = std::string(it->second) + " and " + flag + " both write " + *path;
      return llvm::failure();
    }
    llvm::SmallString<256> probe;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueFile(target + ".probe-%%%%%%", probe)) {
      error = std::string("cannot write ") + flag + " " + *path + ": " +
              ec.message();
      return llvm::failure();
    }
    llvm::sys::fs::remove(probe);
  }
  return llvm::success();
}

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
  // Under mpirun, the launcher's processes: said before anything compiles
  // or runs, as for threads (each rank would fail alone at its first
  // collective).
  bool mpi = options.backend == rt::BackendKind::MPI;
  int ranks = numDevices(options);
  for (const MeshInfo &mesh : meshes) {
    // Only meshes the program communicates on need every device.
    if (!mesh.communicates || mesh.numDevices() == ranks)
      continue;
    std::string devices = std::to_string(mesh.numDevices());
    error = "mesh @" + mesh.name + " has " + devices +
            " devices but the run has " + std::to_string(ranks) + " rank(s); " +
            (mpi ? "run " + devices + " processes (mpirun -np " + devices + ")"
                 : "pass --ranks " + devices);
    return llvm::failure();
  }
  return llvm::success();
}

/// The largest relative difference between two results' values (f32 or
/// f64), relative to the largest magnitude of `want`.
static double relativeDifference(const HostTensor &got,
                                 const std::vector<char> &gotData,
                                 const std::vector<char> &wantData) {
  auto compare = [&](auto *a, auto *b, size_t n) {
    double diff = 0, scale = 0;
    for (size_t i = 0; i < n; ++i) {
      diff = std::max(diff, std::abs(double(a[i]) - double(b[i])));
      scale = std::max(scale, std::abs(double(b[i])));
    }
    return scale > 0 ? diff / scale : diff;
  };
  size_t n = got.numElements();
  if (got.dtype == DType::F32)
    return compare(reinterpret_cast<const float *>(gotData.data()),
                   reinterpret_cast<const float *>(wantData.data()), n);
  if (got.dtype == DType::F64)
    return compare(reinterpret_cast<const double *>(gotData.data()),
                   reinterpret_cast<const double *>(wantData.data()), n);
  return gotData == wantData ? 0 : 1;
}

/// gradient_checkpoint.check_gradients: one step of `program` and of
/// `reference` (the same step keeping every activation) on copies of the
/// arguments; fails the run unless every loss, parameter and state result
/// agrees within `tolerance` on every rank. Leaves the statistics as they
/// were before.
static void checkAgainstReference(const Program &program,
                                  const Program &reference,
                                  std::vector<HostTensor> &args,
                                  const MeshInfo &mesh, int rank,
                                  double tolerance) {
  const Stage &stage = program.stages[program.stageOf(rank)];
  const Stage &plain = reference.stages[reference.stageOf(rank)];
  rt::RankStats before = rt::currentStats();
  // Own copies of the arguments: each call updates its own in place.
  RankCall got(stage, args, /*ownArgs=*/true, mesh, rank);
  RankCall want(plain, args, /*ownArgs=*/true, mesh, rank);
  want();
  got();
  double worst = 0;
  int64_t worstResult = -1;
  for (auto [i, result] : llvm::enumerate(stage.entry.results)) {
    if (result.kind != ResultKind::Loss && result.kind != ResultKind::Param &&
        result.kind != ResultKind::OptState && result.kind != ResultKind::State)
      continue;
    double d = relativeDifference(got.results[i], got.resultData(i),
                                  want.resultData(i));
    if (d > worst || worstResult < 0) {
      worst = d;
      worstResult = static_cast<int64_t>(i);
    }
  }
  std::vector<double> mine = {worst, static_cast<double>(worstResult)};
  double all = 0;
  int allRank = 0;
  int64_t allResult = -1;
  for (auto [r, bytes] : llvm::enumerate(rt::allGatherBytes(bytesOf(mine)))) {
    std::vector<double> theirs = valuesOf<double>(bytes);
    if (theirs[1] >= 0 && (allResult < 0 || theirs[0] > all)) {
      all = theirs[0];
      allRank = static_cast<int>(r);
      allResult = static_cast<int64_t>(theirs[1]);
    }
  }
  const Stage &worstStage = program.stages[program.stageOf(allRank)];
  std::string name;
  if (allResult >= 0) {
    const EntryResult &r = worstStage.entry.results[allResult];
    name = r.kind == ResultKind::Loss ? "loss" : r.name;
  }
  if (!(all <= tolerance))
    rt::fatalError("gradient_checkpoint.check_gradients: the checkpointed "
                   "step's '" +
                   name +
                   "' differs from the step keeping every activation "
                   "by " +
                   std::to_string(all) + " (relative; at most " +
                   std::to_string(tolerance) + ")");
  if (rank == 0) {
    std::printf("gradient_checkpoint.check_gradients: the checkpointed step "
                "equals the step keeping every activation (largest relative "
                "difference %.3g, '%s')\n",
                all, name.c_str());
    std::fflush(stdout);
  }
  // Before the statistics are restored: freeing counts.
  got.releaseDeviceCopies();
  want.releaseDeviceCopies();
  rt::currentStats() = before;
}

/// What every process of a run must agree on, as each read it: under MPI
/// each reads its own command line and files, and ranks that started from
/// other parameters (another checkpoint on another node, another --seed)
/// or ran other steps would train apart with nothing said.
struct RunAgreement {
  int64_t steps, datasetStart, datasetSamples, datasetBatch, datasetShuffle,
      datasetSeed;
  /// --gpu-collectives and --gpu-tf32: ranks that disagree would meet in
  /// different collectives (NCCL's and the host's), or compute the
  /// replicas' steps in different precisions.
  int64_t gpuCollectives, gpuTF32;
  /// Which of --save, --trace, --dump-results, an evaluation and
  /// --eval-each-epoch the run has (bits): each adds gathers to the run.
  int64_t gathers;
  uint64_t program, arguments;
};

/// What each process compiled or loaded, as an artifact's manifest spells
/// it: meshes, stages, and the entries' arguments and results with their
/// types and shards.
static uint64_t fingerprintOf(const Program &program) {
  Manifest described;
  described.program = program;
  return llvm::xxh3_64bits(writeManifest(described));
}

static RunAgreement agreementOf(const Program &program,
                                const std::vector<HostTensor> &args,
                                const RunOptions &options) {
  // The global values of every argument (parameters, state, data): each
  // process loads them whole before cutting its shard.
  uint64_t hash = 0;
  for (const HostTensor &t : args)
    hash =
        llvm::xxh3_64bits(llvm::ArrayRef(
            reinterpret_cast<const uint8_t *>(t.data.data()), t.data.size())) ^
        (hash * 0x9E3779B97F4A7C15ull);
  const Dataset *d = options.dataset;
  return {options.steps,
          d ? d->start : 0,
          d ? d->numSamples : 0,
          d ? d->batchSize : 0,
          d ? d->shuffle : 0,
          d && d->shuffle ? static_cast<int64_t>(d->seed) : 0,
          static_cast<int64_t>(options.ranks.gpuCollectives),
          options.ranks.gpuTF32,
          int64_t(!options.saveFile.empty()) |
              int64_t(!options.traceFile.empty()) << 1 |
              int64_t(!options.dumpFile.empty()) << 2 |
              int64_t(options.evaluation != nullptr) << 3 |
              int64_t(options.evaluateEachEpoch) << 4,
          fingerprintOf(program),
          hash};
}

/// Ends the run on every rank when a process disagrees with rank 0.
static void checkRanksAgree(const RunAgreement &mine) {
  std::vector<std::vector<char>> all =
      rt::allGatherBytes(bytesOf(std::vector<RunAgreement>{mine}));
  RunAgreement first = valuesOf<RunAgreement>(all[0])[0];
  for (auto [rank, bytes] : llvm::enumerate(all)) {
    RunAgreement theirs = valuesOf<RunAgreement>(bytes)[0];
    std::string other = "rank " + std::to_string(rank);
    if (theirs.program != first.program)
      rt::fatalError(other + " runs another program than rank 0 (another "
                             "model file, config or compiler options, or "
                             "another artifact): every process of a run must "
                             "run the same");
    if (theirs.steps != first.steps)
      rt::fatalError(other + " runs " + std::to_string(theirs.steps) +
                     " steps but rank 0 runs " + std::to_string(first.steps) +
                     " (--steps, --epochs): every process of a run must be "
                     "given the same options");
    if (theirs.datasetStart != first.datasetStart ||
        theirs.datasetSamples != first.datasetSamples ||
        theirs.datasetBatch != first.datasetBatch ||
        theirs.datasetShuffle != first.datasetShuffle ||
        theirs.datasetSeed != first.datasetSeed)
      rt::fatalError(other + " reads another dataset, order or position "
                             "than rank 0 (--dataset, --shuffle, --seed, "
                             "the checkpoint of --params): every process of "
                             "a run must read the same");
    if (theirs.gpuCollectives != first.gpuCollectives ||
        theirs.gpuTF32 != first.gpuTF32)
      rt::fatalError(other + " runs its GPU with other options than rank 0 "
                             "(--gpu-collectives, --gpu-tf32): every process "
                             "of a run must be given the same options");
    if (theirs.gathers != first.gathers)
      rt::fatalError(other + " writes other files or evaluates otherwise "
                             "than rank 0 (--save, --trace, --dump-results, "
                             "--eval-dataset, --eval-each-epoch): every "
                             "process of a run must be given the same "
                             "options");
    if (theirs.arguments != first.arguments)
      rt::fatalError(other + " starts from other parameters or data than "
                             "rank 0 (--params, --data or --seed differ, or "
                             "the files do): every process of a run must "
                             "read the same, or the replicas train apart");
  }
}

bool mlir::epl::gpusAvailableFor(const Program &program,
                                 const rt::Options &ranks, std::string &error) {
  return rt::gpuAvailable(error, program.directMessages &&
                                     ranks.gpuCollectives !=
                                         rt::Options::GPUCollectives::Host);
}

int mlir::epl::runProgram(const Program &program, std::vector<HostTensor> args,
                          const RunOptions &options) {
  // Threads share one command line and one copy of the files: only the
  // processes of an MPI run can disagree.
  bool processes = options.ranks.backend == rt::BackendKind::MPI &&
                   rt::launcherWorldSize() > 1;
  RunAgreement agreement =
      processes ? agreementOf(program, args, options) : RunAgreement{};
  std::vector<rt::MeshName> meshNames;
  for (const MeshInfo &m : program.meshes)
    meshNames.push_back({m.name, m.axes});
  rt::setMeshNames(std::move(meshNames));

  MeshInfo mesh =
      program.meshes.empty() ? MeshInfo() : program.meshes[program.mesh];
  rt::runRanks(options.ranks, [&](int rank) {
    if (processes)
      checkRanksAgree(agreement);
    const Stage &stage = program.stages[program.stageOf(rank)];
    std::vector<std::pair<size_t, size_t>> feedback = feedbackOf(stage.entry);
    // Shards are cut from the global values; whole arguments are shared
    // while read-only, copied when training updates them.
    bool sharded = llvm::any_of(
        stage.entry.args, [](const EntryArg &a) { return !a.shard.isWhole(); });
    if (options.reference)
      checkAgainstReference(program, *options.reference, args, mesh, rank,
                            options.checkTolerance);
    RankCall call(stage, args, !feedback.empty() || sharded || options.dataset,
                  mesh, rank);
    std::vector<rt::Event> trace;
    auto evaluateNow = [&] {
      evaluate(options,
               gatherParameters(program, call, mesh, /*withState=*/false),
               rank);
    };
    std::function<void(int, bool)> endOfEpoch;
    if (options.evaluation && options.evaluateEachEpoch)
      endOfEpoch = [&](int stepsDone, bool last) {
        if (last)
          return;
        saveCheckpoint(program, call, options, mesh, rank, stepsDone);
        evaluateNow();
      };
    std::vector<StepRecord> steps =
        runSteps(call, feedback, options.steps, rank,
                 lossRankOf(program, rt::worldSize()),
                 options.traceFile.empty() ? nullptr : &trace, options.dataset,
                 mesh, endOfEpoch);
    saveCheckpoint(program, call, options, mesh, rank, options.steps);
    if (options.evaluation)
      evaluateNow();
    rt::finishProgram();
    finishRun(program, call, steps, trace, options, mesh, rank);
  });
  return 0;
}
