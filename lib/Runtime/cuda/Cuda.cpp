//===- Cuda.cpp - The runtime on NVIDIA GPUs ------------------------------===//
//
// Part of EPL-MLIR.
//
// CUDA's headers give the types; every function is looked up in libcuda and
// libcublas at run time (see Cuda.h). The `mgpu*` functions are what
// upstream's gpu-to-llvm lowering calls to load kernels and launch them:
// there is no prebuilt MLIR CUDA runtime on our machines, and ours loads
// each kernel image into the context of the GPU of the rank that launches
// it, so that ranks on several GPUs share one compiled program.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "../Watchdog.h"
#include "Library.h"

#include <cublas_v2.h>
#include <cuda.h>

#include <elf.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

using namespace epl::rt;

namespace {
/// The driver functions the runtime calls, looked up once; the driver
/// starts (cuInit) at its first use after that (driver()), when the program
/// is known: how it loads kernels is read then.
struct Driver {
#define EPL_CUDA_FUNCTIONS(X)                                                  \
  X(cuInit)                                                                    \
  X(cuGetErrorString)                                                          \
  X(cuDriverGetVersion)                                                        \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetUuid)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceTotalMem)                                                          \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxSetCurrent)                                                           \
  X(cuStreamCreate)                                                            \
  X(cuStreamQuery)                                                             \
  X(cuStreamDestroy)                                                           \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventRecord)                                                             \
  X(cuEventQuery)                                                              \
  X(cuEventDestroy)                                                            \
  X(cuMemAllocAsync)                                                           \
  X(cuMemFreeAsync)                                                            \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuDeviceGetDefaultMemPool)                                                 \
  X(cuMemPoolSetAttribute)                                                     \
  X(cuMemPoolTrimTo)                                                           \
  X(cuMemcpyAsync)                                                             \
  X(cuMemHostRegister)                                                         \
  X(cuMemHostUnregister)                                                       \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleGetFunction)                                                       \
  X(cuLaunchKernel)
  EPL_CUDA_FUNCTIONS(EPL_DECLARE_FUNCTION)
// Drivers since CUDA 12.4: kernels loaded before they are first launched
// (loadKernels); older ones load them at cuModuleGetFunction.
#define EPL_CUDA_OPTIONAL_FUNCTIONS(X)                                         \
  X(cuModuleGetFunctionCount)                                                  \
  X(cuModuleEnumerateFunctions)                                                \
  X(cuFuncLoad)                                                                \
  X(cuModuleGetLoadingMode)
  EPL_CUDA_OPTIONAL_FUNCTIONS(EPL_DECLARE_FUNCTION)
  /// Why the driver does not load, or did not start.
  std::string error;
  std::once_flag startOnce;
  /// Whether it started loading every kernel with its module.
  bool eager = false;

  Driver() {
    void *library = cuda::openLibrary({"libcuda.so.1"}, "CUDA driver", error);
    const char *name = "the CUDA driver";
    if (!library)
      return;
    EPL_CUDA_FUNCTIONS(EPL_LOOKUP_FUNCTION)
#define EPL_LOOKUP_OPTIONAL_FUNCTION(f)                                        \
  f = reinterpret_cast<decltype(f)>(dlsym(library, EPL_SYMBOL(f)));
    EPL_CUDA_OPTIONAL_FUNCTIONS(EPL_LOOKUP_OPTIONAL_FUNCTION)
  }

  void start(bool loadEagerly) {
    if (!error.empty())
      return;
    // CUDA loads a kernel at its first launch (lazy loading, its default),
    // which may wait for all of the context's work: a pipeline's send
    // waiting in a side stream for its receive would hold that up for good
    // (and the peer waits for this rank). The program's own kernels are
    // loaded when a rank binds its GPU (loadKernels), but cuBLAS's are out
    // of reach: eager loading, which the driver reads here, loads them all
    // with their module.
    // (Set before any rank's thread runs, by the runner's main thread.)
    if (loadEagerly) {
      const char *mode = std::getenv("CUDA_MODULE_LOADING");
      if (mode && *mode && std::strcmp(mode, "EAGER") != 0) {
        error = std::string("CUDA_MODULE_LOADING=") + mode +
                ": this pipeline's messages go from GPU to GPU over "
                "channels (an NCCL send waiting for its receive in a stream "
                "of its own), and a kernel loaded at its first launch (a "
                "cuBLAS GEMM's) may wait for such a send for good; unset it "
                "(the run then loads every kernel when it starts) or run "
                "with --gpu-collectives host";
        return;
      }
      setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/1);
    }
    int count = 0;
    if (CUresult r = cuInit(0); r != CUDA_SUCCESS) {
      error = "the CUDA driver does not start (" + describe(r) + ")";
      return;
    }
    // Something that started the driver before (a preloaded tool) would
    // have had it read another mode.
    CUmoduleLoadingMode mode = CU_MODULE_EAGER_LOADING;
    if (loadEagerly && cuModuleGetLoadingMode &&
        cuModuleGetLoadingMode(&mode) == CUDA_SUCCESS &&
        mode != CU_MODULE_EAGER_LOADING) {
      error = "the CUDA driver was started before the runtime asked it to "
              "load every kernel as it starts, which this pipeline's "
              "channels between GPUs need; run with --gpu-collectives host";
      return;
    }
    eager = loadEagerly;
    if (cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
      error = "the CUDA driver sees no GPU";
      return;
    }
    devices = count;
  }

  std::string describe(CUresult r) const {
    const char *text = nullptr;
    if (cuGetErrorString)
      cuGetErrorString(r, &text);
    if (!text)
      return "CUDA error " + std::to_string(r);
    // Some end in a period, which the messages they end up in do not.
    std::string said(text);
    if (!said.empty() && said.back() == '.')
      said.pop_back();
    return said;
  }

  int devices = 0;
};

