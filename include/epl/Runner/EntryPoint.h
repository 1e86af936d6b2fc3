//===- EntryPoint.h - The function a runner executes ------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// epl-run calls one function of a tensor-level module on every rank, or for
// a pipelined step (`epl.pipeline`) one function per stage. This finds them,
// describes them for the runner (Program.h: arguments and results in the
// user's terms, the meshes, the stage axis) and wraps each in a function
// with the C interface that takes every argument and result as a
// caller-owned buffer, so that the host owns all memory that crosses the
// boundary.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_ENTRYPOINT_H
#define EPL_RUNNER_ENTRYPOINT_H

#include "epl/Dialect/EPL/IR/EPLOps.h"
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

/// What a runner calls: one function, or the stage functions of an
/// `epl.pipeline`, in stage order.
struct StepFunctions {
  /// The function's or the pipeline's symbol.
  std::string name;
  SmallVector<func::FuncOp> functions;
  /// Null unless pipelined.
  PipelineOp pipeline;
};

/// The function or `epl.pipeline` called `name`; when `name` is empty, the
/// module's one pipeline, else the one function whose arguments carry
/// `epl.arg`, else `main`. Errors say which functions there are.
FailureOr<StepFunctions> findEntryPoint(ModuleOp module, llvm::StringRef name,
                                        std::string &error);

/// Describes `entry`: every argument and result must be a statically shaped
/// tensor.
FailureOr<EntryPoint> describeEntryPoint(func::FuncOp entry,
                                         std::string &error);

/// Describes the step: each function as a stage, the step's arguments by
/// name (Arguments.h), the meshes, and for a pipeline its mesh and axis.
FailureOr<Program> describeProgram(ModuleOp module, const StepFunctions &step,
                                   std::string &error);

/// The symbol of the wrapper `wrapEntryPoint` adds for stage `stage`.
std::string entryWrapperName(size_t stage);

/// Adds `entryWrapperName(stage)(args..., results...)` with the C
/// interface: arguments as read-only buffers, results written into
/// caller-provided buffers. Returns the (result, argument) pairs whose
/// buffers may be one: a new parameter or optimizer state made by an
/// element-wise op that every other reader of the old value precedes, so
/// the runner can update it in place instead of holding two copies.
std::vector<std::pair<size_t, size_t>>
wrapEntryPoint(ModuleOp module, func::FuncOp entry, size_t stage);

/// The meshes of `module`, in the order the runtime numbers them.
std::vector<MeshInfo> collectMeshes(ModuleOp module);

/// The safetensors type of an MLIR element type runners pass, or
/// std::nullopt (f32, f64, i32 and i64 are supported).
std::optional<DType> dtypeOf(Type elementType);

} // namespace mlir::epl

#endif // EPL_RUNNER_ENTRYPOINT_H
