//===- EPLOps.h - EPL operations --------------------------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_IR_EPLOPS_H
#define EPL_DIALECT_EPL_IR_EPLOPS_H

#include "epl/Dialect/EPL/IR/EPLAttrs.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/IR/ShardingRule.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "epl/Dialect/EPL/IR/EPLOpInterfaces.h.inc"

#define GET_OP_CLASSES
#include "epl/Dialect/EPL/IR/EPLOps.h.inc"

namespace mlir::epl {
/// Whether `op` is a `grouped` epl.send or epl.recv.
bool isGroupedMessage(Operation *op);

/// Whether `op` is a `direct` epl.send or epl.recv.
bool isDirectMessage(Operation *op);

/// Whether `op` may sit between the messages of one group (see
/// `epl.send`): it does nothing at run time (a constant, an empty tensor),
/// so nothing reads a received value before the group is done.
bool isInertBetweenMessages(Operation *op);

/// Whether `op`'s only effects, its regions' included, are assertions
/// (`cf.assert`, as in a gather's bounds check or the fp16 bucket's
/// overflow check): running it again changes nothing a correct run
/// computes, so passes that place or copy pure ops may place or copy it
/// too. Dropping it would drop its check: a pass that makes pure ops only
/// where they are read must make this one somewhere.
bool isFreeOfEffectsButAssertions(Operation *op);
} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_IR_EPLOPS_H
