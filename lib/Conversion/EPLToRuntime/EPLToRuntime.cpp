//===- EPLToRuntime.cpp - EPL communication to runtime calls --------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Conversion/EPLToRuntime/RuntimeAPI.h"
#include "epl/Conversion/Passes.h"
#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/IR/EPLOps.h"
#include "epl/Dialect/EPL/Transforms/StagePrograms.h"
#include "epl/Runtime/Runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>
#include <set>

#define DEBUG_TYPE "epl-lower-to-runtime"

namespace mlir::epl {
#define GEN_PASS_DEF_EPLLOWERTORUNTIMEPASS
#include "epl/Conversion/Passes.h.inc"
} // namespace mlir::epl

using namespace mlir;
using namespace mlir::epl;

namespace {
/// Builds the runtime call sequence of one op.
class Lowering {
public:
  Lowering(RuntimeAPI &api, IRRewriter &rewriter, Operation *op,
           CollectiveOpInterface group)
      : api(api), b(rewriter), loc(op->getLoc()), op(op), group(group) {}

  /// A contiguous, read-only buffer holding `tensor`.
  Value readBuffer(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    Value buffer = bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                                     /*read_only=*/true);
    return RuntimeAPI::unranked(b, loc, buffer);
  }

  /// A fresh buffer of `type`; dynamic sizes taken from `like`.
  Value allocate(RankedTensorType type, Value like = {}) {
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dynamicSizes.push_back(tensor::DimOp::create(b, loc, like, d));
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    return memref::AllocOp::create(b, loc, memrefType, dynamicSizes);
  }

  Value toTensor(Value buffer) {
    auto memrefType = cast<MemRefType>(buffer.getType());
    auto type = RankedTensorType::get(memrefType.getShape(),
                                      memrefType.getElementType());
    return bufferization::ToTensorOp::create(b, loc, type, buffer,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  }

  Value groupDesc() {
    return api.groupDescriptor(b, loc, group.getMeshOp(), group.getAxes());
  }

  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }

  /// `epl_rt_<name>_<type>`; fails with an error when the runtime does not
  /// move the element type.
  FailureOr<std::string> function(StringRef name, Type elementType) {
    std::optional<std::string> fn =
        RuntimeAPI::typedFunction(name, elementType);
    if (!fn)
      return op->emitOpError()
             << "cannot run on the CPU runtime: it moves f32, f64, f16, i32 "
                "and i64 tensors, not "
             << elementType;
    return *fn;
  }

  LogicalResult requireStatic(RankedTensorType type) {
    if (type.hasStaticShape())
      return success();
    return op->emitOpError()
           << "cannot be lowered to the runtime with a dynamic shape (" << type
           << ")";
  }

  /// Moves dimension `from` of `value` to position `to`, materialized.
  Value moveDim(Value value, int64_t from, int64_t to) {
    if (from == to)
      return value;
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != from)
        perm.push_back(d);
    perm.insert(perm.begin() + to, from);
    SmallVector<int64_t> shape;
    for (int64_t d : perm)
      shape.push_back(type.getDimSize(d));
    Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    ++transposes;
    return linalg::TransposeOp::create(b, loc, value, init, perm)
        .getResult()[0];
  }

  /// Splits dimension `dim` of `value` into (g, size / g).
  Value splitDim(Value value, int64_t dim, int64_t g) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] /= g;
    shape.insert(shape.begin() + dim, g);
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0, out = 0; d < type.getRank(); ++d) {
      if (d == dim) {
        groups.push_back({out, out + 1});
        out += 2;
      } else {
        groups.push_back({out++});
      }
    }
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), value,
        groups);
  }

  /// Merges dimensions `dim` and `dim + 1` of `value`.
  Value mergeDims(Value value, int64_t dim) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (d == dim + 1)
        continue;
      if (d == dim)
        groups.push_back({d, d + 1});
      else
        groups.push_back({d});
    }
    return tensor::CollapseShapeOp::create(b, loc, value, groups);
  }

  /// A tensor whose leading dimension is the group, filled by `fill`.
  RankedTensorType withLeadingGroup(RankedTensorType type, int64_t g) {
    SmallVector<int64_t> shape(type.getShape());
    shape.insert(shape.begin(), g);
    return RankedTensorType::get(shape, type.getElementType());
  }

  RuntimeAPI &api;
  IRRewriter &b;
  Location loc;
  Operation *op;
  CollectiveOpInterface group;
  int64_t transposes = 0;
};

/// Replaces `op` and returns the number of transposes added, or failure.
/// Converts every element of `v` to `to` (an integer type) in one generic.
static Value castElements(IRRewriter &b, Location loc, Value v, Type to) {
  auto type = cast<RankedTensorType>(v.getType());
  Type from = type.getElementType();
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), to);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{v}, ValueRange{init},
             SmallVector<AffineMap>{id, id},
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value x = args[0];
               unsigned fromWidth = from.getIntOrFloatBitWidth(),
                        toWidth = to.getIntOrFloatBitWidth();
               // i1 is a flag (0 or 1), wider integers are signed.
               if (toWidth < fromWidth)
                 x = arith::TruncIOp::create(nb, nl, to, x);
               else if (fromWidth == 1)
                 x = arith::ExtUIOp::create(nb, nl, to, x);
               else
                 x = arith::ExtSIOp::create(nb, nl, to, x);
               linalg::YieldOp::create(nb, nl, x);
             })
      .getResult(0);
}

