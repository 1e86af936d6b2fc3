//===- StagePrograms.cpp - Reading the schedule of stage programs ---------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/Transforms/StagePrograms.h"
#include "epl/Dialect/EPL/IR/EPLOps.h"

#include <deque>
#include <map>

using namespace mlir;
using namespace mlir::epl;

namespace {
pipeline::ActionKind actionKindOf(Phase phase) {
  return phase == Phase::Forward         ? pipeline::ActionKind::Forward
         : phase == Phase::BackwardInput ? pipeline::ActionKind::BackwardInput
                                         : pipeline::ActionKind::BackwardWeight;
}
} // namespace

FailureOr<pipeline::Program>
mlir::epl::readStagePrograms(ArrayRef<func::FuncOp> stagePrograms,
                             int64_t virtualStages) {
  // Messages of one (sender, receiver, tag) stream arrive in the order they
  // were sent: the k-th receive of a stream carries the k-th send's value,
  // made by the action whose call defines it.
  pipeline::Program events;
  events.virtualStages = virtualStages;
  events.scheduleDependencies = false;
  events.devices.resize(stagePrograms.size());
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::deque<pipeline::Action>>
      streams;
  auto actionOf = [](func::CallOp call) -> std::optional<pipeline::Action> {
    auto action = call->getAttrOfType<ActionAttr>(EPLDialect::kActionAttrName);
    if (!action)
      return std::nullopt;
    return pipeline::Action{actionKindOf(action.getPhase()), action.getStage(),
                            action.getMicroBatch()};
  };
  for (auto [d, program] : llvm::enumerate(stagePrograms))
    for (auto send : func::FuncOp(program).getOps<SendOp>()) {
      auto call = send.getInput().getDefiningOp<func::CallOp>();
      std::optional<pipeline::Action> action =
          call ? actionOf(call) : std::nullopt;
      if (!action)
        return send.emitError() << "sends a value no pipeline action made";
      streams[std::make_tuple(static_cast<int64_t>(d),
                              static_cast<int64_t>(send.getPeer()),
                              static_cast<int64_t>(send.getTag()))]
          .push_back(*action);
    }
  for (auto [d, program] : llvm::enumerate(stagePrograms))
    for (Operation &op : func::FuncOp(program).front()) {
      pipeline::Event e{};
      if (auto call = dyn_cast<func::CallOp>(op)) {
        std::optional<pipeline::Action> action = actionOf(call);
        if (!action)
          continue;
        e.kind = pipeline::Event::Kind::Compute;
        e.action = *action;
      } else if (auto send = dyn_cast<SendOp>(op)) {
        e.kind = pipeline::Event::Kind::Send;
        e.action = *actionOf(send.getInput().getDefiningOp<func::CallOp>());
        e.peer = send.getPeer();
        e.tag = send.getTag();
      } else if (auto recv = dyn_cast<RecvOp>(op)) {
        auto &stream = streams[std::make_tuple(
            static_cast<int64_t>(recv.getPeer()), static_cast<int64_t>(d),
            static_cast<int64_t>(recv.getTag()))];
        if (stream.empty())
          return recv.emitError() << "receives a message nobody sends";
        e.kind = pipeline::Event::Kind::Recv;
        e.action = stream.front();
        stream.pop_front();
        e.peer = recv.getPeer();
        e.tag = recv.getTag();
      } else {
        continue;
      }
      events.devices[d].push_back(e);
    }
  return events;
}

int64_t mlir::epl::virtualStagesOf(ArrayRef<func::FuncOp> stagePrograms) {
  int64_t stages = 0;
  for (func::FuncOp program : stagePrograms)
    program.walk([&](func::CallOp call) {
      if (auto action =
              call->getAttrOfType<ActionAttr>(EPLDialect::kActionAttrName))
        stages = std::max(stages, action.getStage() + 1);
    });
  return stages;
}

/// Fails, saying so in `os`, on a message of `program` nested in a region,
/// which the simulator does not read.
static LogicalResult checkMessagesInBody(func::FuncOp program,
                                         llvm::raw_ostream &os) {
  Operation *nested = nullptr;
  program.walk([&](Operation *op) {
    if (isa<SendOp, RecvOp>(op) && op->getParentOp() != program && !nested)
      nested = op;
  });
  if (!nested)
    return success();
  os << "stage program @" << program.getSymName() << " has a message in "
     << "a region (" << nested->getName() << " at " << nested->getLoc() << ")";
  return failure();
}

/// Reads the programs as a schedule and simulates them, then checks them
/// as `transport` moves messages.
static LogicalResult simulateOver(
    ArrayRef<func::FuncOp> stagePrograms, int64_t virtualStages,
    std::string &error,
    function_ref<LogicalResult(const pipeline::Program &, std::string &)>
        transport) {
  FailureOr<pipeline::Program> sim =
      readStagePrograms(stagePrograms, virtualStages);
  if (failed(sim)) {
    error += "its stage programs do not read as a schedule";
    return failure();
  }
  if (failed(pipeline::simulate(*sim, pipeline::Costs(), error)) ||
      failed(transport(*sim, error)))
    return failure();
  return success();
}

LogicalResult mlir::epl::checkChannels(ArrayRef<func::FuncOp> stagePrograms,
                                       int64_t virtualStages,
                                       std::string &error) {
  llvm::raw_string_ostream os(error);
  for (func::FuncOp program : stagePrograms)
    if (failed(checkMessagesInBody(program, os)))
      return failure();
  return simulateOver(stagePrograms, virtualStages, error,
                      pipeline::checkInOrderPerDirection);
}

LogicalResult
mlir::epl::checkMessageGroups(ArrayRef<func::FuncOp> stagePrograms,
                              int64_t virtualStages, std::string &error) {
  llvm::raw_string_ostream os(error);
  for (func::FuncOp program : stagePrograms) {
    bool messages = false;
    program.walk([&](Operation *op) { messages |= isa<SendOp, RecvOp>(op); });
    if (!messages) {
      os << "stage program @" << program.getSymName()
         << " sends and receives nothing";
      return failure();
    }
    if (failed(checkMessagesInBody(program, os)))
      return failure();
    // `after`: what ended the current run before its next message.
    Operation *after = nullptr;
    bool inRun = false;
    for (Operation &op : program.front()) {
      if (isa<SendOp, RecvOp>(op)) {
        if (after) {
          os << after->getName() << " at " << after->getLoc()
             << " sits between two messages with no action between them "
                "(the second at "
             << op.getLoc() << ")";
          return failure();
        }
        inRun = true;
      } else if (op.hasAttr(EPLDialect::kActionAttrName)) {
        inRun = false;
        after = nullptr;
      } else if (inRun && !after && !isInertBetweenMessages(&op)) {
        after = &op;
      }
    }
  }
  return simulateOver(stagePrograms, virtualStages, error,
                      pipeline::checkGroupedRendezvous);
}
