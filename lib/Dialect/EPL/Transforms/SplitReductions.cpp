//===- SplitReductions.cpp - Long reductions over many GPU threads --------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLSPLITREDUCTIONSPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;

namespace {
/// Whether epl-matmul-to-runtime runs `op` as a GEMM (cuBLAS): it stays
/// whole. (A contraction without rows or columns, a matrix-vector
/// product, is a kernel like any reduction.)
bool isGemm(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || !linalg::isaContractionOpInterface(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  return succeeded(dims) && !dims->m.empty() && !dims->n.empty() &&
         !dims->k.empty();
}

/// The loops `op` reduces over, if splitting them is exact up to the
/// order of the combiner's operations: one result, on tensors, static
/// loops, read through projected permutations, a body that does not read
/// its position and combines each value into its accumulator with one
/// operation that has a neutral element (a sum, a product, a max).
std::optional<SmallVector<unsigned>> splittableReduction(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0 ||
      !llvm::all_of(
          op.getIndexingMapsArray(),
          [](AffineMap map) { return map.isProjectedPermutation(); }) ||
      ShapedType::isDynamicShape(op.getStaticLoopRanges()) ||
      !op.getBody()->getOps<linalg::IndexOp>().empty() || isGemm(op))
    return std::nullopt;
  // (Upstream's neutral element of an index maximum is no valid constant.)
  if (!isa<FloatType, IntegerType>(op.getRegionOutputArgs()[0].getType()))
    return std::nullopt;
  SmallVector<Operation *> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1 || !arith::getNeutralElement(combiners.front()))
    return std::nullopt;
  SmallVector<unsigned> dims;
  op.getReductionDims(dims);
  return dims;
}

struct EPLSplitReductionsPass
    : public mlir::epl::impl::EPLSplitReductionsPassBase<
          EPLSplitReductionsPass> {
  using Base::Base;

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Pass::initializeOptions(options, errorHandler)))
      return failure();
    if (targetThreads < 1)
      return errorHandler("epl-split-reductions: target-threads must be at "
                          "least 1, not " +
                          Twine(static_cast<int64_t>(targetThreads)));
    if (minPerThread < 2)
      return errorHandler("epl-split-reductions: min-per-thread must be at "
                          "least 2, not " +
                          Twine(static_cast<int64_t>(minPerThread)));
    return success();
  }

  /// How many parts to split a reduction of `reduced` values at each of
  /// `points` results into: enough for `targetThreads` threads in all,
  /// each reducing at least `minPerThread` values, and a divisor of
  /// `reduced` (1: not split).
  int64_t ratioFor(int64_t points, int64_t reduced) const {
    if (points == 0 || points >= targetThreads)
      return 1;
    int64_t limit = std::min<int64_t>(llvm::divideCeil(targetThreads, points),
                                      reduced / minPerThread);
    for (int64_t ratio = limit; ratio > 1; --ratio)
      if (reduced % ratio == 0)
        return ratio;
    return 1;
  }

  /// Splits `op` if it is worth it; the op combining the parts, itself a
  /// reduction, is tried next.
  void split(IRRewriter &rewriter, linalg::GenericOp op,
             SmallVectorImpl<linalg::GenericOp> &worklist) {
    std::optional<SmallVector<unsigned>> reduction = splittableReduction(op);
    if (!reduction)
      return;
    SmallVector<int64_t> sizes = op.getStaticLoopRanges();
    int64_t points = 1, reduced = 1;
    for (auto [d, size] : llvm::enumerate(sizes))
      (llvm::is_contained(*reduction, d) ? reduced : points) *= size;
    int64_t ratio = ratioFor(points, reduced);
    if (ratio == 1)
      return;

    linalg::LinalgOp target = op;
    rewriter.setInsertionPoint(op);
    // Several reduction loops (a bias's gradient over batch and sequence)
    // become one where they are neighbours in every operand.
    if (reduction->size() > 1) {
      ReassociationIndices group(reduction->begin(), reduction->end());
      bool consecutive =
          llvm::all_of(llvm::seq<size_t>(1, group.size()),
                       [&](size_t i) { return group[i] == group[i - 1] + 1; });
      if (!consecutive ||
          !linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), group))
        return;
      SmallVector<ReassociationIndices> loops;
      for (int64_t d = 0, e = sizes.size(); d < e; ++d) {
        if (d == group.front())
          loops.push_back(group);
        else if (!llvm::is_contained(group, d))
          loops.push_back({d});
      }
      FailureOr<linalg::CollapseResult> collapsed =
          linalg::collapseOpIterationDims(op, loops, rewriter);
      if (failed(collapsed))
        return;
      rewriter.replaceOp(op, collapsed->results);
      target = collapsed->collapsedOp;
    }

    // The new parallel loop takes the reduction loop's place, just inside
    // it (a value's part is its position modulo the ratio): neighbouring
    // threads read neighbouring values where the reduction runs along
    // memory, and the partial results are laid out in the loops' order.
    SmallVector<unsigned> reductionDims;
    target.getReductionDims(reductionDims);
    unsigned d = reductionDims.front();
    AffineMap resultMap =
        target.getMatchingIndexingMap(target.getDpsInitOperand(0));
    unsigned index = llvm::count_if(resultMap.getResults(), [&](AffineExpr e) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      return dim && dim.getPosition() < d;
    });
    auto control = [&](linalg::LinalgOp) {
      return linalg::SplitReductionOptions{ratio, index,
                                           /*innerParallel=*/true};
    };
    FailureOr<linalg::SplitReductionResult> result =
        linalg::splitReduction(rewriter, target, control);
    if (failed(result)) {
      target->emitOpError("epl-split-reductions: could not split this "
                          "reduction, which it found splittable");
      return signalPassFailure();
    }
    ++numSplit;
    if (auto combining =
            dyn_cast<linalg::GenericOp>(*result->resultCombiningLinalgOp))
      worklist.push_back(combining);
  }

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> worklist;
    getOperation()->walk([&](linalg::GenericOp op) { worklist.push_back(op); });
    IRRewriter rewriter(&getContext());
    while (!worklist.empty())
      split(rewriter, worklist.pop_back_val(), worklist);
  }
};
} // namespace
