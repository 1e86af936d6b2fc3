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

#include "GemmChecks.h"

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
using namespace epl::test;

namespace {
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
  // At least 2^22 multiply-adds (cut into blocks on several threads):
  // columns (m <= n), rows (m > n), exactly 2^22, one row, one column, and
  // fewer blocks (2 of 16 columns) than threads; then small ones (one
  // thread, OpenBLAS).
  std::vector<Case> out = everyLayout({{130, 333, 101},
                                       {517, 61, 143},
                                       {256, 256, 64},
                                       {1, 1024, 4096},
                                       {4096, 1, 1024},
                                       {16, 20, 13108},
                                       {33, 17, 9},
                                       {1, 1000, 1}});
  // Views BLAS cannot address, packed first.
  out.push_back({130, 333, 101, Strided, RowMajor, RowMajor, true});
  out.push_back({130, 333, 101, RowMajor, Strided, ColumnMajor, false});
  out.push_back({517, 61, 143, RowMajor, RowMajor, Strided, true});
  return out;
}

std::string caseName(const std::tuple<Case, int> &param) {
  return epl::test::caseName(std::get<0>(param)) + "_threads" +
         std::to_string(std::get<1>(param));
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
