//===- GemmChecks.h - Matrices for the runtime's GEMM tests -----*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// Random matrices in every layout the lowering hands the runtime's GEMM,
// as memref descriptors, and the check of a product against a
// double-precision reference: the CPU's GEMM test and the GPU's (under the
// fake CUDA driver) share them.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_TEST_RUNTIME_GEMMCHECKS_H
#define EPL_TEST_RUNTIME_GEMMCHECKS_H

#include "epl/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace epl::test {
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
  /// The descriptor names `base` (a device copy of `data`) instead.
  void pointAt(T *base) {
    descriptor[0] = descriptor[1] = reinterpret_cast<int64_t>(base);
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
/// m, n, k, the layouts of A, B and C, accumulate.
using Case =
    std::tuple<int64_t, int64_t, int64_t, Layout, Layout, Layout, bool>;

/// Each shape with A, B and C row- or column-major, accumulating or not.
inline std::vector<Case> everyLayout(
    std::initializer_list<std::tuple<int64_t, int64_t, int64_t>> shapes) {
  std::vector<Case> out;
  for (auto [m, n, k] : shapes)
    for (int layout = 0; layout < 16; ++layout)
      out.push_back({m, n, k, layout & 1 ? ColumnMajor : RowMajor,
                     layout & 2 ? ColumnMajor : RowMajor,
                     layout & 4 ? ColumnMajor : RowMajor, bool(layout & 8)});
  return out;
}

/// `130x101x333_At_B_Cs_acc`: m x k x n, the transposed (t) and strided
/// (s) operands.
inline std::string caseName(const Case &c) {
  auto [m, n, k, la, lb, lc, acc] = c;
  auto layout = [](Layout l) {
    return l == RowMajor ? "" : l == ColumnMajor ? "t" : "s";
  };
  return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) +
         "_A" + layout(la) + "_B" + layout(lb) + "_C" + layout(lc) +
         (acc ? "_acc" : "");
}
} // namespace epl::test

#endif // EPL_TEST_RUNTIME_GEMMCHECKS_H
