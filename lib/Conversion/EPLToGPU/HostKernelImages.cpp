//===- HostKernelImages.cpp - Kernels for the fake CUDA driver ------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "KernelsOnHost.h"

#include "epl/Conversion/Passes.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLHOSTKERNELIMAGESPASS
#include "epl/Conversion/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;

namespace {
/// The global `@<slot>`: a pointer the fake driver sets when it loads the
/// module (the artifact cannot link against the driver, which the runtime
/// opens with dlopen).
void declareSlot(ModuleOp module, OpBuilder &moduleBuilder, Location loc,
                 StringRef slot) {
  if (module.lookupSymbol(slot))
    return;
  MLIRContext *context = module.getContext();
  LLVM::GlobalOp::create(moduleBuilder, loc,
                         LLVM::LLVMPointerType::get(context),
                         /*isConstant=*/false, LLVM::Linkage::Weak, slot,
                         LLVM::ZeroAttr::get(context));
}

/// Hands the fake driver each buffer a kernel is launched with:
/// `check(kernel, argument, aligned pointer, bytes it spans from there)`,
/// through `@__epl_host_check_buffer_<module>`. A GPU faults
/// (CUDA_ERROR_ILLEGAL_ADDRESS, the context lost for good) on a host
/// pointer or another GPU's memory, which the host loops would read
/// happily: a lowering that hands a kernel such a buffer fails here.
void checkBuffer(OpBuilder &b, Location loc, StringRef moduleName,
                 Value kernelName, unsigned argument, MemRefType type,
                 ArrayRef<Value> fields, unsigned indexBits) {
  MLIRContext *context = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto i32 = IntegerType::get(context, 32);
  auto i64 = IntegerType::get(context, 64);
  auto i64Constant = [&](int64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, v).getResult();
  };
  // Fields: allocated and aligned pointers, offset, sizes, strides. The
  // buffer spans offset + sum((size - 1) * stride) + 1 elements from the
  // aligned pointer, none where a size is 0.
  int64_t rank = type.getRank();
  Value extent = LLVM::AddOp::create(b, loc, fields[2], i64Constant(1));
  Value empty = LLVM::ConstantOp::create(b, loc, b.getI1Type(), 0);
  for (int64_t d = 0; d < rank; ++d) {
    Value size = fields[3 + d], stride = fields[3 + rank + d];
    extent = LLVM::AddOp::create(
        b, loc, extent,
        LLVM::MulOp::create(
            b, loc, LLVM::SubOp::create(b, loc, size, i64Constant(1)), stride));
    empty = LLVM::OrOp::create(b, loc, empty,
                               LLVM::ICmpOp::create(b, loc,
                                                    LLVM::ICmpPredicate::sle,
                                                    size, i64Constant(0)));
  }
  // i1 buffers hold a byte an element.
  Type element = type.getElementType();
  int64_t elementBytes = llvm::divideCeil(
      element.isIndex() ? indexBits : element.getIntOrFloatBitWidth(), 8);
  Value bytes = LLVM::SelectOp::create(
      b, loc, empty, i64Constant(0),
      LLVM::MulOp::create(b, loc, extent, i64Constant(elementBytes)));
  std::string slot = ("__epl_host_check_buffer_" + moduleName).str();
  Value function = LLVM::LoadOp::create(
      b, loc, ptr, LLVM::AddressOfOp::create(b, loc, ptr, slot));
  auto check = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                           {ptr, i32, ptr, i64});
  LLVM::CallOp::create(
      b, loc, check,
      ValueRange{function, kernelName,
                 LLVM::ConstantOp::create(b, loc, i32, argument), fields[1],
                 bytes});
}

