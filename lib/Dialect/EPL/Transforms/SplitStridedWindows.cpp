//===- SplitStridedWindows.cpp - One contraction per phase of a stride ----===//
//
// Part of EPL-MLIR.
//
// The input gradient of a strided convolution reads the output gradient
// spread by the stride (zeros in between, `tensor.insert_slice` with strides
// into a zero fill) through a transposed window (`i - kh + P`). Contracted as
// it is, all but one in s^d of the products are with those zeros. Split by
// the phase of the output position (i = s*q + a), only the taps k with
// a - k + P - o divisible by s meet a value: each phase is a contraction of
// the dense gradient with a strided slice of the filter, written into every
// s-th output position.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Contractions.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Analysis/FlatLinearValueConstraints.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

#define DEBUG_TYPE "epl-split-strided-windows"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLSPLITSTRIDEDWINDOWSPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
/// The position of the result of `map` that is the plain loop `d`, if it is
/// read once and only plainly; -1 if it is not read; -2 otherwise.
int plainResult(AffineMap map, unsigned d) {
  int found = -1;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    if (!e.isFunctionOfDim(d))
      continue;
    if (found != -1 || !isa<AffineDimExpr>(e))
      return -2;
    found = i;
  }
  return found;
}

int64_t floorMod(int64_t a, int64_t b) { return ((a % b) + b) % b; }

/// A dimension of the spread input that has a stride: output loop `i` and
/// tap loop `k` read it at i + c * k + p; the spread holds its values at
/// offset + stride * t.
struct StridedDim {
  unsigned dim, i, k;
  int64_t c, p, offset, stride;
  int outResult, tapResult;
};

