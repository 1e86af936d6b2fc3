//===- PipelinePartition.cpp - One program per pipeline stage -------------===//
//
// Part of EPL-MLIR.
//
// The step of a pipelined model is a loop over micro-batches whose body is
// the per-device program of one micro-batch, every op on a (virtual) stage
// and in a phase. This cuts the body into pieces, one per stage and phase
// (F, B, W), outlines each as a function, and writes for each stage device
// the program that runs its pieces in the schedule's order, with the sends
// and receives that move values between devices spelled out.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/Dialect/EPL/Transforms/ShardingUtils.h"
#include "epl/Dialect/EPL/Transforms/StagePrograms.h"
#include "epl/PipelineSchedule/Schedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <deque>
#include <map>

namespace mlir::epl {
#define GEN_PASS_DEF_EPLPIPELINEPARTITIONPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
constexpr StringLiteral kStageAxis = EPLDialect::kStageAxisName;

Phase phaseOf(pipeline::ActionKind kind) {
  switch (kind) {
  case pipeline::ActionKind::Forward:
    return Phase::Forward;
  case pipeline::ActionKind::BackwardInput:
    return Phase::BackwardInput;
  case pipeline::ActionKind::BackwardWeight:
    return Phase::BackwardWeight;
  }
  llvm_unreachable("unknown action");
}

std::string describe(Operation *op) {
  return ("'" + op->getName().getStringRef() + "'").str();
}

/// What `op` reads: its operands and the values its regions use from
/// outside.
SmallVector<Value> valuesRead(Operation *op) {
  llvm::SetVector<Value> above;
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, region, above);
  SmallVector<Value> read(op->getOperands());
  read.append(above.begin(), above.end());
  return read;
}

/// A stage and phase: the ops of one micro-batch's F, B or W on one
/// (virtual) stage.
struct PieceKey {
  int64_t stage;
  Phase phase;
  bool operator<(const PieceKey &o) const {
    return std::make_pair(stage, static_cast<int>(phase)) <
           std::make_pair(o.stage, static_cast<int>(o.phase));
  }
};

/// One piece: its ops in body order, the values it takes and the values
/// it hands on, and the function it becomes.
struct Piece {
  PieceKey key;
  SmallVector<Operation *> ops;
  /// Values the piece reads that it does not make: the loop's induction
  /// variable, accumulators, function arguments, values of other pieces.
  llvm::SetVector<Value> inputs;
  /// Values the piece makes that other pieces, or the loop's yield, read.
  llvm::SetVector<Value> outputs;
  func::FuncOp function;
};

/// Whether the schedules can have made the value of piece `from` when
/// piece `to` of the same micro-batch runs: the dependencies every
/// schedule respects are F(s) after F(s-1), B(s) after B(s+1) and F(s),
/// W(s) after B(s), and what follows from them.
bool mayUse(PieceKey to, PieceKey from) {
  if (to.stage == from.stage && to.phase == from.phase)
    return true;
  switch (from.phase) {
  case Phase::Forward:
    return to.phase != Phase::Forward || from.stage < to.stage;
  case Phase::BackwardInput:
    return (to.phase == Phase::BackwardInput && from.stage > to.stage) ||
           (to.phase == Phase::BackwardWeight && from.stage >= to.stage);
  default:
    return false;
  }
}

class Partitioner {
public:
  Partitioner(func::FuncOp fn, MeshOp mesh, const Config &config)
      : fn(fn), mesh(mesh), config(config), ctx(fn.getContext()) {}

  LogicalResult run();

private:
  LogicalResult findLoop();
  LogicalResult classify();
  LogicalResult formPieces();
  LogicalResult checkPieces();
  /// An error naming the first parameter read on two stage devices.
  LogicalResult rejectSharedParameters(
      ArrayRef<llvm::SmallSetVector<int64_t, 2>> devicesOfArg);
  LogicalResult assignValues();
  void outlinePieces();
  LogicalResult writeStagePrograms();
  FailureOr<func::FuncOp> writeStageProgram(int64_t device,
                                            ArrayRef<pipeline::Action> actions);
  /// What an action of `piece` sends, in order: (device, value), to each
  /// device by tag.
  SmallVector<std::pair<int64_t, Value>> sendsOf(const Piece &piece);
  LogicalResult checkProgram();
  void groupMessages();

  int64_t deviceOf(int64_t stage) const { return stage % numDevices; }
  /// The piece of `v`'s defining op, if it is a staged op of the body.
  std::optional<PieceKey> pieceOf(Value v) const {
    if (Operation *def = v.getDefiningOp())
      if (auto it = pieceOfOp.find(def); it != pieceOfOp.end())
        return it->second;
    return std::nullopt;
  }
  /// Clones into `b` what `v` needs from outside the body (prologue ops,
  /// floating ops of the body), with arguments mapped in `map`.
  Value materialize(Value v, OpBuilder &b, IRMapping &map);
  /// An error for an op with assertions that no stage program makes
  /// again: nothing staged reads it, so its check would never run.
  LogicalResult checkAssertionsKept();

