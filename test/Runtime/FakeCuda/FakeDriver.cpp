//===- FakeDriver.cpp - A CUDA driver without a GPU, for tests ------------===//
//
// Part of EPL-MLIR.
//
// The driver functions the runtime calls (lib/Runtime/cuda/Cuda.cpp), with
// the checks the real driver makes that matter for a program's
// correctness: a context must be current on the calling thread, a stream
// belongs to a context, launches respect the grid and block limits, copies
// and frees name live device buffers, and device memory is only touched by
// device work (FakeCuda.h). Work runs at once, in the calling thread, so
// every stream is always idle, except in a stream that hangs and one that
// holds pending work (an NCCL send waiting for its receive,
// eplFakeCudaAddPendingWork): events recorded on it are done when that is,
// and a stream made to wait for such an event waits in the calling thread.
//
// EPL_FAKE_CUDA_HANG_AFTER_LAUNCHES=N: the kernel launched after the first
// N (counted over the process) never finishes, as a kernel waiting for a
// peer that never comes (an NCCL collective of a rank that died) does on a
// GPU: its stream runs nothing more, cuStreamQuery says CUDA_ERROR_NOT_READY
// and cuStreamSynchronize blocks for good.
//
// GPUs: EPL_FAKE_CUDA_DEVICES of them (default 1), of which the process
// sees those CUDA_VISIBLE_DEVICES lists by index (up to the first entry
// that is none, as CUDA reads it), renumbered from 0. A GPU's UUID is its
// index among all of them and EPL_FAKE_CUDA_MACHINE (default 0), which
// tests give processes that stand for other machines.
//
// Kernel images: a real cubin or fatbin is refused as a GPU of another
// architecture refuses it (CUDA_ERROR_NO_BINARY_FOR_GPU); PTX is compiled
// as the driver does, which refuses a `.target` newer than the GPU
// (CUDA_ERROR_INVALID_PTX) or a `.version` newer than the driver's
// (CUDA_ERROR_UNSUPPORTED_PTX_VERSION), with a line in the error log; PTX
// it could compile, the fake cannot run (CUDA_ERROR_NOT_SUPPORTED).
// EPL_FAKE_CUDA_DRIVER_VERSION is the driver's CUDA version (default 13000,
// 13.0: PTX 9.0). `epl-host-kernels:M` (what
// `epl-compile --gpu-host-kernels` embeds) names a kernel module compiled
// for the host, whose kernel K is the function `__epl_host_launch_M_K` in
// one of the loaded objects (the first that has it: a process runs one
// such program, as epl-exec does).
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <cuda.h>

#include <dlfcn.h>
#include <link.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {
struct Context {
  int device;
  /// What every call in the context returns once a kernel's assertion
  /// failed (CUDA_ERROR_ASSERT: the context is unusable, as on a GPU).
  CUresult failed = CUDA_SUCCESS;
};
/// Work done when `done(arg)` says so (eplFakeCudaAddPendingWork).
struct Pending {
  uintptr_t begin, end;
  bool (*done)(void *);
  void *arg;
  bool finished = false;
  bool poll() {
    if (!finished && done(arg))
      finished = true;
    return finished;
  }
};
struct Stream {
  Context *context;
  bool hung = false;
  std::vector<std::shared_ptr<Pending>> pending;
  /// Forgets the pending work that is done; whether all of it is.
  bool poll() {
    pending.erase(std::remove_if(pending.begin(), pending.end(),
                                 [](auto &p) { return p->poll(); }),
                  pending.end());
    return pending.empty();
  }
};
/// What was on a stream when the event was recorded.
struct Event {
  Context *context;
  bool hung = false;
  std::vector<std::shared_ptr<Pending>> pending;
  bool poll() {
    for (auto &p : pending)
      if (!p->poll())
        return false;
    return true;
  }
};
using Launcher = void (*)(void **params, int64_t gridX, int64_t gridY,
                          int64_t gridZ, int64_t blockX, int64_t blockY,
                          int64_t blockZ);
struct Function {
  std::string name;
  Launcher launch;
  /// Loaded onto the GPU (cuModuleGetFunction, cuFuncLoad), as the driver's
  /// lazy loading does it: not by cuModuleLoadData, nor by enumerating;
  /// under eager loading (CUDA_MODULE_LOADING=EAGER), with its module.
  /// (Ranks sharing a GPU share its context, and load in turn.)
  std::atomic<bool> loaded{false};
};
struct Module {
  std::string name;
  /// Its kernels, as the image lists them, in order.
  std::vector<std::unique_ptr<Function>> functions;
};

