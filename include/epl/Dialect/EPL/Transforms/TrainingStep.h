//===- TrainingStep.h - The function of a training step ---------*- C++ -*-===//
//-*-===//
//
// Part of EPL-MLIR.
//
// What epl-autodiff and epl-apply-optimizer share about the function of a
// training step.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_TRAININGSTEP_H
#define EPL_DIALECT_EPL_TRANSFORMS_TRAININGSTEP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::epl {

/// Makes `fn` return `results` (with `resultAttrs`, one each) in place of
/// what its terminator returns, and updates its type.
void setStepResults(func::FuncOp fn, ValueRange results,
                    ArrayRef<DictionaryAttr> resultAttrs);

} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_TRANSFORMS_TRAININGSTEP_H