/// The runtime moves no integer narrower than 32 bits (masks and flags,
/// i1 from a comparison): such a collective moves them as i32. Only a sum
/// would differ; it is refused.
static LogicalResult widenNarrowIntegers(IRRewriter &b, Operation *op) {
  auto isNarrow = [](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    auto integer =
        tensor ? dyn_cast<IntegerType>(tensor.getElementType()) : nullptr;
    return integer && integer.getWidth() < 32;
  };
  if (llvm::none_of(op->getOperandTypes(), isNarrow) &&
      llvm::none_of(op->getResultTypes(), isNarrow))
    return success();
  if (auto ar = dyn_cast<AllReduceOp>(op);
      ar && (ar.getKind() == ReductionKind::Sum ||
             ar.getKind() == ReductionKind::Mean))
    return op->emitOpError() << "cannot sum " << ar.getType()
                             << " on the runtime: a narrow integer sum "
                                "would overflow";
  Type i32 = b.getI32Type();
  b.setInsertionPoint(op);
  for (OpOperand &operand : op->getOpOperands())
    if (isNarrow(operand.get().getType()))
      operand.set(castElements(b, op->getLoc(), operand.get(), i32));
  // A grouped receive's result is there when its group is: the cast back
  // goes after the group's end.
  Operation *ready = op;
  if (isGroupedMessage(op))
    for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
      if (auto call = dyn_cast<func::CallOp>(next);
          call &&
          call.getCallee() == RuntimeAPI::function("message_group_end")) {
        ready = call;
        break;
      }
  b.setInsertionPointAfter(ready);
  for (Value result : op->getResults()) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!isNarrow(type))
      continue;
    result.setType(type.clone(i32));
    Value narrow = castElements(b, op->getLoc(), result, type.getElementType());
    result.replaceAllUsesExcept(narrow, narrow.getDefiningOp());
  }
  return success();
}

/// The tag the runtime gets: a direct message's says so (its channel).
static int64_t messageTag(int64_t tag, bool direct) {
  return direct ? tag | EPL_RT_DIRECT_TAG : tag;
}

