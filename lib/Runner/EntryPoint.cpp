//===- EntryPoint.cpp - The function a runner executes --------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/EntryPoint.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/IR/EPLOps.h"
#include "epl/Runner/Arguments.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <functional>

using namespace mlir;
using namespace mlir::epl;

static std::string listFunctions(ModuleOp module) {
  std::string names;
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal())
      names += (names.empty() ? "@" : ", @") + fn.getSymName().str();
  return names.empty() ? "none" : names;
}

/// "@f (at model.mlir:2:3) is only declared: it has no body to run".
static std::string onlyDeclared(func::FuncOp fn) {
  std::string where;
  if (auto file = dyn_cast<FileLineColLoc>(fn.getLoc()))
    where = " (at " + file.getFilename().str() + ":" +
            std::to_string(file.getLine()) + ":" +
            std::to_string(file.getColumn()) + ")";
  return "@" + fn.getSymName().str() + where +
         " is only declared: it has no body to run";
}

/// One function of its own.
static StepFunctions single(func::FuncOp fn) {
  return {fn.getSymName().str(), {fn}, {}};
}

static StepFunctions pipelined(PipelineOp pipeline) {
  return {pipeline.getSymName().str(), pipeline.getStageFunctions(), pipeline};
}

FailureOr<StepFunctions>
mlir::epl::findEntryPoint(ModuleOp module, StringRef name, std::string &error) {
  if (!name.empty()) {
    if (auto pipeline = module.lookupSymbol<PipelineOp>(name))
      return pipelined(pipeline);
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (fn && fn.isExternal()) {
      error = onlyDeclared(fn);
      return failure();
    }
    if (!fn) {
      error = "no function @" + name.str() +
              " in the module (functions: " + listFunctions(module) + ")";
      return failure();
    }
    return single(fn);
  }
  // A pipeline's stage functions tag their arguments too: it comes first.
  auto pipelines = llvm::to_vector(module.getOps<PipelineOp>());
  if (pipelines.size() == 1)
    return pipelined(pipelines.front());
  if (pipelines.size() > 1) {
    error = "several pipelines (";
    for (auto [i, pipeline] : llvm::enumerate(pipelines))
      error += (i ? ", @" : "@") + pipeline.getSymName().str();
    error += "); choose one with --entry";
    return failure();
  }
  SmallVector<func::FuncOp> tagged;
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal() && hasTaggedArguments(fn))
      tagged.push_back(fn);
  if (tagged.size() == 1)
    return single(tagged.front());
  if (tagged.size() > 1) {
    error = "several functions tag their arguments with epl.arg (";
    for (auto [i, fn] : llvm::enumerate(tagged))
      error += (i ? ", @" : "@") + fn.getSymName().str();
    error += "); choose one with --entry";
    return failure();
  }
  // A declaration would be the entry but for its body.
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn.isExternal() && hasTaggedArguments(fn)) {
      error = onlyDeclared(fn);
      return failure();
    }
  if (auto main = module.lookupSymbol<func::FuncOp>("main")) {
    if (main.isExternal()) {
      error = onlyDeclared(main);
      return failure();
    }
    return single(main);
  }
  error = "no entry point: no function tags its arguments with epl.arg and "
          "there is no @main; choose one with --entry (functions: " +
          listFunctions(module) + ")";
  return failure();
}

/// The shard a per-device argument or result holds, and its global type.
static std::pair<Shard, RankedTensorType>
shardOf(DictionaryAttr attrs, RankedTensorType local, Operation *from) {
  auto sharding = attrs ? attrs.getAs<ShardingAttr>(EPLDialect::kShardAttrName)
                        : ShardingAttr();
  Shard shard;
  if (!sharding)
    return {shard, local};
  auto mesh =
      SymbolTable::lookupNearestSymbolFrom<MeshOp>(from, sharding.getMesh());
  SmallVector<int64_t> shape(local.getShape());
  for (unsigned d = 0; d < sharding.getDims().size(); ++d) {
    std::vector<int64_t> axes;
    for (StringRef name : sharding.getDimAxes(d))
      for (auto [i, axis] : llvm::enumerate(mesh.getAxisNames()))
        if (cast<StringAttr>(axis).getValue() == name) {
          axes.push_back(i);
          shape[d] *= mesh.getAxisSizes()[i];
        }
    shard.dimAxes.push_back(std::move(axes));
  }
  return {shard, RankedTensorType::get(shape, local.getElementType())};
}

static std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream(s) << type;
  return s;
}

