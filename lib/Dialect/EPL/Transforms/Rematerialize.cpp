//===- Rematerialize.cpp - Gradient checkpointing -------------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Checkpointing/ChainPlan.h"
#include "epl/Dialect/EPL/IR/EPLAttrs.h"
#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/Dialect/EPL/Transforms/ShardingUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Format.h"

#include <cstdio>
#include <limits>
#include <map>
#include <set>

#define DEBUG_TYPE "epl-rematerialize"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLREMATERIALIZEPASS
#include "epl/Dialect/EPL/Transforms/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;
namespace ckpt = mlir::epl::checkpointing;

namespace {
std::optional<Phase> phaseOf(Operation *op) {
  if (auto p = op->getAttrOfType<PhaseAttr>(EPLDialect::kPhaseAttrName))
    return p.getValue();
  return std::nullopt;
}

bool isBackward(Operation *op) {
  std::optional<Phase> p = phaseOf(op);
  return p == Phase::BackwardInput || p == Phase::BackwardWeight;
}

/// Ops whose result aliases their operand after bufferization: keeping the
/// result costs what keeping the operand does.
bool isView(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
             tensor::ExtractSliceOp>(op);
}

/// Whether `a` and `b` run on the same pipeline stage. A stage recomputes
/// only its own forward: what it reads from another stage arrived once, in
/// the forward, and is kept.
bool sameStage(Operation *a, Operation *b) {
  Attribute sa = a->getAttr(EPLDialect::kStageAttrName),
            sb = b->getAttr(EPLDialect::kStageAttrName);
  return !sa || !sb || sa == sb;
}

/// Bytes of a statically shaped tensor; std::nullopt for anything else.
std::optional<int64_t> bytesOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  return (type.getNumElements() * type.getElementTypeBitWidth() + 7) / 8;
}

/// Flops of computing `op` again: loop trip count times body ops for linalg,
/// the elements made otherwise.
double flopsOf(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    double trips = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges())
      if (!ShapedType::isDynamic(range))
        trips *= static_cast<double>(range);
    double bodyOps = static_cast<double>(
        llvm::range_size(linalgOp->getRegion(0).front().without_terminator()));
    return trips * std::max(1.0, bodyOps);
  }
  double elements = 0;
  for (Value r : op->getResults())
    if (auto type = dyn_cast<RankedTensorType>(r.getType());
        type && type.hasStaticShape())
      elements += static_cast<double>(type.getNumElements());
  return elements;
}

/// The values `op` reads: operands and values its regions use from outside.
SmallVector<Value> valuesRead(Operation *op) {
  SetVector<Value> read(op->getOperands().begin(), op->getOperands().end());
  op->walk([&](Operation *inner) {
    if (inner == op)
      return;
    for (Value v : inner->getOperands())
      if (!op->isAncestor(v.getParentRegion()->getParentOp()))
        read.insert(v);
  });
  return read.takeVector();
}

/// Whether `op` computes from data: reads a tensor other than an empty one
/// (fills and empty tensors are made again for free).
bool readsData(Operation *op) {
  return llvm::any_of(valuesRead(op), [](Value read) {
    return isa<TensorType>(read.getType()) &&
           !read.getDefiningOp<tensor::EmptyOp>();
  });
}

/// `x` as a user writes it (0.5, 1e+06).
std::string shortNumber(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", x);
  return buffer;
}

std::string describeBytes(int64_t bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (bytes >= (1 << 20))
    os << llvm::format("%.2f MiB", bytes / double(1 << 20));
  else if (bytes >= (1 << 10))
    os << llvm::format("%.1f KiB", bytes / double(1 << 10));
  else
    os << bytes << " B";
  return s;
}

/// The kept size of a value no plan may keep: above any budget, and small
/// enough that a few sums of it do not overflow.
constexpr int64_t kNeverKept = std::numeric_limits<int64_t>::max() / 8;

