//===- EPLDialect.cpp - EPL dialect ---------------------------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/IR/EPLAttrs.h"
#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/Dialect/EPL/IR/EPLOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::epl;

#include "epl/Dialect/EPL/IR/EPLDialect.cpp.inc"

std::string mlir::epl::getArgName(FunctionOpInterface fn, unsigned index) {
  if (auto name =
          fn.getArgAttrOfType<StringAttr>(index, EPLDialect::kNameAttrName))
    return name.str();
  return "arg" + std::to_string(index);
}

DictionaryAttr mlir::epl::getKindAndName(MLIRContext *ctx, StringRef attrName,
                                         StringRef kind, StringRef name) {
  Builder b(ctx);
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr(attrName, b.getStringAttr(kind))};
  if (!name.empty())
    attrs.push_back(
        b.getNamedAttr(EPLDialect::kNameAttrName, b.getStringAttr(name)));
  return DictionaryAttr::get(ctx, attrs);
}

std::optional<unsigned> mlir::epl::findArgOfKind(FunctionOpInterface fn,
                                                 StringRef kind,
                                                 StringRef name) {
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    if (getArgKind(fn, i) == kind && getArgName(fn, i) == name)
      return i;
  return std::nullopt;
}

SmallVector<std::pair<unsigned, unsigned>>
mlir::epl::getArgumentUpdates(FunctionOpInterface fn) {
  SmallVector<std::pair<unsigned, unsigned>> updates;
  DenseMap<unsigned, int> feeds;
  for (unsigned r = 0; r < fn.getNumResults(); ++r) {
    auto kind =
        fn.getResultAttrOfType<StringAttr>(r, EPLDialect::kResultAttrName);
    auto name =
        fn.getResultAttrOfType<StringAttr>(r, EPLDialect::kNameAttrName);
    if (!kind || !name ||
        !llvm::is_contained({"param", "opt_state", "state"}, kind.getValue()))
      continue;
    for (unsigned a = 0; a < fn.getNumArguments(); ++a) {
      if (getArgKind(fn, a) != kind.getValue() ||
          fn.getArgAttrOfType<StringAttr>(a, EPLDialect::kNameAttrName) != name)
        continue;
      ++feeds[a];
      if (fn.getArgumentTypes()[a] == fn.getResultTypes()[r])
        updates.push_back({r, a});
    }
  }
  llvm::erase_if(updates, [&](auto pair) { return feeds[pair.second] > 1; });
  return updates;
}

FunctionAttrEdit::FunctionAttrEdit(FunctionOpInterface fn) : fn(fn) {
  SmallVector<DictionaryAttr> dicts;
  fn.getAllArgAttrs(dicts);
  for (DictionaryAttr d : dicts)
    args.emplace_back(d);
  dicts.clear();
  fn.getAllResultAttrs(dicts);
  for (DictionaryAttr d : dicts)
    results.emplace_back(d);
}

void FunctionAttrEdit::setArg(unsigned index, StringRef name, Attribute value) {
  args[index].set(name, value);
}

void FunctionAttrEdit::setResult(unsigned index, StringRef name,
                                 Attribute value) {
  results[index].set(name, value);
}

void FunctionAttrEdit::apply() {
  MLIRContext *ctx = fn->getContext();
  auto dicts = [&](ArrayRef<NamedAttrList> lists) {
    return llvm::map_to_vector(
        lists, [&](const NamedAttrList &l) { return l.getDictionary(ctx); });
  };
  fn.setAllArgAttrs(dicts(args));
  fn.setAllResultAttrs(dicts(results));
}

namespace {
/// EPL's ops in a function body (collectives, scatter-adds, sharding
/// constraints) mean the same wherever they are inlined: gradient
/// accumulation inlines the micro-batch's gradient function, which holds
/// an embedding's scatter-add or a user's constraint, before propagation.
struct EPLInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void EPLDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "epl/Dialect/EPL/IR/EPLOps.cpp.inc"
      >();
  registerAttributes();
  addInterfaces<EPLInlinerInterface>();
}