/// Replaces `op` with its runtime calls and returns the number of
/// transposes added, or failure. `gpu`: a direct send's buffer is read
/// when its receive takes it (on the CPU backends, at the send).
FailureOr<int64_t> lower(RuntimeAPI &api, IRRewriter &rewriter, Operation *op,
                         bool gpu) {
  auto groupOp = cast<CollectiveOpInterface>(op);
  rewriter.setInsertionPoint(op);
  Lowering l(api, rewriter, op, groupOp);
  auto &b = rewriter;

  LogicalResult result =
      llvm::TypeSwitch<Operation *, LogicalResult>(op)
          .Case([&](AllReduceOp ar) -> LogicalResult {
            auto type = ar.getType();
            FailureOr<std::string> fn =
                l.function("all_reduce", type.getElementType());
            if (failed(fn))
              return failure();
            Value out = l.allocate(type, ar.getInput());
            api.call(b, l.loc, *fn,
                     {l.readBuffer(ar.getInput()),
                      RuntimeAPI::unranked(b, l.loc, out), l.groupDesc(),
                      l.i32(static_cast<int64_t>(ar.getKind()))});
            b.replaceOp(op, l.toTensor(out));
            return success();
          })
          .Case([&](AllGatherOp ag) -> LogicalResult {
            auto in = ag.getInput().getType();
            FailureOr<std::string> fn =
                l.function("all_gather", in.getElementType());
            if (failed(fn) || failed(l.requireStatic(in)))
              return failure();
            int64_t g = groupOp.getGroupSize();
            // The runtime concatenates whole inputs: [g, in...]. Move the
            // group next to `dim` and merge them.
            RankedTensorType gathered = l.withLeadingGroup(in, g);
            Value out = l.allocate(gathered);
            api.call(b, l.loc, *fn,
                     {l.readBuffer(ag.getInput()),
                      RuntimeAPI::unranked(b, l.loc, out), l.groupDesc()});
            Value value = l.moveDim(l.toTensor(out), 0, ag.getDim());
            b.replaceOp(op, l.mergeDims(value, ag.getDim()));
            return success();
          })
          .Case([&](ReduceScatterOp rs) -> LogicalResult {
            auto in = rs.getInput().getType();
            FailureOr<std::string> fn =
                l.function("reduce_scatter", in.getElementType());
            if (failed(fn) || failed(l.requireStatic(in)))
              return failure();
            int64_t g = groupOp.getGroupSize();
            // The runtime scatters contiguous chunks: bring the g shards of
            // `dim` to the front first.
            Value shards = l.moveDim(l.splitDim(rs.getInput(), rs.getDim(), g),
                                     rs.getDim(), 0);
            Value out = l.allocate(rs.getType());
            api.call(b, l.loc, *fn,
                     {l.readBuffer(shards), RuntimeAPI::unranked(b, l.loc, out),
                      l.groupDesc(),
                      l.i32(static_cast<int64_t>(rs.getKind()))});
            b.replaceOp(op, l.toTensor(out));
            return success();
          })
          .Case([&](AllToAllOp a2a) -> LogicalResult {
            auto in = a2a.getInput().getType();
            FailureOr<std::string> fn =
                l.function("all_to_all", in.getElementType());
            if (failed(fn) || failed(l.requireStatic(in)))
              return failure();
            int64_t g = groupOp.getGroupSize();
            int64_t split = a2a.getSplitDim(), concat = a2a.getConcatDim();
            Value pieces =
                l.moveDim(l.splitDim(a2a.getInput(), split, g), split, 0);
            auto piecesType = cast<RankedTensorType>(pieces.getType());
            Value out = l.allocate(piecesType);
            api.call(b, l.loc, *fn,
                     {l.readBuffer(pieces), RuntimeAPI::unranked(b, l.loc, out),
                      l.groupDesc()});
            // out[i] came from device i: concatenate along `concat`.
            Value value = l.moveDim(l.toTensor(out), 0, concat);
            b.replaceOp(op, l.mergeDims(value, concat));
            return success();
          })
          .Case([&](BroadcastOp bc) -> LogicalResult {
            auto type = bc.getType();
            FailureOr<std::string> fn =
                l.function("broadcast", type.getElementType());
            if (failed(fn))
              return failure();
            Value out = l.allocate(type, bc.getInput());
            api.call(b, l.loc, *fn,
                     {l.readBuffer(bc.getInput()),
                      RuntimeAPI::unranked(b, l.loc, out), l.groupDesc(),
                      l.i64(bc.getRoot())});
            b.replaceOp(op, l.toTensor(out));
            return success();
          })
          .Case([&](SendOp send) -> LogicalResult {
            auto type = send.getInput().getType();
            FailureOr<std::string> fn =
                l.function("send", type.getElementType());
            if (failed(fn))
              return failure();
            Value buffer = l.readBuffer(send.getInput());
            // A direct send reads its buffer when its receive takes it, and
            // what the program does by then may write it: bufferization's
            // in-place decisions, and rewrites after this one, share
            // buffers no analysis here sees (through calls, loops,
            // selects, folded copies). It sends a copy of its own.
            if (gpu && send.getDirect()) {
              Value copy = l.allocate(type, send.getInput());
              memref::CopyOp::create(b, l.loc,
                                     bufferization::ToBufferOp::create(
                                         b, l.loc,
                                         cast<MemRefType>(copy.getType()),
                                         send.getInput(), /*read_only=*/true),
                                     copy);
              buffer = RuntimeAPI::unranked(b, l.loc, copy);
            }
            api.call(b, l.loc, *fn,
                     {buffer, l.groupDesc(), l.i64(send.getPeer()),
                      l.i64(messageTag(send.getTag(), send.getDirect()))});
            b.eraseOp(op);
            return success();
          })
          .Case([&](RecvOp recv) -> LogicalResult {
            auto type = recv.getType();
            FailureOr<std::string> fn =
                l.function("recv", type.getElementType());
            if (failed(fn) || failed(l.requireStatic(type)))
              return failure();
            Value out = l.allocate(type);
            api.call(b, l.loc, *fn,
                     {RuntimeAPI::unranked(b, l.loc, out), l.groupDesc(),
                      l.i64(recv.getPeer()),
                      l.i64(messageTag(recv.getTag(), recv.getDirect()))});
            b.replaceOp(op, l.toTensor(out));
            return success();
          })
          .Case([&](GroupIndexOp gi) -> LogicalResult {
            Value index =
                api.call(b, l.loc, RuntimeAPI::function("group_index"),
                         {l.groupDesc()}, {b.getI64Type()})
                    .getResult(0);
            b.replaceOp(op, arith::IndexCastOp::create(
                                b, l.loc, b.getIndexType(), index));
            return success();
          })
          .Default([&](Operation *) {
            return op->emitOpError("has no lowering to the runtime");
          });
  if (failed(result))
    return failure();
  return l.transposes;
}

static_assert(static_cast<int>(Phase::Forward) == EPL_RT_FORWARD &&
                  static_cast<int>(Phase::BackwardInput) ==
                      EPL_RT_BACKWARD_INPUT &&
                  static_cast<int>(Phase::BackwardWeight) ==
                      EPL_RT_BACKWARD_WEIGHT,
              "the runtime's phases are the dialect's");

/// Brackets a call of a pipeline schedule's action with the runtime's
/// action_begin / action_end, which time it for the trace, and drops
/// `epl.action`: the runtime calls carry it from here.
void lowerAction(RuntimeAPI &api, func::CallOp call, ActionAttr action) {
  OpBuilder b(call);
  Location loc = call.getLoc();
  api.call(
      b, loc, RuntimeAPI::function("action_begin"),
      {arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                    static_cast<int64_t>(action.getPhase())),
       arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                    action.getMicroBatch()),
       arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                    action.getStage())});
  b.setInsertionPointAfter(call);
  api.call(b, loc, RuntimeAPI::function("action_end"), {});
  call->removeAttr(EPLDialect::kActionAttrName);
}

