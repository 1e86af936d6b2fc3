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
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      // The driver says nothing when it gives up.
      getOperation()->emitError()
          << "epl-expand-math: its rewrites did not converge";
      signalPassFailure();
    }
  }
};
} // namespace
