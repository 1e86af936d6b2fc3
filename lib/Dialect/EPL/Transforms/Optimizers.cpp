//===- Optimizers.cpp - Parameter updates of a training step --------------===//
//
// Part of EPL-MLIR.
//
// Each update follows PyTorch's arithmetic step by step (same operations, same
// order, scalar coefficients computed in double and rounded once), so that
// trained parameters stay within rounding of PyTorch's for many steps.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Optimizers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::epl;

Optimizer Optimizer::fromConfig(const Config &config) {
  Optimizer o;
  o.kind = llvm::StringSwitch<Kind>(config.getString("optimizer.type"))
               .Case("momentum", Kind::Momentum)
               .Case("adam", Kind::Adam)
               .Case("adamw", Kind::AdamW)
               .Default(Kind::SGD);
  o.lr = *config.getNumber("optimizer.lr");
  o.momentum = *config.getNumber("optimizer.momentum");
  o.beta1 = *config.getNumber("optimizer.beta1");
  o.beta2 = *config.getNumber("optimizer.beta2");
  o.eps = *config.getNumber("optimizer.eps");
  o.weightDecay = *config.getNumber("optimizer.weight_decay");
  if (config.getString("optimizer.lr_schedule") == "cosine")
    o.decaySteps = config.getInt("optimizer.decay_steps");
  return o;
}

SmallVector<StringRef> Optimizer::stateSuffixes() const {
  switch (kind) {
  case Kind::SGD:
    return {};
  case Kind::Momentum:
    return {"momentum_buffer"};
  case Kind::Adam:
  case Kind::AdamW:
    return {"exp_avg", "exp_avg_sq"};
  }
  llvm_unreachable("unknown optimizer");
}

namespace {
/// An element-wise generic over tensors shaped like `like`, reading `inputs`
/// (same shape, or rank 0: broadcast) and producing `numResults` tensors
/// (of `resultElement`, if given, else of `like`'s element type).
SmallVector<Value> elementwise(
    OpBuilder &b, Location loc, Value like, ValueRange inputs,
    unsigned numResults,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body,
    Type resultElement = {}) {
  auto type = cast<RankedTensorType>(like.getType());
  if (resultElement)
    type = type.clone(resultElement);
  MLIRContext *ctx = b.getContext();
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  AffineMap scalar = AffineMap::get(type.getRank(), 0, ctx);
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(cast<RankedTensorType>(in.getType()).getRank() == 0 &&
                           type.getRank() != 0
                       ? scalar
                       : identity);
  SmallVector<Value> inits;
  for (unsigned i = 0; i < numResults; ++i) {
    inits.push_back(tensor::EmptyOp::create(b, loc, type.getShape(),
                                            type.getElementType()));
    maps.push_back(identity);
  }
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  SmallVector<Type> resultTypes(numResults, type);
  auto op = linalg::GenericOp::create(
      b, loc, resultTypes, inputs, inits, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, body(nb, nl, args));
      });
  return SmallVector<Value>(op.getResults());
}
} // namespace