/// Grouped messages complete together, untagged and each send waiting for
/// its receive (NCCL's, on GPUs): a program whose groups would wait for
/// each other, or whose receives would get another stream's message, must
/// not get here, wherever `grouped` came from. Direct messages go over
/// channels that carry no tag: a receive that would get another stream's
/// message must not get here either. So grouped and direct messages must be
/// in a pipeline's stage programs, which are simulated as the transport
/// moves them (checkMessageGroups, checkChannels), as
/// epl-pipeline-partition does before it marks them; or in a copy of one,
/// a runner's entry wrapper, which says whose (`epl.wraps`).
static LogicalResult verifyMessageKinds(ModuleOp module) {
  auto pipelines = llvm::to_vector(module.getOps<PipelineOp>());
  llvm::DenseSet<StringAttr> stagePrograms;
  for (PipelineOp pipeline : pipelines)
    for (func::FuncOp program : pipeline.getStageFunctions())
      stagePrograms.insert(program.getSymNameAttr());
  // The messages of `fn`, in order.
  auto messagesOf = [](func::FuncOp fn) {
    SmallVector<Operation *> messages;
    fn.walk([&](Operation *op) {
      if (isa<SendOp, RecvOp>(op))
        messages.push_back(op);
    });
    return messages;
  };
  // Whether two messages are one (a wrapper's copy of a program's).
  auto sameMessage = [](Operation *a, Operation *b) {
    return a->getName() == b->getName() &&
           a->getDiscardableAttrDictionary() ==
               b->getDiscardableAttrDictionary() &&
           a->getPropertiesAsAttribute() == b->getPropertiesAsAttribute() &&
           a->getOperandTypes() == b->getOperandTypes() &&
           a->getResultTypes() == b->getResultTypes();
  };
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (stagePrograms.contains(fn.getSymNameAttr()))
      continue;
    auto wraps =
        fn->getAttrOfType<FlatSymbolRefAttr>(EPLDialect::kWrapsAttrName);
    if (wraps && stagePrograms.contains(wraps.getAttr())) {
      // A copy: its messages must be the program's, which were checked.
      auto program = module.lookupSymbol<func::FuncOp>(wraps.getAttr());
      SmallVector<Operation *> ours = messagesOf(fn),
                               theirs = messagesOf(program);
      for (size_t i = 0; i < std::max(ours.size(), theirs.size()); ++i) {
        if (i < ours.size() && i < theirs.size() &&
            sameMessage(ours[i], theirs[i]))
          continue;
        InFlightDiagnostic d =
            (i < ours.size() ? ours[i] : fn.getOperation())->emitError()
            << "@" << fn.getSymName() << " wraps @" << program.getSymName()
            << " (epl.wraps) but its message " << i << " is not the "
            << "program's";
        if (i < theirs.size())
          d.attachNote(theirs[i]->getLoc()) << "the program's message " << i;
        return failure();
      }
      continue;
    }
    WalkResult walked =
        fn.walk([&](Operation *op) {
          if (!isGroupedMessage(op) && !isDirectMessage(op))
            return WalkResult::advance();
          op->emitOpError()
              << "is " << (isGroupedMessage(op) ? "grouped" : "direct")
              << " outside the stage programs of an epl.pipeline "
                 "(and a runner's copies of them), where nothing "
                 "checks that its "
              << (isGroupedMessage(op) ? "group finishes"
                                       : "channel gets its messages in order");
          return WalkResult::interrupt();
        });
    if (walked.wasInterrupted())
      return failure();
  }
  for (PipelineOp pipeline : pipelines) {
    SmallVector<func::FuncOp> programs = pipeline.getStageFunctions();
    int64_t messages = 0, grouped = 0, direct = 0;
    for (func::FuncOp program : programs)
      program.walk([&](Operation *op) {
        messages += isa<SendOp, RecvOp>(op);
        grouped += isGroupedMessage(op);
        direct += isDirectMessage(op);
      });
    if (!grouped && !direct)
      continue;
    if (grouped != messages && direct != messages) {
      InFlightDiagnostic d = pipeline.emitOpError();
      if (grouped)
        d << "groups " << grouped;
      if (grouped && direct)
        d << " and ";
      if (direct)
        d << "sends " << direct << " directly";
      return d << " of its " << messages
               << " messages: a pipeline's messages all go in groups, all "
                  "directly, or all staged";
    }
    std::string error;
    if (grouped &&
        failed(checkMessageGroups(programs, virtualStagesOf(programs), error)))
      return pipeline.emitOpError()
             << "has grouped messages that would not go as NCCL moves them "
                "(untagged, each send waiting for its receive, in groups "
                "between actions): "
             << error;
    if (direct &&
        failed(checkChannels(programs, virtualStagesOf(programs), error)))
      return pipeline.emitOpError()
             << "has direct messages that would not go as channels move them "
                "(untagged, in the order sent, per direction): "
             << error;
  }
  return success();
}

