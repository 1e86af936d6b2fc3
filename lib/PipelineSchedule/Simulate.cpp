//===- Simulate.cpp - Timing a pipeline schedule --------------------------===//
//
// Part of EPL-MLIR.
//
// Sends never block, so a device's times depend only on the messages it
// receives, whose arrival times are fixed once their senders reach them:
// running each device as far as it can, over and over, gives the exact times
// in whatever order the devices are visited, and stops with every device
// finished or each unfinished one waiting on a receive no one will match.
// checkGroupedRendezvous runs devices the same way, over and over, but a
// device waits at each group of messages until all of them are matched.
//
//===----------------------------------------------------------------------===//

#include "epl/PipelineSchedule/Simulate.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <tuple>

using namespace mlir::epl::pipeline;
using llvm::failure;
using llvm::FailureOr;
using llvm::Twine;

/// The results `action` reads (see Schedule.h).
static llvm::SmallVector<Action, 2> inputsOf(const Action &action,
                                             int64_t virtualStages) {
  auto [kind, stage, mb] = action;
  switch (kind) {
  case ActionKind::Forward:
    if (stage == 0)
      return {};
    return {{ActionKind::Forward, stage - 1, mb}};
  case ActionKind::BackwardInput:
    if (stage + 1 == virtualStages)
      return {{ActionKind::Forward, stage, mb}};
    return {{ActionKind::Forward, stage, mb},
            {ActionKind::BackwardInput, stage + 1, mb}};
  case ActionKind::BackwardWeight:
    return {{ActionKind::BackwardInput, stage, mb}};
  }
  llvm_unreachable("unknown action kind");
}

/// The stage that reads `action`'s result besides its own: the next stage
/// reads F's activations, the previous one B's input gradient.
static std::optional<int64_t> otherReader(const Action &action,
                                          int64_t virtualStages) {
  int64_t stage = action.virtualStage;
  if (action.kind == ActionKind::Forward && stage + 1 < virtualStages)
    return stage + 1;
  if (action.kind == ActionKind::BackwardInput && stage > 0)
    return stage - 1;
  return std::nullopt;
}

/// The tag of the stream that carries `result` (see withCommunication).
static int64_t tagOf(const Action &result) {
  return result.kind == ActionKind::Forward ? 2 * result.virtualStage
                                            : 2 * result.virtualStage - 1;
}

Program mlir::epl::pipeline::withCommunication(const Schedule &schedule,
                                               ScheduleShape shape) {
  Program program;
  program.virtualStages = shape.virtualStages();
  for (int64_t device = 0, e = schedule.size(); device < e; ++device) {
    std::vector<Event> &events = program.devices.emplace_back();
    for (const Action &action : schedule[device]) {
      for (const Action &input : inputsOf(action, program.virtualStages)) {
        int64_t from = shape.deviceOf(input.virtualStage);
        if (from != device)
          events.push_back({Event::Kind::Recv, input, from, tagOf(input)});
      }
      events.push_back({Event::Kind::Compute, action});
      if (auto reader = otherReader(action, program.virtualStages)) {
        int64_t to = shape.deviceOf(*reader);
        if (to != device)
          events.push_back({Event::Kind::Send, action, to, tagOf(action)});
      }
    }
  }
  return program;
}

/// "F(stage 0, micro-batch 1)", "the send of ... to device 1 (tag 0)".
static std::string describe(const Event &event) {
  std::string action = toString(event.action);
  switch (event.kind) {
  case Event::Kind::Compute:
    return action;
  case Event::Kind::Send:
    return llvm::formatv("the send of {0} to device {1} (tag {2})", action,
                         event.peer, event.tag);
  case Event::Kind::Recv:
    return llvm::formatv("the receive of {0} from device {1} (tag {2})", action,
                         event.peer, event.tag);
  }
  llvm_unreachable("unknown event kind");
}

namespace {
/// A message sent and not yet received.
struct Message {
  Action action;
  double arrival;
  /// The send's index in its device's events, for errors.
  size_t sendIndex;
};

/// One device's progress.
struct DeviceState {
  size_t next = 0;
  /// When the events before `next` are done.
  double time = 0;
  double busy = 0;
  /// Results computed here or received: what computes here may read.
  std::set<std::tuple<ActionKind, int64_t, int64_t>> results;
  /// (stage, micro-batch) pairs forwarded here and not yet backwarded.
  std::set<std::pair<int64_t, int64_t>> inFlight;
  int64_t peakInFlight = 0;