namespace {
constexpr llvm::StringLiteral kArgKinds[] = {"param", "input", "label", "state",
                                             "opt_state"};
constexpr llvm::StringLiteral kResultKinds[] = {"loss", "param", "state",
                                                "opt_state", "grad"};
constexpr llvm::StringLiteral kInitKinds[] = {"normal", "zeros", "ones"};

/// The argument of kind `argKind` (an `argNoun`) that result `index`, a
/// `resultKind`, names with `epl.name`; an error saying "<role> '<name>'"
/// when it names none.
FailureOr<unsigned> namedArgument(FunctionOpInterface fn, unsigned index,
                                  const std::string &what, StringRef resultKind,
                                  StringRef argKind, StringRef argNoun,
                                  StringRef role) {
  auto name =
      fn.getResultAttrOfType<StringAttr>(index, EPLDialect::kNameAttrName);
  if (!name)
    return fn->emitOpError()
           << what << ": a \"" << resultKind << "\" result must name its "
           << argNoun << " with '" << EPLDialect::kNameAttrName << "'";
  std::optional<unsigned> arg = findArgOfKind(fn, argKind, name.getValue());
  if (!arg)
    return fn->emitOpError()
           << what << ": " << role << " '" << name.getValue() << "', but no "
           << argNoun << " argument has that name";
  return *arg;
}

/// A gradient result names the parameter it is the gradient of, and has its
/// type: `epl-apply-optimizer` updates that parameter with it.
LogicalResult verifyGradResult(Operation *op, unsigned index,
                               const std::string &what) {
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn)
    return success();
  FailureOr<unsigned> param = namedArgument(fn, index, what, "grad", "param",
                                            "parameter", "a gradient of");
  if (failed(param))
    return failure();
  Type paramType = fn.getArgumentTypes()[*param];
  if (index >= fn.getNumResults())
    return success();
  // Per-device shards laid out differently (ZeRO's gradients are finer than
  // their parameters) differ in shape, not in rank or element type.
  Attribute resultShard = fn.getResultAttr(index, EPLDialect::kShardAttrName);
  Attribute paramShard = fn.getArgAttr(*param, EPLDialect::kShardAttrName);
  auto resultType = dyn_cast<RankedTensorType>(fn.getResultTypes()[index]);
  auto paramTensor = dyn_cast<RankedTensorType>(paramType);
  if (resultShard && resultShard != paramShard && resultType && paramTensor &&
      resultType.getRank() == paramTensor.getRank() &&
      resultType.getElementType() == paramTensor.getElementType())
    return success();
  if (fn.getResultTypes()[index] != paramType)
    return op->emitOpError()
           << what << ": the gradient of '" << getArgName(fn, *param) << "' is "
           << fn.getResultTypes()[index] << " but the parameter is "
           << paramType;
  return success();
}

/// A state result (the next value of model state, such as batch norm's
/// running statistics) names the state argument it replaces in the next
/// step, and has its type.
LogicalResult verifyStateResult(Operation *op, unsigned index,
                                const std::string &what) {
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn)
    return success();
  FailureOr<unsigned> arg = namedArgument(fn, index, what, "state", "state",
                                          "state", "the next value of");
  if (failed(arg))
    return failure();
  // Two next values of one state: which would the next step read?
  for (unsigned other = 0; other < index; ++other) {
    auto kind =
        fn.getResultAttrOfType<StringAttr>(other, EPLDialect::kResultAttrName);
    auto name =
        fn.getResultAttrOfType<StringAttr>(other, EPLDialect::kNameAttrName);
    if (kind && kind.getValue() == "state" && name &&
        name.getValue() == getArgName(fn, *arg))
      return op->emitOpError()
             << what << ": state '" << name.getValue()
             << "' already has its next value in result " << other;
  }
  if (index < fn.getNumResults() &&
      fn.getResultTypes()[index] != fn.getArgumentTypes()[*arg])
    return op->emitOpError()
           << what << ": state '" << getArgName(fn, *arg) << "' is "
           << fn.getArgumentTypes()[*arg] << " but its next value is "
           << fn.getResultTypes()[index];
  return success();
}

/// The type of argument or result `index` of `op` when it is a function.
Type getFunctionValueType(Operation *op, unsigned index, bool isResult) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return {};
  ArrayRef<Type> types =
      isResult ? func.getResultTypes() : func.getArgumentTypes();
  return index < types.size() ? types[index] : Type();
}

