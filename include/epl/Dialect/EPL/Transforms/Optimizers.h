//===- Optimizers.h - Parameter updates of a training step ------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// The optimizers of `epl.config`, with PyTorch's update rules (torch.optim
// SGD, SGD with momentum, Adam, AdamW; single-tensor implementations of
// PyTorch 1.13), built as element-wise linalg ops.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_OPTIMIZERS_H
#define EPL_DIALECT_EPL_TRANSFORMS_OPTIMIZERS_H

#include "epl/Dialect/EPL/IR/EPLConfig.h"

#include "mlir/IR/Builders.h"

#include <string>

namespace mlir::epl {

struct Optimizer {
  enum class Kind { SGD, Momentum, Adam, AdamW };
  Kind kind = Kind::SGD;
  double lr = 0.01, momentum = 0.9, beta1 = 0.9, beta2 = 0.999, eps = 1e-8,
         weightDecay = 0;
  /// `optimizer.lr_schedule = "cosine"`: the learning rate of step t is
  /// lr * (1 + cos(pi * min(t, decaySteps) / decaySteps)) / 2; 0: constant.
  int64_t decaySteps = 0;

  /// The optimizer a verified `epl.config` asks for.
  static Optimizer fromConfig(const Config &config);

  /// Names of the state tensors kept per parameter, appended to the
  /// parameter's name: `w1.exp_avg`.
  SmallVector<StringRef> stateSuffixes() const;
  /// Whether the optimizer counts steps (`optimizer.step`, a tensor<i64>):
  /// Adam's bias corrections and a learning-rate schedule read it.
  bool countsSteps() const {
    return kind == Kind::Adam || kind == Kind::AdamW || decaySteps > 0;
  }

  /// Updates `param` with `grad`, given the parameter's state tensors (in
  /// the order of `stateSuffixes`) and the step counter (null when the
  /// optimizer does not count). Returns the new parameter and appends the
  /// new state tensors to `newStates`.
  Value update(OpBuilder &b, Location loc, Value param, Value grad,
               ValueRange states, Value step,
               SmallVectorImpl<Value> &newStates) const;

  /// step + 1.
  static Value incrementStep(OpBuilder &b, Location loc, Value step);
};

} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_TRANSFORMS_OPTIMIZERS_H
