//===- InitHints.h - What seeded values need to know of a model -*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// Seeded parameters and data (Initializers.h) are drawn from shapes alone,
// except for two facts only the model knows: which dimensions of a weight
// a contraction reduces over (its fan-in: torch's Linear keeps weights
// (out, in) and multiplies by their transpose), and the size of the table
// an integer input indexes (a class id must be a valid class).
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_INITHINTS_H
#define EPL_RUNNER_INITHINTS_H

#include "epl/Runner/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::epl {

struct InitHints {
  /// By parameter name: the product of the dimensions the first
  /// contraction reading it (through transposes) reduces over.
  llvm::StringMap<int64_t> fanIn;
  /// By input or label name: the smallest size of a dimension it indexes
  /// (`tensor.extract` in a linalg body, through integer casts).
  llvm::StringMap<int64_t> indexBound;
};

/// Reads the hints off an L0 model function (arguments tagged `epl.arg`),
/// a training step built from one, or a function whose arguments are
/// untagged (inputs, as the runner feeds them); the index bounds alone
/// without `fanIns` (a partitioned step's shapes are a device's).
InitHints analyzeInitHints(func::FuncOp model, bool fanIns = true);

/// Fills `fanIn` and `indexBound` of the arguments `hints` names.
void applyInitHints(const InitHints &hints, std::vector<EntryArg> &args);

} // namespace mlir::epl

#endif // EPL_RUNNER_INITHINTS_H
