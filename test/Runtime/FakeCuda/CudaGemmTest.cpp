//===- CudaGemmTest.cpp - The runtime's GEMM on a (fake) GPU --------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//
//
// epl_rt_matmul_f32 as the lowering calls it, on a rank bound to a GPU: the
// runtime maps the row-major (or column-major) views onto cuBLAS's
// column-major GEMM, whose argument checks the fake cuBLAS makes (leading
// dimensions, operands in device buffers of the rank's GPU). Each product
// must equal a double-precision reference, the padding untouched. Also: the
// fake driver ends a program whose host code touches device memory, which
// is what makes the end-to-end runs under it (test_fake_cuda.py) checks of
// the GPU program's buffer placement.
//
//===----------------------------------------------------------------------===//

#include "../GemmChecks.h"
#include "cuda/Cuda.h"

#include "epl/Runtime/Backend.h"
#include "epl/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <functional>
#include <string>
#include <tuple>

using namespace epl::rt;
using namespace epl::test;

namespace {
void onAGPU(const std::function<void()> &body) {
  Options options;
  options.ranks = 1;
  options.cuda = true;
  options.timeoutSeconds = 60;
  runRanks(options, [&](int) { body(); });
}

/// `view`'s data in a device buffer, its descriptor pointing there, for the
/// scope's lifetime; copied back to the host at its end.
template <typename T> class OnDevice {
public:
  explicit OnDevice(View<T> &view)
      : view(view), bytes(view.data.size() * sizeof(T)) {
    device = static_cast<T *>(_mlir_memref_to_llvm_aligned_alloc(64, bytes));
    cuda::copy(device, view.data.data(), bytes);
    view.pointAt(device);
  }
  ~OnDevice() {
    cuda::copy(view.data.data(), device, bytes);
    view.pointAt(view.data.data());
    _mlir_memref_to_llvm_free(device);
  }

private:
  View<T> &view;
  size_t bytes;
  T *device;
};

class CudaGemm : public ::testing::TestWithParam<Case> {};

TEST_P(CudaGemm, EqualsTheReference) {
  auto [m, n, k, la, lb, lc, accumulate] = GetParam();
  View<float> a(m, k, la, 3, 1), b(k, n, lb, 5, 2), c(m, n, lc, 7, 3);
  std::vector<float> before = c.data;
  onAGPU([&] {
    OnDevice<float> da(a), db(b), dc(c);
    if (accumulate)
      _mlir_ciface_epl_rt_matmul_f32(&a.memref, &b.memref, &c.memref);
    else
      _mlir_ciface_epl_rt_matmul_overwrite_f32(&a.memref, &b.memref, &c.memref);
  });
  expectProduct(a, b, c, before, accumulate);
}

INSTANTIATE_TEST_SUITE_P(Layouts, CudaGemm,
                         ::testing::ValuesIn(everyLayout({{33, 17, 9},
                                                          {1, 100, 7},
                                                          {64, 1, 31},
                                                          {5, 6, 0}})),
                         [](const auto &info) { return caseName(info.param); });

/// The GEMM calls the fake cuBLAS has taken (each a launch on a GPU).
int64_t cublasCalls() {
  // (The library the runtime opens: one, loaded once.)
  void *library = dlopen("libcublas.so.13", RTLD_LAZY);
  auto calls = library ? reinterpret_cast<int64_t (*)()>(
                             dlsym(library, "eplFakeCublasCalls"))
                       : nullptr;
  return calls ? calls() : -1;
}

/// The cuBLAS calls `gemm` makes on a GPU, `a`, `b` and `c` copied there
/// around it.
template <typename T>
int64_t cublasCallsOf(View<T> &a, View<T> &b, View<T> &c,
                      const std::function<void()> &gemm) {
  int64_t calls = -1;
  onAGPU([&] {
    OnDevice<T> da(a), db(b), dc(c);
    int64_t start = cublasCalls();
    gemm();
    calls = cublasCalls() - start;
  });
  return calls;
}

/// A batch of GEMMs (attention's scores over batch and heads) is one
/// strided batched cuBLAS call, whatever C's layout.
TEST(CudaGemmBatched, IsOneCallEachMatrixEqualToTheReference) {
  for (Layout lc : {RowMajor, ColumnMajor}) {
    for (bool accumulate : {true, false}) {
      View<float> a(13, 11, RowMajor, 3, 1, 3), b(11, 7, ColumnMajor, 5, 2, 3),
          c(13, 7, lc, 7, 3, 3);
      std::vector<float> before = c.data;
      int64_t calls = cublasCallsOf(a, b, c, [&] {
        if (accumulate)
          _mlir_ciface_epl_rt_matmul_f32(&a.memref, &b.memref, &c.memref);
        else
          _mlir_ciface_epl_rt_matmul_overwrite_f32(&a.memref, &b.memref,
                                                   &c.memref);
      });
      EXPECT_EQ(calls, 1) << "C " << (lc == RowMajor ? "row" : "column")
                          << "-major";
      expectProduct(a, b, c, before, accumulate);
    }
  }
}

/// One B for every matrix of A (a batch stride of 0) is one call too.
TEST(CudaGemmBatched, BroadcastOperand) {
  View<double> a(6, 5, RowMajor, 1, 1, 4), b(5, 3, RowMajor, 2, 2, 4),
      c(6, 3, ColumnMajor, 1, 3, 4);
  b.matrixStride = 0;
  b.descriptor[6] = 0; // the batch stride
  std::vector<double> before = c.data;
  EXPECT_EQ(cublasCallsOf(a, b, c,
                          [&] {
                            _mlir_ciface_epl_rt_matmul_f64(&a.memref, &b.memref,
                                                           &c.memref);
                          }),
            1);
  expectProduct(a, b, c, before, /*accumulate=*/true);
}

/// Matrices of C that overlap (a view whose batch stride is smaller than
/// a matrix) cannot be one call: cuBLAS may write them in any order. Each
/// is a call of its own, in order, as on the CPU.
TEST(CudaGemmBatched, OverlappingResultsOneCallEach) {
  View<float> a(4, 3, RowMajor, 0, 1, 3), b(3, 2, RowMajor, 0, 2, 3),
      c(4, 2, RowMajor, 0, 3, 3);
  c.descriptor[6] = 2; // matrix i starts at row i / 2 + ...: they overlap
  EXPECT_EQ(cublasCallsOf(a, b, c,
                          [&] {
                            _mlir_ciface_epl_rt_matmul_overwrite_f32(
                                &a.memref, &b.memref, &c.memref);
                          }),
            3);
  // The last matrix written wins where they overlap: C's last matrix is
  // A's last times B's.
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 2; ++j) {
      double want = 0;
      for (int64_t l = 0; l < 3; ++l)
        want += double(a.at(i, l, 2)) * double(b.at(l, j, 2));
      EXPECT_NEAR(c.data[2 * 2 + i * 2 + j], want, 1e-5);
    }
}

