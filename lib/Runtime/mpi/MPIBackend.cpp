//===- MPIBackend.cpp - One rank per process through MPI ------------------===//
//
// Part of EPL-MLIR.
//
// Collectives use non-blocking MPI calls polled against a deadline, so that
// a peer that died or never came ends the job with a message (MPI_Abort)
// instead of a hang. Before moving data, members exchange a small header
// (operation, count, type, reduction, root) and check that they agree.
// Reductions are done here, not by MPI, in group order: MPI's own order is
// unspecified, and we promise results bit-identical to the threads backend.
//
//===----------------------------------------------------------------------===//

#include "../Reduce.h"
#include "../Watchdog.h"
#include "epl/Runtime/Backend.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

using namespace epl::rt;
using namespace epl::rt::detail;

namespace {
using Clock = std::chrono::steady_clock;

enum OpCode : int64_t {
  kAllReduce = 1,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kBarrier,
  kFinish
};

const char *opName(int64_t code) {
  switch (code) {
  case kAllReduce:
    return "all_reduce";
  case kAllGather:
    return "all_gather";
  case kReduceScatter:
    return "reduce_scatter";
  case kAllToAll:
    return "all_to_all";
  case kBroadcast:
    return "broadcast";
  case kBarrier:
    return "barrier";
  case kFinish:
    return "end of program";
  }
  return "?";
}

/// The launcher's variables for the calling rank's index among the ranks
/// of its machine.
constexpr const char *kLocalRanks[] = {"OMPI_COMM_WORLD_LOCAL_RANK",
                                       "MPI_LOCALRANKID"};
template <size_t N>
int fromLauncher(const char *const (&names)[N], int fallback) {
  for (const char *name : names)
    if (const char *text = std::getenv(name);
        text && std::atoi(text) >= 0 && *text >= '0' && *text <= '9')
      return std::atoi(text);
  return fallback;
}

class MPIWorld;

struct PendingSend {
  std::vector<char> data;
  MPI_Request request;
};

class MPICommunicator final : public Communicator {
public:
  MPICommunicator(MPIWorld &world, Group group)
      : world(world), group(std::move(group)) {}
  ~MPICommunicator() override {
    if (comm != MPI_COMM_NULL)
      MPI_Comm_free(&comm);
  }
  void allReduce(const void *in, void *out, size_t count, EplDType dtype,
                 EplReduction kind) override;
  void allGather(const void *in, void *out, size_t countPerRank,
                 EplDType dtype) override;
  void reduceScatter(const void *in, void *out, size_t countPerRank,
                     EplDType dtype, EplReduction kind) override;
  void allToAll(const void *in, void *out, size_t countPerRank,
                EplDType dtype) override;
  void broadcast(const void *in, void *out, size_t count, EplDType dtype,
                 int root) override;
  void send(const void *in, size_t count, EplDType dtype, int peer,
            int64_t tag) override;
  void recv(void *out, size_t count, EplDType dtype, int peer,
            int64_t tag) override;
  void barrier() override;
  /// The barrier every rank passes when its program has finished.
  void finish();
  /// Names `other` (the same ranks) in this communicator's errors.
  void describeAs(const Group &other) { group = other; }

private:
  /// Exchanges headers and checks every member asked for the same thing.
  void agree(int64_t op, size_t count, EplDType dtype, int kind, int root);
  void wait(MPI_Request &request, const char *what);

  MPIWorld &world;
  /// Created by the first collective (agree): point-to-point goes through
  /// the world and needs none.
  MPI_Comm comm = MPI_COMM_NULL;
  Group group;
};

/// The communicator of `group`, created by its members alone (not a split,
/// collective over the world): the stages of a pipeline run different
/// programs, which meet their groups in different orders. Concurrent
/// creations of overlapping groups are told apart by a tag, a hash of the
/// members.
MPI_Comm createCommunicator(const Group &group) {
  int *upperBound = nullptr, found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &upperBound, &found);
  uint64_t hash = 0xcbf29ce484222325ull;
  for (int m : group.members)
    hash = (hash ^ static_cast<uint64_t>(m)) * 0x100000001b3ull;
  int tag = static_cast<int>(hash % (found ? *upperBound : 32767));
  MPI_Group world, members;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, group.size(), group.members.data(), &members);
  MPI_Comm comm;
  MPI_Comm_create_group(MPI_COMM_WORLD, members, tag, &comm);
  MPI_Group_free(&members);
  MPI_Group_free(&world);
  return comm;
}

