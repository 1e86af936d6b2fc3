//===- FakeCuda.h - What the fake CUDA libraries share ----------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// The test suite's fake CUDA driver (libcuda.so.1), cuBLAS (libcublas.so.13)
// and NCCL (libnccl.so.2) run a `--target cuda` program on the CPU, through
// the runtime's real GPU code, where there is no GPU: put their folder first
// on LD_LIBRARY_PATH. Device memory is an arena of this process that only
// "the device" may touch (kernels, copies, cuBLAS, NCCL): it is readable
// only while one of them runs, so host code that reads or writes a device
// buffer dies with a message instead of passing unnoticed. The cuBLAS and
// NCCL fakes ask the driver fake about buffers through these functions.
//
// Environment: EPL_FAKE_CUDA_DEVICES (the machine's GPUs, default 1, of
// which the driver sees those CUDA_VISIBLE_DEVICES lists),
// EPL_FAKE_CUDA_MACHINE (which machine the process stands for: its GPUs'
// UUIDs, default 0),
// EPL_FAKE_CUDA_SM (their compute capability, default 90),
// EPL_FAKE_CUDA_MEMORY_MB (the arena, default 4096), CUDA_MODULE_LOADING
// (EAGER: kernels load with their module, cuBLAS's too), EPL_FAKE_CUDA_REPORT
// (print the most host memory pinned, and what is still pinned, at exit).
//
//===----------------------------------------------------------------------===//

#ifndef EPL_TEST_RUNTIME_FAKECUDA_FAKECUDA_H
#define EPL_TEST_RUNTIME_FAKECUDA_FAKECUDA_H

#include <cstddef>

extern "C" {
/// Whether [ptr, ptr + bytes) lies in one live device allocation of the
/// calling thread's current context's GPU.
bool eplFakeCudaIsDeviceBuffer(const void *ptr, size_t bytes);

/// Whether `stream` is a stream of the calling thread's current context.
bool eplFakeCudaIsCurrentStream(const void *stream);

/// Brackets a device operation: device memory is accessible in between.
/// Nested and concurrent brackets are counted.
void eplFakeCudaBeginDeviceWork();
void eplFakeCudaEndDeviceWork();

/// Work the fake cannot run at once, as it does the rest: an NCCL send
/// outside a group, done only when its receive takes it. `stream` is busy
/// (cuStreamQuery, events recorded on it) until `done(arg)` returns true,
/// and freeing a buffer overlapping [ptr, ptr + bytes) before then fails,
/// as on a GPU the send would read freed memory. `done` is called from the
/// stream's thread, with no lock of the driver held.
void eplFakeCudaAddPendingWork(const void *stream, const void *ptr,
                               size_t bytes, bool (*done)(void *), void *arg);

/// Whether an NCCL send of the calling thread's current context waits for
/// its receive (eplFakeCudaAddPendingWork): then anything that synchronizes
/// the GPU (cudaMalloc inside NCCL, a lazily loaded kernel) would wait for
/// it, and its peer for this rank, for good.
bool eplFakeCudaSendInFlight();

/// Whether the driver loads a kernel at its first use (CUDA's default lazy
/// loading), not with its module (CUDA_MODULE_LOADING=EAGER when cuInit
/// ran): a library's kernels too (cuBLAS's).
bool eplFakeCudaLoadsLazily();

/// Reports a misuse of the fake's API as the real library would fail, then
/// ends the process with exit code 86 (a bug in the runtime).
[[noreturn]] void eplFakeCudaFail(const char *library, const char *message);
}

namespace epl::fake {
/// A device operation's scope.
struct DeviceWork {
  DeviceWork() { eplFakeCudaBeginDeviceWork(); }
  ~DeviceWork() { eplFakeCudaEndDeviceWork(); }
  DeviceWork(const DeviceWork &) = delete;
  DeviceWork &operator=(const DeviceWork &) = delete;
};
} // namespace epl::fake

#endif // EPL_TEST_RUNTIME_FAKECUDA_FAKECUDA_H