/// Opens, first thing in each function with direct messages (a stage
/// program, or the runner's wrapper of one), the channels to the peers
/// they go to and come from, in ascending order: every device runs its
/// program each step, and opening its pairs in one global order, both
/// members of each, no two devices wait for each other. Fails on a direct
/// message in a region or over a second device group.
static LogicalResult openChannels(RuntimeAPI &api, ModuleOp module) {
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    Operation *first = nullptr;
    std::set<int64_t> peers;
    WalkResult walked = fn.walk([&](Operation *op) {
      if (!isDirectMessage(op))
        return WalkResult::advance();
      auto message = cast<CollectiveOpInterface>(op);
      if (op->getParentOp() != fn) {
        op->emitOpError() << "is direct in a region; a device's channels "
                             "open when its program starts, and its direct "
                             "messages are in the program's body";
        return WalkResult::interrupt();
      }
      if (first &&
          (cast<CollectiveOpInterface>(first).getMeshAttr() !=
               message.getMeshAttr() ||
           cast<CollectiveOpInterface>(first).getAxes() != message.getAxes())) {
        op->emitOpError() << "is direct over another device group than the "
                             "direct message at "
                          << first->getLoc()
                          << "; a program's channels are over one";
        return WalkResult::interrupt();
      }
      first = first ? first : op;
      peers.insert(isa<SendOp>(op) ? cast<SendOp>(op).getPeer()
                                   : cast<RecvOp>(op).getPeer());
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return failure();
    if (!first)
      continue;
    auto group = cast<CollectiveOpInterface>(first);
    OpBuilder b = OpBuilder::atBlockBegin(&fn.front());
    Location loc = fn.getLoc();
    Value desc =
        api.groupDescriptor(b, loc, group.getMeshOp(), group.getAxes());
    for (int64_t peer : peers)
      api.call(
          b, loc, RuntimeAPI::function("open_channel"),
          {desc, arith::ConstantIntOp::create(b, loc, b.getI64Type(), peer)});
  }
  return success();
}

/// The device groups `fn` and the functions it calls communicate over in
/// collectives, keyed by mesh and axes as written (every device orders
/// them alike). Messages go over channels or groups of their own, and a
/// group's index communicates nothing.
static void
collectiveGroups(func::FuncOp fn, SymbolTable &symbols,
                 std::map<std::string, CollectiveOpInterface> &groups,
                 llvm::SmallPtrSetImpl<Operation *> &visited) {
  if (!visited.insert(fn).second)
    return;
  fn.walk([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
        collectiveGroups(callee, symbols, groups, visited);
      return;
    }
    auto collective = dyn_cast<CollectiveOpInterface>(op);
    if (!collective || isa<SendOp, RecvOp, GroupIndexOp>(op))
      return;
    std::string key;
    llvm::raw_string_ostream(key)
        << collective.getMeshAttr() << " " << collective.getAxes();
    groups.try_emplace(key, collective);
  });
}

/// Prepares, first thing in each program of a pipeline whose messages go
/// over channels (its stage programs, even one with no message, and the
/// runners' wrappers of them), the device groups of the collectives it
/// runs, its callees' included (a stage's gradient reduction, a
/// tensor-parallel layer's), in one global order: on a GPU, a group's
/// NCCL communicator made and connected at its first collective would
/// synchronize the GPU while a channel's send waits for its receive, for
/// good. Every member of a group runs a collective over it, so every
/// member prepares it, as its program's first collectives (before the
/// channels open).
static void prepareGroups(RuntimeAPI &api, ModuleOp module) {
  auto hasDirectMessages = [](func::FuncOp fn) {
    return fn
        .walk([](Operation *op) {
          return isDirectMessage(op) ? WalkResult::interrupt()
                                     : WalkResult::advance();
        })
        .wasInterrupted();
  };
  SymbolTable symbols(module);
  llvm::SmallPtrSet<Operation *, 8> programs;
  for (auto pipeline : module.getOps<PipelineOp>()) {
    SmallVector<func::FuncOp> stages = pipeline.getStageFunctions();
    if (llvm::any_of(stages, hasDirectMessages))
      for (func::FuncOp stage : stages)
        programs.insert(stage);
  }
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto wraps =
        fn->getAttrOfType<FlatSymbolRefAttr>(EPLDialect::kWrapsAttrName);
    if (hasDirectMessages(fn) ||
        (wraps && programs.contains(symbols.lookup(wraps.getAttr()))))
      programs.insert(fn);
  }
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal() || !programs.contains(fn))
      continue;
    std::map<std::string, CollectiveOpInterface> groups;
    llvm::SmallPtrSet<Operation *, 8> visited;
    collectiveGroups(fn, symbols, groups, visited);
    OpBuilder b = OpBuilder::atBlockBegin(&fn.front());
    for (auto &[key, op] : groups)
      api.call(
          b, fn.getLoc(), RuntimeAPI::function("prepare_group"),
          {api.groupDescriptor(b, fn.getLoc(), op.getMeshOp(), op.getAxes())});
  }
}

