//===- GatherKernels.cpp - Every kernel in one GPU module, once -----------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Conversion/Passes.h"
#include "epl/Support/TextKey.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLGATHERKERNELSPASS
#include "epl/Conversion/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;

namespace {
/// A kernel's text without its name: equal for kernels that compute the same
/// thing (one layer's ops in every block of a transformer).
std::string bodyKey(gpu::GPUFuncOp kernel) {
  std::string key = epl::textKey(kernel);
  // Without its name (printed once, as the symbol attribute).
  std::string name = "\"" + kernel.getName().str() + "\"";
  if (size_t at = key.find(name); at != std::string::npos)
    key.erase(at, name.size());
  return key;
}

struct EPLGatherKernelsPass
    : public mlir::epl::impl::EPLGatherKernelsPassBase<EPLGatherKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.empty())
      return;
    // The new module takes the first one's place (and its target, if any).
    OpBuilder b(gpuModules.front());
    auto gathered = gpu::GPUModuleOp::create(
        b, gpuModules.front().getLoc(), "__epl_kernels",
        gpuModules.front().getTargetsAttr());
    b.setInsertionPointToStart(gathered.getBody());

    llvm::StringMap<gpu::GPUFuncOp> byBody;
    DenseMap<Attribute, SymbolRefAttr> renamed; // @m::@f -> @__epl_kernels::@k
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      for (Operation &op :
           llvm::make_early_inc_range(gpuModule.getBody()->getOperations())) {
        auto kernel = dyn_cast<gpu::GPUFuncOp>(op);
        if (!kernel || !kernel.isKernel()) {
          // What outlining copied in beside a kernel (the declaration of a
          // function it calls): one copy of each symbol.
          auto symbol = dyn_cast<SymbolOpInterface>(op);
          if (!symbol) {
            op.emitOpError("is in a GPU module beside the kernels; "
                           "epl-gather-kernels cannot merge it");
            return signalPassFailure();
          }
          if (!SymbolTable::lookupSymbolIn(gathered, symbol.getNameAttr()))
            op.moveBefore(gathered.getBody(), gathered.getBody()->begin());
          continue;
        }
        auto from =
            SymbolRefAttr::get(gpuModule.getNameAttr(),
                               {FlatSymbolRefAttr::get(kernel.getNameAttr())});
        gpu::GPUFuncOp &same = byBody[bodyKey(kernel)];
        if (!same) {
          kernel->moveBefore(gathered.getBody(), gathered.getBody()->end());
          // Each kernel keeps its module's name, unique in the module.
          kernel.setName(gpuModule.getName());
          same = kernel;
          ++numKernels;
        } else {
          ++numShared;
        }
        renamed[from] =
            SymbolRefAttr::get(gathered.getNameAttr(),
                               {FlatSymbolRefAttr::get(same.getNameAttr())});
      }
      gpuModule->erase();
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (SymbolRefAttr to = renamed.lookup(launch.getKernel()))
        launch.setKernelAttr(to);
    });
  }
};
} // namespace
