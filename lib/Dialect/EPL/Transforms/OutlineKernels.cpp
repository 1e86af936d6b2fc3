//===- OutlineKernels.cpp - One function per linalg op on buffers ---------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

#define DEBUG_TYPE "epl-outline-kernels"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLOUTLINEKERNELSPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
struct EPLOutlineKernelsPass
    : public mlir::epl::impl::EPLOutlineKernelsPassBase<EPLOutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() &&
          !op->getParentOfType<linalg::LinalgOp>())
        ops.push_back(op);
    });

    int64_t next = 0;
    for (linalg::LinalgOp op : ops) {
      // Arguments: the operands, and values the body captures from above,
      // except constants, which are cloned.
      SetVector<Value> captured;
      getUsedValuesDefinedAbove(op->getRegions(), captured);
      SmallVector<Value> arguments(op->getOperands());
      SmallVector<Operation *> constants;
      for (Value v : captured) {
        Operation *def = v.getDefiningOp();
        if (def && def->hasTrait<OpTrait::ConstantLike>())
          constants.push_back(def);
        else if (!llvm::is_contained(arguments, v))
          arguments.push_back(v);
      }

      auto parent = op->getParentOfType<func::FuncOp>();
      OpBuilder b(parent);
      std::string name = "__epl_kernel_" + std::to_string(next++);
      auto kernel = func::FuncOp::create(
          b, op.getLoc(), name,
          b.getFunctionType(ValueRange(arguments).getTypes(), {}));
      kernel.setPrivate();
      // Outlining is pointless if LLVM inlines it back.
      kernel->setAttr("passthrough",
                      b.getArrayAttr({b.getStringAttr("noinline")}));
      Block *body = kernel.addEntryBlock();
      OpBuilder kb = OpBuilder::atBlockBegin(body);
      IRMapping mapping;
      for (auto [outer, inner] : llvm::zip(arguments, body->getArguments()))
        mapping.map(outer, inner);
      for (Operation *c : constants)
        kb.clone(*c, mapping);
      kb.clone(*op, mapping);
      func::ReturnOp::create(kb, op.getLoc());

      OpBuilder callBuilder(op);
      func::CallOp::create(callBuilder, op.getLoc(), kernel, arguments);
      op->erase();
      ++numKernels;
    }
  }
};
} // namespace
