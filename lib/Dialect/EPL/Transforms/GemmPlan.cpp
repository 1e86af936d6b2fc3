//===- GemmPlan.cpp - How the runtime's GEMM runs a contraction -----------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/GemmPlan.h"
#include "epl/Runtime/BlasLayout.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::epl;

bool mlir::epl::isBLASMatrix(MemRefType type) {
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

MemRefType mlir::epl::permutedType(MemRefType type, ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return type;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return {};
  SmallVector<int64_t> shape, permutedStrides;
  for (int64_t d : perm) {
    shape.push_back(type.getDimSize(d));
    permutedStrides.push_back(strides[d]);
  }
  return MemRefType::get(
      shape, type.getElementType(),
      StridedLayoutAttr::get(type.getContext(), offset, permutedStrides),
      type.getMemorySpace());
}

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
} // namespace

std::optional<GemmPlan> mlir::epl::planGemm(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return std::nullopt;
  SmallVector<Type> elements;
  for (OpOperand &operand : op->getOpOperands()) {
    auto shaped = dyn_cast<ShapedType>(operand.get().getType());
    if (!shaped || !shaped.hasStaticShape())
      return std::nullopt;
    elements.push_back(shaped.getElementType());
  }
  // The runtime's GEMMs: f32 and f64, all three operands of one type.
  if (!isa<Float32Type, Float64Type>(elements[2]) ||
      elements[0] != elements[2] || elements[1] != elements[2])
    return std::nullopt;

  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto orderIn = [](AffineMap map, ArrayRef<unsigned> group) {
    SmallVector<unsigned> order;
    for (AffineExpr e : map.getResults())
      if (auto d = dyn_cast<AffineDimExpr>(e);
          d && llvm::is_contained(group, d.getPosition()))
        order.push_back(d.getPosition());
    return order;
  };
  GemmPlan plan;
  plan.batch = orderIn(maps[2], dims->batch);
  plan.m = orderIn(maps[0], dims->m);
  plan.k = orderIn(maps[0], dims->k);
  plan.n = orderIn(maps[1], dims->n);
  auto with = [&](ArrayRef<unsigned> x, ArrayRef<unsigned> y) {
    SmallVector<unsigned> order = plan.batch;
    llvm::append_range(order, x);
    llvm::append_range(order, y);
    return order;
  };
  auto permA = permutationTo(maps[0], with(plan.m, plan.k));
  auto permB = permutationTo(maps[1], with(plan.k, plan.n));
  auto permC = permutationTo(maps[2], with(plan.m, plan.n));
  if (!permA || !permB || !permC)
    return std::nullopt;
  plan.perms = {*permA, *permB, *permC};
  return plan;
}

std::pair<size_t, size_t> GemmPlan::matrixLoops(unsigned i) const {
  switch (i) {
  case 0:
    return {m.size(), k.size()};
  case 1:
    return {k.size(), n.size()};
  default:
    return {m.size(), n.size()};
  }
}

SmallVector<ReassociationIndices> GemmPlan::groups(unsigned i) const {
  SmallVector<ReassociationIndices> groups;
  int64_t d = 0;
  for (; d < static_cast<int64_t>(batch.size()); ++d)
    groups.push_back({d});
  auto [x, y] = matrixLoops(i);
  for (size_t size : {x, y}) {
    groups.emplace_back();
    for (size_t j = 0; j < size; ++j)
      groups.back().push_back(d++);
  }
  return groups;
}

bool GemmPlan::readsInPlace(unsigned i, MemRefType type) const {
  MemRefType view = permutedType(type, perms[i]);
  if (!view)
    return false;
  auto [x, y] = matrixLoops(i);
  if (x == 1 && y == 1)
    return isBLASMatrix(view);
  SmallVector<ReassociationIndices> g = groups(i);
  return memref::CollapseShapeOp::isGuaranteedCollapsible(view, g) &&
         isBLASMatrix(memref::CollapseShapeOp::computeCollapsedType(view, g));
}