  bool has(const Action &a) const {
    return results.count({a.kind, a.virtualStage, a.microBatch});
  }
};
} // namespace

FailureOr<Simulation> mlir::epl::pipeline::simulate(const Program &program,
                                                    const Costs &costs,
                                                    std::string &error) {
  int64_t numDevices = program.devices.size();
  auto fail = [&](int64_t device, size_t index,
                  const Twine &what) -> FailureOr<Simulation> {
    error =
        ("device " + Twine(device) + ", event " + Twine(index) + ": " + what)
            .str();
    return failure();
  };
  auto usable = [](double c) { return std::isfinite(c) && c >= 0; };
  if (!usable(costs.forward) || !usable(costs.backwardInput) ||
      !usable(costs.backwardWeight) || !usable(costs.send)) {
    error = llvm::formatv("costs must be finite and not negative: F {0}, B "
                          "{1}, W {2}, send {3}",
                          costs.forward, costs.backwardInput,
                          costs.backwardWeight, costs.send)
                .str();
    return failure();
  }
  for (int64_t d = 0; d < numDevices; ++d) {
    for (size_t i = 0, e = program.devices[d].size(); i < e; ++i) {
      const Event &event = program.devices[d][i];
      if (event.action.virtualStage < 0 ||
          event.action.virtualStage >= program.virtualStages)
        return fail(d, i,
                    describe(event) + ": the model has stages 0 to " +
                        Twine(program.virtualStages - 1));
      if (event.action.microBatch < 0)
        return fail(d, i, describe(event) + ": a negative micro-batch");
      if (event.kind == Event::Kind::Compute)
        continue;
      if (event.peer == d)
        return fail(d, i, describe(event) + ": a device cannot message itself");
      if (event.peer < 0 || event.peer >= numDevices)
        return fail(d, i,
                    describe(event) + ": the program has devices 0 to " +
                        Twine(numDevices - 1));
    }
  }

  std::vector<DeviceState> states(numDevices);
  // Messages on their way, by (sender, receiver, tag), oldest first.
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::deque<Message>> queues;
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t d = 0; d < numDevices; ++d) {
      DeviceState &state = states[d];
      const std::vector<Event> &events = program.devices[d];
      for (; state.next < events.size(); ++state.next, progress = true) {
        const Event &event = events[state.next];
        const Action &action = event.action;
        if (event.kind == Event::Kind::Recv) {
          std::deque<Message> &queue = queues[{event.peer, d, event.tag}];
          if (queue.empty())
            break;
          Message message = queue.front();
          queue.pop_front();
          if (message.action != action)
            return fail(d, state.next,
                        describe(event) + " gets the message of event " +
                            Twine(message.sendIndex) + " of device " +
                            Twine(event.peer) + ", which carries " +
                            toString(message.action));
          state.time = std::max(state.time, message.arrival);
          state.results.insert(
              {action.kind, action.virtualStage, action.microBatch});
          continue;
        }
        if (event.kind == Event::Kind::Send) {
          if (!state.has(action))
            return fail(d, state.next,
                        describe(event) + " comes before the device has " +
                            toString(action));
          queues[{d, event.peer, event.tag}].push_back(
              {action, state.time + costs.send, state.next});
          continue;
        }
        for (const Action &input : program.scheduleDependencies
                                       ? inputsOf(action, program.virtualStages)
                                       : llvm::SmallVector<Action, 2>())
          if (!state.has(input))
            return fail(d, state.next,
                        toString(action) + " needs " + toString(input) +
                            ", which the device has neither computed nor "
                            "received before it");
        double cost = action.kind == ActionKind::Forward ? costs.forward
                      : action.kind == ActionKind::BackwardInput
                          ? costs.backwardInput
                          : costs.backwardWeight;
        state.time += cost;
        state.busy += cost;
        state.results.insert(
            {action.kind, action.virtualStage, action.microBatch});
        std::pair<int64_t, int64_t> pair{action.virtualStage,
                                         action.microBatch};
        if (action.kind == ActionKind::Forward)
          state.inFlight.insert(pair);
        else if (action.kind == ActionKind::BackwardWeight)
          state.inFlight.erase(pair); // W reads the forward's activations.
        state.peakInFlight =
            std::max<int64_t>(state.peakInFlight, state.inFlight.size());
      }
    }
  }

  // Stuck: every unfinished device waits on a receive. Follow the waits
  // from the first one until a device that finished or one seen before.
  for (int64_t d = 0; d < numDevices; ++d) {
    if (states[d].next == program.devices[d].size())
      continue;
    std::vector<std::string> chain;
    std::set<int64_t> seen{d};
    for (int64_t waiter = d;;) {
      int64_t peer = program.devices[waiter][states[waiter].next].peer;
      const std::vector<Event> &peerEvents = program.devices[peer];
      size_t at = states[peer].next;
      if (at == peerEvents.size()) {
        chain.push_back(
            llvm::formatv("device {0} has finished without sending it", peer));
        break;
      }
      if (!seen.insert(peer).second) {
        chain.back() += ", a cycle";
        break;
      }
      chain.push_back(llvm::formatv(
          "device {0} waits at event {1} for {2} from device {3}", peer, at,
          toString(peerEvents[at].action), peerEvents[at].peer));
      waiter = peer;
    }
    return fail(d, states[d].next,
                describe(program.devices[d][states[d].next]) +
                    " waits forever: " + llvm::join(chain, "; "));
  }
  for (const auto &[stream, queue] : queues) {
    if (queue.empty())
      continue;
    auto [from, to, tag] = stream;
    return fail(from, queue.front().sendIndex,
                describe({Event::Kind::Send, queue.front().action, to, tag}) +
                    " is never received");
  }

  Simulation simulation;
  for (const DeviceState &state : states)
    simulation.makespan = std::max(simulation.makespan, state.time);
  for (const DeviceState &state : states) {
    simulation.busy.push_back(state.busy);
    simulation.idle.push_back(simulation.makespan - state.busy);
    simulation.peakInFlight.push_back(state.peakInFlight);
  }
  return simulation;
}

