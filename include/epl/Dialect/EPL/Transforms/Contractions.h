//===- Contractions.h - Recognizing multiply-add contractions ---*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_CONTRACTIONS_H
#define EPL_DIALECT_EPL_TRANSFORMS_CONTRACTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::epl {
/// Whether the body of `op` (two inputs, one init) is `acc + in0 * in1`, in
/// either order: a contraction BLAS could run, whatever its maps.
bool isMultiplyAdd(linalg::GenericOp op);
} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_TRANSFORMS_CONTRACTIONS_H
