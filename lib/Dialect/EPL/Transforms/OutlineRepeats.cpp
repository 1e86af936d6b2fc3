//===- OutlineRepeats.cpp - Repeated host code as one function ------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//
//
// A model of N identical blocks lowers to host code that repeats N times:
// the same allocations, kernel calls and frees on other buffers. Every pass
// after this one, and LLVM's code generator, would handle each copy again.
// This pass moves one copy of each such run into a function and calls it
// once per copy, so the rest of compilation grows with the model's distinct
// code, not its depth.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/Descriptors.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"

#define DEBUG_TYPE "epl-outline-repeats"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLOUTLINEREPEATSPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {

/// `count` consecutive copies of `length` ops each, the first at `start`
/// (positions in the body's op list).
struct Repeat {
  size_t start;
  size_t length;
  size_t count;
  size_t saving() const { return (count - 1) * length; }
};

/// How one copy is wired, in the order a pre-order walk of its ops meets
/// their operands: for each operand, the number of the value inside the
/// copy it reads (values numbered in the same walk), or -1 for a value
/// from before the copy, an input.
struct Wiring {
  SmallVector<int64_t> operands;
  /// The inputs, in the order of the -1 entries of `operands`.
  SmallVector<Value> inputs;
  /// The copy's values by number.
  SmallVector<Value> values;
};

/// Discardable attributes outside the `epl.` namespace (which name where an
/// op came from, not what it does, and differ between copies).
SmallVector<NamedAttribute> meaningfulDiscardableAttrs(Operation *op) {
  SmallVector<NamedAttribute> kept;
  for (NamedAttribute attr : op->getDiscardableAttrs())
    if (!attr.getName().strref().starts_with("epl."))
      kept.push_back(attr);
  return kept;
}

/// A hash of what `op` is and does, blind to which values it reads.
llvm::hash_code signature(Operation *op) {
  llvm::hash_code hash = OperationEquivalence::computeHash(
      op, OperationEquivalence::ignoreHashValue,
      OperationEquivalence::ignoreHashValue,
      OperationEquivalence::IgnoreLocations |
          OperationEquivalence::IgnoreDiscardableAttrs);
  for (NamedAttribute attr : meaningfulDiscardableAttrs(op))
    hash = llvm::hash_combine(hash, attr.getName(), attr.getValue());
  return llvm::hash_combine(hash, op->getNumRegions());
}

/// Whether `lhs` and `rhs` are the same op, regions included, whatever
/// values they read (their wiring is compared separately).
bool sameOp(Operation *lhs, Operation *rhs) {
  return OperationEquivalence::isEquivalentTo(
             lhs, rhs, OperationEquivalence::ignoreValueEquivalence,
             /*markEquivalent=*/nullptr,
             OperationEquivalence::IgnoreLocations |
                 OperationEquivalence::IgnoreDiscardableAttrs) &&
         meaningfulDiscardableAttrs(lhs) == meaningfulDiscardableAttrs(rhs) &&
         [&] {
           // Nested ops' attributes too.
           bool same = true;
           SmallVector<Operation *> nested;
           rhs->walk([&](Operation *op) { nested.push_back(op); });
           size_t k = 0;
           lhs->walk([&](Operation *op) {
             same = same && k < nested.size() &&
                    meaningfulDiscardableAttrs(op) ==
                        meaningfulDiscardableAttrs(nested[k]);
             ++k;
           });
           return same && k == nested.size();
         }();
}

