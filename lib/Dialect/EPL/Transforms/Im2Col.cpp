//===- Im2Col.cpp - Window contractions as GEMM-shaped contractions -------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Contractions.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "epl-im2col"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLIM2COLPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

bool mlir::epl::isMultiplyAdd(linalg::GenericOp op) {
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body->getArgument(2);
  Value other = add.getLhs() == acc   ? add.getRhs()
                : add.getRhs() == acc ? add.getLhs()
                                      : Value();
  auto mul = other ? other.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  Value a = body->getArgument(0), b = body->getArgument(1);
  return (mul.getLhs() == a && mul.getRhs() == b) ||
         (mul.getLhs() == b && mul.getRhs() == a);
}

namespace {
/// The loop dimensions `map` reads as plain results, in its order.
SmallVector<unsigned> plainDims(AffineMap map) {
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults())
    if (auto d = dyn_cast<AffineDimExpr>(e))
      dims.push_back(d.getPosition());
  return dims;
}

/// A copy of `value` (read through `map` over loops `loops` of sizes
/// `sizes`) laid out in loop order `order`: for im2col, the patches of a
/// window read; for the other operand, its transpose.
Value materialize(OpBuilder &b, Location loc, Value value, AffineMap map,
                  ArrayRef<unsigned> order, ArrayRef<int64_t> sizes) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  llvm::DenseMap<AffineExpr, AffineExpr> renumber;
  for (auto [i, d] : llvm::enumerate(order)) {
    shape.push_back(sizes[d]);
    renumber[b.getAffineDimExpr(d)] = b.getAffineDimExpr(i);
  }
  AffineMap in = map.replace(renumber, order.size(), 0);
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{value},
             ValueRange{init},
             SmallVector<AffineMap>{in, b.getMultiDimIdentityMap(order.size())},
             SmallVector<utils::IteratorType>(order.size(),
                                              utils::IteratorType::parallel),
             [](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, args[0]);
             })
      .getResult(0);
}

/// Makes the patches `gemm` reads a tile at a time, each tile read by the
/// contraction right after it is copied, while it is still in cache: an
/// `scf.for` over the outermost patch dimension that the windowed input
/// reads plainly (a convolution's batch), in steps of the largest divisor of
/// its size whose tile fits `tileBytes`. With few channels the patches are
/// several times the input and BLAS is bound by reading them: written whole,
/// they go out to memory and back (bench/resnet_train's step: 62 -> 37 ms on
/// one thread, peak buffers 61 -> 35 MB).
void tileOverPatches(RewriterBase &rewriter, linalg::GenericOp gemm,
                     Value patches, AffineMap window,
                     ArrayRef<unsigned> patchOrder, ArrayRef<int64_t> sizes,
                     int64_t tileBytes) {
  auto type = cast<RankedTensorType>(patches.getType());
  int64_t bytes = type.getNumElements() *
                  (type.getElementType().getIntOrFloatBitWidth() / 8);
  if (bytes <= tileBytes)
    return;
  SmallVector<unsigned> plain = plainDims(window);
  auto it = llvm::find_if(patchOrder, [&](unsigned d) {
    return llvm::is_contained(plain, d) && sizes[d] > 1;
  });
  if (it == patchOrder.end())
    return;
  unsigned dim = *it;
  int64_t perUnit = bytes / sizes[dim], step = 1;
  for (int64_t t = 1; t <= sizes[dim]; ++t)
    if (sizes[dim] % t == 0 && t * perUnit <= tileBytes)
      step = t;
  if (step == sizes[dim])
    return;

  SmallVector<OpFoldResult> tileSizes(sizes.size(), rewriter.getIndexAttr(0));
  tileSizes[dim] = rewriter.getIndexAttr(step);
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(tileSizes);
  // Only the patches move into the loop: anything else made per tile (the
  // other input's copy, the producers of the windowed input) would be
  // computed again for each.
  Operation *copy = patches.getDefiningOp();
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult producer, bool isDestination)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (isDestination || producer.getOwner() != copy)
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  auto tileable = dyn_cast<TilingInterface>(gemm.getOperation());
  if (!tileable)
    return;
  rewriter.setInsertionPoint(gemm);
  FailureOr<scf::SCFTileAndFuseResult> tiled =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, tileable, options);
  if (failed(tiled))
    return;
  rewriter.replaceOp(gemm, tiled->replacements.lookup(gemm.getResult(0)));
  // Tidy each loop with upstream's folds: a tile of patches in a buffer the
  // size of a tile (not a slice of one the size of all patches), slices of
  // a whole tensor (the untiled filter, the filter gradient every tile adds
  // into) that tensor, and what tiling left unused gone.
  RewritePatternSet patterns(gemm.getContext());
  tensor::populateFoldTensorEmptyPatterns(patterns);
  FrozenRewritePatternSet frozen(std::move(patterns));
  for (LoopLikeOpInterface loop : tiled->loops)
    (void)applyPatternsGreedily(loop, frozen);
  if (copy->use_empty()) {
    Operation *empty =
        cast<linalg::GenericOp>(copy).getDpsInits()[0].getDefiningOp();
    rewriter.eraseOp(copy);
    if (empty && empty->use_empty())
      rewriter.eraseOp(empty);
  }
}

