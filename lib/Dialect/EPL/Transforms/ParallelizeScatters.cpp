//===- ParallelizeScatters.cpp - A scatter-add's rows in parallel ---------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLOps.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLPARALLELIZESCATTERSPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
/// The slice of `value` at `position` along `dims` (one element there,
/// dropped from the type) and whole along every other dimension.
struct Slice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  RankedTensorType type;
};

Slice sliceAlong(OpBuilder &b, Location loc, Value value,
                 ArrayRef<int64_t> dims, ValueRange position) {
  auto type = cast<RankedTensorType>(value.getType());
  Slice slice;
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    slice.strides.push_back(b.getIndexAttr(1));
    const int64_t *at = llvm::find(dims, d);
    if (at != dims.end()) {
      slice.offsets.push_back(position[at - dims.begin()]);
      slice.sizes.push_back(b.getIndexAttr(1));
      continue;
    }
    slice.offsets.push_back(b.getIndexAttr(0));
    slice.sizes.push_back(tensor::getMixedSize(b, loc, value, d));
    kept.push_back(type.getDimSize(d));
  }
  slice.type = RankedTensorType::get(kept, type.getElementType());
  return slice;
}

Value extract(OpBuilder &b, Location loc, Value value, const Slice &slice) {
  return tensor::ExtractSliceOp::create(
      b, loc, slice.type, value, slice.offsets, slice.sizes, slice.strides);
}

/// `op` as an `scf.forall` over its batching dimensions, each iteration a
/// scatter-add without them into its own slice of the destination.
void parallelize(RewriterBase &rewriter, ScatterAddOp op) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> destDims = op.getDestBatchingDims();
  ArrayRef<int64_t> updatesDims = op.getUpdatesBatchingDims();
  RankedTensorType destType = op.getDest().getType();
  SmallVector<OpFoldResult> bounds;
  for (int64_t d : destDims)
    bounds.push_back(rewriter.getIndexAttr(destType.getDimSize(d)));
  rewriter.setInsertionPoint(op);
  auto forall = scf::ForallOp::create(rewriter, loc, bounds,
                                      ValueRange{op.getDest()}, std::nullopt);
  SmallVector<Value> position = forall.getInductionVars();
  Value shared = forall.getRegionOutArgs().front();
  rewriter.setInsertionPointToStart(forall.getBody());
  Slice into = sliceAlong(rewriter, loc, shared, destDims, position);
  SmallVector<Value> indices;
  for (Value index : op.getIndices())
    indices.push_back(
        extract(rewriter, loc, index,
                sliceAlong(rewriter, loc, index, updatesDims, position)));
  Value updates = extract(
      rewriter, loc, op.getUpdates(),
      sliceAlong(rewriter, loc, op.getUpdates(), updatesDims, position));
  auto row = ScatterAddOp::create(
      rewriter, loc, extract(rewriter, loc, shared, into), updates, indices);
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, row.getResult(), shared,
                                        into.offsets, into.sizes, into.strides);
  rewriter.replaceOp(op, forall.getResults());
}

struct EPLParallelizeScattersPass
    : public mlir::epl::impl::EPLParallelizeScattersPassBase<
          EPLParallelizeScattersPass> {
  void runOnOperation() override {
    SmallVector<ScatterAddOp> ops;
    getOperation()->walk([&](ScatterAddOp op) {
      if (!op.getDestBatchingDims().empty())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (ScatterAddOp op : ops)
      parallelize(rewriter, op);
  }
};
} // namespace
