//===- CopyArgumentsToDevice.cpp - A GPU step's host boundary -------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Conversion/Passes.h"
#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLCOPYARGUMENTSTODEVICEPASS
#include "epl/Conversion/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;

namespace {
/// Whether anything but `upload` may write `buffer` through a view of it:
/// only reads by linalg inputs, loads and copies from it are known not to.
bool mayBeWritten(Value buffer, Operation *upload) {
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (user == upload)
        continue;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == v) {
        worklist.append(user->result_begin(), user->result_end());
        continue;
      }
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user))
        if (linalgOp.isDpsInput(&use))
          continue;
      if (isa<memref::LoadOp>(user))
        continue;
      if (auto copy = dyn_cast<memref::CopyOp>(user))
        if (copy.getSource() == v)
          continue;
      return true;
    }
  }
  return false;
}

/// The first and last ops of `block` that use `value` or a view of it, if
/// every use is in `block` or nested in it.
std::optional<std::pair<Operation *, Operation *>> useSpan(Value value,
                                                           Block &block) {
  Operation *first = nullptr, *last = nullptr;
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *at = block.findAncestorOpInBlock(*user);
      if (!at)
        return std::nullopt;
      if (!first || at->isBeforeInBlock(first))
        first = at;
      if (!last || last->isBeforeInBlock(at))
        last = at;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == v)
        worklist.append(user->result_begin(), user->result_end());
    }
  }
  if (!first || last->hasTrait<OpTrait::IsTerminator>())
    return std::nullopt;
  return std::make_pair(first, last);
}

struct EPLCopyArgumentsToDevicePass
    : public mlir::epl::impl::EPLCopyArgumentsToDevicePassBase<
          EPLCopyArgumentsToDevicePass> {
  void runOnOperation() override {
    // EPL's offload v0: each buffer on the device only from its first use
    // to its last, not for the whole step.
    bool aroundUse =
        epl::Config::get(getOperation()).getString("offload.level") == "v0";
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isPrivate() || function.isExternal())
        continue;
      Block &entry = function.getBody().front();
      // Copies made on entry, in the arguments' order.
      OpBuilder top = OpBuilder::atBlockBegin(&entry);
      for (BlockArgument arg : entry.getArguments()) {
        auto type = dyn_cast<MemRefType>(arg.getType());
        if (!type || arg.use_empty())
          continue;
        std::optional<std::pair<Operation *, Operation *>> span;
        if (aroundUse && function.getBody().hasOneBlock())
          span = useSpan(arg, entry);
        OpBuilder around(function.getContext());
        if (span)
          around.setInsertionPoint(span->first);
        OpBuilder &b = span ? around : top;
        Location loc = arg.getLoc();
        // The device copy has the argument's shape, in a dense layout.
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            sizes.push_back(memref::DimOp::create(b, loc, arg, d));
        auto dense = MemRefType::get(type.getShape(), type.getElementType());
        Value device = memref::AllocOp::create(b, loc, dense, sizes);
        Value view = device;
        if (dense != type)
          view = memref::CastOp::create(b, loc, type, device);
        auto upload =
            gpu::MemcpyOp::create(b, loc, Type(), ValueRange(), device, arg);
        SmallPtrSet<Operation *, 4> keep{upload};
        for (Value size : sizes)
          keep.insert(size.getDefiningOp());
        arg.replaceUsesWithIf(view, [&](OpOperand &use) {
          return !keep.contains(use.getOwner());
        });
        bool written =
            !function.getArgAttr(arg.getArgNumber(),
                                 epl::EPLDialect::kReadOnlyAttrName) &&
            mayBeWritten(device, upload);
        function.removeArgAttr(arg.getArgNumber(),
                               epl::EPLDialect::kReadOnlyAttrName);
        auto download = [&](OpBuilder &r) {
          if (written)
            gpu::MemcpyOp::create(r, loc, Type(), ValueRange(), arg, device);
          memref::DeallocOp::create(r, loc, device);
        };
        if (span) {
          OpBuilder r(span->second->getContext());
          r.setInsertionPointAfter(span->second);
          download(r);
          ++numOffloaded;
        } else {
          function.walk([&](func::ReturnOp ret) {
            OpBuilder r(ret);
            download(r);
          });
        }
        ++numArguments;
      }
    }
  }
};
} // namespace