/// Variable `name` as an integer in [low, high], `fallback` when unset: a
/// test whose fake GPU is not the one it asked for must not run on.
int envInt(const char *name, int fallback, long low, long high) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return fallback;
  char *end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (*end || errno || value < low || value > high) {
    std::string message = std::string(name) + "=" + text +
                          " is not an integer from " + std::to_string(low) +
                          " to " + std::to_string(high);
    eplFakeCudaFail("driver", message.c_str());
  }
  return static_cast<int>(value);
}

/// Device memory: one arena, first fit, freed blocks merged.
struct Arena {
  char *base = nullptr;
  size_t size = 0;
  std::map<uintptr_t, size_t> freeBlocks; // start -> size
  struct Live {
    size_t size;
    int device;
  };
  std::map<uintptr_t, Live> live; // start -> block
  int working = 0;                // device operations in flight

  void init() {
    size = size_t(envInt("EPL_FAKE_CUDA_MEMORY_MB", 4096, 1, 1 << 20)) << 20;
    void *p = mmap(nullptr, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      eplFakeCudaFail("driver", "cannot reserve the device arena");
    base = static_cast<char *>(p);
    freeBlocks[reinterpret_cast<uintptr_t>(base)] = size;
  }
  bool contains(const void *p) const {
    auto a = reinterpret_cast<uintptr_t>(p);
    auto b = reinterpret_cast<uintptr_t>(base);
    return a >= b && a < b + size;
  }
  /// The live block holding [p, p + bytes), if any.
  const std::pair<const uintptr_t, Live> *find(const void *p,
                                               size_t bytes) const {
    auto a = reinterpret_cast<uintptr_t>(p);
    auto it = live.upper_bound(a);
    if (it == live.begin())
      return nullptr;
    --it;
    if (a + bytes > it->first + it->second.size)
      return nullptr;
    return &*it;
  }
  void *allocate(size_t bytes, int device) {
    bytes = (bytes + 255) / 256 * 256; // cudaMalloc's alignment
    for (auto it = freeBlocks.begin(); it != freeBlocks.end(); ++it) {
      if (it->second < bytes)
        continue;
      uintptr_t start = it->first;
      size_t rest = it->second - bytes;
      freeBlocks.erase(it);
      if (rest)
        freeBlocks[start + bytes] = rest;
      live[start] = {bytes, device};
      return reinterpret_cast<void *>(start);
    }
    return nullptr;
  }
  bool release(uintptr_t start) {
    auto it = live.find(start);
    if (it == live.end())
      return false;
    size_t bytes = it->second.size;
    live.erase(it);
    auto next = freeBlocks.lower_bound(start);
    if (next != freeBlocks.end() && next->first == start + bytes) {
      bytes += next->second;
      freeBlocks.erase(next);
    }
    auto prev = freeBlocks.lower_bound(start);
    if (prev != freeBlocks.begin()) {
      --prev;
      if (prev->first + prev->second == start) {
        prev->second += bytes;
        return true;
      }
    }
    freeBlocks[start] = bytes;
    return true;
  }
};

struct Driver {
  std::mutex mutex;
  /// Page-locked host ranges: start -> bytes.
  std::map<uintptr_t, size_t> pinned;
  size_t pinnedBytes = 0, mostPinnedBytes = 0;
  bool initialized = false;
  int devices = 1;
  /// The GPUs this process sees (CUDA_VISIBLE_DEVICES): their indices
  /// among the machine's.
  std::vector<int> visible;
  int machine = 0;
  int sm = 90;
  int version = 13000;
  /// Launches before one hangs (EPL_FAKE_CUDA_HANG_AFTER_LAUNCHES); -1: none.
  long hangAfterLaunches = -1;
  long launches = 0;
  /// A GPU without stream-ordered memory pools (EPL_FAKE_CUDA_NO_POOLS),
  /// as some virtualized ones are: only plain allocations.
  bool noPools = false;
  /// CUDA_MODULE_LOADING=EAGER when cuInit ran: kernels load with their
  /// module, not at their first use (the default, LAZY).
  bool eagerLoading = false;
  std::vector<std::unique_ptr<Context>> contexts; // primary, per device
  Arena arena;
};

Driver &driver() {
  static Driver *d = new Driver; // used until the process ends
  return *d;
}

thread_local Context *current = nullptr;

/// Pending work by context (each one's used by one rank's thread).
std::mutex pendingMutex;
std::map<Context *, std::vector<std::weak_ptr<Pending>>> pendingReads;

/// Whether unfinished pending work of the current context reads
/// [begin, end).
bool pendingReadOverlaps(uintptr_t begin, uintptr_t end) {
  std::vector<std::shared_ptr<Pending>> live;
  {
    std::lock_guard<std::mutex> lock(pendingMutex);
    auto &reads = pendingReads[current];
    reads.erase(std::remove_if(reads.begin(), reads.end(),
                               [](auto &w) { return w.expired(); }),
                reads.end());
    for (auto &w : reads)
      if (auto p = w.lock())
        live.push_back(p);
  }
  for (auto &p : live)
    if (p->begin < end && begin < p->end && !p->poll())
      return true;
  return false;
}

struct sigaction previousSegv;

/// A fault in the arena outside device work: host code touched a device
/// buffer, which on a GPU reads garbage or crashes.
void onSegv(int signal, siginfo_t *info, void *context) {
  if (driver().arena.contains(info->si_addr)) {
    char line[200];
    int n = std::snprintf(line, sizeof(line),
                          "fake CUDA driver: host code touched device memory "
                          "at %p outside a kernel, copy or library call\n",
                          info->si_addr);
    if (write(STDERR_FILENO, line, n) < 0) {
    }
    _exit(86);
  }
  sigaction(SIGSEGV, &previousSegv, nullptr);
  raise(signal);
}

CUresult needContext() {
  if (!driver().initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  return current ? current->failed : CUDA_ERROR_INVALID_CONTEXT;
}

/// Where a kernel running on this thread goes when its assertion fails.
thread_local jmp_buf *kernelExit = nullptr;

/// CUDA's device-side assertion, which the kernels compiled for the host
/// call through `__epl_host_assertfail_<module>`: prints what a GPU prints
/// (to standard output, as the device's printf), stops the kernel and
/// fails the context.
void assertfail(const char *message, const char *file, unsigned line,
                const char *function, size_t) {
  // A GPU also names the block and thread, which the host loops do not
  // pass here.
  std::printf("%s:%u: %s: Assertion `%s` failed.\n", file, line, function,
              message);
  std::fflush(stdout);
  if (!kernelExit || !current)
    eplFakeCudaFail("driver", "an assertion failed outside a kernel");
  current->failed = CUDA_ERROR_ASSERT;
  longjmp(*kernelExit, 1);
}

/// What the kernels compiled for the host call with each buffer they are
/// launched with, through `__epl_host_check_buffer_<module>`: a GPU faults
/// on a pointer to host memory or to another GPU's, and loses its context
/// for good, where the host loops would read it.
void checkKernelBuffer(const char *kernel, int32_t argument, const void *ptr,
                       int64_t bytes) {
  if (bytes <= 0 || eplFakeCudaIsDeviceBuffer(ptr, bytes))
    return;
  char message[400];
  std::snprintf(message, sizeof(message),
                "kernel %s was launched with argument %d (%lld bytes at %p) "
                "outside this GPU's memory (a host buffer, or another GPU's): "
                "a GPU would stop it with CUDA_ERROR_ILLEGAL_ADDRESS",
                kernel, argument, static_cast<long long>(bytes), ptr);
  eplFakeCudaFail("driver", message);
}

/// Driver calls that may synchronize the GPU (plain allocation and free,
/// pinning) wait for a send in flight, and so its peer for this rank, for
/// good: the run ends, naming `call`.
void refuseSynchronizingWithASendInFlight(const char *call) {
  if (!pendingReadOverlaps(0, UINTPTR_MAX))
    return;
  std::string message =
      std::string(call) +
      " while a send of this GPU waits for its receive: it may synchronize "
      "the GPU, which would wait for the send, and the peer for this rank, "
      "for good";
  eplFakeCudaFail("driver", message.c_str());
}

CUresult needDevice(int ordinal) {
  if (!driver().initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  return ordinal >= 0 && ordinal < driver().devices ? CUDA_SUCCESS
                                                    : CUDA_ERROR_INVALID_DEVICE;
}

CUresult checkStream(CUstream stream) {
  if (CUresult r = needContext())
    return r;
  // The runtime uses its own streams, never the legacy default one.
  auto *s = reinterpret_cast<Stream *>(stream);
  if (!s || s->context != current)
    return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}

/// Finds `symbol` in any object loaded into the process (the artifact is
/// opened with RTLD_LOCAL, so dlsym(RTLD_DEFAULT) does not see it). The
/// objects are listed first and opened after: dlopen inside
/// dl_iterate_phdr's callback deadlocks with another thread's dlopen.
void *findSymbol(const std::string &symbol) {
  std::vector<std::string> objects;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) -> int {
        static_cast<std::vector<std::string> *>(data)->push_back(
            info->dlpi_name ? info->dlpi_name : "");
        return 0;
      },
      &objects);
  for (const std::string &object : objects) {
    void *handle = dlopen(object.empty() ? nullptr : object.c_str(),
                          RTLD_NOW | RTLD_NOLOAD);
    if (!handle)
      continue;
    void *found = dlsym(handle, symbol.c_str());
    dlclose(handle);
    if (found)
      return found;
  }
  return nullptr;
}
} // namespace

