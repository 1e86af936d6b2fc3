//===- MatmulToRuntime.cpp - Contractions on buffers to GEMM calls --------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Conversion/EPLToRuntime/RuntimeAPI.h"
#include "epl/Conversion/Passes.h"
#include "epl/Runtime/BlasLayout.h"

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
/// Whether BLAS (and cuBLAS) reads the innermost two dimensions of `type`
/// in place, by the runtime's own rule; what it could not read is staged
/// here.
bool isBLASMatrix(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  size_t r = strides.size();
  int64_t rows = type.getDimSize(r - 2), cols = type.getDimSize(r - 1);
  int64_t rs = strides[r - 2], cs = strides[r - 1];
  if (ShapedType::isDynamic(rows) || ShapedType::isDynamic(cols) ||
      ShapedType::isDynamic(rs) || ShapedType::isDynamic(cs))
    return false;
  return ::epl::rt::blasLayout(rows, cols, rs, cs).has_value();
}

/// The order of loop dimensions in which `map` should read its operand for
/// the runtime's GEMM, e.g. (b, m, k) for A; std::nullopt when the operand
/// does not index exactly those dimensions.
std::optional<SmallVector<int64_t>> permutationTo(AffineMap map,
                                                  ArrayRef<unsigned> wanted) {
  if (map.getNumResults() != wanted.size())
    return std::nullopt;
  SmallVector<int64_t> perm;
  for (unsigned dim : wanted) {
    std::optional<int64_t> found;
    for (auto [i, expr] : llvm::enumerate(map.getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(expr); d && d.getPosition() == dim)
        found = i;
    if (!found)
      return std::nullopt;
    perm.push_back(*found);
  }
  return perm;
}

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

/// The buffer a view of it (subview, cast, reshape, transpose) was taken
/// from.
Value rootBuffer(Value view) {
  while (auto viewLike = view.getDefiningOp<ViewLikeOpInterface>())
    view = viewLike.getViewSource();
  return view;
}

/// The last op before `before` in its block that touches `buffer`'s
/// memory (through any view, in its operands or its regions' ops); null
/// when none does, or when a call, which might, comes first.
Operation *lastTouch(Value buffer, Operation *before) {
  Value root = rootBuffer(buffer);
  for (Operation *prev = before->getPrevNode(); prev;
       prev = prev->getPrevNode()) {
    bool touches = false, calls = false;
    prev->walk([&](Operation *op) {
      calls |= isa<CallOpInterface>(op);
      for (Value operand : op->getOperands())
        touches |= isa<BaseMemRefType>(operand.getType()) &&
                   rootBuffer(operand) == root;
    });
    if (calls)
      return nullptr;
    if (touches)
      return prev;
  }
  return nullptr;
}

/// Whether `op` writes zeros into all of exactly `buffer`: a `linalg.fill`,
/// or the generic a generalized fill is (a scalar input yielded into every
/// element).
bool isZeroFill(Operation *op, Value buffer) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getDpsInitOperand(0)->get() != buffer ||
      linalgOp.getNumDpsInputs() != 1)
    return false;
  Value value = linalgOp.getDpsInputOperand(0)->get();
  if (!isa<FloatType>(value.getType()) ||
      !matchPattern(value, m_AnyZeroFloat()))
    return false;
  if (isa<linalg::FillOp>(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.getIndexingMapsArray().back().isIdentity())
    return false;
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  return yield.getNumOperands() == 1 &&
         yield.getOperand(0) == generic.getBody()->getArgument(0);
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

/// Lowers `op` if it is a GEMM the runtime runs; returns whether it did.
bool lowerContraction(RuntimeAPI &api, RewriterBase &rewriter,
                      linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return false;

  Value a = op.getDpsInputOperand(0)->get();
  Value b = op.getDpsInputOperand(1)->get();
  Value c = op.getDpsInitOperand(0)->get();
  Type element = cast<MemRefType>(c.getType()).getElementType();
  if (!llvm::all_of(ValueRange{a, b, c},
                    [](Value v) {
                      return cast<MemRefType>(v.getType()).hasStaticShape();
                    }) ||
      !RuntimeAPI::typedFunction("matmul", element) ||
      cast<MemRefType>(a.getType()).getElementType() != element ||
      cast<MemRefType>(b.getType()).getElementType() != element)
    return false;

  // Several loops of a kind (m, n or k) make one GEMM dimension, e.g. the
  // batch and sequence of a dense layer's input: each group is taken in the
  // order an operand reads it, and must collapse to one strided dimension
  // in every operand.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto orderIn = [](AffineMap map, ArrayRef<unsigned> group) {
    SmallVector<unsigned> order;
    for (AffineExpr e : map.getResults())
      if (auto d = dyn_cast<AffineDimExpr>(e);
          d && llvm::is_contained(group, d.getPosition()))
        order.push_back(d.getPosition());
    return order;
  };
  SmallVector<unsigned> batch = orderIn(maps[2], dims->batch);
  SmallVector<unsigned> m = orderIn(maps[0], dims->m);
  SmallVector<unsigned> k = orderIn(maps[0], dims->k);
  SmallVector<unsigned> n = orderIn(maps[1], dims->n);
  auto with = [&](ArrayRef<unsigned> x, ArrayRef<unsigned> y) {
    SmallVector<unsigned> order = batch;
    llvm::append_range(order, x);
    llvm::append_range(order, y);
    return order;
  };
  auto permA = permutationTo(maps[0], with(m, k));
  auto permB = permutationTo(maps[1], with(k, n));
  auto permC = permutationTo(maps[2], with(m, n));
  if (!permA || !permB || !permC)
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
  auto matrix = [&](Value buffer, ArrayRef<int64_t> perm, size_t x, size_t y,
                    bool isOutput) -> Value {
    Value view = permuted(rewriter, loc, buffer, perm);
    if (x == 1 && y == 1 && isBLASMatrix(cast<MemRefType>(view.getType())))
      return view;
    SmallVector<ReassociationIndices> groups;
    int64_t d = 0;
    for (; d < static_cast<int64_t>(batch.size()); ++d)
      groups.push_back({d});
    for (size_t size : {x, y}) {
      groups.emplace_back();
      for (size_t i = 0; i < size; ++i)
        groups.back().push_back(d++);
    }
    auto viewType = cast<MemRefType>(view.getType());
    if (!memref::CollapseShapeOp::isGuaranteedCollapsible(viewType, groups) ||
        !isBLASMatrix(
            memref::CollapseShapeOp::computeCollapsedType(viewType, groups))) {
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
    return memref::CollapseShapeOp::create(rewriter, loc, view, groups);
  };
  Value va = matrix(a, *permA, m.size(), k.size(), false);
  Value vb = matrix(b, *permB, k.size(), n.size(), false);
  Value vc = matrix(c, *permC, m.size(), n.size(), true);
  // The runtime's GEMM takes one batch dimension: loops go over the others
  // (e.g. batch and heads of attention scores).
  SmallVector<Value> outer;
  for (unsigned i = 0; i + 1 < batch.size(); ++i) {
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
