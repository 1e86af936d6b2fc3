//===- SplitReductions.cpp - Long reductions summed in parts -------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/Dialect/EPL/Transforms/ReductionSplitting.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLSPLITREDUCTIONSPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using mlir::epl::ReductionSplitting;

namespace {
/// Whether epl-matmul-to-runtime runs `op` as a GEMM (BLAS, cuBLAS), which
/// sums in its own blocks: with `keep-gemms` it stays whole. (A contraction
/// without rows or columns, a matrix-vector product, is a kernel like any
/// reduction.)
bool isGemm(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || !linalg::isaContractionOpInterface(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  return succeeded(dims) && !dims->m.empty() && !dims->n.empty() &&
         !dims->k.empty();
}

/// Whether every operand of `op` is read through a projected permutation
/// of its loops, or (`unitDims`) also at 0 along some dimensions (a
/// keep-dim reduction's result, `(n, c, h, w) -> (0, c, 0, 0)`).
bool readsProjections(linalg::GenericOp op, bool unitDims) {
  return llvm::all_of(op.getIndexingMapsArray(), [&](AffineMap map) {
    return map.isProjectedPermutation(unitDims);
  });
}

/// A reduction split can reorder: the loops it reduces over, and the one
/// operation that combines each value into the accumulator.
struct Splittable {
  SmallVector<unsigned> dims;
  Operation *combiner;
};

/// `op`'s loops and combiner, if splitting them is exact up to the order
/// of the combiner's operations: one result, on tensors, static loops,
/// read through projected permutations (`unitDims`: or at 0 along unit
/// dimensions), a body that does not read its position and combines each
/// value into its accumulator with one operation that has a neutral
/// element (a sum, a product, a max).
std::optional<Splittable> splittableReduction(linalg::GenericOp op,
                                              bool unitDims, bool keepGemms) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0 || !readsProjections(op, unitDims) ||
      ShapedType::isDynamicShape(op.getStaticLoopRanges()) ||
      !op.getBody()->getOps<linalg::IndexOp>().empty() ||
      (keepGemms && isGemm(op)))
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
  // A result indexed by a "reduction" loop is no reduction along it.
  AffineMap result = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (llvm::any_of(dims, [&](unsigned d) { return result.isFunctionOfDim(d); }))
    return std::nullopt;
  return Splittable{std::move(dims), combiners.front()};
}

/// Drops `combiner`'s integer overflow flags: a sum in another order may
/// overflow where the sequential one did not (`nsw` would make that
/// poison; wrapping is exact in any order).
void dropOverflowFlags(RewriterBase &rewriter, Operation *combiner) {
  auto flags = dyn_cast<arith::ArithIntegerOverflowFlagsInterface>(combiner);
  if (!flags)
    return;
  rewriter.modifyOpInPlace(combiner, [&] {
    combiner->setAttr(
        flags.getIntegerOverflowAttrName(),
        arith::IntegerOverflowFlagsAttr::get(
            combiner->getContext(), arith::IntegerOverflowFlags::none));
  });
}