/// The driver's library, not started.
Driver &loadedDriver() {
  static Driver d;
  return d;
}

/// The driver, started (loading kernels eagerly where the first call to
/// start it says so: cuda::available).
Driver &driver(bool loadEagerly = false) {
  Driver &d = loadedDriver();
  std::call_once(d.startOnce, [&] { d.start(loadEagerly); });
  return d;
}

/// Ends the run naming the call that failed (a kernel that faults, or an
/// assertion in one, is reported by the next call).
void check(CUresult r, const char *what) {
  // Kernels run behind the host: the step that sees the error is the one
  // whose kernel failed, or the next (the runner waits for each step).
  if (r == CUDA_ERROR_ASSERT)
    fatalError(
        std::string("CUDA: ") + what + " failed: " + driver().describe(r) +
        " (a kernel's check failed, such as a gather's index out of "
        "range" +
        (currentWork().empty() ? std::string()
                               : ", in " + currentWork() + " or before") +
        "; the GPU printed its message to standard output)");
  if (r != CUDA_SUCCESS)
    fatalError(std::string("CUDA: ") + what +
               " failed: " + driver().describe(r));
}

/// cuBLAS, loaded on first use.
struct Blas {
#define EPL_CUBLAS_FUNCTIONS(X)                                                \
  X(cublasCreate)                                                              \
  X(cublasSetStream)                                                           \
  X(cublasSetMathMode)                                                         \
  X(cublasSgemm)                                                               \
  X(cublasDgemm)                                                               \
  X(cublasSgemmStridedBatched)                                                 \
  X(cublasDgemmStridedBatched)
  EPL_CUBLAS_FUNCTIONS(EPL_DECLARE_FUNCTION)
  std::string error;

