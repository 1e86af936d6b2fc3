//===- EstimateMemory.cpp - Static per-rank memory of a training step -----===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//
//
// Estimates, from the tensor-level program each device runs, the bytes it
// holds: its parameters, optimizer state and batch (what the runner passes
// in), its gradients, and the peak of the buffers the step itself allocates
// (activations and temporaries), by replaying what the CPU lowering does
// with them (see docs/memory.md):
//
// * one-shot bufferization writes an op's result into its destination
//   operand (linalg `outs`, insert_slice's dest, an scf.for iter_arg) when
//   nothing reads that buffer afterwards, and into a fresh buffer
//   otherwise; a destination that is a tensor.empty is always a fresh
//   buffer; arguments and constants are never written; slices and reshapes
//   are views of their source; a tensor later inserted into another is
//   built in that one's slice (empty-tensor elimination, run on a copy
//   first); an `scf.if` yields its branches' buffers, and what one branch
//   writes does not conflict with the other's reads;
// * collectives and receives allocate their result;
// * a call's results are buffers its caller allocates
//   (buffer-results-to-out-params), and the callee's own buffers add to the
//   caller's at the call;
// * a buffer dies at the last use of any value in it (the deallocation
//   pipeline and optimize-allocation-liveness); a use inside a loop of a
//   value from outside it lasts to the loop's end; what the step returns
//   lives to its end (the runner copies it out);
// * a strided view (a slice) passed to a call, a collective or a send is
//   copied into a contiguous buffer for the duration of that op;
// * a grouped send's buffer lives to the end of its run of messages, when
//   the group goes (the runtime holds back frees inside a group).
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/IR/EPLOps.h"
#include "epl/Dialect/EPL/Transforms/GemmPlan.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

#define DEBUG_TYPE "epl-estimate-memory"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLESTIMATEMEMORYPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
constexpr int64_t kEnd = std::numeric_limits<int64_t>::max() / 2;
/// Bufferization's allocations are 64-byte aligned, which the LLVM lowering
/// does by asking the runtime for that much more.
constexpr int64_t kAlignment = 64;

/// Bytes of a statically shaped tensor; 0 for anything else.
int64_t bytesOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  Type element = tensor.getElementType();
  int64_t bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 64;
  return tensor.getNumElements() * ((bits + 7) / 8);
}

/// Whether `op`'s result is a view of its first operand (no copy).
bool isView(Operation *op) {
  return isa<tensor::ExtractSliceOp, tensor::CollapseShapeOp,
             tensor::ExpandShapeOp, tensor::CastOp, tensor::ReshapeOp,
             ShardingConstraintOp>(op);
}

/// What one function holds; `peak` is the peak of its own buffers.
struct Estimate {
  int64_t params = 0, optState = 0, inputs = 0, grads = 0, peak = 0;
};

class Estimator {
public:
  Estimator(ModuleOp module, bool argumentsAroundUse, bool blas, bool explain)
      : argumentsAroundUse(argumentsAroundUse), blas(blas), explain(explain),
        symbols(module) {}

  /// The peak of the buffers `func` allocates, as the entry (its arguments
  /// read-only, its results live to its end) or as a `callee` (its
  /// arguments its caller's, writable, its results copied into buffers the
  /// caller allocates).
  int64_t peakOf(func::FuncOp func, bool callee);

  /// The entry's arguments and results are buffers of the device, each
  /// from its first use to its last (see the pass's option).
  const bool argumentsAroundUse;
  /// Contractions are the runtime's GEMMs (see the pass's option).
  const bool blas;
  /// Print what an entry holds at its peak (see the pass's option).
  const bool explain;

private:
  SymbolTable symbols;
  /// Callees' peaks without their results, computed once.
  DenseMap<Operation *, int64_t> calleePeaks;
  DenseSet<Operation *> inProgress;
};

/// The replay of one function.
class FunctionReplay {
public:
  FunctionReplay(Estimator &estimator, SymbolTable &symbols, func::FuncOp func,
                 bool callee)
      : estimator(estimator), symbols(symbols), func(func), callee(callee) {}