Value Optimizer::update(OpBuilder &b, Location loc, Value param, Value grad,
                        ValueRange states, Value step,
                        SmallVectorImpl<Value> &newStates) const {
  Type element = cast<RankedTensorType>(param.getType()).getElementType();
  auto cst = [&](OpBuilder &nb, Location nl, double v) -> Value {
    return arith::ConstantOp::create(nb, nl, element,
                                     nb.getFloatAttr(element, v));
  };
  // A double of the step's scalars in the parameters' type (f64 as it is).
  auto inElement = [&](OpBuilder &nb, Location nl, Value v) -> Value {
    if (v.getType() == element)
      return v;
    return arith::TruncFOp::create(nb, nl, element, v);
  };
  // The learning rate of the step counted by `t` (i64), in double: the
  // schedule's, as PyTorch's scheduler computes it in Python.
  auto lrAt = [&](OpBuilder &nb, Location nl, Value t) -> Value {
    Type f64 = nb.getF64Type();
    auto d = [&](double v) -> Value {
      return arith::ConstantOp::create(nb, nl, f64, nb.getF64FloatAttr(v));
    };
    if (decaySteps <= 0)
      return d(lr);
    Value clamped = arith::MinSIOp::create(
        nb, nl, t,
        arith::ConstantIntOp::create(nb, nl, nb.getI64Type(), decaySteps));
    Value angle =
        arith::MulFOp::create(nb, nl, d(M_PI / static_cast<double>(decaySteps)),
                              arith::SIToFPOp::create(nb, nl, f64, clamped));
    Value half = arith::MulFOp::create(
        nb, nl, d(0.5),
        arith::AddFOp::create(nb, nl, d(1.0),
                              math::CosOp::create(nb, nl, angle)));
    return arith::MulFOp::create(nb, nl, d(lr), half);
  };
  // -lr of this step in the parameters' type (PyTorch's `alpha=-lr`): a
  // constant, or with a schedule a 0-d op of the step, read by the update.
  SmallVector<Value> scheduled;
  if (decaySteps > 0 && (kind == Kind::SGD || kind == Kind::Momentum))
    scheduled = elementwise(
        b, loc, step, {step}, 1,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value neg = arith::NegFOp::create(nb, nl, lrAt(nb, nl, a[0]));
          return SmallVector<Value>{inElement(nb, nl, neg)};
        },
        element);
  // The scheduled input comes after an update's `numInputs` others.
  auto negLr = [&](OpBuilder &nb, Location nl, ValueRange a,
                   unsigned numInputs) -> Value {
    return scheduled.empty() ? cst(nb, nl, -lr) : a[numInputs];
  };

  // PyTorch's `grad.add(param, alpha=weight_decay)`: L2, folded into the
  // gradient (sgd, momentum, adam).
  auto decayed = [&](OpBuilder &nb, Location nl, Value p, Value g) -> Value {
    if (weightDecay == 0 || kind == Kind::AdamW)
      return g;
    return arith::AddFOp::create(
        nb, nl, g, arith::MulFOp::create(nb, nl, cst(nb, nl, weightDecay), p));
  };

  switch (kind) {
  case Kind::SGD: {
    // param.add_(d_p, alpha=-lr)
    SmallVector<Value> inputs = {param, grad};
    unsigned numInputs = inputs.size();
    inputs.append(scheduled);
    return elementwise(
        b, loc, param, inputs, 1,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value g = decayed(nb, nl, a[0], a[1]);
          Value step =
              arith::MulFOp::create(nb, nl, negLr(nb, nl, a, numInputs), g);
          return SmallVector<Value>{arith::AddFOp::create(nb, nl, a[0], step)};
        })[0];
  }
  case Kind::Momentum: {
    // buf.mul_(momentum).add_(d_p); param.add_(buf, alpha=-lr)
    SmallVector<Value> inputs = {param, grad, states[0]};
    unsigned numInputs = inputs.size();
    inputs.append(scheduled);
    SmallVector<Value> r = elementwise(
        b, loc, param, inputs, 2,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value g = decayed(nb, nl, a[0], a[1]);
          Value buf = arith::AddFOp::create(
              nb, nl,
              arith::MulFOp::create(nb, nl, a[2], cst(nb, nl, momentum)), g);
          Value p = arith::AddFOp::create(
              nb, nl, a[0],
              arith::MulFOp::create(nb, nl, negLr(nb, nl, a, numInputs), buf));
          return SmallVector<Value>{p, buf};
        });
    newStates.push_back(r[1]);
    return r[0];
  }
  case Kind::Adam:
  case Kind::AdamW: {
    // The bias corrections of step t = step + 1, in double, as PyTorch
    // computes them in Python: in a 0-d op of this parameter's update, not
    // once per element. (Each parameter computes them again: two pows, a
    // few microseconds per step in all.)
    // With AdamW's decay and a schedule, also the decay factor
    // 1 - lr * weight_decay of this step (else a constant).
    bool scheduledDecay =
        kind == Kind::AdamW && weightDecay != 0 && decaySteps > 0;
    SmallVector<Value> corrections = elementwise(
        b, loc, step, {step}, scheduledDecay ? 3 : 2,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Type f64 = nb.getF64Type();
          auto d = [&](double v) -> Value {
            return arith::ConstantOp::create(nb, nl, f64,
                                             nb.getF64FloatAttr(v));
          };
          Value one64 =
              arith::ConstantIntOp::create(nb, nl, nb.getI64Type(), 1);
          Value t = arith::SIToFPOp::create(
              nb, nl, f64, arith::AddIOp::create(nb, nl, a[0], one64));
          Value bc1 = arith::SubFOp::create(
              nb, nl, d(1.0), math::PowFOp::create(nb, nl, d(beta1), t));
          Value bc2 = arith::SubFOp::create(
              nb, nl, d(1.0), math::PowFOp::create(nb, nl, d(beta2), t));
          Value lrT = lrAt(nb, nl, a[0]);
          Value stepSize =
              inElement(nb, nl, arith::DivFOp::create(nb, nl, lrT, bc1));
          Value bc2Sqrt = inElement(nb, nl, math::SqrtOp::create(nb, nl, bc2));
          if (!scheduledDecay)
            return SmallVector<Value>{stepSize, bc2Sqrt};
          Value decay = inElement(
              nb, nl,
              arith::SubFOp::create(
                  nb, nl, d(1.0),
                  arith::MulFOp::create(nb, nl, lrT, d(weightDecay))));
          return SmallVector<Value>{stepSize, bc2Sqrt, decay};
        },
        element);
    SmallVector<Value> inputs = {param, grad, states[0], states[1]};
    inputs.append(corrections);
    SmallVector<Value> r = elementwise(
        b, loc, param, inputs, 3,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value stepSize = a[4], bc2Sqrt = a[5];
          Value p = a[0];
          if (kind == Kind::AdamW && weightDecay != 0)
            // param.mul_(1 - lr * weight_decay)
            p = arith::MulFOp::create(
                nb, nl, p,
                scheduledDecay ? a[6] : cst(nb, nl, 1.0 - lr * weightDecay));
          Value g = decayed(nb, nl, a[0], a[1]);
          // exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
          Value m = arith::AddFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, a[2], cst(nb, nl, beta1)),
              arith::MulFOp::create(nb, nl, cst(nb, nl, 1.0 - beta1), g));
          // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
          Value v = arith::AddFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, a[3], cst(nb, nl, beta2)),
              arith::MulFOp::create(
                  nb, nl,
                  arith::MulFOp::create(nb, nl, cst(nb, nl, 1.0 - beta2), g),
                  g));
          // denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
          Value denom = arith::AddFOp::create(
              nb, nl,
              arith::DivFOp::create(nb, nl, math::SqrtOp::create(nb, nl, v),
                                    bc2Sqrt),
              cst(nb, nl, eps));
          // param.addcdiv_(exp_avg, denom, value=-step_size)
          Value update = arith::MulFOp::create(
              nb, nl, arith::NegFOp::create(nb, nl, stepSize),
              arith::DivFOp::create(nb, nl, m, denom));
          return SmallVector<Value>{arith::AddFOp::create(nb, nl, p, update), m,
                                    v};
        });
    newStates.push_back(r[1]);
    newStates.push_back(r[2]);
    return r[0];
  }
  }
  llvm_unreachable("unknown optimizer");
}

Value Optimizer::incrementStep(OpBuilder &b, Location loc, Value step) {
  return elementwise(
      b, loc, step, {step}, 1, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value one = arith::ConstantIntOp::create(nb, nl, nb.getI64Type(), 1);
        return SmallVector<Value>{arith::AddIOp::create(nb, nl, a[0], one)};
      })[0];
}