/// A shard's sharding describes the value it is part of: check what the
/// local type can tell (rank, mesh axes), not divisibility.
LogicalResult verifyShard(Operation *op, NamedAttribute attr, Type type,
                          StringRef what) {
  auto emitError = [&]() { return op->emitOpError() << what << ": "; };
  auto sharding = dyn_cast<ShardingAttr>(attr.getValue());
  if (!sharding)
    return emitError() << "'" << attr.getName().getValue()
                       << "' expects an #epl.sharding, got " << attr.getValue();
  // Lowering turns the shard into a buffer, then into LLVM values: only a
  // shaped type still has a rank to check.
  auto shaped = dyn_cast_or_null<ShapedType>(type);
  if (shaped && shaped.hasRank() &&
      static_cast<int64_t>(sharding.getDims().size()) != shaped.getRank())
    return emitError() << "shard layout has " << sharding.getDims().size()
                       << " dimension entries but " << type << " has rank "
                       << shaped.getRank();
  FailureOr<MeshOp> mesh = lookupMesh(op, sharding.getMesh(), emitError);
  if (failed(mesh))
    return failure();
  for (ArrayAttr axes : sharding.getDims())
    if (failed(verifyMeshAxes(*mesh, axes, emitError)))
      return failure();
  return success();
}

LogicalResult verifyValueSharding(Operation *op, NamedAttribute attr, Type type,
                                  StringRef what) {
  auto emitError = [&]() { return op->emitOpError() << what << ": "; };
  auto sharding = dyn_cast<ShardingAttr>(attr.getValue());
  if (!sharding)
    return emitError() << "'" << attr.getName().getValue()
                       << "' expects an #epl.sharding, got " << attr.getValue();
  if (!type)
    return emitError() << "'" << attr.getName().getValue()
                       << "' only applies to function arguments and results";
  FailureOr<MeshOp> mesh = lookupMesh(op, sharding.getMesh(), emitError);
  if (failed(mesh))
    return failure();
  return verifyShardingForType(sharding, type, *mesh, emitError);
}
/// `epl.shardings` as the passes read it: each tensor result's sharding
/// has its rank and names axes of an existing mesh; other results have
/// none.
LogicalResult verifyResultShardings(Operation *op, ArrayAttr all) {
  for (auto [i, entry] : llvm::enumerate(all)) {
    auto emitError = [&, i = i]() {
      return op->emitOpError() << "'epl.shardings' entry " << i << ": ";
    };
    auto sharding = dyn_cast<ShardingAttr>(entry);
    if (!sharding)
      continue;
    auto type = dyn_cast<RankedTensorType>(op->getResult(i).getType());
    if (!type)
      return emitError() << "a sharding describes a ranked tensor, but result "
                         << i << " is " << op->getResult(i).getType();
    if (static_cast<int64_t>(sharding.getDims().size()) != type.getRank())
      return emitError() << "sharding has " << sharding.getDims().size()
                         << " dimension entries but result " << i << " ("
                         << type << ") has rank " << type.getRank();
    FailureOr<MeshOp> mesh = lookupMesh(op, sharding.getMesh(), emitError);
    if (failed(mesh))
      return failure();
    for (ArrayAttr axes : sharding.getDims())
      if (failed(verifyMeshAxes(*mesh, axes, emitError)))
        return failure();
    if (failed(verifyMeshAxes(*mesh, sharding.getPartialAxes(), emitError)))
      return failure();
  }
  return success();
}

/// `epl.loop_axes` as the passes read it: one entry per factor of the op's
/// sharding rule, axes of the mesh its shardings are on (else the module's
/// one mesh), each axis on one loop at most.
LogicalResult verifyLoopAxes(Operation *op, ArrayAttr all) {
  auto emitError = [&]() { return op->emitOpError() << "'epl.loop_axes': "; };
  if (failed(verifyUpstreamGaps(op, "'epl.loop_axes'")))
    return failure();
  auto iface = dyn_cast<ShardingRuleOpInterface>(op);
  FailureOr<ShardingRule> rule =
      iface ? iface.getShardingRule() : FailureOr<ShardingRule>(failure());
  if (failed(rule))
    return emitError() << "the op has no sharding rule, so no loops to shard";
  if (all.size() != rule->factorSizes.size())
    return emitError() << "has " << all.size() << " entries but the op has "
                       << rule->factorSizes.size() << " loops";
  FlatSymbolRefAttr meshName;
  if (auto shardings = op->getAttrOfType<ArrayAttr>("epl.shardings"))
    for (Attribute entry : shardings)
      if (auto sharding = dyn_cast<ShardingAttr>(entry)) {
        meshName = sharding.getMesh();
        break;
      }
  MeshOp mesh;
  if (meshName) {
    FailureOr<MeshOp> found = lookupMesh(op, meshName, emitError);
    if (failed(found))
      return failure();
    mesh = *found;
  } else if (auto module = op->getParentOfType<ModuleOp>()) {
    auto meshes = module.getOps<MeshOp>();
    if (!meshes.empty() && std::next(meshes.begin()) == meshes.end())
      mesh = *meshes.begin();
  }
  if (!mesh)
    return emitError() << "no 'epl.shardings' names the mesh of its axes "
                          "and the module does not have exactly one epl.mesh";
  llvm::SmallDenseMap<StringRef, unsigned> loopOf;
  for (auto [loop, entry] : llvm::enumerate(all)) {
    auto axes = cast<ArrayAttr>(entry);
    if (failed(verifyMeshAxes(mesh, axes, emitError)))
      return failure();
    if (!axes.empty() &&
        rule->factorKinds[loop] == ShardingRule::FactorKind::Whole)
      return emitError() << "loop " << loop
                         << " must stay whole on every device (a cut or "
                            "joined dimension, or a loop whose index the "
                            "body reads), but is sharded over "
                         << axes;
    for (Attribute axis : axes) {
      auto [it, inserted] =
          loopOf.try_emplace(cast<StringAttr>(axis).getValue(), loop);
      if (!inserted)
        return emitError() << "mesh axis " << axis << " shards both loop "
                           << it->second << " and loop " << loop;
    }
  }
  return success();
}
} // namespace

