//===- Runtime.cpp - The C ABI lowered EPL programs call ------------------===//
//
// Part of EPL-MLIR.
//
// Unpacks memref descriptors, checks them, resolves device groups, counts
// communication and memory per rank, and forwards to the rank's backend.
//
//===----------------------------------------------------------------------===//

#include "epl/Runtime/Runtime.h"
#include "Descriptor.h"
#include "cuda/Cuda.h"
#include "epl/Runtime/Backend.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <unordered_map>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <mutex>
#include <sched.h>
#include <sstream>
#include <thread>

#include <unistd.h>

using namespace epl::rt;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

size_t epl::rt::dtypeSize(EplDType dtype) {
  switch (dtype) {
  case EPL_RT_F32:
  case EPL_RT_I32:
    return 4;
  case EPL_RT_F64:
  case EPL_RT_I64:
    return 8;
  case EPL_RT_F16:
    return 2;
  }
  return 0;
}

const char *epl::rt::dtypeName(EplDType dtype) {
  switch (dtype) {
  case EPL_RT_F32:
    return "f32";
  case EPL_RT_F64:
    return "f64";
  case EPL_RT_I32:
    return "i32";
  case EPL_RT_I64:
    return "i64";
  case EPL_RT_F16:
    return "f16";
  }
  return "?";
}

const char *epl::rt::reductionName(EplReduction kind) {
  switch (kind) {
  case EPL_RT_SUM:
    return "sum";
  case EPL_RT_MAX:
    return "max";
  case EPL_RT_MIN:
    return "min";
  case EPL_RT_MEAN:
    return "mean";
  }
  return "?";
}

int64_t epl::rt::ringTrafficBytes(const std::string &kind, int64_t bytes,
                                  int groupSize) {
  int64_t n = groupSize;
  if (n <= 1)
    return 0;
  if (kind == "all_reduce")
    return 2 * (n - 1) * bytes / n;
  if (kind == "all_gather")
    return (n - 1) * bytes;
  if (kind == "reduce_scatter" || kind == "all_to_all" || kind == "broadcast")
    return (n - 1) * bytes / n;
  if (kind == "send")
    return bytes;
  return 0; // recv: the sender counts it
}

int64_t epl::rt::nowNanoseconds() {
  using namespace std::chrono;
  return duration_cast<nanoseconds>(steady_clock::now().time_since_epoch())
      .count();
}

std::string epl::rt::formatSeconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g s", seconds);
  return buffer;
}

static std::vector<MeshName> &meshNames() {
  static std::vector<MeshName> names;
  return names;
}

void epl::rt::setMeshNames(std::vector<MeshName> names) {
  meshNames() = std::move(names);
}

std::string Group::describe() const {
  std::ostringstream os;
  const std::vector<MeshName> &names = meshNames();
  bool named = meshId >= 0 && meshId < static_cast<int64_t>(names.size());
  if (named)
    os << "@" << names[meshId].name << " [";
  else if (meshId < 0)
    os << "all ranks [";
  else
    os << "mesh " << meshId << " axes [";
  for (size_t i = 0; i < axes.size(); ++i) {
    os << (i ? ", " : "");
    if (named && axes[i] >= 0 &&
        axes[i] < static_cast<int64_t>(names[meshId].axes.size()))
      os << '"' << names[meshId].axes[axes[i]] << '"';
    else
      os << axes[i];
  }
  os << "] (" << size() << " devices)";
  return os.str();
}

Communicator::~Communicator() = default;
detail::Backend::~Backend() = default;

//===----------------------------------------------------------------------===//
// Rank context
//===----------------------------------------------------------------------===//

namespace {
struct RankContext {
  detail::Backend *backend = nullptr;
  int rank = 0;
  /// Never freed: buffers allocated on this rank point at it, and one may be
  /// released after the rank has finished.
  RankStats *stats = nullptr;
  bool finished = false;
  /// Threads for kernels split over them (Options::threadsPerRank).
  int threads = 1;
  /// Groups by descriptor content: descriptors are per-call-site constants,
  /// so this stays small.
  std::map<std::vector<int64_t>, Group> groups;
  /// On a GPU, where collectives may use NCCL: each rank's GPU's UUID, by
  /// rank (exchanged when the ranks took their GPUs).
  std::vector<std::vector<char>> gpus;
  /// On a GPU: for each host communicator of the program's groups, the one
  /// that moves device buffers (NCCL, or staged through the host one), and
  /// the group's members in group order, which tell host communicators
  /// apart (backends make one per member list), by which the rank destroys
  /// them (destroyDeviceCommunicators).
  struct DeviceCommunicator {
    std::vector<int> members;
    std::unique_ptr<Communicator> comm;
  };
  std::map<Communicator *, DeviceCommunicator> onDevice;
  /// Device copies living from call to call, by host buffer
  /// (epl_rt_resident_buffer).
  struct Resident {
    void *device;
    int64_t bytes;
    bool deviceAhead;
  };
  std::map<const void *, Resident> resident;
  /// Inside epl_rt_message_group_begin/end: the communicator whose
  /// messages the group holds (null until the first), and its last receive
  /// wait (an index in the rank's events, or -1).
  bool inMessageGroup = false;
  Communicator *messageGroup = nullptr;
  int64_t groupLastReceive = -1;
  /// The buffers the program freed inside the open message group. NCCL
  /// reads a group's sends when the group is posted, at its end, so they
  /// are freed then (on a GPU in stream order after it); on every backend
  /// alike, so the measured peak is the one epl-estimate-memory predicts.
  std::vector<void *> freedInMessageGroup;
};
thread_local RankContext *current = nullptr;

/// How this run's GPU ranks communicate (Options::gpuCollectives).
Options::GPUCollectives &gpuCollectivesMode() {
  static Options::GPUCollectives mode = Options::GPUCollectives::Auto;
  return mode;
}

/// Which GPU communicators this process made (gpuCollectivesUsed).
std::atomic<bool> madeNccl{false}, madeStaged{false};

/// Used outside runRanks (e.g. a unit test calling the ABI directly).
RankStats &fallbackStats() {
  static RankStats stats;
  return stats;
}
} // namespace

