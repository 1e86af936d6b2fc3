//===- EPLOps.cpp - EPL operations ----------------------------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::epl;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// `["data" = 2, "tensor" = 4]`
static ParseResult parseMeshAxes(OpAsmParser &parser, ArrayAttr &names,
                                 DenseI64ArrayAttr &sizes) {
  SmallVector<Attribute> nameAttrs;
  SmallVector<int64_t> sizeValues;
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, [&]() {
        std::string name;
        int64_t size = 0;
        if (parser.parseString(&name) || parser.parseEqual() ||
            parser.parseInteger(size))
          return failure();
        nameAttrs.push_back(parser.getBuilder().getStringAttr(name));
        sizeValues.push_back(size);
        return success();
      }))
    return failure();
  names = parser.getBuilder().getArrayAttr(nameAttrs);
  sizes = parser.getBuilder().getDenseI64ArrayAttr(sizeValues);
  return success();
}

static void printMeshAxes(OpAsmPrinter &printer, Operation *, ArrayAttr names,
                          DenseI64ArrayAttr sizes) {
  printer << '[';
  llvm::interleaveComma(llvm::zip(names, sizes.asArrayRef()),
                        printer.getStream(), [&](auto axis) {
                          printer.printString(
                              cast<StringAttr>(std::get<0>(axis)).getValue());
                          printer << " = " << std::get<1>(axis);
                        });
  printer << ']';
}

/// A bare reduction keyword: `sum`, `max`, `min` or `mean`.
static ParseResult parseReductionKind(OpAsmParser &parser,
                                      ReductionKindAttr &kind) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<ReductionKind> parsed = symbolizeReductionKind(keyword);
  if (!parsed)
    return parser.emitError(loc)
           << "expected a reduction kind (sum, max, min or mean), got '"
           << keyword << "'";
  kind = ReductionKindAttr::get(parser.getContext(), *parsed);
  return success();
}

static void printReductionKind(OpAsmPrinter &printer, Operation *,
                               ReductionKindAttr kind) {
  printer << stringifyReductionKind(kind.getValue());
}

#define GET_OP_CLASSES
#include "epl/Dialect/EPL/IR/EPLOps.cpp.inc"

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

LogicalResult MeshOp::verify() {
  ArrayRef<int64_t> sizes = getAxisSizes();
  if (getAxisNames().size() != sizes.size())
    return emitOpError() << "has " << getAxisNames().size()
                         << " axis names but " << sizes.size() << " sizes";
  if (sizes.empty())
    return emitOpError() << "needs at least one axis";
  llvm::SmallDenseSet<StringRef> seen;
  for (auto [nameAttr, size] : llvm::zip(getAxisNames(), sizes)) {
    StringRef name = cast<StringAttr>(nameAttr).getValue();
    if (name.empty())
      return emitOpError() << "axis names must not be empty";
    if (!seen.insert(name).second)
      return emitOpError() << "has two axes named \"" << name << "\"";
    if (size < 1)
      return emitOpError() << "axis \"" << name
                           << "\" must have at least one device, got " << size;
  }
  return success();
}

int64_t MeshOp::getNumDevices() {
  int64_t n = 1;
  for (int64_t size : getAxisSizes())
    n *= size;
  return n;
}

std::optional<int64_t> MeshOp::getAxisSize(StringRef name) {
  for (auto [axis, size] : llvm::zip(getAxisNames(), getAxisSizes()))
    if (cast<StringAttr>(axis).getValue() == name)
      return size;
  return std::nullopt;
}

int64_t MeshOp::getGroupSize(ArrayAttr axes) {
  int64_t n = 1;
  for (Attribute axis : axes) {
    std::optional<int64_t> size =
        getAxisSize(cast<StringAttr>(axis).getValue());
    assert(size && "group spans an axis the mesh does not have");
    n *= *size;
  }
  return n;
}

//===----------------------------------------------------------------------===//
// ShardingConstraintOp
//===----------------------------------------------------------------------===//

LogicalResult
ShardingConstraintOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto emitError = [&]() { return emitOpError(); };
  FailureOr<MeshOp> mesh =
      lookupMesh(*this, getSharding().getMesh(), emitError);
  if (failed(mesh))
    return failure();
  return verifyShardingForType(getSharding(), getType(), *mesh, emitError);
}

//===----------------------------------------------------------------------===//
// Message groups
//===----------------------------------------------------------------------===//

/// Whether `op` is a send or receive with unit attribute `flag` (the two
/// name theirs alike).
static bool messageHas(Operation *op, StringRef flag) {
  if (!isa<SendOp, RecvOp>(op))
    return false;
  std::optional<Attribute> value = op->getInherentAttr(flag);
  return value && *value;
}

