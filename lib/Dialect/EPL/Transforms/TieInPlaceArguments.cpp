//===- TieInPlaceArguments.cpp - Results written over their arguments -----===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/Transforms/Aliases.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLTIEINPLACEARGUMENTSPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
/// Whether writing `result` over `arg` changes nothing anyone reads: every
/// op that touches `arg` comes before every op that touches `result`, but
/// for one element-wise op that reads `arg` and writes `result` element by
/// element (the update). The entry wrapper proved that of the tensors; the
/// lowering since (fusion moves ops, empty-tensor elimination builds an
/// init in the result's buffer) may have changed it.
bool mayTie(Block &body, BlockArgument arg, BlockArgument result,
            const DenseMap<Operation *, unsigned> &position) {
  auto positionOf = [&](OpOperand *use) -> std::optional<unsigned> {
    Operation *top = body.findAncestorOpInBlock(*use->getOwner());
    if (!top)
      return std::nullopt;
    return position.lookup(top);
  };
  SmallVector<OpOperand *> reads = usesThroughAliases(arg),
                           writes = usesThroughAliases(result);
  std::optional<unsigned> lastRead, firstWrite;
  for (OpOperand *use : reads) {
    std::optional<unsigned> at = positionOf(use);
    if (!at)
      return false;
    lastRead = lastRead ? std::max(*lastRead, *at) : *at;
  }
  for (OpOperand *use : writes) {
    std::optional<unsigned> at = positionOf(use);
    if (!at)
      return false;
    firstWrite = firstWrite ? std::min(*firstWrite, *at) : *at;
  }
  if (!lastRead || !firstWrite || *lastRead < *firstWrite)
    return true;
  if (*lastRead > *firstWrite)
    return false;
  // One op does both (the last read, the first write): it must read the
  // argument itself and write the result itself, element for element.
  auto at = [&](OpOperand *use) { return positionOf(use) == lastRead; };
  OpOperand *first = *llvm::find_if(reads, at);
  auto update = dyn_cast<linalg::LinalgOp>(first->getOwner());
  if (!update || update->getBlock() != &body ||
      update.getNumLoops() != update.getNumParallelLoops())
    return false;
  for (OpOperand *use : llvm::make_filter_range(reads, at))
    if (use->getOwner() != update || use->get() != arg ||
        update.isDpsInit(use) ||
        !update.getMatchingIndexingMap(use).isIdentity())
      return false;
  for (OpOperand *use : llvm::make_filter_range(writes, at))
    if (use->getOwner() != update || use->get() != result ||
        !update.isDpsInit(use) ||
        !update.getMatchingIndexingMap(use).isIdentity() ||
        update.payloadUsesValueFromOperand(use))
      return false;
  return true;
}

struct EPLTieInPlaceArgumentsPass
    : public mlir::epl::impl::EPLTieInPlaceArgumentsPassBase<
          EPLTieInPlaceArgumentsPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    // (argument, the argument whose buffer it shares); the verifier checked
    // the indices and the types.
    SmallVector<std::pair<unsigned, unsigned>> ties;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (auto of = fn.getArgAttrOfType<IntegerAttr>(
              i, EPLDialect::kInPlaceOfAttrName))
        ties.push_back({i, of.getInt()});
    // A chain (a result in place of a result) or two results in one
    // argument's buffer would say two things of one buffer.
    DenseMap<unsigned, unsigned> tiedTo;
    for (auto [i, target] : ties) {
      if (fn.getArgAttr(target, EPLDialect::kInPlaceOfAttrName)) {
        fn.emitOpError() << "argument " << i << ": '"
                         << EPLDialect::kInPlaceOfAttrName
                         << "' names argument " << target
                         << ", which is itself written in place of another";
        return signalPassFailure();
      }
      if (auto [it, inserted] = tiedTo.try_emplace(target, i); !inserted) {
        fn.emitOpError() << "arguments " << it->second << " and " << i
                         << " are both written in place of argument " << target;
        return signalPassFailure();
      }
    }
    Block &body = fn.front();
    DenseMap<Operation *, unsigned> position;
    for (auto [n, op] : llvm::enumerate(body))
      position[&op] = n;
    for (auto [i, target] : ties) {
      fn.removeArgAttr(i, EPLDialect::kInPlaceOfAttrName);
      BlockArgument arg = fn.getArgument(target), result = fn.getArgument(i);
      if (mayTie(body, arg, result, position)) {
        result.replaceAllUsesWith(arg);
        ++numTied;
        continue;
      }
      // The caller passes one buffer for both whatever this pass proves,
      // so the argument's readers read a copy of it taken first.
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity()) {
        fn.emitOpError() << "argument " << i
                         << " is written in place of argument " << target
                         << ", which is read after it is written, and "
                         << "cannot be copied first (" << arg.getType() << ")";
        return signalPassFailure();
      }
      OpBuilder b = OpBuilder::atBlockBegin(&body);
      Value copy = memref::AllocOp::create(b, fn.getLoc(), type);
      auto copyOp = memref::CopyOp::create(b, fn.getLoc(), arg, copy);
      arg.replaceAllUsesExcept(copy, copyOp);
      b.setInsertionPoint(body.getTerminator());
      memref::DeallocOp::create(b, fn.getLoc(), copy);
      ++numCopied;
    }
  }
};
} // namespace
