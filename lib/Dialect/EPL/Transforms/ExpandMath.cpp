//===- ExpandMath.cpp - Transcendental functions as vectorizable code -----===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

namespace mlir::epl {
#define GEN_PASS_DEF_EPLEXPANDMATHPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;

namespace {
/// Upstream's f32 approximations of `log` and `log2` read a subnormal input
/// as 2^-126, and `exp` flushes a subnormal result to 0 (log(1e-40) was
/// -87.3, not -92.1; exp(-88) was 0, not 6.0e-39). Around the one
/// approximation, the input is scaled into the normal range and the result
/// scaled back: exact, since a power of two moves the exponent alone.
void keepSubnormals(Operation *root) {
  // 2^64: as far as a subnormal can need (2^-149 * 2^64 is normal) and
  // no further (exp's shifted argument stays above its underflow).
  constexpr float kScale = 0x1p64f, kUnscale = 0x1p-64f;
  const float kScaleLog = 64 * llvm::numbers::ln2f;
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<math::LogOp, math::Log2Op, math::ExpOp>(op) &&
        getElementTypeOrSelf(op->getResult(0).getType()).isF32())
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value x = op->getOperand(0);
    Type type = x.getType();
    auto constant = [&](float value) -> Value {
      return arith::ConstantOp::create(
          b, loc, type,
          isa<ShapedType>(type)
              ? cast<TypedAttr>(SplatElementsAttr::get(
                    cast<ShapedType>(type), b.getF32FloatAttr(value)))
              : cast<TypedAttr>(b.getF32FloatAttr(value)));
    };
    bool isExp = isa<math::ExpOp>(op);
    // exp(x) = exp(x + 64 ln 2) 2^-64 where the result is subnormal
    // (x < -87: e^-87 is 2^-125.5); log(x) = log(x 2^64) - 64 ln 2 where x
    // is subnormal (x < 2^-126).
    Value small = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OLT, x,
        constant(isExp ? -87.0f : std::numeric_limits<float>::min()));
    Value scaled =
        isExp
            ? arith::AddFOp::create(b, loc, x, constant(kScaleLog)).getResult()
            : arith::MulFOp::create(b, loc, x, constant(kScale)).getResult();
    Value in = arith::SelectOp::create(b, loc, small, scaled, x);
    Operation *approx = b.clone(*op);
    approx->setOperand(0, in);
    Value y = approx->getResult(0);
    Value back;
    if (isExp)
      back = arith::MulFOp::create(b, loc, y, constant(kUnscale));
    else
      back = arith::SubFOp::create(
          b, loc, y, constant(isa<math::Log2Op>(op) ? 64.0f : kScaleLog));
    Value result = arith::SelectOp::create(b, loc, small, back, y);
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
  }
}

struct EPLExpandMathPass
    : public mlir::epl::impl::EPLExpandMathPassBase<EPLExpandMathPass> {
  void runOnOperation() override {
    keepSubnormals(getOperation());
    RewritePatternSet patterns(&getContext());
    populateMathAlgebraicSimplificationPatterns(patterns);
    // The functions a training step uses whose approximations stay within a
    // few ulp of libm; trigonometric ones are left to libm.
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return llvm::is_contained({"math.exp", "math.expm1", "math.log",
                                 "math.log1p", "math.log2", "math.erf",
                                 "math.tanh"},
                                name);
    });
    // Only the math ops and what their rewrites make: a whole-module run
    // would visit (and try to fold) every op of the step, a cost that grows
    // with the model's depth for the few ops these patterns match.
    SmallVector<Operation *> mathOps;
    getOperation()->walk([&](Operation *op) {
      if (isa_and_nonnull<math::MathDialect>(op->getDialect()))
        mathOps.push_back(op);
    });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(mathOps, std::move(patterns), config))) {
      // The driver says nothing when it gives up.
      getOperation()->emitError()
          << "epl-expand-math: its rewrites did not converge";
      signalPassFailure();
    }
  }
};
} // namespace
