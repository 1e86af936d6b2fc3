//===- ShardingUtils.cpp - Working with shardings -------------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/ShardingUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::epl;

Layout Layout::of(ShardingAttr attr) {
  Layout l;
  for (unsigned d = 0; d < attr.getDims().size(); ++d)
    l.dims.push_back(AxisList(attr.getDimAxes(d)));
  l.partial = AxisList(attr.getPartialAxisNames());
  l.kind = attr.getPartialKind();
  return l;
}

ArrayAttr mlir::epl::axesAttr(MLIRContext *ctx, ArrayRef<StringRef> axes) {
  SmallVector<Attribute> names;
  for (StringRef a : axes)
    names.push_back(StringAttr::get(ctx, a));
  return ArrayAttr::get(ctx, names);
}

ShardingAttr Layout::toAttr(MLIRContext *ctx, StringRef mesh) const {
  SmallVector<ArrayAttr> dimAttrs;
  for (const AxisList &axes : dims)
    dimAttrs.push_back(axesAttr(ctx, axes));
  return ShardingAttr::get(ctx, FlatSymbolRefAttr::get(ctx, mesh), dimAttrs,
                           axesAttr(ctx, partial),
                           partial.empty() ? ReductionKind::Sum : kind);
}

bool Layout::isReplicated() const {
  return partial.empty() &&
         llvm::all_of(dims, [](const AxisList &a) { return a.empty(); });
}

AxisList Layout::allAxes() const {
  AxisList all;
  for (const AxisList &a : dims)
    all.append(a.begin(), a.end());
  all.append(partial.begin(), partial.end());
  return all;
}

MeshOp mlir::epl::getMesh(ModuleOp module) {
  auto meshes = module.getOps<MeshOp>();
  return meshes.empty() ? MeshOp() : *meshes.begin();
}

int64_t mlir::epl::groupSize(MeshOp mesh, ArrayRef<StringRef> axes) {
  int64_t n = 1;
  for (StringRef a : axes)
    n *= mesh.getAxisSize(a).value_or(1);
  return n;
}

FailureOr<RankedTensorType>
mlir::epl::localType(MeshOp mesh, RankedTensorType type, const Layout &layout) {
  SmallVector<int64_t> shape(type.getShape());
  for (auto [d, axes] : llvm::enumerate(layout.dims)) {
    int64_t g = groupSize(mesh, axes);
    if (g == 1)
      continue;
    if (ShapedType::isDynamic(shape[d]) || shape[d] % g != 0)
      return failure();
    shape[d] /= g;
  }
  return RankedTensorType::get(shape, type.getElementType());
}

int64_t mlir::epl::localBytes(MeshOp mesh, RankedTensorType type,
                              const Layout &layout) {
  int64_t n = type.getElementTypeBitWidth() / 8;
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    n *= size / std::max<int64_t>(1, d < layout.dims.size()
                                         ? groupSize(mesh, layout.dims[d])
                                         : 1);
  return n;
}

bool mlir::epl::isElementwiseSum(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0)
    return false;
  Block &body = op.getRegion().front();
  auto add = cast<linalg::YieldOp>(body.getTerminator())
                 .getOperand(0)
                 .getDefiningOp<arith::AddFOp>();
  return add && llvm::is_contained(add->getOperands(), body.getArgument(0)) &&
         llvm::is_contained(add->getOperands(), body.getArgument(1));
}