/// Rewrites a multiply-add contraction one of whose inputs reads through
/// windows (`s * oh + d * kh`) so that it reads a patch tensor by plain
/// loop dimensions, grouped (batch, m, k), and the other input grouped
/// (batch, k, n): a contraction BLAS runs.
LogicalResult im2col(RewriterBase &rewriter, linalg::GenericOp op,
                     int64_t tileBytes) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      !isMultiplyAdd(op) || !op.getBlock()->getOps<linalg::IndexOp>().empty())
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  int windowed = -1;
  for (int i = 0; i < 2; ++i)
    if (!maps[i].isProjectedPermutation())
      windowed = windowed == -1 ? i : -2;
  if (windowed < 0 || !maps[1 - windowed].isProjectedPermutation() ||
      !maps[2].isProjectedPermutation())
    return failure();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(sizes))
    return failure();

  AffineMap window = maps[windowed], other = maps[1 - windowed], out = maps[2];
  auto in = [](AffineMap m, unsigned d) { return m.isFunctionOfDim(d); };
  SmallVector<unsigned> batch, m, k, n;
  for (unsigned d : plainDims(out)) {
    if (in(window, d) && in(other, d))
      batch.push_back(d);
    else if (in(window, d))
      m.push_back(d);
    else
      n.push_back(d);
  }
  for (unsigned d : plainDims(other))
    if (in(window, d) && !in(out, d))
      k.push_back(d);
  // Every loop is a batch, m, k or n loop: one only an input reduces over
  // is no GEMM.
  for (unsigned d = 0; d < sizes.size(); ++d)
    if (!in(out, d) && !(in(window, d) && in(other, d)))
      return failure();
  // The other input reads its loops as plain dimensions (a projection).
  if (plainDims(other).size() != other.getNumResults())
    return failure();

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  // Patches are copied along the windowed input's contiguous dimension:
  // when it is an m loop (a filter gradient reads channels, an output
  // dimension, innermost), the patches are laid out (batch, k, m), which
  // BLAS reads transposed; (batch, m, k) wrote each channel 3x slower.
  bool mInnermost = false;
  if (window.getNumResults() != 0) {
    AffineExpr last = window.getResults().back();
    mInnermost =
        llvm::any_of(m, [&](unsigned d) { return last.isFunctionOfDim(d); }) &&
        llvm::none_of(k, [&](unsigned d) { return last.isFunctionOfDim(d); });
  }
  SmallVector<unsigned> patchOrder = batch;
  llvm::append_range(patchOrder, mInnermost ? k : m);
  llvm::append_range(patchOrder, mInnermost ? m : k);
  Value patches = materialize(rewriter, loc, op.getDpsInputs()[windowed],
                              window, patchOrder, sizes);
  SmallVector<unsigned> otherOrder = batch;
  llvm::append_range(otherOrder, k);
  llvm::append_range(otherOrder, n);
  Value otherValue = op.getDpsInputs()[1 - windowed];
  AffineMap otherMap = other;
  // The other input as it is when its (batch, k, n) groups are each one run
  // of its dimensions, else a copy in that order.
  SmallVector<unsigned> have = plainDims(other);
  auto runs = [&](ArrayRef<unsigned> group) {
    if (group.empty())
      return true;
    auto first = llvm::find(have, group.front());
    return std::distance(first, have.end()) >=
               static_cast<ptrdiff_t>(group.size()) &&
           llvm::equal(group, ArrayRef<unsigned>(&*first, group.size()));
  };
  if (!runs(batch) || !runs(k) || !runs(n)) {
    otherValue =
        materialize(rewriter, loc, otherValue, other, otherOrder, sizes);
    otherMap = AffineMap::getMultiDimMapWithTargets(sizes.size(), otherOrder,
                                                    rewriter.getContext());
  }
  SmallVector<AffineMap> newMaps = maps;
  newMaps[windowed] = AffineMap::getMultiDimMapWithTargets(
      sizes.size(), patchOrder, rewriter.getContext());
  newMaps[1 - windowed] = otherMap;
  SmallVector<Value> inputs(2);
  inputs[windowed] = patches;
  inputs[1 - windowed] = otherValue;
  auto gemm = linalg::GenericOp::create(rewriter, loc, op.getResultTypes(),
                                        inputs, op.getDpsInits(), newMaps,
                                        op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), gemm.getRegion(),
                              gemm.getRegion().begin());
  gemm->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rewriter.replaceOp(op, gemm.getResults());
  if (tileBytes > 0)
    tileOverPatches(rewriter, gemm, patches, window, patchOrder, sizes,
                    tileBytes);
  return success();
}

struct EPLIm2ColPass
    : public mlir::epl::impl::EPLIm2ColPassBase<EPLIm2ColPass> {
  using Base::Base;
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Named convolutions first become generics (their window maps).
    SmallVector<linalg::LinalgOp> named;
    getOperation()->walk([&](linalg::ConvolutionOpInterface conv) {
      if (!isa<linalg::GenericOp>(conv.getOperation()))
        named.push_back(cast<linalg::LinalgOp>(conv.getOperation()));
    });
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics)
      if (succeeded(im2col(rewriter, op, tileBytes)))
        ++numContractions;
  }
};
} // namespace
