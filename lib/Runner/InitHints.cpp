//===- InitHints.cpp - What seeded values need to know of a model ---------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/InitHints.h"

#include "epl/Dialect/EPL/IR/EPLAttrs.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::epl;

namespace {
/// A value holding a parameter's elements, its dimension `i` being the
/// parameter's dimension `dims[i]`.
struct Permuted {
  Value value;
  SmallVector<int64_t> dims;
};

/// The permutation a generic applies when it only copies its one input
/// (torch-mlir's transposes), else std::nullopt.
std::optional<SmallVector<int64_t>> copyPermutation(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumReductionLoops() != 0)
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(g.getBlock()->getTerminator());
  if (yield.getOperand(0) != g.getBlock()->getArgument(0))
    return std::nullopt;
  AffineMap in = g.getIndexingMapsArray()[0];
  AffineMap out = g.getIndexingMapsArray()[1];
  if (!in.isPermutation() || !out.isIdentity())
    return std::nullopt;
  // Result dimension d is loop d, which the input reads at its dimension
  // p with in(p) = d.
  SmallVector<int64_t> perm(in.getNumResults());
  for (unsigned p = 0; p < in.getNumResults(); ++p)
    perm[in.getDimPosition(p)] = p;
  return perm;
}

/// The argument of the function a call passes `use` to (a built step's
/// micro-batch), or null.
Value calleeArgument(OpOperand &use) {
  auto call = dyn_cast<func::CallOp>(use.getOwner());
  if (!call)
    return Value();
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee || callee.isExternal())
    return Value();
  return callee.getArgument(use.getOperandNumber());
}

std::optional<int64_t> fanInOf(BlockArgument param) {
  auto type = cast<RankedTensorType>(param.getType());
  SmallVector<int64_t> identity(type.getRank());
  for (int64_t d = 0; d < type.getRank(); ++d)
    identity[d] = d;
  SmallVector<Permuted> worklist = {{param, identity}};
  // The first contraction in program order: in a training step built
  // already the forward's, not the backward's, which reduce over other
  // dimensions (a weight gradient's over the outputs).
  Operation *first = nullptr;
  std::optional<int64_t> firstFanIn;
  while (!worklist.empty()) {
    Permuted p = worklist.pop_back_val();
    for (OpOperand &use : p.value.getUses()) {
      Operation *user = use.getOwner();
      if (auto phase =
              user->getAttrOfType<PhaseAttr>(EPLDialect::kPhaseAttrName);
          phase && phase.getValue() != Phase::Forward)
        continue;
      if (Value inside = calleeArgument(use)) {
        worklist.push_back({inside, p.dims});
        continue;
      }
      if (auto t = dyn_cast<linalg::TransposeOp>(user)) {
        Permuted next{t.getResult()[0], {}};
        for (int64_t from : t.getPermutation())
          next.dims.push_back(p.dims[from]);
        worklist.push_back(next);
        continue;
      }
      auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
      if (!linalgOp || !linalgOp.isDpsInput(&use))
        continue;
      if (auto g = dyn_cast<linalg::GenericOp>(user))
        if (auto perm = copyPermutation(g)) {
          Permuted next{g.getResult(0), {}};
          for (int64_t from : *perm)
            next.dims.push_back(p.dims[from]);
          worklist.push_back(next);
          continue;
        }
      AffineMap map = linalgOp.getMatchingIndexingMap(&use);
      SmallVector<utils::IteratorType> iterators =
          linalgOp.getIteratorTypesArray();
      int64_t fanIn = 1;
      bool reduces = false;
      for (auto [i, e] : llvm::enumerate(map.getResults()))
        if (auto d = dyn_cast<AffineDimExpr>(e);
            d && iterators[d.getPosition()] == utils::IteratorType::reduction) {
          fanIn *= type.getDimSize(p.dims[i]);
          reduces = true;
        }
      if (reduces && (!first || (user->getBlock() == first->getBlock() &&
                                 user->isBeforeInBlock(first)))) {
        first = user;
        firstFanIn = fanIn;
      }
    }
  }
  return firstFanIn;
}

