//===- Gemm.cpp - Matmul through CBLAS and oneDNN -------------------------===//
//
// Part of EPL-MLIR.
//
// `epl-lower-to-runtime` sends every matmul-like linalg op here as three
// views of any strides: C += op(A) * op(B). BLAS addresses a row-major matrix
// whose rows are strided (lda) and its transpose, so most views of a tensor
// (slices, transposes) go to BLAS without a copy; anything else is packed.
// Which library runs a GEMM, on how many threads, is the build's choice
// (EPL_BLAS, lib/Runtime/CMakeLists.txt) and the GEMM's size: see `gemm`.
//
//===----------------------------------------------------------------------===//

#include "Descriptor.h"
#include "cuda/Cuda.h"
#include "epl/Runtime/Backend.h"
#include "epl/Runtime/BlasLayout.h"
#include "epl/Runtime/Runtime.h"

#include <cblas.h>
#include <dlfcn.h>
#if defined(EPL_BLAS_DNNL) || defined(EPL_BLAS_OPENBLAS_DNNL)
#include <oneapi/dnnl/dnnl.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

using namespace epl::rt;

namespace {
template <typename T> struct Matrix {
  T *base;
  int64_t rows, cols, rowStride, colStride;

  /// The BLAS form of this view: transposition and leading dimension, or
  /// false when BLAS cannot address it.
  bool blasForm(CBLAS_TRANSPOSE &trans, int64_t &ld) const {
    std::optional<BlasLayout> layout =
        blasLayout(rows, cols, rowStride, colStride);
    if (!layout)
      return false;
    trans = layout->transposed ? CblasTrans : CblasNoTrans;
    ld = layout->ld;
    return true;
  }

  std::vector<T> pack() const {
    std::vector<T> packed(rows * cols);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        packed[i * cols + j] = base[i * rowStride + j * colStride];
    return packed;
  }
};

#if defined(EPL_BLAS_DNNL) || defined(EPL_BLAS_OPENBLAS_DNNL)
/// Row-major, as CBLAS's CblasRowMajor.
dnnl_status_t dnnlGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m,
                       int64_t n, int64_t k, const float *a, int64_t lda,
                       const float *b, int64_t ldb, float *c, int64_t ldc,
                       bool accumulate) {
  return dnnl_sgemm(ta == CblasTrans ? 'T' : 'N', tb == CblasTrans ? 'T' : 'N',
                    m, n, k, 1.0f, a, lda, b, ldb, accumulate ? 1.0f : 0.0f, c,
                    ldc);
}

void checkDnnl(dnnl_status_t status, int64_t m, int64_t n, int64_t k) {
  if (status != dnnl_success)
    fatalError("matmul: dnnl_sgemm of " + std::to_string(m) + "x" +
               std::to_string(k) + " * " + std::to_string(k) + "x" +
               std::to_string(n) + " failed (oneDNN status " +
               std::to_string(static_cast<int>(status)) + ")");
}
#endif

#if defined(EPL_BLAS_OPENBLAS_DNNL)
/// From this many multiply-adds on, an fp32 GEMM goes to oneDNN on one
/// thread: there oneDNN is faster than OpenBLAS on the MLP's GEMMs (whole
/// batch and a data-parallel rank's half; 6-17% on the large ones, up to 50%
/// on those of 10 outputs) and on most of the transformer's, OpenBLAS on the
/// attention's 64 x 32 x 64 GEMMs (2^17 multiply-adds) (bench/gemm.py,
/// bench/README.md).
constexpr int64_t kDnnlMinMacs = int64_t(1) << 20;
/// From this many on, a rank with several threads cuts the GEMM into
/// blocks of 16 columns (or rows), a contiguous run of them per thread
/// (below, waking the workers costs more than it gains, as for OpenBLAS's
/// own threads: SmallOnOneThread).
constexpr int64_t kSplitMinMacs = int64_t(1) << 22;