  int64_t run();

private:
  struct Buffer {
    int64_t bytes;
    int64_t alloc;
    SmallVector<Value> values;
    /// Lives through the whole function.
    bool pinned = false;
    /// Lives at least to this position.
    int64_t until = 0;
  };

  void number(Operation *root);
  void visitBlock(Block &block);
  void visit(Operation *op);
  /// The buffer `result` of `op` is written into: `dest`'s when nothing
  /// reads that buffer after `op`, else a fresh one.
  void writeInto(Operation *op, Value result, Value dest);
  /// An empty tensor read as it is (a pooling's window shape) is allocated
  /// at that read.
  void readEmpty(Operation *op, Value value) {
    if (empties.contains(value) && !bufferOf.count(value))
      newBuffer(value, pos[op]);
  }
  /// A buffer for `value` from `at`, of its size plus `padding`.
  int newBuffer(Value value, int64_t at, int64_t padding = kAlignment);
  void alias(Value value, Value of);
  bool conflicts(int buffer, Operation *writer);
  /// Whether `insert` puts back into `buffer` a value built in the same
  /// slice of it.
  bool insertsBack(tensor::InsertSliceOp insert, int buffer);
  /// Whether `use` reads the buffer's contents (a linalg operand its
  /// payload ignores does not).
  static bool reads(OpOperand &use);
  /// The position of `value`'s last use, loops accounted for.
  int64_t lastUse(Value value);
  /// A transient `bytes` during `op`, which `why` says (explain).
  void transient(Operation *op, int64_t bytes, const char *why) {
    if (bytes > 0)
      transients.push_back({pos[op], bytes, op, why});
  }
  /// Copies of strided views that `op` passes to the runtime or a call.
  void contiguousOperands(Operation *op);
  /// The contiguous copies the runtime's GEMM is handed of the operands of
  /// `op` that BLAS cannot read in place (epl-matmul-to-runtime's).
  void stagedGemmOperands(linalg::LinalgOp op);
  /// The entry's arguments as buffers from their first use to their last,
  /// each with the result written over it (`argumentsAroundUse`).
  void argumentsAroundUse();

  Estimator &estimator;
  SymbolTable &symbols;
  func::FuncOp func;
  bool callee;

  DenseMap<Operation *, int64_t> pos, endPos;
  /// The buffer of a value; values without one (arguments, constants) are
  /// absent. An empty tensor gets one at its first write.
  DenseMap<Value, int> bufferOf;
  DenseSet<Value> empties, stridedViews;
  /// Empty tensors the entry's results are built in, with the result's
  /// number.
  DenseMap<Value, unsigned> intoResults;
  /// The entry's results written over an argument (a parameter's or an
  /// optimizer state's update), with that argument's number.
  DenseMap<unsigned, unsigned> overArgument;
  SmallVector<Buffer> buffers;
  /// Bytes held during one op only: (position, bytes, the op).
  struct Transient {
    int64_t at, bytes;
    Operation *op;
    const char *why;
  };
  SmallVector<Transient> transients;
  /// Prints the buffers live at position `at`, the peak (`explain`).
  void explainPeak(int64_t at, int64_t peak);
  /// Where each buffer's last use is (explainPeak reads it).
  SmallVector<int64_t> ends;
};

void FunctionReplay::number(Operation *root) {
  int64_t next = 0;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) { pos[op] = next++; });
  root->walk<WalkOrder::PostOrder>([&](Operation *op) {
    int64_t end = pos[op];
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (!block.empty())
          end = std::max(end, endPos[&block.back()]);
    endPos[op] = end;
  });
}

int FunctionReplay::newBuffer(Value value, int64_t at, int64_t padding) {
  buffers.push_back({bytesOf(value.getType()) + padding, at, {value}});
  bufferOf[value] = buffers.size() - 1;
  return buffers.size() - 1;
}

void FunctionReplay::alias(Value value, Value of) {
  if (empties.contains(of) && !bufferOf.count(of)) {
    empties.insert(value);
    return;
  }
  if (stridedViews.contains(of))
    stridedViews.insert(value);
  auto it = bufferOf.find(of);
  if (it == bufferOf.end())
    return;
  int buffer = it->second;
  bufferOf[value] = buffer;
  buffers[buffer].values.push_back(value);
}

