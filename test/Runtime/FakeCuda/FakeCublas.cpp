//===- FakeCublas.cpp - cuBLAS's GEMMs without a GPU, for tests -----------===//
//
// Part of EPL-MLIR.
//
// cublasSgemm and cublasDgemm, and their strided batched forms, as cuBLAS
// defines them (column-major, with its argument checks), computed on the
// CPU on the fake driver's device buffers; eplFakeCublasCalls counts the
// calls (each a launch on a GPU). A handle must have the stream of the calling
// thread's context; every operand must lie in a device buffer of that GPU, as
// large as its leading dimension says. In TF32 math mode (--gpu-tf32) the fp32
// inputs are rounded to TF32 first, as the tensor cores do. Under CUDA's lazy
// loading a GEMM of a kind the handle has not run yet loads its kernel, which
// must not happen while a send of the GPU waits for its receive.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <cublas_v2.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <tuple>

namespace {
/// What picks a GEMM's kernel, as far as the fake tells them apart: the
/// element size, the operations, the math mode, the sizes and whether it is
/// batched. (cuBLAS shares kernels between sizes; one a size is the safe
/// side for a check.)
using GemmKind = std::tuple<size_t, int, int, int, int, int, int, bool>;

struct Handle {
  cudaStream_t stream = nullptr;
  cublasMath_t mode = CUBLAS_DEFAULT_MATH;
  /// The kinds of GEMM it ran: their kernels are loaded.
  std::set<GemmKind> loaded;
};

bool transposed(cublasOperation_t op) { return op != CUBLAS_OP_N; }

std::atomic<int64_t> calls{0};

template <typename T> T toTF32(T value) {
  if constexpr (sizeof(T) != 4) {
    return value;
  } else {
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    if ((bits & 0x7f800000u) != 0x7f800000u) // not inf or NaN
      bits = (bits + 0x1000u) & ~0x1fffu;
    std::memcpy(&value, &bits, 4);
    return value;
  }
}

/// Whether the column-major `rows` x `cols` matrix at `p` with leading
/// dimension `ld` is valid and on the device.
template <typename T> bool onDevice(const T *p, int rows, int cols, int ld) {
  if (ld < (rows > 1 ? rows : 1))
    return false;
  if (!rows || !cols)
    return true;
  size_t elements = size_t(ld) * (cols - 1) + rows;
  return eplFakeCudaIsDeviceBuffer(p, elements * sizeof(T));
}

template <typename T>
cublasStatus_t gemm(cublasHandle_t handle, cublasOperation_t opA,
                    cublasOperation_t opB, int m, int n, int k, const T *alpha,
                    const T *a, int lda, long long strideA, const T *b, int ldb,
                    long long strideB, const T *beta, T *c, int ldc,
                    long long strideC, int batches) {
  auto *h = reinterpret_cast<Handle *>(handle);
  if (!h)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!eplFakeCudaIsCurrentStream(h->stream))
    eplFakeCudaFail("cuBLAS", "a GEMM on a handle whose stream is not one "
                              "of the calling thread's context");
  if (h->mode != CUBLAS_DEFAULT_MATH && h->mode != CUBLAS_PEDANTIC_MATH &&
      h->mode != CUBLAS_TF32_TENSOR_OP_MATH)
    eplFakeCudaFail("cuBLAS", "a GEMM in a math mode the runtime never asks "
                              "for");
  ++calls;
  // Lazy loading loads a kernel at its first launch, which may synchronize
  // the context: with a send in flight, for good.
  GemmKind kind{sizeof(T), opA, opB, h->mode, m, n, k, batches != 1};
  if (h->loaded.insert(kind).second && eplFakeCudaLoadsLazily() &&
      eplFakeCudaSendInFlight()) {
    std::string message =
        "the kernel of a " + std::to_string(m) + "x" + std::to_string(n) + "x" +
        std::to_string(k) +
        " GEMM is loaded at its first use (CUDA's lazy loading) while a "
        "send of this GPU waits for its receive: loading it may synchronize "
        "the context, which would wait for the send, and the peer for this "
        "rank, for good (CUDA_MODULE_LOADING=EAGER loads it before)";
    eplFakeCudaFail("cuBLAS", message.c_str());
  }
  // TF32 (fp32 GEMMs only): the inputs keep 10 bits of mantissa, rounded
  // to nearest with ties away, as the tensor cores' conversion does.
  bool tf32 = h->mode == CUBLAS_TF32_TENSOR_OP_MATH && sizeof(T) == 4;
  if (m < 0 || n < 0 || k < 0 || batches < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  bool ta = transposed(opA), tb = transposed(opB);
  epl::fake::DeviceWork work;
  T al = *alpha, be = *beta;
  for (int batch = 0; batch < batches; ++batch) {
    const T *ab = a + batch * strideA, *bb = b + batch * strideB;
    T *cb = c + batch * strideC;
    // op(A) is m x k, op(B) k x n, C m x n.
    if (!onDevice(ab, ta ? k : m, ta ? m : k, lda) ||
        !onDevice(bb, tb ? n : k, tb ? k : n, ldb) || !onDevice(cb, m, n, ldc))
      return CUBLAS_STATUS_INVALID_VALUE;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        T sum = 0;
        for (int l = 0; l < k; ++l) {
          T x = ta ? ab[l + int64_t(i) * lda] : ab[i + int64_t(l) * lda];
          T y = tb ? bb[j + int64_t(l) * ldb] : bb[l + int64_t(j) * ldb];
          if (tf32) {
            x = toTF32(x);
            y = toTF32(y);
          }
          sum += x * y;
        }
        T &out = cb[i + int64_t(j) * ldc];
        // beta = 0: C is not read (it may hold NaNs), as in BLAS.
        out = be == T(0) ? al * sum : al * sum + be * out;
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}
} // namespace

extern "C" {
cublasStatus_t cublasCreate(cublasHandle_t *handle) {
  // cuBLAS allocates its workspace with cudaMalloc, which synchronizes the
  // GPU.
  if (eplFakeCudaSendInFlight())
    eplFakeCudaFail("cuBLAS", "cublasCreate while a send of this GPU waits "
                              "for its receive: its cudaMalloc would wait "
                              "for the send, and the peer for this rank, for "
                              "good");
  *handle = reinterpret_cast<cublasHandle_t>(new Handle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  reinterpret_cast<Handle *>(handle)->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  reinterpret_cast<Handle *>(handle)->mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t opA,
                           cublasOperation_t opB, int m, int n, int k,
                           const float *alpha, const float *a, int lda,
                           const float *b, int ldb, const float *beta, float *c,
                           int ldc) {
  return gemm(handle, opA, opB, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c,
              ldc, 0, 1);
}

cublasStatus_t cublasDgemm(cublasHandle_t handle, cublasOperation_t opA,
                           cublasOperation_t opB, int m, int n, int k,
                           const double *alpha, const double *a, int lda,
                           const double *b, int ldb, const double *beta,
                           double *c, int ldc) {
  return gemm(handle, opA, opB, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c,
              ldc, 0, 1);
}

cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t opA, cublasOperation_t opB, int m,
    int n, int k, const float *alpha, const float *a, int lda,
    long long strideA, const float *b, int ldb, long long strideB,
    const float *beta, float *c, int ldc, long long strideC, int batches) {
  return gemm(handle, opA, opB, m, n, k, alpha, a, lda, strideA, b, ldb,
              strideB, beta, c, ldc, strideC, batches);
}

cublasStatus_t cublasDgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t opA, cublasOperation_t opB, int m,
    int n, int k, const double *alpha, const double *a, int lda,
    long long strideA, const double *b, int ldb, long long strideB,
    const double *beta, double *c, int ldc, long long strideC, int batches) {
  return gemm(handle, opA, opB, m, n, k, alpha, a, lda, strideA, b, ldb,
              strideB, beta, c, ldc, strideC, batches);
}

/// The GEMM calls made so far (the tests' count of cuBLAS launches).
int64_t eplFakeCublasCalls() { return calls.load(); }
}
