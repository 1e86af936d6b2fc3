//===- EntryPoint.h - The function a runner executes ------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// epl-run calls one function of a tensor-level module on every rank. This
// finds it, describes it for the runner (Program.h: arguments and results
// in the user's terms, the meshes) and wraps it in a function with the C
// interface that takes every argument and result as a caller-owned buffer,
// so that the host owns all memory that crosses the boundary.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_ENTRYPOINT_H
#define EPL_RUNNER_ENTRYPOINT_H

#include "epl/Runner/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <string>
#include <vector>

namespace mlir::epl {

/// Whether `fn` is an L0 model: tagged arguments, but untagged results (no
/// training step was built yet).
bool isModel(func::FuncOp fn);

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

/// The safetensors type of an MLIR element type runners pass, or
/// std::nullopt (f32, f64, i32 and i64 are supported).
std::optional<DType> dtypeOf(Type elementType);

} // namespace mlir::epl

#endif // EPL_RUNNER_ENTRYPOINT_H
