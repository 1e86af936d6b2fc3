//===- GPUKernelsToHost.cpp - Outlined GPU kernels run on the CPU ---------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "KernelsOnHost.h"

#include "epl/Conversion/Passes.h"
#include "epl/Dialect/EPL/Transforms/Kernels.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLGPUKERNELSTOHOSTPASS
#include "epl/Conversion/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;

FailureOr<func::FuncOp> mlir::epl::buildHostKernel(gpu::GPUFuncOp kernel,
                                                   StringRef name,
                                                   OpBuilder &moduleBuilder) {
  if (!kernel.getBody().hasOneBlock())
    return kernel.emitOpError(
        "cannot run on the host: its body has several blocks");
  if (kernel.getNumWorkgroupAttributions() ||
      kernel.getNumPrivateAttributions())
    return kernel.emitOpError(
        "cannot run on the host: it has workgroup or private memory");
  Location loc = kernel.getLoc();
  MLIRContext *context = kernel.getContext();
  SmallVector<Type> inputs(kernel.getArgumentTypes());
  inputs.append(6, IndexType::get(context));
  auto function = func::FuncOp::create(moduleBuilder, loc, name,
                                       FunctionType::get(context, inputs, {}));
  function.setPrivate();
  Block *entry = function.addEntryBlock();
  auto sizes = entry->getArguments().take_back(6);

  OpBuilder b = OpBuilder::atBlockBegin(entry);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // Blocks outermost, threads innermost; a kernel without barriers gives
  // the same result in any order.
  SmallVector<Value> ids; // block x, y, z, thread x, y, z
  for (int k : {2, 1, 0, 5, 4, 3}) {
    auto loop = scf::ForOp::create(b, loc, zero, sizes[k], one);
    b.setInsertionPointToStart(loop.getBody());
    ids.push_back(loop.getInductionVar());
  }
  // ids holds block z, y, x, thread z, y, x: reorder to x, y, z.
  Value blockId[3] = {ids[2], ids[1], ids[0]};
  Value threadId[3] = {ids[5], ids[4], ids[3]};

  IRMapping mapping;
  for (auto [from, to] :
       llvm::zip(kernel.getArguments(), entry->getArguments().drop_back(6)))
    mapping.map(from, to);
  for (Operation &op : kernel.getBody().front()) {
    auto dim = [](gpu::Dimension d) { return static_cast<unsigned>(d); };
    if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
      mapping.map(id.getResult(), blockId[dim(id.getDimension())]);
    } else if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
      mapping.map(id.getResult(), threadId[dim(id.getDimension())]);
    } else if (auto size = dyn_cast<gpu::GridDimOp>(op)) {
      mapping.map(size.getResult(), sizes[dim(size.getDimension())]);
    } else if (auto size = dyn_cast<gpu::BlockDimOp>(op)) {
      mapping.map(size.getResult(), sizes[3 + dim(size.getDimension())]);
    } else if (isa<gpu::ReturnOp>(op)) {
      continue;
    } else {
      // Any other GPU op (a barrier, a shuffle) needs threads that run
      // together.
      WalkResult walk = op.walk([&](Operation *inner) {
        if (isa<gpu::GPUDialect>(inner->getDialect()))
          return WalkResult::interrupt();
        return WalkResult::advance();
      });
      if (walk.wasInterrupted())
        return op.emitOpError("cannot run on the host: the threads of a "
                              "block would have to run together");
      b.clone(op, mapping);
    }
  }
  b.setInsertionPointToEnd(entry);
  func::ReturnOp::create(b, loc);
  return function;
}

namespace {
struct EPLGPUKernelsToHostPass
    : public mlir::epl::impl::EPLGPUKernelsToHostPassBase<
          EPLGPUKernelsToHostPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
    // gpu.module @m { gpu.func @f } becomes func.func @__epl_kernel_m_f, a
    // kernel as epl-outline-kernels makes them (compiled as one).
    llvm::StringMap<func::FuncOp> functions;
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
        std::string name = (Twine(epl::kKernelPrefix) + gpuModule.getName() +
                            "_" + kernel.getName())
                               .str();
        FailureOr<func::FuncOp> function =
            epl::buildHostKernel(kernel, name, moduleBuilder);
        if (failed(function))
          return signalPassFailure();
        (*function)->setAttr("passthrough",
                             moduleBuilder.getStrArrayAttr({"noinline"}));
        functions[(gpuModule.getName() + "::" + kernel.getName()).str()] =
            *function;
        ++numKernels;
      }
    }

    SmallVector<Operation *> hostOps;
    module.walk([&](Operation *op) {
      if (isa<gpu::LaunchFuncOp, gpu::MemcpyOp, gpu::LaunchOp>(op))
        hostOps.push_back(op);
    });
    for (Operation *op : hostOps) {
      OpBuilder b(op);
      if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
        if (copy.getAsyncToken())
          return (void)copy.emitOpError("cannot run on the host: it is "
                                        "asynchronous"),
                 signalPassFailure();
        memref::CopyOp::create(b, copy.getLoc(), copy.getSrc(), copy.getDst());
        copy->erase();
        continue;
      }
      auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
      if (!launch || launch.getAsyncToken() ||
          !launch.getAsyncDependencies().empty()) {
        op->emitOpError("cannot run on the host: only synchronous "
                        "gpu.launch_func of outlined kernels can");
        return signalPassFailure();
      }
      SymbolRefAttr kernel = launch.getKernel();
      func::FuncOp function =
          functions.lookup((kernel.getRootReference().getValue() +
                            "::" + kernel.getLeafReference().getValue())
                               .str());
      if (!function) {
        launch.emitOpError("launches a kernel that is not in the module");
        return signalPassFailure();
      }
      SmallVector<Value> operands(launch.getKernelOperands());
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      operands.append({grid.x, grid.y, grid.z, block.x, block.y, block.z});
      func::CallOp::create(b, launch.getLoc(), function, operands);
      launch->erase();
    }
    for (gpu::GPUModuleOp gpuModule : gpuModules)
      gpuModule->erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};
} // namespace
