//===- MatmulToRuntime.cpp - Contractions on buffers to GEMM calls --------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Conversion/EPLToRuntime/BufferWrites.h"
#include "epl/Conversion/EPLToRuntime/RuntimeAPI.h"
#include "epl/Conversion/Passes.h"
#include "epl/Dialect/EPL/Transforms/GemmPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#define DEBUG_TYPE "epl-matmul-to-runtime"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLMATMULTORUNTIMEPASS
#include "epl/Conversion/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
/// A view of `buffer` whose dimensions are `perm` of the original.
Value permuted(OpBuilder &b, Location loc, Value buffer,
               ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return buffer;
  SmallVector<unsigned> p(perm.begin(), perm.end());
  auto map = AffineMap::getPermutationMap(p, b.getContext());
  return memref::TransposeOp::create(b, loc, buffer, AffineMapAttr::get(map));
}

/// The matrix (or batch of matrices) of `view` at the indices `outer` of
/// its leading dimensions: a strided view without them.
Value innermost(OpBuilder &b, Location loc, Value view, ValueRange outer) {
  if (outer.empty())
    return view;
  auto type = cast<MemRefType>(view.getType());
  SmallVector<OpFoldResult> offsets(outer.begin(), outer.end());
  SmallVector<OpFoldResult> sizes(outer.size(), b.getIndexAttr(1));
  for (int64_t d = outer.size(); d < type.getRank(); ++d) {
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
  }
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  auto result = memref::SubViewOp::inferRankReducedResultType(
      type.getShape().drop_front(outer.size()), type, offsets, sizes, strides);
  return memref::SubViewOp::create(b, loc, cast<MemRefType>(result), view,
                                   offsets, sizes, strides);
}

/// Whether `op` writes zeros into all of exactly `buffer`.
bool isZeroFill(Operation *op, Value buffer) {
  Value value = filledWith(op, buffer);
  return value && isa<FloatType>(value.getType()) &&
         matchPattern(value, m_AnyZeroFloat());
}

/// What makes `c` zeros right before `op` (which accumulates onto it), when
/// nothing between touches it: a zero fill of `c`, or a copy into `c` of a
/// buffer a zero fill made. The GEMM can write C = A B instead (BLAS's beta
/// = 0), and that op's pass over C goes. Null otherwise.
Operation *zeroingBefore(linalg::LinalgOp op, Value c) {
  Operation *last = lastTouch(c, op);
  if (isZeroFill(last, c))
    return last;
  // Bufferization copies a zero-filled buffer that several users share.
  auto copy = dyn_cast_or_null<memref::CopyOp>(last);
  if (copy && copy.getTarget() == c &&
      isZeroFill(lastTouch(copy.getSource(), copy), copy.getSource()))
    return copy;
  return nullptr;
}

/// The `batch` leading dimensions of the views as one, where each view's
/// are one strided dimension (a contiguous batch and heads, k read
/// transposed in place); unchanged otherwise.
void collapseBatch(OpBuilder &b, Location loc, size_t batch,
                   ArrayRef<Value *> views) {
  if (batch < 2)
    return;
  ReassociationIndices leading;
  for (size_t d = 0; d < batch; ++d)
    leading.push_back(d);
  SmallVector<ReassociationIndices> groups = {
      leading, {int64_t(batch)}, {int64_t(batch) + 1}};
  if (!llvm::all_of(views, [&](Value *view) {
        return memref::CollapseShapeOp::isGuaranteedCollapsible(
            cast<MemRefType>(view->getType()), groups);
      }))
    return;
  for (Value *view : views)
    *view = memref::CollapseShapeOp::create(b, loc, *view, groups);
}