  Blas() {
    void *library =
        // cuBLAS 12 (PyTorch's CUDA 12 wheels) has the same entry points
        // and runs on a CUDA 13 driver.
        cuda::openLibrary(
            {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, "cuBLAS",
            error);
    const char *name = "cuBLAS";
    if (library) {
      EPL_CUBLAS_FUNCTIONS(EPL_LOOKUP_FUNCTION)
    }
  }
};

Blas &loadBlas() {
  static Blas b;
  return b;
}

Blas &blas() {
  Blas &b = loadBlas();
  if (!b.error.empty())
    fatalError("CUDA: " + b.error);
  return b;
}

/// The calling rank's GPU.
struct RankDevice {
  int ordinal = -1;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  cublasHandle_t handle = nullptr;
  /// Whether the GPU has stream-ordered memory pools (not every
  /// virtualized one does): else plain allocations, freed after the
  /// stream's work.
  bool pools = true;
  /// The GPU's default pool, which keeps the buffers freed into it.
  CUmemoryPool pool = nullptr;
  /// Without pools: buffers freed once the event recorded after the work
  /// before their free has happened.
  std::vector<std::pair<CUdeviceptr, CUevent>> pendingFrees;
  std::vector<CUstream> sideStreams;
  /// Buffer ranges side streams read, until their event.
  struct SideRead {
    uintptr_t begin, end;
    CUevent done;
  };
  std::vector<SideRead> sideReads;
  /// Buffers release() keeps until no side read overlaps them.
  std::vector<std::pair<uintptr_t, uintptr_t>> keptFrees;
};
thread_local RankDevice rankDevice;

RankDevice &device() {
  if (rankDevice.ordinal < 0)
    fatalError("CUDA: this rank is not bound to a GPU");
  return rankDevice;
}

/// A compiled kernel image, loaded into each GPU's context the first time
/// a rank there looks up one of its kernels.
/// A kernel image of the program (mgpuModuleLoad), loaded into each GPU's
/// context when a rank binds it (cuda::loadKernels).
struct Image {
  std::vector<char> data; // a cubin, a fatbin, or PTX the driver compiles
  std::map<CUcontext, CUmodule> modules;
  /// Never reused, unlike the image's address once a program is unloaded:
  /// what a rank's cache of kernels is keyed by.
  uint64_t id = nextId++;
  static inline std::atomic<uint64_t> nextId{0};
};
std::mutex imagesMutex;
/// The program's images, in the order it loaded them.
std::vector<Image *> &programImages() {
  static std::vector<Image *> images;
  return images;
}

/// "sm_90" for a cubin's ELF flags (which hold the architecture).
std::string cubinChip(const char *data, size_t size) {
  Elf64_Ehdr header;
  if (size < sizeof(header))
    return "an unknown architecture";
  std::memcpy(&header, data, sizeof(header));
  return "sm_" + std::to_string((header.e_flags >> 8) & 0xff);
}

/// A PTX text's `.target` and `.version` directives' values ("sm_90",
/// "8.0"), empty where it has none.
std::pair<std::string, std::string> ptxTarget(const std::vector<char> &ptx) {
  std::string text(ptx.begin(), std::find(ptx.begin(), ptx.end(), '\0'));
  auto word = [&](const char *directive) -> std::string {
    size_t at = text.find(directive);
    if (at == std::string::npos)
      return "";
    at += std::strlen(directive);
    while (at < text.size() && text[at] == ' ')
      ++at;
    size_t end = text.find_first_of(" ,\n\r\t", at);
    return text.substr(at, end == std::string::npos ? end : end - at);
  };
  return {word(".target"), word(".version")};
}

/// What `image` was compiled for, as "compiled X" completes it: "for
/// sm_90" (a cubin), "for sm_90 (a cubin, and PTX that GPUs from sm_90 on
/// compile)" (a fatbin: its entries' kinds and architectures), "to PTX for
/// sm_90", or "for the CPU" (an --gpu-host-kernels image).
std::string targetOf(const Image &image) {
  const std::vector<char> &data = image.data;
  if (data.size() >= SELFMAG &&
      std::memcmp(data.data(), ELFMAG, SELFMAG) == 0) {
    Elf64_Ehdr header;
    if (data.size() >= sizeof(header)) {
      std::memcpy(&header, data.data(), sizeof(header));
      if (header.e_machine != EM_CUDA)
        return "for the CPU";
    }
    return "for " + cubinChip(data.data(), data.size());
  }
  // A fatbin (CUDA's fatbinary): a header, then entries each with a header
  // of its own giving its kind (1 PTX, 2 cubin), its size and its
  // architecture (sm_90: 90). The layout is CUDA's, undocumented but
  // stable; read only to name what the image holds.
  uint32_t magic = 0;
  if (data.size() >= 16)
    std::memcpy(&magic, data.data(), sizeof(magic));
  if (magic == 0xBA55ED50) {
    uint16_t headerSize;
    uint64_t fatSize;
    std::memcpy(&headerSize, data.data() + 6, sizeof(headerSize));
    std::memcpy(&fatSize, data.data() + 8, sizeof(fatSize));
    std::string cubins, ptx;
    size_t at = headerSize,
           end = std::min<size_t>(data.size(), headerSize + fatSize);
    while (at + 32 <= end) {
      uint16_t kind;
      uint32_t entryHeader, payload, arch;
      std::memcpy(&kind, data.data() + at, sizeof(kind));
      std::memcpy(&entryHeader, data.data() + at + 4, sizeof(entryHeader));
      std::memcpy(&payload, data.data() + at + 8, sizeof(payload));
      std::memcpy(&arch, data.data() + at + 28, sizeof(arch));
      std::string &list = kind == 1 ? ptx : cubins;
      list += (list.empty() ? "" : ", ") + ("sm_" + std::to_string(arch));
      if (!entryHeader)
        break;
      at += size_t(entryHeader) + payload;
    }
    if (cubins.empty() && ptx.empty())
      return "to a fatbin that names no architecture";
    if (ptx.empty())
      return "for " + cubins;
    if (cubins.empty())
      return "to PTX for " + ptx;
    if (cubins == ptx)
      return "for " + cubins + " (a cubin, and PTX that GPUs from " + ptx +
             " on compile)";
    return "for " + cubins + " (and PTX for " + ptx + ")";
  }
  std::string target = ptxTarget(data).first;
  return "to PTX" + (target.empty() ? std::string() : " for " + target);
}

/// What the driver's error log says about an image it refused (its PTX
/// compiler's complaint), if anything: "; the driver's log says: ...".
std::string jitSaid(const char *log) {
  std::string text(log);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.pop_back();
  for (char &c : text)
    if (c == '\n')
      c = ' ';
  return text.empty() ? "" : "; the driver's log says: " + text;
}

CUmodule moduleFor(Image &image) {
  RankDevice &d = device();
  std::lock_guard<std::mutex> lock(imagesMutex);
  CUmodule &module = image.modules[d.context];
  if (module)
    return module;
  // The driver compiles PTX (alone, or a fatbin's for a newer GPU) when it
  // loads it: its log says why it could not.
  char log[8192] = "";
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log))};
  CUresult r = driver().cuModuleLoadDataEx(&module, image.data.data(), 2,
                                           options, values);
  log[sizeof(log) - 1] = '\0';
  if (r == CUDA_SUCCESS)
    return module;
  int major = 0, minor = 0;
  CUdevice dev;
  driver().cuDeviceGet(&dev, d.ordinal);
  driver().cuDeviceGetAttribute(
      &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  driver().cuDeviceGetAttribute(
      &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  std::string chip = "sm_" + std::to_string(major * 10 + minor);
  std::string target = targetOf(image);
  std::string why = driver().describe(r) + jitSaid(log);
  // Say what the kernels are, so the fix is the right one.
  if (target == "for the CPU")
    fatalError("CUDA: the program's kernels were compiled for the CPU "
               "(epl-compile --gpu-host-kernels, for the tests' fake "
               "driver), not for this GPU (" +
               chip + "); compile without it: " + why);
  if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
    int version = 0;
    driver().cuDriverGetVersion(&version);
    std::string ptx = ptxTarget(image.data).second;
    fatalError("CUDA: the program's PTX" +
               (ptx.empty() ? std::string() : " (ISA " + ptx + ")") +
               " is newer than this driver (CUDA " +
               std::to_string(version / 1000) + "." +
               std::to_string(version % 1000 / 10) +
               ") compiles; update the driver, or compile a cubin for this "
               "GPU (--gpu-format=cubin --gpu-chip=" +
               chip + "): " + why);
  }
  // Compiled for this very chip: another architecture is not the reason
  // (a driver too old for the cubin, a damaged image).
  if (target == "for " + chip || target.rfind("for " + chip + " ", 0) == 0)
    fatalError("CUDA: the driver refused the program's kernels, compiled " +
               target + ", on this GPU (" + chip + "): " + why);
  if (r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_PTX ||
      r == CUDA_ERROR_INVALID_IMAGE)
    fatalError("CUDA: the program's kernels were compiled " + target +
               " and this GPU is " + chip +
               "; compile with --gpu-chip=" + chip + ": " + why);
  fatalError("CUDA: loading the program's kernels failed: " + why);
}
} // namespace

