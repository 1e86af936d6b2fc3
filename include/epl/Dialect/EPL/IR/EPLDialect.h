//===- EPLDialect.h - EPL dialect -------------------------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_IR_EPLDIALECT_H
#define EPL_DIALECT_EPL_IR_EPLDIALECT_H

#include "mlir/IR/Dialect.h"

#include "epl/Dialect/EPL/IR/EPLDialect.h.inc"

#endif // EPL_DIALECT_EPL_IR_EPLDIALECT_H
