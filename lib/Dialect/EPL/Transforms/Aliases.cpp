//===- Aliases.cpp - Uses of a buffer through its aliases -----------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Aliases.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

SmallVector<OpOperand *> mlir::epl::usesThroughAliases(Value buffer) {
  SmallVector<OpOperand *> uses;
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      bool aliases = (view && view.getViewSource() == v) ||
                     (isMemoryEffectFree(user) && user->getNumRegions() == 0 &&
                      llvm::any_of(user->getResultTypes(), [](Type t) {
                        return isa<BaseMemRefType>(t);
                      }));
      if (aliases)
        llvm::append_range(worklist, user->getResults());
      else
        uses.push_back(&use);
    }
  }
  return uses;
}
