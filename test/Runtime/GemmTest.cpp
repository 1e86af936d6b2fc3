//===- GemmTest.cpp - The runtime's GEMM on every layout and thread count -===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//
//
// epl_rt_matmul_f32 as the lowering calls it, C += op(A) op(B) or C =, with
// A and B row-major or transposed views, C row-major or column-major, rows
// padded (a leading dimension larger than the row), sizes that are no
// multiple of a vector, on one rank of 1, 2 and 3 threads: a rank of several
// threads cuts a large GEMM into column blocks (m <= n) or row blocks
// (m > n), a run of them per thread; each result must equal a
// double-precision reference. Also views BLAS cannot address (packed
// first), batches of matrices and fp64. Also built with ThreadSanitizer
// (docs/reliability.md).
//
//===----------------------------------------------------------------------===//

#include "epl/Runtime/Backend.h"
#include "epl/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

using namespace epl::rt;

namespace {
/// How a view lays out its matrix.
enum Layout { RowMajor, ColumnMajor, Strided };

/// A rows x cols view into `data`: element (i, j) at i * rowStride +
/// j * colStride, as a 2-D memref descriptor (3-D with `batches`, the
/// matrices one after the other).
template <typename T> struct View {
  std::vector<T> data;
  int64_t batches, rows, cols, rowStride, colStride, matrixStride;
  std::vector<int64_t> descriptor;
  EplUnrankedMemRef memref;

  /// Rows (or columns) padded by `pad` elements; Strided: row-major with
  /// every other element, which BLAS cannot address (the runtime packs it).
  View(int64_t rows, int64_t cols, Layout layout, int64_t pad, uint32_t seed,
       int64_t batches = 0)
      : batches(batches), rows(rows), cols(cols) {
    int64_t ld = (layout == ColumnMajor ? rows : cols) + pad;
    if (layout == Strided)
      ld = 2 * cols + pad;
    rowStride = layout == ColumnMajor ? 1 : ld;
    colStride = layout == ColumnMajor ? ld : layout == Strided ? 2 : 1;
    matrixStride = (layout == ColumnMajor ? cols : rows) * ld;
    data.resize(std::max<int64_t>(batches, 1) * matrixStride);
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (T &x : data)
      x = dist(gen);
    auto ptr = reinterpret_cast<int64_t>(data.data());
    if (batches)
      descriptor = {ptr,  ptr,          0,         batches,  rows,
                    cols, matrixStride, rowStride, colStride};
    else
      descriptor = {ptr, ptr, 0, rows, cols, rowStride, colStride};
    memref = {batches ? 3 : 2, descriptor.data()};
  }
  T at(int64_t i, int64_t j, int64_t batch = 0) const {
    return data[batch * matrixStride + i * rowStride + j * colStride];
  }
};

/// Checks C (after) against op(A) op(B) (+ C before) in double precision,
/// and that C's padding is untouched.
template <typename T>
void expectProduct(const View<T> &a, const View<T> &b, const View<T> &c,
                   const std::vector<T> &before, bool accumulate) {
  int64_t m = c.rows, n = c.cols, k = a.cols, wrong = 0;
  std::vector<bool> inView(c.data.size());
  for (int64_t batch = 0; batch < std::max<int64_t>(c.batches, 1); ++batch)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        size_t at = batch * c.matrixStride + i * c.rowStride + j * c.colStride;
        inView[at] = true;
        double want = accumulate ? before[at] : 0;
        for (int64_t l = 0; l < k; ++l)
          want += double(a.at(i, l, batch)) * double(b.at(l, j, batch));
        if (std::abs(c.data[at] - want) > 1e-4 * std::sqrt(double(k)) + 1e-5)
          ++wrong;
      }
  EXPECT_EQ(wrong, 0) << m << "x" << k << " * " << k << "x" << n;
  for (size_t p = 0; p < c.data.size(); ++p) {
    if (!inView[p]) {
      ASSERT_EQ(c.data[p], before[p]) << "padding at " << p << " written";
    }
  }
}

void onOneRank(int threads, const std::function<void()> &body) {
  Options options;
  options.ranks = 1;
  options.threadsPerRank = threads;
  options.timeoutSeconds = 60;
  runRanks(options, [&](int) {
    EXPECT_EQ(threadsPerRank(), threads);
    body();
  });
}