/// How many devices split the batch: the product of the sizes of the mesh
/// axes that dimension 0 of the model's inputs and labels is sharded over
/// (epl-plan's seeds); 1 without a mesh. The chain's bytes are the whole
/// batch's (the pass runs before partitioning), a byte budget a device's.
int64_t batchShards(ModuleOp module) {
  MeshOp mesh = getMesh(module);
  int64_t shards = 1;
  if (mesh)
    for (auto fn : module.getOps<func::FuncOp>())
      shards = std::max(shards, groupSize(mesh, dataAxes(fn)));
  return shards;
}

/// Gradient checkpointing of one function's forward and backward.
class Rematerializer {
public:
  Rematerializer(func::FuncOp fn, StringRef type, double budget,
                 int64_t batchShards, bool drivesMicroBatches, bool printPlan)
      : fn(fn), body(&fn.front()), type(type), budget(budget),
        batchShards(batchShards), drivesMicroBatches(drivesMicroBatches),
        printPlan(printPlan) {}

  /// Whether the function has a backward reading forward values.
  bool analyze();
  LogicalResult plan();
  void rewrite();

  int64_t numKept = 0, numRecomputed = 0;

private:
  /// The forward value `v` stands for in the chain: the tensor it views.
  Value rootOf(Value v) const;
  bool isForwardValue(Value v) const {
    Operation *def = v.getDefiningOp();
    return def && def->getBlock() == body && phaseOf(def) == Phase::Forward;
  }
  Value recompute(Value v, OpBuilder &b, Attribute stage);

  func::FuncOp fn;
  Block *body;
  StringRef type;
  double budget;
  /// Devices the batch is split over (batchShards).
  int64_t batchShards;
  /// Whether the function runs micro-batches (calls the function of one):
  /// its own chain takes the least memory, the budget being theirs.
  bool drivesMicroBatches;
  bool printPlan;

  /// Top-level ops in order.
  DenseMap<Operation *, int64_t> position;
  /// Forward values the backward reads, with the first backward op reading
  /// each.
  llvm::MapVector<Value, Operation *> needed;
  /// What the needed values view.
  DenseSet<Value> neededRoots;
  /// The chain: the tensors the forward computes, in forward order.
  SmallVector<Value> nodes;
  DenseSet<Value> cuts;
  DenseSet<Value> kept;
  DenseMap<Value, Value> recomputed;
};

