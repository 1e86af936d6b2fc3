//===- OptimizeAllocationLiveness.cpp - Frees at last use, linearly -------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//
//
// Upstream's optimize-allocation-liveness decides what it moves the same way,
// but orders ops with `isBeforeInBlock` after each move, which renumbers the
// whole block: quadratic in the size of a deep model's host code. Here each
// block is numbered once; a moved free takes a number between its anchor and
// the op after it.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLOPTIMIZEALLOCATIONLIVENESSPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;

namespace {

/// The one user of `value` that frees it; null with none or several.
Operation *onlyFree(Value value) {
  Operation *free = nullptr;
  for (Operation *user : value.getUsers()) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(user);
    if (!effects)
      continue;
    SmallVector<MemoryEffects::EffectInstance, 2> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &e : instances)
      if (isa<MemoryEffects::Free>(e.getEffect())) {
        if (free)
          return nullptr;
        free = user;
      }
  }
  return free;
}

/// The result of `op` it allocates, if exactly one.
OpResult onlyAllocation(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return nullptr;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  OpResult found;
  for (const MemoryEffects::EffectInstance &e : instances)
    if (isa<MemoryEffects::Allocate>(e.getEffect()))
      if (Value v = e.getValue(); v && v.getDefiningOp() == op) {
        if (found)
          return nullptr;
        found = cast<OpResult>(v);
      }
  return found;
}

/// Positions of a block's ops: (number, rank). Ops keep their number; a
/// free moved after op `a` takes `a`'s number and a rank above the ops
/// already there, below the earlier moves (upstream's `moveAfter` puts the
/// latest move first).
class Order {
public:
  std::pair<int64_t, int64_t> of(Operation *op) {
    Block *block = op->getBlock();
    if (numbered.insert(block).second) {
      int64_t n = 0;
      for (Operation &o : *block)
        positions[&o] = {n++, 0};
    }
    return positions.lookup(op);
  }
  bool before(Operation *a, Operation *b) { return of(a) < of(b); }
  /// Moves `op` right after `anchor`, unless `anchor` is a moved free,
  /// whose rank would order `op` wrong (a free uses only its own buffer,
  /// never a later buffer's alias, so the pipeline never asks that; `op`
  /// then stays where it is, later than needed but safe). Whether it moved.
  bool moveAfter(Operation *op, Operation *anchor) {
    std::pair<int64_t, int64_t> at = of(anchor);
    if (at.second != 0)
      return false;
    op->moveAfter(anchor);
    positions[op] = {at.first, kFirstRank - ++moves};
    return true;
  }

private:
  static constexpr int64_t kFirstRank = int64_t(1) << 62;
  DenseSet<Block *> numbered;
  DenseMap<Operation *, std::pair<int64_t, int64_t>> positions;
  int64_t moves = 0;
};

struct EPLOptimizeAllocationLivenessPass
    : public epl::impl::EPLOptimizeAllocationLivenessPassBase<
          EPLOptimizeAllocationLivenessPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    BufferViewFlowAnalysis analysis(func);
    Order order;
    func.walk([&](Operation *alloc) {
      OpResult buffer = onlyAllocation(alloc);
      if (!buffer)
        return;
      Operation *free = onlyFree(buffer);
      // Only a free in the allocation's block: never out of a conditional.
      if (!free || free->getBlock() != alloc->getBlock())
        return;
      Block *block = alloc->getBlock();
      Operation *last = nullptr;
      for (Value alias : analysis.resolve(buffer))
        for (Operation *user : alias.getUsers()) {
          if (user == free)
            continue;
          Operation *top = block->findAncestorOpInBlock(*user);
          if (!top)
            continue;
          if (!last || order.before(last, top))
            last = top;
        }
      if (!last)
        return;
      bool already = free->getPrevNode() == last;
      if (order.moveAfter(free, last) && !already)
        ++numMoved;
    });
  }
};

} // namespace
