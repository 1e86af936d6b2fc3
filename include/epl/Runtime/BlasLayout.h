//===- BlasLayout.h - Which strided matrices BLAS reads in place -*- C++
//-*-===//
//
// Part of EPL-MLIR.
//
// One rule for the runtime's GEMM (lib/Runtime/Gemm.cpp), which hands views
// to BLAS, and for epl-matmul-to-runtime, which stages in contiguous copies
// the views the runtime could not hand over (cuBLAS reads no other layout).
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNTIME_BLASLAYOUT_H
#define EPL_RUNTIME_BLASLAYOUT_H

#include <algorithm>
#include <cstdint>
#include <optional>

namespace epl::rt {

/// A matrix as BLAS addresses it: row-major (or, `transposed`, column-major)
/// with leading dimension `ld`.
struct BlasLayout {
  bool transposed;
  int64_t ld;
};

/// How BLAS reads a `rows` x `cols` matrix whose elements are `rowStride`
/// and `colStride` apart, or nothing when it cannot: one dimension must have
/// unit stride and the other step over whole rows or columns. A dimension of
/// size 0 or 1 is never stepped over, so its stride does not matter (an
/// m x 1 column of a wider matrix is a strided row-major view).
inline std::optional<BlasLayout>
blasLayout(int64_t rows, int64_t cols, int64_t rowStride, int64_t colStride) {
  if ((colStride == 1 || cols <= 1) &&
      (rows <= 1 || rowStride >= std::max<int64_t>(cols, 1)))
    return BlasLayout{false,
                      rows <= 1 ? std::max<int64_t>(cols, 1) : rowStride};
  if ((rowStride == 1 || rows <= 1) &&
      (cols <= 1 || colStride >= std::max<int64_t>(rows, 1)))
    return BlasLayout{true, cols <= 1 ? std::max<int64_t>(rows, 1) : colStride};
  return std::nullopt;
}

} // namespace epl::rt

#endif // EPL_RUNTIME_BLASLAYOUT_H
