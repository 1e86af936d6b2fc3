//===- ShardingRuleModels.cpp - Sharding rules of upstream ops ------------===//
//
// Part of EPL-MLIR.
//
// ShardingRuleOpInterface for the upstream ops EPL shards. Everything a
// sharding pass knows about an op's dimensions is stated here, once.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/IR/EPLOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::epl;

namespace {
using Kind = ShardingRule::FactorKind;

/// The combiner of a reduction body, if a collective can finish it.
std::optional<ReductionKind> combinerOf(linalg::LinalgOp op) {
  Block &body = *op.getBlock();
  if (op.getNumDpsInits() != 1)
    return std::nullopt;
  Value acc = body.getArgument(op.getNumDpsInputs());
  Operation *comb =
      cast<linalg::YieldOp>(body.getTerminator()).getOperand(0).getDefiningOp();
  if (!comb || !llvm::is_contained(comb->getOperands(), acc))
    return std::nullopt;
  if (isa<arith::AddFOp>(comb) ||
      (isa<arith::SubFOp>(comb) && comb->getOperand(0) == acc))
    return ReductionKind::Sum;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(comb))
    return ReductionKind::Max;
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(comb))
    return ReductionKind::Min;
  return std::nullopt;
}

/// The dimensions of a value indexed by `map` over loops = factors.
ShardingRule::Dims dimsOf(AffineMap map) {
  ShardingRule::Dims dims;
  for (AffineExpr e : map.getResults()) {
    dims.emplace_back();
    if (auto d = dyn_cast<AffineDimExpr>(e))
      dims.back().push_back(d.getPosition());
  }
  return dims;
}

/// The operand `def` passes on unchanged as a position below `size`, if
/// any: `+ 0`, `- 0`, `* 1`, and casts between index and an integer type
/// that holds it (IR as written, before canonicalization).
Value identitySource(Operation *def, int64_t size) {
  auto isConstant = [](Value v, int64_t c) {
    APInt value;
    return matchPattern(v, m_ConstantInt(&value)) && value == c;
  };
  if (isa<arith::AddIOp, arith::SubIOp>(def) &&
      isConstant(def->getOperand(1), 0))
    return def->getOperand(0);
  if (isa<arith::AddIOp>(def) && isConstant(def->getOperand(0), 0))
    return def->getOperand(1);
  if (isa<arith::MulIOp>(def) && isConstant(def->getOperand(1), 1))
    return def->getOperand(0);
  if (isa<arith::MulIOp>(def) && isConstant(def->getOperand(0), 1))
    return def->getOperand(1);
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def)) {
    // Index is 64 bits here; a narrower integer must hold size - 1 (a
    // signed one as a non-negative value).
    unsigned width = 64;
    for (Type t : {def->getOperand(0).getType(), def->getResult(0).getType()})
      if (auto integer = dyn_cast<IntegerType>(t))
        width = std::min(width, integer.getWidth());
    if (width == 0)
      return {};
    unsigned bits = isa<arith::IndexCastOp>(def) ? width - 1 : width;
    if (bits >= 63 || size <= (int64_t(1) << bits))
      return def->getOperand(0);
  }
  return {};
}

/// `index` without the identities (identitySource) it went through.
Value withoutIdentities(Value index, int64_t size) {
  while (Operation *def = index.getDefiningOp()) {
    Value source = identitySource(def, size);
    if (!source)
      break;
    index = source;
  }
  return index;
}

/// The loop `index` is the position of, if it is a `linalg.index` of `op`
/// over a loop as long as `size` (a dimension read at that position),
/// possibly through identities (withoutIdentities).
std::optional<unsigned> positionOf(linalg::LinalgOp op, Value index,
                                   ArrayRef<int64_t> loopSizes, int64_t size) {
  if (ShapedType::isDynamic(size))
    return std::nullopt;
  auto position =
      withoutIdentities(index, size).getDefiningOp<linalg::IndexOp>();
  if (!position || position->getParentOp() != op.getOperation() ||
      ShapedType::isDynamic(size) || loopSizes[position.getDim()] != size)
    return std::nullopt;
  return position.getDim();
}