extern "C" {
bool eplFakeCudaIsDeviceBuffer(const void *ptr, size_t bytes) {
  Driver &d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  auto *block = d.arena.find(ptr, bytes ? bytes : 1);
  return block && current && block->second.device == current->device;
}

bool eplFakeCudaSendInFlight() { return pendingReadOverlaps(0, UINTPTR_MAX); }

bool eplFakeCudaLoadsLazily() { return !driver().eagerLoading; }

bool eplFakeCudaIsCurrentStream(const void *stream) {
  return checkStream(const_cast<CUstream>(
             static_cast<const CUstream_st *>(stream))) == CUDA_SUCCESS;
}

void eplFakeCudaBeginDeviceWork() {
  Driver &d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  if (d.arena.working++ == 0)
    mprotect(d.arena.base, d.arena.size, PROT_READ | PROT_WRITE);
}

void eplFakeCudaEndDeviceWork() {
  Driver &d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  if (--d.arena.working == 0)
    mprotect(d.arena.base, d.arena.size, PROT_NONE);
}

void eplFakeCudaAddPendingWork(const void *stream, const void *ptr,
                               size_t bytes, bool (*done)(void *), void *arg) {
  auto *s = reinterpret_cast<Stream *>(const_cast<void *>(stream));
  auto begin = reinterpret_cast<uintptr_t>(ptr);
  auto p = std::make_shared<Pending>(Pending{begin, begin + bytes, done, arg});
  s->pending.push_back(p);
  std::lock_guard<std::mutex> lock(pendingMutex);
  pendingReads[current].push_back(p);
}

void eplFakeCudaFail(const char *library, const char *message) {
  std::fprintf(stderr, "fake %s: %s\n", library, message);
  std::fflush(stderr);
  _exit(86);
}

CUresult cuInit(unsigned int flags) {
  Driver &d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  if (flags)
    return CUDA_ERROR_INVALID_VALUE;
  if (d.initialized)
    return CUDA_SUCCESS;
  int machineDevices = envInt("EPL_FAKE_CUDA_DEVICES", 1, 0, 64);
  for (int k = 0; k < machineDevices; ++k)
    d.visible.push_back(k);
  if (const char *list = std::getenv("CUDA_VISIBLE_DEVICES")) {
    d.visible.clear();
    for (const char *at = list; *at;) {
      char *end = nullptr;
      long k = std::strtol(at, &end, 10);
      if (end == at || (*end && *end != ',') || k < 0 || k >= machineDevices ||
          std::find(d.visible.begin(), d.visible.end(), int(k)) !=
              d.visible.end())
        break;
      d.visible.push_back(int(k));
      at = *end ? end + 1 : end;
    }
  }
  d.devices = d.visible.size();
  d.machine = envInt("EPL_FAKE_CUDA_MACHINE", 0, 0, INT32_MAX);
  d.sm = envInt("EPL_FAKE_CUDA_SM", 90, 10, 999);
  d.version = envInt("EPL_FAKE_CUDA_DRIVER_VERSION", 13000, 1000, 99999);
  d.hangAfterLaunches =
      envInt("EPL_FAKE_CUDA_HANG_AFTER_LAUNCHES", -1, -1, INT32_MAX);
  d.noPools = envInt("EPL_FAKE_CUDA_NO_POOLS", 0, 0, 1) != 0;
  const char *loading = std::getenv("CUDA_MODULE_LOADING");
  d.eagerLoading = loading && std::strcmp(loading, "EAGER") == 0;
  for (int k = 0; k < d.devices; ++k)
    d.contexts.push_back(std::make_unique<Context>(Context{k}));
  d.arena.init();
  // EPL_FAKE_CUDA_REPORT: what a test cannot see otherwise.
  if (std::getenv("EPL_FAKE_CUDA_REPORT"))
    std::atexit([] {
      Driver &d = driver();
      std::fprintf(stderr,
                   "fake CUDA driver: at most %zu bytes of host memory "
                   "pinned, %zu still pinned at exit\n",
                   d.mostPinnedBytes, d.pinnedBytes);
    });
  struct sigaction action = {};
  action.sa_sigaction = onSegv;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &previousSegv);
  d.initialized = true;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  switch (error) {
  case CUDA_SUCCESS:
    *text = "no error";
    break;
  case CUDA_ERROR_INVALID_VALUE:
    *text = "invalid argument";
    break;
  case CUDA_ERROR_OUT_OF_MEMORY:
    *text = "out of memory";
    break;
  case CUDA_ERROR_NOT_INITIALIZED:
    *text = "initialization error";
    break;
  case CUDA_ERROR_INVALID_DEVICE:
    *text = "invalid device ordinal";
    break;
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
    *text = "no kernel image is available for execution on the device";
    break;
  case CUDA_ERROR_INVALID_CONTEXT:
    *text = "invalid device context";
    break;
  case CUDA_ERROR_INVALID_IMAGE:
    *text = "device kernel image is invalid";
    break;
  case CUDA_ERROR_INVALID_PTX:
    *text = "a PTX JIT compilation failed";
    break;
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    *text = "the provided PTX was compiled with an unsupported toolchain.";
    break;
  case CUDA_ERROR_INVALID_HANDLE:
    *text = "invalid resource handle";
    break;
  case CUDA_ERROR_NOT_FOUND:
    *text = "named symbol not found";
    break;
  case CUDA_ERROR_NOT_SUPPORTED:
    *text = "operation not supported";
    break;
  case CUDA_ERROR_ASSERT:
    *text = "device-side assert triggered";
    break;
  case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
    *text = "part or all of the requested memory range is already mapped";
    break;
  case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
    *text = "pointer does not correspond to a registered memory region";
    break;
  default:
    *text = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  if (!driver().initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  *count = driver().devices;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (CUresult r = needDevice(ordinal))
    return r;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice device) {
  if (CUresult r = needDevice(device))
    return r;
  // "fake", the machine, then the GPU's index there: one GPU's in any
  // process.
  uint32_t machine = driver().machine;
  uint64_t index = driver().visible[device];
  std::memcpy(uuid->bytes, "fake", 4);
  std::memcpy(uuid->bytes + 4, &machine, 4);
  std::memcpy(uuid->bytes + 8, &index, 8);
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice device) {
  if (CUresult r = needDevice(device))
    return r;
  // One arena serves every fake GPU: each has all of it.
  *bytes = driver().arena.size;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                              CUdevice device) {
  if (CUresult r = needDevice(device))
    return r;
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = driver().sm / 10;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = driver().sm % 10;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
    *value = !driver().noPools;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_NOT_SUPPORTED;
  }
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  if (CUresult r = needDevice(device))
    return r;
  *context = reinterpret_cast<CUcontext>(driver().contexts[device].get());
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext context) {
  if (!driver().initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  current = reinterpret_cast<Context *>(context);
  return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *stream, unsigned int flags) {
  if (CUresult r = needContext())
    return r;
  *stream = reinterpret_cast<CUstream>(new Stream{current});
  return CUDA_SUCCESS;
}

Stream *streamOf(CUstream stream) { return reinterpret_cast<Stream *>(stream); }

CUresult cuStreamDestroy_v2(CUstream stream) {
  if (CUresult r = checkStream(stream))
    return r;
  // What it holds still runs (CUDA lets it finish); the fake's is done.
  if (!streamOf(stream)->poll())
    eplFakeCudaFail("driver", "a stream destroyed while its NCCL send "
                              "waits for its receive");
  delete streamOf(stream);
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream stream) {
  if (CUresult r = checkStream(stream))
    return r;
  while (streamOf(stream)->hung || !streamOf(stream)->poll())
    usleep(100);
  return CUDA_SUCCESS;
}

CUresult cuStreamQuery(CUstream stream) {
  if (CUresult r = checkStream(stream))
    return r;
  Stream &s = *streamOf(stream);
  return s.hung || !s.poll() ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent *event, unsigned int flags) {
  if (CUresult r = needContext())
    return r;
  if (flags & ~unsigned(CU_EVENT_DISABLE_TIMING))
    return CUDA_ERROR_INVALID_VALUE;
  *event = reinterpret_cast<CUevent>(new Event{current});
  return CUDA_SUCCESS;
}

/// The event, if it is one of the current context's.
Event *eventOf(CUevent event) {
  auto *e = reinterpret_cast<Event *>(event);
  return e && e->context == current ? e : nullptr;
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
  if (CUresult r = checkStream(stream))
    return r;
  Event *e = eventOf(event);
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  Stream &s = *streamOf(stream);
  s.poll();
  e->hung = s.hung;
  e->pending = s.pending;
  return CUDA_SUCCESS;
}

CUresult cuEventQuery(CUevent event) {
  if (CUresult r = needContext())
    return r;
  Event *e = eventOf(event);
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  return e->hung || !e->poll() ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent event) {
  if (CUresult r = needContext())
    return r;
  Event *e = eventOf(event);
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  delete e;
  return CUDA_SUCCESS;
}

/// Work runs when it is queued, so what `stream` runs next must wait here
/// until the event's work is done (a stream waiting for a hung one hangs).
CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  if (CUresult r = checkStream(stream))
    return r;
  Event *e = eventOf(event);
  if (!e || flags)
    return CUDA_ERROR_INVALID_HANDLE;
  if (e->hung) {
    streamOf(stream)->hung = true;
    return CUDA_SUCCESS;
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!e->poll()) {
    if (std::chrono::steady_clock::now() > until)
      eplFakeCudaFail("driver", "a stream waited a minute for an event whose "
                                "work never finished");
    usleep(100);
  }
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice device) {
  if (CUresult r = needDevice(device))
    return r;
  if (driver().noPools)
    return CUDA_ERROR_NOT_SUPPORTED;
  *pool = reinterpret_cast<CUmemoryPool>(driver().contexts[device].get());
  return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool, CUmemPool_attribute attribute,
                               void *value) {
  if (attribute != CU_MEMPOOL_ATTR_RELEASE_THRESHOLD || !value)
    return CUDA_ERROR_NOT_SUPPORTED;
  return CUDA_SUCCESS;
}

// The fake's pool keeps nothing: freed buffers go back to the arena at
// once, and nothing allocates outside the pool for trimming to make room
// for.
CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t) {
  if (CUresult r = needContext())
    return r;
  for (auto &context : driver().contexts)
    if (reinterpret_cast<CUmemoryPool>(context.get()) == pool)
      return CUDA_SUCCESS;
  return CUDA_ERROR_INVALID_VALUE;
}