bool mlir::epl::isGroupedMessage(Operation *op) {
  return messageHas(op, "grouped");
}

bool mlir::epl::isDirectMessage(Operation *op) {
  return messageHas(op, "direct");
}

bool mlir::epl::isInertBetweenMessages(Operation *op) {
  return op->hasTrait<OpTrait::ConstantLike>() || isa<tensor::EmptyOp>(op);
}

bool mlir::epl::isFreeOfEffectsButAssertions(Operation *op) {
  // isMemoryEffectFree's walk, with assertions let through.
  if (isa<cf::AssertOp>(op))
    return true;
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
    if (!effects.hasNoEffect())
      return false;
    if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return true;
  } else if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()) {
    return false;
  }
  for (Region &region : op->getRegions())
    for (Operation &nested : region.getOps())
      if (!isFreeOfEffectsButAssertions(&nested))
        return false;
  return true;
}

//===----------------------------------------------------------------------===//
// PipelineOp
//===----------------------------------------------------------------------===//

SmallVector<func::FuncOp> PipelineOp::getStageFunctions() {
  SmallVector<func::FuncOp> functions;
  auto module = (*this)->getParentOfType<ModuleOp>();
  for (Attribute stage : getStages())
    functions.push_back(module.lookupSymbol<func::FuncOp>(
        cast<SymbolRefAttr>(stage).getRootReference()));
  return functions;
}

LogicalResult PipelineOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto emitError = [&]() { return emitOpError(); };
  FailureOr<MeshOp> mesh = lookupMesh(*this, getMeshAttr(), emitError);
  if (failed(mesh))
    return failure();
  std::optional<int64_t> size = mesh->getAxisSize(getAxis());
  if (!size)
    return emitOpError() << "mesh @" << mesh->getSymName() << " has no axis \""
                         << getAxis() << "\"";
  if (static_cast<int64_t>(getStages().size()) != *size)
    return emitOpError() << "lists " << getStages().size()
                         << " stage functions for the " << *size
                         << " devices of axis \"" << getAxis() << "\"";
  if (getMicroBatches() < 1)
    return emitOpError() << "needs at least one micro-batch, got "
                         << getMicroBatches();
  auto module = (*this)->getParentOfType<ModuleOp>();
  for (Attribute stage : getStages()) {
    auto ref = cast<SymbolRefAttr>(stage);
    if (!symbolTable.lookupSymbolIn<func::FuncOp>(module, ref))
      return emitOpError() << "stage " << ref
                           << " is not a function of the module";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

namespace {
/// Resolves the mesh of a collective and the size of its device group, with
/// errors for a missing mesh, unknown or repeated axes and an empty group.
FailureOr<int64_t> verifyGroup(Operation *op, FlatSymbolRefAttr meshName,
                               ArrayAttr axes) {
  auto emitError = [&]() { return op->emitOpError(); };
  if (axes.empty())
    return emitError() << "needs at least one mesh axis to communicate over";
  FailureOr<MeshOp> mesh = lookupMesh(op, meshName, emitError);
  if (failed(mesh))
    return failure();
  return verifyMeshAxes(*mesh, axes, emitError);
}

/// Checks that `dim` indexes `type` and that the two types agree in rank and
/// element type; the per-op checks compare sizes.
LogicalResult
verifyReshapingCollective(Operation *op, RankedTensorType input,
                          RankedTensorType result,
                          ArrayRef<std::pair<StringRef, int64_t>> dims) {
  if (input.getElementType() != result.getElementType())
    return op->emitOpError()
           << "changes the element type from " << input.getElementType()
           << " to " << result.getElementType();
  if (input.getRank() != result.getRank())
    return op->emitOpError() << "changes the rank from " << input.getRank()
                             << " to " << result.getRank();
  for (auto [name, dim] : dims)
    if (dim < 0 || dim >= input.getRank())
      return op->emitOpError()
             << name << " " << dim << " is out of range for rank "
             << input.getRank();
  return success();
}

/// The size `dim` of `result` must be `expected` (unknown when dynamic).
LogicalResult checkDim(Operation *op, RankedTensorType input,
                       RankedTensorType result, int64_t dim, int64_t expected,
                       StringRef why) {
  int64_t actual = result.getDimSize(dim);
  if (ShapedType::isDynamic(actual) || ShapedType::isDynamic(expected) ||
      actual == expected)
    return success();
  return op->emitOpError() << why << " " << input << " gives dimension " << dim
                           << " of size " << expected
                           << ", but the result type " << result << " has "
                           << actual;
}

LogicalResult checkOtherDimsUnchanged(Operation *op, RankedTensorType input,
                                      RankedTensorType result,
                                      ArrayRef<int64_t> changed) {
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (llvm::is_contained(changed, d))
      continue;
    if (failed(checkDim(op, input, result, d, input.getDimSize(d),
                        "only the gathered/scattered dimensions change:")))
      return failure();
  }
  return success();
}

/// `size / groupSize`, with an error naming the dimension when it does not
/// divide evenly.
FailureOr<int64_t> divideDim(Operation *op, RankedTensorType type, int64_t dim,
                             int64_t groupSize, ArrayAttr axes) {
  int64_t size = type.getDimSize(dim);
  if (ShapedType::isDynamic(size))
    return size;
  if (size % groupSize != 0)
    return op->emitOpError()
           << "cannot split dimension " << dim << " of size " << size
           << " over mesh axes " << axes << " (" << groupSize << " devices)";
  return size / groupSize;
}

int64_t multiplyDim(int64_t size, int64_t groupSize) {
  return ShapedType::isDynamic(size) ? size : size * groupSize;
}
} // namespace