/// The tensors `op`'s body reads from outside it, each with a loop for
/// every dimension all its reads index at that loop's position
/// (readPositions). A tensor used otherwise in the body (its shape read,
/// passed on) stays whole.
SmallVector<std::pair<Value, ShardingRule::Dims>>
capturedReads(linalg::LinalgOp op) {
  llvm::SetVector<Value> values;
  getUsedValuesDefinedAbove(op->getRegion(0), values);
  SmallVector<std::pair<Value, ShardingRule::Dims>> captured;
  for (Value v : values) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape())
      continue;
    ShardingRule::Dims dims(type.getRank());
    bool first = true;
    for (OpOperand &use : v.getUses()) {
      if (!op->isProperAncestor(use.getOwner()))
        continue;
      auto read = dyn_cast<tensor::ExtractOp>(use.getOwner());
      SmallVector<std::optional<unsigned>> loops =
          read ? readPositions(op, read)
               : SmallVector<std::optional<unsigned>>(type.getRank());
      for (auto [d, loop] : llvm::enumerate(loops)) {
        if (first && loop)
          dims[d] = {*loop};
        else if (!loop || dims[d] != ShardingRule::Dim{*loop})
          dims[d].clear();
      }
      first = false;
    }
    captured.push_back({v, std::move(dims)});
  }
  return captured;
}

/// The loops whose `linalg.index` the body uses other than as the position
/// of a captured tensor's dimension that loop shards: it computes with
/// them, so they need their global positions.
llvm::SmallDenseSet<unsigned> loopsReadAsNumbers(linalg::LinalgOp op,
                                                 const ShardingRule &rule) {
  llvm::SmallDenseSet<unsigned> loops;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  // Whether `value` (the index, or what an identity made of it) is only a
  // position of a dimension `dim` shards.
  std::function<bool(Value, unsigned)> onlyPosition = [&](Value value,
                                                          unsigned dim) {
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user->getNumResults() == 1 &&
          identitySource(user, sizes[dim]) == value &&
          onlyPosition(user->getResult(0), dim))
        continue;
      auto read = dyn_cast<tensor::ExtractOp>(user);
      const auto *entry =
          read ? llvm::find_if(
                     rule.captured,
                     [&](const auto &c) { return c.first == read.getTensor(); })
               : rule.captured.end();
      if (!read || use.getOperandNumber() == 0 ||
          entry == rule.captured.end() ||
          entry->second[use.getOperandNumber() - 1] != ShardingRule::Dim{dim})
        return false;
    }
    return true;
  };
  op->walk([&](linalg::IndexOp index) {
    if (index->getParentOp() == op.getOperation() &&
        !onlyPosition(index, index.getDim()))
      loops.insert(index.getDim());
  });
  return loops;
}

/// One factor per dimension, the same for every operand and result of the
/// same rank: an op that keeps dimensions in place.
ShardingRule sameDims(Operation *op, RankedTensorType type,
                      ArrayRef<bool> whole) {
  ShardingRule rule = ShardingRule::withOperands(op->getNumOperands());
  ShardingRule::Dims dims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    dims.push_back({rule.addFactor(type.getDimSize(d),
                                   whole[d] ? Kind::Whole : Kind::Parallel)});
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (auto t = dyn_cast<RankedTensorType>(v.getType());
        t && t.getRank() == type.getRank())
      rule.operands[i] = dims;
  rule.results.push_back(dims);
  return rule;
}

