//===- MatmulToRuntime.cpp - Contractions on buffers to GEMM calls --------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Conversion/EPLToRuntime/RuntimeAPI.h"
#include "epl/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "epl-matmul-to-runtime"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLMATMULTORUNTIMEPASS
#include "epl/Conversion/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
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

/// Lowers `op` if it is a GEMM the runtime runs; returns whether it did.
bool lowerContraction(RuntimeAPI &api, RewriterBase &rewriter,
                      linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->batch.size() > 1 || dims->m.size() != 1 ||
      dims->n.size() != 1 || dims->k.size() != 1)
    return false;

  Value a = op.getDpsInputOperand(0)->get();
  Value b = op.getDpsInputOperand(1)->get();
  Value c = op.getDpsInitOperand(0)->get();
  Type element = cast<MemRefType>(c.getType()).getElementType();
  if (!(element.isF32() || element.isF64()) ||
      cast<MemRefType>(a.getType()).getElementType() != element ||
      cast<MemRefType>(b.getType()).getElementType() != element)
    return false;

  SmallVector<unsigned> batch(dims->batch.begin(), dims->batch.end());
  auto with = [&](unsigned x, unsigned y) {
    SmallVector<unsigned> order = batch;
    order.push_back(x);
    order.push_back(y);
    return order;
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto permA = permutationTo(maps[0], with(dims->m[0], dims->k[0]));
  auto permB = permutationTo(maps[1], with(dims->k[0], dims->n[0]));
  auto permC = permutationTo(maps[2], with(dims->m[0], dims->n[0]));
  if (!permA || !permB || !permC)
    return false;

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value va = permuted(rewriter, loc, a, *permA);
  Value vb = permuted(rewriter, loc, b, *permB);
  Value vc = permuted(rewriter, loc, c, *permC);
  api.call(rewriter, loc,
           element.isF32() ? "epl_rt_matmul_f32" : "epl_rt_matmul_f64",
           {RuntimeAPI::unranked(rewriter, loc, va),
            RuntimeAPI::unranked(rewriter, loc, vb),
            RuntimeAPI::unranked(rewriter, loc, vc)});
  rewriter.eraseOp(op);
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
