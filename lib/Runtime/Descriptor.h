//===- Descriptor.h - Reading MLIR memref descriptors -----------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// Lowered code passes buffers as unranked memrefs: {rank, descriptor}, the
// descriptor being {allocated, aligned, offset, sizes[rank], strides[rank]}.
// Every runtime entry point reads them through this one view.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_LIB_RUNTIME_DESCRIPTOR_H
#define EPL_LIB_RUNTIME_DESCRIPTOR_H

#include "epl/Runtime/Runtime.h"

#include <string>
#include <vector>

namespace epl::rt {

struct StridedView {
  /// The first element: aligned pointer plus offset, in bytes.
  char *base = nullptr;
  std::vector<int64_t> sizes, strides;

  static StridedView of(EplUnrankedMemRef *memref, size_t elementSize) {
    auto *fields = static_cast<int64_t *>(memref->descriptor);
    StridedView v;
    v.base = reinterpret_cast<char *>(fields[1]) +
             fields[2] * static_cast<int64_t>(elementSize);
    v.sizes.assign(fields + 3, fields + 3 + memref->rank);
    v.strides.assign(fields + 3 + memref->rank, fields + 3 + 2 * memref->rank);
    return v;
  }

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t s : sizes)
      n *= s;
    return n;
  }

  /// Row-major without gaps (unit dimensions may have any stride).
  bool isContiguous() const {
    int64_t expected = 1;
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      if (sizes[d] != 1 && strides[d] != expected)
        return false;
      expected *= sizes[d];
    }
    return true;
  }

  /// "4x8", or "scalar".
  std::string shape() const {
    std::string s;
    for (size_t i = 0; i < sizes.size(); ++i)
      s += (i ? "x" : "") + std::to_string(sizes[i]);
    return s.empty() ? "scalar" : s;
  }
};

} // namespace epl::rt

#endif // EPL_LIB_RUNTIME_DESCRIPTOR_H
