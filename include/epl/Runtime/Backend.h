//===- Backend.h - Communication backends of the runtime --------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// The C ABI in Runtime.h dispatches to a Backend chosen at run time: threads
// (N ranks in one process) or MPI (one rank per process). Hosts (epl-run, the
// unit tests) start ranks through `runRanks` and read back what the runtime
// measured through `RankStats`.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNTIME_BACKEND_H
#define EPL_RUNTIME_BACKEND_H

#include "epl/Runtime/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace epl::rt {

size_t dtypeSize(EplDType dtype);
const char *dtypeName(EplDType dtype);
const char *reductionName(EplReduction kind);

/// "2 s", "0.5 s": how diagnostics print durations.
std::string formatSeconds(double seconds);

/// The devices one collective runs among, in group order, as global ranks.
struct Group {
  int64_t meshId = 0;
  std::vector<int64_t> meshShape;
  std::vector<int64_t> axes;
  /// Global ranks of the members, in group order.
  std::vector<int> members;
  /// This rank's index in `members`.
  int index = 0;
  int size() const { return static_cast<int>(members.size()); }
  /// "mesh 0 axes [1]": how diagnostics name the group.
  std::string describe() const;
};

/// Names of the program's meshes and their axes, by mesh id, so that
/// diagnostics speak of `@mesh ["data"]` rather than numbers. Optional; set
/// by the host before running ranks.
struct MeshName {
  std::string name;
  std::vector<std::string> axes;
};
void setMeshNames(std::vector<MeshName> names);

/// Parses a group descriptor (see Runtime.h) for global rank `rank`.
/// Reports a fatal error naming `op` when it is malformed or when the mesh
/// does not have `worldSize` devices.
Group makeGroup(const int64_t *desc, int64_t length, int rank, int worldSize,
                const char *op);

/// A communicator for one group, created by a backend.
class Communicator {
public:
  virtual ~Communicator();
  // Counts are in elements of `dtype`; see Runtime.h for the semantics.
  virtual void allReduce(const void *in, void *out, size_t count,
                         EplDType dtype, EplReduction kind) = 0;
  virtual void allGather(const void *in, void *out, size_t countPerRank,
                         EplDType dtype) = 0;
  virtual void reduceScatter(const void *in, void *out, size_t countPerRank,
                             EplDType dtype, EplReduction kind) = 0;
  virtual void allToAll(const void *in, void *out, size_t countPerRank,
                        EplDType dtype) = 0;
  virtual void broadcast(const void *in, void *out, size_t count,
                         EplDType dtype, int root) = 0;
  /// `peer` is an index in the group.
  virtual void send(const void *in, size_t count, EplDType dtype, int peer,
                    int64_t tag) = 0;
  virtual void recv(void *out, size_t count, EplDType dtype, int peer,
                    int64_t tag) = 0;
  /// The sends and receives between beginMessages and endMessages are one
  /// group (epl_rt_message_group_begin): they may complete in any order,
  /// all of them by the end. Backends whose sends do not wait for their
  /// receives (threads, MPI, staged through the host) need do nothing.
  virtual void beginMessages() {}
  virtual void endMessages() {}
  /// Lets the `direct` messages to and from `peer` go directly between the
  /// devices (epl_rt_open_channel); a rendezvous of the two. Backends
  /// whose sends do not wait need do nothing, and move direct messages as
  /// the others.
  virtual void openChannel(int peer) {}
  /// Makes now what the group's collectives will need
  /// (epl_rt_prepare_group), with the other members.
  virtual void prepare() {}
  virtual void sendDirect(const void *in, size_t count, EplDType dtype,
                          int peer, int64_t tag) {
    send(in, count, dtype, peer, tag);
  }
  virtual void recvDirect(void *out, size_t count, EplDType dtype, int peer,
                          int64_t tag) {
    recv(out, count, dtype, peer, tag);
  }
  virtual void barrier() = 0;
};

/// What the runtime measured on one rank.
struct CollectiveStat {
  int64_t count = 0;
  /// The bytes of the calls' inputs.
  int64_t bytes = 0;
  /// What the calling rank sends with ring algorithms (bandwidth-optimal:
  /// an all-reduce of B bytes over n ranks sends 2 (n-1)/n B, a
  /// reduce-scatter of a B-byte input (n-1)/n B, an all-gather of a B-byte
  /// shard (n-1) B), so that collectives compare by what they cost.
  int64_t trafficBytes = 0;
};

/// The bytes one rank sends for a collective of `kind` whose input holds
/// `bytes`, over `groupSize` ranks (see CollectiveStat::trafficBytes).
int64_t ringTrafficBytes(const std::string &kind, int64_t bytes, int groupSize);

