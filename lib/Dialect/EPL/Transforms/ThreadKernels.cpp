//===- ThreadKernels.cpp - Kernels' outer loops over a rank's threads -----===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Descriptors.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "epl-thread-kernels"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLTHREADKERNELSPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
constexpr llvm::StringLiteral kParallelFor = "epl_rt_parallel_for";

/// For each operand of `op`, the dimension of it that loop `loop` indexes
/// (as a plain `d<loop>`), or -1 when it does not read that loop.
/// std::nullopt when some operand reads it otherwise (`d0 + d4`, twice), or
/// an output does not read it (its elements would be written by every
/// thread).
std::optional<SmallVector<int64_t>> splitDims(linalg::LinalgOp op,
                                              unsigned loop) {
  SmallVector<int64_t> dims;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    int64_t found = -1;
    for (auto [r, expr] : llvm::enumerate(map.getResults())) {
      if (!expr.isFunctionOfDim(loop))
        continue;
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim || found >= 0)
        return std::nullopt;
      found = r;
    }
    if (found < 0 && op.isDpsInit(&operand))
      return std::nullopt;
    if (found >= 0) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type || !type.hasStaticShape())
        return std::nullopt;
    }
    dims.push_back(found);
  }
  return dims;
}

struct EPLThreadKernelsPass
    : public mlir::epl::impl::EPLThreadKernelsPassBase<EPLThreadKernelsPass> {
  using Base::Base;

  /// Makes `kernel` run iterations [lo, hi) of its op's outermost loop (two
  /// new arguments; loops of one iteration before it do not count) and
  /// returns that loop's trip count; std::nullopt, and `kernel` unchanged,
  /// when it is not worth or not safe to split.
  std::optional<int64_t> splitOuterLoop(func::FuncOp kernel) {
    linalg::LinalgOp op;
    for (Operation &inner : kernel.front()) {
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(inner)) {
        if (op)
          return std::nullopt;
        op = linalgOp;
      }
    }
    if (!op || !op.hasPureBufferSemantics() || op.getNumLoops() == 0)
      return std::nullopt;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t points = 1;
    for (int64_t r : ranges) {
      if (ShapedType::isDynamic(r))
        return std::nullopt;
      points *= r;
    }
    // The outermost loop that has more than one iteration (an im2col tile
    // of one image starts with a loop of one).
    unsigned loop = 0;
    while (loop + 1 < ranges.size() && ranges[loop] == 1)
      ++loop;
    if (ranges[loop] < 2 || points < minIterations ||
        op.getIteratorTypesArray()[loop] != utils::IteratorType::parallel)
      return std::nullopt;
    // A body that reads its position along the loop would see it shifted;
    // one that calls out (a failed `cf.assert` ends the run through the
    // runtime, which knows the rank on the rank's own thread only) or
    // writes memory stays on the rank's thread.
    if (op->walk([&](Operation *inner) {
            if (auto index = dyn_cast<linalg::IndexOp>(inner))
              return index.getDim() == loop ? WalkResult::interrupt()
                                            : WalkResult::advance();
            if (inner == op.getOperation())
              return WalkResult::advance();
            if (isa<CallOpInterface>(inner) ||
                inner->getName().getDialectNamespace() == "cf" ||
                mightHaveEffect<MemoryEffects::Write>(inner) ||
                mightHaveEffect<MemoryEffects::Allocate>(inner) ||
                mightHaveEffect<MemoryEffects::Free>(inner))
              return WalkResult::interrupt();
            return WalkResult::advance();
          }).wasInterrupted())
      return std::nullopt;
    std::optional<SmallVector<int64_t>> dims = splitDims(op, loop);
    if (!dims)
      return std::nullopt;

    Block &body = kernel.front();
    Location loc = kernel.getLoc();
    IndexType index = IndexType::get(&getContext());
    Value lo = body.addArgument(index, loc), hi = body.addArgument(index, loc);
    kernel.setType(FunctionType::get(&getContext(), body.getArgumentTypes(),
                                     kernel.getResultTypes()));
    OpBuilder b(op);
    Value count = arith::SubIOp::create(b, loc, hi, lo);
    for (auto [operand, dim] : llvm::zip(op->getOpOperands(), *dims)) {
      if (dim < 0)
        continue;
      auto type = cast<MemRefType>(operand.get().getType());
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
          sizes, strides(type.getRank(), b.getIndexAttr(1));
      for (int64_t size : type.getShape())
        sizes.push_back(b.getIndexAttr(size));
      offsets[dim] = lo;
      sizes[dim] = count;
      operand.set(memref::SubViewOp::create(b, loc, operand.get(), offsets,
                                            sizes, strides));
    }
    return ranges[loop];
  }

  /// `@<kernel>_task(context, lo, hi)`: calls `kernel` with the arguments
  /// `context` points to (one pointer per argument, to its LLVM value) and
  /// iterations [lo, hi).
  func::FuncOp makeTask(func::FuncOp kernel,
                        const LLVMTypeConverter &converter) {
    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    OpBuilder b(kernel);
    Location loc = kernel.getLoc();
    auto task = func::FuncOp::create(b, loc, (kernel.getName() + "_task").str(),
                                     b.getFunctionType({ptr, i64, i64}, {}));
    task.setPrivate();
    Block *body = task.addEntryBlock();
    b.setInsertionPointToStart(body);
    SmallVector<Value> args;
    ArrayRef<Type> types = kernel.getArgumentTypes().drop_back(2);
    for (auto [i, type] : llvm::enumerate(types)) {
      Value slot =
          LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      Value valuePtr = LLVM::LoadOp::create(b, loc, ptr, slot);
      if (hasStaticLayout(type)) {
        // Kernels neither free nor reallocate: the allocated pointer is
        // never read, the aligned one stands for both.
        Value aligned = LLVM::LoadOp::create(b, loc, ptr, valuePtr);
        args.push_back(bufferAt(b, loc, cast<MemRefType>(type), aligned,
                                aligned, converter));
        continue;
      }
      Value value =
          LLVM::LoadOp::create(b, loc, converter.convertType(type), valuePtr);
      args.push_back(
          UnrealizedConversionCastOp::create(b, loc, type, value).getResult(0));
    }
    for (unsigned i : {1u, 2u})
      args.push_back(arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                body->getArgument(i)));
    func::CallOp::create(b, loc, kernel, args);
    func::ReturnOp::create(b, loc);
    return task;
  }

  /// What a caller's split calls share on its stack: the context array
  /// (as long as the longest call's arguments) and a slot per argument
  /// position and LLVM type; calls are synchronous, so one call's values
  /// are dead when the next stores its own.
  struct Frame {
    Value one, context;
    Operation *last = nullptr;
    llvm::DenseMap<std::pair<unsigned, Type>, Value> slots;
  };

  /// Replaces `call` (of a split kernel) by `epl_rt_parallel_for` of `task`
  /// over `extent` iterations; the arguments go in `frame`'s slots, made at
  /// the caller's entry (calls in loops reuse them).
  void launch(func::CallOp call, func::FuncOp task, int64_t extent,
              func::FuncOp parallelFor, const LLVMTypeConverter &converter,
              Frame &frame) {
    auto ptr = LLVM::LLVMPointerType::get(&getContext());
    Location loc = call.getLoc();
    OpBuilder entry(call->getContext());
    entry.setInsertionPointAfter(frame.last);
    OpBuilder b(call);
    for (auto [i, arg] : llvm::enumerate(call.getOperands())) {
      bool pointer = hasStaticLayout(arg.getType());
      Type llvmType =
          pointer ? Type(ptr) : converter.convertType(arg.getType());
      Value &slot = frame.slots[{static_cast<unsigned>(i), llvmType}];
      if (!slot) {
        slot = LLVM::AllocaOp::create(entry, loc, ptr, llvmType, frame.one);
        frame.last = slot.getDefiningOp();
        entry.setInsertionPointAfter(frame.last);
      }
      Value value = pointer
                        ? pointersOf(b, loc, arg, converter).second
                        : UnrealizedConversionCastOp::create(
                              b, loc, converter.convertType(arg.getType()), arg)
                              .getResult(0);
      LLVM::StoreOp::create(b, loc, value, slot);
      Value at =
          LLVM::GEPOp::create(b, loc, ptr, ptr, frame.context,
                              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      LLVM::StoreOp::create(b, loc, slot, at);
    }
    Value fn = func::ConstantOp::create(b, loc, task.getFunctionType(),
                                        SymbolRefAttr::get(task));
    Value count =
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(extent));
    func::CallOp::create(b, loc, parallelFor,
                         ValueRange{fn, frame.context, count});
    call->erase();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    LLVMTypeConverter converter(&getContext());
    // The calls of each kernel, gathered first: split kernels change type.
    llvm::MapVector<func::FuncOp, SmallVector<func::CallOp>> calls;
    SymbolTable symbols(module);
    module.walk([&](func::CallOp call) {
      if (!isKernelName(call.getCallee()))
        return;
      if (auto kernel = symbols.lookup<func::FuncOp>(call.getCallee()))
        calls[kernel].push_back(call);
    });
    func::FuncOp parallelFor;
    SmallVector<std::tuple<func::CallOp, func::FuncOp, int64_t>> launches;
    for (auto &[kernel, sites] : calls) {
      std::optional<int64_t> extent = splitOuterLoop(kernel);
      if (!extent)
        continue;
      ++numKernels;
      if (!parallelFor) {
        parallelFor = symbols.lookup<func::FuncOp>(kParallelFor);
        if (!parallelFor) {
          auto ptr = LLVM::LLVMPointerType::get(&getContext());
          auto i64 = IntegerType::get(&getContext(), 64);
          OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
          parallelFor = func::FuncOp::create(
              b, module.getLoc(), kParallelFor,
              b.getFunctionType(
                  {b.getFunctionType({ptr, i64, i64}, {}), ptr, i64}, {}));
          parallelFor.setPrivate();
        }
      }
      func::FuncOp task = makeTask(kernel, converter);
      for (func::CallOp call : sites)
        launches.push_back({call, task, *extent});
    }
    // Each caller's frame, its context as long as its longest call.
    llvm::MapVector<func::FuncOp, Frame> frames;
    llvm::DenseMap<func::FuncOp, unsigned> longest;
    for (auto &[call, task, extent] : launches) {
      auto caller = call->getParentOfType<func::FuncOp>();
      unsigned &n = longest[caller];
      n = std::max(n, call.getNumOperands());
    }
    auto ptr = LLVM::LLVMPointerType::get(&getContext());
    for (auto &[caller, n] : longest) {
      Frame &frame = frames[caller];
      OpBuilder entry = OpBuilder::atBlockBegin(&caller.front());
      Location loc = caller.getLoc();
      frame.one = LLVM::ConstantOp::create(entry, loc, entry.getI64Type(),
                                           entry.getI64IntegerAttr(1));
      frame.context = LLVM::AllocaOp::create(
          entry, loc, ptr, LLVM::LLVMArrayType::get(ptr, n), frame.one);
      frame.last = frame.context.getDefiningOp();
    }
    for (auto &[call, task, extent] : launches) {
      Frame &frame = frames[call->getParentOfType<func::FuncOp>()];
      launch(call, task, extent, parallelFor, converter, frame);
      ++numCalls;
    }
  }
};
} // namespace