/// Fills what arguments and results share from the per-device `type` and
/// the attributes of the value (`what`, e.g. "argument 2", names it in
/// errors); fails when the type is not a statically shaped tensor.
static LogicalResult describeValue(EntryValue &value, func::FuncOp entry,
                                   Type type, DictionaryAttr attrs,
                                   const std::string &what,
                                   const std::string &defaultName,
                                   std::string &error) {
  auto local = dyn_cast<RankedTensorType>(type);
  if (!local || !local.hasStaticShape()) {
    error = "@" + entry.getSymName().str() + " " + what + " has type " +
            typeString(type) +
            "; epl-run passes statically shaped tensors only";
    return failure();
  }
  auto [shard, global] = shardOf(attrs, local, entry);
  value.shard = std::move(shard);
  value.dtype = dtypeOf(local.getElementType());
  value.shape.assign(global.getShape().begin(), global.getShape().end());
  value.localShape.assign(local.getShape().begin(), local.getShape().end());
  value.typeName = typeString(global);
  auto name =
      attrs ? attrs.getAs<StringAttr>(EPLDialect::kNameAttrName) : StringAttr();
  value.name = name ? name.str() : defaultName;
  return success();
}

FailureOr<EntryPoint> mlir::epl::describeEntryPoint(func::FuncOp entry,
                                                    std::string &error) {
  EntryPoint ep;
  ep.name = entry.getSymName().str();
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    EntryArg arg;
    if (failed(describeValue(
            arg, entry, entry.getArgumentTypes()[i], entry.getArgAttrDict(i),
            "argument " + std::to_string(i), "arg" + std::to_string(i), error)))
      return failure();
    arg.kind = llvm::StringSwitch<ArgKind>(getArgKind(entry, i))
                   .Case("param", ArgKind::Param)
                   .Case("input", ArgKind::Input)
                   .Case("label", ArgKind::Label)
                   .Case("opt_state", ArgKind::OptState)
                   .Case("state", ArgKind::State)
                   .Default(ArgKind::Other);
    if (auto init =
            entry.getArgAttrOfType<StringAttr>(i, EPLDialect::kInitAttrName))
      arg.init = init.str();
    ep.args.push_back(std::move(arg));
  }
  for (unsigned i = 0; i < entry.getNumResults(); ++i) {
    EntryResult result;
    if (failed(describeValue(result, entry, entry.getResultTypes()[i],
                             entry.getResultAttrDict(i),
                             "result " + std::to_string(i),
                             "result" + std::to_string(i), error)))
      return failure();
    if (auto kind = entry.getResultAttrOfType<StringAttr>(
            i, EPLDialect::kResultAttrName))
      result.kind = llvm::StringSwitch<ResultKind>(kind.getValue())
                        .Case("loss", ResultKind::Loss)
                        .Case("param", ResultKind::Param)
                        .Case("opt_state", ResultKind::OptState)
                        .Case("grad", ResultKind::Grad)
                        .Case("state", ResultKind::State)
                        .Default(ResultKind::Other);
    if (result.kind == ResultKind::Param && result.dtype) {
      int64_t elements = 1;
      for (int64_t n : result.localShape)
        elements *= n;
      if (auto grad = entry.getResultAttrOfType<ShardingAttr>(
              i, EPLDialect::kGradShardAttrName)) {
        // The global shape cut by the gradient's layout.
        auto global = RankedTensorType::get(
            result.shape,
            cast<RankedTensorType>(entry.getResultTypes()[i]).getElementType());
        auto mesh =
            SymbolTable::lookupNearestSymbolFrom<MeshOp>(entry, grad.getMesh());
        elements = global.getNumElements();
        for (unsigned d = 0; d < grad.getDims().size(); ++d)
          for (StringRef name : grad.getDimAxes(d))
            for (auto [a, axis] : llvm::enumerate(mesh.getAxisNames()))
              if (cast<StringAttr>(axis).getValue() == name)
                elements /= mesh.getAxisSizes()[a];
      }
      result.gradBytes =
          elements * static_cast<int64_t>(dtypeSize(*result.dtype));
    }
    ep.results.push_back(std::move(result));
  }
  return ep;
}

