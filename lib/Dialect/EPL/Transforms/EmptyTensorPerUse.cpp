//===- EmptyTensorPerUse.cpp - An empty tensor for each use ---------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLEMPTYTENSORPERUSEPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;

namespace {
struct EPLEmptyTensorPerUsePass
    : public mlir::epl::impl::EPLEmptyTensorPerUsePassBase<
          EPLEmptyTensorPerUsePass> {
  void runOnOperation() override {
    llvm::SmallPtrSet<Operation *, 16> used;
    getOperation()->walk([&](tensor::EmptyOp empty) {
      if (!empty->use_empty())
        used.insert(empty);
    });
    // Uses in the order of the program, operands in order.
    OpBuilder b(&getContext());
    getOperation()->walk([&](Operation *user) {
      for (OpOperand &use : user->getOpOperands()) {
        Operation *empty = use.get().getDefiningOp();
        if (!empty || !used.contains(empty))
          continue;
        // Made in its block (its dynamic sizes are defined there), before
        // the op there that holds the use: a use in a loop's body keeps
        // one empty tensor for all iterations, as it had.
        Operation *holder = empty->getBlock()->findAncestorOpInBlock(*user);
        // (A use in another block of the region, after a branch: it keeps
        // the empty tensor, which dominates it where it is.)
        if (!holder)
          continue;
        b.setInsertionPoint(holder);
        use.set(b.clone(*empty)->getResult(0));
        ++numMade;
      }
    });
    for (Operation *empty : used)
      if (empty->use_empty())
        empty->erase();
  }
};
} // namespace