LogicalResult EPLDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kConfigAttrName) {
    if (!isa<ModuleOp>(op))
      return op->emitError()
             << "'" << name << "' belongs on the top-level module, not on '"
             << op->getName() << "'";
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!dict)
      return op->emitError() << "'" << name
                             << "' expects a dictionary of EPL config keys, "
                                "got "
                             << attr.getValue();
    return verifyConfig(dict, [&]() { return op->emitError(); });
  }
  if (name == kScopeAttrName) {
    if (!isa<ScopeAttrInterface>(attr.getValue()))
      return op->emitError()
             << "'" << name
             << "' expects a strategy scope (#epl.replicate<...> or "
                "#epl.split<...>), got "
             << attr.getValue();
    return success();
  }
  if (name == kPhaseAttrName) {
    if (!isa<PhaseAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' expects an #epl.phase, got "
                             << attr.getValue();
    return success();
  }
  if (name == "epl.shardings") {
    auto all = dyn_cast<ArrayAttr>(attr.getValue());
    if (!all || all.size() != op->getNumResults() ||
        !llvm::all_of(
            all, [](Attribute a) { return isa<ShardingAttr, UnitAttr>(a); }))
      return op->emitError() << "'" << name
                             << "' expects one #epl.sharding (or unit) per "
                                "result, got "
                             << attr.getValue();
    return verifyResultShardings(op, all);
  }
  if (name == "epl.loop_axes") {
    auto all = dyn_cast<ArrayAttr>(attr.getValue());
    if (!all || !llvm::all_of(all, [](Attribute a) {
          auto axes = dyn_cast<ArrayAttr>(a);
          return axes && llvm::all_of(axes, [](Attribute n) {
                   return isa<StringAttr>(n);
                 });
        }))
      return op->emitError()
             << "'" << name << "' expects a list of mesh axes per loop, got "
             << attr.getValue();
    return verifyLoopAxes(op, all);
  }
  if (name == kStageAttrName) {
    if (!isa<StageAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' expects an #epl.stage, got "
                             << attr.getValue();
    return success();
  }
  if (name == kActionAttrName) {
    if (!isa<ActionAttr>(attr.getValue()) || !isa<func::CallOp>(op))
      return op->emitError()
             << "'" << name << "' expects an #epl.action on a func.call, got "
             << attr.getValue() << " on '" << op->getName() << "'";
    return success();
  }
  if (name == kIdAttrName || name == kOriginAttrName) {
    if (!isa<IntegerAttr>(attr.getValue()))
      return op->emitError()
             << "'" << name << "' expects an integer op id, got "
             << attr.getValue();
    return success();
  }
  if (name == kMicroBatchAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) ||
        op->getName().getStringRef() != "tensor.extract_slice")
      return op->emitError()
             << "'" << name << "' is a unit attribute of tensor.extract_slice";
    return success();
  }
  if (name == kCheckpointAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name
                             << "' is a unit attribute (on ops whose results "
                                "gradient checkpointing keeps)";
    return success();
  }
  if (name == kSourceAttrName) {
    auto text = dyn_cast<StringAttr>(attr.getValue());
    if (!text || text.getValue().empty())
      return op->emitError() << "'" << name
                             << "' expects a non-empty string (what of the "
                                "user's model the op was made of), got "
                             << attr.getValue();
    return success();
  }
  if (name == kHostGlobalAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) ||
        op->getName().getStringRef() != "memref.global")
      return op->emitError()
             << "'" << name << "' is a unit attribute of memref.global";
    return success();
  }
  if (name == kMemoryEstimateAttrName) {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!isa<FunctionOpInterface>(op) || !dict ||
        !llvm::all_of(dict, [](NamedAttribute entry) {
          return isa<IntegerAttr>(entry.getValue());
        }))
      return op->emitError() << "'" << name
                             << "' expects a dictionary of byte counts on a "
                                "function, got "
                             << attr.getValue();
    return success();
  }
  if (name == kWrapsAttrName) {
    if (!isa<FunctionOpInterface>(op) ||
        !isa<FlatSymbolRefAttr>(attr.getValue()))
      return op->emitError() << "'" << name
                             << "' expects the symbol of the function a "
                                "function wraps, on a function, got "
                             << attr.getValue();
    return success();
  }
  return op->emitError() << "unknown EPL attribute '" << name
                         << "' on an operation; expected '" << kConfigAttrName
                         << "' (on the module), '" << kScopeAttrName << "', '"
                         << kPhaseAttrName << "', '" << kIdAttrName << "', '"
                         << kOriginAttrName << "', '" << kMicroBatchAttrName
                         << "', '" << kStageAttrName << "', '"
                         << kActionAttrName << "', '" << kCheckpointAttrName
                         << "', '" << kSourceAttrName
                         << "', 'epl.shardings', 'epl.loop_axes', '"
                         << kHostGlobalAttrName << "' (on a memref.global), '"
                         << kMemoryEstimateAttrName << "' or '"
                         << kWrapsAttrName << "' (on a function)";
}

