//===- InitEPL.h - Registration of EPL and the dialects it uses -*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// One place that says which dialects, interfaces and passes an EPL tool
// knows, so that epl-opt and epl-run accept the same IR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_INITEPL_H
#define EPL_INITEPL_H

namespace mlir {
class DialectRegistry;
namespace epl {

/// Registers `epl` and the upstream dialects of the IR levels (func, linalg,
/// tensor, arith, math, scf, memref, bufferization, gpu, nvvm, llvm) with the
/// external interface models their transformations need.
void registerEPLDialects(DialectRegistry &registry);

/// Adds the project's and LLVM's versions to `--version`.
void addVersionPrinter();

/// Makes an error one line with its source location, as users of a compiler
/// expect, unless the command line asked otherwise: MLIR's default appends
/// the failing op in generic form to every diagnostic
/// (`--mlir-print-op-on-diagnostic`). Call after the command line is parsed.
void quietenDiagnosticsByDefault();

} // namespace epl
} // namespace mlir

#endif // EPL_INITEPL_H
