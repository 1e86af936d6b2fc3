//===- Initializers.h - Seeded parameters and synthetic data ----*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_INITIALIZERS_H
#define EPL_RUNNER_INITIALIZERS_H

#include "epl/Runner/EntryPoint.h"
#include "epl/Support/Safetensors.h"

namespace mlir::epl {

/// The safetensors type of an MLIR element type epl-run can pass, or
/// std::nullopt (f32, f64, i32 and i64 are supported).
std::optional<DType> dtypeOf(Type elementType);

/// A deterministic value for `arg` from `seed`:
///  - parameters: `epl.init`, or by default normal(0, 1/sqrt(fan_in)) for
///    rank >= 2 (fan_in: all dimensions but the last) and zeros below;
///  - optimizer state: zeros;
///  - float labels of rank 2: one-hot rows; other floats: normal(0, 1);
///  - integers: uniform in [0, 10).
HostTensor initializeTensor(const EntryArg &arg, uint64_t seed);

} // namespace mlir::epl

#endif // EPL_RUNNER_INITIALIZERS_H
