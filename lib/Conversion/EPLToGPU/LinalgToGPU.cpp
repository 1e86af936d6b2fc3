//===- LinalgToGPU.cpp - Linalg ops on buffers as GPU launches ------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Conversion/EPLToRuntime/BufferWrites.h"
#include "epl/Conversion/Passes.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLLINALGTOGPUPASS
#include "epl/Conversion/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;

namespace {
/// Whether a kernel may make `call`: with `allowHostCalls` (kernels run on
/// the host, --emulate-gpu), a call of the runtime (a gather's bounds
/// check); nothing else, so that the emulated kernels are the GPU's.
bool callable(CallOpInterface call, bool allowHostCalls) {
  auto callee = dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
  return allowHostCalls && callee &&
         callee.getLeafReference().getValue().starts_with("epl_rt_");
}

/// What a kernel's body cannot do: call a host function (the runtime), or
/// read a tensor (nothing but buffers lives on the device).
LogicalResult checkBody(linalg::LinalgOp op, bool allowHostCalls) {
  WalkResult walk = op->walk([&](Operation *inner) {
    if (auto call = dyn_cast<CallOpInterface>(inner);
        call && !callable(call, allowHostCalls)) {
      auto diag = op.emitOpError()
                  << "cannot run as a GPU kernel: its body calls a host "
                     "function";
      if (auto callee =
              dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee()))
        diag << " (" << callee << ")";
      diag.attachNote(inner->getLoc()) << "called here";
      return WalkResult::interrupt();
    }
    if (llvm::any_of(inner->getOperandTypes(),
                     llvm::IsaPred<RankedTensorType, UnrankedTensorType>)) {
      op.emitOpError()
              .append("cannot run as a GPU kernel: its body reads a tensor")
              .attachNote(inner->getLoc())
          << "read here";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// A launch of one thread per point of a loop nest of `sizes` (static
/// where known), flattened onto blocks of `threadsPerBlock` x-threads, the
/// innermost loop fastest, with a guard for the last block; `b` is left in
/// the guard and `point` holds the thread's indices. Null, and nothing
/// made, where the nest has no points.
gpu::LaunchOp createFlatLaunch(OpBuilder &b, Location loc,
                               ArrayRef<int64_t> staticSizes,
                               ArrayRef<Value> sizes, int64_t threadsPerBlock,
                               SmallVectorImpl<Value> &point) {
  // One dynamic size makes the count dynamic, whatever follows it.
  std::optional<int64_t> staticPoints;
  if (llvm::none_of(staticSizes, ShapedType::isDynamic)) {
    staticPoints = 1;
    for (int64_t size : staticSizes)
      *staticPoints *= size;
  }
  if (staticPoints == 0)
    return nullptr;
  auto constant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  int64_t threads =
      staticPoints ? std::min(*staticPoints, threadsPerBlock) : threadsPerBlock;
  Value blockSize = constant(threads);
  Value points, blocks;
  if (staticPoints) {
    points = constant(*staticPoints);
    blocks = constant(llvm::divideCeil(*staticPoints, threads));
  } else {
    points = constant(1);
    for (Value size : sizes)
      points = arith::MulIOp::create(b, loc, points, size);
    // At least one block: CUDA refuses an empty grid, and the guard below
    // leaves its threads idle.
    blocks = arith::MaxUIOp::create(
        b, loc, arith::CeilDivUIOp::create(b, loc, points, blockSize),
        constant(1));
  }
  Value one = constant(1);
  auto launch =
      gpu::LaunchOp::create(b, loc, blocks, one, one, blockSize, one, one);

  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value linear = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, blockSize),
      launch.getThreadIds().x);
  Value inside =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear, points);
  auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
  b.setInsertionPoint(guard.thenYield());

  // The innermost loop varies fastest.
  point.assign(sizes.size(), Value());
  Value rest = linear;
  for (int64_t d = sizes.size() - 1; d >= 0; --d) {
    // The guard keeps the outermost index within its loop.
    if (d == 0) {
      point[d] = rest;
      break;
    }
    point[d] = arith::RemUIOp::create(b, loc, rest, sizes[d]);
    rest = arith::DivUIOp::create(b, loc, rest, sizes[d]);
  }
  return launch;
}

/// `op` as a launch of one thread per point of its parallel loops (all of
/// them flattened onto blocks of `threadsPerBlock` x-threads, the innermost
/// loop fastest, so that neighbouring threads touch neighbouring elements);
/// each thread runs the reduction loops in their order, keeping the
/// accumulators in registers. A thread computes exactly what the CPU's loop
/// nest computes for that point, in the same order.
/// `starts` holds, per result, the value its accumulators start from where
/// the fill that wrote it was dropped (null: the result's current value).
LogicalResult convertToLaunch(linalg::LinalgOp op, int64_t threadsPerBlock,
                              bool allowHostCalls, ArrayRef<Value> starts) {
  if (!op.hasPureBufferSemantics())
    return op.emitOpError("cannot run as a GPU kernel: it is not bufferized");
  if (failed(checkBody(op, allowHostCalls)))
    return failure();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> parallel, reduction;
  for (auto [d, it] : llvm::enumerate(iterators))
    (it == utils::IteratorType::parallel ? parallel : reduction).push_back(d);
  // A result indexed by a reduction loop (fusion makes them: an element-wise
  // producer's value at every point of its consumer's reduction) is read
  // and written at each point, as the CPU's loops do; it is only exact if
  // no two threads write one element.
  // Every result must be indexed by every parallel loop (each element
  // written by one thread), and as a permutation (no two points alias).
  SmallVector<bool> perPoint;
  SmallVector<int64_t> staticSizes = op.getStaticLoopRanges();
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    perPoint.push_back(llvm::any_of(
        reduction, [&](unsigned d) { return map.isFunctionOfDim(d); }));
    for (unsigned d : parallel)
      // (A loop of one point has one thread: a keep-dim result reads it
      // at 0.)
      if (!map.isFunctionOfDim(d) && staticSizes[d] != 1)
        return op.emitOpError("cannot run as a GPU kernel: result ")
               << init.getOperandNumber() - op.getNumDpsInputs()
               << " is not indexed by parallel loop d" << d
               << ", so several threads would write one element";
    // (Constants index unit dimensions: torch's keep-dim results.)
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return op.emitOpError("cannot run as a GPU kernel: result ")
             << init.getOperandNumber() - op.getNumDpsInputs()
             << " is indexed by " << AffineMapAttr::get(map)
             << ", not a projected permutation of the loops";
  }

  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  SmallVector<Value> sizes;
  for (Range &r : ranges)
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));

  // Every point of the parallel loops is one thread.
  SmallVector<int64_t> staticParallel;
  SmallVector<Value> parallelSizes;
  for (unsigned d : parallel) {
    staticParallel.push_back(staticSizes[d]);
    parallelSizes.push_back(sizes[d]);
  }
  SmallVector<Value> points;
  gpu::LaunchOp launch = createFlatLaunch(b, loc, staticParallel, parallelSizes,
                                          threadsPerBlock, points);
  if (!launch) {
    op->erase();
    return success();
  }
  SmallVector<Value> ivs(iterators.size());
  for (auto [d, point] : llvm::zip(parallel, points))
    ivs[d] = point;

  auto indices = [&](OpBuilder &builder, OpOperand &operand) {
    return *affine::expandAffineMap(builder, loc,
                                    op.getMatchingIndexingMap(&operand), ivs);
  };
  // Accumulators start from the results' current values, read only where
  // the body reads them.
  Block *body = op.getBlock();
  // (None where the body does not read it: then there is no reduction loop
  // to carry it either.)
  auto initialValue = [&](OpBuilder &builder, OpOperand &init,
                          bool accumulator) -> Value {
    if (accumulator || op.payloadUsesValueFromOperand(&init))
      return memref::LoadOp::create(builder, loc, init.get(),
                                    indices(builder, init));
    return Value();
  };
  SmallVector<Value> accumulators;
  for (auto [init, point, start] :
       llvm::zip(op.getDpsInitsMutable(), perPoint, starts))
    if (!point)
      accumulators.push_back(start ? start
                                   : initialValue(b, init, !reduction.empty()));

  // The point's value: the body on its inputs and accumulators; results
  // indexed by a reduction loop are read and written here.
  auto computePoint = [&](OpBuilder &builder,
                          ValueRange carried) -> SmallVector<Value> {
    SmallVector<Value> current;
    auto next = carried.begin();
    for (auto [init, point] : llvm::zip(op.getDpsInitsMutable(), perPoint))
      current.push_back(point ? initialValue(builder, init, false) : *next++);
    IRMapping mapping;
    for (OpOperand *input : op.getDpsInputOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(input);
      if (op.isScalar(input))
        mapping.map(arg, input->get());
      else
        mapping.map(arg, memref::LoadOp::create(builder, loc, input->get(),
                                                indices(builder, *input)));
    }
    for (auto [arg, value] : llvm::zip(op.getRegionOutputArgs(), current))
      if (value)
        mapping.map(arg, value);
    SmallVector<Value> results;
    for (Operation &inner : body->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      builder.clone(inner, mapping);
    }
    for (auto [init, point, v] :
         llvm::zip(op.getDpsInitsMutable(), perPoint,
                   body->getTerminator()->getOperands())) {
      if (point)
        memref::StoreOp::create(builder, loc, mapping.lookupOrDefault(v),
                                init.get(), indices(builder, init));
      else
        results.push_back(mapping.lookupOrDefault(v));
    }
    return results;
  };

  // Reduction loops, outermost first, carrying the accumulators.
  std::function<SmallVector<Value>(OpBuilder &, unsigned, ValueRange)> reduce =
      [&](OpBuilder &builder, unsigned k,
          ValueRange current) -> SmallVector<Value> {
    if (k == reduction.size())
      return computePoint(builder, current);
    unsigned d = reduction[k];
    auto loop = scf::ForOp::create(
        builder, loc, arith::ConstantIndexOp::create(builder, loc, 0), sizes[d],
        arith::ConstantIndexOp::create(builder, loc, 1), current,
        [&](OpBuilder &nested, Location, Value iv, ValueRange iterArgs) {
          ivs[d] = iv;
          scf::YieldOp::create(nested, loc, reduce(nested, k + 1, iterArgs));
        });
    return SmallVector<Value>(loop.getResults());
  };
  SmallVector<Value> results = reduce(b, 0, accumulators);
  auto result = results.begin();
  for (auto [init, point] : llvm::zip(op.getDpsInitsMutable(), perPoint))
    if (!point)
      memref::StoreOp::create(b, loc, *result++, init.get(), indices(b, init));

  op->erase();
  return success();
}