namespace {
cublasHandle_t blasHandle();

/// Runs a 1x1 GEMM of each kind the runtime calls.
void warmUpBlas(cublasHandle_t handle) {
  Blas &b = blas();
  // A, B and C, each a batch of two 1x1 matrices of zeros.
  size_t bytes = 3 * 2 * sizeof(double);
  std::vector<char> zeros(bytes);
  void *buffer = cuda::allocate(bytes);
  cuda::copy(buffer, zeros.data(), bytes);
  auto *f = static_cast<float *>(buffer);
  auto *d = static_cast<double *>(buffer);
  float fOne = 1, fZero = 0;
  double dOne = 1, dZero = 0;
  bool ok =
      b.cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &fOne, f, 1,
                    f + 2, 1, &fZero, f + 4, 1) == CUBLAS_STATUS_SUCCESS &&
      b.cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &dOne, d, 1,
                    d + 2, 1, &dZero, d + 4, 1) == CUBLAS_STATUS_SUCCESS &&
      b.cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1,
                                  &fOne, f, 1, 1, f + 2, 1, 1, &fZero, f + 4, 1,
                                  1, 2) == CUBLAS_STATUS_SUCCESS &&
      b.cublasDgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1,
                                  &dOne, d, 1, 1, d + 2, 1, 1, &dZero, d + 4, 1,
                                  1, 2) == CUBLAS_STATUS_SUCCESS;
  if (!ok)
    fatalError("CUDA: cuBLAS fails a 1x1 GEMM before the first step");
  cuda::synchronize();
  cuda::release(buffer, bytes);
}
} // namespace

void cuda::loadKernels() {
  // cuBLAS's handle too (its cudaMalloc synchronizes the GPU), where cuBLAS
  // is installed: a program that multiplies says so at its first GEMM.
  if (loadBlas().error.empty()) {
    cublasHandle_t handle = blasHandle();
    // Under eager loading (a program with channels), a GEMM of each kind
    // the runtime calls, now: what cuBLAS sets up at its first GEMM beyond
    // its handle (cuBLASLt's own CUDA runtime, which loads its modules)
    // could synchronize the GPU in the middle of a step.
    if (driver().eager)
      warmUpBlas(handle);
  }
  std::vector<Image *> images;
  {
    std::lock_guard<std::mutex> lock(imagesMutex);
    images = programImages();
  }
  Driver &d = driver();
  bool enumerates = d.cuModuleGetFunctionCount &&
                    d.cuModuleEnumerateFunctions && d.cuFuncLoad;
  for (Image *image : images) {
    CUmodule module = moduleFor(*image);
    if (!enumerates)
      continue;
    unsigned count = 0;
    check(d.cuModuleGetFunctionCount(&count, module),
          "counting the program's kernels");
    std::vector<CUfunction> functions(count);
    check(d.cuModuleEnumerateFunctions(functions.data(), count, module),
          "listing the program's kernels");
    for (CUfunction function : functions)
      check(d.cuFuncLoad(function), "loading a kernel");
  }
}

namespace {
std::atomic<bool> tf32{false};
std::atomic<double> timeoutSeconds{120};
} // namespace

void cuda::setTF32(bool enabled) { tf32.store(enabled); }

void cuda::setTimeout(double seconds) { timeoutSeconds.store(seconds); }

double cuda::timeout() { return timeoutSeconds.load(); }

bool cuda::driverFound(std::string &why) {
  why = loadedDriver().error;
  return why.empty();
}

bool cuda::available(std::string &why, bool loadEagerly) {
  Driver &d = driver(loadEagerly);
  why = d.error;
  if (why.empty() && loadEagerly && !d.eager)
    fatalError("the CUDA driver was started, loading kernels lazily, before "
               "the runner asked it to load them eagerly (a bug of the "
               "runner)");
  return why.empty();
}

