//===- InitEPL.cpp - Registration of EPL and the dialects it uses ---------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/InitEPL.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/IR/ShardingRule.h"
#include "epl/Version.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/Extensions/AllExtensions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

void mlir::epl::registerEPLDialects(DialectRegistry &registry) {
  registry.insert<EPLDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, func::FuncDialect,
                  gpu::GPUDialect, LLVM::LLVMDialect, linalg::LinalgDialect,
                  math::MathDialect, memref::MemRefDialect, NVVM::NVVMDialect,
                  scf::SCFDialect, tensor::TensorDialect>();
  func::registerAllExtensions(registry);
  // One-shot bufferization of the training step (L3 -> L4) needs these.
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  // How upstream ops shard: read by every EPL sharding pass.
  registerShardingRuleModels(registry);
}

void mlir::epl::addVersionPrinter() {
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "EPL-MLIR version " << EPL_VERSION_STRING << " (built with LLVM/MLIR "
       << LLVM_VERSION_STRING << ")\n";
  });
}

void mlir::epl::quietenDiagnosticsByDefault() {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("mlir-print-op-on-diagnostic");
  if (it == options.end() || it->second->getNumOccurrences() > 0)
    return;
  static_cast<llvm::cl::opt<bool> *>(it->second)->setValue(false);
}
