//===- OutlineKernels.cpp - One function per linalg op on buffers ---------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/Support/TextKey.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

#define DEBUG_TYPE "epl-outline-kernels"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLOUTLINEKERNELSPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
/// The buffer a view of it (subview, reshape, cast) was taken from.
Value bufferOf(Value view) {
  while (auto viewLike = view.getDefiningOp<ViewLikeOpInterface>())
    view = viewLike.getViewSource();
  return view;
}

/// Whether no two memref arguments can share memory. Only buffers whose
/// origin is known count: an allocation is none of the function's
/// arguments, no other allocation and no global; two globals of different
/// names are different. Anything else (two of the function's arguments, which
/// the runner may pass as one buffer; a buffer chosen by `arith.select`,
/// yielded by a loop or made by an op that is not a view, such as
/// `memref.transpose`) may be any buffer.
bool distinctBuffers(ValueRange arguments) {
  enum class Origin { Allocation, Global, Argument, Unknown };
  auto originOf = [](Value buffer) {
    if (buffer.getDefiningOp<memref::AllocOp>() ||
        buffer.getDefiningOp<memref::AllocaOp>())
      return Origin::Allocation;
    if (buffer.getDefiningOp<memref::GetGlobalOp>())
      return Origin::Global;
    auto arg = dyn_cast<BlockArgument>(buffer);
    if (arg && arg.getOwner()->isEntryBlock() &&
        isa<func::FuncOp>(arg.getOwner()->getParentOp()))
      return Origin::Argument;
    return Origin::Unknown;
  };
  SmallVector<Value> buffers;
  for (Value v : arguments) {
    // An unranked buffer could be any of the others.
    if (isa<UnrankedMemRefType>(v.getType()))
      return false;
    if (isa<MemRefType>(v.getType()))
      buffers.push_back(bufferOf(v));
  }
  for (auto [i, a] : llvm::enumerate(buffers))
    for (Value b : ArrayRef<Value>(buffers).drop_front(i + 1)) {
      if (a == b)
        return false;
      Origin x = originOf(a), y = originOf(b);
      if (x == Origin::Unknown || y == Origin::Unknown)
        return false;
      if (x == Origin::Allocation || y == Origin::Allocation)
        continue;
      if (x == Origin::Global && y == Origin::Global &&
          a.getDefiningOp<memref::GetGlobalOp>().getNameAttr() !=
              b.getDefiningOp<memref::GetGlobalOp>().getNameAttr())
        continue;
      return false;
    }
  return true;
}

struct EPLOutlineKernelsPass
    : public mlir::epl::impl::EPLOutlineKernelsPassBase<EPLOutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A copy between contiguous buffers is one memcpy. Any other (a pad's
    // interior, a transpose staged for BLAS) would be MLIR's `memrefCopy`,
    // which steps through the elements in a generic loop, a call per row:
    // as a `linalg.copy` it becomes a kernel of compiled, vectorized loops.
    module.walk([&](memref::CopyOp copy) {
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      // Unranked copies stay what they are: linalg needs ranks.
      if (!source || !target)
        return;
      if (memref::isStaticShapeAndContiguousRowMajor(source) &&
          memref::isStaticShapeAndContiguousRowMajor(target))
        return;
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy->erase();
      ++numCopies;
    });
    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() &&
          !op->getParentOfType<linalg::LinalgOp>())
        ops.push_back(op);
    });

    int64_t next = 0;
    llvm::StringMap<func::FuncOp> kernels;
    // Kernels whose every call passes buffers that cannot overlap: their
    // pointer arguments are `noalias` in LLVM (see optimizeLLVMModule), so
    // the loop vectorizer needs no overlap checks; with them it leaves some
    // short loops scalar (the transposed-window patch copies of a
    // convolution's input gradient).
    llvm::DenseMap<Operation *, bool> noAlias;
    for (linalg::LinalgOp op : ops) {
      // Arguments: the operands, and values the body captures from above,
      // except constants, which are cloned.
      // A buffer the op reads and writes (an update in place) is one
      // argument: as two, the vectorizer would check at run time that they
      // do not overlap, find that they do, and run the scalar loop.
      SetVector<Value> captured;
      getUsedValuesDefinedAbove(op->getRegions(), captured);
      SetVector<Value> operands(llvm::from_range, op->getOperands());
      SmallVector<Value> arguments(operands.takeVector());
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
      auto kernel = func::FuncOp::create(
          b, op.getLoc(), "__epl_kernel",
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
      Operation *inner = kb.clone(*op, mapping);
      // Annotations of the step (phases, shardings) mean nothing inside a
      // kernel, and would keep identical kernels apart.
      for (NamedAttribute attr : inner->getDiscardableAttrs())
        if (attr.getName().strref().starts_with("epl."))
          inner->removeDiscardableAttr(attr.getName());
      func::ReturnOp::create(kb, op.getLoc());

      // Identical ops (the same layer in every block of a transformer, a
      // gradient's repeated accumulations) share one kernel: code and
      // compile time grow with the distinct ops, not with depth.
      std::string key = textKey(kernel);
      auto [it, inserted] = kernels.try_emplace(key, kernel);
      if (inserted) {
        kernel.setName((kKernelPrefix + Twine(next++)).str());
        ++numKernels;
      } else {
        kernel->erase();
        kernel = it->second;
      }

      noAlias.try_emplace(kernel, true).first->second &=
          distinctBuffers(arguments);

      OpBuilder callBuilder(op);
      func::CallOp::create(callBuilder, op.getLoc(), kernel, arguments);
      op->erase();
      ++numOps;
    }
    Builder b(module.getContext());
    for (auto [kernel, distinct] : noAlias) {
      if (!distinct)
        continue;
      auto passthrough = kernel->getAttrOfType<ArrayAttr>("passthrough");
      SmallVector<Attribute> attrs(passthrough.getValue());
      attrs.push_back(b.getStrArrayAttr({kNoAliasAttribute, "true"}));
      kernel->setAttr("passthrough", b.getArrayAttr(attrs));
    }
  }
};
} // namespace