int64_t FunctionReplay::lastUse(Value value) {
  Operation *owner = value.getDefiningOp();
  if (!owner)
    owner = value.getParentBlock()->getParentOp();
  int64_t last = owner == func ? 0 : pos[owner];
  for (Operation *user : value.getUsers()) {
    int64_t at = pos[user];
    // Used in a loop that does not define it: read on every iteration.
    for (Operation *p = user->getParentOp(); p && !p->isAncestor(owner);
         p = p->getParentOp())
      if (isa<LoopLikeOpInterface>(p))
        at = std::max(at, endPos[p]);
    if (isa<func::ReturnOp>(user) && user->getParentOp() == func)
      at = kEnd;
    // A grouped send's buffer is read when its group goes, at the end of
    // its run of messages: the runtime frees it then.
    if (isGroupedMessage(user))
      for (Operation *next = user->getNextNode();
           next && (isGroupedMessage(next) || isInertBetweenMessages(next));
           next = next->getNextNode())
        if (isGroupedMessage(next))
          at = std::max(at, pos[next]);
    last = std::max(last, at);
  }
  return last;
}

/// Whether `a` and `b` are in different branches of an `scf.if` (or
/// `scf.index_switch`), so never run both.
static bool inExclusiveBranches(Operation *a, Operation *b) {
  for (Operation *p = a->getParentOp(); p; p = p->getParentOp()) {
    if (!p->isProperAncestor(b))
      continue;
    // The closest op holding both.
    if (!isa<scf::IfOp, scf::IndexSwitchOp>(p))
      return false;
    auto regionOf = [&](Operation *op) {
      for (Region &region : p->getRegions())
        if (region.findAncestorOpInRegion(*op))
          return &region;
      return static_cast<Region *>(nullptr);
    };
    return regionOf(a) != regionOf(b);
  }
  return false;
}

bool FunctionReplay::insertsBack(tensor::InsertSliceOp insert, int buffer) {
  // The inserted value, back through the destinations it was written into.
  Value v = insert.getSource();
  while (auto result = dyn_cast<OpResult>(v)) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(result.getOwner());
    if (!dps)
      break;
    v = dps.getTiedOpOperand(result)->get();
  }
  auto slice = v.getDefiningOp<tensor::ExtractSliceOp>();
  auto it = bufferOf.find(v);
  return slice && it != bufferOf.end() && it->second == buffer &&
         slice.isSameAs(insert,
                        [](OpFoldResult a, OpFoldResult b) { return a == b; });
}

bool FunctionReplay::conflicts(int buffer, Operation *writer) {
  int64_t at = pos[writer];
  for (Value v : buffers[buffer].values) {
    // A loop's results hold what its body writes last.
    if (Operation *def = v.getDefiningOp();
        def && def->isProperAncestor(writer))
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (user == writer || writer->isProperAncestor(user) || !reads(use))
        continue;
      // Putting back what was built in a slice of this buffer (empty-tensor
      // elimination's pairs) copies nothing.
      if (auto insert = dyn_cast<tensor::InsertSliceOp>(user);
          insert && use.get() == insert.getDest() &&
          insertsBack(insert, buffer))
        continue;
      int64_t when = pos[user];
      Operation *owner = v.getDefiningOp();
      if (!owner)
        owner = v.getParentBlock()->getParentOp();
      bool repeated = false;
      for (Operation *p = user->getParentOp(); p && !p->isAncestor(owner);
           p = p->getParentOp())
        if (isa<LoopLikeOpInterface>(p)) {
          when = std::max(when, endPos[p]);
          repeated = true;
        }
      // The other branch of an `scf.if` never runs after this one, unless
      // a loop runs them again with the value from before it.
      if (!repeated && inExclusiveBranches(user, writer))
        continue;
      if (when > at)
        return true;
    }
  }
  return false;
}

bool FunctionReplay::reads(OpOperand &use) {
  // As one-shot bufferization decides: a linalg operand (input or init) is
  // read when the payload uses its element (epl-fuse-elementwise leaves a
  // filled input unread once its scalar is read instead).
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(use.getOwner()))
    return linalgOp.payloadUsesValueFromOperand(&use);
  return true;
}