/// Every linalg structured op (linalg.generic and the named ones): the
/// factors are its loops, read off its indexing maps and iterator types.
template <typename OpTy>
struct StructuredRule
    : public ShardingRuleOpInterface::ExternalModel<StructuredRule<OpTy>,
                                                    OpTy> {
  FailureOr<ShardingRule> getShardingRule(Operation *o) const {
    auto op = cast<linalg::LinalgOp>(o);
    if (!op.hasPureTensorSemantics())
      return failure();
    ShardingRule rule = ShardingRule::withOperands(o->getNumOperands());
    rule.combiner = combinerOf(op);
    SmallVector<int64_t> sizes = op.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    rule.captured = capturedReads(op);
    llvm::SmallDenseSet<unsigned> indexed = loopsReadAsNumbers(op, rule);
    for (auto [loop, size] : llvm::enumerate(sizes)) {
      Kind kind = iterators[loop] == utils::IteratorType::parallel
                      ? Kind::Parallel
                      : (rule.combiner ? Kind::Reduction : Kind::Whole);
      // A body that computes with a loop's index needs global positions.
      if (indexed.contains(loop) || ShapedType::isDynamic(size))
        kind = Kind::Whole;
      rule.addFactor(size, kind);
    }
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    for (OpOperand &operand : o->getOpOperands()) {
      unsigned i = operand.getOperandNumber();
      if (isa<RankedTensorType>(operand.get().getType()))
        rule.operands[i] = dimsOf(maps[i]);
      rule.unread[i] =
          op.isDpsInit(&operand) && !op.payloadUsesValueFromOperand(&operand);
    }
    for (OpOperand &init : op.getDpsInitsMutable())
      rule.results.push_back(dimsOf(maps[init.getOperandNumber()]));
    return rule;
  }
};

template <typename... OpTys> void attachStructuredRules(MLIRContext *ctx) {
  (OpTys::template attachInterface<StructuredRule<OpTys>>(*ctx), ...);
}

/// Whether `op`'s reassociation groups are the dimensions of its bigger
/// side, each once and in order.
template <typename OpTy> bool validReassociation(OpTy op) {
  constexpr bool expands = std::is_same_v<OpTy, tensor::ExpandShapeOp>;
  RankedTensorType big = expands ? op.getResultType() : op.getSrcType();
  // To or from a 0-d tensor: no groups, every dimension of size 1.
  if (op.getReassociationIndices().empty())
    return llvm::all_of(big.getShape(), [](int64_t d) { return d == 1; });
  int64_t next = 0;
  for (const ReassociationIndices &group : op.getReassociationIndices())
    for (int64_t d : group)
      if (d != next++)
        return false;
  return next == big.getRank();
}

/// Reshapes: the factors are the dimensions of the bigger-rank side; each
/// dimension of the other side is its group of them.
template <typename OpTy>
struct ReshapeRule
    : public ShardingRuleOpInterface::ExternalModel<ReshapeRule<OpTy>, OpTy> {
  FailureOr<ShardingRule> getShardingRule(Operation *o) const {
    auto op = cast<OpTy>(o);
    constexpr bool expands = std::is_same_v<OpTy, tensor::ExpandShapeOp>;
    RankedTensorType big = expands ? op.getResultType() : op.getSrcType();
    if (!big.hasStaticShape() || !validReassociation(op))
      return failure();
    ShardingRule rule = ShardingRule::withOperands(op->getNumOperands());
    ShardingRule::Dims bigDims, smallDims;
    for (int64_t d = 0; d < big.getRank(); ++d)
      bigDims.push_back({rule.addFactor(big.getDimSize(d), Kind::Parallel)});
    for (const ReassociationIndices &group : op.getReassociationIndices()) {
      // A unit dimension adds nothing to the index of the merged one: left
      // out, the next factor is the major one, which a block of the merged
      // dimension follows ((1, B) merged into B shards as B).
      smallDims.emplace_back();
      for (int64_t d : group)
        if (big.getDimSize(d) != 1)
          smallDims.back().push_back(d);
      if (smallDims.back().empty())
        smallDims.back().push_back(group.front());
    }
    rule.operands[0] = expands ? smallDims : bigDims;
    rule.results.push_back(expands ? bigDims : smallDims);
    rule.passesPartial = true;
    return rule;
  }
  void adaptToLocalTypes(Operation *o) const {
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(o))
      e.setStaticOutputShape(e.getResultType().getShape());
  }
};