/// Brackets each run of `grouped` sends and receives (adjacent, nothing
/// that does work between them) with message_group_begin/end. Fails on an
/// op that would split the grouped messages between two actions, which
/// verifyMessageKinds simulated as one group, into two, and on a group
/// whose messages go over two device groups (NCCL would post them one
/// after the other).
static LogicalResult bracketMessageGroups(RuntimeAPI &api, ModuleOp module) {
  SmallVector<std::pair<Operation *, Operation *>> runs;
  WalkResult walked = module.walk([&](Block *block) {
    // `splitter` ended the run whose last message was `before`.
    Operation *first = nullptr, *last = nullptr, *splitter = nullptr,
              *before = nullptr;
    for (Operation &op : *block) {
      if (isGroupedMessage(&op)) {
        if (splitter) {
          splitter->emitOpError()
              << "sits between grouped messages with no action between them "
                 "(from "
              << before->getName() << " at " << before->getLoc() << " to "
              << op.getName() << " at " << op.getLoc()
              << "), one group: in two, their sends could wait for each "
                 "other forever";
          return WalkResult::interrupt();
        }
        auto groupOf = [](Operation *m) {
          auto c = cast<CollectiveOpInterface>(m);
          return std::make_pair(c.getMeshAttr(), c.getAxes());
        };
        // A run's results are there when it is done: one of its sends
        // cannot send what one of its receives gets (nothing but constants
        // sits between them, so that would be the receive's own result).
        if (auto send = dyn_cast<SendOp>(op);
            send && first && send.getInput().getDefiningOp<RecvOp>() &&
            send.getInput().getDefiningOp()->getBlock() == block &&
            !send.getInput().getDefiningOp()->isBeforeInBlock(first)) {
          op.emitOpError() << "sends what a receive of its own group gets, "
                              "which is there only when the group is done";
          return WalkResult::interrupt();
        }
        if (first && groupOf(first) != groupOf(&op)) {
          op.emitOpError() << "is grouped with messages over another device "
                              "group (from "
                           << first->getLoc()
                           << "); a group's messages go over one";
          return WalkResult::interrupt();
        }
        first = first ? first : &op;
        last = &op;
      } else if (op.hasAttr(EPLDialect::kActionAttrName)) {
        splitter = nullptr;
        if (first)
          runs.push_back({first, last});
        first = last = nullptr;
      } else if (first && !isInertBetweenMessages(&op)) {
        splitter = &op;
        before = last;
        runs.push_back({first, last});
        first = last = nullptr;
      }
    }
    if (first)
      runs.push_back({first, last});
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  for (auto [first, last] : runs) {
    OpBuilder b(first);
    api.call(b, first->getLoc(), RuntimeAPI::function("message_group_begin"),
             {});
    b.setInsertionPointAfter(last);
    api.call(b, last->getLoc(), RuntimeAPI::function("message_group_end"), {});
  }
  return success();
}

/// " at FILE:LINE:COL" of `loc` (or of the first file location in it);
/// empty when it has none.
static std::string atSource(Location loc) {
  auto file = dyn_cast<FileLineColLoc>(loc);
  if (!file)
    file = loc->findInstanceOf<FileLineColLoc>();
  if (!file)
    return "";
  return (" at " + file.getFilename().getValue() + ":" + Twine(file.getLine()) +
          ":" + Twine(file.getColumn()))
      .str();
}

/// A call cycle (a function calling itself, directly or through others)
/// would recurse without bound on the runners' stacks: an error naming
/// the cycle, at the call that closes it.
static LogicalResult checkCallCycles(ModuleOp module) {
  SymbolTable symbols(module);
  // Functions being visited (on the path), and those done.
  llvm::SmallPtrSet<Operation *, 8> onPath, done;
  SmallVector<func::FuncOp> path;
  std::function<LogicalResult(func::FuncOp)> visit =
      [&](func::FuncOp fn) -> LogicalResult {
    if (done.contains(fn))
      return success();
    onPath.insert(fn);
    path.push_back(fn);
    WalkResult walk = fn.walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee || callee.isExternal())
        return WalkResult::advance();
      if (onPath.contains(callee)) {
        InFlightDiagnostic diag = call.emitError()
                                  << "@" << callee.getSymName() << " calls ";
        auto from = llvm::find(path, callee);
        if (std::next(from) == path.end())
          diag << "itself";
        for (auto it = std::next(from); it != path.end(); ++it)
          diag << "@" << it->getSymName()
               << (std::next(it) == path.end() ? ", which calls it back"
                                               : ", which calls ");
        diag << ": a recursive function cannot run (nothing bounds how deep "
                "it goes)";
        return WalkResult::interrupt();
      }
      return failed(visit(callee)) ? WalkResult::interrupt()
                                   : WalkResult::advance();
    });
    path.pop_back();
    onPath.erase(fn);
    done.insert(fn);
    return failure(walk.wasInterrupted());
  };
  for (auto fn : module.getOps<func::FuncOp>())
    if (failed(visit(fn)))
      return failure();
  return success();
}