void FunctionReplay::writeInto(Operation *op, Value result, Value dest) {
  // An empty tensor's buffer is allocated at its first write (the
  // allocation moves to its first use).
  if (empties.contains(dest) && !bufferOf.count(dest)) {
    int buffer = newBuffer(dest, pos[op]);
    // The runner's result buffer, not the step's (empty-tensor
    // elimination in the lowering); around use, its device copy (not
    // padded: epl-copy-arguments-to-device allocates it), unless it is the
    // copy of the argument the result is written over.
    if (auto it = intoResults.find(dest); it != intoResults.end())
      buffers[buffer].bytes =
          estimator.argumentsAroundUse && !overArgument.count(it->second)
              ? bytesOf(dest.getType())
              : 0;
    buffers[buffer].values.push_back(result);
    bufferOf[result] = buffer;
    return;
  }
  // The entry's arguments are read-only: writing into one writes into a
  // copy the runner's wrapper makes before the call and frees after it.
  auto arg = dyn_cast<BlockArgument>(dest);
  if (arg && arg.getOwner() == &func.getBody().front() &&
      !bufferOf.count(dest)) {
    int buffer = newBuffer(dest, 0);
    if (conflicts(buffer, op)) {
      buffers.pop_back();
      bufferOf.erase(dest);
    } else {
      buffers[buffer].pinned = true;
    }
  }
  auto it = bufferOf.find(dest);
  // Putting back what was built in the same slice, in place, writes
  // nothing (built elsewhere, after a conflict, it is a copy).
  auto insert = dyn_cast<tensor::InsertSliceOp>(op);
  if (it != bufferOf.end() && insert && insertsBack(insert, it->second)) {
    auto source = bufferOf.find(insert.getSource());
    if (source != bufferOf.end() && source->second == it->second) {
      alias(result, dest);
      return;
    }
  }
  if (it == bufferOf.end() || conflicts(it->second, op)) {
    newBuffer(result, pos[op]);
    return;
  }
  int buffer = it->second;
  bufferOf[result] = buffer;
  buffers[buffer].values.push_back(result);
}

void FunctionReplay::contiguousOperands(Operation *op) {
  for (Value operand : op->getOperands())
    if (stridedViews.contains(operand))
      transient(op, bytesOf(operand.getType()) + kAlignment,
                "a contiguous copy of a strided operand");
}

/// The layout `value`'s buffer will have: row-major, or a slice's strides
/// in the buffer it is a view of.
static MemRefType layoutOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  auto rowMajor = MemRefType::get(type.getShape(), type.getElementType());
  auto slice = value.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice)
    return rowMajor;
  if (!type.hasStaticShape() || !slice.getSourceType().hasStaticShape() ||
      llvm::any_of(slice.getStaticOffsets(), ShapedType::isDynamic) ||
      llvm::any_of(slice.getStaticStrides(), ShapedType::isDynamic))
    return rowMajor;
  MemRefType source = layoutOf(slice.getSource());
  return memref::SubViewOp::inferRankReducedResultType(
      type.getShape(), source, slice.getStaticOffsets(), slice.getStaticSizes(),
      slice.getStaticStrides());
}

void FunctionReplay::stagedGemmOperands(linalg::LinalgOp op) {
  std::optional<GemmPlan> plan = planGemm(op);
  if (!plan)
    return;
  for (auto [i, operand] : llvm::enumerate(op->getOperands()))
    if (!plan->readsInPlace(i, layoutOf(operand)))
      // Allocated without alignment.
      transient(op, bytesOf(operand.getType()),
                "a contiguous copy of an operand the GEMM cannot read in "
                "place");
}

void FunctionReplay::visitBlock(Block &block) {
  for (Operation &op : block)
    visit(&op);
}