#include "epl/Dialect/EPL/IR/EPLOpInterfaces.cpp.inc"

MeshOp CollectiveOpInterface::getMeshOp() {
  return SymbolTable::lookupNearestSymbolFrom<MeshOp>(*this, getMeshAttr());
}

int64_t CollectiveOpInterface::getGroupSize() {
  return getMeshOp().getGroupSize(getAxes());
}

LogicalResult AllReduceOp::verifySymbolUses(SymbolTableCollection &) {
  return failure(failed(verifyGroup(*this, getMeshAttr(), getAxes())));
}

LogicalResult AllGatherOp::verify() {
  return verifyReshapingCollective(*this, getInput().getType(),
                                   getResult().getType(),
                                   {{"dim", static_cast<int64_t>(getDim())}});
}

LogicalResult AllGatherOp::verifySymbolUses(SymbolTableCollection &) {
  FailureOr<int64_t> groupSize = verifyGroup(*this, getMeshAttr(), getAxes());
  if (failed(groupSize))
    return failure();
  auto input = getInput().getType(), result = getResult().getType();
  std::string why;
  llvm::raw_string_ostream(why)
      << "gathering over " << getAxes() << " (" << *groupSize
      << " devices) along dimension " << getDim() << " of";
  if (failed(checkDim(*this, input, result, getDim(),
                      multiplyDim(input.getDimSize(getDim()), *groupSize),
                      why)))
    return failure();
  return checkOtherDimsUnchanged(*this, input, result,
                                 {static_cast<int64_t>(getDim())});
}

LogicalResult ReduceScatterOp::verify() {
  return verifyReshapingCollective(*this, getInput().getType(),
                                   getResult().getType(),
                                   {{"dim", static_cast<int64_t>(getDim())}});
}

LogicalResult ReduceScatterOp::verifySymbolUses(SymbolTableCollection &) {
  FailureOr<int64_t> groupSize = verifyGroup(*this, getMeshAttr(), getAxes());
  if (failed(groupSize))
    return failure();
  auto input = getInput().getType(), result = getResult().getType();
  FailureOr<int64_t> expected =
      divideDim(*this, input, getDim(), *groupSize, getAxes());
  if (failed(expected))
    return failure();
  std::string why;
  llvm::raw_string_ostream(why)
      << "scattering over " << getAxes() << " (" << *groupSize
      << " devices) along dimension " << getDim() << " of";
  if (failed(checkDim(*this, input, result, getDim(), *expected, why)))
    return failure();
  return checkOtherDimsUnchanged(*this, input, result,
                                 {static_cast<int64_t>(getDim())});
}

LogicalResult AllToAllOp::verify() {
  return verifyReshapingCollective(*this, getInput().getType(),
                                   getResult().getType(),
                                   {{"split dimension", getSplitDim()},
                                    {"concat dimension", getConcatDim()}});
}

LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &) {
  FailureOr<int64_t> groupSize = verifyGroup(*this, getMeshAttr(), getAxes());
  if (failed(groupSize))
    return failure();
  auto input = getInput().getType(), result = getResult().getType();
  int64_t split = getSplitDim(), concat = getConcatDim();
  FailureOr<int64_t> splitSize =
      divideDim(*this, input, split, *groupSize, getAxes());
  if (failed(splitSize))
    return failure();
  if (split == concat)
    return checkOtherDimsUnchanged(*this, input, result, {});
  std::string why;
  llvm::raw_string_ostream(why)
      << "all_to_all over " << getAxes() << " (" << *groupSize
      << " devices) from dimension " << split << " to " << concat << " of";
  if (failed(checkDim(*this, input, result, split, *splitSize, why)) ||
      failed(checkDim(*this, input, result, concat,
                      multiplyDim(input.getDimSize(concat), *groupSize), why)))
    return failure();
  return checkOtherDimsUnchanged(*this, input, result, {split, concat});
}