/// A gather's indices are data (class ids, token ids): one out of range
/// would read another row, or past the buffer. Each `tensor.extract` in a
/// linalg body (nested in an `scf.if` there too) with a computed index gets
/// a `cf.assert` that it is in range, naming where.
static void checkGatherIndices(ModuleOp module) {
  SmallVector<tensor::ExtractOp> gathers;
  // Gathers are reads in linalg bodies (where epl-autodiff knows them);
  // the loops decomposed ops become index their own bounds already.
  module.walk([&](tensor::ExtractOp e) {
    if (e->getParentOfType<linalg::LinalgOp>() &&
        llvm::any_of(e.getIndices(), [](Value i) {
          return !i.getDefiningOp<arith::ConstantOp>();
        }))
      gathers.push_back(e);
  });
  for (tensor::ExtractOp e : gathers) {
    OpBuilder b(e);
    Location loc = e.getLoc();
    Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
    for (auto [d, index] : llvm::enumerate(e.getIndices())) {
      Value size = tensor::DimOp::create(b, loc, e.getTensor(), d);
      ok = arith::AndIOp::create(
          b, loc, ok,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index,
                                size));
    }
    std::string where = atSource(loc);
    cf::AssertOp::create(b, loc, ok,
                         "an index of a gather (tensor.extract" + where +
                             ") is out of range: an id or class is negative or "
                             "past the end of its table");
  }
}

/// An integer division by zero (or of the lowest value by -1, which
/// overflows) traps the CPU: the run would end in SIGFPE. Each one whose
/// divisor is not a constant that cannot fail gets a `cf.assert` naming
/// where (PyTorch raises on a division by zero too); they are added to
/// `checks`.
/// Whether `op` divides signed integers (which overflow at the lowest
/// value divided by -1).
static bool isSignedDivision(Operation *op) {
  return isa<arith::DivSIOp, arith::RemSIOp, arith::CeilDivSIOp,
             arith::FloorDivSIOp>(op);
}

static void checkIntegerDivisions(ModuleOp module,
                                  llvm::SmallPtrSetImpl<Operation *> &checks) {
  SmallVector<Operation *> divisions;
  module.walk([&](Operation *op) {
    if (!isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
             arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(op) ||
        !op->getResult(0).getType().isIntOrIndex())
      return;
    APInt divisor;
    if (matchPattern(op->getOperand(1), m_ConstantInt(&divisor)) &&
        !divisor.isZero() && !(isSignedDivision(op) && divisor.isAllOnes()))
      return;
    divisions.push_back(op);
  });
  for (Operation *op : divisions) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    Type type = rhs.getType();
    auto constant = [&](const APInt &v) {
      return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, v))
          .getResult();
    };
    unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rhs,
                                     constant(APInt::getZero(width)));
    if (isSignedDivision(op)) {
      Value lowest =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lhs,
                                constant(APInt::getSignedMinValue(width)));
      Value minusOne =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rhs,
                                constant(APInt::getAllOnes(width)));
      ok = arith::AndIOp::create(
          b, loc, ok,
          arith::XOrIOp::create(b, loc,
                                arith::AndIOp::create(b, loc, lowest, minusOne),
                                arith::ConstantIntOp::create(b, loc, 1, 1)));
    }
    // (A named op's body, linalg.div's, has no place of its own.)
    std::string where = atSource(loc);
    if (auto parent = op->getParentOfType<linalg::LinalgOp>();
        where.empty() && parent)
      where = atSource(parent.getLoc());
    checks.insert(cf::AssertOp::create(
        b, loc, ok,
        "an integer division (" + op->getName().getStringRef().str() + where +
            ") divides by zero, or the lowest value by -1, which overflows"));
  }
}

/// `cf.assert %ok, "msg"` as `scf.if !ok { epl_rt_assert_failed("msg") }`,
/// the message a constant i8 global: a failed check ends the run with a
/// message instead of an abort.
static void lowerAsserts(ModuleOp module, RuntimeAPI &api,
                         bool deviceAssertions,
                         const llvm::SmallPtrSetImpl<Operation *> &divisions) {
  SmallVector<cf::AssertOp> asserts;
  module.walk([&](cf::AssertOp a) {
    // A kernel cannot call the host: in a linalg body on a GPU, the
    // assertion stays the kernel's own; so does a division's check in
    // host code, which epl-linalg-to-gpu moves into a kernel with the
    // loop around it (a call would keep it on the host).
    if (!deviceAssertions ||
        !(a->getParentOfType<linalg::LinalgOp>() || divisions.contains(a)))
      asserts.push_back(a);
  });
  llvm::StringMap<memref::GlobalOp> messages;
  OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
  for (cf::AssertOp a : asserts) {
    // The message says where its check is, so that a user finds the op it
    // guards (torch-mlir's "index must be smaller than dim size" names
    // none), unless it says so already.
    std::string text = a.getMsg().str();
    if (std::string where = atSource(a.getLoc());
        !where.empty() && !StringRef(text).contains(where))
      text += where;
    auto type =
        MemRefType::get({static_cast<int64_t>(text.size())}, top.getI8Type());
    memref::GlobalOp &global = messages[text];
    if (!global) {
      SmallVector<int8_t> bytes(text.begin(), text.end());
      global = memref::GlobalOp::create(
          top, a.getLoc(),
          "__epl_assert_" + std::to_string(messages.size() - 1),
          top.getStringAttr("private"), type,
          DenseIntElementsAttr::get(
              RankedTensorType::get(type.getShape(), top.getI8Type()),
              llvm::ArrayRef(bytes)),
          /*constant=*/true, /*alignment=*/nullptr);
      global->setAttr(EPLDialect::kHostGlobalAttrName, top.getUnitAttr());
    }
    OpBuilder b(a);
    Location loc = a.getLoc();
    Value failed = arith::XOrIOp::create(
        b, loc, a.getArg(), arith::ConstantIntOp::create(b, loc, 1, 1));
    scf::IfOp::create(b, loc, failed, [&](OpBuilder &tb, Location tl) {
      Value ref =
          memref::GetGlobalOp::create(tb, tl, type, global.getSymName());
      api.call(tb, tl, RuntimeAPI::function("assert_failed"),
               {RuntimeAPI::unranked(tb, tl, ref)});
      scf::YieldOp::create(tb, tl);
    });
    a.erase();
  }
}