/// The attributes arguments and results share: `epl.name`, `epl.sharding`
/// and `epl.shard`; std::nullopt for any other.
static std::optional<LogicalResult>
verifyValueAttr(Operation *op, NamedAttribute attr, unsigned index,
                bool isResult, StringRef what) {
  StringRef name = attr.getName().getValue();
  if (name == EPLDialect::kNameAttrName) {
    auto str = dyn_cast<StringAttr>(attr.getValue());
    if (!str || str.getValue().empty())
      return op->emitOpError()
             << what << ": '" << name << "' must be a non-empty string, got "
             << attr.getValue();
    return success();
  }
  if (name == EPLDialect::kShardingAttrName)
    return verifyValueSharding(op, attr,
                               getFunctionValueType(op, index, isResult), what);
  if (name == EPLDialect::kShardAttrName)
    return verifyShard(op, attr, getFunctionValueType(op, index, isResult),
                       what);
  return std::nullopt;
}

LogicalResult EPLDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  std::string what = ("argument " + Twine(argIndex)).str();
  if (name == kArgAttrName) {
    auto kind = dyn_cast<StringAttr>(attr.getValue());
    if (!kind || !llvm::is_contained(kArgKinds, kind.getValue()))
      return op->emitOpError()
             << what << ": '" << name
             << "' must be \"param\", \"input\", \"label\", \"state\" "
                "or \"opt_state\", got "
             << attr.getValue();
    // Training differentiates and updates a parameter: its elements are
    // floats (the lowered forms, buffers and pointers, are not checked).
    auto shaped = dyn_cast_or_null<ShapedType>(
        getFunctionValueType(op, argIndex, /*isResult=*/false));
    if (kind.getValue() == "param" && shaped &&
        !isa<FloatType>(shaped.getElementType()))
      return op->emitOpError()
             << what << ": a \"param\" is trained, so its elements must be "
             << "floats, not " << shaped.getElementType() << " ("
             << cast<Type>(shaped) << ")";
    return success();
  }
  if (name == kInitAttrName) {
    auto init = dyn_cast<StringAttr>(attr.getValue());
    if (!init || !llvm::is_contained(kInitKinds, init.getValue()))
      return op->emitOpError()
             << what << ": '" << name
             << "' must be \"normal\", \"zeros\" or \"ones\", got "
             << attr.getValue();
    return success();
  }
  if (name == kReadOnlyAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError()
             << what << ": '" << name << "' is a unit attribute";
    return success();
  }
  if (name == kInPlaceOfAttrName) {
    // Another argument of the function, of the same type: the buffer the
    // caller passes for both.
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    Type self = getFunctionValueType(op, argIndex, /*isResult=*/false);
    Type other;
    if (index && index.getValue().isNonNegative() &&
        index.getValue().getZExtValue() != argIndex)
      other = getFunctionValueType(op, index.getValue().getZExtValue(),
                                   /*isResult=*/false);
    if (!other)
      return op->emitOpError()
             << what << ": '" << name
             << "' must be the index of another argument, got "
             << attr.getValue();
    if (other != self)
      return op->emitOpError() << what << ": '" << name << "' names argument "
                               << index.getValue().getZExtValue() << " of type "
                               << other << ", but this argument is " << self;
    return success();
  }
  // Arguments are read, saved and updated by name: two of one name would
  // share a checkpoint entry and one's update would overwrite the other's.
  // Checked once per function, at its first named argument: each
  // argument's check scanning the others would be quadratic.
  auto fn = dyn_cast<FunctionOpInterface>(op);
  auto firstNamed = [&] {
    unsigned first = 0;
    while (!fn.getArgAttr(first, kNameAttrName))
      ++first;
    return first;
  };
  if (fn && name == kNameAttrName && argIndex == firstNamed()) {
    llvm::StringMap<unsigned> seen;
    for (unsigned i = argIndex, e = fn.getNumArguments(); i < e; ++i) {
      auto named = fn.getArgAttrOfType<StringAttr>(i, kNameAttrName);
      if (!named)
        continue;
      auto [it, fresh] = seen.try_emplace(named.getValue(), i);
      if (!fresh)
        return op->emitOpError()
               << "argument " << i << ": '" << name << "' " << named
               << " names argument " << it->second
               << " too; arguments are read, saved and updated by name, so "
                  "each needs its own";
    }
  }
  if (std::optional<LogicalResult> shared =
          verifyValueAttr(op, attr, argIndex, /*isResult=*/false, what))
    return *shared;
  return op->emitOpError() << what << ": unknown EPL argument attribute '"
                           << name << "'; expected '" << kArgAttrName << "', '"
                           << kNameAttrName << "', '" << kInitAttrName << "', '"
                           << kShardingAttrName << "', '" << kShardAttrName
                           << "', '" << kReadOnlyAttrName << "' or '"
                           << kInPlaceOfAttrName << "'";
}