LogicalResult split(RewriterBase &rewriter, linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isMultiplyAdd(op) ||
      !op.getBlock()->getOps<linalg::IndexOp>().empty())
    return failure();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(sizes))
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (int spread = 0; spread < 2; ++spread) {
    auto insert =
        op.getDpsInputs()[spread].getDefiningOp<tensor::InsertSliceOp>();
    if (!insert || insert.hasUnitStride() ||
        insert.getSourceType().getRank() != insert.getType().getRank() ||
        !insert.getType().hasStaticShape() ||
        ShapedType::isDynamicShape(insert.getStaticOffsets()) ||
        ShapedType::isDynamicShape(insert.getStaticStrides()) ||
        ShapedType::isDynamicShape(insert.getStaticSizes()))
      continue;
    auto fill = insert.getDest().getDefiningOp<linalg::FillOp>();
    if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
      continue;
    AffineMap window = maps[spread], taps = maps[1 - spread], out = maps[2];
    if (!taps.isProjectedPermutation() || !out.isProjectedPermutation())
      continue;

    SmallVector<StridedDim> strided;
    bool ok = true;
    for (auto [j, e] : llvm::enumerate(window.getResults())) {
      int64_t stride = insert.getStaticStrides()[j];
      if (stride == 1)
        continue;
      // A stride of 0 or below (legal on a dimension of size 1) has no
      // phases to split into.
      if (stride < 1) {
        ok = false;
        break;
      }
      // Linear in the loops: no floor division or modulo (which would
      // add local variables after the loops' coefficients).
      SmallVector<int64_t> flat;
      if (failed(getFlattenedAffineExpr(e, sizes.size(), 0, &flat)) ||
          flat.size() != sizes.size() + 1) {
        ok = false;
        break;
      }
      ArrayRef<int64_t> coefficients = ArrayRef<int64_t>(flat).drop_back();
      int64_t constant = flat.back();
      StridedDim s{static_cast<unsigned>(j),     0,      0,  0, constant,
                   insert.getStaticOffsets()[j], stride, -1, -1};
      int found = 0;
      for (auto [d, c] : llvm::enumerate(coefficients)) {
        if (c == 0)
          continue;
        int inOut = plainResult(out, d), inTaps = plainResult(taps, d);
        if (c == 1 && inOut >= 0 && inTaps == -1 && (found & 1) == 0) {
          s.i = d;
          s.outResult = inOut;
          found |= 1;
        } else if (inTaps >= 0 && inOut == -1 && (found & 2) == 0) {
          s.k = d;
          s.c = c;
          s.tapResult = inTaps;
          found |= 2;
        } else {
          found = -1;
          break;
        }
      }
      // Each loop read by this dimension only, and the tap's steps must
      // reach every phase (gcd(c, stride) = 1).
      auto readElsewhere = [&](unsigned d) {
        return llvm::any_of(llvm::enumerate(window.getResults()), [&](auto r) {
          return r.index() != j && r.value().isFunctionOfDim(d);
        });
      };
      if (found != 3 || readElsewhere(s.i) || readElsewhere(s.k) ||
          std::gcd(std::abs(s.c), stride) != 1) {
        ok = false;
        break;
      }
      strided.push_back(s);
    }
    if (!ok || strided.empty())
      continue;

    // Every phase: for each strided dimension, its residue a, the first tap
    // k0 meeting a value, the counts of outputs and taps, and the position
    // in the dense input as q + c * u + r.
    struct PhaseDim {
      int64_t a, k0, q, u, r;
    };
    SmallVector<SmallVector<PhaseDim>> phases(1);
    for (const StridedDim &s : strided) {
      SmallVector<SmallVector<PhaseDim>> next;
      for (int64_t a = 0; a < s.stride; ++a) {
        int64_t k0 = -1;
        for (int64_t k = 0; k < s.stride && k0 < 0; ++k)
          if (floorMod(a + s.c * k + s.p - s.offset, s.stride) == 0)
            k0 = k;
        int64_t q = (sizes[s.i] - a + s.stride - 1) / s.stride;
        int64_t u = (sizes[s.k] - k0 + s.stride - 1) / s.stride;
        // No output or no tap: the init stays there.
        if (q <= 0 || u <= 0)
          continue;
        int64_t r = (a + s.c * k0 + s.p - s.offset) / s.stride;
        for (const SmallVector<PhaseDim> &prefix : phases) {
          next.push_back(prefix);
          next.back().push_back({a, k0, q, u, r});
        }
      }
      phases = std::move(next);
    }

    // The dense input padded so that every phase reads it in bounds: as
    // the spread on the other dimensions, as far as the phases reach on
    // the strided ones.
    RankedTensorType sourceType = insert.getSourceType();
    SmallVector<int64_t> low(sourceType.getRank()), high(sourceType.getRank());
    for (int64_t j = 0; j < sourceType.getRank(); ++j) {
      low[j] = insert.getStaticOffsets()[j];
      high[j] =
          insert.getType().getDimSize(j) - low[j] - sourceType.getDimSize(j);
    }
    for (auto [n, s] : llvm::enumerate(strided)) {
      low[s.dim] = high[s.dim] = 0;
      for (const SmallVector<PhaseDim> &phase : phases) {
        const PhaseDim &p = phase[n];
        int64_t first = p.r + std::min<int64_t>(0, s.c * (p.u - 1));
        int64_t last = p.q - 1 + p.r + std::max<int64_t>(0, s.c * (p.u - 1));
        low[s.dim] = std::max(low[s.dim], -first);
        high[s.dim] =
            std::max(high[s.dim], last - (sourceType.getDimSize(s.dim) - 1));
      }
    }
    if (llvm::any_of(low, [](int64_t v) { return v < 0; }) ||
        llvm::any_of(high, [](int64_t v) { return v < 0; }))
      continue;

    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    Type element = sourceType.getElementType();
    Value zero =
        arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(element));
    SmallVector<int64_t> paddedShape;
    for (int64_t j = 0; j < sourceType.getRank(); ++j)
      paddedShape.push_back(sourceType.getDimSize(j) + low[j] + high[j]);
    Value dense = tensor::PadOp::create(
        rewriter, loc, RankedTensorType::get(paddedShape, element),
        insert.getSource(), getAsIndexOpFoldResult(op.getContext(), low),
        getAsIndexOpFoldResult(op.getContext(), high), zero);

    Value result = op.getDpsInits()[0];
    Value tapsValue = op.getDpsInputs()[1 - spread];
    auto tapsType = cast<RankedTensorType>(tapsValue.getType());
    auto resultType = cast<RankedTensorType>(result.getType());
    for (const SmallVector<PhaseDim> &phase : phases) {
      // The taps of this phase: every stride-th from the first that meets a
      // value, along each strided dimension's tap loop.
      SmallVector<int64_t> tapOffsets(tapsType.getRank(), 0),
          tapSizes(tapsType.getShape()), tapStrides(tapsType.getRank(), 1);
      SmallVector<int64_t> outOffsets(resultType.getRank(), 0),
          outSizes(resultType.getShape()), outStrides(resultType.getRank(), 1);
      SmallVector<AffineExpr> windowExprs(window.getResults());
      for (auto [n, s] : llvm::enumerate(strided)) {
        const PhaseDim &p = phase[n];
        tapOffsets[s.tapResult] = p.k0;
        tapSizes[s.tapResult] = p.u;
        tapStrides[s.tapResult] = s.stride;
        outOffsets[s.outResult] = p.a;
        outSizes[s.outResult] = p.q;
        outStrides[s.outResult] = s.stride;
        windowExprs[s.dim] = rewriter.getAffineDimExpr(s.i) +
                             rewriter.getAffineDimExpr(s.k) * s.c +
                             (p.r + low[s.dim]);
      }
      auto slice = [&](Value from, ArrayRef<int64_t> offsets,
                       ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides) {
        return tensor::ExtractSliceOp::create(
            rewriter, loc, from,
            getAsIndexOpFoldResult(op.getContext(), offsets),
            getAsIndexOpFoldResult(op.getContext(), sizes),
            getAsIndexOpFoldResult(op.getContext(), strides));
      };
      Value phaseTaps = slice(tapsValue, tapOffsets, tapSizes, tapStrides);
      Value phaseInit = slice(result, outOffsets, outSizes, outStrides);
      SmallVector<AffineMap> phaseMaps = maps;
      phaseMaps[spread] =
          AffineMap::get(window.getNumDims(), 0, windowExprs, op.getContext());
      SmallVector<Value> inputs(2);
      inputs[spread] = dense;
      inputs[1 - spread] = phaseTaps;
      auto contraction = linalg::GenericOp::create(
          rewriter, loc, TypeRange{phaseInit.getType()}, inputs,
          ValueRange{phaseInit}, phaseMaps, op.getIteratorTypesArray());
      rewriter.cloneRegionBefore(op.getRegion(), contraction.getRegion(),
                                 contraction.getRegion().begin());
      contraction->setDiscardableAttrs(op->getDiscardableAttrDictionary());
      result = tensor::InsertSliceOp::create(
          rewriter, loc, contraction.getResult(0), result,
          getAsIndexOpFoldResult(op.getContext(), outOffsets),
          getAsIndexOpFoldResult(op.getContext(), outSizes),
          getAsIndexOpFoldResult(op.getContext(), outStrides));
    }
    rewriter.replaceOp(op, result);
    if (insert->use_empty()) {
      rewriter.eraseOp(insert);
      if (fill->use_empty()) {
        Operation *empty = fill.getOutputs()[0].getDefiningOp();
        rewriter.eraseOp(fill);
        if (empty && empty->use_empty() && isPure(empty))
          rewriter.eraseOp(empty);
      }
    }
    return success();
  }
  return failure();
}

struct EPLSplitStridedWindowsPass
    : public mlir::epl::impl::EPLSplitStridedWindowsPassBase<
          EPLSplitStridedWindowsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics)
      if (succeeded(split(rewriter, op)))
        ++numSplit;
  }
};
} // namespace