  func::FuncOp fn;
  MeshOp mesh;
  const Config &config;
  MLIRContext *ctx;

  scf::ForOp loop;
  Block *body = nullptr;
  int64_t numDevices = 1, numStages = 1, microBatches = 1;
  llvm::DenseMap<Operation *, PieceKey> pieceOfOp;
  /// Ops outside the pieces that some piece or stage program made again.
  llvm::DenseSet<Operation *> materialized;
  /// The first op that reads a value no schedule has made by then, and
  /// that value's op.
  struct Misordered {
    Operation *user;
    PieceKey userKey;
    Operation *def;
    PieceKey defKey;
  };
  std::optional<Misordered> misordered;
  llvm::DenseMap<int64_t, StringAttr> stageNames;
  std::map<PieceKey, Piece> pieces;
  /// Values moved between devices, numbered: the number is the tag of the
  /// stream its micro-batches are sent on.
  llvm::MapVector<Value, int64_t> transfers;
  /// For each moved value, the devices other than its own that read it.
  llvm::DenseMap<Value, llvm::SmallSetVector<int64_t, 2>> readers;
  /// The device of each accumulator (loop-carried value), by position.
  SmallVector<int64_t> accumulatorDevice;
  /// The devices of the function's arguments, and of its results.
  SmallVector<llvm::SmallSetVector<int64_t, 2>> argDevices;
  SmallVector<int64_t> resultDevice;
  /// The micro-batches each (sender, receiver, tag) stream carries, in the
  /// order the sender sends them and in the order the receiver expects
  /// them: messages match in FIFO order, so the two must agree.
  std::map<std::tuple<int64_t, int64_t, int64_t>, SmallVector<int64_t>> sent,
      expected;
  /// Per (sender, receiver): the messages (value, micro-batch) in the
  /// order the sender sends them. The receiver takes them in that order
  /// too, each when it first needs it or one after it, so that a channel
  /// without tags delivers each where it is expected (epl.send `direct`).
  std::map<std::pair<int64_t, int64_t>, std::deque<std::pair<Value, int64_t>>>
      inSendOrder;
  /// Each device's schedule, and the program it became.
  std::vector<std::vector<pipeline::Action>> schedule;
  SmallVector<func::FuncOp> programs;
};

LogicalResult Partitioner::findLoop() {
  for (Operation &op : fn.front()) {
    auto forOp = dyn_cast<scf::ForOp>(op);
    if (!forOp)
      continue;
    if (loop)
      return forOp.emitError()
             << "epl-pipeline-partition: @" << fn.getSymName()
             << " has two loops; a pipelined step has one, over micro-batches";
    loop = forOp;
  }
  if (!loop)
    return fn.emitError()
           << "epl-pipeline-partition: @" << fn.getSymName()
           << " has no micro-batch loop; build the step with epl-autodiff "
              "on a model whose ops carry pipeline stages";
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()),
                         ub = getConstantIntValue(loop.getUpperBound()),
                         step = getConstantIntValue(loop.getStep());
  if (!lb || !ub || !step || *lb != 0 || *step != 1)
    return loop.emitError() << "epl-pipeline-partition: the micro-batch loop "
                               "must run from 0 by 1 to a constant";
  microBatches = *ub;
  if (microBatches != config.getInt("pipeline.num_micro_batch"))
    return loop.emitError()
           << "epl-pipeline-partition: the loop runs " << microBatches
           << " micro-batches but \"pipeline.num_micro_batch\" is "
           << config.getInt("pipeline.num_micro_batch");
  body = loop.getBody();
  return success();
}