FailureOr<Program> mlir::epl::describeProgram(ModuleOp module,
                                              const StepFunctions &step,
                                              std::string &error) {
  Program program;
  program.name = step.name;
  program.meshes = collectMeshes(module);
  for (func::FuncOp fn : step.functions) {
    FailureOr<EntryPoint> entry = describeEntryPoint(fn, error);
    if (failed(entry))
      return failure();
    // The run loop allocates arguments and results by their element types.
    for (const EntryArg &a : entry->args)
      if (!a.dtype) {
        error = "argument '" + a.name + "' of @" + entry->name + " has type " +
                a.typeName + "; runners pass f32, f64, i32 and i64 tensors";
        return failure();
      }
    for (const EntryResult &r : entry->results)
      if (!r.dtype) {
        error = "@" + entry->name + " returns " + r.typeName +
                ", which runners do not pass (f32, f64, i32 and i64 "
                "tensors)";
        return failure();
      }
    program.stages.push_back({std::move(*entry), {}, nullptr});
  }
  if (PipelineOp pipeline = step.pipeline) {
    auto mesh = llvm::find_if(program.meshes, [&](const MeshInfo &m) {
      return m.name == pipeline.getMesh();
    });
    program.mesh = mesh - program.meshes.begin();
    program.stageAxis =
        llvm::find(mesh->axes, pipeline.getAxis().str()) - mesh->axes.begin();
    // Each stage runs on its own devices: the run needs every one.
    mesh->communicates = true;
    // (A receive is direct where its send is.)
    program.directMessages = module
                                 .walk([](SendOp send) {
                                   return send.getDirect()
                                              ? WalkResult::interrupt()
                                              : WalkResult::advance();
                                 })
                                 .wasInterrupted();
  }
  if (failed(collectArguments(program, error)))
    return failure();
  return program;
}

bool mlir::epl::isModel(func::FuncOp fn) {
  // A model's results are its loss and the next values of its state
  // (tagged "state"). Its loss is untagged, or tagged "loss" when every
  // other result is state: a function with a tagged loss and anything else
  // (scores, gradients, parameters) is run as it is.
  auto kindOf = [&](unsigned i) {
    auto kind =
        fn.getResultAttrOfType<StringAttr>(i, EPLDialect::kResultAttrName);
    return kind ? kind.getValue() : StringRef();
  };
  bool taggedLoss = fn.getNumResults() > 0 && kindOf(0) == "loss";
  for (unsigned i = taggedLoss ? 1 : 0; i < fn.getNumResults(); ++i)
    if (kindOf(i) != "state" && (taggedLoss || !kindOf(i).empty()))
      return false;
  return hasTaggedArguments(fn);
}

std::string mlir::epl::entryWrapperName(size_t stage) {
  return "__epl_entry_" + std::to_string(stage);
}

/// Whether what `call` returns never shares a buffer with what it is
/// passed: every value the callee returns is made in a buffer of its own
/// (a pipeline stage's pieces compute their results).
static bool returnsFreshValues(func::CallOp call) {
  if (!call)
    return false;
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock())
    return false;
  // Made in a buffer of the callee's own: an empty tensor or constant, a
  // linalg op or a collective writing into one, or a view of one.
  std::function<bool(Value)> isFresh = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != &callee.front())
      return false;
    if (isa<tensor::EmptyOp, CollectiveOpInterface>(def) ||
        def->hasTrait<OpTrait::ConstantLike>())
      return true;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def))
      return llvm::all_of(linalgOp.getDpsInits(), isFresh);
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
            tensor::ExtractSliceOp, tensor::CastOp>(def))
      return isFresh(def->getOperand(0));
    return false;
  };
  return llvm::all_of(callee.front().getTerminator()->getOperands(), isFresh);
}

/// Whether the buffer of `arg` may also hold `result`, which `update`
/// makes: `update` is element-wise in both (it reads `arg` and writes its
/// result through identity maps, over parallel loops) and every other op
/// that reads the buffer comes before it, so that writing the result over
/// the argument changes nothing anyone reads. What reads the buffer: the
/// users of `arg`, and of every value that may share its buffer (anything
/// made from it other than by a linalg op or a collective reading it as
/// an input, which make fresh buffers).
static bool mayUpdateInPlace(Block &body, Value arg, Value result) {
  auto update = result.getDefiningOp<linalg::GenericOp>();
  if (!update || update->getBlock() != &body ||
      update.getNumReductionLoops() != 0 ||
      !update
           .getMatchingIndexingMap(update.getDpsInitOperand(
               cast<OpResult>(result).getResultNumber()))
           .isIdentity())
    return false;
  SmallVector<Value> worklist = {arg};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        return false;
      if (user == update) {
        // Read as an input, element by element, never written into.
        if (v != arg || update.isDpsInit(&use) ||
            !update.getMatchingIndexingMap(&use).isIdentity())
          return false;
        continue;
      }
      if (top == update || !top->isBeforeInBlock(update))
        return false;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
      bool fresh = (linalgOp && !linalgOp.isDpsInit(&use)) ||
                   isa<CollectiveOpInterface>(user) ||
                   returnsFreshValues(dyn_cast<func::CallOp>(user));
      if (!fresh)
        for (Value r : user->getResults())
          worklist.push_back(r);
      // What a region yields, its op returns (a loop's results).
      if (user->hasTrait<OpTrait::IsTerminator>() && user->getParentOp())
        for (Value r : user->getParentOp()->getResults())
          worklist.push_back(r);
    }
  }
  return true;
}