struct EPLLowerToRuntimePass
    : mlir::epl::impl::EPLLowerToRuntimePassBase<EPLLowerToRuntimePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(Config::get(module).checkTarget(
            gpu, [&] { return module.emitError(getArgument()) << ": "; })))
      return signalPassFailure();
    if (failed(checkCallCycles(module)))
      return signalPassFailure();
    RuntimeAPI api(module);
    if (failed(verifyMessageKinds(module)) ||
        failed(bracketMessageGroups(api, module)) ||
        failed(openChannels(api, module)))
      return signalPassFailure();
    // (At the entry, before the channels open.)
    prepareGroups(api, module);
    SmallVector<Operation *> ops;
    module.walk([&](CollectiveOpInterface op) { ops.push_back(op); });

    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      if (failed(widenNarrowIntegers(rewriter, op)))
        return signalPassFailure();
      FailureOr<int64_t> transposes = lower(api, rewriter, op, gpu);
      if (failed(transposes))
        return signalPassFailure();
      ++numCollectives;
      numTransposes += *transposes;
    }

    SmallVector<std::pair<func::CallOp, ActionAttr>> actions;
    module.walk([&](func::CallOp call) {
      if (auto action =
              call->getAttrOfType<ActionAttr>(EPLDialect::kActionAttrName))
        actions.push_back({call, action});
    });
    for (auto [call, action] : actions)
      lowerAction(api, call, action);
    numActions += actions.size();
    checkGatherIndices(module);
    llvm::SmallPtrSet<Operation *, 8> divisions;
    checkIntegerDivisions(module, divisions);
    lowerAsserts(module, api, deviceAssertions, divisions);

    // On one device (no partitioning ran), a sharding constraint is the
    // identity.
    module.walk([](ShardingConstraintOp c) {
      c.getResult().replaceAllUsesWith(c.getInput());
      c.erase();
    });
    // Below this level, values are buffers of one device: what they are in
    // the step (names, kinds, how they shard a global value) is the
    // runner's business, read before. LLVM would warn about each.
    // (On a GPU, epl.read_only and epl.in_place_of stay for
    // epl-copy-arguments-to-device, which drops them; on a CPU,
    // epl.in_place_of for epl-tie-in-place-arguments, which does.)
    auto withoutEPL = [&](DictionaryAttr attrs) {
      SmallVector<NamedAttribute> kept;
      if (attrs)
        llvm::copy_if(attrs, std::back_inserter(kept), [&](NamedAttribute a) {
          return !a.getName().strref().starts_with("epl.") ||
                 (gpu && a.getName() == EPLDialect::kReadOnlyAttrName) ||
                 a.getName() == EPLDialect::kInPlaceOfAttrName;
        });
      return kept;
    };
    for (auto fn : module.getOps<func::FuncOp>()) {
      // All at once: one at a time rebuilds the list per argument.
      FunctionAttrEdit edit(fn);
      for (unsigned i = 0; i < fn.getNumArguments(); ++i)
        edit.arg(i) = NamedAttrList(withoutEPL(fn.getArgAttrDict(i)));
      for (unsigned i = 0; i < fn.getNumResults(); ++i)
        edit.result(i) = NamedAttrList(withoutEPL(fn.getResultAttrDict(i)));
      edit.apply();
    }
    // Which stage function each device runs is the runner's business too,
    // and which one a wrapper holds.
    for (auto fn : module.getOps<func::FuncOp>())
      fn->removeAttr(EPLDialect::kWrapsAttrName);
    for (PipelineOp pipeline :
         llvm::make_early_inc_range(module.getOps<PipelineOp>()))
      pipeline.erase();
    // Meshes only describe groups, which the descriptors now carry.
    for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
      if (SymbolTable::symbolKnownUseEmpty(mesh, module))
        mesh.erase();
  }
};
} // namespace