/// Checks that a device index within the group is in range.
static LogicalResult checkGroupIndex(Operation *op, FlatSymbolRefAttr mesh,
                                     ArrayAttr axes, int64_t index,
                                     StringRef what) {
  FailureOr<int64_t> groupSize = verifyGroup(op, mesh, axes);
  if (failed(groupSize))
    return failure();
  if (index < 0 || index >= *groupSize)
    return op->emitOpError()
           << what << " " << index << " is not a device of the group over "
           << axes << ", which has " << *groupSize << " devices (0 to "
           << *groupSize - 1 << ")";
  return success();
}

LogicalResult BroadcastOp::verifySymbolUses(SymbolTableCollection &) {
  return checkGroupIndex(*this, getMeshAttr(), getAxes(), getRoot(), "root");
}

LogicalResult SendOp::verifySymbolUses(SymbolTableCollection &) {
  return checkGroupIndex(*this, getMeshAttr(), getAxes(), getPeer(), "peer");
}

LogicalResult RecvOp::verifySymbolUses(SymbolTableCollection &) {
  return checkGroupIndex(*this, getMeshAttr(), getAxes(), getPeer(), "peer");
}

/// A message goes in a group or over a channel, not both.
static LogicalResult verifyMessageKind(Operation *op, bool grouped,
                                       bool direct) {
  if (grouped && direct)
    return op->emitOpError()
           << "is both grouped and direct; a message goes in a group or over "
              "its peer's channel";
  return success();
}

LogicalResult SendOp::verify() {
  return verifyMessageKind(*this, getGrouped(), getDirect());
}

LogicalResult RecvOp::verify() {
  return verifyMessageKind(*this, getGrouped(), getDirect());
}

LogicalResult GroupIndexOp::verifySymbolUses(SymbolTableCollection &) {
  return failure(failed(verifyGroup(*this, getMeshAttr(), getAxes())));
}

//===----------------------------------------------------------------------===//
// ScatterAddOp
//===----------------------------------------------------------------------===//

/// For each dimension of `op`'s destination, the dimension of its updates
/// whose position indexes it (a batching dimension), or -1 where an index
/// tensor does.
static SmallVector<int64_t> updateDimsOf(ScatterAddOp op) {
  SmallVector<int64_t> of(op.getDest().getType().getRank(), -1);
  for (auto [d, u] :
       llvm::zip(op.getDestBatchingDims(), op.getUpdatesBatchingDims()))
    of[d] = u;
  return of;
}

LogicalResult ScatterAddOp::verify() {
  RankedTensorType updates = getUpdates().getType();
  RankedTensorType dest = getDest().getType();
  ArrayRef<int64_t> destBatching = getDestBatchingDims();
  ArrayRef<int64_t> updatesBatching = getUpdatesBatchingDims();
  if (destBatching.size() != updatesBatching.size())
    return emitOpError() << "has " << destBatching.size()
                         << " destination batching dimensions but "
                         << updatesBatching.size()
                         << " updates batching dimensions; they pair up";
  llvm::SmallDenseSet<int64_t> seenDest, seenUpdates;
  for (auto [d, u] : llvm::zip(destBatching, updatesBatching)) {
    if (d < 0 || d >= dest.getRank() || !seenDest.insert(d).second)
      return emitOpError() << "destination batching dimension " << d
                           << " is not a distinct dimension of " << dest;
    if (u < 0 || u >= updates.getRank() || !seenUpdates.insert(u).second)
      return emitOpError() << "updates batching dimension " << u
                           << " is not a distinct dimension of " << updates;
    // Positions along a batching dimension are not checked at run time:
    // the sizes must be known equal.
    if (dest.isDynamicDim(d) || updates.isDynamicDim(u))
      return emitOpError() << "batching dimension " << d << " of " << dest
                           << " and " << u << " of " << updates
                           << " must have static sizes";
    if (dest.getDimSize(d) != updates.getDimSize(u))
      return emitOpError() << "batching dimension " << d << " of " << dest
                           << " and " << u << " of " << updates
                           << " differ in size";
  }
  int64_t indexed = dest.getRank() - static_cast<int64_t>(destBatching.size());
  if (static_cast<int64_t>(getIndices().size()) != indexed) {
    InFlightDiagnostic diag = emitOpError()
                              << "has " << getIndices().size()
                              << " index tensors for a destination of rank "
                              << dest.getRank();
    if (destBatching.empty())
      return diag << "; it needs one per dimension";
    return diag << " with " << destBatching.size()
                << " batching dimension(s); it needs one per other dimension";
  }
  for (auto [i, index] : llvm::enumerate(getIndices()))
    if (cast<RankedTensorType>(index.getType()).getShape() !=
        updates.getShape())
      return emitOpError() << "index tensor #" << i << " is " << index.getType()
                           << "; it must have the shape of the updates, "
                           << updates;
  if (updates.getElementType() != dest.getElementType())
    return emitOpError() << "adds " << updates.getElementType()
                         << " updates into a " << dest.getElementType()
                         << " destination";
  return success();
}

