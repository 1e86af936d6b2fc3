//===- EPLDialect.h - EPL dialect -------------------------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_IR_EPLDIALECT_H
#define EPL_DIALECT_EPL_IR_EPLDIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "epl/Dialect/EPL/IR/EPLDialect.h.inc"

namespace mlir::epl {
/// What argument `index` of a model function is (its `epl.arg`: "param",
/// "input", "label" or "opt_state"); empty when it is not tagged.
StringRef getArgKind(FunctionOpInterface fn, unsigned index);

/// Whether `fn` has an argument tagged with `epl.arg`: a model's function.
bool hasTaggedArguments(FunctionOpInterface fn);
} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_IR_EPLDIALECT_H
