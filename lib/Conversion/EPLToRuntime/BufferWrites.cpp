//===- BufferWrites.cpp - What last wrote a buffer, on buffers ------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Conversion/EPLToRuntime/BufferWrites.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Value mlir::epl::rootBuffer(Value view) {
  while (true) {
    if (auto viewLike = view.getDefiningOp<ViewLikeOpInterface>())
      view = viewLike.getViewSource();
    // (Not a ViewLikeOpInterface, but a view all the same.)
    else if (auto transpose = view.getDefiningOp<memref::TransposeOp>())
      view = transpose.getIn();
    else
      return view;
  }
}

Operation *mlir::epl::lastTouch(Value buffer, Operation *before) {
  Value root = rootBuffer(buffer);
  for (Operation *prev = before->getPrevNode(); prev;
       prev = prev->getPrevNode()) {
    bool touches = false, calls = false;
    prev->walk([&](Operation *op) {
      calls |= isa<CallOpInterface>(op);
      for (Value operand : op->getOperands())
        touches |= isa<BaseMemRefType>(operand.getType()) &&
                   rootBuffer(operand) == root;
    });
    if (calls)
      return nullptr;
    if (touches)
      return prev;
  }
  return nullptr;
}

Operation *mlir::epl::lastWrite(Value buffer, Operation *before) {
  Value root = rootBuffer(buffer);
  auto isRoot = [&](Value v) {
    return isa<BaseMemRefType>(v.getType()) && rootBuffer(v) == root;
  };
  for (Operation *prev = before->getPrevNode(); prev;
       prev = prev->getPrevNode()) {
    // What each op writes, where that is known: its targets; any other op
    // touching the buffer might write it.
    if (auto copy = dyn_cast<memref::CopyOp>(prev)) {
      if (isRoot(copy.getTarget()))
        return prev;
      continue;
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(prev);
        linalgOp && linalgOp.hasPureBufferSemantics()) {
      if (llvm::any_of(linalgOp.getDpsInits(), isRoot))
        return prev;
      continue;
    }
    // (A call reaches a buffer only through its operands: buffers are the
    // function's own allocations or arguments.)
    bool touches = false;
    prev->walk([&](Operation *op) {
      touches |= llvm::any_of(op->getOperands(), isRoot);
    });
    if (touches)
      return prev;
  }
  return nullptr;
}

Value mlir::epl::filledWith(Operation *op, Value buffer) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getDpsInitOperand(0)->get() != buffer ||
      linalgOp.getNumDpsInputs() != 1)
    return Value();
  Value value = linalgOp.getDpsInputOperand(0)->get();
  if (value.getType() != getElementTypeOrSelf(buffer.getType()))
    return Value();
  if (isa<linalg::FillOp>(op))
    return value;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.getIndexingMapsArray().back().isIdentity())
    return Value();
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  return yield.getNumOperands() == 1 &&
                 yield.getOperand(0) == generic.getBody()->getArgument(0)
             ? value
             : Value();
}