LogicalResult Partitioner::classify() {
  // An op is on the stage written on it (epl-plan and epl-autodiff write
  // it), else on the latest stage of what it reads; its phase is the one
  // written, else the latest of what it reads. Ops that read no staged
  // value float: each piece that needs one makes its own.
  // Ops outside the pieces are made again wherever they are needed, or not
  // at all: one with side effects would run several times or never (an
  // assertion may run several times, as it checks the same values each
  // time, but not never: checkAssertionsKept).
  for (Operation &op : fn.front().without_terminator())
    if (&op != loop && !isFreeOfEffectsButAssertions(&op))
      return op.emitError() << "epl-pipeline-partition: " << describe(&op)
                            << " has side effects outside the micro-batch "
                               "loop; a pipelined step cannot place it";
  Operation *latest = nullptr;
  int64_t maxStage = -1;
  llvm::DenseMap<Value, bool> cheap;
  for (Operation &op : body->without_terminator()) {
    // Cheap values (fills, splats: isCheap) float whatever their stage: a
    // fill that torch-mlir's CSE shares between two stages' layers was
    // sent to the later stage every micro-batch, more bytes than the
    // activations.
    if (op.getNumResults() > 0 && llvm::all_of(op.getResults(), [&](Value r) {
          return isCheap(r, &cheap);
        }))
      continue;
    std::optional<int64_t> stage;
    std::optional<Phase> phase;
    if (auto s = op.getAttrOfType<StageAttr>(EPLDialect::kStageAttrName)) {
      stage = s.getIndex();
      if (s.getName())
        stageNames[s.getIndex()] = s.getName();
    }
    // Phases are ordered as a micro-batch runs them (forward < input
    // gradients < weight gradients): an op without one takes the latest of
    // what it reads. Optimizer ops come after this pass.
    if (auto p = op.getAttrOfType<PhaseAttr>(EPLDialect::kPhaseAttrName))
      // Recomputed forward ops run with the backward that reads them.
      phase = p.getValue() == Phase::Recompute ? Phase::BackwardInput
                                               : p.getValue();
    SmallVector<Value> read = valuesRead(&op);
    for (Value v : read) {
      Operation *def = v.getDefiningOp();
      auto it = def ? pieceOfOp.find(def) : pieceOfOp.end();
      if (it == pieceOfOp.end())
        continue;
      if (!op.hasAttr(EPLDialect::kStageAttrName))
        stage = std::max(stage.value_or(-1), it->second.stage);
      if (!op.hasAttr(EPLDialect::kPhaseAttrName))
        phase = std::max(phase.value_or(Phase::Forward), it->second.phase);
    }
    if (!stage) {
      if (!isFreeOfEffectsButAssertions(&op))
        return op.emitError()
               << "epl-pipeline-partition: " << describe(&op)
               << " has side effects but reads no stage's value; give it a "
                  "stage (epl.stage) so that one stage runs it";
      continue;
    }
    if (*stage > maxStage) {
      maxStage = *stage;
      latest = &op;
    }
    pieceOfOp[&op] = {*stage, phase.value_or(Phase::Forward)};
  }
  int64_t chunks = config.getInt("pipeline.num_virtual_stages");
  numStages = numDevices * chunks;
  if (maxStage >= numStages)
    return latest->emitError()
           << "epl-pipeline-partition: this op is on stage " << maxStage
           << " but the mesh has " << numDevices << " stage devices x "
           << chunks
           << " stages each (\"pipeline.num_virtual_stages\"); plan the model "
              "for as many devices as it has stages";
  return success();
}

LogicalResult Partitioner::formPieces() {
  // Every stage has its F, B and W, even where one is empty (the first
  // stage's input gradients): the schedule and the trace show every action.
  for (int64_t stage = 0; stage < numStages; ++stage)
    for (Phase phase :
         {Phase::Forward, Phase::BackwardInput, Phase::BackwardWeight})
      pieces[{stage, phase}].key = {stage, phase};
  for (Operation &op : body->without_terminator()) {
    auto it = pieceOfOp.find(&op);
    if (it == pieceOfOp.end())
      continue;
    pieces[it->second].ops.push_back(&op);
  }
  // What each piece reads from outside itself, through floating ops.
  for (auto &[key, piece] : pieces) {
    llvm::DenseSet<Operation *> mine(piece.ops.begin(), piece.ops.end());
    SmallVector<Value> worklist;
    for (Operation *op : piece.ops)
      worklist.append(valuesRead(op));
    llvm::DenseSet<Operation *> visited;
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      Operation *def = v.getDefiningOp();
      if (def && mine.contains(def))
        continue;
      if (std::optional<PieceKey> from = pieceOf(v)) {
        Operation *user = nullptr;
        for (Operation *u : v.getUsers())
          if (Operation *top = body->findAncestorOpInBlock(*u);
              top && mine.contains(top))
            user = top;
        if (!mayUse(key, *from) && !misordered)
          misordered = {user ? user : piece.ops.front(), key, def, *from};
        piece.inputs.insert(v);
        pieces[*from].outputs.insert(v);
        continue;
      }
      // Floating ops of the body are made again in the piece; what they
      // read from outside the body is an input.
      if (def && def->getBlock() == body) {
        if (visited.insert(def).second)
          worklist.append(valuesRead(def));
        continue;
      }
      // The induction variable, accumulators and the step's arguments are
      // inputs; values of ops before the loop are made again.
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        piece.inputs.insert(v);
        continue;
      }
      if (def && visited.insert(def).second)
        worklist.append(valuesRead(def));
    }
  }
  // Inputs in an order a reader can follow: the micro-batch index, the
  // accumulators, the step's arguments, then other pieces' values as the
  // body makes them.
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(body->without_terminator()))
    position[&op] = i;
  auto rank = [&](Value v) -> std::pair<int64_t, int64_t> {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return {arg.getOwner() == body ? 0 : 1, arg.getArgNumber()};
    return {2, position.lookup(v.getDefiningOp())};
  };
  for (auto &[key, piece] : pieces) {
    SmallVector<Value> sorted(piece.inputs.begin(), piece.inputs.end());
    llvm::stable_sort(sorted,
                      [&](Value a, Value b) { return rank(a) < rank(b); });
    piece.inputs = llvm::SetVector<Value>(sorted.begin(), sorted.end());
  }
  return success();
}