/// A timed slice of one rank's run, for the trace and the report. Plain
/// data, so that ranks gather them as bytes.
struct Event {
  enum class Kind : int32_t { Action, Send, RecvWait };
  Kind kind = Kind::Action;
  /// Action: the phase (EplPhase), micro-batch and stage it ran.
  int32_t phase = 0;
  int64_t microBatch = 0, stage = 0;
  /// Send, RecvWait: the peer's global rank, the tag and the bytes moved.
  int64_t peer = 0, tag = 0, bytes = 0;
  /// Steady-clock nanoseconds (the host's monotonic clock).
  int64_t begin = 0, end = 0;
};

/// The steady clock events are stamped with, in nanoseconds.
int64_t nowNanoseconds();

struct RankStats {
  int64_t currentBytes = 0;
  int64_t peakBytes = 0;
  /// Keyed by (kind, mesh id, axes, group size).
  struct Key {
    std::string kind;
    int64_t meshId;
    std::vector<int64_t> axes;
    int groupSize;
    bool operator<(const Key &o) const {
      return std::tie(kind, meshId, axes, groupSize) <
             std::tie(o.kind, o.meshId, o.axes, o.groupSize);
    }
  };
  std::map<Key, CollectiveStat> collectives;
  /// Actions, sends and receive waits in the order they began. Recorded
  /// always (a push per call, no lock: each rank has its own); the host
  /// takes them after each step.
  std::vector<Event> events;
  /// Forgets the counters, keeps current memory (buffers still live).
  void resetCounters() {
    peakBytes = currentBytes;
    collectives.clear();
    events.clear();
  }
};

enum class BackendKind { Threads, MPI };

struct Options {
  BackendKind backend = BackendKind::Threads;
  /// Ranks for the threads backend; MPI takes the launcher's.
  int ranks = 1;
  /// How long a rank waits for its peers in one operation before it
  /// reports them and the whole run fails.
  double timeoutSeconds = 120;
  /// Each rank runs on a GPU (rank modulo the GPUs there are): its buffers
  /// are device buffers, its collectives staged through the host backend.
  bool cuda = false;
  /// On GPUs: how collectives move data. Auto is NCCL where every rank has
  /// a GPU of its own and NCCL is installed, else Host: staged through host
  /// memory over the backend (several ranks may share a GPU).
  enum class GPUCollectives { Auto, NCCL, Host };
  GPUCollectives gpuCollectives = GPUCollectives::Auto;
  /// On GPUs: fp32 GEMMs in TF32 (cuBLAS's tensor-op math: the inputs
  /// rounded to 10 bits of mantissa, fp32 accumulation), not plain fp32.
  bool gpuTF32 = false;
  /// Threads of each rank, for kernels split over them
  /// (`epl-thread-kernels`) and large fp32 GEMMs (Gemm.cpp), and, with one
  /// rank, for OpenBLAS. 0: the cores when one rank runs, else 1 (ranks
  /// already share the cores).
  int threadsPerRank = 0;
};

/// Whether the CUDA driver is installed here, without starting it: what a
/// runner checks before it compiles for GPUs; else `why`, in one line.
/// Loads the driver with dlopen: nothing else on the CPU path needs it.
bool gpuDriverFound(std::string &why);

/// Whether ranks can run on GPUs here (Options::cuda): the CUDA driver
/// starts and sees one; else `why` says what is missing, in one line.
/// `channels`: the program sends messages from GPU to GPU over channels (a
/// pipeline's `direct` messages, Program::directMessages) through NCCL,
/// whose sends wait for their receives in streams of their own: the driver
/// then loads every kernel, cuBLAS's too, before the first step
/// (CUDA_MODULE_LOADING=EAGER), as loading one later may wait for such a
/// send for good. Called before the ranks run, and before anything else
/// starts the driver.
bool gpuAvailable(std::string &why, bool channels = false);

/// The GEMM libraries this runtime was built with (EPL_BLAS): "openblas+dnnl",
/// "openblas", "blis" or "dnnl"; for reports.
const char *gemmLibrary();

/// How this process's GPU ranks communicated so far (--gpu-collectives
/// auto picks per group): "NCCL", "staged through the host", both joined
/// by " and ", or "" (no collective on a GPU); for reports.
std::string gpuCollectivesUsed();

/// The name the runtime's and the runner's messages start with ("epl-run"
/// unless a runner sets its own).
const std::string &toolName();
void setToolName(std::string name);

/// Whether this process was started by an MPI launcher (mpirun, srun).
bool launchedByMPI();
/// The number of processes the launcher started (1 without one).
int launcherWorldSize();
/// This process's rank as the launcher numbered it (0 without one): known
/// before MPI_Init.
int launcherRank();

/// Fault injection for the fault tests: when the environment variable
/// EPL_RT_FAULT is "RANK:POINT[@N]:ACTION" and `rank` is RANK and `point` is
/// POINT, reached for the N-th time by this rank (the first by default),
/// does ACTION to this rank: "stop" (SIGSTOP to this process), "kill"
/// (SIGKILL), or "sleep=SECONDS" (this rank's thread). Points: "start"
/// (epl-run, before compiling), "communicator" (before a rank creates its
/// first communicator, i.e. before its first collective), "nccl" (before a
/// rank on a GPU calls NCCL; the first call creates a communicator),
/// "all_reduce" (in the middle of an all_reduce: its peers have entered it and
/// wait for this rank, for its part under MPI, for its leaving on the threads
/// backend), "write" (rank 0, before it writes files: a checkpoint, or the
/// run's summary, report, trace and results; a slow disk).
void injectFault(const char *point, int rank);
/// Whether the MPI backend was compiled in.
bool mpiAvailable();

