//===- TrainingStep.cpp - The function of a training step -----------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/TrainingStep.h"

using namespace mlir;

void mlir::epl::setStepResults(func::FuncOp fn, ValueRange results,
                               ArrayRef<DictionaryAttr> resultAttrs) {
  auto ret = cast<func::ReturnOp>(fn.front().getTerminator());
  OpBuilder b(ret);
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  fn.setType(FunctionType::get(fn.getContext(), fn.getArgumentTypes(),
                               ValueRange(results).getTypes()));
  fn.setAllResultAttrs(resultAttrs);
}