LogicalResult Partitioner::rejectSharedParameters(
    ArrayRef<llvm::SmallSetVector<int64_t, 2>> devicesOfArg) {
  for (BlockArgument arg : fn.getArguments()) {
    auto &devices = devicesOfArg[arg.getArgNumber()];
    if (getArgKind(fn, arg.getArgNumber()) != "param" || devices.size() < 2)
      continue;
    // Said at the ops that read it on each device, the forward's first
    // (the model's lines), where they are found.
    SmallVector<Operation *, 2> readers(2, nullptr);
    for (auto &[key, piece] : pieces)
      for (Operation *op : piece.ops) {
        auto *slot = llvm::find(devices, deviceOf(key.stage));
        if (slot == devices.begin() + 2 || slot == devices.end() ||
            readers[slot - devices.begin()])
          continue;
        bool reads = false;
        op->walk([&](Operation *nested) {
          reads |= llvm::is_contained(nested->getOperands(), arg);
        });
        if (reads)
          readers[slot - devices.begin()] = op;
      }
    InFlightDiagnostic diag =
        (readers[1] ? readers[1]->emitError() : fn.emitError())
        << "epl-pipeline-partition: parameter '"
        << getArgName(fn, arg.getArgNumber()) << "' is used on stage devices "
        << devices[0] << " and " << devices[1]
        << "; pipeline stages cannot share a parameter";
    if (readers[0])
      diag.attachNote(readers[0]->getLoc())
          << "read here on stage device " << devices[0];
    return diag;
  }
  return success();
}

LogicalResult Partitioner::checkPieces() {
  // Parameters belong to one stage device: a shared one (tied weights)
  // would also show as gradients flowing between stages, reported below
  // in less direct terms.
  // The step's arguments go where they are read.
  argDevices.resize(fn.getNumArguments());
  for (auto &[key, piece] : pieces)
    for (Value v : piece.inputs)
      if (auto arg = dyn_cast<BlockArgument>(v);
          arg && arg.getOwner() == &fn.front())
        argDevices[arg.getArgNumber()].insert(deviceOf(key.stage));
  if (failed(rejectSharedParameters(argDevices)))
    return failure();
  // Virtual stages of one device (interleaved 1F1B) cannot share one
  // either: their weight gradients would be summed in no order every
  // schedule keeps.
  for (BlockArgument arg : fn.getArguments()) {
    if (getArgKind(fn, arg.getArgNumber()) != "param")
      continue;
    std::map<int64_t, Operation *> readers; // by stage, the first reader
    for (auto &[key, piece] : pieces)
      for (Operation *op : piece.ops) {
        if (readers.count(key.stage))
          break;
        bool reads = false;
        op->walk([&](Operation *nested) {
          reads |= llvm::is_contained(nested->getOperands(), arg);
        });
        if (reads)
          readers[key.stage] = op;
      }
    if (readers.size() < 2)
      continue;
    auto first = readers.begin(), second = std::next(first);
    InFlightDiagnostic diag =
        second->second->emitError()
        << "epl-pipeline-partition: parameter '"
        << getArgName(fn, arg.getArgNumber()) << "' is used on pipeline stages "
        << first->first << " and " << second->first
        << " (virtual stages of stage device " << deviceOf(first->first)
        << ", pipeline.num_virtual_stages); pipeline stages cannot share a "
           "parameter";
    diag.attachNote(first->second->getLoc())
        << "read here on stage " << first->first;
    return diag;
  }
  if (!misordered)
    return success();
  InFlightDiagnostic diag =
      misordered->user->emitError()
      << "epl-pipeline-partition: this op (stage " << misordered->userKey.stage
      << ", " << stringifyPhase(misordered->userKey.phase)
      << ") uses a value of stage " << misordered->defKey.stage << " ("
      << stringifyPhase(misordered->defKey.phase)
      << ") that no pipeline schedule has made by then";
  diag.attachNote(misordered->def->getLoc()) << "the value is made here";
  return diag;
}