FailureOr<SmallVector<Value>> ScatterAddOp::decomposeOperation(OpBuilder &b) {
  Location loc = getLoc();
  Value updates = getUpdates();
  int64_t rank = getUpdates().getType().getRank();
  SmallVector<int64_t> updateDims = updateDimsOf(*this);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> lbs(rank, zero), steps(rank, one), ubs;
  for (int64_t d = 0; d < rank; ++d)
    ubs.push_back(tensor::DimOp::create(b, loc, updates, d));
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{getDest()},
      [&](OpBuilder &nb, Location l, ValueRange ivs,
          ValueRange iters) -> scf::ValueVector {
        Value acc = iters[0];
        SmallVector<Value> at;
        Value inBounds = arith::ConstantIntOp::create(nb, l, 1, 1);
        auto index = getIndices().begin();
        for (auto [d, u] : llvm::enumerate(updateDims)) {
          // A batching dimension is read at the update's own position,
          // within the bounds of both.
          if (u >= 0) {
            at.push_back(ivs[u]);
            continue;
          }
          Value i = arith::IndexCastOp::create(
              nb, l, nb.getIndexType(),
              tensor::ExtractOp::create(nb, l, *index++, ivs));
          Value size = tensor::DimOp::create(nb, l, acc, d);
          // Unsigned: a negative index is out of bounds too.
          inBounds = arith::AndIOp::create(
              nb, l, inBounds,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, i, size));
          at.push_back(i);
        }
        auto added = scf::IfOp::create(
            nb, l, inBounds,
            [&](OpBuilder &tb, Location tl) {
              Value update = tensor::ExtractOp::create(tb, tl, updates, ivs);
              Value old = tensor::ExtractOp::create(tb, tl, acc, at);
              Value sum = arith::AddFOp::create(tb, tl, old, update);
              scf::YieldOp::create(
                  tb, tl,
                  ValueRange{tensor::InsertOp::create(tb, tl, sum, acc, at)
                                 .getResult()});
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(eb, el, acc);
            });
        return {added.getResult(0)};
      });
  return SmallVector<Value>{nest.results.front()};
}

FailureOr<ShardingRule> ScatterAddOp::getShardingRule() {
  RankedTensorType updates = getUpdates().getType();
  RankedTensorType dest = getDest().getType();
  using Kind = ShardingRule::FactorKind;
  // A dimension of dynamic size cannot be divided: it stays whole (a
  // table whose rows are `?`).
  auto kindOf = [](int64_t size, Kind kind) {
    return ShapedType::isDynamic(size) ? Kind::Whole : kind;
  };
  ShardingRule rule = ShardingRule::withOperands(getNumOperands());
  // Positions are summed over, except along batching dimensions, where
  // each lands in its own row; where the others land is data, so those
  // dimensions of the destination stay whole.
  rule.combiner = ReductionKind::Sum;
  SmallVector<int64_t> updateDims = updateDimsOf(*this);
  ShardingRule::Dims positions(updates.getRank()), into;
  for (auto [d, size] : llvm::enumerate(dest.getShape())) {
    unsigned f = rule.addFactor(
        size, kindOf(size, updateDims[d] >= 0 ? Kind::Parallel : Kind::Whole));
    into.push_back({f});
    if (updateDims[d] >= 0)
      positions[updateDims[d]] = {f};
  }
  for (auto [u, size] : llvm::enumerate(updates.getShape()))
    if (positions[u].empty())
      positions[u] = {rule.addFactor(size, kindOf(size, Kind::Reduction))};
  rule.operands[0] = into;
  for (unsigned i = 1; i < getNumOperands(); ++i)
    rule.operands[i] = positions;
  rule.results.push_back(into);
  return rule;
}
