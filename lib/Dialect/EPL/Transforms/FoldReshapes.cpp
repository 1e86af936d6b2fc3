//===- FoldReshapes.cpp - Merged dimensions as loops of their own ---------===//
//
// Part of EPL-MLIR.
//
// Upstream's fusion of reshapes by expansion, applied so that dimensions a
// model merged to call a contraction (seq-first rows, batch and heads) are
// separate loops sharding propagation can split (see the pass's
// description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "epl-fold-reshapes"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLFOLDRESHAPESPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
/// The ops a fusion makes keep the discardable attributes (epl.scope,
/// epl.stage, epl.phase, ...) of what it rewrites, which the patterns do
/// not carry over: the generic that is the pattern's root or makes the
/// root reshape's operand, else the root itself (a reshape of a reshape, a
/// pad). The new ops are at the root or at that generic.
struct KeepAttributes : public RewriterBase::Listener {
  DictionaryAttr attrs;
  Block *rootBlock = nullptr, *fromBlock = nullptr;

  void notifyPatternBegin(const Pattern &pattern, Operation *root) override {
    Operation *from = root;
    if (!isa<linalg::GenericOp>(root) && root->getNumOperands() > 0)
      if (auto producer =
              root->getOperand(0).getDefiningOp<linalg::GenericOp>())
        from = producer;
    attrs = from->getDiscardableAttrDictionary();
    rootBlock = root->getBlock();
    fromBlock = from->getBlock();
  }
  void notifyPatternEnd(const Pattern &pattern, LogicalResult) override {
    attrs = DictionaryAttr();
  }
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override {
    // Ops nested in the new ops' bodies belong to them.
    if (!attrs || (op->getBlock() != rootBlock && op->getBlock() != fromBlock))
      return;
    for (NamedAttribute a : attrs)
      if (!op->hasAttr(a.getName()))
        op->setAttr(a.getName(), a.getValue());
  }
};

/// A reshaped empty tensor is an empty tensor of the new shape, which
/// collective insertion sizes as a device's like any init (the reshape of a
/// whole one was left behind, unread, at the whole size).
template <typename ReshapeOp>
struct ReshapedEmpty : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern<ReshapeOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getResult().getType());
    if (!op.getSrc().template getDefiningOp<tensor::EmptyOp>() || !type ||
        !type.hasStaticShape())
      return failure();
    rewriter.replaceOpWithNewOp<tensor::EmptyOp>(op, type.getShape(),
                                                 type.getElementType());
    return success();
  }
};

struct EPLFoldReshapesPass
    : public mlir::epl::impl::EPLFoldReshapesPassBase<EPLFoldReshapesPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    // Every reshape of static shape that a generic reads or makes.
    // A generic that adds to a loop's accumulator (gradient accumulation
    // over micro-batches) keeps its shape: collective insertion carries the
    // accumulator's pending sum over the loop, and reduces it once after.
    // So does one that reads its loops' positions (linalg.index): an index
    // of a merged loop becomes an affine sum of the new ones, which the
    // sharding rules read as no position (the loops would stay whole: a
    // token-level label gather gathered the logits).
    auto keepsShape = [](Operation *op) {
      auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
      if (!generic)
        return false;
      return !generic.getBody()->getOps<linalg::IndexOp>().empty() ||
             llvm::any_of(generic->getOperands(), [](Value v) {
               auto arg = dyn_cast<BlockArgument>(v);
               return arg && isa<scf::ForOp>(arg.getOwner()->getParentOp());
             });
    };
    linalg::populateFoldReshapeOpsByExpansionPatterns(
        patterns, [&](OpOperand *operand) {
          auto type = dyn_cast<RankedTensorType>(operand->get().getType());
          return type && type.hasStaticShape() &&
                 !keepsShape(operand->getOwner()) &&
                 !keepsShape(operand->get().getDefiningOp());
        });
    // expand_shape(collapse_shape(x)) back to x, and reshapes of reshapes.
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    patterns.add<ReshapedEmpty<tensor::ExpandShapeOp>,
                 ReshapedEmpty<tensor::CollapseShapeOp>>(ctx);
    KeepAttributes keep;
    GreedyRewriteConfig config;
    config.setListener(&keep);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