LogicalResult Partitioner::assignValues() {
  // Accumulators belong to the device of the piece that yields them; one
  // that depends on no stage (the zero gradient of a parameter the loss
  // does not use) to the device of the parameter, decided below.
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  for (Value v : yield.getOperands()) {
    std::optional<PieceKey> from = pieceOf(v);
    if (from)
      pieces[*from].outputs.insert(v);
    accumulatorDevice.push_back(from ? deviceOf(from->stage) : -1);
  }
  // Values read on other devices travel; each is one stream of messages.
  for (auto &[key, piece] : pieces)
    for (Value v : piece.inputs) {
      std::optional<PieceKey> from = pieceOf(v);
      if (!from || deviceOf(from->stage) == deviceOf(key.stage))
        continue;
      transfers.insert({v, static_cast<int64_t>(transfers.size())});
      readers[v].insert(deviceOf(key.stage));
    }

  // The MPI backend tells streams apart by tag (up to 4096, with the
  // element type).
  if (transfers.size() > 4096)
    return fn.emitError() << "epl-pipeline-partition: " << transfers.size()
                          << " values cross stages; at most 4096 can";

  // The step's results come from the device that makes them.
  auto ret = cast<func::ReturnOp>(fn.front().getTerminator());
  // The device of the parameter result `i` updates, if any reads it.
  auto deviceOfResult = [&](unsigned i) -> int64_t {
    auto name =
        fn.getResultAttrOfType<StringAttr>(i, EPLDialect::kNameAttrName);
    for (BlockArgument arg : fn.getArguments())
      if (name &&
          fn.getArgAttr(arg.getArgNumber(), EPLDialect::kNameAttrName) ==
              name &&
          !argDevices[arg.getArgNumber()].empty())
        return argDevices[arg.getArgNumber()].front();
    return 0;
  };
  for (auto [k, r] : llvm::enumerate(loop.getResults())) {
    if (accumulatorDevice[k] >= 0)
      continue;
    // The result of the step it becomes (through the gradient reduction).
    accumulatorDevice[k] = 0;
    SmallVector<Value> worklist = {r};
    llvm::DenseSet<Value> seen;
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      for (OpOperand &use : v.getUses()) {
        if (use.getOwner() == ret)
          accumulatorDevice[k] = deviceOfResult(use.getOperandNumber());
        else
          llvm::append_range(worklist, use.getOwner()->getResults());
      }
    }
  }
  // An accumulator is read where it is accumulated.
  for (auto [k, acc] : llvm::enumerate(loop.getRegionIterArgs()))
    for (auto &[key, piece] : pieces)
      if (piece.inputs.contains(acc) &&
          deviceOf(key.stage) != accumulatorDevice[k])
        return loop.emitError()
               << "epl-pipeline-partition: stage " << key.stage
               << " reads a sum over micro-batches (loop-carried value " << k
               << ") that stage device " << accumulatorDevice[k]
               << " accumulates";

  // After the loop: each op on the device of what it reads.
  llvm::DenseMap<Value, int64_t> deviceOfValue;
  for (auto [k, r] : llvm::enumerate(loop.getResults()))
    deviceOfValue[r] = accumulatorDevice[k];
  for (Operation *op = loop->getNextNode(); op != ret; op = op->getNextNode()) {
    std::optional<int64_t> device;
    SmallVector<Value> read = valuesRead(op);
    for (Value v : read) {
      auto it = deviceOfValue.find(v);
      if (it == deviceOfValue.end())
        continue;
      if (device && *device != it->second)
        return op->emitError()
               << "epl-pipeline-partition: " << describe(op)
               << " combines the gradients of stage devices " << *device
               << " and " << it->second
               << " after the micro-batches (as clipping by a global norm "
                  "would); each pipeline stage updates its parameters alone";
      device = it->second;
    }
    if (device)
      for (Value r : op->getResults())
        deviceOfValue[r] = *device;
  }
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    int64_t device = 0;
    if (auto it = deviceOfValue.find(v); it != deviceOfValue.end()) {
      device = it->second;
    } else {
      // A result that depends on no stage: the device of its parameter.
      device = deviceOfResult(i);
    }
    resultDevice.push_back(device);
  }
  // A device updates the parameters whose gradients it returns.
  for (auto [i, device] : llvm::enumerate(resultDevice)) {
    auto name =
        fn.getResultAttrOfType<StringAttr>(i, EPLDialect::kNameAttrName);
    if (!name)
      continue;
    for (BlockArgument arg : fn.getArguments())
      if (getArgKind(fn, arg.getArgNumber()) == "param" &&
          fn.getArgAttr(arg.getArgNumber(), EPLDialect::kNameAttrName) == name)
        argDevices[arg.getArgNumber()].insert(device);
  }
  return rejectSharedParameters(argDevices);
}

