//===- ShardingUtils.cpp - Working with shardings -------------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/ShardingUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

#include <algorithm>
#include <cmath>
#include <functional>

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

AxisList mlir::epl::dataAxes(func::FuncOp fn) {
  AxisList axes;
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
    StringRef kind = getArgKind(fn, i);
    auto s =
        fn.getArgAttrOfType<ShardingAttr>(i, EPLDialect::kShardingAttrName);
    if ((kind != "input" && kind != "label") || !s || s.getDims().empty())
      continue;
    for (StringRef axis : s.getDimAxes(0))
      if (!llvm::is_contained(axes, axis))
        axes.push_back(axis);
  }
  return axes;
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

bool mlir::epl::isZeroTensor(Value v) {
  auto isZeroAttr = [](Attribute a) {
    if (auto dense = dyn_cast_or_null<DenseElementsAttr>(a))
      return dense.isSplat() && isa<FloatType>(dense.getElementType()) &&
             dense.getSplatValue<APFloat>().isZero();
    auto f = dyn_cast_or_null<FloatAttr>(a);
    return f && f.getValue().isZero();
  };
  Attribute a;
  if (matchPattern(v, m_Constant(&a)))
    return isZeroAttr(a);
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.getInputs()[0], m_Constant(&a)) && isZeroAttr(a);
  // A generic filling with a zero: broadcast from its one input, or a
  // constant it yields (what --linalg-generalize-named-ops and
  // --linalg-fuse-elementwise-ops make of linalg.fill).
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g->getNumResults() != 1)
    return false;
  Block &body = g.getRegion().front();
  Value yielded = cast<linalg::YieldOp>(body.getTerminator()).getOperand(0);
  if (g.getNumDpsInputs() == 1 && yielded == body.getArgument(0))
    return matchPattern(g.getDpsInputOperand(0)->get(), m_Constant(&a)) &&
           isZeroAttr(a);
  return matchPattern(yielded, m_Constant(&a)) && isZeroAttr(a);
}

static bool isCheapUncached(Value v, llvm::DenseMap<Value, bool> *cache);

bool mlir::epl::isCheap(Value v, llvm::DenseMap<Value, bool> *cache) {
  if (cache)
    if (auto it = cache->find(v); it != cache->end())
      return it->second;
  bool cheap = isCheapUncached(v, cache);
  if (cache)
    (*cache)[v] = cheap;
  return cheap;
}

static bool isCheapUncached(Value v, llvm::DenseMap<Value, bool> *cache) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumResults() != 1 || !isa<RankedTensorType>(v.getType()))
    return false;
  if (isa<tensor::EmptyOp>(def))
    return true;
  if (auto c = dyn_cast<arith::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    return dense && dense.isSplat();
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(def);
  if (!linalgOp || !isa<linalg::FillOp, linalg::GenericOp>(def) ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops() ||
      !linalgOp.getIndexingMapsArray().back().isPermutation() ||
      !linalgOp.getBlock()->getOps<linalg::IndexOp>().empty())
    return false;
  // Everything it reads is a constant or cheap itself.
  for (OpOperand &operand : def->getOpOperands()) {
    Value in = operand.get();
    if (isa<RankedTensorType>(in.getType()) ? !isCheap(in, cache)
                                            : !matchPattern(in, m_Constant()))
      return false;
  }
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(def->getRegion(0), captured);
  return llvm::all_of(captured,
                      [](Value c) { return matchPattern(c, m_Constant()); });
}