/// oneDNN runs on the calling thread's OpenMP threads: one, always, in this
/// build (a thread starts with OpenMP's default, all cores). Checked on
/// every call: the count is the thread's, and anything may have set it.
dnnl_status_t dnnlOnOneThread(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m,
                              int64_t n, int64_t k, const float *a, int64_t lda,
                              const float *b, int64_t ldb, float *c,
                              int64_t ldc, bool accumulate) {
  static auto get =
      reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  static auto set = reinterpret_cast<void (*)(int)>(
      dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (get && set && get() != 1)
    set(1);
  return dnnlGemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

/// A GEMM cut into blocks of kBlock columns (or rows), each run as a
/// one-thread oneDNN GEMM, for epl_rt_parallel_for. A block's failure is
/// kept for the caller to report: the rank's thread, not a worker, ends the
/// run.
struct SplitGemm {
  CBLAS_TRANSPOSE ta, tb;
  int64_t m, n, k;
  const float *a;
  int64_t lda;
  const float *b;
  int64_t ldb;
  float *c;
  int64_t ldc;
  bool accumulate, columns;
  std::atomic<int> status{dnnl_success};
  static constexpr int64_t kBlock = 16; // a cache line of floats

  int64_t blocks() const { return ((columns ? n : m) + kBlock - 1) / kBlock; }
  static void run(void *self, int64_t begin, int64_t end) {
    SplitGemm &g = *static_cast<SplitGemm *>(self);
    int64_t lo = begin * kBlock,
            hi = std::min(g.columns ? g.n : g.m, end * kBlock);
    if (lo >= hi)
      return;
    dnnl_status_t status =
        g.columns
            ? dnnlOnOneThread(g.ta, g.tb, g.m, hi - lo, g.k, g.a, g.lda,
                              g.b + (g.tb == CblasNoTrans ? lo : lo * g.ldb),
                              g.ldb, g.c + lo, g.ldc, g.accumulate)
            : dnnlOnOneThread(g.ta, g.tb, hi - lo, g.n, g.k,
                              g.a + (g.ta == CblasNoTrans ? lo * g.lda : lo),
                              g.lda, g.b, g.ldb, g.c + lo * g.ldc, g.ldc,
                              g.accumulate);
    if (status != dnnl_success)
      g.status.store(status);
  }
};
#endif

/// Whether an fp32 GEMM of `macs` multiply-adds leaves the thread count
/// SmallOnOneThread sets (OpenBLAS's) unused: with EPL_BLAS=openblas+dnnl
/// such a GEMM runs in oneDNN, one thread per block.
constexpr bool bypassesBlasThreads(int64_t macs) {
#if defined(EPL_BLAS_OPENBLAS_DNNL)
  return macs >= kDnnlMinMacs;
#else
  (void)macs;
  return false;
#endif
}

/// BLAS ignores C's values with beta = 0 (a NaN there stays out), and so
/// does oneDNN.
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
          int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
          float *c, int64_t ldc, bool accumulate) {
#if defined(EPL_BLAS_DNNL)
  checkDnnl(dnnlGemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, accumulate), m, n,
            k);
#else
#if defined(EPL_BLAS_OPENBLAS_DNNL)
  int64_t macs = m * n * k;
  if (macs >= kSplitMinMacs && threadsPerRank() > 1) {
    // On the rank's own workers rather than OpenBLAS's or OpenMP's: one set
    // of threads, which the loop kernels share, and oneDNN is faster on
    // each block than OpenBLAS on several threads (MLP step 9.6 to 8.4 ms
    // on 2 cores). Cut along the dimension that leaves each block the
    // smaller operand to read whole: columns share A (m x k), rows B (k x n).
    SplitGemm split{ta, tb,  m, n,   k,          a,     lda,
                    b,  ldb, c, ldc, accumulate, m <= n};
    epl_rt_parallel_for(&SplitGemm::run, &split, split.blocks());
    return checkDnnl(static_cast<dnnl_status_t>(split.status.load()), m, n, k);
  }
  if (macs >= kDnnlMinMacs)
    return checkDnnl(
        dnnlOnOneThread(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, accumulate), m,
        n, k);
#endif
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb,
              accumulate ? 1.0f : 0.0f, c, ldc);
#endif
}
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
          int64_t k, const double *a, int64_t lda, const double *b, int64_t ldb,
          double *c, int64_t ldc, bool accumulate) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb,
              accumulate ? 1.0 : 0.0, c, ldc);
}

/// C += A * B (with `accumulate`, else C = A * B) for one matrix of each,
/// or for each of `batch` (the matrices' strides apart). On a GPU: cuBLAS
/// on the device buffers. The lowering stages operands BLAS cannot address
/// in contiguous copies, so none is packed here.
template <typename T>
void matmulOnDevice(const Matrix<T> &a, const Matrix<T> &b, const Matrix<T> &c,
                    bool accumulate, cuda::GemmBatch batch = {}) {
  CBLAS_TRANSPOSE ta, tb, tc;
  int64_t lda, ldb, ldc;
  if (!a.blasForm(ta, lda) || !b.blasForm(tb, ldb) || !c.blasForm(tc, ldc))
    fatalError("matmul: an operand's layout is not one cuBLAS reads (the "
               "lowering should have staged it in a contiguous copy)");
  if (tc == CblasNoTrans) {
    cuda::gemm(ta == CblasTrans, tb == CblasTrans, c.rows, c.cols, a.cols,
               a.base, lda, b.base, ldb, c.base, ldc, accumulate, batch);
    return;
  }
  // C is column-major: C^T += B^T A^T.
  std::swap(batch.a, batch.b);
  cuda::gemm(tb == CblasNoTrans, ta == CblasNoTrans, c.cols, c.rows, a.cols,
             b.base, ldb, a.base, lda, c.base, ldc, accumulate, batch);
}

