//===- FreeLocalBuffers.cpp - Deallocs of buffers nothing retains ---------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLFREELOCALBUFFERSPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;

namespace {
/// Whether `buffer` or a view of it may be one of `retained`, or may escape
/// where this walk cannot follow it: returned, yielded, forwarded into a
/// region, or turned into a memref by an op that is not a view.
bool mayReachRetained(Value buffer, const DenseSet<Value> &retained) {
  SmallVector<Value> worklist{buffer};
  DenseSet<Value> seen{buffer};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (retained.contains(v))
      return true;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<bufferization::DeallocOp>(user))
        continue;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == v) {
        for (Value r : user->getResults())
          if (seen.insert(r).second)
            worklist.push_back(r);
        continue;
      }
      // Region-branching ops (scf.for's iter_args, scf.if) may forward it
      // to block arguments; a linalg op on buffers reads or writes it.
      if (user->hasTrait<OpTrait::IsTerminator>() ||
          isa<RegionBranchOpInterface>(user) ||
          llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>))
        return true;
    }
  }
  return false;
}

struct EPLFreeLocalBuffersPass
    : public mlir::epl::impl::EPLFreeLocalBuffersPassBase<
          EPLFreeLocalBuffersPass> {
  void runOnOperation() override {
    getOperation()->walk([&](bufferization::DeallocOp dealloc) {
      DenseSet<Value> retained(dealloc.getRetained().begin(),
                               dealloc.getRetained().end());
      DenseMap<Value, unsigned> occurrences;
      for (Value m : dealloc.getMemrefs())
        ++occurrences[m];
      // A buffer that is itself retained is never freed here; unless the
      // ownership the dealloc computes for the retained values is used, it
      // needs no place in the list.
      bool ownershipUsed = !dealloc->use_empty();
      SmallVector<Value> memrefs, conditions;
      OpBuilder b(dealloc);
      for (auto [m, c] :
           llvm::zip(dealloc.getMemrefs(), dealloc.getConditions())) {
        if (!ownershipUsed && retained.contains(m))
          continue;
        if (occurrences[m] == 1 && matchPattern(c, m_One()) &&
            m.getDefiningOp<memref::AllocOp>() &&
            !mayReachRetained(m, retained)) {
          memref::DeallocOp::create(b, dealloc.getLoc(), m);
          ++numFreed;
          continue;
        }
        memrefs.push_back(m);
        conditions.push_back(c);
      }
      dealloc.getMemrefsMutable().assign(memrefs);
      dealloc.getConditionsMutable().assign(conditions);
    });
  }
};
} // namespace
