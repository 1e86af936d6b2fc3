//===- ReductionSplitting.h - When a long reduction is split ----*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_REDUCTIONSPLITTING_H
#define EPL_DIALECT_EPL_TRANSFORMS_REDUCTIONSPLITTING_H

#include <algorithm>
#include <cstdint>

namespace mlir::epl {
/// How epl-split-reductions splits a reduction (its options), and so what
/// epl-fuse-elementwise must not fuse into one it splits: one rule for
/// both passes.
struct ReductionSplitting {
  /// Fewer parts save less than the op combining them costs.
  static constexpr int64_t kMinParts = 4;

  /// About this many threads in all where a reduction has fewer results
  /// (0: none).
  int64_t targetThreads = 0;
  /// Values each part reduces, at least and (0: no bound) at most.
  int64_t minPerThread = 16, maxPerThread = 0;

  /// The most parts a reduction with `points` results of `reduced` values
  /// each is split into (along one loop, into a divisor of its size at
  /// most this); below kMinParts it is left whole.
  int64_t partsLimit(int64_t points, int64_t reduced) const {
    bool fewThreads = points < targetThreads;
    bool longParts = maxPerThread > 0 && reduced > maxPerThread;
    if (points <= 0 || (!fewThreads && !longParts))
      return 0;
    int64_t want = fewThreads ? (targetThreads + points - 1) / points : 1;
    if (longParts)
      want = std::max(want, (reduced + maxPerThread - 1) / maxPerThread);
    return std::min(want, reduced / minPerThread);
  }

  /// Whether such a reduction is split, where one of its loops divides.
  bool splits(int64_t points, int64_t reduced) const {
    return partsLimit(points, reduced) >= kMinParts;
  }
};
} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_TRANSFORMS_REDUCTIONSPLITTING_H