Value Partitioner::materialize(Value v, OpBuilder &b, IRMapping &map) {
  if (Value mapped = map.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  assert(def && "arguments are mapped before anything is materialized");
  for (Value operand : valuesRead(def))
    materialize(operand, b, map);
  b.clone(*def, map);
  materialized.insert(def);
  return map.lookup(v);
}

LogicalResult Partitioner::checkAssertionsKept() {
  auto check = [&](Operation &op) -> LogicalResult {
    if (&op == loop || pieceOfOp.contains(&op) || materialized.contains(&op) ||
        isMemoryEffectFree(&op))
      return success();
    // Only body ops take an `epl.stage` (classify): outside the loop the
    // check can only be read or dropped.
    InFlightDiagnostic diag = op.emitError()
                              << "epl-pipeline-partition: " << describe(&op)
                              << " is a check no stage would run: ";
    if (op.getBlock() == body)
      diag << "it reads no stage's value and no stage reads its results; "
              "give it a stage (epl.stage: the stage whose values it "
              "checks) or remove it";
    else
      diag << "no stage reads its results; read them in a stage or remove "
              "it";
    return diag;
  };
  for (Operation &op : fn.front().without_terminator())
    if (failed(check(op)))
      return failure();
  for (Operation &op : body->without_terminator())
    if (failed(check(op)))
      return failure();
  return success();
}

void Partitioner::outlinePieces() {
  OpBuilder b(fn);
  for (auto &[key, piece] : pieces) {
    SmallVector<Type> inputTypes, outputTypes;
    for (Value v : piece.inputs)
      inputTypes.push_back(v.getType());
    for (Value v : piece.outputs)
      outputTypes.push_back(v.getType());
    std::string name = (fn.getSymName() + "_s" + Twine(key.stage) + "_" +
                        stringifyPhase(key.phase))
                           .str();
    auto piecefn = func::FuncOp::create(
        b, fn.getLoc(), name, FunctionType::get(ctx, inputTypes, outputTypes));
    piecefn.setPrivate();
    piecefn->setAttr(
        EPLDialect::kStageAttrName,
        StageAttr::get(ctx, key.stage, stageNames.lookup(key.stage)));
    Block *entry = piecefn.addEntryBlock();
    OpBuilder pb = OpBuilder::atBlockEnd(entry);
    IRMapping map;
    for (auto [v, arg] : llvm::zip(piece.inputs, entry->getArguments()))
      map.map(v, arg);
    for (Operation *op : piece.ops) {
      for (Value v : valuesRead(op))
        materialize(v, pb, map);
      pb.clone(*op, map);
    }
    SmallVector<Value> results;
    for (Value v : piece.outputs)
      results.push_back(map.lookup(v));
    func::ReturnOp::create(pb, fn.getLoc(), results);
    piece.function = piecefn;
  }
}

FailureOr<func::FuncOp>
Partitioner::writeStageProgram(int64_t device,
                               ArrayRef<pipeline::Action> actions) {
  // The step's arguments this device reads, in their order and with their
  // attributes; an argument without a name is named by its position so
  // that runners find the same value on every stage.
  SmallVector<unsigned> argNumbers;
  for (BlockArgument arg : fn.getArguments())
    if (argDevices[arg.getArgNumber()].contains(device))
      argNumbers.push_back(arg.getArgNumber());
  auto ret = cast<func::ReturnOp>(fn.front().getTerminator());
  SmallVector<unsigned> resultNumbers;
  for (auto [i, d] : llvm::enumerate(resultDevice))
    if (d == device)
      resultNumbers.push_back(i);

  OpBuilder b(fn);
  SmallVector<Type> argTypes, resultTypes;
  for (unsigned i : argNumbers)
    argTypes.push_back(fn.getArgumentTypes()[i]);
  for (unsigned i : resultNumbers)
    resultTypes.push_back(fn.getResultTypes()[i]);
  auto program = func::FuncOp::create(
      b, fn.getLoc(), (fn.getSymName() + "_stage" + Twine(device)).str(),
      FunctionType::get(ctx, argTypes, resultTypes));
  FunctionAttrEdit edit(program);
  for (auto [n, i] : llvm::enumerate(argNumbers)) {
    edit.arg(n) = NamedAttrList(fn.getArgAttrDict(i));
    if (!edit.arg(n).get(EPLDialect::kNameAttrName))
      edit.setArg(n, EPLDialect::kNameAttrName,
                  StringAttr::get(ctx, "arg" + Twine(i)));
  }
  for (auto [n, i] : llvm::enumerate(resultNumbers))
    edit.result(n) = NamedAttrList(fn.getResultAttrDict(i));
  edit.apply();

  Block *entry = program.addEntryBlock();
  OpBuilder pb = OpBuilder::atBlockEnd(entry);
  IRMapping outer;
  for (auto [n, i] : llvm::enumerate(argNumbers))
    outer.map(fn.getArgument(i), entry->getArgument(n));

  // Accumulators start from their initial values.
  SmallVector<Value> acc(loop.getNumRegionIterArgs());
  for (auto [k, init] : llvm::enumerate(loop.getInitArgs()))
    if (accumulatorDevice[k] == device)
      acc[k] = materialize(init, pb, outer);

  auto stageAxes = pb.getStrArrayAttr({kStageAxis});
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  // Values of each micro-batch this device has made or received.
  std::vector<llvm::DenseMap<Value, Value>> valuesByMicroBatch(microBatches);
  for (const pipeline::Action &action : actions) {
    Piece &piece = pieces.at({action.virtualStage, phaseOf(action.kind)});
    auto &local = valuesByMicroBatch[action.microBatch];
    // The inputs other devices make, received first: from each sender,
    // every message it sent this device up to the one needed, in its
    // order (kept for the actions that need them later).
    for (Value v : piece.inputs) {
      if (v == loop.getInductionVar() || local.lookup(v))
        continue;
      if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == body)
        continue;
      std::optional<PieceKey> from = pieceOf(v);
      if (!from || deviceOf(from->stage) == device)
        continue;
      int64_t sender = deviceOf(from->stage);
      auto &queue = inSendOrder[{sender, device}];
      std::pair<Value, int64_t> wanted{v, action.microBatch};
      if (llvm::find(queue, wanted) == queue.end())
        continue; // reported below, or by the order check after
      while (!queue.empty()) {
        auto [sentValue, mb] = queue.front();
        queue.pop_front();
        int64_t tag = transfers.lookup(sentValue);
        auto recv = RecvOp::create(
            pb, sentValue.getLoc(), sentValue.getType(), meshRef, stageAxes,
            pb.getI64IntegerAttr(sender), pb.getI64IntegerAttr(tag));
        expected[{sender, device, tag}].push_back(mb);
        valuesByMicroBatch[mb][sentValue] = recv.getResult();
        if (std::make_pair(sentValue, mb) == wanted)
          break;
      }
    }
    SmallVector<Value> args;
    for (Value v : piece.inputs) {
      if (v == loop.getInductionVar()) {
        args.push_back(
            arith::ConstantIndexOp::create(pb, fn.getLoc(), action.microBatch));
        continue;
      }
      if (auto arg = dyn_cast<BlockArgument>(v);
          arg && arg.getOwner() == body) {
        args.push_back(acc[arg.getArgNumber() - 1]);
        continue;
      }
      if (Value made = local.lookup(v)) {
        args.push_back(made);
        continue;
      }
      std::optional<PieceKey> from = pieceOf(v);
      if (!from) {
        args.push_back(outer.lookup(v));
        continue;
      }
      return fn.emitError()
             << "epl-pipeline-partition: the schedule runs "
             << stringifyPhase(piece.key.phase) << " of micro-batch "
             << action.microBatch << " on stage " << piece.key.stage
             << " before " << stringifyPhase(from->phase) << " of stage "
             << from->stage << " that it needs";
    }
    auto call = func::CallOp::create(pb, fn.getLoc(), piece.function, args);
    call->setAttr(EPLDialect::kActionAttrName,
                  ActionAttr::get(ctx, piece.key.phase, action.microBatch,
                                  piece.key.stage));
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    for (auto [v, r] : llvm::zip(piece.outputs, call.getResults())) {
      local[v] = r;
      for (auto [k, y] : llvm::enumerate(yield.getOperands()))
        if (y == v)
          acc[k] = r;
    }
    for (auto [to, v] : sendsOf(piece)) {
      int64_t tag = transfers.lookup(v);
      SendOp::create(pb, v.getLoc(), local.lookup(v), meshRef, stageAxes,
                     pb.getI64IntegerAttr(to), pb.getI64IntegerAttr(tag));
      sent[{device, to, tag}].push_back(action.microBatch);
    }
  }

  // Accumulators no stage adds to (a zero gradient) are made here, one
  // micro-batch after the other.
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  for (auto [k, v] : llvm::enumerate(yield.getOperands())) {
    if (pieceOf(v) || accumulatorDevice[k] != device)
      continue;
    for (int64_t mb = 0; mb < microBatches; ++mb) {
      IRMapping map = outer;
      map.map(loop.getInductionVar(),
              arith::ConstantIndexOp::create(pb, fn.getLoc(), mb));
      for (auto [j, arg] : llvm::enumerate(loop.getRegionIterArgs()))
        if (acc[j])
          map.map(arg, acc[j]);
      acc[k] = materialize(v, pb, map);
    }
  }

  // After the micro-batches: what this device does with its accumulators.
  for (auto [k, r] : llvm::enumerate(loop.getResults()))
    if (accumulatorDevice[k] == device)
      outer.map(r, acc[k]);
  SmallVector<Value> results;
  for (unsigned i : resultNumbers)
    results.push_back(materialize(ret.getOperand(i), pb, outer));
  func::ReturnOp::create(pb, fn.getLoc(), results);
  return program;
}