/// Whether `v` carries the value of `from`: integer casts of it, or of a
/// select one of whose values carries it (torch-mlir's ignore_index,
/// `select(label != -100, label, 0)`, and its wrap of negative indices,
/// `select(i < 0, i + n, i)`).
bool carries(Value v, Value from) {
  while (v != from) {
    Operation *def = v.getDefiningOp();
    if (auto select = dyn_cast_or_null<arith::SelectOp>(def))
      return carries(select.getTrueValue(), from) ||
             carries(select.getFalseValue(), from);
    if (!isa_and_nonnull<arith::IndexCastOp, arith::IndexCastUIOp,
                         arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp>(def))
      return false;
    v = def->getOperand(0);
  }
  return true;
}

/// The smallest size of a dimension the elements of `input` index, through
/// reshapes and element-wise generics that pass them on.
std::optional<int64_t> indexBoundOf(BlockArgument input) {
  std::optional<int64_t> bound;
  SmallVector<Value> worklist = {input};
  llvm::DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      // (A micro-batch's slice holds the same ids, passed to its function.)
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
              tensor::ExtractSliceOp>(user)) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      if (Value inside = calleeArgument(use)) {
        worklist.push_back(inside);
        continue;
      }
      auto g = dyn_cast<linalg::GenericOp>(user);
      if (!g || !g.isDpsInput(&use))
        continue;
      BlockArgument element = g.getMatchingBlockArgument(&use);
      auto below = [&](int64_t n) { bound = std::min(bound.value_or(n), n); };
      g.getBlock()->walk([&](Operation *op) {
        // An index of what they gather from.
        if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
          auto type = extract.getTensor().getType();
          for (auto [d, index] : llvm::enumerate(extract.getIndices()))
            if (carries(index, element) && !type.isDynamicDim(d))
              below(type.getDimSize(d));
        }
        // A check the model makes of them, `assert(id < n)` (the frontend's
        // Embedding and one_hot, ids it compares rather than gathers by).
        if (auto check = dyn_cast<cf::AssertOp>(op)) {
          auto cmp = check.getArg().getDefiningOp<arith::CmpIOp>();
          APInt limit;
          if (cmp &&
              (cmp.getPredicate() == arith::CmpIPredicate::ult ||
               cmp.getPredicate() == arith::CmpIPredicate::slt) &&
              carries(cmp.getLhs(), element) &&
              matchPattern(cmp.getRhs(), m_ConstantInt(&limit)) &&
              limit.isStrictlyPositive() && limit.getActiveBits() < 63)
            below(limit.getSExtValue());
        }
      });
      auto yield = cast<linalg::YieldOp>(g.getBlock()->getTerminator());
      for (auto [i, y] : llvm::enumerate(yield.getOperands()))
        if (carries(y, element))
          worklist.push_back(g->getResult(i));
    }
  }
  return bound;
}
} // namespace

InitHints mlir::epl::analyzeInitHints(func::FuncOp model, bool fanIns) {
  InitHints hints;
  if (model.isExternal())
    return hints;
  for (BlockArgument arg : model.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto kind = model.getArgAttrOfType<StringAttr>(i, EPLDialect::kArgAttrName);
    auto name =
        model.getArgAttrOfType<StringAttr>(i, EPLDialect::kNameAttrName);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    // (An untagged argument is an input, as the runner feeds it.)
    if (!name || !type || !type.hasStaticShape())
      continue;
    if (kind && kind.getValue() == "param") {
      if (std::optional<int64_t> f = fanIns ? fanInOf(arg) : std::nullopt)
        hints.fanIn[name.getValue()] = *f;
    } else if (isa<IntegerType>(type.getElementType())) {
      if (std::optional<int64_t> b = indexBoundOf(arg))
        hints.indexBound[name.getValue()] = *b;
    }
  }
  return hints;
}

void mlir::epl::applyInitHints(const InitHints &hints,
                               std::vector<EntryArg> &args) {
  for (EntryArg &arg : args) {
    if (auto it = hints.fanIn.find(arg.name); it != hints.fanIn.end())
      arg.fanIn = it->second;
    if (auto it = hints.indexBound.find(arg.name); it != hints.indexBound.end())
      arg.indexBound = it->second;
  }
}
