//===- ScalarDerivatives.h - Reverse mode on scalar bodies ------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// The one rule `epl-autodiff` uses for every linalg op: the gradient of an
// input of a `linalg.generic` is another generic over the same loops, whose
// body is the reverse-mode derivative of the forward body. This computes
// that derivative, one scalar op at a time (arith and math).
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_SCALARDERIVATIVES_H
#define EPL_DIALECT_EPL_TRANSFORMS_SCALARDERIVATIVES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::epl {

/// Differentiates the scalar computation of a forward linalg body inside the
/// body of a backward op. `primal` maps every value of the forward body to
/// its recomputation in the backward body (see `clonePrimal`).
class BodyDifferentiator {
public:
  BodyDifferentiator(OpBuilder &builder, Location loc, Block &forwardBody,
                     IRMapping &primal)
      : b(builder), loc(loc), body(forwardBody), primal(primal) {}

  /// Recomputes every op of the forward body (not its terminator) at the
  /// builder's insertion point and records the clones in `primal`.
  void clonePrimal();

  /// `seed * d(target)/d(wrt)` as a backward-body value, or a null Value
  /// when `target` does not depend on `wrt`. `target` and `wrt` are values
  /// of the forward body. Fails, with an error at `diagnosticOp`, on an op
  /// that has no derivative rule.
  FailureOr<Value> adjoint(Value target, Value seed, Value wrt,
                           Operation *diagnosticOp);

private:
  Value primalOf(Value forward) { return primal.lookupOrDefault(forward); }

  OpBuilder &b;
  Location loc;
  Block &body;
  IRMapping &primal;
};

} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_TRANSFORMS_SCALARDERIVATIVES_H