/// Which dimensions of `whole` a slice, pad or concat of size `part`
/// changes: those stay whole on every device.
SmallVector<bool> changedDims(ArrayRef<int64_t> whole, ArrayRef<int64_t> part) {
  return llvm::map_to_vector(llvm::zip(whole, part), [](auto sizes) {
    return std::get<0>(sizes) != std::get<1>(sizes);
  });
}

struct ExtractSliceRule
    : public ShardingRuleOpInterface::ExternalModel<ExtractSliceRule,
                                                    tensor::ExtractSliceOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *o) const {
    auto op = cast<tensor::ExtractSliceOp>(o);
    RankedTensorType source = op.getSourceType();
    if (source.getRank() != op.getResultType().getRank() ||
        !source.hasStaticShape())
      return failure();
    // A cut dimension stays whole, except a micro-batch's: each device
    // cuts its micro-batch from its own shard of the batch.
    SmallVector<bool> whole =
        op->hasAttr(EPLDialect::kMicroBatchAttrName)
            ? SmallVector<bool>(source.getRank(), false)
            : changedDims(source.getShape(), op.getStaticSizes());
    ShardingRule rule = sameDims(op, source, whole);
    rule.passesPartial = true;
    return rule;
  }
  void adaptToLocalTypes(Operation *o) const {
    auto op = cast<tensor::ExtractSliceOp>(o);
    op.setStaticSizes(op.getResultType().getShape());
  }
};

struct InsertSliceRule
    : public ShardingRuleOpInterface::ExternalModel<InsertSliceRule,
                                                    tensor::InsertSliceOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *o) const {
    auto op = cast<tensor::InsertSliceOp>(o);
    RankedTensorType dest = op.getDestType();
    if (op.getSourceType().getRank() != dest.getRank() ||
        !dest.hasStaticShape())
      return failure();
    return sameDims(op, dest,
                    changedDims(dest.getShape(), op.getStaticSizes()));
  }
  void adaptToLocalTypes(Operation *o) const {
    auto op = cast<tensor::InsertSliceOp>(o);
    op.setStaticSizes(op.getSourceType().getShape());
  }
};

struct ConcatRule
    : public ShardingRuleOpInterface::ExternalModel<ConcatRule,
                                                    tensor::ConcatOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *o) const {
    auto op = cast<tensor::ConcatOp>(o);
    RankedTensorType type = op.getResultType();
    if (!type.hasStaticShape())
      return failure();
    SmallVector<bool> whole(type.getRank(), false);
    whole[op.getDim()] = true;
    return sameDims(op, type, whole);
  }
};

struct PadRule
    : public ShardingRuleOpInterface::ExternalModel<PadRule, tensor::PadOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *o) const {
    auto op = cast<tensor::PadOp>(o);
    RankedTensorType type = op.getResultType();
    if (!type.hasStaticShape() || !op.getSourceType().hasStaticShape())
      return failure();
    return sameDims(
        op, type, changedDims(type.getShape(), op.getSourceType().getShape()));
  }
};

struct CastRule
    : public ShardingRuleOpInterface::ExternalModel<CastRule, tensor::CastOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *o) const {
    auto op = cast<tensor::CastOp>(o);
    auto type = dyn_cast<RankedTensorType>(op.getType());
    auto source = dyn_cast<RankedTensorType>(op.getSource().getType());
    if (!type || !source)
      return failure();
    // A tensor of dynamic shape (a table cast to `tensor<?x6xf32>`) stays
    // whole: the runtime moves only static shapes, so what it needs
    // gathered is gathered before the cast.
    bool dynamic = !type.hasStaticShape() || !source.hasStaticShape();
    ShardingRule rule =
        sameDims(op, type, SmallVector<bool>(type.getRank(), dynamic));
    rule.passesPartial = true;
    return rule;
  }
};
} // namespace