Value Rematerializer::rootOf(Value v) const {
  while (isForwardValue(v) && isView(v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  return v;
}

bool Rematerializer::analyze() {
  Block &body = fn.front();
  int64_t index = 0;
  for (Operation &op : body)
    position[&op] = index++;
  for (Operation &op : body) {
    if (!isBackward(&op))
      continue;
    for (Value v : valuesRead(&op))
      if (isForwardValue(v) && !needed.count(v) &&
          sameStage(v.getDefiningOp(), &op))
        needed[v] = &op;
  }
  for (auto &[v, user] : needed)
    neededRoots.insert(rootOf(v));
  // The chain: every tensor the forward computes (views stand for what
  // they view; constants, empty tensors and fills are made again for
  // free). Keeping one the backward does not read can still pay: the
  // residual stream of a transformer, from which each block's activations
  // are recomputed.
  SetVector<Value> roots;
  for (Operation &op : body) {
    if (phaseOf(&op) != Phase::Forward || isView(&op) ||
        op.hasTrait<OpTrait::ConstantLike>() || !readsData(&op))
      continue;
    for (Value r : op.getResults())
      if (bytesOf(r))
        roots.insert(r);
  }
  nodes = roots.takeVector();
  // Cut points: after them the forward reads nothing computed earlier
  // but them (every layer output of a chain, the residual stream of a
  // transformer between blocks). Only they can end a recomputed run:
  // recomputing from any other kept value would need values before it.
  DenseMap<Value, int64_t> lastForwardUse;
  for (Value node : nodes)
    lastForwardUse[node] = position.lookup(node.getDefiningOp());
  for (Operation &op : body) {
    if (phaseOf(&op) != Phase::Forward)
      continue;
    for (Value v : valuesRead(&op)) {
      Value root = isForwardValue(v) ? rootOf(v) : v;
      auto it = lastForwardUse.find(root);
      if (it != lastForwardUse.end())
        it->second = std::max(it->second, position.lookup(&op));
    }
  }
  // Sweep in forward order: a node is a cut when it is the only node made
  // so far still read later.
  int64_t live = 0;
  std::multiset<int64_t> ends;
  for (Value node : nodes) {
    int64_t at = position.lookup(node.getDefiningOp());
    while (!ends.empty() && *ends.begin() <= at) {
      ends.erase(ends.begin());
      --live;
    }
    int64_t end = lastForwardUse.lookup(node);
    if (end > at) {
      ends.insert(end);
      ++live;
    }
    if (live == (end > at ? 1 : 0))
      cuts.insert(node);
  }
  llvm::sort(nodes, [&](Value a, Value b) {
    Operation *da = a.getDefiningOp(), *db = b.getDefiningOp();
    if (da != db)
      return position.lookup(da) < position.lookup(db);
    return cast<OpResult>(a).getResultNumber() <
           cast<OpResult>(b).getResultNumber();
  });
  return !neededRoots.empty();
}

LogicalResult Rematerializer::plan() {
  if (type == "collection") {
    // Whatever the user marked, read by the backward or not (a marked view
    // keeps what it views).
    for (Operation &op : fn.front())
      if (phaseOf(&op) == Phase::Forward &&
          op.hasAttr(EPLDialect::kCheckpointAttrName))
        for (Value r : op.getResults())
          if (isa<RankedTensorType>(r.getType()))
            kept.insert(rootOf(r));
  } else {
    // One chain per pipeline stage: each stage device holds its own.
    std::map<int64_t, SmallVector<Value>> chains;
    for (Value node : nodes) {
      auto stage = node.getDefiningOp()->getAttrOfType<StageAttr>(
          EPLDialect::kStageAttrName);
      chains[stage ? stage.getIndex() : -1].push_back(node);
    }
    for (auto &[stage, chain] : chains) {
      SmallVector<ckpt::ChainNode> chainNodes;
      int64_t total = 0;
      // Ops before a node that only recomputing it needs count in its cost.
      int64_t from = 0;
      for (Value node : chain) {
        Operation *def = node.getDefiningOp();
        double cost = 0;
        for (Operation &op : llvm::make_range(
                 std::next(fn.front().begin(), from), def->getIterator()))
          if (phaseOf(&op) == Phase::Forward &&
              !op.hasTrait<OpTrait::ConstantLike>() &&
              llvm::none_of(op.getResults(),
                            [&](Value r) { return needed.count(r); }))
            cost += flopsOf(&op);
        from = position.lookup(def) + 1;
        int64_t bytes = *bytesOf(node);
        // A value the backward does not read is held in a run only while
        // the next one is recomputed from it.
        bool read = neededRoots.contains(node);
        if (read)
          total += bytes;
        // Only cut points can be kept (a value that is not one costs more
        // than any budget).
        chainNodes.push_back({cuts.contains(node) ? bytes : kNeverKept,
                              cost + flopsOf(def), read ? bytes : 0});
      }
      std::optional<ckpt::ChainPlan> plan;
      if (budget <= 0 || drivesMicroBatches) {
        // (Around the micro-batches the step holds whole-batch statistics,
        // a loss's count of labels: the budget is a micro-batch's.)
        plan = ckpt::leastMemoryPlan(chainNodes);
      } else {
        // A byte budget is a device's: each holds its shard of the
        // batch's activations. (A budget above every plan's need keeps
        // everything.)
        double wanted = budget <= 1 ? budget * total : budget * batchShards;
        int64_t bytes = wanted >= total ? total : static_cast<int64_t>(wanted);
        plan = ckpt::cheapestPlan(chainNodes, bytes);
        if (!plan) {
          auto perDevice = [&](int64_t b) {
            return llvm::divideCeil(b, batchShards);
          };
          InFlightDiagnostic diag =
              fn.emitError()
              << "epl-rematerialize: gradient_checkpoint.memory_budget of "
              << perDevice(bytes) << " bytes";
          if (budget <= 1)
            diag << " (" << shortNumber(budget) << " of " << perDevice(total)
                 << ")";
          diag << " is below the least any plan needs, "
               << perDevice(ckpt::leastMemoryPlan(chainNodes).peakBytes)
               << " bytes of activations";
          if (batchShards > 1)
            diag << " per device (the batch is split over " << batchShards
                 << ")";
          if (stage >= 0)
            diag << " on pipeline stage " << stage;
          return failure();
        }
      }
      for (auto [node, keep] : llvm::zip_equal(chain, plan->keep))
        if (keep)
          kept.insert(node);
      if (printPlan) {
        llvm::outs() << "epl-rematerialize @" << fn.getSymName();
        if (stage >= 0)
          llvm::outs() << " stage " << stage;
        // A device's share when data parallelism splits the batch.
        int64_t peak = llvm::divideCeil(plan->peakBytes, batchShards),
                whole = llvm::divideCeil(total, batchShards);
        llvm::outs() << ": keeps " << llvm::count(plan->keep, true) << " of "
                     << chain.size() << " forward tensors; activations peak "
                     << peak << " of " << whole << " bytes ("
                     << describeBytes(peak) << " of " << describeBytes(whole)
                     << ")";
        if (batchShards > 1)
          llvm::outs() << " per device, the batch split over " << batchShards;
        llvm::outs() << ", recompute "
                     << llvm::format("%.4g", plan->recomputeCost) << " flops\n";
      }
    }
  }
  numKept = kept.size();
  if (printPlan && type == "collection")
    llvm::outs() << "epl-rematerialize @" << fn.getSymName() << ": keeps "
                 << numKept << " of " << nodes.size()
                 << " forward tensors (marked epl.checkpoint)\n";
  return success();
}

Value Rematerializer::recompute(Value v, OpBuilder &b, Attribute stage) {
  if (!isForwardValue(v) || kept.contains(v))
    return v;
  Operation *def = v.getDefiningOp();
  if (Attribute own = def->getAttr(EPLDialect::kStageAttrName);
      own && stage && own != stage)
    return v;
  // Keeping a view of a kept tensor costs nothing; constants are not
  // computed.
  if ((isView(def) && kept.contains(rootOf(v))) ||
      def->hasTrait<OpTrait::ConstantLike>())
    return v;
  // What reads no tensor (empty tensors, fills) is made again for each
  // use rather than shared: sharing would keep its buffer alive across
  // the whole backward.
  bool fresh = !readsData(def);
  if (Value again = recomputed.lookup(v); again && !fresh)
    return again;
  IRMapping mapping;
  for (Value read : valuesRead(def))
    mapping.map(read,
                recompute(read, b, def->getAttr(EPLDialect::kStageAttrName)));
  Operation *copy = b.clone(*def, mapping);
  MLIRContext *ctx = def->getContext();
  copy->setAttr(EPLDialect::kPhaseAttrName,
                PhaseAttr::get(ctx, Phase::Recompute));
  if (Attribute id = def->getAttr(EPLDialect::kIdAttrName))
    copy->setAttr(EPLDialect::kOriginAttrName, id);
  copy->removeAttr(EPLDialect::kIdAttrName);
  copy->removeAttr(EPLDialect::kCheckpointAttrName);
  ++numRecomputed;
  for (auto [from, to] : llvm::zip(def->getResults(), copy->getResults()))
    recomputed[from] = to;
  return recomputed.lookup(v);
}

void Rematerializer::rewrite() {
  // In the order the backward first reads them, so that what one recompute
  // makes is in place (dominates) for the later ones that reuse it.
  SmallVector<std::pair<Value, Operation *>> order(needed.begin(),
                                                   needed.end());
  llvm::stable_sort(order, [&](auto &a, auto &b) {
    return position.lookup(a.second) < position.lookup(b.second);
  });
  OpBuilder b(fn.getContext());
  for (auto [v, firstUser] : order) {
    b.setInsertionPoint(firstUser);
    Value again =
        recompute(v, b, firstUser->getAttr(EPLDialect::kStageAttrName));
    if (again == v)
      continue;
    v.replaceUsesWithIf(again, [&](OpOperand &use) {
      Operation *top = fn.front().findAncestorOpInBlock(*use.getOwner());
      return top && isBackward(top) && sameStage(v.getDefiningOp(), top);
    });
  }
}

struct EPLRematerializePass
    : public mlir::epl::impl::EPLRematerializePassBase<EPLRematerializePass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Config config = Config::get(module);
    StringRef type = config.getString("gradient_checkpoint.type");
    // The marks have done their work (or were not asked for).
    llvm::scope_exit dropMarks([&] {
      module.walk([](Operation *op) {
        op->removeAttr(EPLDialect::kCheckpointAttrName);
      });
    });
    // Marks only "collection" reads are dropped unread otherwise: said, not
    // an error, as a model keeps its marks while its config turns
    // checkpointing off or to "auto" (the result is the same, the memory
    // is not what the marks ask for).
    if (type != "collection") {
      Operation *marked = nullptr;
      module.walk([&](Operation *op) {
        if (!op->hasAttr(EPLDialect::kCheckpointAttrName))
          return WalkResult::advance();
        marked = op;
        return WalkResult::interrupt();
      });
      if (marked) {
        InFlightDiagnostic warning =
            marked->emitWarning()
            << "epl-rematerialize: epl.checkpoint marks this tensor to keep, "
               "which only gradient_checkpoint.type = \"collection\" reads; ";
        if (type.empty())
          warning << "checkpointing is off (no gradient_checkpoint.type), so "
                     "the marks are not read";
        else
          warning << "the type is \"" << type
                  << "\", so the marks are not read";
      }
    }
    double budget =
        config.getNumber("gradient_checkpoint.memory_budget").value_or(0);
    if (type.empty()) {
      // Keys that would be read nowhere.
      if (budget > 0) {
        module.emitError() << "epl-rematerialize: "
                              "gradient_checkpoint.memory_budget needs "
                              "gradient_checkpoint.type = \"auto\"";
        return signalPassFailure();
      }
      if (config.getBool("gradient_checkpoint.check_gradients")) {
        module.emitError() << "epl-rematerialize: "
                              "gradient_checkpoint.check_gradients needs "
                              "gradient_checkpoint.type (\"collection\" or "
                              "\"auto\"): without checkpointing there is "
                              "nothing to check";
        return signalPassFailure();
      }
      return;
    }
    if (type == "collection" &&
        !module
             .walk([](Operation *op) {
               return op->hasAttr(EPLDialect::kCheckpointAttrName)
                          ? WalkResult::interrupt()
                          : WalkResult::advance();
             })
             .wasInterrupted()) {
      module.emitError()
          << "epl-rematerialize: gradient_checkpoint.type = \"collection\" "
             "but no tensor is marked to keep: mark ops with epl.checkpoint "
             "(frontend: epl.checkpoint(tensor)), or use \"auto\"";
      return signalPassFailure();
    }
    if (budget > 0 && type != "auto") {
      module.emitError() << "epl-rematerialize: "
                            "gradient_checkpoint.memory_budget is for "
                            "gradient_checkpoint.type = \"auto\", not \""
                         << type << "\"";
      return signalPassFailure();
    }
    int64_t shards = batchShards(module);
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      // The step around micro-batches calls a function of this module on
      // the slices of a micro-batch (epl-autodiff marks them).
      bool drivesMicroBatches =
          fn.walk([&](func::CallOp call) {
              bool slices = llvm::any_of(call.getOperands(), [](Value v) {
                Operation *def = v.getDefiningOp();
                return def && def->hasAttr(EPLDialect::kMicroBatchAttrName);
              });
              if (!slices)
                return WalkResult::advance();
              auto callee =
                  module.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
              return callee && !callee.isExternal() ? WalkResult::interrupt()
                                                    : WalkResult::advance();
            }).wasInterrupted();
      Rematerializer remat(fn, type, budget, shards, drivesMicroBatches,
                           printPlan);
      if (!remat.analyze())
        continue;
      if (failed(remat.plan()))
        return signalPassFailure();
      remat.rewrite();
      numKept += remat.numKept;
      numRecomputed += remat.numRecomputed;
    }
  }
};
} // namespace
