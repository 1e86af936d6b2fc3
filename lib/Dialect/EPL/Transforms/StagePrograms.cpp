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
