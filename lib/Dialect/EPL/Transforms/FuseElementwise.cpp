//===- FuseElementwise.cpp - Producer-consumer fusion of element-wise ops -===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/Dialect/EPL/Transforms/ReductionSplitting.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLFUSEELEMENTWISEPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using mlir::epl::ReductionSplitting;

namespace {
/// Fuses an element-wise producer into a consumer `linalg.generic`. Unlike
/// upstream's pattern, which leaves the producer to its other users and
/// computes it again in the fused op, the producer's results come out of
/// the fused op and replace it everywhere: computed once, stored once.
struct FuseProducer : OpRewritePattern<linalg::GenericOp> {
  FuseProducer(MLIRContext *ctx, bool keepContractions,
               ReductionSplitting splitting, llvm::Statistic &numFused)
      : OpRewritePattern(ctx), keepContractions(keepContractions),
        splitting(splitting), numFused(numFused) {}

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    // BLAS runs contractions (epl-matmul-to-runtime): an operand computed
    // in their loops would make them loop nests.
    if (keepContractions && linalg::isaContractionOpInterface(consumer))
      return failure();
    for (OpOperand &operand : consumer->getOpOperands()) {
      if (!linalg::areElementwiseOpsFusable(&operand) || !fusable(operand))
        continue;
      Operation *producer = operand.get().getDefiningOp();
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
      rewriter.eraseOp(consumer);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      ++numFused;
      return success();
    }
    return failure();
  }

  /// Whether fusing through `operand` computes nothing twice and keeps the
  /// IR valid.
  bool fusable(OpOperand &operand) const {
    auto consumer = cast<linalg::GenericOp>(operand.getOwner());
    auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
    if (!producer)
      return false;
    // Each element of the producer is computed once: the consumer reads it
    // through a permutation of all its loops (a broadcast, a window or a
    // contraction's operand would compute it again and again).
    if (!consumer.getMatchingIndexingMap(&operand).isPermutation())
      return false;
    // Upstream fuses one operand: another operand reading the producer
    // would read the fused op's own result.
    for (OpOperand &other : consumer->getOpOperands())
      if (&other != &operand && other.get().getDefiningOp() == producer)
        return false;
    // Read elsewhere too, the producer's result would be written in the
    // reduction's loops, by as few threads as the reduction has results (a
    // bias's gradient: a few hundred), and epl-split-reductions could not
    // split it: where it would.
    bool sharedIntoSplitReduction =
        consumer.getNumReductionLoops() > 0 &&
        splitting.splits(loopPoints(consumer, utils::IteratorType::parallel),
                         loopPoints(consumer, utils::IteratorType::reduction));
    // The fused op stands where the consumer was: the producer's other
    // users must come after it.
    Block *block = consumer->getBlock();
    for (Operation *user : producer->getUsers()) {
      if (user == consumer)
        continue;
      if (sharedIntoSplitReduction)
        return false;
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor || !consumer->isBeforeInBlock(ancestor))
        return false;
    }
    return true;
  }

  /// The points of `op`'s loops of kind `kind` (the largest count where one
  /// is dynamic).
  static int64_t loopPoints(linalg::GenericOp op, utils::IteratorType kind) {
    int64_t points = 1;
    for (auto [size, iterator] :
         llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray())) {
      if (iterator != kind)
        continue;
      if (ShapedType::isDynamic(size))
        return std::numeric_limits<int64_t>::max();
      points *= size;
    }
    return points;
  }

  bool keepContractions;
  ReductionSplitting splitting;
  llvm::Statistic &numFused;
};

/// The one value every element of `tensor` holds, where its producer says
/// so: a `linalg.fill` of a scalar, or a generic that is one (upstream's
/// isaFillOpInterface: a scalar input, or a value from above, yielded
/// unchanged).
Value filledScalar(Value tensor) {
  if (auto fill = tensor.getDefiningOp<linalg::FillOp>()) {
    Value value = fill.getInputs().front();
    return isa<ShapedType>(value.getType()) ? Value() : value;
  }
  // Every element written: all loops parallel and the output indexed by
  // distinct loops (`(i) -> (i, i)` writes a diagonal, the rest is the
  // init's).
  auto producer = tensor.getDefiningOp<linalg::GenericOp>();
  if (!producer || producer.getNumDpsInits() != 1 ||
      producer.getNumParallelLoops() != producer.getNumLoops() ||
      !producer.getIndexingMapMatchingResult(cast<OpResult>(tensor))
           .isProjectedPermutation())
    return {};
  std::optional<Value> value = linalg::isaFillOpInterface(producer);
  // (A constant made in the body is no value outside it.)
  if (!value || isa<ShapedType>(value->getType()) ||
      producer->isAncestor(value->getParentRegion()->getParentOp()))
    return {};
  return *value;
}

/// A consumer that reads a tensor of one repeated scalar (ReLU's `max(x,
/// 0)` of a zero-filled tensor) reads the scalar instead: no pass over a
/// buffer of copies of it, and the filled tensor is gone when nothing else
/// reads it. Only inputs: an init's block argument is the value so far.
struct ReadFilledScalar : OpRewritePattern<linalg::GenericOp> {
  ReadFilledScalar(MLIRContext *ctx, bool keepContractions,
                   llvm::Statistic &numScalarReads)
      : OpRewritePattern(ctx), keepContractions(keepContractions),
        numScalarReads(numScalarReads) {}

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    // A contraction with an operand read as a scalar is no longer one, and
    // would stay loops instead of going to BLAS.
    if (keepContractions && linalg::isaContractionOpInterface(consumer))
      return failure();
    for (OpOperand *input : consumer.getDpsInputOperands()) {
      BlockArgument arg = consumer.getMatchingBlockArgument(input);
      Value scalar = filledScalar(input->get());
      if (!scalar || arg.use_empty())
        continue;
      rewriter.replaceAllUsesWith(arg, scalar);
      ++numScalarReads;
      return success();
    }
    return failure();
  }

  bool keepContractions;
  llvm::Statistic &numScalarReads;
};

struct EPLFuseElementwisePass
    : public mlir::epl::impl::EPLFuseElementwisePassBase<
          EPLFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseProducer>(&getContext(), keepContractions,
                               ReductionSplitting{splitTargetThreads,
                                                  splitMinPerThread,
                                                  splitMaxPerThread},
                               numFused);
    patterns.add<ReadFilledScalar>(&getContext(), keepContractions,
                                   numScalarReads);
    // One operand per value read the same way (`x * x` of a producer reads
    // it once, and can then be fused), and no results nobody reads.
    linalg::GenericOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      // The driver says nothing when it gives up.
      getOperation()->emitError()
          << "epl-fuse-elementwise: its rewrites did not converge";
      signalPassFailure();
    }
  }
};
} // namespace
