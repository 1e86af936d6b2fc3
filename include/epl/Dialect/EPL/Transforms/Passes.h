//===- Passes.h - EPL transformation passes ---------------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_PASSES_H
#define EPL_DIALECT_EPL_TRANSFORMS_PASSES_H

#include "epl/Dialect/EPL/Transforms/Kernels.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::epl {

#define GEN_PASS_DECL
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"

/// Decomposes every aggregated linalg op under `root` (see
/// `epl-decompose-aggregates`), telling `listener` what it rewrites.
LogicalResult
decomposeAggregatedOps(Operation *root,
                       RewriterBase::Listener *listener = nullptr);

/// The LLVM function attribute (`"true"`) `epl-outline-kernels` gives a
/// kernel whose every call passes buffers that cannot overlap; the JIT and
/// epl-compile make its pointer arguments `noalias`.
inline constexpr llvm::StringLiteral kNoAliasAttribute =
    "epl-noalias-arguments";

#define GEN_PASS_REGISTRATION
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"

} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_TRANSFORMS_PASSES_H
