//===- Copy.cpp - Strided copies for lowered code -------------------------===//
//
// Part of EPL-MLIR.
//
// `finalize-memref-to-llvm` lowers a `memref.copy` between buffers it cannot
// prove contiguous to a call to `memrefCopy`, which upstream ships in
// mlir_c_runner_utils. The runtime provides it itself so that epl-run and
// AOT binaries need no MLIR library at run time.
//
//===----------------------------------------------------------------------===//

#include "Descriptor.h"
#include "epl/Runtime/Runtime.h"

#include <cstring>
#include <vector>

extern "C" void memrefCopy(int64_t elemSize, EplUnrankedMemRef *srcArg,
                           EplUnrankedMemRef *dstArg) {
  using epl::rt::StridedView;
  StridedView src = StridedView::of(srcArg, elemSize);
  StridedView dst = StridedView::of(dstArg, elemSize);
  int64_t rank = static_cast<int64_t>(src.sizes.size());
  int64_t total = 1;
  for (int64_t s : src.sizes)
    total *= s;
  if (total == 0)
    return;
  // Walk the index space row-major, like an odometer.
  std::vector<int64_t> index(rank, 0);
  int64_t srcOffset = 0, dstOffset = 0;
  for (int64_t n = 0; n < total; ++n) {
    std::memcpy(dst.base + dstOffset * elemSize,
                src.base + srcOffset * elemSize, elemSize);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < src.sizes[d]) {
        srcOffset += src.strides[d];
        dstOffset += dst.strides[d];
        break;
      }
      srcOffset -= src.strides[d] * (src.sizes[d] - 1);
      dstOffset -= dst.strides[d] * (dst.sizes[d] - 1);
      index[d] = 0;
    }
  }
}
