//===- Simulate.h - Timing a pipeline schedule ------------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// A discrete-event simulation of one step of a pipelined program: each
// device runs its events in order, computes take their cost, sends never
// block and a receive waits for its message. It reports the makespan, each
// device's busy and idle time and its peak number of micro-batches in
// flight, and checks the program on the way: every compute's inputs are on
// its device before it starts, every receive gets the message it expects,
// and a program that cannot finish is an error naming where it is stuck,
// never a hang.
//
// The program is generic (explicit sends and receives) so that the same
// simulator times a schedule (withCommunication) and the per-stage IR the
// pipeline partition pass emits, rebuilt into this form.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_PIPELINESCHEDULE_SIMULATE_H
#define EPL_PIPELINESCHEDULE_SIMULATE_H

#include "epl/PipelineSchedule/Schedule.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::epl::pipeline {

struct Event {
  enum class Kind { Compute, Send, Recv };
  Kind kind;
  /// Compute: the action run. Send and Recv: the action whose result the
  /// message carries (F's activations, B's input gradient).
  Action action;
  /// Send and Recv: the device at the other end.
  int64_t peer = -1;
  /// Send and Recv: the stream. Messages of one (sender, receiver, tag)
  /// stream are matched in FIFO order, as MPI matches them.
  int64_t tag = 0;
};

/// What each device runs in one step, in order.
struct Program {
  /// Stages of the model (p * v): the last one's B needs no gradient from
  /// downstream.
  int64_t virtualStages = 0;
  /// Whether each compute needs on its device what the schedules'
  /// dependencies name (F(s) needs F(s - 1), B(s) needs B(s + 1) and F(s),
  /// W(s) needs B(s)): true for a program built from a schedule, false for
  /// one read back from IR, whose sends and receives are the dependencies
  /// between devices (a stage need not read its predecessor, and one with
  /// nothing to differentiate sends no gradient).
  bool scheduleDependencies = true;
  std::vector<std::vector<Event>> devices;
};

/// `schedule` with the messages its dependencies need between devices: a
/// send right after the compute that produces a value another device
/// consumes, a receive right before the compute that consumes it. The
/// activations from stage b to b + 1 travel on tag 2b, the gradients from
/// stage b + 1 to b on tag 2b + 1. Every schedule of buildSchedule produces
/// each stream in the order its consumer reads it. A gradient leaves after
/// its B, before the W that follows it even in 1F1B: only B is on the
/// critical path, so with F = B = W the 1F1B bubble is (p - 1)(F + B), not
/// the literature's (p - 1)(F + B + W) for a backward done in one piece.
Program withCommunication(const Schedule &schedule, ScheduleShape shape);

/// The time of one action of one stage (with v stages per device, a stage
/// is a v-th of a device's share of the model), and of a message from send
/// to arrival.
struct Costs {
  double forward = 1;
  double backwardInput = 1;
  double backwardWeight = 1;
  double send = 0;
};

struct Simulation {
  /// When the last device finishes.
  double makespan = 0;
  /// Per device: time computing, and makespan - busy.
  std::vector<double> busy, idle;
  /// Per device: the most (stage, micro-batch) pairs forwarded and whose
  /// weight gradient (W) has not run yet, at any time, over all its stages:
  /// the micro-batches whose activations it holds (W reads them too).
  std::vector<int64_t> peakInFlight;
};

/// Runs `program`. A compute starts when its device is free (after the
/// events before it); a send completes at once and its message arrives
/// `costs.send` later; a receive waits for its FIFO-matched message. Fails,
/// filling `error` with the device, the event's index and what is wrong,
/// for: a peer or stage out of range; a compute whose input its device has
/// neither computed nor received before it; a receive whose message carries
/// another action's result; a receive that waits forever (no matching send,
/// or a cycle of devices waiting on each other); a message never received.
llvm::FailureOr<Simulation> simulate(const Program &program, const Costs &costs,
                                     std::string &error);

/// Checks that a program simulate() runs also finishes on a transport like
/// NCCL's point-to-point, which the GPU runtime uses: messages carry no
/// tag, so a device receives those of each peer in the order the peer sent
/// them, whatever their tags; and a send is done only once its receive is
/// posted. Each maximal run of consecutive sends and receives on a device
/// is posted as one group (ncclGroupStart/End), which is done when all its
/// messages are matched; the device waits for it before its next event.
/// (The sends and receives of 1F1B's steady state wait for each other, so
/// posted one at a time they would deadlock.) Fails, filling `error`, for a
/// receive that would get another stream's message, or groups that would
/// wait for each other forever.
llvm::LogicalResult checkGroupedRendezvous(const Program &program,
                                           std::string &error);

/// Checks that a program simulate() runs also gets the right messages over
/// channels, as the GPU runtime moves `direct` messages: a channel per
/// direction between two devices carries no tag, so the k-th receive of a
/// device from a peer gets the k-th message the peer sent it, whatever
/// their tags. (Sends do not wait on a channel, as simulate() runs them.)
/// Fails, filling `error`, for a receive that would get another stream's
/// message.
llvm::LogicalResult checkInOrderPerDirection(const Program &program,
                                             std::string &error);

/// A few lines for users: the makespan, then per device its busy and idle
/// time, bubble fraction (idle / makespan) and peak micro-batches in flight.
void print(const Simulation &simulation, llvm::raw_ostream &os);

} // namespace mlir::epl::pipeline

#endif // EPL_PIPELINESCHEDULE_SIMULATE_H