/// Whether the receive at `recvAt` (device, index) gets what it expects
/// from the send at `sendAt` that an untagged transport matches it with;
/// else fills `error`, saying `why` the tags do not tell them apart.
static llvm::LogicalResult checkUntaggedMatch(const Program &program,
                                              std::pair<int64_t, size_t> sendAt,
                                              std::pair<int64_t, size_t> recvAt,
                                              const char *why,
                                              std::string &error) {
  auto [sendDevice, sendIndex] = sendAt;
  auto [recvDevice, recvIndex] = recvAt;
  const Event &send = program.devices[sendDevice][sendIndex];
  const Event &recv = program.devices[recvDevice][recvIndex];
  if (send.tag == recv.tag && send.action == recv.action)
    return llvm::success();
  error = llvm::formatv("device {0}, event {1}: {2} would get the message of "
                        "event {3} of device {4}, {5} (tag {6}): {7}",
                        recvDevice, recvIndex, describe(recv), sendIndex,
                        sendDevice, toString(send.action), send.tag, why)
              .str();
  return failure();
}

llvm::LogicalResult
mlir::epl::pipeline::checkGroupedRendezvous(const Program &program,
                                            std::string &error) {
  using Pair = std::pair<int64_t, int64_t>;
  int64_t numDevices = program.devices.size();
  // Per (sender, receiver): the events (device, index) of the sends and of
  // the receives posted so far, in order; the k-th of each meet.
  std::map<Pair, std::vector<std::pair<int64_t, size_t>>> sends, receives;
  // Per device: its next event, and the end of the group it waits in (0
  // when it waits in none); per event: its message's index in its pair.
  std::vector<size_t> next(numDevices, 0), groupEnd(numDevices, 0);
  std::vector<std::vector<size_t>> indexOf(numDevices);
  for (int64_t d = 0; d < numDevices; ++d)
    indexOf[d].resize(program.devices[d].size());
  auto pairOf = [](int64_t d, const Event &e) {
    return e.kind == Event::Kind::Send ? Pair{d, e.peer} : Pair{e.peer, d};
  };
  auto matched = [&](int64_t d, size_t i) {
    const Event &e = program.devices[d][i];
    auto &other = e.kind == Event::Kind::Send ? receives : sends;
    return other[pairOf(d, e)].size() > indexOf[d][i];
  };
  auto groupDone = [&](int64_t d) {
    for (size_t i = next[d]; i < groupEnd[d]; ++i)
      if (!matched(d, i))
        return false;
    return true;
  };

  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t d = 0; d < numDevices; ++d) {
      const std::vector<Event> &events = program.devices[d];
      if (groupEnd[d]) {
        if (!groupDone(d))
          continue;
        next[d] = groupEnd[d];
        groupEnd[d] = 0;
        progress = true;
      }
      while (next[d] < events.size() &&
             events[next[d]].kind == Event::Kind::Compute)
        ++next[d];
      if (next[d] == events.size())
        continue;
      // Post the run of sends and receives that starts here, as one group.
      progress = true;
      size_t &end = groupEnd[d];
      for (end = next[d];
           end < events.size() && events[end].kind != Event::Kind::Compute;
           ++end) {
        const Event &e = events[end];
        bool isSend = e.kind == Event::Kind::Send;
        Pair pair = pairOf(d, e);
        auto &mine = (isSend ? sends : receives)[pair];
        auto &theirs = (isSend ? receives : sends)[pair];
        size_t k = indexOf[d][end] = mine.size();
        mine.push_back({d, end});
        if (theirs.size() <= k)
          continue;
        if (failed(checkUntaggedMatch(program, isSend ? mine[k] : theirs[k],
                                      isSend ? theirs[k] : mine[k],
                                      "messages between two GPUs carry no tag",
                                      error)))
          return failure();
      }
    }
  }
  std::vector<std::string> waits;
  for (int64_t d = 0; d < numDevices; ++d) {
    if (!groupEnd[d])
      continue;
    size_t i = next[d];
    while (matched(d, i))
      ++i;
    waits.push_back(llvm::formatv("device {0} at event {1} ({2})", d, i,
                                  describe(program.devices[d][i])));
  }
  if (waits.empty())
    return llvm::success();
  error = "its groups of sends and receives would wait for each other "
          "forever: " +
          llvm::join(waits, "; ");
  return failure();
}