/// Whether `op` can move into a kernel: nothing in it allocates, launches,
/// ends a region or (unless allowed) calls the host.
bool movable(Operation *op, bool allowHostCalls) {
  if (op->hasTrait<OpTrait::IsTerminator>())
    return false;
  WalkResult walk = op->walk([&](Operation *inner) {
    auto call = dyn_cast<CallOpInterface>(inner);
    if ((call && !callable(call, allowHostCalls)) ||
        isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
            gpu::LaunchOp>(inner) ||
        (inner->hasTrait<OpTrait::ReturnLike>() && !isa<scf::YieldOp>(inner)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

/// The ops from `first` on in its block that must move with it: every op
/// using a value made in the range, until none is used after it (a scalar
/// loaded, computed on and stored back, as a one-element scatter-add
/// folds to). Null where one of them cannot move. Buffers freed in the
/// range (each at its last use) are freed after it instead: `deferred`.
std::optional<SmallVector<Operation *>>
rangeFrom(Operation *first, bool allowHostCalls,
          SmallVectorImpl<Operation *> &deferred) {
  Block *block = first->getBlock();
  Operation *last = first;
  for (Operation *op = first;; op = op->getNextNode()) {
    if (isa<memref::DeallocOp>(op) && op != first) {
      deferred.push_back(op);
      if (op == last)
        break;
      continue;
    }
    if (!movable(op, allowHostCalls))
      return std::nullopt;
    op->walk([&](Operation *inner) {
      for (Value result : inner->getResults())
        for (Operation *user : result.getUsers())
          if (Operation *there = block->findAncestorOpInBlock(*user))
            if (last->isBeforeInBlock(there))
              last = there;
    });
    if (op == last)
      break;
  }
  SmallVector<Operation *> range;
  for (Operation *op = first;; op = op->getNextNode()) {
    if (!llvm::is_contained(deferred, op))
      range.push_back(op);
    if (op == last)
      return range;
  }
}

/// A bufferized `scf.forall` (a scatter-add's rows,
/// epl-parallelize-scatters) as a launch of one thread per iteration, each
/// running the iteration's body. Its iterations are independent by the
/// op's definition. False, and nothing changed, where the body cannot move
/// into a kernel: then its buffer accesses run as one thread, like any
/// other host loop.
bool convertForallToLaunch(scf::ForallOp forall, int64_t threadsPerBlock,
                           bool allowHostCalls) {
  if (forall.getNumResults() != 0)
    return false;
  for (Operation &op : forall.getBody()->without_terminator())
    if (!movable(&op, allowHostCalls))
      return false;
  OpBuilder b(forall);
  Location loc = forall.getLoc();
  SmallVector<OpFoldResult> lbs = forall.getMixedLowerBound();
  SmallVector<OpFoldResult> ubs = forall.getMixedUpperBound();
  SmallVector<OpFoldResult> steps = forall.getMixedStep();
  // Iteration counts, ceil((ub - lb) / step), the step being positive.
  SmallVector<int64_t> staticCounts;
  SmallVector<Value> counts;
  for (auto [lb, ub, step] : llvm::zip(lbs, ubs, steps)) {
    std::optional<int64_t> l = getConstantIntValue(lb),
                           u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    if (l && u && s) {
      int64_t count = *u <= *l ? 0 : llvm::divideCeilSigned(*u - *l, *s);
      staticCounts.push_back(count);
      counts.push_back(arith::ConstantIndexOp::create(b, loc, count));
      continue;
    }
    staticCounts.push_back(ShapedType::kDynamic);
    Value lower = getValueOrCreateConstantIndexOp(b, loc, lb);
    Value upper = getValueOrCreateConstantIndexOp(b, loc, ub);
    Value span = arith::SubIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, upper, lower), lower);
    counts.push_back(arith::CeilDivUIOp::create(
        b, loc, span, getValueOrCreateConstantIndexOp(b, loc, step)));
  }
  SmallVector<Value> point;
  gpu::LaunchOp launch =
      createFlatLaunch(b, loc, staticCounts, counts, threadsPerBlock, point);
  if (launch) {
    Block *body = forall.getBody();
    for (auto [iv, p, lb, step] :
         llvm::zip(forall.getInductionVars(), point, lbs, steps)) {
      // iv = lb + p * step
      Value at = p;
      if (!isConstantIntValue(step, 1))
        at = arith::MulIOp::create(
            b, loc, at, getValueOrCreateConstantIndexOp(b, loc, step));
      if (!isZeroInteger(lb))
        at = arith::AddIOp::create(
            b, loc, getValueOrCreateConstantIndexOp(b, loc, lb), at);
      iv.replaceAllUsesWith(at);
    }
    Operation *yield = b.getInsertionBlock()->getTerminator();
    for (Operation &op : llvm::make_early_inc_range(body->without_terminator()))
      op.moveBefore(yield);
  }
  forall->erase();
  return true;
}

/// Whether `op` is nested in a GPU launch or kernel.
bool onDevice(Operation *op) {
  return op->getParentOfType<gpu::LaunchOp>() ||
         op->getParentOfType<gpu::GPUModuleOp>();
}

struct EPLLinalgToGPUPass
    : public mlir::epl::impl::EPLLinalgToGPUPassBase<EPLLinalgToGPUPass> {
  using Base::Base;

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Pass::initializeOptions(options, errorHandler)))
      return failure();
    if (threadsPerBlock < 1 || threadsPerBlock > 1024)
      return errorHandler("epl-linalg-to-gpu: threads-per-block must be "
                          "between 1 and 1024, not " +
                          Twine(static_cast<int64_t>(threadsPerBlock)));
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();

    // Copies are element-wise ops too.
    module.walk([&](memref::CopyOp copy) {
      if (onDevice(copy))
        return;
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy->erase();
    });

    // Constants the kernels read are copied to device memory where they
    // are read (a constant global lives in host memory).
    module.walk([&](memref::GetGlobalOp get) {
      if (onDevice(get))
        return;
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          get, get.getNameAttr());
      if (global && global->hasAttr(epl::EPLDialect::kHostGlobalAttrName))
        return;
      // Read in a nested block (a loop's body, a branch that may yield
      // it), the constant is copied once, at the function's start, and
      // lives for the function.
      Block *home = get->getBlock();
      if (auto function = get->getParentOfType<FunctionOpInterface>()) {
        Block &entry = function.getFunctionBody().front();
        if (home != &entry) {
          get->moveBefore(&entry, entry.begin());
          home = &entry;
        }
      }
      OpBuilder b(get);
      b.setInsertionPointAfter(get);
      auto device =
          memref::AllocOp::create(b, get.getLoc(), get.getType()).getResult();
      get.getResult().replaceAllUsesWith(device);
      gpu::MemcpyOp::create(b, get.getLoc(), Type(), ValueRange(), device,
                            get.getResult());
      // Freed where the function returns, unless it returns the copy.
      Operation *end = home->getTerminator();
      if (end->hasTrait<OpTrait::ReturnLike>() &&
          !llvm::is_contained(end->getOperands(), device)) {
        b.setInsertionPoint(end);
        memref::DeallocOp::create(b, get.getLoc(), device);
      }
      ++numConstants;
    });

    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) {
      if (!onDevice(op))
        ops.push_back(op);
    });
    // A reduction whose result a fill wrote just before (a sum's zeros, a
    // max's lowest value), or a copy of a filled buffer, starts its
    // accumulators from the fill's value and writes every element of it:
    // the fill (or copy) is one launch and one pass over memory that
    // change nothing.
    llvm::DenseMap<Operation *, SmallVector<Value>> starts;
    llvm::SmallPtrSet<Operation *, 16> dropped;
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics() || op.getNumReductionLoops() == 0)
        continue;
      // Each result the op writes whole, and nothing else of the op reads
      // or writes its buffer: then its fill's values are all overwritten
      // unread.
      auto alone = [&](OpOperand &init) {
        Value root = epl::rootBuffer(init.get());
        for (OpOperand &other : op->getOpOperands())
          if (&other != &init && isa<BaseMemRefType>(other.get().getType()) &&
              epl::rootBuffer(other.get()) == root)
            return false;
        return true;
      };
      auto wholeResult = [&](OpOperand &init) {
        AffineMap map = op.getMatchingIndexingMap(&init);
        auto type = cast<MemRefType>(init.get().getType());
        for (auto [d, e] : llvm::enumerate(map.getResults())) {
          // A reduction loop indexing it: read and written along it.
          if (auto dim = dyn_cast<AffineDimExpr>(e);
              dim && op.getIteratorTypesArray()[dim.getPosition()] ==
                         utils::IteratorType::reduction)
            return false;
          // A constant writes one index of its dimension: whole only when
          // that is the dimension's one (torch's keep-dim results).
          if (isa<AffineConstantExpr>(e) && type.getDimSize(d) != 1)
            return false;
          if (!isa<AffineDimExpr, AffineConstantExpr>(e))
            return false;
        }
        return true;
      };
      SmallVector<Value> values;
      for (OpOperand &init : op.getDpsInitsMutable()) {
        Operation *writer = epl::lastTouch(init.get(), op);
        Value value;
        if (writer && !dropped.contains(writer) && wholeResult(init) &&
            alone(init)) {
          value = epl::filledWith(writer, init.get());
          // Bufferization copies a filled buffer that several reductions
          // start from: the copy goes, the fill stays for the others.
          auto copy = dyn_cast<linalg::CopyOp>(writer);
          if (!value && copy && copy.getOutputs()[0] == init.get())
            value = epl::filledWith(epl::lastWrite(copy.getInputs()[0], copy),
                                    copy.getInputs()[0]);
        }
        if (value)
          dropped.insert(writer);
        values.push_back(value);
      }
      starts[op] = std::move(values);
    }
    for (linalg::LinalgOp op : ops) {
      if (dropped.contains(op)) {
        op->erase();
        ++numFillsDropped;
        continue;
      }
      SmallVector<Value> none(op.getNumDpsInits());
      auto it = starts.find(op);
      if (failed(convertToLaunch(op, threadsPerBlock, allowHostCalls,
                                 it == starts.end() ? none : it->second)))
        return signalPassFailure();
      ++numLaunches;
    }

    // A loop whose iterations are independent (a scatter-add's rows): one
    // thread per iteration, outermost loops first.
    SmallVector<scf::ForallOp> foralls;
    module.walk<WalkOrder::PreOrder>([&](scf::ForallOp forall) {
      if (!onDevice(forall))
        foralls.push_back(forall);
    });
    for (scf::ForallOp forall : foralls)
      if (!onDevice(forall) &&
          convertForallToLaunch(forall, threadsPerBlock, allowHostCalls))
        ++numParallel;

    // Whatever else reads or writes a buffer (the loops a scatter-add
    // decomposes into) runs as one GPU thread, in its order: the outermost
    // op around it that can move into a kernel does, whole.
    SmallVector<Operation *> accesses;
    module.walk([&](Operation *op) {
      if (!onDevice(op) &&
          isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp,
              memref::GenericAtomicRMWOp>(op))
        accesses.push_back(op);
    });
    for (Operation *access : accesses) {
      if (onDevice(access))
        continue; // in code an earlier access moved
      Operation *first = access;
      while (!isa<FunctionOpInterface>(first->getParentOp()) &&
             movable(first->getParentOp(), allowHostCalls))
        first = first->getParentOp();
      SmallVector<Operation *> deferred;
      std::optional<SmallVector<Operation *>> range =
          rangeFrom(first, allowHostCalls, deferred);
      if (!range) {
        access->emitOpError(
            "cannot run on the GPU target: it reads or writes a buffer on the "
            "host, where the step's buffers are not, beside an allocation, "
            "call or launch");
        return signalPassFailure();
      }
      Location loc = first->getLoc();
      OpBuilder b(first);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
      b.setInsertionPointToEnd(&launch.getBody().front());
      auto terminator = gpu::TerminatorOp::create(b, loc);
      for (Operation *op : *range)
        op->moveBefore(terminator);
      for (Operation *dealloc : llvm::reverse(deferred))
        dealloc->moveAfter(launch);
      ++numSequential;
    }
  }
};
} // namespace