/// `@__epl_host_launch_<module>_<kernel>(params, grid x, y, z, block x, y,
/// z)`: the C function the fake driver's cuLaunchKernel calls. `params` is
/// what the launch hands the driver, a pointer to each of the kernel's
/// arguments as the LLVM lowering passes them (a memref as its descriptor's
/// fields, one pointer each); it checks each buffer is the GPU's
/// (checkBuffer), packs them back and calls `host`.
LogicalResult buildLauncher(gpu::GPUFuncOp kernel, func::FuncOp host,
                            StringRef name, OpBuilder &moduleBuilder,
                            const LLVMTypeConverter &converter) {
  Location loc = kernel.getLoc();
  MLIRContext *context = kernel.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto i64 = IntegerType::get(context, 64);
  SmallVector<Type> inputs{ptr};
  inputs.append(6, i64);
  auto launcher = func::FuncOp::create(moduleBuilder, loc, name,
                                       FunctionType::get(context, inputs, {}));
  Block *entry = launcher.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  Value params = entry->getArgument(0);
  int32_t next = 0;
  // The value params[next++] points to, of type `type`.
  auto param = [&](Type type) -> Value {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, params,
                                     ArrayRef<LLVM::GEPArg>{next++});
    Value address = LLVM::LoadOp::create(b, loc, ptr, slot);
    return LLVM::LoadOp::create(b, loc, type, address);
  };
  auto gpuModule = kernel->getParentOfType<gpu::GPUModuleOp>();
  declareSlot(kernel->getParentOfType<ModuleOp>(), moduleBuilder, loc,
              ("__epl_host_check_buffer_" + gpuModule.getName()).str());
  Value kernelName = LLVM::createGlobalString(
      loc, b,
      ("__epl_host_name_" + gpuModule.getName() + "_" + kernel.getName()).str(),
      (kernel.getName() + Twine('\0')).str(), LLVM::Linkage::Private);
  SmallVector<Value> operands;
  for (auto [argument, type] : llvm::enumerate(kernel.getArgumentTypes())) {
    if (auto memref = dyn_cast<MemRefType>(type)) {
      if (memref.getMemorySpace())
        return kernel.emitOpError("cannot run under the fake CUDA driver: an "
                                  "argument in memory space ")
               << memref.getMemorySpace();
      SmallVector<Value> fields;
      unsigned count = MemRefDescriptor::getNumUnpackedValues(memref);
      for (unsigned k = 0; k < count; ++k)
        fields.push_back(param(k < 2 ? Type(ptr) : Type(i64)));
      if (!memref.getElementType().isIntOrIndexOrFloat())
        return kernel.emitOpError("cannot run under the fake CUDA driver: an "
                                  "argument of element type ")
               << memref.getElementType();
      checkBuffer(b, loc, gpuModule.getName(), kernelName, argument, memref,
                  fields, converter.getIndexTypeBitwidth());
      Value descriptor =
          MemRefDescriptor::pack(b, loc, converter, memref, fields);
      operands.push_back(
          UnrealizedConversionCastOp::create(b, loc, type, descriptor)
              .getResult(0));
    } else if (type.isIndex()) {
      operands.push_back(
          arith::IndexCastOp::create(b, loc, type, param(i64)).getResult());
    } else if (type.isIntOrFloat()) {
      operands.push_back(param(type));
    } else {
      return kernel.emitOpError("cannot run under the fake CUDA driver: an "
                                "argument of type ")
             << type;
    }
  }
  for (Value size : entry->getArguments().drop_front())
    operands.push_back(
        arith::IndexCastOp::create(b, loc, b.getIndexType(), size));
  func::CallOp::create(b, loc, host, operands);
  func::ReturnOp::create(b, loc);
  return success();
}