/// The function's arguments: one for each distinct tuple of values the
/// copies read at an input (an input every copy reads alike and that an
/// operand-free pure op makes is made again in the function instead, -1).
/// For each input, its argument; for each argument, its first input.
std::pair<SmallVector<int64_t>, SmallVector<size_t>>
arguments(ArrayRef<Wiring> copies) {
  const Wiring &first = copies.front();
  size_t numInputs = first.inputs.size();
  SmallVector<int64_t> argumentOf(numInputs, -1);
  SmallVector<size_t> argumentSlots;
  std::map<SmallVector<void *>, int64_t> tuples;
  for (size_t slot = 0; slot < numInputs; ++slot) {
    SmallVector<void *> tuple;
    for (const Wiring &wiring : copies)
      tuple.push_back(wiring.inputs[slot].getAsOpaquePointer());
    Operation *def = first.inputs[slot].getDefiningOp();
    if (llvm::all_equal(tuple) && def && def->getNumOperands() == 0 &&
        def->getNumRegions() == 0 && isMemoryEffectFree(def))
      continue;
    auto [it, inserted] = tuples.try_emplace(tuple, argumentSlots.size());
    if (inserted)
      argumentSlots.push_back(slot);
    argumentOf[slot] = it->second;
  }
  return {argumentOf, argumentSlots};
}

class Outliner {
public:
  Outliner(func::FuncOp func, SymbolTable &symbols, int64_t minOps,
           unsigned &nextName, const LLVMTypeConverter &converter)
      : func(func), symbols(symbols), minOps(minOps), nextName(nextName),
        converter(converter) {}

  /// Outlines the biggest saving repeat of the body, if any.
  FailureOr<Repeat> outlineOne(func::FuncOp &outlined);

private:
  void collect();
  SmallVector<Repeat> candidates() const;
  Wiring wire(size_t start, size_t length) const;
  bool allocatesOnStack(size_t start, size_t length) const;
  int64_t netSaving(const Repeat &repeat, ArrayRef<Wiring> copies,
                    ArrayRef<int64_t> read) const;
  std::optional<SmallVector<Wiring>> verify(Repeat &repeat) const;
  SmallVector<int64_t> results(const Repeat &repeat, ArrayRef<Wiring> copies);
  func::FuncOp outline(const Repeat &repeat, ArrayRef<Wiring> copies,
                       ArrayRef<int64_t> resultNumbers);

  func::FuncOp func;
  SymbolTable &symbols;
  int64_t minOps;
  /// The number the next outlined function's name takes.
  unsigned &nextName;
  const LLVMTypeConverter &converter;
  SmallVector<Operation *> ops;
  SmallVector<llvm::hash_code> signatures;
  DenseMap<Operation *, size_t> position;
};

void Outliner::collect() {
  ops.clear();
  signatures.clear();
  position.clear();
  for (Operation &op : func.getBody().front().without_terminator()) {
    position[&op] = ops.size();
    ops.push_back(&op);
    signatures.push_back(signature(&op));
  }
}

