//===- Initializers.h - Seeded parameters and synthetic data ----*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_INITIALIZERS_H
#define EPL_RUNNER_INITIALIZERS_H

#include "epl/Runner/Program.h"
#include "epl/Support/Safetensors.h"

namespace mlir::epl {

/// A deterministic value for `arg` from `seed`:
///  - parameters: `epl.init`, or by default normal(0, 1/sqrt(fan_in)) for
///    rank >= 2 (fan_in: `arg.fanIn`, else all dimensions but the last)
///    and zeros below;
///  - optimizer state: zeros;
///  - float labels of rank 2: one-hot rows; other floats: normal(0, 1);
///  - integers: uniform in [0, `arg.indexBound`), else [0, 10).
/// `arg` must have a dtype.
HostTensor initializeTensor(const EntryArg &arg, uint64_t seed);

/// The order in which epoch `epoch` (1-based) visits `n` samples: the
/// Fisher-Yates shuffle of 0..n-1 driven by the SplitMix64 stream of
/// `seed XOR FNV-1a-64("shuffle/epoch<epoch>")`, for i = n-1 down to 1
/// swapping positions i and next() mod (i + 1) (docs/epl-run.md).
std::vector<int64_t> shuffledOrder(int64_t n, uint64_t seed, int epoch);

} // namespace mlir::epl

#endif // EPL_RUNNER_INITIALIZERS_H
