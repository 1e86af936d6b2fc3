//===- GemmPlan.h - How the runtime's GEMM runs a contraction ---*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// One rule for epl-matmul-to-runtime, which hands contractions to the
// runtime's GEMM (BLAS, cuBLAS) and stages in contiguous copies the operands
// BLAS cannot read in place, and for epl-estimate-memory, which counts those
// copies.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_GEMMPLAN_H
#define EPL_DIALECT_EPL_TRANSFORMS_GEMMPLAN_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/BuiltinTypes.h"

#include <array>
#include <optional>

namespace mlir::epl {
/// How the runtime's GEMM reads a contraction's operands A, B and C.
struct GemmPlan {
  /// The loops of each kind: the batch in the order C reads it, m and k in
  /// A's order, n in B's. Several loops of a kind make one GEMM dimension.
  SmallVector<unsigned> batch, m, n, k;
  /// Each operand's dimensions in the order the GEMM reads them: A as
  /// (batch, m, k), B as (batch, k, n), C as (batch, m, n).
  std::array<SmallVector<int64_t>, 3> perms;

  /// The loops operand `i`'s matrix rows and columns each group.
  std::pair<size_t, size_t> matrixLoops(unsigned i) const;
  /// Whether BLAS reads operand `i`, in a buffer of `type`, in place:
  /// permuted, each group of loops one strided dimension, the matrix one
  /// BLAS addresses. Else the GEMM is handed a contiguous copy.
  bool readsInPlace(unsigned i, MemRefType type) const;
  /// The groups of operand `i`'s permuted dimensions: the batch loops one
  /// each, then its matrix's rows and columns.
  SmallVector<ReassociationIndices> groups(unsigned i) const;
};

/// The plan of `op` when the runtime's GEMM runs it: a contraction of two
/// inputs into one init, of static shapes, in an element type the runtime
/// has a GEMM of (f32, f64), each operand indexing exactly its loops.
std::optional<GemmPlan> planGemm(linalg::LinalgOp op);

/// `type` with its dimensions permuted by `perm` (a strided view).
MemRefType permutedType(MemRefType type, ArrayRef<int64_t> perm);

/// Whether BLAS reads the innermost two dimensions of `type` in place (the
/// runtime's own rule, epl/Runtime/BlasLayout.h).
bool isBLASMatrix(MemRefType type);
} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_TRANSFORMS_GEMMPLAN_H
