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

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace epl::rt {

template <typename T> inline bool isNaN(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(v);
  else
    return false;
}

template <typename T>
void combine(T *acc, const T *x, size_t n, EplReduction kind) {
  switch (kind) {
  case EPL_RT_SUM:
  case EPL_RT_MEAN:
    for (size_t i = 0; i < n; ++i)
      acc[i] += x[i];
    break;
  case EPL_RT_MAX: // NaN wins, as in PyTorch.
    for (size_t i = 0; i < n; ++i)
      if (x[i] > acc[i] || isNaN(x[i]))
        acc[i] = isNaN(acc[i]) ? acc[i] : x[i];
    break;
  case EPL_RT_MIN:
    for (size_t i = 0; i < n; ++i)
      if (x[i] < acc[i] || isNaN(x[i]))
        acc[i] = isNaN(acc[i]) ? acc[i] : x[i];
    break;
  }
}

/// out = inputs[0] (+) inputs[1] (+) ..., element by element in group
/// order. A block at a time, accumulated apart and then stored: `out` may be
/// any one of the inputs, and is written once.
template <typename T>
void reduceTyped(T *out, const T *const *inputs, int count, size_t n,
                 EplReduction kind) {
  constexpr size_t kBlock = 1024;
  T acc[kBlock];
  for (size_t begin = 0; begin < n; begin += kBlock) {
    size_t m = std::min(kBlock, n - begin);
    std::memcpy(acc, inputs[0] + begin, m * sizeof(T));
    for (int r = 1; r < count; ++r)
      combine(acc, inputs[r] + begin, m, kind);
    if (kind == EPL_RT_MEAN)
      for (size_t i = 0; i < m; ++i)
        acc[i] = acc[i] / static_cast<T>(count);
    std::memcpy(out + begin, acc, m * sizeof(T));
  }
}

/// IEEE binary16 <-> binary32, round to nearest even.
inline float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { // subnormal: normalize
      exp = 127 - 15 + 1;
      while (!(man & 0x400)) {
        man <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) // inf, nan
    return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0));
  if (exp >= 0x1f)
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10)
      return static_cast<uint16_t>(sign);
    man |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = man >> shift, rest = man & ((1u << shift) - 1),
             mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (man >> 13);
  uint32_t rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1)))
    ++half;
  return static_cast<uint16_t>(half);
}

/// f16 contributions, accumulated in f32 in group order, rounded once.
inline void reduceHalf(uint16_t *out, const uint16_t *const *inputs, int count,
                       size_t n, EplReduction kind) {
  std::vector<float> acc(n);
  std::vector<float> x(n);
  std::vector<const float *> ptrs(count);
  std::vector<std::vector<float>> widened(count, std::vector<float>(n));
  for (int r = 0; r < count; ++r) {
    for (size_t i = 0; i < n; ++i)
      widened[r][i] = halfToFloat(inputs[r][i]);
    ptrs[r] = widened[r].data();
  }
  reduceTyped(acc.data(), ptrs.data(), count, n, kind);
  for (size_t i = 0; i < n; ++i)
    out[i] = floatToHalf(acc[i]);
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
  case EPL_RT_F16:
    return reduceHalf(static_cast<uint16_t *>(out),
                      reinterpret_cast<const uint16_t *const *>(inputs), count,
                      n, kind);
  }
}

} // namespace epl::rt

#endif // EPL_LIB_RUNTIME_REDUCE_H