void FunctionReplay::visit(Operation *op) {
  if (isa<tensor::EmptyOp>(op) ||
      (isa<bufferization::AllocTensorOp>(op) && op->getNumOperands() == 0)) {
    empties.insert(op->getResult(0));
    return;
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    alias(slice.getResult(), slice.getSource());
    stridedViews.insert(slice.getResult());
    return;
  }
  if (isView(op)) {
    alias(op->getResult(0), op->getOperand(0));
    return;
  }
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
    for (OpOperand *input : dps.getDpsInputOperands())
      readEmpty(op, input->get());
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
        linalgOp && estimator.blas)
      stagedGemmOperands(linalgOp);
    for (OpResult result : op->getResults()) {
      Value dest = dps.getTiedOpOperand(result)->get();
      writeInto(op, result, dest);
    }
    return;
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    for (auto [init, arg, result] : llvm::zip(
             loop.getInitArgs(), loop.getRegionIterArgs(), loop.getResults())) {
      if (!isa<RankedTensorType>(init.getType()))
        continue;
      writeInto(op, result, init);
      alias(arg, result);
    }
    visitBlock(*loop.getBody());
    return;
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        visitBlock(block);
    // Its results are the buffers its branches yield (no copy), which live
    // as long as the results. A result that may be a value without a
    // buffer of this function (an argument, a constant: read-only) has no
    // buffer to write in either: a write into it copies.
    for (OpResult result : ifOp.getResults()) {
      bool everyBranch = true;
      SmallVector<int> yieldedBuffers;
      for (Region &region : op->getRegions()) {
        if (region.empty())
          continue;
        Value yielded = region.front().getTerminator()->getOperand(
            result.getResultNumber());
        if (stridedViews.contains(yielded))
          stridedViews.insert(result);
        auto it = bufferOf.find(yielded);
        if (it == bufferOf.end()) {
          everyBranch = false;
          continue;
        }
        if (!llvm::is_contained(yieldedBuffers, it->second))
          yieldedBuffers.push_back(it->second);
      }
      for (int buffer : yieldedBuffers)
        buffers[buffer].values.push_back(result);
      if (everyBranch && !yieldedBuffers.empty())
        bufferOf[result] = yieldedBuffers.front();
    }
    return;
  }
  for (Value operand : op->getOperands())
    readEmpty(op, operand);
  if (auto call = dyn_cast<func::CallOp>(op)) {
    contiguousOperands(op);
    // buffer-results-to-out-params allocates them, without alignment.
    for (Value result : call.getResults())
      if (isa<RankedTensorType>(result.getType()))
        newBuffer(result, pos[op], /*padding=*/0);
    if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
      if (!callee.isExternal())
        transient(op, estimator.peakOf(callee, /*callee=*/true),
                  "the callee's own buffers");
    return;
  }
  if (isa<CollectiveOpInterface>(op)) {
    contiguousOperands(op);
    // The runtime moves whole chunks: a gather or scatter along an inner
    // dimension moves its data through one more buffer.
    auto moved = [&](int64_t dim, Value through) {
      if (dim != 0)
        transient(op, bytesOf(through.getType()) + kAlignment,
                  "the runtime's staging of an inner-dimension move");
    };
    if (auto gather = dyn_cast<AllGatherOp>(op))
      moved(gather.getDim(), gather.getResult());
    else if (auto scatter = dyn_cast<ReduceScatterOp>(op))
      moved(scatter.getDim(), scatter.getInput());
    else if (auto a2a = dyn_cast<AllToAllOp>(op))
      moved(a2a.getSplitDim(), a2a.getInput());
    // epl-all-reduce-in-place writes a sum over its contributions when
    // nothing reads them after, in a buffer of this block.
    if (auto reduce = dyn_cast<AllReduceOp>(op)) {
      Value in = reduce.getInput();
      auto it = bufferOf.find(in);
      if (it != bufferOf.end() && !stridedViews.contains(in)) {
        Buffer &buffer = buffers[it->second];
        Value first = buffer.values.front();
        if (!buffer.pinned && isa<OpResult>(first) &&
            first.getParentBlock() == op->getBlock() &&
            llvm::all_of(buffer.values,
                         [&](Value v) { return lastUse(v) <= pos[op]; })) {
          bufferOf[reduce.getResult()] = it->second;
          buffer.values.push_back(reduce.getResult());
          return;
        }
      }
    }
    // The lowering allocates the result without alignment.
    for (Value result : op->getResults())
      if (isa<RankedTensorType>(result.getType()))
        newBuffer(result, pos[op], /*padding=*/0);
    return;
  }
  if (isa<func::ReturnOp>(op)) {
    // A returned argument, or a buffer returned twice, is copied.
    DenseSet<int> returned;
    for (Value v : op->getOperands()) {
      if (!isa<RankedTensorType>(v.getType()))
        continue;
      auto it = bufferOf.find(v);
      if (it != bufferOf.end() && returned.insert(it->second).second)
        continue;
      if (!callee)
        newBuffer(v, pos[op]);
    }
    return;
  }
  // Anything else that makes a tensor (constants aside) allocates it.
  if (!isa<arith::ConstantOp>(op))
    for (Value result : op->getResults())
      if (isa<RankedTensorType>(result.getType()))
        newBuffer(result, pos[op]);
  for (Region &region : op->getRegions())
    for (Block &block : region)
      visitBlock(block);
}