/// `--threads-per-rank` (Options::threadsPerRank), 0 when not given.
static std::atomic<int> configuredThreads{0};

/// The cores this process may run on (its affinity: a benchmark pinned to
/// one core gets one thread), else the machine's.
static int availableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

/// With several ranks, each GEMM runs on one BLAS thread: ranks already
/// share the cores, and OpenBLAS splits a GEMM differently with more
/// threads (and runs one thread when called from several at once), so
/// threads and MPI ranks would round differently. Looked up at run time:
/// any CBLAS works, only OpenBLAS and BLIS (EPL_BLAS=blis) have threads to
/// set (and oneDNN's OpenMP, EPL_BLAS=dnnl). With one rank, BLIS gets all cores
/// unless BLIS_NUM_THREADS or OMP_NUM_THREADS says otherwise, as OpenBLAS does
/// (BLIS's own default is one thread). With one rank, BLAS also gets the rank's
/// threads when `--threads-per-rank` gives them.
static void setBlasThreads(int worldSize) {
  int configured = configuredThreads.load();
#if defined(EPL_BLAS_BLIS)
  int threads = worldSize > 1 ? 1 : configured;
  if (worldSize <= 1 && configured <= 0 && !std::getenv("BLIS_NUM_THREADS") &&
      !std::getenv("OMP_NUM_THREADS"))
    threads = std::max(1u, std::thread::hardware_concurrency());
  using SetThreads = void (*)(int64_t); // blis.h's dim_t
  if (auto set = reinterpret_cast<SetThreads>(
          dlsym(RTLD_DEFAULT, "bli_thread_set_num_threads"));
      set && threads > 0)
    set(threads);
#else
#if defined(EPL_BLAS_DNNL)
  // oneDNN's fp32 GEMMs run on OpenMP threads: the count is the calling
  // thread's (each rank of the threads backend sets its own), all cores by
  // default with one rank.
  if (auto set = reinterpret_cast<void (*)(int)>(
          dlsym(RTLD_DEFAULT, "omp_set_num_threads")))
    set(worldSize > 1 ? 1 : configured > 0 ? configured : availableCores());
#endif
  if (worldSize <= 1 && configured <= 0)
    return;
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(
          dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    set(worldSize > 1 ? 1 : configured);
#endif
}

void detail::enterRank(Backend *backend, int rank) {
  int worldSize = backend->worldSize();
  setBlasThreads(worldSize);
  current = new RankContext{backend, rank, new RankStats(), false, 1, {}, {}};
  int configured = configuredThreads.load();
  current->threads = configured > 0  ? configured
                     : worldSize > 1 ? 1
                                     : availableCores();
}

int epl::rt::threadsPerRank() { return current ? current->threads : 1; }

/// Destroys the calling rank's device communicators (NCCL's buffers, proxy
/// threads and shared memory go) once its GPU's work is done, while the
/// ranks are together (before the run's last gathers and files): NCCL
/// may wait for a communicator's other members to destroy it too. So every
/// member destroys them in one order, by member list, which tells them
/// apart (backends make a host communicator per member list); the map's
/// order is by this rank's addresses.
static void destroyDeviceCommunicators() {
  if (current->onDevice.empty())
    return;
  // Sends still on side streams (a run that ends early, between steps).
  cuda::synchronizeAll();
  std::vector<RankContext::DeviceCommunicator *> sorted;
  for (auto &[host, entry] : current->onDevice)
    sorted.push_back(&entry);
  std::sort(sorted.begin(), sorted.end(), [](const auto *a, const auto *b) {
    return a->members < b->members;
  });
  for (size_t k = 1; k < sorted.size(); ++k)
    if (sorted[k - 1]->members == sorted[k]->members)
      fatalError("two device communicators over the same ranks (a bug of "
                 "the runtime: their order would differ between ranks)");
  for (RankContext::DeviceCommunicator *entry : sorted)
    entry->comm.reset();
  current->onDevice.clear();
}

void epl::rt::finishProgram() {
  if (!current || current->finished)
    return;
  current->finished = true;
  destroyDeviceCommunicators();
  current->backend->finishProgram(current->rank);
}

void epl::rt::syncResidentBuffers() {
  if (!current)
    return;
  for (auto &[host, r] : current->resident) {
    if (!r.deviceAhead)
      continue;
    if (cuda::bound())
      cuda::copy(const_cast<void *>(host), r.device, r.bytes);
    else
      std::memcpy(const_cast<void *>(host), r.device, r.bytes);
    r.deviceAhead = false;
  }
}

void epl::rt::releaseResidentBuffers(const void *begin, const void *end) {
  if (!current)
    return;
  auto &resident = current->resident;
  for (auto it = resident.lower_bound(begin);
       it != resident.end() && std::less<const void *>()(it->first, end);) {
    _mlir_memref_to_llvm_free(it->second.device);
    it = resident.erase(it);
  }
}

void epl::rt::synchronizeDevice() {
  // The step's sends on side streams too: each is done once received.
  if (cuda::bound())
    cuda::synchronizeAll();
}

bool epl::rt::pinHostBuffer(void *ptr, size_t bytes) {
  return cuda::bound() && cuda::pin(ptr, bytes);
}

void epl::rt::unpinHostBuffer(void *ptr) { cuda::unpin(ptr); }

void detail::leaveRank() {
  finishProgram();
  // Sends still on side streams read buffers about to go (a run that ends
  // early, between steps: the runner waits for each step).
  if (cuda::bound())
    cuda::synchronizeAll();
  releaseResidentBuffers(nullptr, reinterpret_cast<const void *>(UINTPTR_MAX));
  delete current;
  current = nullptr;
}

int epl::rt::currentRank() { return current ? current->rank : 0; }

namespace {
thread_local std::string workOfThisRank;
} // namespace

void epl::rt::setCurrentWork(std::string work) {
  workOfThisRank = std::move(work);
}
const std::string &epl::rt::currentWork() { return workOfThisRank; }
int epl::rt::worldSize() { return current ? current->backend->worldSize() : 1; }
RankStats &epl::rt::currentStats() {
  return current && current->stats ? *current->stats : fallbackStats();
}

std::vector<std::vector<char>>
epl::rt::allGatherBytes(const std::vector<char> &data) {
  if (!current)
    return {data};
  int n = current->backend->worldSize();
  Group world;
  world.meshId = -1;
  for (int r = 0; r < n; ++r)
    world.members.push_back(r);
  world.index = current->rank;
  Communicator &comm = current->backend->getCommunicator(world);

  // Sizes first, then every rank's bytes padded to the largest, as i64 words.
  int64_t size = static_cast<int64_t>(data.size());
  std::vector<int64_t> sizes(n);
  comm.allGather(&size, sizes.data(), 1, EPL_RT_I64);
  int64_t words = (*std::max_element(sizes.begin(), sizes.end()) + 7) / 8;
  std::vector<int64_t> padded(words, 0), all(words * n);
  // An empty vector's data() may be null, which memcpy must not get.
  if (!data.empty())
    std::memcpy(padded.data(), data.data(), data.size());
  comm.allGather(padded.data(), all.data(), words, EPL_RT_I64);
  std::vector<std::vector<char>> result(n);
  for (int r = 0; r < n; ++r) {
    const char *begin = reinterpret_cast<const char *>(all.data() + r * words);
    result[r].assign(begin, begin + sizes[r]);
  }
  return result;
}

namespace {
std::mutex unfinishedMutex;
std::function<void()> unfinished;
} // namespace

void epl::rt::finishBeforeExit(std::function<void()> waitForIt) {
  std::lock_guard<std::mutex> lock(unfinishedMutex);
  unfinished = std::move(waitForIt);
}

void epl::rt::fatalError(const std::string &message) {
  // What was printed stays (the steps' lines; on a GPU, the message of a
  // kernel's failed assertion, which the driver prints to stdout).
  std::fflush(stdout);
  std::function<void()> waitForIt;
  {
    std::lock_guard<std::mutex> lock(unfinishedMutex);
    waitForIt = unfinished;
  }
  if (waitForIt)
    waitForIt();
  std::string line = toolName() + ": rank " + std::to_string(currentRank()) +
                     ": " + message + "\n";
  if (current)
    current->backend->abort(line);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  std::_Exit(1);
}

/// A step allocates and frees the same buffers every time. glibc returns
/// blocks above its mmap threshold (and the heap's top beyond its trim
/// threshold) to the OS on free, so each step faulted them back in, zero-
/// filled: a third of a step's time in the kernel. Freed memory stays.
static void keepFreedMemory() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's maximum on 64-bit
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

/// Under a launcher, which of the job's machines `why` is about.
static std::string onThisMachine(std::string why) {
  if (launchedByMPI()) {
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    why += " (rank " + std::to_string(launcherRank()) + ", on " + host + ")";
  }
  return why;
}

bool epl::rt::gpuDriverFound(std::string &why) {
  if (cuda::driverFound(why))
    return true;
  why = onThisMachine(why);
  return false;
}

bool epl::rt::gpuAvailable(std::string &why, bool channels) {
  if (cuda::available(why, channels))
    return true;
  why = onThisMachine(why);
  return false;
}

std::string epl::rt::gpuCollectivesUsed() {
  std::string used = madeNccl ? "NCCL" : "";
  if (madeStaged)
    used +=
        (used.empty() ? "" : " and ") + std::string("staged through the host");
  return used;
}

void epl::rt::runRanks(const Options &options,
                       const std::function<void(int)> &body) {
  keepFreedMemory();
  configuredThreads.store(options.threadsPerRank);
  // Each rank takes a GPU (its index among the ranks of its machine modulo
  // the GPUs there) before it runs.
  gpuCollectivesMode() = options.gpuCollectives;
  if (options.cuda && options.gpuCollectives != Options::GPUCollectives::Host)
    cuda::loadNccl();
  cuda::setTF32(options.gpuTF32);
  cuda::setTimeout(options.timeoutSeconds);
  auto onDevice = [&](int rank) {
    if (options.cuda) {
      cuda::bindRank(current ? current->backend->machineRank(rank) : rank);
      cuda::loadKernels();
      // Which ranks share a GPU, for NCCL (communicatorFor): known to all
      // before any group forms, as not every group is formed by all its
      // members (a pipeline's stage with nothing to send). On every GPU
      // run, whatever --gpu-collectives says, so that ranks given other
      // values meet here and are told so by the runner's agreement check.
      if (current) {
        std::array<uint8_t, 16> uuid = cuda::gpuUuid();
        current->gpus =
            allGatherBytes(std::vector<char>(uuid.begin(), uuid.end()));
      }
    }
    body(rank);
  };
  if (options.backend == BackendKind::MPI)
    detail::runMPI(options, onDevice);
  else
    detail::runThreads(options, onDevice);
}

//===----------------------------------------------------------------------===//
// Groups
//===----------------------------------------------------------------------===//

Group epl::rt::makeGroup(const int64_t *desc, int64_t length, int rank,
                         int worldSize, const char *op) {
  auto malformed = [&]() {
    fatalError(std::string(op) + ": malformed device group descriptor");
  };
  if (length < 3)
    malformed();
  Group group;
  group.meshId = desc[0];
  int64_t meshRank = desc[1];
  if (meshRank < 1 || length < 3 + meshRank)
    malformed();
  group.meshShape.assign(desc + 2, desc + 2 + meshRank);
  int64_t numAxes = desc[2 + meshRank];
  if (numAxes < 0 || length != 3 + meshRank + numAxes)
    malformed();
  group.axes.assign(desc + 3 + meshRank, desc + 3 + meshRank + numAxes);

  int64_t devices = 1;
  for (int64_t size : group.meshShape)
    devices *= size;
  std::string meshName = "mesh " + std::to_string(group.meshId);
  if (group.meshId >= 0 &&
      group.meshId < static_cast<int64_t>(meshNames().size()))
    meshName = "mesh @" + meshNames()[group.meshId].name;
  if (devices != worldSize)
    fatalError(std::string(op) + ": the program's " + meshName + " has " +
               std::to_string(devices) + " devices but the run has " +
               std::to_string(worldSize) +
               " ranks; run with as many ranks as the mesh has devices");

  // Row-major coordinates of this rank.
  std::vector<int64_t> coords(meshRank);
  for (int64_t d = meshRank - 1, r = rank; d >= 0; --d) {
    coords[d] = r % group.meshShape[d];
    r /= group.meshShape[d];
  }
  // Enumerate the group: vary `axes` major to minor, keep the rest.
  int64_t groupSize = 1;
  for (int64_t axis : group.axes) {
    if (axis < 0 || axis >= meshRank)
      malformed();
    groupSize *= group.meshShape[axis];
  }
  for (int64_t i = 0; i < groupSize; ++i) {
    std::vector<int64_t> c = coords;
    for (int64_t a = numAxes - 1, rest = i; a >= 0; --a) {
      int64_t axis = group.axes[a];
      c[axis] = rest % group.meshShape[axis];
      rest /= group.meshShape[axis];
    }
    int64_t member = 0;
    for (int64_t d = 0; d < meshRank; ++d)
      member = member * group.meshShape[d] + c[d];
    if (member == rank)
      group.index = static_cast<int>(i);
    group.members.push_back(static_cast<int>(member));
  }
  return group;
}

//===----------------------------------------------------------------------===//
// Descriptors
//===----------------------------------------------------------------------===//

namespace {
StridedView contiguous(EplUnrankedMemRef *m, size_t elementSize, const char *op,
                       const char *what) {
  StridedView v = StridedView::of(m, elementSize);
  if (!v.isContiguous())
    fatalError(std::string(op) + ": the " + what +
               " buffer is not contiguous; the lowering must copy strided "
               "views before calling the runtime");
  return v;
}

const Group &resolveGroup(EplUnrankedMemRef *desc, const char *op) {
  StridedView v = StridedView::of(desc, sizeof(int64_t));
  auto *data = reinterpret_cast<const int64_t *>(v.base);
  std::vector<int64_t> key(data, data + v.numElements());
  if (!current) {
    static Group single;
    single = makeGroup(key.data(), key.size(), 0, 1, op);
    return single;
  }
  auto it = current->groups.find(key);
  if (it == current->groups.end())
    it = current->groups
             .emplace(key, makeGroup(key.data(), key.size(), current->rank,
                                     current->backend->worldSize(), op))
             .first;
  return it->second;
}

/// Empty where every member of `group` has a GPU of its own and no GPU of
/// this process serves two ranks; else what is shared. GPUs are told apart
/// by UUID, not by how many a machine has, as a process given one GPU
/// (CUDA_VISIBLE_DEVICES) sees only that one.
std::string sharedGPU(const Group &group) {
  // NCCL kernels of two communicators on one GPU of one process may wait
  // for each other: ranks of a process never share a GPU over NCCL, in any
  // group (all of a group's members are in the process then, so all of them
  // decide so without the exchange).
  int inProcess = current->backend->processSize();
  if (inProcess > cuda::deviceCount())
    return std::to_string(inProcess) + " ranks in this process share " +
           std::to_string(cuda::deviceCount()) + " GPU(s)";
  const std::vector<std::vector<char>> &gpus = current->gpus;
  for (int i = 0; i < group.size(); ++i)
    for (int j = 0; j < i; ++j) {
      const std::vector<char> &gpu = gpus[group.members[i]];
      if (gpu != gpus[group.members[j]])
        continue;
      std::string uuid = "GPU-";
      for (size_t k = 0; k < gpu.size(); ++k) {
        static const char hex[] = "0123456789abcdef";
        if (k == 4 || k == 6 || k == 8 || k == 10)
          uuid += '-';
        uuid += hex[uint8_t(gpu[k]) >> 4];
        uuid += hex[uint8_t(gpu[k]) & 15];
      }
      return "ranks " + std::to_string(group.members[j]) + " and " +
             std::to_string(group.members[i]) + " of " + group.describe() +
             " share " + uuid;
    }
  return "";
}

Communicator *communicatorFor(const Group &group) {
  if (!current)
    return nullptr;
  Communicator &host = current->backend->getCommunicator(group);
  if (!cuda::bound())
    return &host;
  RankContext::DeviceCommunicator &entry = current->onDevice[&host];
  std::unique_ptr<Communicator> &onDevice = entry.comm;
  if (onDevice)
    return onDevice.get();
  entry.members = group.members;
  using Mode = Options::GPUCollectives;
  Mode mode = gpuCollectivesMode();
  std::string shared = mode == Mode::Host ? "" : sharedGPU(group);
  if (!shared.empty() && mode == Mode::NCCL)
    fatalError("--gpu-collectives nccl: " + shared +
               "; NCCL needs a GPU per rank (use host)");
  if (mode == Mode::NCCL || (mode == Mode::Auto && shared.empty())) {
    std::string why;
    onDevice = cuda::ncclFor(host, group, why);
    if (!onDevice && mode == Mode::NCCL)
      fatalError("--gpu-collectives nccl: " + why);
  }
  // Otherwise the host backend gets copies of the device buffers.
  if (onDevice)
    madeNccl.store(true);
  if (!onDevice) {
    onDevice = cuda::stageThroughHost(host, group.size());
    madeStaged.store(true);
  }
  return onDevice.get();
}

void record(const char *kind, const Group &group, int64_t bytes) {
  RankStats::Key key{kind, group.meshId, group.axes, group.size()};
  CollectiveStat &stat = currentStats().collectives[key];
  stat.count += 1;
  stat.bytes += bytes;
  stat.trafficBytes += ringTrafficBytes(kind, bytes, group.size());
}

std::string sizeMismatch(const char *op, const StridedView &in,
                         const StridedView &out, const std::string &expected) {
  return std::string(op) + ": input of shape " + in.shape() +
         " and output of shape " + out.shape() + " do not match (" + expected +
         ")";
}

/// A collective's contiguous input and output buffers and its group.
struct Exchange {
  StridedView in, out;
  const Group &group;
  size_t elementSize;
  size_t bytes() const { return in.numElements() * elementSize; }
  /// Without a backend the group is this device alone: out = in.
  void copyLocally() const {
    // In place (an all-reduce written over its input): nothing to move, and
    // neither memcpy nor cuMemcpy promises anything for overlapping ranges.
    if (out.base == in.base)
      return;
    if (cuda::bound())
      cuda::copy(out.base, in.base, out.numElements() * elementSize);
    else
      std::memcpy(out.base, in.base, out.numElements() * elementSize);
  }
};

Exchange exchangeOf(const char *op, EplDType dtype, EplUnrankedMemRef *in,
                    EplUnrankedMemRef *out, EplUnrankedMemRef *groupDesc) {
  size_t es = dtypeSize(dtype);
  StridedView i = contiguous(in, es, op, "input"),
              o = contiguous(out, es, op, "output");
  return {i, o, resolveGroup(groupDesc, op), es};
}

template <EplDType DT>
void allReduce(EplUnrankedMemRef *in, EplUnrankedMemRef *out,
               EplUnrankedMemRef *groupDesc, int32_t kind) {
  const char *op = "all_reduce";
  Exchange x = exchangeOf(op, DT, in, out, groupDesc);
  if (x.in.numElements() != x.out.numElements())
    fatalError(sizeMismatch(op, x.in, x.out, "expected equal sizes"));
  record(op, x.group, x.bytes());
  if (Communicator *comm = communicatorFor(x.group))
    comm->allReduce(x.in.base, x.out.base, x.in.numElements(), DT,
                    static_cast<EplReduction>(kind));
  else
    x.copyLocally();
}

template <EplDType DT>
void allGather(EplUnrankedMemRef *in, EplUnrankedMemRef *out,
               EplUnrankedMemRef *groupDesc) {
  const char *op = "all_gather";
  Exchange x = exchangeOf(op, DT, in, out, groupDesc);
  if (x.out.numElements() != x.in.numElements() * x.group.size())
    fatalError(sizeMismatch(op, x.in, x.out,
                            "the output must hold " +
                                std::to_string(x.group.size()) + " inputs"));
  record(op, x.group, x.bytes());
  if (Communicator *comm = communicatorFor(x.group))
    comm->allGather(x.in.base, x.out.base, x.in.numElements(), DT);
  else
    x.copyLocally();
}

template <EplDType DT>
void reduceScatter(EplUnrankedMemRef *in, EplUnrankedMemRef *out,
                   EplUnrankedMemRef *groupDesc, int32_t kind) {
  const char *op = "reduce_scatter";
  Exchange x = exchangeOf(op, DT, in, out, groupDesc);
  if (x.in.numElements() != x.out.numElements() * x.group.size())
    fatalError(sizeMismatch(op, x.in, x.out,
                            "the input must hold " +
                                std::to_string(x.group.size()) + " outputs"));
  record(op, x.group, x.bytes());
  if (Communicator *comm = communicatorFor(x.group))
    comm->reduceScatter(x.in.base, x.out.base, x.out.numElements(), DT,
                        static_cast<EplReduction>(kind));
  else
    x.copyLocally();
}

template <EplDType DT>
void allToAll(EplUnrankedMemRef *in, EplUnrankedMemRef *out,
              EplUnrankedMemRef *groupDesc) {
  const char *op = "all_to_all";
  Exchange x = exchangeOf(op, DT, in, out, groupDesc);
  if (x.in.numElements() != x.out.numElements() ||
      x.in.numElements() % x.group.size() != 0)
    fatalError(sizeMismatch(op, x.in, x.out,
                            "expected equal sizes divisible by " +
                                std::to_string(x.group.size())));
  record(op, x.group, x.bytes());
  if (Communicator *comm = communicatorFor(x.group))
    comm->allToAll(x.in.base, x.out.base, x.in.numElements() / x.group.size(),
                   DT);
  else
    x.copyLocally();
}

template <EplDType DT>
void broadcast(EplUnrankedMemRef *in, EplUnrankedMemRef *out,
               EplUnrankedMemRef *groupDesc, int64_t root) {
  const char *op = "broadcast";
  Exchange x = exchangeOf(op, DT, in, out, groupDesc);
  if (x.in.numElements() != x.out.numElements())
    fatalError(sizeMismatch(op, x.in, x.out, "expected equal sizes"));
  if (root < 0 || root >= x.group.size())
    fatalError("broadcast: root " + std::to_string(root) +
               " is not in the group " + x.group.describe());
  record(op, x.group, x.bytes());
  if (Communicator *comm = communicatorFor(x.group))
    comm->broadcast(x.in.base, x.out.base, x.in.numElements(), DT,
                    static_cast<int>(root));
  else
    x.copyLocally();
}

/// The communicator of `group`'s sends and receives, in the open message
/// group if there is one. A group's messages go over one communicator:
/// NCCL would post another's as a group of their own, after the first, and
/// sends of the two could wait for each other (the lowering refuses such
/// groups).
Communicator *messagesFor(const Group &group, const char *op) {
  Communicator *comm = communicatorFor(group);
  if (!current || !current->inMessageGroup || current->messageGroup == comm)
    return comm;
  if (current->messageGroup)
    fatalError(std::string(op) +
               ": a message group's messages go over one "
               "device group; this one is " +
               group.describe());
  comm->beginMessages();
  current->messageGroup = comm;
  return comm;
}

/// Appends a timed send or receive wait that began at `begin`.
void recordPointToPoint(Event::Kind kind, const Group &group, int64_t peer,
                        int64_t tag, int64_t bytes, int64_t begin) {
  Event e;
  e.kind = kind;
  e.peer = group.members[peer];
  e.tag = tag;
  e.bytes = bytes;
  e.begin = begin;
  e.end = nowNanoseconds();
  currentStats().events.push_back(e);
}

/// Whether a message's tag says it is direct (EPL_RT_DIRECT_TAG), which
/// it then drops: the stream is the rest.
bool takeDirect(int64_t &tag) {
  bool direct = tag & EPL_RT_DIRECT_TAG;
  tag &= ~EPL_RT_DIRECT_TAG;
  return direct;
}

template <EplDType DT>
void send(EplUnrankedMemRef *in, EplUnrankedMemRef *groupDesc, int64_t peer,
          int64_t tag) {
  const char *op = "send";
  size_t es = dtypeSize(DT);
  StridedView i = contiguous(in, es, op, "input");
  const Group &group = resolveGroup(groupDesc, op);
  if (peer < 0 || peer >= group.size() || peer == group.index)
    fatalError("send: peer " + std::to_string(peer) +
               " is not another device of the group " + group.describe());
  int64_t bytes = i.numElements() * es;
  record(op, group, bytes);
  int64_t begin = nowNanoseconds();
  Communicator *comm = messagesFor(group, op);
  if (takeDirect(tag))
    comm->sendDirect(i.base, i.numElements(), DT, static_cast<int>(peer), tag);
  else
    comm->send(i.base, i.numElements(), DT, static_cast<int>(peer), tag);
  recordPointToPoint(Event::Kind::Send, group, peer, tag, bytes, begin);
}

template <EplDType DT>
void recv(EplUnrankedMemRef *out, EplUnrankedMemRef *groupDesc, int64_t peer,
          int64_t tag) {
  const char *op = "recv";
  size_t es = dtypeSize(DT);
  StridedView o = contiguous(out, es, op, "output");
  const Group &group = resolveGroup(groupDesc, op);
  if (peer < 0 || peer >= group.size() || peer == group.index)
    fatalError("recv: peer " + std::to_string(peer) +
               " is not another device of the group " + group.describe());
  int64_t bytes = o.numElements() * es;
  record(op, group, bytes);
  // The wait: from asking until the message is in `out` (in a message
  // group on a GPU, the group's end waits, and ends its last receive's).
  int64_t begin = nowNanoseconds();
  Communicator *comm = messagesFor(group, op);
  if (takeDirect(tag))
    comm->recvDirect(o.base, o.numElements(), DT, static_cast<int>(peer), tag);
  else
    comm->recv(o.base, o.numElements(), DT, static_cast<int>(peer), tag);
  recordPointToPoint(Event::Kind::RecvWait, group, peer, tag, bytes, begin);
  if (current && current->inMessageGroup)
    current->groupLastReceive = currentStats().events.size() - 1;
}
} // namespace

#define EPL_RT_DEFINE_COLLECTIVES(T, DT)                                       \
  void _mlir_ciface_epl_rt_all_reduce_##T(                                     \
      EplUnrankedMemRef *in, EplUnrankedMemRef *out, EplUnrankedMemRef *group, \
      int32_t kind) {                                                          \
    allReduce<DT>(in, out, group, kind);                                       \
  }                                                                            \
  void _mlir_ciface_epl_rt_all_gather_##T(EplUnrankedMemRef *in,               \
                                          EplUnrankedMemRef *out,              \
                                          EplUnrankedMemRef *group) {          \
    allGather<DT>(in, out, group);                                             \
  }                                                                            \
  void _mlir_ciface_epl_rt_reduce_scatter_##T(                                 \
      EplUnrankedMemRef *in, EplUnrankedMemRef *out, EplUnrankedMemRef *group, \
      int32_t kind) {                                                          \
    reduceScatter<DT>(in, out, group, kind);                                   \
  }                                                                            \
  void _mlir_ciface_epl_rt_all_to_all_##T(EplUnrankedMemRef *in,               \
                                          EplUnrankedMemRef *out,              \
                                          EplUnrankedMemRef *group) {          \
    allToAll<DT>(in, out, group);                                              \
  }                                                                            \
  void _mlir_ciface_epl_rt_broadcast_##T(                                      \
      EplUnrankedMemRef *in, EplUnrankedMemRef *out, EplUnrankedMemRef *group, \
      int64_t root) {                                                          \
    broadcast<DT>(in, out, group, root);                                       \
  }                                                                            \
  void _mlir_ciface_epl_rt_send_##T(EplUnrankedMemRef *in,                     \
                                    EplUnrankedMemRef *group, int64_t peer,    \
                                    int64_t tag) {                             \
    send<DT>(in, group, peer, tag);                                            \
  }                                                                            \
  void _mlir_ciface_epl_rt_recv_##T(EplUnrankedMemRef *out,                    \
                                    EplUnrankedMemRef *group, int64_t peer,    \
                                    int64_t tag) {                             \
    recv<DT>(out, group, peer, tag);                                           \
  }