/// Periods at which signatures recur, the most frequent first, and for each
/// the runs of ops that repeat at it.
SmallVector<Repeat> Outliner::candidates() const {
  size_t n = ops.size();
  DenseMap<llvm::hash_code, SmallVector<size_t>> occurrences;
  for (auto [k, hash] : llvm::enumerate(signatures))
    occurrences[hash].push_back(k);
  // An op whose kind occurs a few times per copy recurs at the period within
  // its next few occurrences.
  constexpr size_t kLookahead = 8;
  DenseMap<size_t, size_t> votes;
  for (auto &[hash, at] : occurrences)
    for (size_t i = 0; i < at.size(); ++i)
      for (size_t t = 1; t <= kLookahead && i + t < at.size(); ++t) {
        size_t period = at[i + t] - at[i];
        if (period >= static_cast<size_t>(minOps) && 2 * period <= n)
          ++votes[period];
      }
  SmallVector<std::pair<size_t, size_t>> periods(votes.begin(), votes.end());
  llvm::sort(periods, [](auto a, auto b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  constexpr size_t kPeriods = 16;
  if (periods.size() > kPeriods)
    periods.resize(kPeriods);

  SmallVector<Repeat> repeats;
  for (size_t period : llvm::make_first_range(periods)) {
    size_t k = 0;
    while (k + period < n) {
      if (signatures[k] != signatures[k + period]) {
        ++k;
        continue;
      }
      size_t end = k;
      while (end + period < n && signatures[end] == signatures[end + period])
        ++end;
      // ops [k, end + period) repeat at `period`.
      size_t copies = (end - k) / period + 1;
      if (copies >= 2)
        repeats.push_back({k, period, copies});
      k = end;
    }
  }
  llvm::stable_sort(repeats, [](const Repeat &a, const Repeat &b) {
    return a.saving() > b.saving();
  });
  return repeats;
}

Wiring Outliner::wire(size_t start, size_t length) const {
  Wiring wiring;
  // Every value the copy defines is numbered first: in a region whose
  // blocks are not in dominance order, a use can come before its definition
  // in the walk.
  DenseMap<Value, int64_t> number;
  auto define = [&](Value value) {
    number[value] = wiring.values.size();
    wiring.values.push_back(value);
  };
  for (size_t k = start; k < start + length; ++k)
    ops[k]->walk<WalkOrder::PreOrder>([&](Operation *op) {
      for (Value result : op->getResults())
        define(result);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            define(arg);
    });
  for (size_t k = start; k < start + length; ++k)
    ops[k]->walk<WalkOrder::PreOrder>([&](Operation *op) {
      for (Value operand : op->getOperands()) {
        auto it = number.find(operand);
        if (it != number.end()) {
          wiring.operands.push_back(it->second);
        } else {
          wiring.operands.push_back(-1);
          wiring.inputs.push_back(operand);
        }
      }
    });
  return wiring;
}

/// Whether the copy at `start` allocates on the stack anywhere, nested
/// regions included: a stack buffer it hands on (as a result, through a
/// region's yield, through memory) would not outlive the call.
bool Outliner::allocatesOnStack(size_t start, size_t length) const {
  for (size_t k = start; k < start + length; ++k)
    if (ops[k]
            ->walk([](Operation *op) {
              return isa<memref::AllocaOp, LLVM::AllocaOp, LLVM::StackSaveOp>(
                         op)
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            })
            .wasInterrupted())
      return true;
  return false;
}

/// How many ops outlining `repeat` removes from the module, net of what the
/// calls and the function's convention add: positive only when the module
/// shrinks, so that outlining the calls of an earlier outlining never pays
/// and the pass ends.
int64_t Outliner::netSaving(const Repeat &repeat, ArrayRef<Wiring> copies,
                            ArrayRef<int64_t> read) const {
  const Wiring &first = copies.front();
  int64_t bufferArgs = 0, otherArgs = 0, bufferResults = 0, otherResults = 0;
  for (size_t slot : arguments(copies).second)
    ++(hasStaticLayout(first.inputs[slot].getType()) ? bufferArgs : otherArgs);
  for (int64_t r : read)
    ++(hasStaticLayout(first.values[r].getType()) ? bufferResults
                                                  : otherResults);
  // Counted after folding, as LLVM sees it: a buffer argument is two
  // pointer arguments, a buffer result two stores in the function and two
  // loads at each call (the descriptors around them fold away).
  int64_t perCall =
      1 + 2 * bufferArgs + otherArgs + 4 * bufferResults + 2 * otherResults;
  int64_t inFunction = 2 + 4 * bufferResults + otherResults;
  int64_t weight = 0;
  for (size_t k = repeat.start; k < repeat.start + repeat.length; ++k)
    ops[k]->walk([&](Operation *op) {
      // What folds or is a value of the descriptors, not code.
      if (!isa<UnrealizedConversionCastOp, LLVM::ExtractValueOp,
               LLVM::InsertValueOp, LLVM::PoisonOp, LLVM::UndefOp,
               LLVM::ConstantOp, arith::ConstantOp>(op))
        ++weight;
    });
  int64_t count = repeat.count;
  return (count - 1) * weight - count * perCall - inFunction;
}

/// The wiring of each copy of `repeat`, after trimming it to the copies that
/// match the first; std::nullopt when fewer than two do.
std::optional<SmallVector<Wiring>> Outliner::verify(Repeat &repeat) const {
  SmallVector<Wiring> copies;
  copies.push_back(wire(repeat.start, repeat.length));
  for (size_t c = 1; c < repeat.count; ++c) {
    size_t base = repeat.start + c * repeat.length;
    bool same = true;
    for (size_t k = 0; k < repeat.length && same; ++k)
      same = sameOp(ops[repeat.start + k], ops[base + k]);
    if (!same)
      break;
    Wiring wiring = wire(base, repeat.length);
    if (wiring.operands != copies.front().operands)
      break;
    copies.push_back(std::move(wiring));
  }
  repeat.count = copies.size();
  if (repeat.count < 2)
    return std::nullopt;
  return copies;
}

/// The numbers of the values some copy's later code reads: the function's
/// results.
SmallVector<int64_t> Outliner::results(const Repeat &repeat,
                                       ArrayRef<Wiring> copies) {
  Block &body = func.getBody().front();
  llvm::SetVector<int64_t> read;
  for (auto [c, wiring] : llvm::enumerate(copies)) {
    size_t begin = repeat.start + c * repeat.length;
    size_t end = begin + repeat.length;
    for (auto [number, value] : llvm::enumerate(wiring.values)) {
      if (isa<BlockArgument>(value) ||
          value.getDefiningOp()->getBlock() != &body)
        continue;
      for (Operation *user : value.getUsers()) {
        // The terminator has no position: it reads after every copy.
        auto at = position.find(body.findAncestorOpInBlock(*user));
        if (at == position.end() || at->second < begin || at->second >= end) {
          read.insert(number);
          break;
        }
      }
    }
  }
  SmallVector<int64_t> numbers(read.begin(), read.end());
  llvm::sort(numbers);
  return numbers;
}

func::FuncOp Outliner::outline(const Repeat &repeat, ArrayRef<Wiring> copies,
                               ArrayRef<int64_t> resultNumbers) {
  const Wiring &first = copies.front();
  size_t numInputs = first.inputs.size();
  MLIRContext *ctx = func->getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);

  auto [argumentOf, argumentSlots] = arguments(copies);

  // The calling convention: a buffer of static layout crosses as its two
  // pointers (its descriptor would be 3 + 2 x rank arguments, unpacked and
  // repacked at every call), and comes back through `out`, an array of
  // pointer pairs in the caller's frame, instead of in an aggregate that
  // LLVM's fast instruction selector cannot return.
  SmallVector<Type> argumentTypes, resultTypes;
  for (size_t slot : argumentSlots) {
    Type type = first.inputs[slot].getType();
    if (hasStaticLayout(type))
      argumentTypes.append({ptr, ptr});
    else
      argumentTypes.push_back(type);
  }
  SmallVector<int64_t> outSlot(resultNumbers.size(), -1);
  int64_t numOut = 0;
  for (auto [k, r] : llvm::enumerate(resultNumbers)) {
    Type type = first.values[r].getType();
    if (hasStaticLayout(type))
      outSlot[k] = numOut++;
    else
      resultTypes.push_back(type);
  }
  if (numOut)
    argumentTypes.push_back(ptr);

  Location loc = ops[repeat.start]->getLoc();
  OpBuilder builder(ctx);
  builder.setInsertionPointAfter(func);
  std::string name;
  do
    name = "__epl_repeat_" + std::to_string(nextName++);
  while (symbols.lookup(name));
  auto function = func::FuncOp::create(
      builder, loc, name, builder.getFunctionType(argumentTypes, resultTypes));
  function.setPrivate();
  symbols.insert(function);
  Block *entry = function.addEntryBlock();
  builder.setInsertionPointToStart(entry);

  // The arguments as the copy's values.
  SmallVector<Value> parameters;
  unsigned next = 0;
  for (size_t slot : argumentSlots) {
    Type type = first.inputs[slot].getType();
    if (hasStaticLayout(type)) {
      parameters.push_back(bufferAt(builder, loc, cast<MemRefType>(type),
                                    entry->getArgument(next),
                                    entry->getArgument(next + 1), converter));
      next += 2;
    } else {
      parameters.push_back(entry->getArgument(next++));
    }
  }

  // The first copy, its inputs rewired slot by slot: one value of the
  // caller may stand for several arguments.
  DenseMap<Operation *, Operation *> clones;
  SmallVector<Value> slotValue(numInputs);
  for (size_t slot = 0; slot < numInputs; ++slot) {
    if (argumentOf[slot] >= 0) {
      slotValue[slot] = parameters[argumentOf[slot]];
      continue;
    }
    Operation *def = first.inputs[slot].getDefiningOp();
    Operation *&clone = clones[def];
    if (!clone)
      clone = builder.clone(*def);
    slotValue[slot] =
        clone->getResult(cast<OpResult>(first.inputs[slot]).getResultNumber());
  }
  IRMapping mapping;
  SmallVector<Operation *> cloned;
  for (size_t k = 0; k < repeat.length; ++k)
    cloned.push_back(builder.clone(*ops[repeat.start + k], mapping));
  // The clones follow the first copy's walk: operand by operand, the same
  // wiring.
  size_t operand = 0, input = 0;
  for (Operation *top : cloned)
    top->walk<WalkOrder::PreOrder>([&](Operation *op) {
      for (OpOperand &use : op->getOpOperands())
        if (first.operands[operand++] < 0)
          use.set(slotValue[input++]);
    });
  assert(input == numInputs && "the clones are wired as the first copy");
  SmallVector<Value> returned;
  for (auto [k, r] : llvm::enumerate(resultNumbers)) {
    Value value = mapping.lookup(first.values[r]);
    if (outSlot[k] < 0) {
      returned.push_back(value);
      continue;
    }
    auto [allocated, aligned] = pointersOf(builder, loc, value, converter);
    Value pointers[] = {allocated, aligned};
    for (int32_t i : {0, 1}) {
      LLVM::GEPArg index = static_cast<int32_t>(2 * outSlot[k] + i);
      Value at = LLVM::GEPOp::create(builder, loc, ptr, ptr,
                                     entry->getArguments().back(), index);
      LLVM::StoreOp::create(builder, loc, pointers[i], at);
    }
  }
  func::ReturnOp::create(builder, loc, returned);

  // The caller's out-array, at its entry: calls reuse it.
  Value out;
  if (numOut) {
    OpBuilder top = OpBuilder::atBlockBegin(&func.getBody().front());
    Value one = LLVM::ConstantOp::create(top, loc, top.getI64Type(),
                                         top.getI64IntegerAttr(1));
    out = LLVM::AllocaOp::create(
        top, loc, ptr, LLVM::LLVMArrayType::get(ptr, 2 * numOut), one);
  }

  // Each copy becomes a call. A copy reads what an earlier one returned from
  // that one's call.
  DenseMap<Value, Value> replaced;
  SmallVector<Operation *> rebuilt;
  for (auto [c, wiring] : llvm::enumerate(copies)) {
    size_t begin = repeat.start + c * repeat.length;
    Location at = ops[begin]->getLoc();
    builder.setInsertionPoint(ops[begin]);
    SmallVector<Value> operands;
    for (size_t s : argumentSlots) {
      // An input made by an earlier copy: that copy's call made it again
      // (the erased value is only a key here).
      Value value = replaced.lookup_or(wiring.inputs[s], wiring.inputs[s]);
      if (hasStaticLayout(value.getType())) {
        auto [allocated, aligned] = pointersOf(builder, at, value, converter);
        operands.append({allocated, aligned});
      } else {
        operands.push_back(value);
      }
    }
    if (out)
      operands.push_back(out);
    auto call = func::CallOp::create(builder, at, function, operands);
    unsigned nextResult = 0;
    for (auto [k, r] : llvm::enumerate(resultNumbers)) {
      Value value;
      if (outSlot[k] < 0) {
        value = call.getResult(nextResult++);
      } else {
        SmallVector<Value, 2> pointers;
        for (int32_t i : {0, 1}) {
          LLVM::GEPArg index = static_cast<int32_t>(2 * outSlot[k] + i);
          Value slot = LLVM::GEPOp::create(builder, at, ptr, ptr, out, index);
          pointers.push_back(LLVM::LoadOp::create(builder, at, ptr, slot));
        }
        value =
            bufferAt(builder, at, cast<MemRefType>(wiring.values[r].getType()),
                     pointers[0], pointers[1], converter);
      }
      Value(wiring.values[r]).replaceAllUsesWith(value);
      replaced[wiring.values[r]] = value;
    }
    for (Operation *op = call->getNextNode(); op != ops[begin];
         op = op->getNextNode())
      rebuilt.push_back(op);
    for (size_t k = begin + repeat.length; k-- > begin;)
      ops[k]->erase();
  }
  // The descriptors of results that only went on to later calls (as their
  // pointers) are dead.
  for (Operation *op : llvm::reverse(rebuilt))
    if (isOpTriviallyDead(op))
      op->erase();
  return function;
}

FailureOr<Repeat> Outliner::outlineOne(func::FuncOp &outlined) {
  if (!llvm::hasSingleElement(func.getBody()))
    return failure();
  collect();
  for (Repeat repeat : candidates()) {
    // Every copy has the same ops: one that allocates on the stack stays.
    if (allocatesOnStack(repeat.start, repeat.length))
      continue;
    while (repeat.count >= 2) {
      Repeat trimmed = repeat;
      std::optional<SmallVector<Wiring>> copies = verify(trimmed);
      // When the first copy differs from the next, the run from the
      // second may still repeat.
      if (!copies) {
        repeat.start += repeat.length;
        --repeat.count;
        continue;
      }
      SmallVector<int64_t> read = results(trimmed, *copies);
      if (netSaving(trimmed, *copies, read) >= minOps) {
        outlined = outline(trimmed, *copies, read);
        return trimmed;
      }
      // A run that repeats but does not pay stays inline whole (a later
      // start would pay less); the copies after it, which differ from it,
      // may repeat among themselves.
      if (trimmed.count == repeat.count)
        break;
      repeat.start += trimmed.count * repeat.length;
      repeat.count -= trimmed.count;
    }
  }
  return failure();
}

struct EPLOutlineRepeatsPass
    : public epl::impl::EPLOutlineRepeatsPassBase<EPLOutlineRepeatsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    unsigned nextName = 0;
    LLVMTypeConverter converter(&getContext());
    SmallVector<func::FuncOp> work;
    if (minOps < 1) {
      module.emitError() << "epl-outline-repeats: min-ops must be at least 1, "
                            "not "
                         << static_cast<int64_t>(minOps);
      return signalPassFailure();
    }
    // Host code only: kernels (and their thread tasks) are one loop nest.
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isDeclaration() && !isKernelName(func.getSymName()))
        work.push_back(func);
    // An outlined function may itself hold repeats (a block's heads).
    while (!work.empty()) {
      func::FuncOp func = work.pop_back_val();
      Outliner outliner(func, symbols, minOps, nextName, converter);
      func::FuncOp outlined;
      while (true) {
        FailureOr<Repeat> repeat = outliner.outlineOne(outlined);
        if (failed(repeat))
          break;
        ++numFunctions;
        numCalls += repeat->count;
        work.push_back(outlined);
      }
    }
  }
};

} // namespace
