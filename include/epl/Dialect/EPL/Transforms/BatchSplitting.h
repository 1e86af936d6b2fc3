//===- BatchSplitting.h - A model on a fraction of its batch ----*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_BATCHSPLITTING_H
#define EPL_DIALECT_EPL_TRANSFORMS_BATCHSPLITTING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::epl {

/// Rewrites `model` (generalized: linalg.generic and tensor ops) in place to
/// run on 1/`parts` of its batch: the leading dimension of its inputs and
/// labels, and every dimension of every value that derives from it through
/// the indexing maps, reshapes and slices, shrink by `parts`. Constants
/// stay: a mean over the batch written as a division by the batch size
/// becomes that micro-batch's contribution to the full batch's mean.
/// Fails, with an error naming the op, when the batch cannot be followed or
/// does not divide.
LogicalResult splitBatch(func::FuncOp model, int64_t parts);

} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_TRANSFORMS_BATCHSPLITTING_H
