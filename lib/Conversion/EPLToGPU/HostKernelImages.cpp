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
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLHOSTKERNELIMAGESPASS
#include "epl/Conversion/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;

namespace {
/// `@__epl_host_launch_<module>_<kernel>(params, grid x, y, z, block x, y,
/// z)`: the C function the fake driver's cuLaunchKernel calls. `params` is
/// what the launch hands the driver, a pointer to each of the kernel's
/// arguments as the LLVM lowering passes them (a memref as its descriptor's
/// fields, one pointer each); it packs them back and calls `host`.
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
  int64_t next = 0;
  // The value params[next++] points to, of type `type`.
  auto param = [&](Type type) -> Value {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, params,
                                     ArrayRef<LLVM::GEPArg>{next++});
    Value address = LLVM::LoadOp::create(b, loc, ptr, slot);
    return LLVM::LoadOp::create(b, loc, type, address);
  };
  SmallVector<Value> operands;
  for (Type type : kernel.getArgumentTypes()) {
    if (auto memref = dyn_cast<MemRefType>(type)) {
      if (memref.getMemorySpace())
        return kernel.emitOpError("cannot run under the fake CUDA driver: an "
                                  "argument in memory space ")
               << memref.getMemorySpace();
      SmallVector<Value> fields;
      unsigned count = MemRefDescriptor::getNumUnpackedValues(memref);
      for (unsigned k = 0; k < count; ++k)
        fields.push_back(param(k < 2 ? Type(ptr) : Type(i64)));
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
      for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
        if (!kernel.isKernel())
          continue;
        std::string suffix =
            (gpuModule.getName() + "_" + kernel.getName()).str();
        FailureOr<func::FuncOp> host = epl::buildHostKernel(
            kernel, "__epl_host_kernel_" + suffix, moduleBuilder);
        if (failed(host) ||
            failed(buildLauncher(kernel, *host, "__epl_host_launch_" + suffix,
                                 moduleBuilder, converter)))
          return signalPassFailure();
        ++numKernels;
      }
      // The image names the module: the fake driver finds its kernels'
      // launchers by that name in the program loaded. NUL-terminated, as
      // cuModuleLoadData takes no size.
      std::string image = ("epl-host-kernels:" + gpuModule.getName()).str();
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