/// `op`, a reduction with one result, its reduction loop `d` split into
/// `ratio` parts: value `r` of the loop goes to part `r mod ratio`. The
/// first op reduces each part, the loop made an outer reduction loop of
/// size / ratio and an inner parallel one of `ratio` (neighbouring threads
/// read neighbouring values), into partial results starting from
/// `neutral`, the part their dimension `index` (where the loop's place is
/// among the result's); the second combines the parts into `op`'s result
/// with `combiner`.
std::pair<linalg::GenericOp, linalg::GenericOp>
splitLoop(RewriterBase &rewriter, linalg::GenericOp op, unsigned d,
          int64_t ratio, Operation *combiner, TypedAttr neutral) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  unsigned loops = op.getNumLoops() + 1;
  auto dim = [&](unsigned old) {
    return getAffineDimExpr(old <= d ? old : old + 1, ctx);
  };
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    Value value = input->get();
    SmallVector<AffineExpr> exprs;
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> groups;
    bool expands = false;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      unsigned old = cast<AffineDimExpr>(e).getPosition();
      int64_t size = cast<RankedTensorType>(value.getType()).getDimSize(i);
      int64_t next = shape.size();
      if (old == d) {
        shape.append({size / ratio, ratio});
        exprs.append({dim(d), getAffineDimExpr(d + 1, ctx)});
        groups.push_back({next, next + 1});
        expands = true;
        continue;
      }
      shape.push_back(size);
      exprs.push_back(dim(old));
      groups.push_back({next});
    }
    if (expands)
      value = tensor::ExpandShapeOp::create(
          rewriter, loc,
          RankedTensorType::get(shape, getElementTypeOrSelf(value.getType())),
          value, groups);
    inputs.push_back(value);
    maps.push_back(AffineMap::get(loops, 0, exprs, ctx));
  }

  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap resultMap = op.getMatchingIndexingMap(init);
  auto resultType = cast<RankedTensorType>(init->get().getType());
  unsigned index = llvm::count_if(resultMap.getResults(), [&](AffineExpr e) {
    return cast<AffineDimExpr>(e).getPosition() < d;
  });
  SmallVector<int64_t> partShape(resultType.getShape());
  partShape.insert(partShape.begin() + index, ratio);
  SmallVector<AffineExpr> partExprs;
  for (AffineExpr e : resultMap.getResults())
    partExprs.push_back(dim(cast<AffineDimExpr>(e).getPosition()));
  partExprs.insert(partExprs.begin() + index, getAffineDimExpr(d + 1, ctx));
  maps.push_back(AffineMap::get(loops, 0, partExprs, ctx));
  Value empty = tensor::EmptyOp::create(rewriter, loc, partShape,
                                        resultType.getElementType());
  Value start = arith::ConstantOp::create(rewriter, loc, neutral);
  Value filled =
      linalg::FillOp::create(rewriter, loc, start, empty).getResult(0);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.insert(iterators.begin() + d + 1, utils::IteratorType::parallel);
  auto parts = linalg::GenericOp::create(rewriter, loc, filled.getType(),
                                         inputs, filled, maps, iterators);
  rewriter.cloneRegionBefore(op.getRegion(), parts.getRegion(),
                             parts.getRegion().begin());

  unsigned rank = partShape.size();
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> combineIterators;
  for (unsigned i = 0; i < rank; ++i) {
    combineIterators.push_back(i == index ? utils::IteratorType::reduction
                                          : utils::IteratorType::parallel);
    if (i != index)
      outExprs.push_back(getAffineDimExpr(i, ctx));
  }
  auto combine = linalg::GenericOp::create(
      rewriter, loc, op->getResultTypes(), parts.getResult(0), init->get(),
      {AffineMap::getMultiDimIdentityMap(rank, ctx),
       AffineMap::get(rank, 0, outExprs, ctx)},
      combineIterators, [&](OpBuilder &b, Location l, ValueRange args) {
        Operation *combined = b.clone(*combiner);
        combined->setOperands({args[0], args[1]});
        linalg::YieldOp::create(b, l, combined->getResult(0));
      });
  rewriter.replaceOp(op, combine.getResults());
  return {parts, combine};
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
    if (maxPerThread != 0 && maxPerThread < minPerThread)
      return errorHandler("epl-split-reductions: max-per-thread must be 0 "
                          "(none) or at least min-per-thread (" +
                          Twine(static_cast<int64_t>(minPerThread)) +
                          "), not " +
                          Twine(static_cast<int64_t>(maxPerThread)));
    return success();
  }

  /// The reduction loop of `op` to split, and into how many parts
  /// (ReductionSplitting::partsLimit at most), a divisor of the loop's size
  /// (the loop with the most parts; of equals the innermost, along
  /// memory). Nothing where no loop splits into kMinParts parts.
  std::optional<std::pair<unsigned, int64_t>>
  choose(linalg::GenericOp op, ArrayRef<unsigned> reduction) const {
    constexpr int64_t kMinParts = ReductionSplitting::kMinParts;
    SmallVector<int64_t> sizes = op.getStaticLoopRanges();
    int64_t points = 1, reduced = 1;
    for (auto [d, size] : llvm::enumerate(sizes))
      (llvm::is_contained(reduction, d) ? reduced : points) *= size;
    int64_t limit =
        ReductionSplitting{targetThreads, minPerThread, maxPerThread}
            .partsLimit(points, reduced);
    std::optional<std::pair<unsigned, int64_t>> best;
    for (unsigned d : reduction) {
      int64_t parts = std::min(limit, sizes[d]);
      while (parts >= kMinParts && sizes[d] % parts != 0)
        --parts;
      if (parts >= kMinParts && (!best || parts >= best->second))
        best = {d, parts};
    }
    return best;
  }

  /// Splits `op` if it is worth it; the parts and the op combining them,
  /// themselves reductions, are tried next.
  void split(IRRewriter &rewriter, linalg::GenericOp op,
             SmallVectorImpl<linalg::GenericOp> &worklist) {
    std::optional<Splittable> reduction =
        splittableReduction(op, /*unitDims=*/true, keepGemms);
    if (!reduction)
      return;
    std::optional<std::pair<unsigned, int64_t>> chosen =
        choose(op, reduction->dims);
    if (!chosen)
      return;

    rewriter.setInsertionPoint(op);
    // A keep-dim reduction (torch's `sum(x, [0, 2, 3], keepdim=True)`, batch
    // norm's statistics) reads and writes its unit dimensions at 0: they
    // go first (upstream's dropUnitDims, reshaping the operands).
    if (!readsProjections(op, /*unitDims=*/false)) {
      FailureOr<linalg::DropUnitDimsResult> dropped =
          linalg::dropUnitDims(rewriter, op, linalg::ControlDropUnitDims());
      if (failed(dropped))
        return;
      rewriter.replaceOp(op, dropped->replacements);
      op = cast<linalg::GenericOp>(dropped->resultOp.getOperation());
      // (Its loops are renumbered, unit ones gone.)
      reduction = splittableReduction(op, /*unitDims=*/false, keepGemms);
      chosen = reduction ? choose(op, reduction->dims) : std::nullopt;
      if (!chosen)
        return;
      rewriter.setInsertionPoint(op);
    }
    Operation *combiner = reduction->combiner;
    dropOverflowFlags(rewriter, combiner);
    auto [parts, combine] =
        splitLoop(rewriter, op, chosen->first, chosen->second, combiner,
                  *arith::getNeutralElement(combiner));
    ++numSplit;
    worklist.push_back(parts);
    worklist.push_back(combine);
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
