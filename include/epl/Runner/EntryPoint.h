//===- EntryPoint.h - The function epl-run executes -------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// epl-run calls one function of a tensor-level module on every rank. This
// finds it, describes its arguments in the user's terms (parameters, inputs,
// labels and their names in files) and wraps it in a function with the C
// interface that takes every argument and result as a caller-owned buffer,
// so that the host owns all memory that crosses the boundary.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_ENTRYPOINT_H
#define EPL_RUNNER_ENTRYPOINT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <string>
#include <vector>

namespace mlir::epl {

enum class ArgKind { Param, Input, Label, OptState, Other };

/// How a per-device program's argument or result is one device's shard of
/// a global value (`epl.shard`): for each dimension, the indices of the mesh
/// axes it is split over. Empty when the value is whole on every device.
struct Shard {
  std::vector<std::vector<int64_t>> dimAxes;
  bool isWhole() const {
    for (const auto &axes : dimAxes)
      if (!axes.empty())
        return false;
    return true;
  }
};

struct EntryArg {
  /// `epl.name`, or `arg<position>`.
  std::string name;
  ArgKind kind = ArgKind::Other;
  /// The global type (what files hold); `localType` is what one device gets.
  RankedTensorType type;
  RankedTensorType localType;
  Shard shard;
  /// `epl.init` of a parameter ("normal", "zeros", "ones"), or empty.
  std::string init;
};

/// What a result of a training step is (`epl.result`).
enum class ResultKind { Loss, Param, OptState, Grad, Other };

struct EntryResult {
  /// `epl.name`, or `result<position>`.
  std::string name;
  ResultKind kind = ResultKind::Other;
  RankedTensorType type;
  RankedTensorType localType;
  Shard shard;
};

struct EntryPoint {
  std::string name;
  std::vector<EntryArg> args;
  std::vector<EntryResult> results;

  /// Whether this is a training step (its results say what they are).
  bool isTrainingStep() const;
};

/// Whether `fn` is an L0 model: tagged arguments, but untagged results (no
/// training step was built yet).
bool isModel(func::FuncOp fn);

/// A mesh of the module, as the runtime numbers them (module order).
struct MeshInfo {
  std::string name;
  std::vector<std::string> axes;
  std::vector<int64_t> sizes;
};

/// The symbol of the wrapper `wrapEntryPoint` adds.
constexpr llvm::StringLiteral kEntryWrapperName = "__epl_entry";

/// The function called `name`, or when `name` is empty the one function
/// whose arguments carry `epl.arg`, else `main`. Errors say which functions
/// there are.
FailureOr<func::FuncOp> findEntryPoint(ModuleOp module, llvm::StringRef name,
                                       std::string &error);

/// Describes `entry`: every argument and result must be a statically shaped
/// tensor.
FailureOr<EntryPoint> describeEntryPoint(func::FuncOp entry,
                                         std::string &error);

/// Adds `__epl_entry(args..., results...)` with the C interface: arguments
/// as read-only buffers, results written into caller-provided buffers.
void wrapEntryPoint(ModuleOp module, func::FuncOp entry);

/// The meshes of `module`, in the order the runtime numbers them.
std::vector<MeshInfo> collectMeshes(ModuleOp module);

} // namespace mlir::epl

#endif // EPL_RUNNER_ENTRYPOINT_H
