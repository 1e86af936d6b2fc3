//===- RuntimeAPI.cpp - Building calls to the EPL runtime -----------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Conversion/EPLToRuntime/RuntimeAPI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::epl;

RuntimeAPI::RuntimeAPI(ModuleOp module) : module(module) {
  // Meshes are numbered in module order; epl-run names them back the same
  // way in its communication report.
  int64_t next = 0;
  module.walk([&](MeshOp mesh) { meshIds[mesh] = next++; });
}

/// The runtime's suffix for an element type (`f32`).
static std::optional<StringRef> typeSuffix(Type type) {
  if (type.isF32())
    return StringRef("f32");
  if (type.isF64())
    return StringRef("f64");
  if (type.isSignlessInteger(32))
    return StringRef("i32");
  if (type.isSignlessInteger(64))
    return StringRef("i64");
  if (type.isF16())
    return StringRef("f16");
  return std::nullopt;
}

/// Whether the runtime has function `name` (without `_mlir_ciface_`).
static bool isRuntimeFunction(StringRef name) {
  static const llvm::StringSet<> names = {
#define EPL_RT_FUNCTION(NAME) "epl_rt_" #NAME,
#define EPL_RT_TYPED_FUNCTION(NAME, T) "epl_rt_" #NAME "_" #T,
#include "epl/Runtime/RuntimeSymbols.def"
  };
  return names.contains(name);
}

std::optional<std::string> RuntimeAPI::typedFunction(StringRef name,
                                                     Type elementType) {
  std::optional<StringRef> suffix = typeSuffix(elementType);
  if (!suffix)
    return std::nullopt;
  std::string fn = ("epl_rt_" + name + "_" + *suffix).str();
  if (!isRuntimeFunction(fn))
    return std::nullopt;
  return fn;
}

std::string RuntimeAPI::function(StringRef name) {
  return ("epl_rt_" + name).str();
}

func::FuncOp RuntimeAPI::declare(StringRef name, TypeRange inputs,
                                 TypeRange results) {
  if (func::FuncOp fn = declared.lookup(name))
    return fn;
  // A call the runners would not resolve: a bug of the lowering.
  if (!isRuntimeFunction(name))
    llvm::report_fatal_error("runtime function " + name +
                             " is not in epl/Runtime/RuntimeSymbols.def");
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return declared[name] = existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto fn = func::FuncOp::create(builder, module.getLoc(), name,
                                 builder.getFunctionType(inputs, results));
  fn.setPrivate();
  fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
              builder.getUnitAttr());
  return declared[name] = fn;
}

func::CallOp RuntimeAPI::call(OpBuilder &builder, Location loc, StringRef name,
                              ValueRange operands, TypeRange results) {
  func::FuncOp fn = declare(name, operands.getTypes(), results);
  return func::CallOp::create(builder, loc, fn, operands);
}

Value RuntimeAPI::unranked(OpBuilder &builder, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  auto unrankedType =
      UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace());
  return memref::CastOp::create(builder, loc, unrankedType, memref);
}

Value RuntimeAPI::groupDescriptor(OpBuilder &builder, Location loc, MeshOp mesh,
                                  ArrayAttr axes) {
  std::vector<int64_t> desc = {
      meshIds.lookup(mesh), static_cast<int64_t>(mesh.getAxisSizes().size())};
  llvm::append_range(desc, mesh.getAxisSizes());
  desc.push_back(static_cast<int64_t>(axes.size()));
  for (Attribute axis : axes) {
    StringRef name = cast<StringAttr>(axis).getValue();
    for (auto [i, meshAxis] : llvm::enumerate(mesh.getAxisNames()))
      if (cast<StringAttr>(meshAxis).getValue() == name)
        desc.push_back(static_cast<int64_t>(i));
  }

  auto type = MemRefType::get({static_cast<int64_t>(desc.size())},
                              builder.getI64Type());
  memref::GlobalOp &global = groups[desc];
  if (!global) {
    OpBuilder moduleBuilder = OpBuilder::atBlockBegin(module.getBody());
    std::string name = "__epl_group_" + std::to_string(groups.size() - 1);
    auto value = DenseIntElementsAttr::get(
        RankedTensorType::get(type.getShape(), builder.getI64Type()),
        llvm::ArrayRef(desc));
    global = memref::GlobalOp::create(
        moduleBuilder, loc, name, moduleBuilder.getStringAttr("private"), type,
        value, /*constant=*/true, /*alignment=*/nullptr);
    // Read by the runtime, never by a kernel: it stays in host memory when
    // the step's buffers live on a GPU (epl-linalg-to-gpu).
    global->setAttr(EPLDialect::kHostGlobalAttrName,
                    moduleBuilder.getUnitAttr());
  }
  Value ref =
      memref::GetGlobalOp::create(builder, loc, type, global.getSymName());
  return unranked(builder, loc, ref);
}