void FunctionReplay::argumentsAroundUse() {
  Block &entry = func.getBody().front();
  Operation *ret = entry.getTerminator();
  DenseMap<unsigned, unsigned> resultOf;
  for (auto [r, a] : overArgument)
    resultOf[a] = r;
  DenseSet<unsigned> builtInPlace;
  for (auto [empty, r] : intoResults)
    builtInPlace.insert(r);
  for (BlockArgument arg : func.getArguments()) {
    if (!isa<RankedTensorType>(arg.getType()))
      continue;
    // The device copy lives around the top-level ops that use the argument
    // or a view of it (epl-copy-arguments-to-device), and those that write
    // the result written over it.
    int64_t first = kEnd, last = -1;
    auto touch = [&](Operation *user) {
      Operation *top = entry.findAncestorOpInBlock(*user);
      first = std::min(first, pos[top]);
      last = std::max(last, endPos[top]);
    };
    SmallVector<Value> worklist{arg};
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      for (Operation *user : v.getUsers()) {
        // Returned as it is: copied to the device for the whole step.
        if (user == ret) {
          first = 0;
          last = kEnd;
          continue;
        }
        touch(user);
        // A select of two arguments is one of their buffers: each device
        // copy lives until the select's last reader.
        if (isView(user) || isa<arith::SelectOp>(user))
          worklist.push_back(user->getResult(0));
      }
    }
    if (auto it = resultOf.find(arg.getArgNumber()); it != resultOf.end()) {
      Value update = ret->getOperand(it->second);
      Operation *def = update.getDefiningOp();
      touch(def && def->getBlock() == &entry ? def : ret);
      // Not built in the result's buffer: copied there on return.
      if (!builtInPlace.contains(it->second))
        touch(ret);
    }
    if (first == kEnd)
      continue;
    buffers.push_back({bytesOf(arg.getType()), first, {}});
    buffers.back().until = last;
  }
  // A result built elsewhere is copied into its own device buffer on
  // return.
  for (auto [r, v] : llvm::enumerate(ret->getOperands()))
    if (!overArgument.count(r) && !builtInPlace.contains(r))
      transient(ret, bytesOf(v.getType()),
                "a result copied into its own buffer on return");
}