namespace {
template <typename OpTy>
LogicalResult verifyReassociation(OpTy op, StringRef pass) {
  if (validReassociation(op))
    return success();
  constexpr bool expands = std::is_same_v<OpTy, tensor::ExpandShapeOp>;
  RankedTensorType big = expands ? op.getResultType() : op.getSrcType();
  std::string groups;
  llvm::raw_string_ostream os(groups);
  os << '[';
  llvm::interleaveComma(op.getReassociationIndices(), os,
                        [&](const ReassociationIndices &group) {
                          os << '[';
                          llvm::interleaveComma(group, os);
                          os << ']';
                        });
  os << ']';
  return op.emitOpError() << pass << ": reassociation " << groups
                          << " does not list the dimensions 0.."
                          << big.getRank() - 1 << " of " << big
                          << " once each, in order";
}
} // namespace

/// Whether a value of static type `type` has more bytes than an int64_t
/// counts: the lowering computes sizes in i64, where they would wrap
/// around to small ones (a write past the buffer).
static bool overflowsBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !isa<RankedTensorType, MemRefType>(type) ||
      !shaped.hasStaticShape())
    return false;
  // index and other element types: taken as 8 bytes.
  Type element = shaped.getElementType();
  uint64_t bytes = llvm::divideCeil(
      element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 64, 8);
  bool overflow = false;
  for (int64_t d : shaped.getShape())
    bytes =
        llvm::SaturatingMultiply(bytes, static_cast<uint64_t>(d), &overflow);
  return overflow ||
         bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

LogicalResult mlir::epl::verifyUpstreamGaps(Operation *op, StringRef pass) {
  // Types are checked where they are made: results and block arguments.
  for (Type type : op->getResultTypes())
    if (overflowsBytes(type))
      return op->emitOpError() << pass << ": its result of type " << type
                               << " holds more bytes than a 64-bit size counts";
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (BlockArgument arg : block.getArguments())
        if (overflowsBytes(arg.getType()))
          return op->emitOpError()
                 << pass << ": its "
                 << (isa<FunctionOpInterface>(op) ? "" : "region's ")
                 << "argument " << arg.getArgNumber() << " of type "
                 << arg.getType()
                 << " holds more bytes than a 64-bit size counts";
  if (auto e = dyn_cast<tensor::ExpandShapeOp>(op))
    return verifyReassociation(e, pass);
  if (auto c = dyn_cast<tensor::CollapseShapeOp>(op))
    return verifyReassociation(c, pass);
  return success();
}

SmallVector<std::optional<unsigned>>
mlir::epl::readPositions(linalg::LinalgOp op, tensor::ExtractOp read) {
  SmallVector<int64_t> loops = op.getStaticLoopRanges();
  RankedTensorType type = read.getTensor().getType();
  SmallVector<std::optional<unsigned>> positions;
  for (auto [d, index] : llvm::enumerate(read.getIndices()))
    positions.push_back(positionOf(op, index, loops, type.getDimSize(d)));
  llvm::SmallDenseMap<unsigned, int> uses;
  for (std::optional<unsigned> loop : positions)
    if (loop)
      ++uses[*loop];
  for (std::optional<unsigned> &loop : positions)
    if (loop && uses[*loop] > 1)
      loop.reset();
  return positions;
}

LogicalResult mlir::epl::verifyUpstreamGapsIn(Operation *root, StringRef pass) {
  WalkResult r = root->walk([&](Operation *op) {
    return failed(verifyUpstreamGaps(op, pass)) ? WalkResult::interrupt()
                                                : WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

void mlir::epl::registerShardingRuleModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attachStructuredRules<
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
        >(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::ExpandShapeOp::attachInterface<ReshapeRule<tensor::ExpandShapeOp>>(
        *ctx);
    tensor::CollapseShapeOp::attachInterface<
        ReshapeRule<tensor::CollapseShapeOp>>(*ctx);
    tensor::ExtractSliceOp::attachInterface<ExtractSliceRule>(*ctx);
    tensor::InsertSliceOp::attachInterface<InsertSliceRule>(*ctx);
    tensor::ConcatOp::attachInterface<ConcatRule>(*ctx);
    tensor::CastOp::attachInterface<CastRule>(*ctx);
    tensor::PadOp::attachInterface<PadRule>(*ctx);
  });
}