/// A device buffer of the current context's GPU.
static CUresult allocate(CUdeviceptr *ptr, size_t bytes) {
  if (!bytes)
    return CUDA_ERROR_INVALID_VALUE;
  Driver &d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  void *p = d.arena.allocate(bytes, current->device);
  if (!p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *ptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

/// Frees a device buffer that no unfinished work reads.
static CUresult release(CUdeviceptr ptr) {
  Driver &d = driver();
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    auto it = d.arena.live.find(ptr);
    if (it == d.arena.live.end())
      return CUDA_ERROR_INVALID_VALUE;
    bytes = it->second.size;
  }
  if (pendingReadOverlaps(ptr, ptr + bytes))
    eplFakeCudaFail("driver", "a buffer was freed while an NCCL send on "
                              "another stream still reads it (on a GPU the "
                              "send would read freed memory)");
  std::lock_guard<std::mutex> lock(d.mutex);
  return d.arena.release(ptr) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  if (!current)
    return CUDA_ERROR_INVALID_CONTEXT;
  refuseSynchronizingWithASendInFlight("cuMemAlloc");
  return allocate(ptr, bytes);
}

CUresult cuMemFree_v2(CUdeviceptr ptr) {
  if (!current)
    return CUDA_ERROR_INVALID_CONTEXT;
  refuseSynchronizingWithASendInFlight("cuMemFree");
  return release(ptr);
}

CUresult cuMemAllocAsync(CUdeviceptr *ptr, size_t bytes, CUstream stream) {
  if (CUresult r = checkStream(stream))
    return r;
  if (driver().noPools)
    return CUDA_ERROR_NOT_SUPPORTED;
  return allocate(ptr, bytes);
}

CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream stream) {
  if (CUresult r = checkStream(stream))
    return r;
  if (driver().noPools)
    return CUDA_ERROR_NOT_SUPPORTED;
  return release(ptr);
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                       CUstream stream) {
  if (CUresult r = checkStream(stream))
    return r;
  Driver &d = driver();
  // Unified addressing: either side may be host or device memory, but a
  // device side must lie in one live buffer.
  for (CUdeviceptr p : {dst, src}) {
    auto *address = reinterpret_cast<void *>(p);
    std::lock_guard<std::mutex> lock(d.mutex);
    if (d.arena.contains(address) && !d.arena.find(address, bytes))
      return CUDA_ERROR_INVALID_VALUE;
  }
  if (streamOf(stream)->hung)
    return CUDA_SUCCESS; // queued behind the kernel that never finishes
  epl::fake::DeviceWork work;
  std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src),
               bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemHostRegister(void *ptr, size_t bytes, unsigned int flags) {
  if (CUresult r = needContext())
    return r;
  refuseSynchronizingWithASendInFlight("cuMemHostRegister");
  Driver &d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  if (!ptr || !bytes || d.arena.contains(ptr) ||
      (flags &
       ~unsigned(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP)))
    return CUDA_ERROR_INVALID_VALUE;
  auto start = reinterpret_cast<uintptr_t>(ptr);
  auto next = d.pinned.lower_bound(start);
  if ((next != d.pinned.end() && next->first < start + bytes) ||
      (next != d.pinned.begin() &&
       std::prev(next)->first + std::prev(next)->second > start))
    return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  d.pinned[start] = bytes;
  d.pinnedBytes += bytes;
  d.mostPinnedBytes = std::max(d.mostPinnedBytes, d.pinnedBytes);
  return CUDA_SUCCESS;
}

