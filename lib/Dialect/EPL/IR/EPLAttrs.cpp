//===- EPLAttrs.cpp - EPL attributes --------------------------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLAttrs.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/IR/EPLOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::epl;

#include "epl/Dialect/EPL/IR/EPLEnums.cpp.inc"

#include "epl/Dialect/EPL/IR/EPLAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "epl/Dialect/EPL/IR/EPLAttrs.cpp.inc"

void EPLDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "epl/Dialect/EPL/IR/EPLAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Strategy scopes
//===----------------------------------------------------------------------===//

static LogicalResult verifyScope(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef scope, int64_t devices,
                                 StringAttr name) {
  if (devices < 1)
    return emitError() << scope << "(" << devices
                       << ") is invalid: a scope must use at least one "
                          "device (devices >= 1)";
  if (name && name.getValue().empty())
    return emitError() << scope
                       << " scope name must not be empty; omit 'name' "
                          "for an unnamed scope";
  return success();
}

LogicalResult
ReplicateAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t devices, StringAttr name) {
  return verifyScope(emitError, "replicate", devices, name);
}

LogicalResult SplitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t devices, StringAttr name) {
  return verifyScope(emitError, "split", devices, name);
}

//===----------------------------------------------------------------------===//
// StageAttr, ActionAttr
//===----------------------------------------------------------------------===//

LogicalResult StageAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t index, StringAttr name) {
  if (index < 0)
    return emitError() << "pipeline stage " << index
                       << " is invalid: stages count from 0";
  if (name && name.getValue().empty())
    return emitError() << "stage name must not be empty; omit 'name'";
  return success();
}

LogicalResult ActionAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 Phase phase, int64_t microBatch,
                                 int64_t stage) {
  if (phase == Phase::Optimizer || phase == Phase::Recompute)
    return emitError() << "a pipeline action is a forward, backward_input or "
                          "backward_weight unit, not "
                       << stringifyPhase(phase);
  if (microBatch < 0 || stage < 0)
    return emitError() << "a pipeline action's micro-batch and stage count "
                          "from 0, got micro_batch = "
                       << microBatch << ", stage = " << stage;
  return success();
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

/// Parses `["a", "b"]` into an array of strings.
static ParseResult parseAxisList(AsmParser &parser, ArrayAttr &axes) {
  SmallVector<Attribute> names;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
        std::string name;
        if (parser.parseString(&name))
          return failure();
        names.push_back(parser.getBuilder().getStringAttr(name));
        return success();
      }))
    return failure();
  axes = parser.getBuilder().getArrayAttr(names);
  return success();
}

static void printAxisList(AsmPrinter &printer, ArrayAttr axes) {
  printer << '[';
  llvm::interleaveComma(axes, printer.getStream(), [&](Attribute axis) {
    printer.printString(cast<StringAttr>(axis).getValue());
  });
  printer << ']';
}

Attribute ShardingAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringAttr meshName;
  if (parser.parseLess() || parser.parseSymbolName(meshName) ||
      parser.parseComma())
    return {};

  SmallVector<ArrayAttr> dims;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
        return parseAxisList(parser, dims.emplace_back());
      }))
    return {};

  ArrayAttr partialAxes = parser.getBuilder().getArrayAttr({});
  ReductionKind kind = ReductionKind::Sum;
  if (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    SMLoc kindLoc;
    if (parser.parseKeyword("partial") ||
        (kindLoc = parser.getCurrentLocation(), parser.parseKeyword(&keyword)))
      return {};
    std::optional<ReductionKind> parsed = symbolizeReductionKind(keyword);
    if (!parsed) {
      parser.emitError(kindLoc)
          << "expected a partial reduction kind (sum, max or min), got '"
          << keyword << "'";
      return {};
    }
    kind = *parsed;
    if (parseAxisList(parser, partialAxes))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return ShardingAttr::getChecked(
      [&]() { return parser.emitError(loc); }, parser.getContext(),
      FlatSymbolRefAttr::get(meshName), dims, partialAxes, kind);
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printer.printSymbolName(getMesh().getValue());
  printer << ", [";
  llvm::interleaveComma(getDims(), printer.getStream(),
                        [&](ArrayAttr axes) { printAxisList(printer, axes); });
  printer << ']';
  if (isPartial()) {
    printer << ", partial " << stringifyReductionKind(getPartialKind()) << ' ';
    printAxisList(printer, getPartialAxes());
  }
  printer << '>';
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FlatSymbolRefAttr mesh,
                                   ArrayRef<ArrayAttr> dims,
                                   ArrayAttr partialAxes,
                                   ReductionKind partialKind) {
  if (!mesh)
    return emitError() << "sharding needs a mesh";
  llvm::SmallDenseSet<StringRef> seen;
  auto checkAxes = [&](ArrayAttr axes) -> LogicalResult {
    for (Attribute axis : axes) {
      auto name = dyn_cast<StringAttr>(axis);
      if (!name)
        return emitError() << "sharding axes must be strings, got " << axis;
      if (!seen.insert(name.getValue()).second)
        return emitError() << "sharding uses mesh axis \"" << name.getValue()
                           << "\" more than once";
    }
    return success();
  };
  for (ArrayAttr axes : dims)
    if (!axes || failed(checkAxes(axes)))
      return failure();
  if (!partialAxes || failed(checkAxes(partialAxes)))
    return failure();
  if (partialKind == ReductionKind::Mean)
    return emitError() << "a pending partial value is a sum, max or min; "
                          "express a mean as a sum and a division";
  if (partialAxes.empty() && partialKind != ReductionKind::Sum)
    return emitError() << "sharding has a partial reduction kind but no "
                          "partial axes";
  return success();
}