int64_t FunctionReplay::run() {
  number(func);
  if (!callee && estimator.argumentsAroundUse)
    for (auto [r, a] : getArgumentUpdates(func))
      overArgument[r] = a;
  // The entry's results are written into the runner's buffers: a result
  // built in an empty tensor (through destinations and loop inits, as
  // the lowering's empty-tensor elimination traces it) is built in its
  // result buffer.
  if (!callee)
    for (auto [r, returned] :
         llvm::enumerate(func.getBody().front().getTerminator()->getOperands()))
      for (Value v = returned; auto result = dyn_cast<OpResult>(v);) {
        Operation *def = result.getOwner();
        if (isa<tensor::EmptyOp>(def)) {
          intoResults[v] = r;
          break;
        }
        if (def->getParentOp() != func)
          break;
        if (auto loop = dyn_cast<scf::ForOp>(def)) {
          v = loop.getInitArgs()[result.getResultNumber()];
          continue;
        }
        auto dps = dyn_cast<DestinationStyleOpInterface>(def);
        if (!dps)
          break;
        v = dps.getTiedOpOperand(result)->get();
      }
  // A callee's arguments are its caller's buffers.
  if (callee)
    for (BlockArgument arg : func.getArguments())
      if (isa<RankedTensorType>(arg.getType()))
        buffers[newBuffer(arg, 0, 0)].bytes = 0;
  visitBlock(func.getBody().front());
  if (!callee && estimator.argumentsAroundUse)
    argumentsAroundUse();
  // (position, +bytes) at each allocation, (position, -bytes) after each
  // last use; frees first at a position.
  SmallVector<std::pair<int64_t, int64_t>> events;
  for (Buffer &buffer : buffers) {
    int64_t end = buffer.pinned ? kEnd : std::max(buffer.alloc, buffer.until);
    for (Value v : buffer.values)
      end = std::max(end, lastUse(v));
    ends.push_back(end);
    events.push_back({buffer.alloc, buffer.bytes});
    if (end < kEnd)
      events.push_back({end + 1, -buffer.bytes});
  }
  for (const Transient &t : transients) {
    events.push_back({t.at, t.bytes});
    events.push_back({t.at + 1, -t.bytes});
  }
  llvm::sort(events);
  int64_t live = 0, peak = 0, peakAt = 0;
  for (auto [at, bytes] : events) {
    live += bytes;
    if (live > peak) {
      peak = live;
      peakAt = at;
    }
  }
  if (!callee && estimator.explain && peak > 0)
    explainPeak(peakAt, peak);
  return peak;
}

void FunctionReplay::explainPeak(int64_t at, int64_t peak) {
  Operation *where = nullptr;
  func.walk([&](Operation *op) {
    if (pos.lookup(op) == at)
      where = op;
  });
  // "'linalg.matmul' at model.mlir:12:5": the user's line where there is
  // one.
  auto describe = [](Operation *op) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "'" << op->getName() << "'";
    FileLineColLoc file;
    op->getLoc()->walk([&](Location l) {
      if (auto f = dyn_cast<FileLineColLoc>(l); f && !file)
        file = f;
      return WalkResult::advance();
    });
    if (file)
      os << " at " << file.getFilename().getValue() << ":" << file.getLine()
         << ":" << file.getColumn();
    return s;
  };
  llvm::raw_ostream &os = llvm::outs();
  os << "memory estimate @" << func.getSymName() << ": peak " << peak
     << " bytes at " << (where ? describe(where) : "the start")
     << ", held by:\n";
  SmallVector<std::pair<int64_t, std::string>> held;
  for (auto [buffer, end] : llvm::zip_equal(buffers, ends)) {
    if (buffer.alloc > at || end < at || buffer.bytes == 0)
      continue;
    // Named by what it holds at the peak: the last op before it that
    // wrote it (an empty tensor is only its shape, a reshape or slice a
    // view of it).
    Value v = buffer.values.front();
    for (Value w : buffer.values)
      if (Operation *def = w.getDefiningOp();
          def && pos.lookup(def) <= at &&
          !isa<tensor::EmptyOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
               tensor::ExtractSliceOp, tensor::CastOp>(def))
        v = w;
    std::string what =
        isa<BlockArgument>(v)
            ? "argument " +
                  std::to_string(cast<BlockArgument>(v).getArgNumber())
            : describe(v.getDefiningOp());
    held.push_back({buffer.bytes, "the result of " + what});
  }
  for (const Transient &t : transients)
    if (t.at == at)
      held.push_back(
          {t.bytes, "during " + describe(t.op) + ": " + std::string(t.why)});
  // Largest first: what to look at to bring the peak down.
  llvm::stable_sort(
      held, [](const auto &a, const auto &b) { return a.first > b.first; });
  for (const auto &[bytes, what] : held)
    os << "  " << bytes << " bytes: " << what << "\n";
}

int64_t Estimator::peakOf(func::FuncOp func, bool callee) {
  if (callee) {
    auto it = calleePeaks.find(func);
    if (it != calleePeaks.end())
      return it->second;
    // A recursive call adds nothing: the estimate is of one activation.
    if (!inProgress.insert(func).second)
      return 0;
  }
  int64_t peak = FunctionReplay(*this, symbols, func, callee).run();
  if (callee) {
    inProgress.erase(func);
    calleePeaks[func] = peak;
  }
  return peak;
}