SmallVector<std::pair<int64_t, Value>>
Partitioner::sendsOf(const Piece &piece) {
  SmallVector<std::pair<int64_t, Value>> sends;
  for (Value v : piece.outputs)
    if (auto readersOf = readers.find(v); readersOf != readers.end())
      for (int64_t to : readersOf->second)
        sends.push_back({to, v});
  llvm::stable_sort(sends, [&](const auto &a, const auto &b) {
    return std::make_pair(a.first, transfers.lookup(a.second)) <
           std::make_pair(b.first, transfers.lookup(b.second));
  });
  return sends;
}

LogicalResult Partitioner::writeStagePrograms() {
  std::string error;
  StringRef strategyName = config.getString("pipeline.strategy");
  std::optional<pipeline::Strategy> strategy =
      pipeline::parseStrategy(strategyName);
  if (!strategy)
    return fn.emitError() << "epl-pipeline-partition: unknown "
                             "\"pipeline.strategy\" \""
                          << strategyName << "\"";
  pipeline::ScheduleShape shape{numDevices, numStages / numDevices,
                                microBatches};
  auto built = pipeline::buildSchedule(*strategy, shape, error);
  if (failed(built))
    return fn.emitError() << "epl-pipeline-partition: " << error;
  schedule = std::move(*built);
  for (int64_t d = 0; d < numDevices; ++d)
    for (const pipeline::Action &action : schedule[d])
      for (auto [to, v] :
           sendsOf(pieces.at({action.virtualStage, phaseOf(action.kind)})))
        inSendOrder[{d, to}].push_back({v, action.microBatch});
  for (int64_t d = 0; d < numDevices; ++d) {
    FailureOr<func::FuncOp> program = writeStageProgram(d, schedule[d]);
    if (failed(program))
      return failure();
    programs.push_back(*program);
  }
  if (sent != expected)
    return fn.emitError() << "epl-pipeline-partition: the " << strategyName
                          << " schedule receives a value's micro-batches in "
                             "another order than it sends them";
  return checkProgram();
}