std::vector<std::pair<size_t, size_t>>
mlir::epl::wrapEntryPoint(ModuleOp module, func::FuncOp entry, size_t stage) {
  // The parsed model need not have loaded the dialect the wrapper uses.
  module.getContext()->getOrLoadDialect<bufferization::BufferizationDialect>();
  Location loc = entry.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto toMemRef = [](Type type) {
    auto tensor = cast<RankedTensorType>(type);
    return MemRefType::get(tensor.getShape(), tensor.getElementType());
  };
  SmallVector<Type> inputs;
  for (Type t : entry.getArgumentTypes())
    inputs.push_back(toMemRef(t));
  for (Type t : entry.getResultTypes())
    inputs.push_back(toMemRef(t));
  auto wrapper = func::FuncOp::create(b, loc, entryWrapperName(stage),
                                      b.getFunctionType(inputs, {}));
  wrapper->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                   b.getUnitAttr());
  // Its messages are the entry's (epl-lower-to-runtime checks a stage
  // program's grouped and direct messages).
  wrapper->setAttr(EPLDialect::kWrapsAttrName,
                   FlatSymbolRefAttr::get(entry.getSymNameAttr()));
  Block *body = wrapper.addEntryBlock();
  b.setInsertionPointToStart(body);

  SmallVector<Value> args;
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    // Said for the cuda target, which copies what a step writes back to the
    // host (epl-copy-arguments-to-device).
    wrapper.setArgAttr(i, EPLDialect::kReadOnlyAttrName, b.getUnitAttr());
    // Read-only: the program copies before writing; only a result the
    // runner updates in place is written over its argument (below).
    args.push_back(bufferization::ToTensorOp::create(
        b, loc, entry.getArgumentTypes()[i], body->getArgument(i),
        /*restrict=*/true, /*writable=*/false));
  }
  // The entry's body moves into the wrapper, so that what it returns is
  // written straight into the runner's result buffers (the lowering's
  // empty-tensor elimination makes each result's producer write there)
  // instead of into buffers of its own copied out at the end: a training
  // step then holds no second copy of the new parameters and optimizer
  // state. The entry is left private and unused (one copy is compiled).
  IRMapping mapping;
  mapping.map(entry.getArguments(), args);
  for (Operation &op : entry.front().without_terminator())
    b.clone(op, mapping);
  auto ret = cast<func::ReturnOp>(entry.front().getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    auto op = bufferization::MaterializeInDestinationOp::create(
        b, loc, mapping.lookupOrDefault(value),
        body->getArgument(entry.getNumArguments() + i));
    op.setRestrict(true);
    op.setWritable(true);
  }
  // (After the copies into the result buffers: they read too.)
  std::vector<std::pair<size_t, size_t>> inPlace;
  for (auto [r, a] : getArgumentUpdates(entry))
    if (mayUpdateInPlace(*body, args[a],
                         mapping.lookupOrDefault(ret.getOperand(r))))
      inPlace.push_back({r, a});
  // Said in the IR too: on the CPU the step then writes such a result over
  // its argument itself (epl-tie-in-place-arguments), so that the update's
  // kernel reads and writes one buffer instead of two the vectorizer must
  // prove apart (they are the same, so its overlap check fails, and the
  // update ran scalar).
  for (auto [r, a] : inPlace)
    wrapper.setArgAttr(entry.getNumArguments() + r,
                       EPLDialect::kInPlaceOfAttrName, b.getI64IntegerAttr(a));
  func::ReturnOp::create(b, loc);
  entry.setPrivate();
  return inPlace;
}

std::vector<MeshInfo> mlir::epl::collectMeshes(ModuleOp module) {
  std::vector<MeshInfo> meshes;
  module.walk([&](MeshOp mesh) {
    MeshInfo info;
    info.name = mesh.getSymName().str();
    for (Attribute axis : mesh.getAxisNames())
      info.axes.push_back(cast<StringAttr>(axis).str());
    info.sizes.assign(mesh.getAxisSizes().begin(), mesh.getAxisSizes().end());
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(mesh, module);
    info.communicates =
        uses && llvm::any_of(*uses, [](const SymbolTable::SymbolUse &use) {
          return isa<CollectiveOpInterface>(use.getUser());
        });
    meshes.push_back(std::move(info));
  });
  return meshes;
}

std::optional<DType> mlir::epl::dtypeOf(Type elementType) {
  if (elementType.isF32())
    return DType::F32;
  if (elementType.isF64())
    return DType::F64;
  if (elementType.isSignlessInteger(32))
    return DType::I32;
  if (elementType.isSignlessInteger(64))
    return DType::I64;
  return std::nullopt;
}
