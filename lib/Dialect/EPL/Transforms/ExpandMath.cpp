//===- ExpandMath.cpp - Transcendental functions as vectorizable code -----===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLEXPANDMATHPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;

namespace {
struct EPLExpandMathPass
    : public mlir::epl::impl::EPLExpandMathPassBase<EPLExpandMathPass> {
  void runOnOperation() override {
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