/// A kernel's `cf.assert` as the device runs it: where the condition fails,
/// a call of CUDA's `__assertfail(message, file, line, function, char
/// size)`, here through the pointer `@__epl_host_assertfail_M`, which the
/// fake driver sets when it loads the module (the artifact cannot link
/// against it). The fake's `__assertfail` stops the kernel and fails the
/// context's next calls, as a GPU does.
void lowerKernelAsserts(func::FuncOp host, StringRef moduleName,
                        StringRef kernelName, OpBuilder &moduleBuilder) {
  SmallVector<cf::AssertOp> asserts;
  host.walk([&](cf::AssertOp a) { asserts.push_back(a); });
  if (asserts.empty())
    return;
  MLIRContext *context = host.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  std::string slot = ("__epl_host_assertfail_" + moduleName).str();
  declareSlot(host->getParentOfType<ModuleOp>(), moduleBuilder, host.getLoc(),
              slot);
  auto i32 = IntegerType::get(context, 32);
  auto i64 = IntegerType::get(context, 64);
  auto assertfail = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(context), {ptr, ptr, i32, ptr, i64});
  unsigned count = 0;
  for (cf::AssertOp a : asserts) {
    OpBuilder b(a);
    Location loc = a.getLoc();
    Value failed = arith::XOrIOp::create(
        b, loc, a.getArg(), arith::ConstantIntOp::create(b, loc, 1, 1));
    // Built in place: the strings' globals go to the enclosing module.
    auto ifFailed = scf::IfOp::create(b, loc, failed, /*withElseRegion=*/false);
    OpBuilder tb = ifFailed.getThenBodyBuilder();
    std::string prefix =
        (host.getName() + "_assert" + Twine(count++) + "_").str();
    StringRef file = "?";
    unsigned line = 0;
    if (auto at = loc->findInstanceOf<FileLineColLoc>()) {
      file = at.getFilename().getValue();
      line = at.getLine();
    }
    auto string = [&](StringRef what, StringRef text) {
      return LLVM::createGlobalString(loc, tb, prefix + what.str(),
                                      (text + Twine('\0')).str(),
                                      LLVM::Linkage::Private);
    };
    Value function = LLVM::LoadOp::create(
        tb, loc, ptr, LLVM::AddressOfOp::create(tb, loc, ptr, slot));
    LLVM::CallOp::create(
        tb, loc, assertfail,
        ValueRange{function, string("message", a.getMsg()),
                   string("file", file),
                   LLVM::ConstantOp::create(tb, loc, i32, line),
                   string("function", kernelName),
                   LLVM::ConstantOp::create(tb, loc, i64, 1)});
    a.erase();
  }
}

struct EPLHostKernelImagesPass
    : public mlir::epl::impl::EPLHostKernelImagesPassBase<
          EPLHostKernelImagesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    LLVMTypeConverter converter(context);
    OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      SmallVector<StringRef> kernels;
      for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
        if (!kernel.isKernel())
          continue;
        kernels.push_back(kernel.getName());
        std::string suffix =
            (gpuModule.getName() + "_" + kernel.getName()).str();
        FailureOr<func::FuncOp> host = epl::buildHostKernel(
            kernel, "__epl_host_kernel_" + suffix, moduleBuilder);
        if (failed(host) ||
            failed(buildLauncher(kernel, *host, "__epl_host_launch_" + suffix,
                                 moduleBuilder, converter)))
          return signalPassFailure();
        lowerKernelAsserts(*host, gpuModule.getName(), kernel.getName(),
                           moduleBuilder);
        ++numKernels;
      }
      // The image names the module and its kernels: the fake driver finds
      // their launchers by those names in the program loaded, and lists
      // them as a cubin's (cuModuleEnumerateFunctions). NUL-terminated, as
      // cuModuleLoadData takes no size.
      std::string image = ("epl-host-kernels:" + gpuModule.getName() + ":" +
                           llvm::join(kernels, ","))
                              .str();
      image.push_back('\0');
      OpBuilder b(gpuModule);
      auto object = gpu::ObjectAttr::get(
          context, NVVM::NVVMTargetAttr::get(context),
          gpu::CompilationTarget::Binary, b.getStringAttr(image),
          /*properties=*/nullptr, /*kernels=*/nullptr);
      gpu::BinaryOp::create(b, gpuModule.getLoc(), gpuModule.getName(),
                            /*offloadingHandler=*/nullptr,
                            ArrayRef<Attribute>{object});
      gpuModule->erase();
    }
  }
};
} // namespace
