/*===- Runtime.h - The C ABI lowered EPL programs call -------------*- C
-*-===*\
|*                                                                            *|
|* Part of EPL-MLIR.                                                          *|
|*                                                                            *|
|* `epl-lower-to-runtime` turns collectives, point-to-point and matmul-like  *|
|* ops into calls to these functions. Buffers arrive as MLIR unranked memref *|
|* descriptors (the `llvm.emit_c_interface` convention), so the runtime sees *|
|* shapes and strides and can check what ranks pass against each other.      *|
|*                                                                            *|
|* A device group is described by a constant i64 array, the same on every   *|
|* rank of the program:                                                       *|
|*   [mesh_id, mesh_rank, size_0 .. size_{mesh_rank-1},                      *|
|*    num_axes, axis_0 .. axis_{num_axes-1}]                                  *|
|* The group of a device is the set of devices whose mesh coordinates equal  *|
|* its own outside `axes`; within a group, devices are numbered major to     *|
|* minor over `axes`. Global ranks number the mesh row-major.                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef EPL_RUNTIME_RUNTIME_H
#define EPL_RUNTIME_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What MLIR passes for a `memref<*xT>` argument under the C interface.
typedef struct {
  int64_t rank;
  void *descriptor; /* {T *allocated, *aligned; int64_t offset, sizes[rank],
                       strides[rank];} */
} EplUnrankedMemRef;

/// Reduction kinds; the values match `mlir::epl::ReductionKind`.
typedef enum {
  EPL_RT_SUM = 0,
  EPL_RT_MAX = 1,
  EPL_RT_MIN = 2,
  EPL_RT_MEAN = 3
} EplReduction;

/// Element types the runtime moves and reduces.
typedef enum {
  EPL_RT_F32 = 0,
  EPL_RT_F64 = 1,
  EPL_RT_I32 = 2,
  EPL_RT_I64 = 3,
  /* IEEE half: moved as is, reduced in f32 (communication.fp16). */
  EPL_RT_F16 = 4
} EplDType;

/* Point-to-point (send, recv below): a `direct` message's tag carries this
 * bit (epl_rt_open_channel); the stream is the tag without it. */
#define EPL_RT_DIRECT_TAG (INT64_C(1) << 62)

/* Collectives on contiguous buffers. `in` and `out` may not alias.
 *   all_reduce:      out = reduce over the group of in            (same size)
 *   all_gather:      out = concat(in of device 0, ..., device g-1) (g x in)
 *   reduce_scatter:  out = reduce over the group of chunk i of in  (in / g)
 *   all_to_all:      chunk j of in goes to device j; out chunk i came from i
 *   broadcast:       out = in of device `root`
 * Reductions combine contributions in group order on every backend, so that
 * results are bit-identical between backends and between runs. */
#define EPL_RT_DECLARE_COLLECTIVES(T)                                          \
  void _mlir_ciface_epl_rt_all_reduce_##T(                                     \
      EplUnrankedMemRef *in, EplUnrankedMemRef *out, EplUnrankedMemRef *group, \
      int32_t kind);                                                           \
  void _mlir_ciface_epl_rt_all_gather_##T(EplUnrankedMemRef *in,               \
                                          EplUnrankedMemRef *out,              \
                                          EplUnrankedMemRef *group);           \
  void _mlir_ciface_epl_rt_reduce_scatter_##T(                                 \
      EplUnrankedMemRef *in, EplUnrankedMemRef *out, EplUnrankedMemRef *group, \
      int32_t kind);                                                           \
  void _mlir_ciface_epl_rt_all_to_all_##T(EplUnrankedMemRef *in,               \
                                          EplUnrankedMemRef *out,              \
                                          EplUnrankedMemRef *group);           \
  void _mlir_ciface_epl_rt_broadcast_##T(                                      \
      EplUnrankedMemRef *in, EplUnrankedMemRef *out, EplUnrankedMemRef *group, \
      int64_t root);                                                           \
  void _mlir_ciface_epl_rt_send_##T(EplUnrankedMemRef *in,                     \
                                    EplUnrankedMemRef *group, int64_t peer,    \
                                    int64_t tag);                              \
  void _mlir_ciface_epl_rt_recv_##T(EplUnrankedMemRef *out,                    \
                                    EplUnrankedMemRef *group, int64_t peer,    \
                                    int64_t tag);

EPL_RT_DECLARE_COLLECTIVES(f32)
EPL_RT_DECLARE_COLLECTIVES(f64)
EPL_RT_DECLARE_COLLECTIVES(i32)
EPL_RT_DECLARE_COLLECTIVES(i64)
EPL_RT_DECLARE_COLLECTIVES(f16)
#undef EPL_RT_DECLARE_COLLECTIVES

/// Bracket a group of sends and receives (`grouped` epl.send and
/// epl.recv, adjacent in the program): they may complete in any order, all
/// of them by the end of the group, and a send need not complete before its
/// receive is posted. On GPUs with NCCL the group's messages go from device
/// to device as one NCCL group; elsewhere sends do not wait, and the
/// brackets change nothing. Groups do not nest.
void _mlir_ciface_epl_rt_message_group_begin(void);
void _mlir_ciface_epl_rt_message_group_end(void);