/// Arguments by kind, and gradients: what the step returns as `grad`, or
/// what the update reads that the step computed before it.
Estimate holdings(func::FuncOp func) {
  Estimate e;
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    auto kind = func.getArgAttrOfType<StringAttr>(i, EPLDialect::kArgAttrName);
    if (!kind)
      continue;
    int64_t bytes = bytesOf(arg.getType());
    // Model state (running statistics) is held like the parameters.
    if (kind.getValue() == "param" || kind.getValue() == "state")
      e.params += bytes;
    else if (kind.getValue() == "opt_state")
      e.optState += bytes;
    else if (kind.getValue() == "input" || kind.getValue() == "label")
      e.inputs += bytes;
  }
  DenseSet<Value> grads;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto kind =
        func.getResultAttrOfType<StringAttr>(i, EPLDialect::kResultAttrName);
    if (kind && kind.getValue() == "grad")
      e.grads += bytesOf(func.getResultTypes()[i]);
  }
  auto isOptimizer = [](Operation *op) {
    auto phase = op->getAttrOfType<PhaseAttr>(EPLDialect::kPhaseAttrName);
    return phase && phase.getValue() == Phase::Optimizer;
  };
  func.walk([&](Operation *op) {
    if (!isOptimizer(op))
      return;
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || isOptimizer(def) || isa<arith::ConstantOp>(def) ||
          !isa<RankedTensorType>(operand.getType()))
        continue;
      if (grads.insert(operand).second)
        e.grads += bytesOf(operand.getType());
    }
  });
  return e;
}

std::string formatBytes(int64_t bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (bytes >= 1024 * 1024)
    os << llvm::format("%.2f MiB", bytes / (1024.0 * 1024.0));
  else if (bytes >= 1024)
    os << llvm::format("%.1f KiB", bytes / 1024.0);
  else
    os << bytes << " B";
  return s;
}

struct EPLEstimateMemoryPass
    : public mlir::epl::impl::EPLEstimateMemoryPassBase<EPLEstimateMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    // The lowering decomposes aggregates (softmax) first; so does the
    // replay, on a copy.
    OwningOpRef<ModuleOp> copy = getOperation().clone();
    if (failed(decomposeAggregatedOps(*copy)))
      return signalPassFailure();
    // So does its empty-tensor elimination: a tensor later inserted into a
    // bigger one (a pooling's result into the spread copy its gradient
    // reads) is built in that one's buffer, which then lives from there.
    // Where its analysis gives up, the replay goes on without it (an
    // estimate, not the lowering).
    IRRewriter rewriter(copy->getContext());
    if (failed(bufferization::eliminateEmptyTensors(rewriter, *copy))) {
      copy = getOperation().clone();
      if (failed(decomposeAggregatedOps(*copy)))
        return signalPassFailure();
    }
    Estimator estimator(*copy, argumentsAroundUse, blas, explain);
    SymbolTable originals(getOperation());
    for (func::FuncOp func : copy->getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      Estimate e = holdings(func);
      e.peak = estimator.peakOf(func, /*callee=*/false);
      auto original = originals.lookup<func::FuncOp>(func.getSymName());
      Builder b(original);
      original->setAttr(
          EPLDialect::kMemoryEstimateAttrName,
          b.getDictionaryAttr({
              b.getNamedAttr("grads", b.getI64IntegerAttr(e.grads)),
              b.getNamedAttr("inputs", b.getI64IntegerAttr(e.inputs)),
              b.getNamedAttr("opt_state", b.getI64IntegerAttr(e.optState)),
              b.getNamedAttr("params", b.getI64IntegerAttr(e.params)),
              b.getNamedAttr("peak", b.getI64IntegerAttr(e.peak)),
          }));
      if (print)
        llvm::outs() << "memory estimate @" << func.getSymName() << ": params "
                     << formatBytes(e.params) << ", opt_state "
                     << formatBytes(e.optState) << ", inputs "
                     << formatBytes(e.inputs) << ", grads "
                     << formatBytes(e.grads) << ", peak buffers "
                     << formatBytes(e.peak) << " (" << e.peak << " bytes)\n";
    }
  }
};
} // namespace
