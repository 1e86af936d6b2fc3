//===- ScalarDerivatives.cpp - Reverse mode on scalar bodies --------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/ScalarDerivatives.h"
#include "epl/Dialect/EPL/Transforms/ShardingUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::epl;

/// Whether `v` is the float constant 1.
static bool isOne(Value v) {
  FloatAttr attr;
  return matchPattern(v, m_Constant(&attr)) &&
         attr.getValue().isExactlyValue(1.0);
}

/// The x of `div` when it computes sigmoid(x) = 1 / (exp(-x) + 1), as
/// torch-mlir writes it, with the exp, the negation and the sum read by
/// nothing else; null otherwise.
static Value sigmoidInput(arith::DivFOp div) {
  if (!isOne(div.getLhs()))
    return Value();
  auto sum = div.getRhs().getDefiningOp<arith::AddFOp>();
  if (!sum || !sum->hasOneUse())
    return Value();
  Value e = isOne(sum.getRhs())   ? sum.getLhs()
            : isOne(sum.getLhs()) ? sum.getRhs()
                                  : Value();
  auto exp = e ? e.getDefiningOp<math::ExpOp>() : math::ExpOp();
  if (!exp || !exp->hasOneUse())
    return Value();
  auto neg = exp.getOperand().getDefiningOp<arith::NegFOp>();
  if (!neg || !neg->hasOneUse())
    return Value();
  return neg.getOperand();
}

void BodyDifferentiator::clonePrimal() {
  for (Operation &op : body.without_terminator())
    b.clone(op, primal);
}