/// Runs `body(rank)` on every rank and returns when all have finished. On
/// the threads backend each rank is a thread of this process; on MPI this
/// process is one rank. A rank that fails (fatalError) ends the whole run
/// with exit code 1.
void runRanks(const Options &options, const std::function<void(int)> &body);

/// The rank the calling thread runs as, and the world size.
int currentRank();
int worldSize();
/// What the calling rank runs ("step 3", "evaluation batch 2 of 5"; empty
/// outside the steps), which a failed assertion of the model names.
void setCurrentWork(std::string work);
const std::string &currentWork();
/// The calling rank's threads (Options::threadsPerRank resolved).
int threadsPerRank();
/// Page faults the calling rank's workers (epl_rt_parallel_for) have taken.
int64_t workerPageFaults();
/// Statistics of the calling rank.
RankStats &currentStats();

/// Declares that the calling rank has run its whole program: a peer still
/// waiting for it in a collective fails at once, saying so, instead of
/// waiting for the timeout. Host-side gathers may follow. Called for each
/// rank by runRanks after `body` when `body` did not.
void finishProgram();

/// Copies back every device copy that the calling rank's steps may have
/// written (epl_rt_resident_buffer) to its host buffer, which is stale
/// until then: the runner calls it before it reads a parameter or optimizer
/// state a step updated.
void syncResidentBuffers();

/// Frees the calling rank's device copies of the host buffers in
/// [begin, end) without copying them back (their host buffers are about to
/// go). A rank's are all freed when it leaves runRanks.
void releaseResidentBuffers(const void *begin, const void *end);

/// On a rank bound to a GPU: waits until everything it queued there has
/// run (a step's time is the device's); nothing elsewhere.
void synchronizeDevice();

/// On a rank bound to a GPU: page-locks the host buffer [ptr, ptr + bytes)
/// that the rank's steps copy to and from the device (a batch, a result,
/// offloaded parameters and optimizer state), so that the copies are DMA;
/// false (and nothing to undo) elsewhere or where the driver refuses.
/// `unpinHostBuffer` releases it before the buffer goes.
bool pinHostBuffer(void *ptr, size_t bytes);
void unpinHostBuffer(void *ptr);

/// Gathers bytes from every rank, in rank order, on every rank. Valid inside
/// `runRanks`; every rank must call it.
std::vector<std::vector<char>> allGatherBytes(const std::vector<char> &data);

/// Prints "epl-run: rank R: MESSAGE" and ends the whole run with exit code 1
/// (every rank, on every backend), once the work set by finishBeforeExit is
/// done. Never returns.
[[noreturn]] void fatalError(const std::string &message);

/// Work of this process that an error must not cut short (rank 0 writing a
/// file, which would be lost): fatalError calls `waitForIt` first, on
/// whichever thread fails (`waitForIt` returns at once on the thread doing
/// the work). An empty function clears it.
void finishBeforeExit(std::function<void()> waitForIt);

/// A thread running `body`, `what` ("rank 3's thread") saying what it is
/// when the system cannot start it (a limit on threads or memory): one
/// error line, not std::system_error's abort.
template <typename Body>
std::thread startThread(Body &&body, const std::string &what) {
  try {
    return std::thread(std::forward<Body>(body));
  } catch (const std::system_error &e) {
    fatalError("cannot start " + what + ": " + e.what() +
               " (the system's limit on threads or memory: ulimit -u, "
               "ulimit -v; run fewer ranks or threads per rank)");
  }
}

/// Backend entry points; implemented in threads/ and mpi/.
namespace detail {
class Backend {
public:
  virtual ~Backend();
  virtual int worldSize() = 0;
  /// The ranks of this process, which share its GPUs' contexts.
  virtual int processSize() { return worldSize(); }
  /// The calling rank's index among the ranks of its machine, whose GPUs
  /// they share.
  virtual int machineRank(int rank) { return rank; }
  /// The communicator for `group`, created on first use and cached.
  virtual Communicator &getCommunicator(const Group &group) = 0;
  /// See epl::rt::finishProgram; called once per rank.
  virtual void finishProgram(int rank) = 0;
  /// Prints `message` and ends every rank with exit code 1.
  [[noreturn]] virtual void abort(const std::string &message) = 0;
};
void runThreads(const Options &options, const std::function<void(int)> &body);
void runMPI(const Options &options, const std::function<void(int)> &body);
/// Binds the calling thread to `rank` of `backend`, with fresh stats.
void enterRank(Backend *backend, int rank);
void leaveRank();
} // namespace detail

} // namespace epl::rt

#endif // EPL_RUNTIME_BACKEND_H