llvm::LogicalResult
mlir::epl::pipeline::checkInOrderPerDirection(const Program &program,
                                              std::string &error) {
  using Pair = std::pair<int64_t, int64_t>;
  // Per (sender, receiver): the sends and the receives, (device, index),
  // in program order; the k-th of each meet.
  std::map<Pair, std::vector<std::pair<int64_t, size_t>>> sends, receives;
  for (auto [d, events] : llvm::enumerate(program.devices))
    for (auto [i, e] : llvm::enumerate(events)) {
      int64_t device = d;
      if (e.kind == Event::Kind::Send)
        sends[{device, e.peer}].push_back({device, i});
      else if (e.kind == Event::Kind::Recv)
        receives[{e.peer, device}].push_back({device, i});
    }
  for (auto &[pair, recvs] : receives) {
    const auto &sent = sends[pair];
    for (size_t k = 0; k < recvs.size() && k < sent.size(); ++k)
      if (failed(checkUntaggedMatch(program, sent[k], recvs[k],
                                    "a channel between two GPUs carries no tag",
                                    error)))
        return failure();
  }
  return llvm::success();
}

void mlir::epl::pipeline::print(const Simulation &simulation,
                                llvm::raw_ostream &os) {
  os << llvm::format("makespan %g\n", simulation.makespan);
  os << llvm::format("%6s %10s %10s %7s %15s\n", "device", "busy", "idle",
                     "bubble", "peak in flight");
  for (size_t d = 0, e = simulation.busy.size(); d < e; ++d) {
    double idle = simulation.idle[d];
    double bubble =
        simulation.makespan > 0 ? 100 * idle / simulation.makespan : 0;
    os << llvm::format("%6zu %10.4g %10.4g %6.1f%% %15lld\n", d,
                       simulation.busy[d], idle, bubble,
                       static_cast<long long>(simulation.peakInFlight[d]));
  }
}