class MPIWorld final : public Backend {
public:
  explicit MPIWorld(double timeout) : timeout(timeout) {
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    // The step was planned for the processes the launcher's environment
    // names (before MPI starts): another count would run it on the wrong
    // devices.
    if (n != launcherWorldSize())
      fatalError(
          "MPI started " + std::to_string(n) + " process(es), but " +
          (launchedByMPI()
               ? "the launcher's environment names " +
                     std::to_string(launcherWorldSize()) +
                     " (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_SIZE or "
                     "SLURM_STEP_NUM_TASKS), which the step was planned for"
               : std::string("no launcher this runner knows set its "
                             "environment (Open MPI's or MPICH's mpirun, "
                             "srun), so the step was planned for 1; start it "
                             "with one of them")));
  }
  int worldSize() override { return n; }
  int processSize() override { return 1; }
  // What the launcher says (Open MPI, MPICH and derivatives set it): the
  // rank's index on its machine, whose GPUs it takes. Without it, all
  // ranks are taken to be here.
  int machineRank(int rank) override { return fromLauncher(kLocalRanks, rank); }
  Communicator &getCommunicator(const Group &group) override {
    auto it = communicators.find(group.members);
    if (it != communicators.end()) {
      // One communicator serves every group of the same ranks (so that a
      // rank that finishes is seen by peers in any of them); errors name
      // the group the caller asked for.
      it->second->describeAs(group);
      return *it->second;
    }
    auto created = std::make_unique<MPICommunicator>(*this, group);
    return *communicators.emplace(group.members, std::move(created))
                .first->second;
  }
  void finishProgram(int rank) override {
    flushSends();
    // Peers still inside a collective on the world's ranks see this
    // header and report that this rank has finished.
    Group all;
    all.meshId = -1;
    for (int r = 0; r < n; ++r)
      all.members.push_back(r);
    all.index = rank;
    static_cast<MPICommunicator &>(getCommunicator(all)).finish();
  }
  [[noreturn]] void abort(const std::string &message) override {
    std::fputs(message.c_str(), stderr);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
  }
  Clock::time_point deadline() const {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(timeout));
  }
  double timeoutSeconds() const { return timeout; }
  void clear() { communicators.clear(); }

  void addPendingSend(std::unique_ptr<PendingSend> send) {
    // Release the buffers of sends that have completed.
    eraseIf(pendingSends, [](std::unique_ptr<PendingSend> &p) {
      int done = 0;
      MPI_Test(&p->request, &done, MPI_STATUS_IGNORE);
      return done != 0;
    });
    pendingSends.push_back(std::move(send));
  }

  /// Waits until every buffered send has been received.
  void flushSends() {
    auto deadline = this->deadline();
    for (auto &p : pendingSends) {
      int done = 0;
      while (!done) {
        MPI_Test(&p->request, &done, MPI_STATUS_IGNORE);
        if (!done && Clock::now() > deadline)
          fatalError("finished with a send nobody received after " +
                     formatSeconds(timeout) +
                     "; the receiver may have failed or left");
        if (!done)
          std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }
    pendingSends.clear();
  }

private:
  int n = 1;
  double timeout;
  std::map<std::vector<int>, std::unique_ptr<MPICommunicator>> communicators;
  std::vector<std::unique_ptr<PendingSend>> pendingSends;

  template <typename C, typename P> static void eraseIf(C &c, P p) {
    c.erase(std::remove_if(c.begin(), c.end(), p), c.end());
  }
};

int checkedCount(size_t bytes, const char *op) {
  if (bytes > static_cast<size_t>(INT_MAX))
    fatalError(std::string(op) + ": " + std::to_string(bytes) +
               " bytes is more than one MPI message carries");
  return static_cast<int>(bytes);
}