LogicalResult Partitioner::checkProgram() {
  // The programs as the simulator sees them: a program that would wait
  // forever is a compiler error here, never a hang at run time.
  FailureOr<pipeline::Program> sim = readStagePrograms(programs, numStages);
  std::string error;
  if (failed(sim) || failed(pipeline::simulate(*sim, pipeline::Costs(), error)))
    return fn.emitError() << "epl-pipeline-partition: the stage programs "
                             "would not finish: "
                          << error;
  groupMessages();
  return success();
}

void Partitioner::groupMessages() {
  // Every schedule but interleaved 1F1B's passes the group check; its
  // sends must not hold up the next computation, and go over channels
  // (docs/gpu.md). What passes neither stays staged through the host on
  // GPUs.
  std::string whyNot;
  bool grouped = succeeded(checkMessageGroups(programs, numStages, whyNot));
  if (!grouped && failed(checkChannels(programs, numStages, whyNot)))
    return;
  for (func::FuncOp program : programs)
    program.walk([&](Operation *op) {
      if (auto send = dyn_cast<SendOp>(op))
        grouped ? send.setGrouped(true) : send.setDirect(true);
      else if (auto recv = dyn_cast<RecvOp>(op))
        grouped ? recv.setGrouped(true) : recv.setDirect(true);
    });
}

LogicalResult Partitioner::run() {
  numDevices = *mesh.getAxisSize(kStageAxis);
  if (failed(findLoop()) || failed(classify()) || failed(formPieces()) ||
      failed(checkPieces()) || failed(assignValues()))
    return failure();
  outlinePieces();
  if (failed(writeStagePrograms()) || failed(checkAssertionsKept()))
    return failure();
  OpBuilder b(fn);
  SmallVector<Attribute> stages;
  for (func::FuncOp program : programs)
    stages.push_back(FlatSymbolRefAttr::get(program.getSymNameAttr()));
  std::string name = fn.getSymName().str();
  PipelineOp::create(b, mesh.getLoc(), b.getStringAttr(name),
                     FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
                     b.getStringAttr(kStageAxis), b.getArrayAttr(stages),
                     b.getStringAttr(config.getString("pipeline.strategy")),
                     b.getI64IntegerAttr(microBatches));
  fn.erase();
  return success();
}

struct EPLPipelinePartitionPass
    : public mlir::epl::impl::EPLPipelinePartitionPassBase<
          EPLPipelinePartitionPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MeshOp mesh = getMesh(module);
    if (!mesh || !mesh.getAxisSize(kStageAxis))
      return; // Not pipelined.
    Config config = Config::get(module);
    SmallVector<func::FuncOp> steps;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && hasTaggedArguments(fn))
        steps.push_back(fn);
    for (func::FuncOp fn : steps) {
      Partitioner partitioner(fn, mesh, config);
      if (failed(partitioner.run()))
        return signalPassFailure();
    }
  }
};
} // namespace
