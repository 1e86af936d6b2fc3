//===- BatchSplitting.h - A model on a fraction of its batch ----*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_BATCHSPLITTING_H
#define EPL_DIALECT_EPL_TRANSFORMS_BATCHSPLITTING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::epl {

/// Rewrites `model` (generalized: linalg.generic and tensor ops) in place to
/// run on 1/`parts` of its batch: the leading dimension of its inputs and
/// labels, and every dimension of every value that derives from it through
/// the indexing maps, reshapes and slices, shrink by `parts`. Constants
/// stay: a mean over the batch written as a division by the batch size
/// becomes that micro-batch's contribution to the full batch's mean.
/// Fails, with an error naming the op, when the batch cannot be followed or
/// does not divide. The `wholeBatch` arguments are inputs that hold no
/// batch: statistics of the whole batch (see `wholeBatchStatistics`).
LogicalResult splitBatch(func::FuncOp model, int64_t parts,
                         ArrayRef<BlockArgument> wholeBatch = {});

/// The statistics of `model`'s data that micro-batches compute on the
/// whole batch, before them: values reduced over the batch from its inputs
/// and labels alone, no parameter or state in them (how many labels
/// cross-entropy counts, the ignored ones left out; the mean and variance
/// of a batch norm over the inputs). Each micro-batch divides by the whole
/// batch's count, or normalizes by its statistics, as the whole batch
/// does; its own would differ.
/// A result computed from the data alone keeps its statistics per
/// micro-batch, since the step sums the micro-batches' results.
/// Gives each empty tensor, tensor constant and fill of `model` one use
/// first, as `splitBatch` does: one shared by a statistic and a batched
/// value (after CSE) would hide where the batch is.
SmallVector<Value> wholeBatchStatistics(func::FuncOp model);

/// Makes each of `statistics` (values of `micro`) an argument of `micro`,
/// appended in order, an input named "whole-batch statistic #i", and
/// erases what only computed them.
void takeAsArguments(func::FuncOp micro, ArrayRef<Value> statistics);

/// The ops that compute `values`, reads in nested regions included.
llvm::SetVector<Operation *> opsComputing(ArrayRef<Value> values);

} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_TRANSFORMS_BATCHSPLITTING_H