void MPICommunicator::wait(MPI_Request &request, const char *what) {
  auto deadline = world.deadline();
  for (int spins = 0;; ++spins) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done)
      return;
    if (Clock::now() > deadline) {
      std::string members;
      for (int m : group.members)
        members += (members.empty() ? "" : ", ") + std::to_string(m);
      fatalError(std::string(what) + " over " + group.describe() +
                 ": timed out after " + formatSeconds(world.timeoutSeconds()) +
                 " waiting for the other ranks of the group (" + members +
                 "); a rank may have failed or left (see --timeout)");
    }
    if (spins > 1000)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void MPICommunicator::agree(int64_t op, size_t count, EplDType dtype, int kind,
                            int root) {
  if (comm == MPI_COMM_NULL) {
    static bool first = true;
    if (first) {
      first = false;
      injectFault("communicator", currentRank());
    }
    // Every member must call MPI_Comm_create_group, which blocks.
    std::string members;
    for (int m : group.members)
      members += (members.empty() ? "" : ", ") + std::to_string(m);
    Deadline deadline(
        world.timeoutSeconds(),
        timeoutMessage(currentRank(),
                       std::string(opName(op)) + " over " + group.describe() +
                           ": creating its communicator",
                       "the other ranks of the group (" + members + ")",
                       world.timeoutSeconds()));
    comm = createCommunicator(group);
  }
  int64_t mine[5] = {op, static_cast<int64_t>(count), dtype, kind, root};
  std::vector<int64_t> all(5 * group.size());
  MPI_Request request;
  MPI_Iallgather(mine, 5, MPI_INT64_T, all.data(), 5, MPI_INT64_T, comm,
                 &request);
  wait(request, opName(op));
  for (int i = 0; i < group.size(); ++i) {
    const int64_t *other = &all[5 * i];
    if (std::memcmp(other, mine, sizeof(mine)) == 0)
      continue;
    auto describe = [](const int64_t *h) {
      std::string s = std::string(opName(h[0])) + " of " +
                      std::to_string(h[1]) + " " +
                      dtypeName(static_cast<EplDType>(h[2])) + " elements";
      if (h[0] == kAllReduce || h[0] == kReduceScatter)
        s += std::string(" (") +
             reductionName(static_cast<EplReduction>(h[3])) + ")";
      if (h[0] == kBroadcast)
        s += " from root " + std::to_string(h[4]);
      return s;
    };
    std::string peer = std::to_string(group.members[i]);
    if (other[0] == kFinish)
      fatalError(std::string(opName(op)) + " over " + group.describe() +
                 ": rank(s) " + peer +
                 " finished the program without joining it");
    if (op == kFinish)
      fatalError("finished the program while rank " + peer + " waits in " +
                 describe(other) + " over " + group.describe());
    fatalError("mismatched collective over " + group.describe() +
               ": this rank called " + describe(mine) + ", rank " + peer +
               " called " + describe(other));
  }
}

void MPICommunicator::allReduce(const void *in, void *out, size_t count,
                                EplDType dtype, EplReduction kind) {
  agree(kAllReduce, count, dtype, kind, 0);
  int g = group.size();
  size_t es = dtypeSize(dtype);
  // Reduce-scatter into uneven chunks, reduce in group order, all-gather.
  std::vector<int> counts(g), displs(g);
  for (int i = 0; i < g; ++i) {
    size_t begin = count * i / g, end = count * (i + 1) / g;
    counts[i] = checkedCount((end - begin) * es, "all_reduce");
    displs[i] = checkedCount(begin * es, "all_reduce");
  }
  size_t mine = counts[group.index];
  std::vector<char> received(mine * g);
  std::vector<int> recvCounts(g, static_cast<int>(mine)), recvDispls(g);
  for (int i = 0; i < g; ++i)
    recvDispls[i] = static_cast<int>(mine * i);
  MPI_Request request;
  MPI_Ialltoallv(in, counts.data(), displs.data(), MPI_BYTE, received.data(),
                 recvCounts.data(), recvDispls.data(), MPI_BYTE, comm,
                 &request);
  wait(request, "all_reduce");
  injectFault("all_reduce", currentRank());
  std::vector<const void *> inputs(g);
  for (int i = 0; i < g; ++i)
    inputs[i] = received.data() + i * mine;
  std::vector<char> reduced(mine);
  reduceInOrder(reduced.data(), inputs.data(), g, mine / es, dtype, kind);
  MPI_Iallgatherv(reduced.data(), static_cast<int>(mine), MPI_BYTE, out,
                  counts.data(), displs.data(), MPI_BYTE, comm, &request);
  wait(request, "all_reduce");
}

void MPICommunicator::allGather(const void *in, void *out, size_t countPerRank,
                                EplDType dtype) {
  agree(kAllGather, countPerRank, dtype, 0, 0);
  int bytes = checkedCount(countPerRank * dtypeSize(dtype), "all_gather");
  MPI_Request request;
  MPI_Iallgather(in, bytes, MPI_BYTE, out, bytes, MPI_BYTE, comm, &request);
  wait(request, "all_gather");
}

void MPICommunicator::reduceScatter(const void *in, void *out,
                                    size_t countPerRank, EplDType dtype,
                                    EplReduction kind) {
  agree(kReduceScatter, countPerRank, dtype, kind, 0);
  int g = group.size();
  int bytes = checkedCount(countPerRank * dtypeSize(dtype), "reduce_scatter");
  std::vector<char> received(static_cast<size_t>(bytes) * g);
  MPI_Request request;
  MPI_Ialltoall(in, bytes, MPI_BYTE, received.data(), bytes, MPI_BYTE, comm,
                &request);
  wait(request, "reduce_scatter");
  std::vector<const void *> inputs(g);
  for (int i = 0; i < g; ++i)
    inputs[i] = received.data() + static_cast<size_t>(i) * bytes;
  reduceInOrder(out, inputs.data(), g, countPerRank, dtype, kind);
}