LogicalResult EPLDialect::verifyRegionResultAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned resultIndex,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  std::string what = ("result " + Twine(resultIndex)).str();
  if (std::optional<LogicalResult> shared =
          verifyValueAttr(op, attr, resultIndex, /*isResult=*/true, what))
    return *shared;
  if (name == kGradShardAttrName) {
    auto sharding = dyn_cast<ShardingAttr>(attr.getValue());
    Type type = getFunctionValueType(op, resultIndex, /*isResult=*/true);
    auto tensor = dyn_cast_or_null<RankedTensorType>(type);
    if (!sharding || !tensor ||
        static_cast<int64_t>(sharding.getDims().size()) != tensor.getRank())
      return op->emitOpError()
             << what << ": '" << name
             << "' expects an #epl.sharding of the result's rank, got "
             << attr.getValue();
    return success();
  }
  if (name == kResultAttrName) {
    auto kind = dyn_cast<StringAttr>(attr.getValue());
    if (!kind || !llvm::is_contained(kResultKinds, kind.getValue()))
      return op->emitOpError() << what << ": '" << name
                               << "' must be \"loss\", \"param\", "
                                  "\"state\", \"opt_state\" or \"grad\", got "
                               << attr.getValue();
    if (kind.getValue() == "grad")
      return verifyGradResult(op, resultIndex, what);
    if (kind.getValue() == "state")
      return verifyStateResult(op, resultIndex, what);
    return success();
  }
  return op->emitOpError() << what << ": unknown EPL result attribute '" << name
                           << "'; expected '" << kResultAttrName << "', '"
                           << kNameAttrName << "', '" << kShardingAttrName
                           << "', '" << kShardAttrName << "' or '"
                           << kGradShardAttrName << "'";
}

StringRef mlir::epl::getArgKind(FunctionOpInterface fn, unsigned index) {
  auto kind = fn.getArgAttrOfType<StringAttr>(index, EPLDialect::kArgAttrName);
  return kind ? kind.getValue() : StringRef();
}

bool mlir::epl::hasTaggedArguments(FunctionOpInterface fn) {
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    if (!getArgKind(fn, i).empty())
      return true;
  return false;
}
