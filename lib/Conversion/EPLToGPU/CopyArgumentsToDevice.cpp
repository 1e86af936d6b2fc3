//===- CopyArgumentsToDevice.cpp - A GPU step's host boundary -------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Conversion/Passes.h"
#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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

/// The first and last ops of `block` that use one of `values` or a buffer
/// that may alias it, if every use is in `block` or nested in it and no
/// alias leaves a region.
std::optional<std::pair<Operation *, Operation *>>
useSpan(ArrayRef<Value> values, Block &block) {
  Operation *first = nullptr, *last = nullptr;
  SmallVector<Value> worklist(values);
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (Operation *user : v.getUsers()) {
      Operation *at = block.findAncestorOpInBlock(*user);
      if (!at)
        return std::nullopt;
      // Yielded, the buffer is a result of the op around: its uses are not
      // followed (the copy lives for the whole function instead).
      if (user->hasTrait<OpTrait::IsTerminator>() && user != at)
        return std::nullopt;
      if (!first || at->isBeforeInBlock(first))
        first = at;
      if (!last || last->isBeforeInBlock(at))
        last = at;
      // Any buffer an op makes from it may alias it: a view, and also
      // what is no view to MLIR (memref.transpose, which
      // epl-matmul-to-runtime makes for a GEMM operand read transposed;
      // arith.select of two buffers).
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          worklist.push_back(result);
    }
  }
  if (!first || last->hasTrait<OpTrait::IsTerminator>())
    return std::nullopt;
  return std::make_pair(first, last);
}

/// The runtime's device copy of `arg`'s host buffer that lives across calls
/// (epl_rt_resident_buffer), as a memref of `arg`'s static, dense type;
/// `reader` is the op that reads `arg`'s address.
Value residentBuffer(OpBuilder &b, Location loc, Value arg, bool written,
                     func::FuncOp runtime, const LLVMTypeConverter &converter,
                     Operation *&reader) {
  auto type = cast<MemRefType>(arg.getType());
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  reader = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, arg);
  Value address =
      arith::IndexCastOp::create(b, loc, b.getI64Type(), reader->getResult(0));
  Value host = LLVM::IntToPtrOp::create(b, loc, ptr, address);
  int64_t bytes =
      type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
  Value size = arith::ConstantIntOp::create(b, loc, bytes, 64);
  // An i32: an i1 crosses the C ABI without the extension C expects.
  Value mayWrite = arith::ConstantIntOp::create(b, loc, written, 32);
  Value device =
      func::CallOp::create(b, loc, runtime, ValueRange{host, size, mayWrite})
          .getResult(0);
  Value descriptor =
      MemRefDescriptor::fromStaticShape(b, loc, converter, type, device);
  return UnrealizedConversionCastOp::create(b, loc, type, descriptor)
      .getResult(0);
}

struct EPLCopyArgumentsToDevicePass
    : public mlir::epl::impl::EPLCopyArgumentsToDevicePassBase<
          EPLCopyArgumentsToDevicePass> {
  void runOnOperation() override {
    // EPL's offload v0: each buffer on the device only from its first use
    // to its last, not for the whole step.
    ModuleOp module = getOperation();
    bool aroundUse =
        epl::Config::get(module).getString("offload.level") == "v0";
    LLVMTypeConverter converter(&getContext());
    func::FuncOp runtime;
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (auto function : functions) {
      if (function.isPrivate() || function.isExternal())
        continue;
      Block &entry = function.getBody().front();
      // Pairs the runner passes one buffer for, a parameter or optimizer
      // state and its update written over it: that buffer stays on the
      // device from call to call (not with offload, whose point is that it
      // does not).
      DenseMap<unsigned, unsigned> partner;
      for (BlockArgument arg : entry.getArguments()) {
        auto of = function.getArgAttrOfType<IntegerAttr>(
            arg.getArgNumber(), epl::EPLDialect::kInPlaceOfAttrName);
        function.removeArgAttr(arg.getArgNumber(),
                               epl::EPLDialect::kInPlaceOfAttrName);
        if (!of)
          continue;
        // One buffer holds two values at most: a third would be written
        // back in no defined order.
        if (!partner.try_emplace(arg.getArgNumber(), of.getInt()).second ||
            !partner.try_emplace(of.getInt(), arg.getArgNumber()).second) {
          function.emitOpError("argument ")
              << of.getInt() << " is the buffer of more than one result ("
              << epl::EPLDialect::kInPlaceOfAttrName << ")";
          return signalPassFailure();
        }
      }
      DenseSet<unsigned> done;
      // Copies made on entry, in the arguments' order.
      OpBuilder top = OpBuilder::atBlockBegin(&entry);
      for (BlockArgument arg : entry.getArguments()) {
        auto type = dyn_cast<MemRefType>(arg.getType());
        if (!type || !done.insert(arg.getArgNumber()).second)
          continue;
        // With its partner, if it has one: both are one host buffer.
        SmallVector<Value> same{arg};
        if (auto it = partner.find(arg.getArgNumber()); it != partner.end()) {
          same.push_back(entry.getArgument(it->second));
          done.insert(it->second);
        }
        if (llvm::all_of(same, [](Value v) { return v.use_empty(); }))
          continue;
        std::optional<std::pair<Operation *, Operation *>> span;
        if (aroundUse && function.getBody().hasOneBlock())
          span = useSpan(same, entry);
        OpBuilder around(function.getContext());
        if (span)
          around.setInsertionPoint(span->first);
        OpBuilder &b = span ? around : top;
        Location loc = arg.getLoc();
        bool readOnly = true;
        for (Value v : same) {
          unsigned n = cast<BlockArgument>(v).getArgNumber();
          readOnly &= static_cast<bool>(
              function.getArgAttr(n, epl::EPLDialect::kReadOnlyAttrName));
          function.removeArgAttr(n, epl::EPLDialect::kReadOnlyAttrName);
        }
        if (same.size() == 2 && !aroundUse && type.hasStaticShape() &&
            type.getLayout().isIdentity() && !type.getMemorySpace()) {
          if (!runtime) {
            OpBuilder decl = OpBuilder::atBlockBegin(module.getBody());
            auto ptr = LLVM::LLVMPointerType::get(&getContext());
            runtime = func::FuncOp::create(
                decl, module.getLoc(), "epl_rt_resident_buffer",
                decl.getFunctionType(
                    {ptr, decl.getI64Type(), decl.getI32Type()}, {ptr}));
            runtime.setPrivate();
          }
          // Written (the result side is); the host buffer is stale until
          // the runner asks.
          Operation *reader;
          Value device = residentBuffer(b, loc, arg, !readOnly, runtime,
                                        converter, reader);
          for (Value v : same)
            v.replaceUsesWithIf(device, [&](OpOperand &use) {
              return use.getOwner() != reader;
            });
          ++numResident;
          continue;
        }
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
        for (Value v : same)
          v.replaceUsesWithIf(view, [&](OpOperand &use) {
            return !keep.contains(use.getOwner());
          });
        bool written = !readOnly && mayBeWritten(device, upload);
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