void MPICommunicator::allToAll(const void *in, void *out, size_t countPerRank,
                               EplDType dtype) {
  agree(kAllToAll, countPerRank, dtype, 0, 0);
  int bytes = checkedCount(countPerRank * dtypeSize(dtype), "all_to_all");
  MPI_Request request;
  MPI_Ialltoall(in, bytes, MPI_BYTE, out, bytes, MPI_BYTE, comm, &request);
  wait(request, "all_to_all");
}

void MPICommunicator::broadcast(const void *in, void *out, size_t count,
                                EplDType dtype, int root) {
  agree(kBroadcast, count, dtype, 0, root);
  int bytes = checkedCount(count * dtypeSize(dtype), "broadcast");
  if (group.index == root)
    std::memcpy(out, in, bytes);
  MPI_Request request;
  MPI_Ibcast(out, bytes, MPI_BYTE, root, comm, &request);
  wait(request, "broadcast");
}

void MPICommunicator::finish() {
  agree(kFinish, 0, EPL_RT_F32, 0, 0);
  MPI_Request request;
  MPI_Ibarrier(comm, &request);
  wait(request, "end of program");
}

void MPICommunicator::barrier() {
  agree(kBarrier, 0, EPL_RT_F32, 0, 0);
  MPI_Request request;
  MPI_Ibarrier(comm, &request);
  wait(request, "barrier");
}

// Point-to-point goes through the world communicator with global ranks, so
// that stages never need a communicator of their own. The tag carries the
// element type so that a type mismatch is reported, not misread.
int mpiTag(int64_t tag, EplDType dtype) {
  return static_cast<int>((tag % 4096) * 8 + dtype);
}

void MPICommunicator::send(const void *in, size_t count, EplDType dtype,
                           int peer, int64_t tag) {
  // Buffered, as on the threads backend: a send returns before the matching
  // recv is posted, so a ring of sends followed by recvs cannot deadlock.
  int bytes = checkedCount(count * dtypeSize(dtype), "send");
  auto pending = std::make_unique<PendingSend>();
  pending->data.assign(static_cast<const char *>(in),
                       static_cast<const char *>(in) + bytes);
  MPI_Isend(pending->data.data(), bytes, MPI_BYTE, group.members[peer],
            mpiTag(tag, dtype), MPI_COMM_WORLD, &pending->request);
  world.addPendingSend(std::move(pending));
}

void MPICommunicator::recv(void *out, size_t count, EplDType dtype, int peer,
                           int64_t tag) {
  int source = group.members[peer];
  int expected = checkedCount(count * dtypeSize(dtype), "recv");
  // Probe first so that a message of the wrong size is reported.
  auto deadline = world.deadline();
  MPI_Status status;
  for (int spins = 0;; ++spins) {
    int found = 0;
    MPI_Iprobe(source, mpiTag(tag, dtype), MPI_COMM_WORLD, &found, &status);
    if (found)
      break;
    if (Clock::now() > deadline)
      fatalError("recv from rank " + std::to_string(source) + " (tag " +
                 std::to_string(tag) + "): timed out after " +
                 formatSeconds(world.timeoutSeconds()) +
                 "; the sender may have failed or left (see --timeout)");
    if (spins > 1000)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  if (bytes != expected)
    fatalError("recv from rank " + std::to_string(source) + " expected " +
               std::to_string(count) + " " + dtypeName(dtype) +
               " elements, but it sent " +
               std::to_string(bytes / dtypeSize(dtype)));
  MPI_Recv(out, bytes, MPI_BYTE, source, mpiTag(tag, dtype), MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
}
} // namespace

bool epl::rt::mpiAvailable() { return true; }

void epl::rt::detail::runMPI(const Options &options,
                             const std::function<void(int)> &body) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // MPI_Init returns when every process of the job has started it.
    Deadline deadline(
        options.timeoutSeconds,
        timeoutMessage(launcherRank(), "MPI_Init",
                       "the other " + std::to_string(launcherWorldSize() - 1) +
                           " rank(s) to start (one may still be compiling)",
                       options.timeoutSeconds));
    MPI_Init(nullptr, nullptr);
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::optional<Deadline> finalizing;
  {
    MPIWorld world(options.timeoutSeconds);
    enterRank(&world, rank);
    body(rank);
    // Finishing is a barrier that times out like any collective, so a rank
    // never leaves its peers waiting forever.
    leaveRank();
    finalizing.emplace(options.timeoutSeconds,
                       timeoutMessage(rank, "MPI_Finalize", "the other ranks",
                                      options.timeoutSeconds));
    world.clear();
  }
  MPI_Finalize();
}