TEST(CudaGemmF64, EqualsTheReference) {
  View<double> a(13, 11, ColumnMajor, 3, 1), b(11, 7, RowMajor, 5, 2),
      c(13, 7, ColumnMajor, 7, 3);
  std::vector<double> before = c.data;
  onAGPU([&] {
    OnDevice<double> da(a), db(b), dc(c);
    _mlir_ciface_epl_rt_matmul_overwrite_f64(&a.memref, &b.memref, &c.memref);
  });
  expectProduct(a, b, c, before, /*accumulate=*/false);
}

/// A GEMM on host buffers is refused as cuBLAS refuses it: one line naming
/// the GEMM, exit 1.
TEST(CudaGemmDeathTest, HostOperandsAreAnError) {
  View<float> a(4, 3, RowMajor, 0, 1), b(3, 2, RowMajor, 0, 2),
      c(4, 2, RowMajor, 0, 3);
  EXPECT_EXIT(onAGPU([&] {
                _mlir_ciface_epl_rt_matmul_f32(&a.memref, &b.memref, &c.memref);
              }),
              ::testing::ExitedWithCode(1), "cuBLAS GEMM 4x2x3 failed");
}

// A kernel compiled for the host as `epl-host-kernel-images` makes it: its
// launcher hands the driver each buffer it was launched with, through the
// slot the driver sets when it loads the module.
extern "C" {
void (*__epl_host_check_buffer_probe)(const char *, int32_t, const void *,
                                      int64_t) = nullptr;
void __epl_host_launch_probe_touch(void **params, int64_t, int64_t, int64_t,
                                   int64_t, int64_t, int64_t) {
  // A memref<4xf32>'s fields: allocated and aligned pointers, offset 0,
  // size 4, stride 1.
  auto *aligned = *static_cast<float **>(params[1]);
  __epl_host_check_buffer_probe("touch", 0, aligned, 4 * sizeof(float));
  aligned[0] += 1;
}
}

/// Launches the probe's kernel on `buffer`, a memref<4xf32>.
void launchProbe(float *buffer) {
  static char image[] = "epl-host-kernels:probe:touch";
  void *module = mgpuModuleLoad(image, sizeof(image));
  void *function = mgpuModuleGetFunction(module, "touch");
  void *allocated = buffer, *aligned = buffer;
  int64_t offset = 0, size = 4, stride = 1;
  void *params[] = {&allocated, &aligned, &offset, &size, &stride};
  mgpuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, cuda::stream(), params,
                   nullptr, 5);
  cuda::synchronize();
}

/// A GPU faults on a kernel reading host memory (and loses its context);
/// the host loops standing in for it would not: the fake ends the run.
TEST(FakeDriverDeathTest, KernelLaunchedWithAHostBufferEndsTheRun) {
  onAGPU([] {
    auto *device =
        static_cast<float *>(_mlir_memref_to_llvm_aligned_alloc(64, 16));
    launchProbe(device);
    _mlir_memref_to_llvm_free(device);
  });
  EXPECT_EXIT(onAGPU([] {
                std::vector<float> host(4);
                launchProbe(host.data());
              }),
              ::testing::ExitedWithCode(86),
              "kernel touch was launched with argument 0 \\(16 bytes at "
              "0x[0-9a-f]+\\) outside this GPU's memory");
}

TEST(FakeDriverDeathTest, HostCodeTouchingDeviceMemoryEndsTheRun) {
  EXPECT_EXIT(onAGPU([] {
                auto *p = static_cast<volatile float *>(
                    _mlir_memref_to_llvm_aligned_alloc(64, 256));
                p[3] = 1.0f;
              }),
              ::testing::ExitedWithCode(86), "host code touched device memory");
}
} // namespace