Linearity mlir::epl::linearityOf(linalg::GenericOp op, ArrayRef<bool> linear) {
  Block &body = op.getRegion().front();
  llvm::DenseMap<Value, Linearity> deps;
  for (auto [i, arg] : llvm::enumerate(body.getArguments()))
    deps[arg] = linear[i] ? Linearity::Linear : Linearity::Constant;
  auto depOf = [&](Value v) {
    auto it = deps.find(v);
    return it == deps.end() ? Linearity::Constant : it->second;
  };
  for (Operation &inner : body.without_terminator()) {
    SmallVector<Linearity> in = llvm::map_to_vector(inner.getOperands(), depOf);
    auto count = [&](Linearity d) { return llvm::count(in, d); };
    Linearity out = count(Linearity::Linear) || count(Linearity::Nonlinear)
                        ? Linearity::Nonlinear
                        : Linearity::Constant;
    if (count(Linearity::Nonlinear) == 0) {
      if (isa<arith::AddFOp, arith::SubFOp>(inner) &&
          count(Linearity::Linear) == 2)
        out = Linearity::Linear;
      else if (isa<arith::MulFOp>(inner) && count(Linearity::Linear) == 1)
        out = Linearity::Linear;
      else if (isa<arith::DivFOp>(inner) && in[0] == Linearity::Linear &&
               in[1] == Linearity::Constant)
        out = Linearity::Linear;
      else if (isa<arith::NegFOp>(inner) && in[0] == Linearity::Linear)
        out = Linearity::Linear;
    }
    for (Value r : inner.getResults())
      deps[r] = out;
  }
  return depOf(body.getTerminator()->getOperand(0));
}

std::optional<int64_t> mlir::epl::pipelineStageOf(Value v) {
  llvm::DenseMap<Value, std::optional<int64_t>> memo;
  std::function<std::optional<int64_t>(Value)> stageOf =
      [&](Value v) -> std::optional<int64_t> {
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    memo[v] = std::nullopt; // Loop-carried cycles end here.
    std::optional<int64_t> stage;
    Operation *def = v.getDefiningOp();
    if (!def) {
      // A loop's accumulator is on the stage of what the loop adds to it.
      auto arg = cast<BlockArgument>(v);
      if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
          loop && arg.getArgNumber() > 0)
        stage = stageOf(loop.getYieldedValues()[arg.getArgNumber() - 1]);
    } else if (auto s =
                   def->getAttrOfType<StageAttr>(EPLDialect::kStageAttrName)) {
      stage = s.getIndex();
    } else if (auto loop = dyn_cast<scf::ForOp>(def)) {
      stage =
          stageOf(loop.getYieldedValues()[cast<OpResult>(v).getResultNumber()]);
    } else {
      for (Value operand : def->getOperands())
        if (std::optional<int64_t> s = stageOf(operand))
          stage = std::max(stage.value_or(*s), *s);
    }
    return memo[v] = stage;
  };
  return stageOf(v);
}

bool mlir::epl::madeBefore(Block *block, Value a, Value b) {
  auto maker = [&](Value v) -> Operation * {
    Operation *def = v.getDefiningOp();
    return def ? block->findAncestorOpInBlock(*def) : nullptr;
  };
  Operation *x = maker(a), *y = maker(b);
  return x != y && (!x || (y && x->isBeforeInBlock(y)));
}

SmallVector<unsigned> mlir::epl::consecutiveShares(ArrayRef<int64_t> sizes,
                                                   int64_t parts) {
  // More parts than items would be empty ones (and a count near 2^32 more
  // than a vector holds).
  parts = std::clamp<int64_t>(parts, 1, std::max<size_t>(1, sizes.size()));
  double total = 0;
  for (int64_t s : sizes)
    total += s;
  SmallVector<unsigned> runOf(sizes.size());
  double filled = 0;
  int64_t run = 0, inRun = 0;
  for (auto [i, size] : llvm::enumerate(sizes)) {
    double target = total * (run + 1) / parts;
    if (inRun > 0 && run + 1 < parts &&
        std::abs(filled + size - target) > std::abs(filled - target)) {
      ++run;
      inRun = 0;
    }
    runOf[i] = run;
    filled += size;
    ++inRun;
    if (run + 1 < parts && filled >= total * (run + 1) / parts &&
        i + 1 < sizes.size()) {
      ++run;
      inRun = 0;
    }
  }
  return runOf;
}
