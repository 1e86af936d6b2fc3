//===- AllReduceInPlace.cpp - Sums written over their contributions -------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Aliases.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLALLREDUCEINPLACEPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
/// The buffer a runtime call's unranked operand casts, when the cast is
/// for that call alone.
memref::CastOp castFor(Value unranked) {
  auto cast = unranked.getDefiningOp<memref::CastOp>();
  return cast && cast.getResult().hasOneUse() ? cast : memref::CastOp();
}

/// The allocation `view` is, or is a reshape of (contiguous either way).
memref::AllocOp allocationOf(Value view) {
  while (true) {
    if (auto alloc = view.getDefiningOp<memref::AllocOp>())
      return alloc;
    if (auto collapse = view.getDefiningOp<memref::CollapseShapeOp>())
      view = collapse.getSrc();
    else if (auto expand = view.getDefiningOp<memref::ExpandShapeOp>())
      view = expand.getSrc();
    else
      return {};
  }
}

/// The `memref.dealloc` of `alloc` when every other use of it (through any
/// alias) is in `block` no later than `call`.
memref::DeallocOp freedAfterLastUse(memref::AllocOp alloc, Operation *call) {
  Block *block = call->getBlock();
  memref::DeallocOp free;
  for (OpOperand *use : usesThroughAliases(alloc.getResult())) {
    if (auto d = dyn_cast<memref::DeallocOp>(use->getOwner());
        d && d.getMemref() == alloc.getResult() && !free) {
      free = d;
      continue;
    }
    Operation *top = block->findAncestorOpInBlock(*use->getOwner());
    if (!top || (top != call && !top->isBeforeInBlock(call)))
      return {};
  }
  return free && free->getBlock() == block ? free : memref::DeallocOp();
}

struct EPLAllReduceInPlacePass
    : public mlir::epl::impl::EPLAllReduceInPlacePassBase<
          EPLAllReduceInPlacePass> {
  void runOnOperation() override {
    SmallVector<func::CallOp> calls;
    getOperation().walk([&](func::CallOp call) {
      if (call.getCallee().starts_with("epl_rt_all_reduce_") &&
          call.getNumOperands() == 4)
        calls.push_back(call);
    });
    for (func::CallOp call : calls) {
      memref::CastOp inCast = castFor(call.getOperand(0)),
                     outCast = castFor(call.getOperand(1));
      if (!inCast || !outCast)
        continue;
      Value in = inCast.getSource(), out = outCast.getSource();
      auto fresh = out.getDefiningOp<memref::AllocOp>();
      memref::AllocOp source = allocationOf(in);
      auto type = dyn_cast<MemRefType>(in.getType());
      if (!fresh || !source || in.getType() != out.getType() || !type ||
          !type.getLayout().isIdentity() ||
          fresh->getBlock() != call->getBlock() ||
          source->getBlock() != call->getBlock())
        continue;
      // The contributions' buffer is read by nothing after the call; the
      // sum's is fresh: nothing touches it before.
      memref::DeallocOp sourceFree = freedAfterLastUse(source, call);
      memref::DeallocOp freshFree;
      bool usedBefore = false;
      for (Operation *user : fresh.getResult().getUsers()) {
        if (auto d = dyn_cast<memref::DeallocOp>(user))
          freshFree = d;
        else if (user != outCast && (user->getBlock() != call->getBlock() ||
                                     user->isBeforeInBlock(call)))
          usedBefore = true;
      }
      if (!sourceFree || !freshFree || usedBefore ||
          freshFree->getBlock() != call->getBlock())
        continue;
      // The sum is written over the contributions, whose buffer lives as
      // long as the sum's did.
      call->setOperand(1, inCast.getResult());
      outCast->erase();
      fresh.getResult().replaceUsesWithIf(
          in, [&](OpOperand &use) { return use.getOwner() != freshFree; });
      OpBuilder b(freshFree);
      memref::DeallocOp::create(b, freshFree.getLoc(), source.getResult());
      freshFree->erase();
      sourceFree->erase();
      fresh->erase();
      ++numInPlace;
    }
  }
};
} // namespace
