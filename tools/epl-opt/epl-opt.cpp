//===- epl-opt.cpp - EPL optimizer driver ---------------------------------===//
//
// Part of EPL-MLIR.
//
// `mlir-opt` for EPL: the upstream dialects the IR levels need (from the L0
// linalg model down to LLVM and NVVM) plus `epl`, every upstream pass, and
// EPL's passes and named pipelines.
//
//===----------------------------------------------------------------------===//

#include "epl/InitEPL.h"
#include "epl/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::epl::registerEPLPassesAndPipelines();

  mlir::DialectRegistry registry;
  mlir::epl::registerEPLDialects(registry);
  mlir::epl::addVersionPrinter();

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "EPL-MLIR optimizer driver\n", registry);
  mlir::epl::quietenDiagnosticsByDefault();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