extern "C" {
EPL_RT_DEFINE_COLLECTIVES(f32, EPL_RT_F32)
EPL_RT_DEFINE_COLLECTIVES(f64, EPL_RT_F64)
EPL_RT_DEFINE_COLLECTIVES(i32, EPL_RT_I32)
EPL_RT_DEFINE_COLLECTIVES(i64, EPL_RT_I64)
EPL_RT_DEFINE_COLLECTIVES(f16, EPL_RT_F16)

void _mlir_ciface_epl_rt_barrier(EplUnrankedMemRef *groupDesc) {
  const Group &group = resolveGroup(groupDesc, "barrier");
  if (Communicator *comm = communicatorFor(group))
    comm->barrier();
}

void _mlir_ciface_epl_rt_assert_failed(EplUnrankedMemRef *message) {
  StridedView text = StridedView::of(message, 1);
  epl::rt::fatalError(std::string("the model's assertion failed") +
                      (workOfThisRank.empty() ? "" : " in " + workOfThisRank) +
                      ": \"" + std::string(text.base, text.numElements()) +
                      "\"");
}

int64_t _mlir_ciface_epl_rt_group_index(EplUnrankedMemRef *group) {
  return resolveGroup(group, "group_index").index;
}

double epl_rt_now(void) {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

void _mlir_ciface_epl_rt_message_group_begin(void) {
  if (!current)
    return; // outside runRanks: one rank, no messages
  if (current->inMessageGroup)
    fatalError("message_group_begin: a message group is open already");
  current->inMessageGroup = true;
}

void _mlir_ciface_epl_rt_message_group_end(void) {
  if (!current)
    return;
  if (!current->inMessageGroup)
    fatalError("message_group_end: no message group is open");
  if (current->messageGroup)
    current->messageGroup->endMessages();
  current->inMessageGroup = false;
  for (void *ptr : current->freedInMessageGroup)
    _mlir_memref_to_llvm_free(ptr);
  current->freedInMessageGroup.clear();
  // On a GPU the receives are done when the stream has done the group (the
  // next action would wait for it anyway): that wait is the group's last
  // receive's, once, as the report sums the waits.
  if (cuda::bound() && current->groupLastReceive >= 0) {
    cuda::synchronize();
    currentStats().events[current->groupLastReceive].end = nowNanoseconds();
  }
  current->groupLastReceive = -1;
  current->messageGroup = nullptr;
}

void _mlir_ciface_epl_rt_open_channel(EplUnrankedMemRef *groupDesc,
                                      int64_t peer) {
  const Group &group = resolveGroup(groupDesc, "open_channel");
  if (peer < 0 || peer >= group.size() || peer == group.index)
    fatalError("open_channel: peer " + std::to_string(peer) +
               " is not another device of the group " + group.describe());
  if (Communicator *comm = communicatorFor(group))
    comm->openChannel(static_cast<int>(peer));
}

void _mlir_ciface_epl_rt_prepare_group(EplUnrankedMemRef *groupDesc) {
  const Group &group = resolveGroup(groupDesc, "prepare_group");
  if (Communicator *comm = communicatorFor(group))
    comm->prepare();
}

void _mlir_ciface_epl_rt_action_begin(int32_t phase, int64_t microBatch,
                                      int64_t stage) {
  // On a GPU, the action's time is the device's: what came before is done.
  if (cuda::bound())
    cuda::synchronize();
  Event e;
  e.phase = phase;
  e.microBatch = microBatch;
  e.stage = stage;
  e.begin = nowNanoseconds();
  currentStats().events.push_back(e);
}

void _mlir_ciface_epl_rt_action_end(void) {
  if (cuda::bound())
    cuda::synchronize();
  int64_t end = nowNanoseconds();
  // The open action is the latest one: actions do not nest, and only
  // point-to-point events may follow it.
  std::vector<Event> &events = currentStats().events;
  for (auto it = events.rbegin(); it != events.rend(); ++it)
    if (it->kind == Event::Kind::Action) {
      if (it->end == 0) {
        it->end = end;
        return;
      }
      break;
    }
  fatalError("action_end without a matching action_begin");
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

namespace {
/// Stored just below every block handed out, so that free knows the size
/// and the rank to credit even when another thread frees it.
struct BlockHeader {
  void *raw;
  uint64_t size;
  RankStats *owner;
  uint64_t magic;
};
constexpr uint64_t kMagic = 0x45504c4d454d4f52ull; // "EPLMEMOR"
std::mutex &statsMutex() {
  static std::mutex m;
  return m;
}
} // namespace

namespace {
/// A rank on a GPU allocates device memory (aligned to 256 bytes by the
/// driver), which holds no header: its sizes are kept here.
std::unordered_map<void *, std::pair<uint64_t, RankStats *>> &deviceBlocks() {
  static std::unordered_map<void *, std::pair<uint64_t, RankStats *>> blocks;
  return blocks;
}

void countAllocation(RankStats &stats, uint64_t size) {
  stats.currentBytes += static_cast<int64_t>(size);
  stats.peakBytes = std::max(stats.peakBytes, stats.currentBytes);
}
} // namespace

void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size) {
  if (cuda::bound()) {
    void *ptr = cuda::allocate(size);
    RankStats &stats = currentStats();
    std::lock_guard<std::mutex> lock(statsMutex());
    deviceBlocks()[ptr] = {size, &stats};
    countAllocation(stats, size);
    return ptr;
  }
  if (alignment < alignof(BlockHeader))
    alignment = alignof(BlockHeader);
  uint64_t total = size + alignment + sizeof(BlockHeader);
  char *raw = static_cast<char *>(std::malloc(total));
  if (!raw)
    fatalError("out of memory allocating " + std::to_string(size) + " bytes");
  uintptr_t start = reinterpret_cast<uintptr_t>(raw) + sizeof(BlockHeader);
  uintptr_t aligned = (start + alignment - 1) / alignment * alignment;
  auto *header = reinterpret_cast<BlockHeader *>(aligned) - 1;
  RankStats &stats = currentStats();
  *header = BlockHeader{raw, size, &stats, kMagic};
  {
    std::lock_guard<std::mutex> lock(statsMutex());
    countAllocation(stats, size);
  }
  return reinterpret_cast<void *>(aligned);
}

void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  return _mlir_memref_to_llvm_aligned_alloc(16, size);
}

void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  if (current && current->inMessageGroup) {
    current->freedInMessageGroup.push_back(ptr);
    return;
  }
  if (cuda::bound()) {
    std::pair<uint64_t, RankStats *> block;
    {
      std::lock_guard<std::mutex> lock(statsMutex());
      auto it = deviceBlocks().find(ptr);
      if (it == deviceBlocks().end())
        fatalError("freeing a GPU buffer the runtime did not allocate");
      block = it->second;
      deviceBlocks().erase(it);
      block.second->currentBytes -= static_cast<int64_t>(block.first);
    }
    cuda::release(ptr, block.first);
    return;
  }
  auto *header = static_cast<BlockHeader *>(ptr) - 1;
  if (header->magic != kMagic)
    fatalError("freeing a buffer the runtime did not allocate");
  header->magic = 0;
  {
    std::lock_guard<std::mutex> lock(statsMutex());
    header->owner->currentBytes -= static_cast<int64_t>(header->size);
  }
  std::free(header->raw);
}

void *epl_rt_resident_buffer(void *host, int64_t bytes, int32_t written) {
  if (!current)
    fatalError("epl_rt_resident_buffer: called outside a rank");
  auto [it, made] = current->resident.try_emplace(
      host, RankContext::Resident{nullptr, bytes, false});
  RankContext::Resident &r = it->second;
  if (made) {
    r.device = _mlir_memref_to_llvm_aligned_alloc(64, bytes);
    if (cuda::bound())
      cuda::copy(r.device, host, bytes);
    else
      std::memcpy(r.device, host, bytes);
  } else if (r.bytes != bytes) {
    fatalError("epl_rt_resident_buffer: the buffer at " +
               std::to_string(reinterpret_cast<uintptr_t>(host)) + " was " +
               std::to_string(r.bytes) + " bytes, now " +
               std::to_string(bytes));
  }
  r.deviceAhead |= written != 0;
  return r.device;
}
} // extern "C"
