//===- TieInPlaceArguments.cpp - Results written over their arguments -----===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLTIEINPLACEARGUMENTSPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
struct EPLTieInPlaceArgumentsPass
    : public mlir::epl::impl::EPLTieInPlaceArgumentsPassBase<
          EPLTieInPlaceArgumentsPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    // (argument, the argument whose buffer it shares); the verifier checked
    // the indices and the types.
    SmallVector<std::pair<unsigned, unsigned>> ties;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (auto of = fn.getArgAttrOfType<IntegerAttr>(
              i, EPLDialect::kInPlaceOfAttrName))
        ties.push_back({i, of.getInt()});
    // A chain (a result in place of a result) or two results in one
    // argument's buffer would say two things of one buffer.
    DenseMap<unsigned, unsigned> tiedTo;
    for (auto [i, target] : ties) {
      if (fn.getArgAttr(target, EPLDialect::kInPlaceOfAttrName)) {
        fn.emitOpError() << "argument " << i << ": '"
                         << EPLDialect::kInPlaceOfAttrName
                         << "' names argument " << target
                         << ", which is itself written in place of another";
        return signalPassFailure();
      }
      if (auto [it, inserted] = tiedTo.try_emplace(target, i); !inserted) {
        fn.emitOpError() << "arguments " << it->second << " and " << i
                         << " are both written in place of argument " << target;
        return signalPassFailure();
      }
    }
    for (auto [i, target] : ties) {
      fn.removeArgAttr(i, EPLDialect::kInPlaceOfAttrName);
      fn.getArgument(i).replaceAllUsesWith(fn.getArgument(target));
      ++numTied;
    }
  }
};
} // namespace