FailureOr<Value> BodyDifferentiator::adjoint(Value target, Value seed,
                                             Value wrt,
                                             Operation *diagnosticOp) {
  // This function is long on purpose: most of it is the table of scalar
  // derivative rules (one TypeSwitch case per op), which reads best whole.
  // Only ops on a path from `wrt` to `target` matter.
  llvm::DenseSet<Value> dependsOnWrt = {wrt};
  for (Operation &op : body.without_terminator()) {
    // Values used inside an op's regions count as its operands, so that an
    // op with a body (scf.if) that reads `wrt` has no derivative rule rather
    // than a silently zero one.
    bool depends = op.walk([&](Operation *nested) {
                       return llvm::any_of(nested->getOperands(),
                                           [&](Value v) {
                                             return dependsOnWrt.contains(v);
                                           })
                                  ? WalkResult::interrupt()
                                  : WalkResult::advance();
                     }).wasInterrupted();
    if (depends)
      for (Value r : op.getResults())
        if (isa<FloatType>(r.getType()))
          dependsOnWrt.insert(r);
  }
  if (!dependsOnWrt.contains(target))
    return Value();

  // Values computed from the body's arguments, not from constants and
  // captured values alone: a max's tie with a constant is a kink (relu's),
  // with another such value a tie of two (torch.maximum's halves).
  // (An input that is a constant tensor, a splat or a fill, is a constant
  // here: relu written on tensors, max(x, zeros).)
  // (Only a body with a max or min needs them.)
  llvm::DenseSet<Value> variesPerElement;
  bool hasMaxOrMin = llvm::any_of(body, [](Operation &op) {
    return isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
               arith::MinNumFOp>(op);
  });
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(body.getParentOp());
  if (hasMaxOrMin) {
    for (BlockArgument arg : body.getArguments())
      if (!linalgOp || arg.getArgNumber() >= linalgOp.getNumDpsInputs() ||
          !isCheap(linalgOp->getOperand(arg.getArgNumber())))
        variesPerElement.insert(arg);
    for (Operation &op : body.without_terminator())
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return variesPerElement.contains(v); }) ||
          (op.getNumOperands() == 0 && !op.hasTrait<OpTrait::ConstantLike>()))
        variesPerElement.insert(op.result_begin(), op.result_end());
  }

  llvm::DenseMap<Value, Value> adjoints;
  adjoints[target] = seed;
  auto accumulate = [&](Value forward, Value contribution) {
    if (!contribution || !dependsOnWrt.contains(forward))
      return;
    Value &slot = adjoints[forward];
    slot = slot ? arith::AddFOp::create(b, loc, slot, contribution).getResult()
                : contribution;
  };
  auto constant = [&](Type type, double value) -> Value {
    return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
  };
  auto mul = [&](Value x, Value y) -> Value {
    return arith::MulFOp::create(b, loc, x, y);
  };
  auto div = [&](Value x, Value y) -> Value {
    return arith::DivFOp::create(b, loc, x, y);
  };
  auto neg = [&](Value x) -> Value { return arith::NegFOp::create(b, loc, x); };
  auto select = [&](Value cond, Value x, Value y) -> Value {
    return arith::SelectOp::create(b, loc, cond, x, y);
  };
  auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) -> Value {
    return arith::CmpFOp::create(b, loc, p, x, y);
  };
  // The chain rule's g * partial (g / divisor) for partials that overflow:
  // 0 where g is 0. A branch a select does not take gets g = 0, and its
  // partial may be infinite there (sigmoid's exp(-x) at x = -100,
  // softplus's and ELU's exp(x) at x = 100): 0 * inf is NaN, and one NaN
  // poisons every parameter. PyTorch's fused backward formulas never form
  // that product; this keeps the zero the select meant.
  auto unlessZero = [&](Value g, Value contribution) -> Value {
    Value zero = constant(g.getType(), 0.0);
    return select(cmp(arith::CmpFPredicate::OEQ, g, zero), zero, contribution);
  };
  auto scaled = [&](Value g, Value partial) -> Value {
    return unlessZero(g, mul(g, partial));
  };
  auto divided = [&](Value g, Value divisor) -> Value {
    return unlessZero(g, div(g, divisor));
  };

  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (op.getNumResults() != 1) {
      if (llvm::any_of(op.getResults(),
                       [&](Value r) { return adjoints.count(r); }))
        return diagnosticOp->emitError()
               << "epl-autodiff: cannot differentiate '" << op.getName()
               << "' (" << op.getNumResults()
               << " results) in the body of this op";
      continue;
    }
    Value result = op.getResult(0);
    Value g = adjoints.lookup(result);
    // `wrt` may be an op's result (a gather's): its adjoint is complete.
    if (!g || result == wrt)
      continue;
    Type type = result.getType();
    auto operand = [&](unsigned i) { return primalOf(op.getOperand(i)); };
    Value r = primalOf(result);

    LogicalResult handled =
        llvm::TypeSwitch<Operation *, LogicalResult>(&op)
            .Case([&](arith::AddFOp) {
              accumulate(op.getOperand(0), g);
              accumulate(op.getOperand(1), g);
              return success();
            })
            .Case([&](arith::SubFOp) {
              accumulate(op.getOperand(0), g);
              if (dependsOnWrt.contains(op.getOperand(1)))
                accumulate(op.getOperand(1), neg(g));
              return success();
            })
            .Case([&](arith::MulFOp) {
              // d(a*b) = g*b da + g*a db; written g*other so that the
              // gradient of a multiply-add is again a multiply-add (GEMM).
              if (dependsOnWrt.contains(op.getOperand(0)))
                accumulate(op.getOperand(0), mul(g, operand(1)));
              if (dependsOnWrt.contains(op.getOperand(1)))
                accumulate(op.getOperand(1), mul(g, operand(0)));
              return success();
            })
            .Case([&](arith::DivFOp quotient) {
              // sigmoid' = s (1 - s), of the forward's s as PyTorch's
              // backward takes it: a loss of log(1 - s) divides by the
              // rounded 1 - s, which this cancels (the chain through
              // exp(-x) does not: -log(1 - sigmoid(x))'s derivative at
              // x = 16 was 0.944, not sigmoid(16) = 1).
              if (Value x = sigmoidInput(quotient)) {
                Value one = constant(type, 1.0);
                accumulate(
                    x, mul(g, mul(r, arith::SubFOp::create(b, loc, one, r))));
                return success();
              }
              if (dependsOnWrt.contains(op.getOperand(0)))
                accumulate(op.getOperand(0), divided(g, operand(1)));
              if (dependsOnWrt.contains(op.getOperand(1)))
                // d(a/b)/db = -(a/b)/b
                accumulate(op.getOperand(1),
                           neg(scaled(g, div(r, operand(1)))));
              return success();
            })
            .Case([&](arith::NegFOp) {
              accumulate(op.getOperand(0), neg(g));
              return success();
            })
            .Case<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                  arith::MinNumFOp>([&](Operation *) {
              // The operand that wins takes the gradient. On a tie with a
              // constant (relu = max(x, 0), either operand order) the
              // constant wins: relu'(0) = 0, as PyTorch's. Two values that
              // vary and tie: maximumf/minimumf give each half, as
              // torch.maximum; maxnumf/minnumf the first, as torch.fmax,
              // which also passes it to the value beside a NaN (its result).
              bool isMax = isa<arith::MaximumFOp, arith::MaxNumFOp>(op);
              bool num = isa<arith::MaxNumFOp, arith::MinNumFOp>(op);
              auto wins =
                  isMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT;
              Value zero = constant(type, 0.0);
              Value a = operand(0), bb = operand(1);
              bool aVaries = variesPerElement.contains(op.getOperand(0));
              bool bVaries = variesPerElement.contains(op.getOperand(1));
              Value tie = cmp(arith::CmpFPredicate::OEQ, a, bb);
              auto share = [&](Value mine, Value other, Value atTie) {
                Value strictly = cmp(wins, mine, other);
                if (num)
                  strictly = arith::OrIOp::create(
                      b, loc, strictly,
                      cmp(arith::CmpFPredicate::UNO, other, other));
                return select(strictly, g, select(tie, atTie, zero));
              };
              Value half = mul(g, constant(type, 0.5));
              bool both = aVaries && bVaries;
              Value aAtTie = !both ? zero : num ? g : half;
              Value bAtTie = !both ? zero : num ? zero : half;
              accumulate(op.getOperand(0), share(a, bb, aAtTie));
              accumulate(op.getOperand(1), share(bb, a, bAtTie));
              return success();
            })
            .Case([&](arith::SelectOp) {
              Value zero = constant(type, 0.0);
              accumulate(op.getOperand(1), select(operand(0), g, zero));
              accumulate(op.getOperand(2), select(operand(0), zero, g));
              return success();
            })
            .Case([&](arith::ExtFOp) {
              accumulate(op.getOperand(0),
                         arith::TruncFOp::create(
                             b, loc, op.getOperand(0).getType(), g));
              return success();
            })
            .Case([&](arith::TruncFOp) {
              accumulate(
                  op.getOperand(0),
                  arith::ExtFOp::create(b, loc, op.getOperand(0).getType(), g));
              return success();
            })
            .Case([&](math::ExpOp) {
              accumulate(op.getOperand(0), scaled(g, r));
              return success();
            })
            .Case([&](math::LogOp) {
              accumulate(op.getOperand(0), divided(g, operand(0)));
              return success();
            })
            .Case([&](math::TanhOp) {
              // 1 - tanh^2
              Value one = constant(type, 1.0);
              accumulate(op.getOperand(0),
                         mul(g, arith::SubFOp::create(b, loc, one, mul(r, r))));
              return success();
            })
            .Case([&](math::SqrtOp) {
              // 1 / (2 sqrt(x))
              accumulate(op.getOperand(0),
                         divided(g, mul(constant(type, 2.0), r)));
              return success();
            })
            .Case([&](math::RsqrtOp) {
              // -1/2 x^{-3/2} = -1/2 r^3
              Value r3 = mul(mul(r, r), r);
              accumulate(op.getOperand(0),
                         scaled(g, mul(constant(type, -0.5), r3)));
              return success();
            })
            .Case([&](math::ErfOp) {
              // 2/sqrt(pi) exp(-x^2)
              Value x = operand(0);
              Value e = math::ExpOp::create(b, loc, neg(mul(x, x)));
              accumulate(op.getOperand(0),
                         mul(g, mul(constant(type, 2.0 / std::sqrt(M_PI)), e)));
              return success();
            })
            .Case([&](math::AbsFOp) {
              // g sign(x), with sign(0) = 0 as PyTorch's: an L1 penalty on
              // a zero-initialized bias has no gradient there.
              Value zero = constant(type, 0.0);
              Value positive = cmp(arith::CmpFPredicate::OGT, operand(0), zero);
              Value negative = cmp(arith::CmpFPredicate::OLT, operand(0), zero);
              accumulate(op.getOperand(0),
                         select(positive, g, select(negative, neg(g), zero)));
              return success();
            })
            .Case([&](math::PowFOp) {
              // d/da a^b = b a^(b-1); d/db a^b = a^b ln a
              Value a = operand(0), e = operand(1);
              if (dependsOnWrt.contains(op.getOperand(0))) {
                Value em1 =
                    arith::SubFOp::create(b, loc, e, constant(type, 1.0));
                accumulate(
                    op.getOperand(0),
                    scaled(g, mul(e, math::PowFOp::create(b, loc, a, em1))));
              }
              if (dependsOnWrt.contains(op.getOperand(1)))
                accumulate(op.getOperand(1),
                           scaled(g, mul(r, math::LogOp::create(b, loc, a))));
              return success();
            })
            .Case([&](math::FPowIOp p) {
              // d/dx x^n = n x^(n-1), n an integer.
              Value n = p.getRhs();
              Value nm1 = arith::SubIOp::create(
                  b, loc, n,
                  arith::ConstantOp::create(b, loc, n.getType(),
                                            b.getIntegerAttr(n.getType(), 1)));
              Value nf = arith::SIToFPOp::create(b, loc, type, n);
              accumulate(op.getOperand(0),
                         scaled(g, mul(nf, math::FPowIOp::create(
                                               b, loc, operand(0), nm1))));
              return success();
            })
            .Case([&](math::Exp2Op) {
              accumulate(op.getOperand(0),
                         scaled(g, mul(r, constant(type, std::log(2.0)))));
              return success();
            })
            .Case([&](math::ExpM1Op) {
              // e^x = expm1(x) + 1
              accumulate(op.getOperand(0),
                         scaled(g, arith::AddFOp::create(b, loc, r,
                                                         constant(type, 1.0))));
              return success();
            })
            .Case([&](math::Log1pOp) {
              accumulate(
                  op.getOperand(0),
                  divided(g, arith::AddFOp::create(b, loc, operand(0),
                                                   constant(type, 1.0))));
              return success();
            })
            .Case([&](math::Log2Op) {
              accumulate(
                  op.getOperand(0),
                  divided(g, mul(operand(0), constant(type, std::log(2.0)))));
              return success();
            })
            .Case([&](math::Log10Op) {
              accumulate(
                  op.getOperand(0),
                  divided(g, mul(operand(0), constant(type, std::log(10.0)))));
              return success();
            })
            .Case<math::FloorOp, math::CeilOp, math::RoundOp, math::RoundEvenOp,
                  math::TruncOp>([&](Operation *) {
              // Piecewise constant: zero almost everywhere, as in PyTorch.
              return success();
            })
            .Case([&](math::SinOp) {
              accumulate(op.getOperand(0),
                         mul(g, math::CosOp::create(b, loc, operand(0))));
              return success();
            })
            .Case([&](math::CosOp) {
              accumulate(op.getOperand(0),
                         neg(mul(g, math::SinOp::create(b, loc, operand(0)))));
              return success();
            })
            .Default([&](Operation *) {
              return diagnosticOp->emitError()
                     << "epl-autodiff: cannot differentiate '" << op.getName()
                     << "' in the body of this op";
            });
    if (failed(handled))
      return failure();
  }
  return adjoints.lookup(wrt);
}