CUresult cuMemHostUnregister(void *ptr) {
  if (CUresult r = needContext())
    return r;
  refuseSynchronizingWithASendInFlight("cuMemHostUnregister");
  Driver &d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  auto it = d.pinned.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == d.pinned.end())
    return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  d.pinnedBytes -= it->second;
  d.pinned.erase(it);
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version) {
  *version = driver().version;
  return CUDA_SUCCESS;
}

namespace {
/// The PTX compiler's verdict on `ptx`, as the driver's: its line for the
/// error log, where it refuses it.
CUresult compilePTX(const char *ptx, std::string &log) {
  const char *target = std::strstr(ptx, ".target sm_");
  const char *version = std::strstr(ptx, ".version ");
  if (!target || !version) {
    log = "ptxas application ptx input: fatal   : no .version or .target";
    return CUDA_ERROR_INVALID_PTX;
  }
  int major = 0, minor = 0;
  std::sscanf(version, ".version %d.%d", &major, &minor);
  Driver &d = driver();
  // CUDA 12.x compiles PTX 8.x, 13.x PTX 9.x.
  int driverMajor = d.version / 1000 - 4, driverMinor = d.version % 1000 / 10;
  if (major * 10 + minor > driverMajor * 10 + driverMinor) {
    log = "ptxas application ptx input, line 5; fatal   : Unsupported "
          ".version " +
          std::to_string(major) + "." + std::to_string(minor) +
          "; current version is '" + std::to_string(driverMajor) + "." +
          std::to_string(driverMinor) + "'";
    return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  }
  int chip = std::atoi(target + std::strlen(".target sm_"));
  if (chip > d.sm) {
    log = "ptxas application ptx input, line 6; error   : SM version "
          "specified by .target is higher than default SM version assumed";
    return CUDA_ERROR_INVALID_PTX;
  }
  log = "the fake driver runs no GPU code";
  return CUDA_ERROR_NOT_SUPPORTED;
}
} // namespace

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                            unsigned int numOptions, CUjit_option *options,
                            void **optionValues) {
  if (CUresult r = needContext())
    return r;
  refuseSynchronizingWithASendInFlight("cuModuleLoadDataEx");
  // The error log, where the caller gave one (as the real driver fills it).
  char *logBuffer = nullptr;
  size_t logBytes = 0;
  for (unsigned k = 0; k < numOptions; ++k) {
    if (options[k] == CU_JIT_ERROR_LOG_BUFFER)
      logBuffer = static_cast<char *>(optionValues[k]);
    else if (options[k] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      logBytes = reinterpret_cast<uintptr_t>(optionValues[k]);
    else
      return CUDA_ERROR_INVALID_VALUE; // the runtime gives no other
  }
  auto refuse = [&](CUresult r, const std::string &log) {
    if (logBuffer && logBytes)
      std::snprintf(logBuffer, logBytes, "%s", log.c_str());
    return r;
  };
  const char *text = static_cast<const char *>(image);
  uint32_t magic;
  std::memcpy(&magic, text, sizeof(magic));
  // Real GPU code: refused as another GPU refuses it, or, where this one
  // would load it (a cubin for its chip; a fatbin with one, or with PTX it
  // compiles), as the fake that runs none.
  int sm = driver().sm;
  auto loads = [&](uint32_t arch, bool ptx) {
    return ptx ? int(arch) <= sm : int(arch) == sm;
  };
  bool loadable = false;
  if (std::memcmp(text,
                  "\x7f"
                  "ELF",
                  4) == 0) {
    uint32_t flags;
    std::memcpy(&flags, text + 48, sizeof(flags)); // Elf64_Ehdr::e_flags
    loadable = loads((flags >> 8) & 0xff, false);
  } else if (magic == 0xBA55ED50) {
    // CUDA's fatbin: a header, then entries (kind 1 PTX, 2 cubin).
    uint16_t headerSize;
    uint64_t fatSize;
    std::memcpy(&headerSize, text + 6, sizeof(headerSize));
    std::memcpy(&fatSize, text + 8, sizeof(fatSize));
    for (size_t at = headerSize; at + 32 <= headerSize + fatSize;) {
      uint16_t kind;
      uint32_t entry, payload, arch;
      std::memcpy(&kind, text + at, sizeof(kind));
      std::memcpy(&entry, text + at + 4, sizeof(entry));
      std::memcpy(&payload, text + at + 8, sizeof(payload));
      std::memcpy(&arch, text + at + 28, sizeof(arch));
      loadable |= loads(arch, kind == 1);
      if (!entry)
        break;
      at += size_t(entry) + payload;
    }
  } else {
    magic = 0;
  }
  if (loadable)
    return refuse(CUDA_ERROR_NOT_SUPPORTED, "the fake driver runs no GPU code");
  if (magic || std::memcmp(text,
                           "\x7f"
                           "ELF",
                           4) == 0)
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  if (std::strstr(text, ".version ")) {
    std::string log;
    return refuse(compilePTX(text, log), log);
  }
  // `epl-host-kernels:<module>:<kernel>,<kernel>...`.
  static const char prefix[] = "epl-host-kernels:";
  if (std::strncmp(text, prefix, sizeof(prefix) - 1) != 0)
    return CUDA_ERROR_INVALID_IMAGE;
  std::string rest(text + sizeof(prefix) - 1);
  size_t colon = rest.find(':');
  if (colon == std::string::npos)
    return CUDA_ERROR_INVALID_IMAGE;
  std::string name = rest.substr(0, colon);
  auto loaded = std::make_unique<Module>(Module{name, {}});
  for (size_t at = colon + 1; at < rest.size();) {
    size_t comma = std::min(rest.find(',', at), rest.size());
    std::string kernel = rest.substr(at, comma - at);
    void *launch = findSymbol("__epl_host_launch_" + name + "_" + kernel);
    if (!launch)
      return CUDA_ERROR_INVALID_IMAGE;
    auto function = std::make_unique<Function>();
    function->name = kernel;
    function->launch = reinterpret_cast<Launcher>(launch);
    function->loaded = driver().eagerLoading;
    loaded->functions.push_back(std::move(function));
    at = comma + 1;
  }
  // The module's kernels call the device's assertion through this pointer
  // (there only when a kernel asserts).
  if (void *slot = findSymbol("__epl_host_assertfail_" + name))
    *static_cast<decltype(&assertfail) *>(slot) = &assertfail;
  if (void *slot = findSymbol("__epl_host_check_buffer_" + name))
    *static_cast<decltype(&checkKernelBuffer) *>(slot) = &checkKernelBuffer;
  *module = reinterpret_cast<CUmodule>(loaded.release());
  return CUDA_SUCCESS;
}

/// Loads `f` onto the GPU, as lazy loading (CUDA's default) does on first
/// use. That may synchronize the context, so a kernel loaded while an NCCL
/// send of it waits for its receive (in a side stream: a channel's) could
/// wait for it for good, and the peer for this rank: the run ends, saying
/// so.
void load(Function &f) {
  if (f.loaded.exchange(true))
    return;
  if (pendingReadOverlaps(0, UINTPTR_MAX)) {
    std::string message =
        "kernel " + f.name +
        " is loaded onto the GPU while a send of this GPU waits for its "
        "receive: CUDA's lazy loading may synchronize the context to load "
        "it, which would wait for the send, and the peer for this rank, "
        "for good; load kernels before messages are in flight";
    eplFakeCudaFail("driver", message.c_str());
  }
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                             const char *name) {
  if (CUresult r = needContext())
    return r;
  for (auto &f : reinterpret_cast<Module *>(module)->functions)
    if (f->name == name) {
      load(*f);
      *function = reinterpret_cast<CUfunction>(f.get());
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode) {
  if (!driver().initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  *mode =
      driver().eagerLoading ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule module) {
  if (CUresult r = needContext())
    return r;
  *count = reinterpret_cast<Module *>(module)->functions.size();
  return CUDA_SUCCESS;
}

CUresult cuModuleEnumerateFunctions(CUfunction *functions, unsigned int count,
                                    CUmodule module) {
  if (CUresult r = needContext())
    return r;
  auto &all = reinterpret_cast<Module *>(module)->functions;
  if (count < all.size())
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t k = 0; k < all.size(); ++k)
    functions[k] = reinterpret_cast<CUfunction>(all[k].get());
  return CUDA_SUCCESS;
}

CUresult cuFuncLoad(CUfunction function) {
  if (CUresult r = needContext())
    return r;
  load(*reinterpret_cast<Function *>(function));
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction function, unsigned gridX, unsigned gridY,
                        unsigned gridZ, unsigned blockX, unsigned blockY,
                        unsigned blockZ, unsigned sharedMemoryBytes,
                        CUstream stream, void **params, void **extra) {
  if (CUresult r = checkStream(stream))
    return r;
  // An H100's limits (and every GPU's since sm_30).
  if (!gridX || !gridY || !gridZ || !blockX || !blockY || !blockZ ||
      gridY > 65535 || gridZ > 65535 || blockX > 1024 || blockY > 1024 ||
      blockZ > 64 || uint64_t(blockX) * blockY * blockZ > 1024 ||
      sharedMemoryBytes > 48 * 1024 || extra)
    return CUDA_ERROR_INVALID_VALUE;
  Stream &s = *streamOf(stream);
  {
    Driver &d = driver();
    std::lock_guard<std::mutex> lock(d.mutex);
    if (d.hangAfterLaunches >= 0 && d.launches++ == d.hangAfterLaunches)
      s.hung = true;
  }
  if (s.hung)
    return CUDA_SUCCESS;
  epl::fake::DeviceWork work;
  // The kernel's frames are generated code without destructors: a failed
  // assertion jumps straight back here.
  jmp_buf exit;
  if (setjmp(exit) == 0) {
    kernelExit = &exit;
    reinterpret_cast<Function *>(function)->launch(params, gridX, gridY, gridZ,
                                                   blockX, blockY, blockZ);
  }
  kernelExit = nullptr;
  return CUDA_SUCCESS;
}
}
