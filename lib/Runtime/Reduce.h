//===- Reduce.h - Deterministic element-wise reductions ---------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// Both backends reduce contributions with these helpers, one element at a
// time, in group order: ((x0 + x1) + x2) + ... That fixed order is what makes
// a threads run and an MPI run of the same program bit-identical.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_LIB_RUNTIME_REDUCE_H
#define EPL_LIB_RUNTIME_REDUCE_H

#include "epl/Runtime/Runtime.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>

namespace epl::rt {

template <typename T> inline bool isNaN(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(v);
  else
    return false;
}

template <typename T>
void reduceTyped(T *out, const T *const *inputs, int count, size_t n,
                 EplReduction kind) {
  std::memcpy(out, inputs[0], n * sizeof(T));
  for (int r = 1; r < count; ++r) {
    const T *x = inputs[r];
    switch (kind) {
    case EPL_RT_SUM:
    case EPL_RT_MEAN:
      for (size_t i = 0; i < n; ++i)
        out[i] += x[i];
      break;
    case EPL_RT_MAX: // NaN wins, as in PyTorch.
      for (size_t i = 0; i < n; ++i)
        if (x[i] > out[i] || isNaN(x[i]))
          out[i] = isNaN(out[i]) ? out[i] : x[i];
      break;
    case EPL_RT_MIN:
      for (size_t i = 0; i < n; ++i)
        if (x[i] < out[i] || isNaN(x[i]))
          out[i] = isNaN(out[i]) ? out[i] : x[i];
      break;
    }
  }
  if (kind == EPL_RT_MEAN)
    for (size_t i = 0; i < n; ++i)
      out[i] = out[i] / static_cast<T>(count);
}

/// out[i] = inputs[0][i] (op) inputs[1][i] (op) ... in that order.
inline void reduceInOrder(void *out, const void *const *inputs, int count,
                          size_t n, EplDType dtype, EplReduction kind) {
  switch (dtype) {
  case EPL_RT_F32:
    return reduceTyped(static_cast<float *>(out),
                       reinterpret_cast<const float *const *>(inputs), count, n,
                       kind);
  case EPL_RT_F64:
    return reduceTyped(static_cast<double *>(out),
                       reinterpret_cast<const double *const *>(inputs), count,
                       n, kind);
  case EPL_RT_I32:
    return reduceTyped(static_cast<int32_t *>(out),
                       reinterpret_cast<const int32_t *const *>(inputs), count,
                       n, kind);
  case EPL_RT_I64:
    return reduceTyped(static_cast<int64_t *>(out),
                       reinterpret_cast<const int64_t *const *>(inputs), count,
                       n, kind);
  }
}

} // namespace epl::rt

#endif // EPL_LIB_RUNTIME_REDUCE_H