/// Lets this device's sends to and receives from `peer` (an index in the
/// group) go directly between the devices, where the transport can: on
/// GPUs with NCCL, sends then run on a stream of their own (a send is done
/// only when its receive takes it, and must not hold up the device's next
/// computation) and each pair's messages arrive in the order they were
/// sent, whatever their tags. Both devices open their channel, opening
/// them in ascending order of peer (so that the pairs meet in one global
/// order); a pipeline's stage programs open theirs first thing. Once open,
/// calls again do nothing; on other transports nothing at all.
void _mlir_ciface_epl_rt_open_channel(EplUnrankedMemRef *group, int64_t peer);

/// Sets up what the group's collectives need now (on GPUs with NCCL, its
/// communicator), with every device of the group; later calls do nothing.
/// A program with channels prepares its collectives' groups first thing:
/// made later, an NCCL communicator's cudaMalloc would synchronize the GPU
/// while a channel's send waits for its receive, for good.
void _mlir_ciface_epl_rt_prepare_group(EplUnrankedMemRef *group);

/// Returns once every device of the group has called it.
void _mlir_ciface_epl_rt_barrier(EplUnrankedMemRef *group);

/// This device's index within its group.
int64_t _mlir_ciface_epl_rt_group_index(EplUnrankedMemRef *group);

/// A `cf.assert` of the model failed (torch-mlir checks indices so): ends
/// the run with its message (a 1-d i8 buffer), naming the rank.
void _mlir_ciface_epl_rt_assert_failed(EplUnrankedMemRef *message);

/// C += op(A) * op(B) for 2-D views (3-D: a batch of them), any strides; the
/// runtime picks the BLAS transposition from the strides and copies only
/// views BLAS cannot address.
void _mlir_ciface_epl_rt_matmul_f32(EplUnrankedMemRef *a, EplUnrankedMemRef *b,
                                    EplUnrankedMemRef *c);
void _mlir_ciface_epl_rt_matmul_f64(EplUnrankedMemRef *a, EplUnrankedMemRef *b,
                                    EplUnrankedMemRef *c);
/// C = op(A) * op(B), C's old values unread: a zero-filled C the lowering
/// no longer fills.
void _mlir_ciface_epl_rt_matmul_overwrite_f32(EplUnrankedMemRef *a,
                                              EplUnrankedMemRef *b,
                                              EplUnrankedMemRef *c);
void _mlir_ciface_epl_rt_matmul_overwrite_f64(EplUnrankedMemRef *a,
                                              EplUnrankedMemRef *b,
                                              EplUnrankedMemRef *c);

/// Copies between buffers of any strides (the symbol upstream's
/// `finalize-memref-to-llvm` calls for a `memref.copy` it cannot prove
/// contiguous).
void memrefCopy(int64_t elemSize, EplUnrankedMemRef *src,
                EplUnrankedMemRef *dst);

/// Timers for instrumented programs: seconds since an arbitrary origin.
double epl_rt_now(void);

/// Runs `task(context, lo, hi)` on chunks [lo, hi) that cover [0, n), one
/// per thread of the calling rank, and returns when all have: a kernel
/// split by `epl-thread-kernels`, `context` its arguments.
void epl_rt_parallel_for(void (*task)(void *, int64_t, int64_t), void *context,
                         int64_t n);

/// Phases of a pipeline action; the values match `mlir::epl::Phase`.
typedef enum {
  EPL_RT_FORWARD = 0,
  EPL_RT_BACKWARD_INPUT = 1,
  EPL_RT_BACKWARD_WEIGHT = 2
} EplPhase;

/// Bracket one action of a pipeline schedule (the call of a stage's forward,
/// input-gradient or weight-gradient function for one micro-batch) so that
/// the runtime times it for the trace and the report. Actions do not nest.
void _mlir_ciface_epl_rt_action_begin(int32_t phase, int64_t micro_batch,
                                      int64_t stage);
void _mlir_ciface_epl_rt_action_end(void);

/// The calling rank's device copy of the host buffer [host, host + bytes)
/// that lives from call to call: a parameter or optimizer state updated in
/// place on the cuda target (epl-copy-arguments-to-device). Made and filled
/// from the host buffer on first use; `written`: the caller may write it,
/// and the host buffer is stale until the runner syncs it
/// (epl::rt::syncResidentBuffers). Without a GPU (--emulate-gpu), a host
/// buffer stands for the device's.
void *epl_rt_resident_buffer(void *host, int64_t bytes, int32_t written);

/// Allocation entry points of `finalize-memref-to-llvm{use-generic-functions}`:
/// every buffer of a lowered program goes through them, which is how the
/// runtime knows each rank's current and peak memory.
void *_mlir_memref_to_llvm_alloc(uint64_t size);
void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size);
void _mlir_memref_to_llvm_free(void *ptr);

/// What upstream's gpu-to-llvm lowering calls (the cuda target), on the
/// CUDA driver: kernel images, loaded into each rank's GPU at first use;
/// launches and copies on the rank's one stream.
void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemoryBytes, void *stream,
                      void **params, void **extra, size_t paramsCount);
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);

#ifdef __cplusplus
} // extern "C"
#endif

#endif /* EPL_RUNTIME_RUNTIME_H */