void cuda::bindRank(int rank) {
  Driver &d = driver();
  if (!d.error.empty())
    fatalError("--target cuda: " + d.error);
  RankDevice &r = rankDevice;
  // Bound already (a second run on an MPI process's one thread): keep the
  // stream, which the cuBLAS handle is set to.
  if (r.ordinal == rank % d.devices && r.stream) {
    check(d.cuCtxSetCurrent(r.context), "cuCtxSetCurrent");
    // This run's math mode (--gpu-tf32), which an earlier one may not share.
    if (r.handle)
      blas().cublasSetMathMode(r.handle, tf32.load()
                                             ? CUBLAS_TF32_TENSOR_OP_MATH
                                             : CUBLAS_DEFAULT_MATH);
    return;
  }
  r = RankDevice();
  r.ordinal = rank % d.devices;
  CUdevice dev;
  check(d.cuDeviceGet(&dev, r.ordinal), "cuDeviceGet");
  check(d.cuDevicePrimaryCtxRetain(&r.context, dev),
        "retaining the GPU's context");
  check(d.cuCtxSetCurrent(r.context), "cuCtxSetCurrent");
  check(d.cuStreamCreate(&r.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  // Buffers come from the device's pool in stream order and go back to it
  // there, kept for reuse instead of returned to the driver (a step frees
  // and allocates the same buffers every time).
  int pools = 0;
  check(d.cuDeviceGetAttribute(&pools,
                               CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev),
        "cuDeviceGetAttribute");
  r.pools = pools != 0;
  if (!r.pools)
    return;
  check(d.cuDeviceGetDefaultMemPool(&r.pool, dev), "cuDeviceGetDefaultMemPool");
  cuuint64_t keep = UINT64_MAX;
  check(
      d.cuMemPoolSetAttribute(r.pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep),
      "cuMemPoolSetAttribute");
}

bool cuda::bound() { return rankDevice.ordinal >= 0; }

bool cuda::hasMemoryPools() { return device().pools; }

std::array<uint8_t, 16> cuda::gpuUuid() {
  CUdevice dev;
  check(driver().cuDeviceGet(&dev, device().ordinal), "cuDeviceGet");
  CUuuid uuid;
  check(driver().cuDeviceGetUuid(&uuid, dev), "cuDeviceGetUuid");
  std::array<uint8_t, 16> bytes;
  std::memcpy(bytes.data(), uuid.bytes, bytes.size());
  return bytes;
}

namespace {
template <typename T, typename Pred>
void eraseIf(std::vector<T> &v, Pred pred) {
  v.erase(std::remove_if(v.begin(), v.end(), pred), v.end());
}

/// Calls a driver function that may wait for all of the GPU's work
/// (cuMemFree, cuMemHostUnregister synchronize the device), which a kernel
/// that never ends (an NCCL send whose peer died, in a side stream) would
/// block for good: under the run's deadline.
template <typename Run> CUresult waitingCall(const char *what, Run &&run) {
  struct Waiting {
    int rank;
    const char *what;
    double seconds;
  } waiting{currentRank(), what, timeoutSeconds.load()};
  Deadline deadline(
      waiting.seconds,
      [](const void *context) {
        const auto &w = *static_cast<const Waiting *>(context);
        return timeoutMessage(
            w.rank, std::string("CUDA: ") + w.what,
            "the GPU's work to finish (a collective or message whose other "
            "ranks never came)",
            w.seconds);
      },
      &waiting);
  return run();
}

/// Returns the buffers whose free the stream has reached (no pools).
void reapPendingFrees(RankDevice &d) {
  eraseIf(d.pendingFrees, [](const std::pair<CUdeviceptr, CUevent> &f) {
    CUresult q = driver().cuEventQuery(f.second);
    if (q == CUDA_ERROR_NOT_READY)
      return false;
    check(q, "a kernel or copy of this step");
    check(waitingCall("cuMemFree", [&] { return driver().cuMemFree(f.first); }),
          "cuMemFree");
    check(driver().cuEventDestroy(f.second), "cuEventDestroy");
    return true;
  });
}

void waitFor(CUstream stream);
} // namespace

/// The GPU has no room for `bytes` more: what it has, where it ran out,
/// and what needs less.
[[noreturn]] void outOfMemory(RankDevice &d, size_t bytes) {
  CUdevice dev;
  size_t total = 0;
  driver().cuDeviceGet(&dev, d.ordinal);
  driver().cuDeviceTotalMem(&total, dev);
  auto mib = [](size_t b) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.2f MiB", b / 1048576.0);
    return std::string(text);
  };
  fatalError("CUDA: out of device memory" +
             (currentWork().empty() ? std::string() : " in " + currentWork()) +
             ": " + mib(bytes) + " more does not fit on this GPU (" +
             mib(total) +
             "); offload.level = \"v0\" (parameters and optimizer state in "
             "host memory), zero.level, gradient checkpointing or fewer "
             "samples per device need less (the report's estimated peak "
             "says how much the step holds)");
}

void *cuda::allocate(size_t bytes) {
  CUdeviceptr ptr = 0;
  RankDevice &d = device();
  size_t size = bytes ? bytes : 1;
  if (d.pools) {
    CUresult r = driver().cuMemAllocAsync(&ptr, size, d.stream);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      outOfMemory(d, size);
    check(r, "cuMemAllocAsync");
    return reinterpret_cast<void *>(ptr);
  }
  reapPendingFrees(d);
  CUresult r = driver().cuMemAlloc(&ptr, size);
  // Buffers freed but not yet returned may be what is missing.
  if (r == CUDA_ERROR_OUT_OF_MEMORY && !d.pendingFrees.empty()) {
    waitFor(d.stream);
    reapPendingFrees(d);
    r = driver().cuMemAlloc(&ptr, size);
  }
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    outOfMemory(d, size);
  check(r, "cuMemAlloc");
  return reinterpret_cast<void *>(ptr);
}

namespace {
/// Frees `ptr` after the work before it on the rank's stream: in stream
/// order into the pool, else once an event after that work has happened
/// (the host does not wait for it here).
void freeInStreamOrder(RankDevice &d, CUdeviceptr ptr) {
  if (d.pools) {
    check(driver().cuMemFreeAsync(ptr, d.stream), "cuMemFreeAsync");
    return;
  }
  CUevent done;
  check(driver().cuEventCreate(&done, CU_EVENT_DISABLE_TIMING),
        "cuEventCreate");
  check(driver().cuEventRecord(done, d.stream), "cuEventRecord");
  d.pendingFrees.push_back({ptr, done});
  reapPendingFrees(d);
}

/// Forgets the side reads that are done and frees the kept buffers no
/// side read overlaps any more.
void reapSideReads(RankDevice &d) {
  eraseIf(d.sideReads, [](const RankDevice::SideRead &r) {
    CUresult q = driver().cuEventQuery(r.done);
    if (q == CUDA_ERROR_NOT_READY)
      return false;
    check(q, "a send on a side stream");
    check(driver().cuEventDestroy(r.done), "cuEventDestroy");
    return true;
  });
  eraseIf(d.keptFrees, [&](const std::pair<uintptr_t, uintptr_t> &f) {
    for (const RankDevice::SideRead &r : d.sideReads)
      if (r.begin < f.second && f.first < r.end)
        return false;
    freeInStreamOrder(d, f.first);
    return true;
  });
}
} // namespace

void cuda::release(void *ptr, size_t bytes) {
  // In stream order: the kernels before it may still read the buffer, and
  // every kernel, copy and collective is on the rank's one stream. Only a
  // side stream's send may read it later: then it is kept until that is
  // done (a wait here would hold up the rank until the peer receives).
  RankDevice &d = device();
  reapSideReads(d);
  auto begin = reinterpret_cast<uintptr_t>(ptr);
  for (const RankDevice::SideRead &r : d.sideReads)
    if (r.begin < begin + bytes && begin < r.end) {
      d.keptFrees.push_back({begin, begin + bytes});
      return;
    }
  freeInStreamOrder(d, begin);
}

void *cuda::newSideStream() {
  RankDevice &d = device();
  CUstream s;
  check(driver().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  d.sideStreams.push_back(s);
  return s;
}

void cuda::sideStreamFollowsRank(void *side) {
  RankDevice &d = device();
  CUevent e;
  check(driver().cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  check(driver().cuEventRecord(e, d.stream), "cuEventRecord");
  check(driver().cuStreamWaitEvent(static_cast<CUstream>(side), e, 0),
        "cuStreamWaitEvent");
  // The wait keeps what it needs of the event.
  check(driver().cuEventDestroy(e), "cuEventDestroy");
}

void cuda::readBySideStream(const void *ptr, size_t bytes, void *side) {
  CUevent e;
  check(driver().cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  check(driver().cuEventRecord(e, static_cast<CUstream>(side)),
        "cuEventRecord");
  auto begin = reinterpret_cast<uintptr_t>(ptr);
  device().sideReads.push_back({begin, begin + bytes, e});
}

void cuda::copy(void *dst, const void *src, size_t bytes) {
  RankDevice &d = device();
  if (bytes)
    check(driver().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                 reinterpret_cast<CUdeviceptr>(src), bytes,
                                 d.stream),
          "cuMemcpyAsync");
  synchronize();
}

bool cuda::pin(void *ptr, size_t bytes) {
  device(); // a context current on this thread
  // Portable: pinned for every context, as ranks of one process share
  // host buffers' pages.
  return bytes && driver().cuMemHostRegister(
                      ptr, bytes, CU_MEMHOSTREGISTER_PORTABLE) == CUDA_SUCCESS;
}

void cuda::unpin(void *ptr) {
  check(waitingCall("unpinning a host buffer (cuMemHostUnregister)",
                    [&] { return driver().cuMemHostUnregister(ptr); }),
        "unpinning a host buffer");
}

void *cuda::stream() { return device().stream; }

int cuda::deviceCount() { return driver().devices; }

namespace {
/// Waits for `stream`, polled, not cuStreamSynchronize: a kernel that
/// never finishes (an NCCL collective whose peer died or never joined, a
/// send nobody receives) would block the rank for good, and the run must
/// end with an error instead.
void waitFor(CUstream stream) {
  double timeout = timeoutSeconds.load();
  auto start = std::chrono::steady_clock::now();
  for (int polls = 0;; ++polls) {
    CUresult r = driver().cuStreamQuery(stream);
    if (r == CUDA_SUCCESS)
      return;
    if (r != CUDA_ERROR_NOT_READY)
      check(r, "a kernel or copy of this step");
    std::chrono::duration<double> waited =
        std::chrono::steady_clock::now() - start;
    if (waited.count() > timeout)
      fatalError(
          "CUDA: the GPU's work" +
          (currentWork().empty() ? std::string() : " of " + currentWork()) +
          " has not finished after " + formatSeconds(timeout) +
          " (a collective whose other ranks never joined it, a "
          "message nobody receives, or a kernel that does not end); "
          "see --timeout");
    // Spin while the work is short (a step's copy), then let the core go.
    if (polls > 1000)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}
} // namespace

void cuda::synchronize() {
  RankDevice &d = device();
  waitFor(d.stream);
  reapPendingFrees(d);
}

void cuda::returnCachedMemory() {
  RankDevice &d = device();
  // Buffers freed in stream order count as in use until the host has seen
  // the stream do their frees.
  synchronize();
  if (d.pool)
    check(driver().cuMemPoolTrimTo(d.pool, 0), "cuMemPoolTrimTo");
}

void cuda::synchronizeAll() {
  RankDevice &d = device();
  waitFor(d.stream);
  for (CUstream side : d.sideStreams)
    waitFor(side);
  reapSideReads(d);
}

void cuda::deleteSideStream(void *side) {
  RankDevice &d = device();
  auto stream = static_cast<CUstream>(side);
  waitFor(stream);
  reapSideReads(d);
  d.sideStreams.erase(
      std::find(d.sideStreams.begin(), d.sideStreams.end(), stream));
  check(driver().cuStreamDestroy(stream), "cuStreamDestroy");
}

namespace {
cublasHandle_t blasHandle() {
  RankDevice &d = device();
  if (!d.handle) {
    Blas &b = blas();
    // cuBLAS allocates its workspace outside the pool.
    cuda::returnCachedMemory();
    if (cublasStatus_t s = b.cublasCreate(&d.handle);
        s != CUBLAS_STATUS_SUCCESS)
      fatalError("CUDA: cuBLAS does not start (cublasCreate: status " +
                 std::to_string(s) +
                 (s == CUBLAS_STATUS_NOT_INITIALIZED
                      ? ", not initialized: a cuBLAS for another CUDA than "
                        "the driver's, or no GPU memory left)"
                      : ")"));
    if (b.cublasSetStream(d.handle, d.stream) != CUBLAS_STATUS_SUCCESS)
      fatalError("CUDA: cuBLAS does not take the rank's stream");
    // Plain fp32 (the default math mode; set so that nothing else chose
    // one) unless the run asked for TF32 (--gpu-tf32), which rounds the
    // inputs to 10 bits of mantissa for the tensor cores.
    if (b.cublasSetMathMode(d.handle, tf32.load() ? CUBLAS_TF32_TENSOR_OP_MATH
                                                  : CUBLAS_DEFAULT_MATH) !=
        CUBLAS_STATUS_SUCCESS)
      fatalError("CUDA: cuBLAS refuses the math mode (--gpu-tf32 or not)");
  }
  return d.handle;
}

/// Row-major C = op(A) op(B) + C is column-major C^T = op(B)^T op(A)^T +
/// C^T: the same call with the operands swapped. A batch is one strided
/// batched call (attention's products over batch and heads: one launch,
/// not one a matrix).
template <typename T, typename Gemm, typename Batched>
void rowMajorGemm(Gemm gemm, Batched batched, bool transA, bool transB,
                  int64_t m, int64_t n, int64_t k, const T *a, int64_t lda,
                  const T *b, int64_t ldb, T *c, int64_t ldc, bool accumulate,
                  cuda::GemmBatch batch) {
  // cuBLAS's sizes are `int`: a larger one would be cut silently.
  for (int64_t v : {m, n, k, lda, ldb, ldc, batch.count})
    if (v > std::numeric_limits<int>::max())
      fatalError("CUDA: cuBLAS GEMM " + std::to_string(m) + "x" +
                 std::to_string(n) + "x" + std::to_string(k) +
                 " (leading dimensions " + std::to_string(lda) + ", " +
                 std::to_string(ldb) + ", " + std::to_string(ldc) +
                 ", a batch of " + std::to_string(batch.count) +
                 "): a size over 2^31 - 1, more than cuBLAS takes");
  T one = 1, beta = accumulate ? 1 : 0;
  cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N,
                    opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasStatus_t s =
      batch.count == 1
          ? gemm(blasHandle(), opB, opA, n, m, k, &one, b, ldb, a, lda, &beta,
                 c, ldc)
          : batched(blasHandle(), opB, opA, n, m, k, &one, b, ldb, batch.b, a,
                    lda, batch.a, &beta, c, ldc, batch.c, batch.count);
  if (s != CUBLAS_STATUS_SUCCESS)
    fatalError("CUDA: cuBLAS GEMM " + std::to_string(m) + "x" +
               std::to_string(n) + "x" + std::to_string(k) +
               (batch.count == 1
                    ? std::string()
                    : " (a batch of " + std::to_string(batch.count) + ")") +
               " failed (status " + std::to_string(s) + ")");
}
} // namespace

void cuda::gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                const float *a, int64_t lda, const float *b, int64_t ldb,
                float *c, int64_t ldc, bool accumulate, GemmBatch batch) {
  rowMajorGemm(blas().cublasSgemm, blas().cublasSgemmStridedBatched, transA,
               transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate, batch);
}

void cuda::gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                const double *a, int64_t lda, const double *b, int64_t ldb,
                double *c, int64_t ldc, bool accumulate, GemmBatch batch) {
  rowMajorGemm(blas().cublasDgemm, blas().cublasDgemmStridedBatched, transA,
               transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate, batch);
}

//===----------------------------------------------------------------------===//
// What upstream's gpu-to-llvm lowering calls
//===----------------------------------------------------------------------===//

extern "C" {
/// A cubin (or fatbin): the program's global constructors load each kernel
/// module once, before any rank runs; it is loaded into a GPU at first use.
void *mgpuModuleLoad(void *data, size_t size) {
  auto *image = new Image;
  image->data.assign(static_cast<char *>(data),
                     static_cast<char *>(data) + size);
  std::lock_guard<std::mutex> lock(imagesMutex);
  programImages().push_back(image);
  return image;
}

/// PTX, NUL-terminated.
/// `optLevel` is the kernels' -O (3): the driver's compiler is left at its
/// default, its highest (4).
void *mgpuModuleLoadJIT(void *data, int optLevel) {
  auto *image = new Image;
  size_t size = std::strlen(static_cast<char *>(data)) + 1;
  image->data.assign(static_cast<char *>(data),
                     static_cast<char *>(data) + size);
  std::lock_guard<std::mutex> lock(imagesMutex);
  programImages().push_back(image);
  return image;
}

void mgpuModuleUnload(void *module) {
  // Contexts are the GPUs' primary contexts, released with the process.
  std::lock_guard<std::mutex> lock(imagesMutex);
  std::vector<Image *> &images = programImages();
  images.erase(std::remove(images.begin(), images.end(), module), images.end());
  delete static_cast<Image *>(module);
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  // Every launch asks; the rank keeps what it found (names are the
  // program's constants, and live as long as its images).
  thread_local std::map<std::tuple<uint64_t, const char *, CUcontext>,
                        CUfunction>
      found;
  Image &image = *static_cast<Image *>(module);
  CUfunction &function = found[{image.id, name, device().context}];
  if (!function)
    check(driver().cuModuleGetFunction(&function, moduleFor(image), name),
          "finding a kernel");
  return function;
}

/// Every launch goes to the rank's one stream, in program order: a step's
/// kernels, GEMMs and copies never wait for the host between them.
void *mgpuStreamCreate() { return device().stream; }
void mgpuStreamDestroy(void *) {}
void mgpuStreamSynchronize(void *) {}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemoryBytes, void *stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  check(driver().cuLaunchKernel(
            static_cast<CUfunction>(function), gridX, gridY, gridZ, blockX,
            blockY, blockZ, sharedMemoryBytes, device().stream, params, extra),
        "launching a kernel");
}

void mgpuMemcpy(void *dst, void *src, size_t bytes, void * /*stream*/) {
  cuda::copy(dst, src, bytes);
}
}

//===----------------------------------------------------------------------===//
// Collectives staged through the host
//===----------------------------------------------------------------------===//

namespace {
class HostStaged final : public Communicator {
public:
  HostStaged(Communicator &host, int size) : host(host), size(size) {}

  void allReduce(const void *in, void *out, size_t count, EplDType dtype,
                 EplReduction kind) override {
    size_t bytes = count * dtypeSize(dtype);
    std::vector<char> i = download(in, bytes), o(bytes);
    host.allReduce(i.data(), o.data(), count, dtype, kind);
    upload(out, o);
  }
  void allGather(const void *in, void *out, size_t countPerRank,
                 EplDType dtype) override {
    size_t bytes = countPerRank * dtypeSize(dtype);
    std::vector<char> i = download(in, bytes), o(bytes * size);
    host.allGather(i.data(), o.data(), countPerRank, dtype);
    upload(out, o);
  }
  void reduceScatter(const void *in, void *out, size_t countPerRank,
                     EplDType dtype, EplReduction kind) override {
    size_t bytes = countPerRank * dtypeSize(dtype);
    std::vector<char> i = download(in, bytes * size), o(bytes);
    host.reduceScatter(i.data(), o.data(), countPerRank, dtype, kind);
    upload(out, o);
  }
  void allToAll(const void *in, void *out, size_t countPerRank,
                EplDType dtype) override {
    size_t bytes = countPerRank * dtypeSize(dtype) * size;
    std::vector<char> i = download(in, bytes), o(bytes);
    host.allToAll(i.data(), o.data(), countPerRank, dtype);
    upload(out, o);
  }
  void broadcast(const void *in, void *out, size_t count, EplDType dtype,
                 int root) override {
    size_t bytes = count * dtypeSize(dtype);
    std::vector<char> i = in ? download(in, bytes) : std::vector<char>(bytes),
                      o(bytes);
    host.broadcast(i.data(), o.data(), count, dtype, root);
    upload(out, o);
  }
  void send(const void *in, size_t count, EplDType dtype, int peer,
            int64_t tag) override {
    std::vector<char> i = download(in, count * dtypeSize(dtype));
    host.send(i.data(), count, dtype, peer, tag);
  }
  void recv(void *out, size_t count, EplDType dtype, int peer,
            int64_t tag) override {
    std::vector<char> o(count * dtypeSize(dtype));
    host.recv(o.data(), count, dtype, peer, tag);
    upload(out, o);
  }
  void barrier() override { host.barrier(); }

private:
  static std::vector<char> download(const void *device, size_t bytes) {
    std::vector<char> host(bytes);
    cuda::copy(host.data(), device, bytes);
    return host;
  }
  static void upload(void *device, const std::vector<char> &host) {
    cuda::copy(device, host.data(), host.size());
  }
  Communicator &host;
  int size;
};
} // namespace

std::unique_ptr<Communicator> cuda::stageThroughHost(Communicator &host,
                                                     int groupSize) {
  return std::make_unique<HostStaged>(host, groupSize);
}