/// Runs a GEMM of `macs` multiply-adds on one OpenBLAS thread (one of
/// oneDNN's OpenMP threads with EPL_BLAS=dnnl, whose fp64 GEMMs then keep
/// OpenBLAS's count) when it is small, for the scope's lifetime. OpenBLAS
/// splits even small GEMMs over its threads, and below about 4M multiply-adds
/// that costs more than it gains (measured on 2 cores: the ResNet's per-image
/// convolution GEMMs, 784 x 144 x 16, 1.6x slower on 2 threads; 512 x 128 x 128
/// already 0.63x). Only where OpenBLAS has several threads, which it has with
/// one rank only (with several, each rank's GEMMs run on one thread): one
/// caller, so setting OpenBLAS's thread count cannot race. Looked up at run
/// time, as in Runtime.cpp: any CBLAS works.
class SmallOnOneThread {
public:
  explicit SmallOnOneThread(int64_t macs) {
#if defined(EPL_BLAS_DNNL)
    // oneDNN's OpenMP threads (the calling thread's count).
    static auto get =
        reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
    static auto set = reinterpret_cast<void (*)(int)>(
        dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
#else
    static auto get = reinterpret_cast<int (*)()>(
        dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    static auto set = reinterpret_cast<void (*)(int)>(
        dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
#endif
    if (!get || !set || macs >= (int64_t(1) << 22))
      return;
    threads = get();
    if (threads > 1)
      set(1);
    setThreads = set;
  }
  ~SmallOnOneThread() {
    if (threads > 1)
      setThreads(threads);
  }

private:
  int threads = 0;
  void (*setThreads)(int) = nullptr;
};

template <typename T>
void matmul2d(const Matrix<T> &a, const Matrix<T> &b, const Matrix<T> &c,
              bool accumulate) {
  if (c.rows == 0 || c.cols == 0)
    return;
  // With k = 0, A B is zero: C += it adds nothing, C = it is zeros
  // (host BLAS may return without touching C; cuBLAS scales C by beta).
  if (a.cols == 0 && accumulate)
    return;
  if (a.cols == 0 && !cuda::bound()) {
    for (int64_t i = 0; i < c.rows; ++i)
      for (int64_t j = 0; j < c.cols; ++j)
        c.base[i * c.rowStride + j * c.colStride] = 0;
    return;
  }
  if (cuda::bound())
    return matmulOnDevice(a, b, c, accumulate);
  // OpenBLAS's thread count only matters to a GEMM OpenBLAS runs.
  int64_t macs = c.rows * c.cols * a.cols;
  std::optional<SmallOnOneThread> small;
  if (!std::is_same_v<T, float> || !bypassesBlasThreads(macs))
    small.emplace(macs);
  CBLAS_TRANSPOSE ta, tb, tc;
  int64_t lda, ldb, ldc;
  std::vector<T> packedA, packedB, packedC;
  const T *pa = a.base, *pb = b.base;
  if (!a.blasForm(ta, lda)) {
    packedA = a.pack();
    pa = packedA.data();
    ta = CblasNoTrans;
    lda = std::max<int64_t>(a.cols, 1);
  }
  if (!b.blasForm(tb, ldb)) {
    packedB = b.pack();
    pb = packedB.data();
    tb = CblasNoTrans;
    ldb = std::max<int64_t>(b.cols, 1);
  }
  if (c.blasForm(tc, ldc) && tc == CblasNoTrans) {
    gemm(ta, tb, c.rows, c.cols, a.cols, pa, lda, pb, ldb, c.base, ldc,
         accumulate);
    return;
  }
  if (c.blasForm(tc, ldc)) {
    // C is column-major: compute C^T += B^T A^T into it.
    auto flip = [](CBLAS_TRANSPOSE t) {
      return t == CblasNoTrans ? CblasTrans : CblasNoTrans;
    };
    gemm(flip(tb), flip(ta), c.cols, c.rows, a.cols, pb, ldb, pa, lda, c.base,
         ldc, accumulate);
    return;
  }
  packedC = accumulate ? c.pack() : std::vector<T>(c.rows * c.cols);
  gemm(ta, tb, c.rows, c.cols, a.cols, pa, lda, pb, ldb, packedC.data(), c.cols,
       accumulate);
  for (int64_t i = 0; i < c.rows; ++i)
    for (int64_t j = 0; j < c.cols; ++j)
      c.base[i * c.rowStride + j * c.colStride] = packedC[i * c.cols + j];
}

template <typename T> Matrix<T> matrixAt(const StridedView &v, int64_t batch) {
  size_t r = v.sizes.size();
  T *base = reinterpret_cast<T *>(v.base) + (r == 3 ? batch * v.strides[0] : 0);
  return {base, v.sizes[r - 2], v.sizes[r - 1], v.strides[r - 2],
          v.strides[r - 1]};
}

/// Whether the matrices of the batched view `v` lie apart: each begins
/// past the last element of the one before.
bool batchesApart(const StridedView &v) {
  int64_t last = 0;
  for (size_t d = 1; d < v.sizes.size(); ++d) {
    if (v.strides[d] < 0)
      return false;
    last += (v.sizes[d] - 1) * v.strides[d];
  }
  return v.strides[0] > last;
}

template <typename T>
void matmul(EplUnrankedMemRef *am, EplUnrankedMemRef *bm, EplUnrankedMemRef *cm,
            bool accumulate) {
  StridedView a = StridedView::of(am, sizeof(T)),
              b = StridedView::of(bm, sizeof(T)),
              c = StridedView::of(cm, sizeof(T));
  size_t rank = c.sizes.size();
  if ((rank != 2 && rank != 3) || a.sizes.size() != rank ||
      b.sizes.size() != rank)
    fatalError("matmul: expected 2-D or batched 3-D operands of one rank");
  int64_t batches = rank == 3 ? c.sizes[0] : 1;
  if (rank == 3 && (a.sizes[0] != batches || b.sizes[0] != batches))
    fatalError("matmul: batch sizes differ");
  Matrix<T> ma = matrixAt<T>(a, 0), mb = matrixAt<T>(b, 0),
            mc = matrixAt<T>(c, 0);
  if (ma.rows != mc.rows || mb.cols != mc.cols || ma.cols != mb.rows)
    fatalError("matmul: shapes " + std::to_string(ma.rows) + "x" +
               std::to_string(ma.cols) + " * " + std::to_string(mb.rows) + "x" +
               std::to_string(mb.cols) + " -> " + std::to_string(mc.rows) +
               "x" + std::to_string(mc.cols) + " do not match");
  // On a GPU, a batch is one call (attention's scores: batch x heads
  // GEMMs, each a kernel launch of its own otherwise) where its matrices
  // do not overlap in C (a view's batch stride may be anything).
  if (cuda::bound() && batches > 1 && batchesApart(c) && mc.rows && mc.cols &&
      ma.cols && a.strides[0] >= 0 && b.strides[0] >= 0 &&
      batches <= std::numeric_limits<int>::max())
    return matmulOnDevice(
        ma, mb, mc, accumulate,
        cuda::GemmBatch{batches, a.strides[0], b.strides[0], c.strides[0]});
  for (int64_t i = 0; i < batches; ++i)
    matmul2d(matrixAt<T>(a, i), matrixAt<T>(b, i), matrixAt<T>(c, i),
             accumulate);
}
} // namespace

const char *epl::rt::gemmLibrary() {
#if defined(EPL_BLAS_OPENBLAS_DNNL)
  return "openblas+dnnl";
#elif defined(EPL_BLAS_DNNL)
  return "dnnl";
#elif defined(EPL_BLAS_BLIS)
  return "blis";
#else
  return "openblas";
#endif
}

extern "C" {
void _mlir_ciface_epl_rt_matmul_f32(EplUnrankedMemRef *a, EplUnrankedMemRef *b,
                                    EplUnrankedMemRef *c) {
  matmul<float>(a, b, c, /*accumulate=*/true);
}
void _mlir_ciface_epl_rt_matmul_f64(EplUnrankedMemRef *a, EplUnrankedMemRef *b,
                                    EplUnrankedMemRef *c) {
  matmul<double>(a, b, c, /*accumulate=*/true);
}
void _mlir_ciface_epl_rt_matmul_overwrite_f32(EplUnrankedMemRef *a,
                                              EplUnrankedMemRef *b,
                                              EplUnrankedMemRef *c) {
  matmul<float>(a, b, c, /*accumulate=*/false);
}
void _mlir_ciface_epl_rt_matmul_overwrite_f64(EplUnrankedMemRef *a,
                                              EplUnrankedMemRef *b,
                                              EplUnrankedMemRef *c) {
  matmul<double>(a, b, c, /*accumulate=*/false);
}
}