/// m, n, k, the layouts of A, B and C, accumulate.
using Case =
    std::tuple<int64_t, int64_t, int64_t, Layout, Layout, Layout, bool>;

class Gemm : public ::testing::TestWithParam<std::tuple<Case, int>> {};

TEST_P(Gemm, EqualsTheReference) {
  auto [shape, threads] = GetParam();
  auto [m, n, k, la, lb, lc, accumulate] = shape;
  View<float> a(m, k, la, 3, 1), b(k, n, lb, 5, 2), c(m, n, lc, 7, 3);
  std::vector<float> before = c.data;
  onOneRank(threads, [&] {
    if (accumulate)
      _mlir_ciface_epl_rt_matmul_f32(&a.memref, &b.memref, &c.memref);
    else
      _mlir_ciface_epl_rt_matmul_overwrite_f32(&a.memref, &b.memref, &c.memref);
  });
  expectProduct(a, b, c, before, accumulate);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  // At least 2^22 multiply-adds (cut into blocks on several threads):
  // columns (m <= n), rows (m > n), exactly 2^22, one row, one column, and
  // fewer blocks (2 of 16 columns) than threads; then small ones (one
  // thread, OpenBLAS).
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{130, 333, 101},
                         {517, 61, 143},
                         {256, 256, 64},
                         {1, 1024, 4096},
                         {4096, 1, 1024},
                         {16, 20, 13108},
                         {33, 17, 9},
                         {1, 1000, 1}})
    for (int layout = 0; layout < 16; ++layout)
      out.push_back({m, n, k, layout & 1 ? ColumnMajor : RowMajor,
                     layout & 2 ? ColumnMajor : RowMajor,
                     layout & 4 ? ColumnMajor : RowMajor, bool(layout & 8)});
  // Views BLAS cannot address, packed first.
  out.push_back({130, 333, 101, Strided, RowMajor, RowMajor, true});
  out.push_back({130, 333, 101, RowMajor, Strided, ColumnMajor, false});
  out.push_back({517, 61, 143, RowMajor, RowMajor, Strided, true});
  return out;
}

std::string caseName(const std::tuple<Case, int> &param) {
  auto [shape, threads] = param;
  auto [m, n, k, la, lb, lc, acc] = shape;
  auto layout = [](Layout l) {
    return l == RowMajor ? "" : l == ColumnMajor ? "t" : "s";
  };
  return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) +
         "_A" + layout(la) + "_B" + layout(lb) + "_C" + layout(lc) +
         (acc ? "_acc" : "") + "_threads" + std::to_string(threads);
}

INSTANTIATE_TEST_SUITE_P(Layouts, Gemm,
                         ::testing::Combine(::testing::ValuesIn(cases()),
                                            ::testing::Values(1, 2, 3)),
                         [](const auto &info) { return caseName(info.param); });

/// A batch of GEMMs (attention's, per head), each large enough to be cut.
TEST(GemmBatched, EachMatrixEqualsTheReference) {
  for (int threads : {1, 2}) {
    View<float> a(130, 101, RowMajor, 3, 1, 3),
        b(101, 333, ColumnMajor, 5, 2, 3), c(130, 333, RowMajor, 7, 3, 3);
    std::vector<float> before = c.data;
    onOneRank(threads, [&] {
      _mlir_ciface_epl_rt_matmul_f32(&a.memref, &b.memref, &c.memref);
    });
    expectProduct(a, b, c, before, /*accumulate=*/true);
  }
}

/// fp64 GEMMs stay on OpenBLAS (oneDNN has none).
TEST(GemmF64, EqualsTheReference) {
  for (int threads : {1, 2}) {
    View<double> a(130, 101, RowMajor, 3, 1), b(101, 333, ColumnMajor, 5, 2),
        c(130, 333, RowMajor, 7, 3);
    std::vector<double> before = c.data;
    onOneRank(threads, [&] {
      _mlir_ciface_epl_rt_matmul_overwrite_f64(&a.memref, &b.memref, &c.memref);
    });
    expectProduct(a, b, c, before, /*accumulate=*/false);
  }
}
} // namespace