SmallVector<StringRef> ShardingAttr::getDimAxes(unsigned dim) const {
  return llvm::to_vector(llvm::map_range(getDims()[dim], [](Attribute axis) {
    return cast<StringAttr>(axis).getValue();
  }));
}

SmallVector<StringRef> ShardingAttr::getPartialAxisNames() const {
  return llvm::to_vector(llvm::map_range(getPartialAxes(), [](Attribute a) {
    return cast<StringAttr>(a).getValue();
  }));
}

bool ShardingAttr::isFullyReplicated() const {
  return !isPartial() &&
         llvm::all_of(getDims(), [](ArrayAttr axes) { return axes.empty(); });
}

//===----------------------------------------------------------------------===//
// Mesh helpers
//===----------------------------------------------------------------------===//

static std::string describeAxes(MeshOp mesh) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(mesh.getAxisNames(), os, [&](Attribute axis) {
    os << '"' << cast<StringAttr>(axis).getValue() << '"';
  });
  return s;
}

FailureOr<MeshOp>
mlir::epl::lookupMesh(Operation *from, FlatSymbolRefAttr name,
                      function_ref<InFlightDiagnostic()> emitError) {
  Operation *symbol = SymbolTable::lookupNearestSymbolFrom(from, name);
  if (!symbol)
    return emitError() << "no epl.mesh named " << name;
  auto mesh = dyn_cast<MeshOp>(symbol);
  if (!mesh)
    return emitError() << name << " is a '" << symbol->getName()
                       << "', not an epl.mesh";
  return mesh;
}

FailureOr<int64_t>
mlir::epl::verifyMeshAxes(MeshOp mesh, ArrayAttr axes,
                          function_ref<InFlightDiagnostic()> emitError) {
  int64_t groupSize = 1;
  llvm::SmallDenseSet<StringRef> seen;
  for (Attribute axis : axes) {
    StringRef name = cast<StringAttr>(axis).getValue();
    std::optional<int64_t> size = mesh.getAxisSize(name);
    if (!size)
      return emitError() << "mesh axis \"" << name << "\" is not in mesh @"
                         << mesh.getSymName() << " (its axes are "
                         << describeAxes(mesh) << ")";
    if (!seen.insert(name).second)
      return emitError() << "mesh axis \"" << name
                         << "\" is named more than once";
    groupSize *= *size;
  }
  return groupSize;
}

LogicalResult
mlir::epl::verifyShardingForType(ShardingAttr sharding, Type type, MeshOp mesh,
                                 function_ref<InFlightDiagnostic()> emitError) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return emitError() << "a sharding describes a ranked tensor, not " << type;
  ArrayRef<ArrayAttr> dims = sharding.getDims();
  if (static_cast<int64_t>(dims.size()) != tensorType.getRank())
    return emitError() << "sharding has " << dims.size()
                       << " dimension entries but " << type << " has rank "
                       << tensorType.getRank();
  for (auto [dim, axes] : llvm::enumerate(dims)) {
    FailureOr<int64_t> groupSize = verifyMeshAxes(mesh, axes, emitError);
    if (failed(groupSize))
      return failure();
    int64_t size = tensorType.getDimSize(dim);
    if (!ShapedType::isDynamic(size) && size % *groupSize != 0)
      return emitError() << "sharding splits dimension " << dim << " of size "
                         << size << " over mesh axes " << axes
                         << " of total size " << *groupSize
                         << ", which does not divide it";
  }
  return failure(
      failed(verifyMeshAxes(mesh, sharding.getPartialAxes(), emitError)));
}
