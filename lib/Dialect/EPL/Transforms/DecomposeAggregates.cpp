//===- DecomposeAggregates.cpp - linalg.softmax and kin into generics -----===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "epl-decompose-aggregates"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLDECOMPOSEAGGREGATESPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

LogicalResult
mlir::epl::decomposeAggregatedOps(Operation *root,
                                  RewriterBase::Listener *listener) {
  SmallVector<linalg::AggregatedOpInterface> ops;
  root->walk([&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
  IRRewriter rewriter(root->getContext(), listener);
  for (linalg::AggregatedOpInterface op : ops) {
    rewriter.setInsertionPoint(op);
    FailureOr<SmallVector<Value>> parts = op.decomposeOperation(rewriter);
    if (failed(parts))
      return op->emitError("cannot decompose this op into linalg generics");
    rewriter.replaceOp(op, *parts);
  }
  return success();
}

namespace {
struct EPLDecomposeAggregatesPass
    : public mlir::epl::impl::EPLDecomposeAggregatesPassBase<
          EPLDecomposeAggregatesPass> {
  void runOnOperation() override {
    if (failed(decomposeAggregatedOps(getOperation())))
      signalPassFailure();
  }
};
} // namespace