/// Lowers `op` if it is a GEMM the runtime runs; returns whether it did.
bool lowerContraction(RuntimeAPI &api, RewriterBase &rewriter,
                      linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics())
    return false;
  std::optional<GemmPlan> plan = planGemm(op);
  if (!plan)
    return false;
  Value a = op.getDpsInputOperand(0)->get();
  Value b = op.getDpsInputOperand(1)->get();
  Value c = op.getDpsInitOperand(0)->get();
  Type element = cast<MemRefType>(c.getType()).getElementType();
  if (!RuntimeAPI::typedFunction("matmul", element))
    return false;

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Operation *zeroFill = zeroingBefore(op, c);
  // Operands whose groups are not one strided dimension each (a slice of a
  // padded buffer, e.g. a convolution's output gradient written into the
  // spread copy its input gradient reads), or whose matrix has no unit
  // stride, are staged in a contiguous copy: a copy costs one pass, scalar
  // loops a GEMM's worth, and cuBLAS reads no other layout.
  SmallVector<std::pair<Value, Value>>
      staged; // (copy, view) to free, write back
  Value stagedC;
  auto matrix = [&](unsigned i, Value buffer, bool isOutput) -> Value {
    Value view = permuted(rewriter, loc, buffer, plan->perms[i]);
    auto [x, y] = plan->matrixLoops(i);
    bool inPlace = plan->readsInPlace(i, cast<MemRefType>(buffer.getType()));
    if (x == 1 && y == 1 && inPlace)
      return view;
    if (!inPlace) {
      auto viewType = cast<MemRefType>(view.getType());
      auto contiguous =
          MemRefType::get(viewType.getShape(), viewType.getElementType());
      Value copy = memref::AllocOp::create(rewriter, loc, contiguous);
      if (!isOutput || (!zeroFill && op.payloadUsesValueFromOperand(
                                         op.getDpsInitOperand(0))))
        memref::CopyOp::create(rewriter, loc, view, copy);
      staged.push_back({copy, view});
      if (isOutput)
        stagedC = copy;
      view = copy;
    }
    return memref::CollapseShapeOp::create(rewriter, loc, view,
                                           plan->groups(i));
  };
  Value va = matrix(0, a, false);
  Value vb = matrix(1, b, false);
  Value vc = matrix(2, c, true);
  // The runtime's GEMM takes one batch dimension (on a GPU, one strided
  // batched cuBLAS call): several (batch and heads of attention scores)
  // become one where every operand's are one strided dimension, loops go
  // over the others.
  collapseBatch(rewriter, loc, plan->batch.size(), {&va, &vb, &vc});
  SmallVector<Value> outer;
  int64_t batchDims = cast<MemRefType>(vc.getType()).getRank() - 2;
  for (int64_t i = 0; i + 1 < batchDims; ++i) {
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value size = arith::ConstantIndexOp::create(
        rewriter, loc, cast<MemRefType>(vc.getType()).getDimSize(i));
    auto loop = scf::ForOp::create(rewriter, loc, zero, size, one);
    rewriter.setInsertionPointToStart(loop.getBody());
    outer.push_back(loop.getInductionVar());
  }
  api.call(
      rewriter, loc,
      *RuntimeAPI::typedFunction(zeroFill ? "matmul_overwrite" : "matmul",
                                 element),
      {RuntimeAPI::unranked(rewriter, loc, innermost(rewriter, loc, va, outer)),
       RuntimeAPI::unranked(rewriter, loc, innermost(rewriter, loc, vb, outer)),
       RuntimeAPI::unranked(rewriter, loc,
                            innermost(rewriter, loc, vc, outer))});
  rewriter.setInsertionPoint(op);
  for (auto [copy, view] : staged) {
    if (copy == stagedC)
      memref::CopyOp::create(rewriter, loc, copy, view);
    memref::DeallocOp::create(rewriter, loc, copy);
  }
  rewriter.eraseOp(op);
  if (zeroFill)
    rewriter.eraseOp(zeroFill);
  return true;
}

struct EPLMatmulToRuntimePass
    : mlir::epl::impl::EPLMatmulToRuntimePassBase<EPLMatmulToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    RuntimeAPI api(module);
    SmallVector<linalg::LinalgOp> candidates;
    module.walk([&](linalg::LinalgOp op) { candidates.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates)
      if (lowerContraction(api, rewriter, op))
        ++numMatmuls;
  }
};
} // namespace
