//===- Cuda.h - The runtime on NVIDIA GPUs ----------------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// What a rank on a GPU needs from the runtime: its device (a context, a
// stream and a cuBLAS handle), device buffers, copies, cuBLAS GEMMs, and
// collectives staged through host memory over any host backend. The CUDA
// driver and cuBLAS are loaded with dlopen the first time a rank asks for a
// GPU: nothing on the CPU path needs libcuda to start, and a machine
// without a driver gets one line saying so.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_LIB_RUNTIME_CUDA_CUDA_H
#define EPL_LIB_RUNTIME_CUDA_CUDA_H

#include "epl/Runtime/Backend.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace epl::rt::cuda {

/// Whether ranks bound after this (runRanks binds each rank) run their
/// fp32 GEMMs in TF32 (the run's choice, Options::gpuTF32).
void setTF32(bool enabled);

/// How long synchronize() waits for a rank's GPU work, and a call into
/// NCCL for the other ranks, before it ends the run with an error (the
/// run's --timeout, Options::timeoutSeconds).
void setTimeout(double seconds);
double timeout();

/// Whether the CUDA driver's library is here, with the functions the
/// runtime calls (without starting it); else `why`, in one line.
bool driverFound(std::string &why);

/// Whether the CUDA driver starts and sees a GPU; else `why` says what is
/// missing, in one line. `loadEagerly`: the driver starts loading every
/// kernel of a module with it (CUDA_MODULE_LOADING=EAGER), cuBLAS's too,
/// which a pipeline with channels between GPUs needs (Cuda.cpp); refused
/// where the environment asks for another mode, or the driver started
/// already.
bool available(std::string &why, bool loadEagerly = false);

/// Binds the calling thread (a rank) to GPU `rank % device count`: its
/// primary context current, a stream and a cuBLAS handle of its own. Ends
/// the run with one line when there is no driver or no GPU.
void bindRank(int rank);

/// Whether the calling rank is bound to a GPU.
bool bound();

/// Whether the rank's GPU allocates in stream order from a pool
/// (cuMemAllocAsync), else with cuMemAlloc and cuMemFree.
bool hasMemoryPools();

/// Loads the program's kernels onto the calling rank's GPU, each kernel
/// too: CUDA's lazy loading (its default) loads one at its first launch,
/// which may synchronize the context, and so wait for good for a channel's
/// send that waits for its receive while the peer does the same. Makes the
/// rank's cuBLAS handle too, where cuBLAS is installed (its workspace's
/// cudaMalloc would synchronize the GPU as well). Errors (kernels for
/// another GPU) end the run here, before the first step.
void loadKernels();

/// The UUID of the calling rank's GPU (cuDeviceGetUuid): one GPU's
/// everywhere, whatever its index in a process (CUDA_VISIBLE_DEVICES
/// renumbers them).
std::array<uint8_t, 16> gpuUuid();

/// Device memory of the calling rank's GPU. `release` frees the `bytes` at
/// `ptr` in the rank's stream order, once no side stream reads them any
/// more (readBySideStream): until then it keeps them, without waiting.
void *allocate(size_t bytes);
void release(void *ptr, size_t bytes);

/// Copies `bytes` between any two buffers (host or device: addresses are
/// unified) in the rank's stream order, and waits for it.
void copy(void *dst, const void *src, size_t bytes);

/// Page-locks the host buffer [ptr, ptr + bytes), so that copies to and
/// from the GPU move it directly (DMA) instead of through the driver's
/// staging; false where the driver refuses (the buffer stays pageable,
/// which copies handle too). `unpin` releases a pinned buffer.
bool pin(void *ptr, size_t bytes);
void unpin(void *ptr);

/// Waits for everything the rank's stream holds; ends the run with an
/// error when it takes longer than setTimeout's seconds.
void synchronize();

/// The rank's stream (a CUstream), for libraries that take one.
void *stream();

/// A new stream of the calling rank's GPU beside the rank's own, for work
/// that must not hold up the rank's kernels: a pipeline message's send,
/// which NCCL finishes only when the peer receives it. Lives as long as the
/// rank's binding.
void *newSideStream();

/// Waits for side stream `side` and destroys it.
void deleteSideStream(void *side);

/// Makes side stream `side` run what is queued from now on only after what
/// the rank's stream holds so far (the kernels that wrote a send's buffer).
void sideStreamFollowsRank(void *side);

/// Notes that what `side` holds so far reads [ptr, ptr + bytes): a buffer
/// it lies in is freed (release) only once that is done.
void readBySideStream(const void *ptr, size_t bytes, void *side);

/// Waits for the rank's stream and its side streams, frees the buffers
/// release() kept for them, and ends the run with an error after
/// setTimeout's seconds: the end of a step, whose sends must all be taken.
void synchronizeAll();

/// Returns to the GPU the memory the rank's pool keeps of freed buffers
/// (the pool keeps all of it, for the next step's), before NCCL or cuBLAS
/// allocate theirs outside it: else a step near the GPU's memory could
/// leave them none.
void returnCachedMemory();

/// The GPUs the driver sees (0 without a driver).
int deviceCount();

/// `count` GEMMs of one shape whose operands lie `a`, `b` and `c`
/// elements apart (an input's 0: the same matrix in each), as one call.
struct GemmBatch {
  int64_t count = 1;
  int64_t a = 0, b = 0, c = 0;
};

/// C[m, n] += op(A) op(B) (with `accumulate`, else C = op(A) op(B)) on
/// device buffers, row-major, with cuBLAS in the rank's stream (fp32
/// without TF32, or fp64), for each matrix of `batch`. `transA`/`transB`
/// say whether A (m x k) and B (k x n) are stored transposed, `ld*` their
/// leading dimensions as BLAS reads them.
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
          int64_t ldc, bool accumulate, GemmBatch batch = {});
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const double *a, int64_t lda, const double *b, int64_t ldb, double *c,
          int64_t ldc, bool accumulate, GemmBatch batch = {});

/// A communicator whose buffers are on the GPU, over one whose buffers are
/// on the host: each call copies its input to the host, runs there, and
/// copies its output back. Several ranks share one GPU this way, which is
/// how multi-rank GPU programs are checked on a single GPU.
std::unique_ptr<Communicator> stageThroughHost(Communicator &host,
                                               int groupSize);

/// Loads NCCL, if it is there, before the ranks' threads start: its
/// environment is set then (see Nccl.cpp), not while other threads read it.
void loadNccl();

/// A communicator running `group`'s collectives with NCCL on the members'
/// GPUs (each member on a GPU of its own), bootstrapped through `host`;
/// null with `why` where NCCL is not installed. Messages (send, recv) in a
/// message group (beginMessages) go from device to device as one NCCL
/// group, untagged; direct ones (sendDirect, recvDirect) over the peer's
/// channel (openChannel), untagged; the others go through the host,
/// matched by tag.
std::unique_ptr<Communicator> ncclFor(Communicator &host, const Group &group,
                                      std::string &why);

} // namespace epl::rt::cuda

#endif // EPL_LIB_RUNTIME_CUDA_CUDA_H
