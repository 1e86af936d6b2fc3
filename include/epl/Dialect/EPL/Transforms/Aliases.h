//===- Aliases.h - Uses of a buffer through its aliases ---------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_ALIASES_H
#define EPL_DIALECT_EPL_TRANSFORMS_ALIASES_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::epl {

/// The uses of `buffer` and of every alias of it, but the aliases'. An
/// alias: a result of a view, or of any op without regions that neither
/// reads nor writes memory and makes a buffer (`memref.transpose` is no
/// ViewLikeOpInterface).
SmallVector<OpOperand *> usesThroughAliases(Value buffer);

} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_TRANSFORMS_ALIASES_H
