//===- ScheduleTest.cpp - Pipeline schedules and their simulator ----------===//
//
// Part of EPL-MLIR.
//
// Every schedule runs each action once, on its stage's device, and finishes
// under the simulator (which checks every dependency); the orders for p = 4,
// m = 8 are the papers'; the simulated bubbles are the closed forms; bad
// shapes and broken programs are errors, never hangs.
//
// Two cost models: the literature's 1F1B has one backward pass, whose input
// gradient leaves when both halves are done; `fused` puts all backward work
// in B (B = 2F, W = 0) to reproduce its formulas. With B and W split
// (F = B = W), gradients leave after B alone, which shortens every
// schedule's critical path, not only zero-bubble's.
//
//===----------------------------------------------------------------------===//

#include "epl/PipelineSchedule/Simulate.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <tuple>

using namespace mlir::epl::pipeline;

namespace {
constexpr Strategy kStrategies[] = {Strategy::GPipe, Strategy::OneFOneB,
                                    Strategy::Interleaved1F1B,
                                    Strategy::ZeroBubbleH1};

/// F, B and W of one stage cost the same.
const Costs kSplit{1, 1, 1, 0};

/// The literature's cost model: a forward of `f`, a backward of 2f whose
/// input gradient leaves when it is all done.
Costs fused(double f) { return {f, 2 * f, 0, 0}; }

/// "F0 F1 B0 W0 ...", or with the stage in front as
/// torch.distributed.pipelining writes actions ("4F0" is F of micro-batch 0
/// on stage 4).
std::string order(const std::vector<Action> &actions, bool withStage) {
  std::string text;
  for (const Action &a : actions) {
    if (!text.empty())
      text += ' ';
    if (withStage)
      text += std::to_string(a.virtualStage);
    text += a.kind == ActionKind::Forward         ? 'F'
            : a.kind == ActionKind::BackwardInput ? 'B'
                                                  : 'W';
    text += std::to_string(a.microBatch);
  }
  return text;
}

Schedule build(Strategy strategy, ScheduleShape shape) {
  std::string error;
  auto schedule = buildSchedule(strategy, shape, error);
  if (failed(schedule)) {
    ADD_FAILURE() << error;
    return Schedule(std::max<int64_t>(shape.devices, 0));
  }
  return *schedule;
}

/// The simulation of `strategy` on `shape` with the messages it needs.
Simulation run(Strategy strategy, ScheduleShape shape, const Costs &costs) {
  std::string error;
  auto simulation =
      simulate(withCommunication(build(strategy, shape), shape), costs, error);
  if (failed(simulation)) {
    ADD_FAILURE() << toString(strategy) << " p=" << shape.devices
                  << " v=" << shape.chunks << " m=" << shape.microBatches
                  << ": " << error;
    // NaNs fail every comparison without indexing past the vectors.
    size_t p = shape.devices;
    return {NAN, std::vector<double>(p, NAN), std::vector<double>(p, NAN),
            std::vector<int64_t>(p, -1)};
  }
  return *simulation;
}

/// The error `program` fails with, or "" when it runs.
std::string simulationError(const Program &program) {
  std::string error;
  (void)simulate(program, Costs{}, error);
  return error;
}

Action F(int64_t stage, int64_t mb) { return {ActionKind::Forward, stage, mb}; }
Action B(int64_t stage, int64_t mb) {
  return {ActionKind::BackwardInput, stage, mb};
}
Action W(int64_t stage, int64_t mb) {
  return {ActionKind::BackwardWeight, stage, mb};
}
Event compute(Action a) { return {Event::Kind::Compute, a}; }
Event send(Action a, int64_t to, int64_t tag) {
  return {Event::Kind::Send, a, to, tag};
}
Event recv(Action a, int64_t from, int64_t tag) {
  return {Event::Kind::Recv, a, from, tag};
}

/// Two stages on two devices, one micro-batch, as withCommunication would
/// write it.
Program twoStages() {
  return {2,
          true,
          {{compute(F(0, 0)), send(F(0, 0), 1, 0), recv(B(1, 0), 1, 1),
            compute(B(0, 0)), compute(W(0, 0))},
           {recv(F(0, 0), 0, 0), compute(F(1, 0)), compute(B(1, 0)),
            send(B(1, 0), 0, 1), compute(W(1, 0))}}};
}
} // namespace

TEST(PipelineStrategy, ParsesEPLNames) {
  EXPECT_EQ(parseStrategy("PreferForward"), Strategy::GPipe);
  EXPECT_EQ(parseStrategy("PreferBackward"), Strategy::OneFOneB);
  EXPECT_EQ(parseStrategy("PreferBackwardOptimizer"), Strategy::OneFOneB);
  EXPECT_EQ(parseStrategy("Interleaved1F1B"), Strategy::Interleaved1F1B);
  EXPECT_EQ(parseStrategy("ZeroBubbleH1"), Strategy::ZeroBubbleH1);
  EXPECT_EQ(parseStrategy("1F1B"), std::nullopt);
  EXPECT_EQ(parseStrategy("preferbackward"), std::nullopt);
  EXPECT_EQ(parseStrategy(""), std::nullopt);
  std::vector<std::string> names = strategyNames();
  EXPECT_EQ(names.size(), 5u);
  for (const std::string &name : names)
    EXPECT_TRUE(parseStrategy(name)) << name;
}

// Each (kind, stage, micro-batch) once, on device stage % p, and the
// simulator (which checks each compute's inputs are there) finishes.
TEST(PipelineSchedule, EveryActionOnceOnItsDevice) {
  for (Strategy strategy : kStrategies)
    for (int64_t p = 1; p <= 5; ++p)
      for (int64_t v = 1; v <= (strategy == Strategy::Interleaved1F1B ? 3 : 1);
           ++v)
        for (int64_t m = 1; m <= 12; ++m) {
          if (strategy == Strategy::Interleaved1F1B && m % p != 0)
            continue;
          ScheduleShape shape{p, v, m};
          SCOPED_TRACE(std::string(toString(strategy)) +
                       " p=" + std::to_string(p) + " v=" + std::to_string(v) +
                       " m=" + std::to_string(m));
          Schedule schedule = build(strategy, shape);
          ASSERT_EQ(schedule.size(), size_t(p));
          std::map<std::tuple<ActionKind, int64_t, int64_t>, int> seen;
          for (int64_t d = 0; d < p; ++d)
            for (const Action &a : schedule[d]) {
              EXPECT_EQ(shape.deviceOf(a.virtualStage), d) << toString(a);
              ++seen[{a.kind, a.virtualStage, a.microBatch}];
            }
          EXPECT_EQ(seen.size(), size_t(3 * p * v * m));
          for (const auto &[action, count] : seen) {
            auto [kind, stage, mb] = action;
            EXPECT_TRUE(stage >= 0 && stage < p * v && mb >= 0 && mb < m);
            EXPECT_EQ(count, 1);
          }
          Simulation sim = run(strategy, shape, {1, 2, 3, 0.5});
          EXPECT_EQ(sim.busy.size(), size_t(p));
          // On GPUs (NCCL's untagged, rendezvous messages, grouped): every
          // schedule but interleaved 1F1B's, whose messages go over
          // channels (untagged, sends not waiting): every schedule's
          // messages arrive in the order sent, per direction.
          std::string error;
          Program program = withCommunication(schedule, shape);
          llvm::LogicalResult grouped = checkGroupedRendezvous(program, error);
          if (strategy != Strategy::Interleaved1F1B || v == 1) {
            EXPECT_TRUE(llvm::succeeded(grouped)) << error;
          } else if (p > 1) {
            EXPECT_TRUE(llvm::failed(grouped));
          }
          error.clear();
          EXPECT_TRUE(llvm::succeeded(checkInOrderPerDirection(program, error)))
              << error;
        }
}

TEST(PipelineSchedule, GPipeRunsAllForwardsFirst) {
  for (int64_t p : {1, 2, 4})
    for (int64_t m : {1, 3, 8}) {
      Schedule schedule = build(Strategy::GPipe, {p, 1, m});
      for (const std::vector<Action> &actions : schedule) {
        ASSERT_EQ(actions.size(), size_t(3 * m));
        for (int64_t i = 0; i < 3 * m; ++i)
          EXPECT_EQ(actions[i].kind == ActionKind::Forward, i < m);
      }
      for (int64_t peak : run(Strategy::GPipe, {p, 1, m}, kSplit).peakInFlight)
        EXPECT_EQ(peak, m);
    }
}

// 1F1B's point: device s holds at most p - s micro-batches. ZB-H1 keeps its
// peak, p on device 0, on every device: device s holds p - s between F and
// B and the s whose W it defers (W reads the forward's activations too).
TEST(PipelineSchedule, OneFOneBHoldsAtMostPMinusS) {
  for (Strategy strategy : {Strategy::OneFOneB, Strategy::ZeroBubbleH1})
    for (int64_t p : {1, 2, 4, 8})
      for (int64_t m : {1, 3, 4, 8, 16}) {
        Simulation sim = run(strategy, {p, 1, m}, kSplit);
        for (int64_t s = 0; s < p; ++s)
          EXPECT_EQ(sim.peakInFlight[s],
                    std::min(strategy == Strategy::OneFOneB ? p - s : p, m))
              << toString(strategy) << " p=" << p << " m=" << m << " s=" << s;
      }
}

// GPipe for every m, 1F1B once the pipeline fills (m >= p): with the
// backward fused, a bubble of (p - 1)(F + B) = 3(p - 1) on every device,
// (p - 1) / (m + p - 1) of the makespan.
TEST(PipelineSimulate, ClassicBubble) {
  for (Strategy strategy : {Strategy::GPipe, Strategy::OneFOneB})
    for (int64_t p : {1, 2, 3, 4, 8})
      for (int64_t m : {1, 2, 4, 8, 13}) {
        if (strategy == Strategy::OneFOneB && m < p)
          continue;
        Simulation sim = run(strategy, {p, 1, m}, fused(1));
        EXPECT_EQ(sim.makespan, 3 * (m + p - 1));
        for (int64_t s = 0; s < p; ++s) {
          EXPECT_EQ(sim.busy[s], 3 * m);
          EXPECT_DOUBLE_EQ(sim.idle[s] / sim.makespan,
                           double(p - 1) / (m + p - 1));
        }
      }
}

// With B and W split the backward chain costs B per device, not B + W.
TEST(PipelineSimulate, SplitBackwardBubble) {
  for (Strategy strategy : {Strategy::GPipe, Strategy::OneFOneB})
    for (int64_t p : {2, 4, 8})
      for (int64_t m : {8, 16}) {
        Simulation sim = run(strategy, {p, 1, m}, kSplit);
        for (double idle : sim.idle)
          EXPECT_EQ(idle, 2 * (p - 1));
      }
}

// Qi et al.: ZB-H1's bubble is (p - 1)(F + B - W), a third of 1F1B's
// (p - 1)(F + B + W) when F = B = W, for the same work.
TEST(PipelineSimulate, ZeroBubbleH1IdlesAThirdOf1F1B) {
  for (auto [p, m] : {std::pair{4, 8}, {2, 4}, {3, 7}, {8, 16}, {4, 64}}) {
    Simulation zb = run(Strategy::ZeroBubbleH1, {p, 1, m}, kSplit);
    Simulation classic = run(Strategy::OneFOneB, {p, 1, m}, fused(1));
    for (int64_t s = 0; s < p; ++s) {
      EXPECT_EQ(zb.busy[s], classic.busy[s]);
      EXPECT_EQ(zb.idle[s], p - 1) << "p=" << p << " m=" << m << " s=" << s;
      EXPECT_LE(zb.idle[s], classic.idle[s] / 3);
    }
  }
}

// Narayanan et al.: with v stages per device, each a v-th of the work, the
// bubble is 1F1B's divided by v.
TEST(PipelineSimulate, InterleavedDividesTheBubbleByV) {
  for (auto [p, m, v] :
       {std::tuple{4, 8, 2}, {4, 16, 4}, {2, 4, 3}, {8, 16, 2}}) {
    Simulation classic = run(Strategy::OneFOneB, {p, 1, m}, fused(1));
    Simulation interleaved =
        run(Strategy::Interleaved1F1B, {p, v, m}, fused(1.0 / v));
    for (int64_t s = 0; s < p; ++s) {
      EXPECT_NEAR(interleaved.busy[s], classic.busy[s], 1e-9);
      EXPECT_NEAR(interleaved.idle[s], classic.idle[s] / v, 1e-9)
          << "p=" << p << " m=" << m << " v=" << v << " s=" << s;
    }
  }
}

// One micro-batch runs the stages in sequence: the messages' latency adds
// up along the way there and back.
TEST(PipelineSimulate, SendLatency) {
  Costs costs{1, 2, 3, 0.5};
  for (Strategy strategy :
       {Strategy::GPipe, Strategy::OneFOneB, Strategy::ZeroBubbleH1}) {
    Simulation sim = run(strategy, {3, 1, 1}, costs);
    EXPECT_EQ(sim.makespan, 3 * 1 + 3 * 2 + 3 + 2 * 2 * 0.5);
    EXPECT_EQ(sim.busy, (std::vector<double>{6, 6, 6}));
  }
}

// Narayanan et al. (SC 2021), Figure 4, top: p = 4, m = 8.
TEST(PipelineScheduleOrder, OneFOneB) {
  Schedule schedule = build(Strategy::OneFOneB, {4, 1, 8});
  EXPECT_EQ(order(schedule[0], false),
            "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 B4 W4 "
            "B5 W5 B6 W6 B7 W7");
  EXPECT_EQ(order(schedule[3], false),
            "F0 B0 W0 F1 B1 W1 F2 B2 W2 F3 B3 W3 F4 B4 W4 F5 B5 W5 "
            "F6 B6 W6 F7 B7 W7");
}

// Narayanan et al. (SC 2021), Figure 4, bottom: p = 4, m = 8, 2 stages per
// device (device 0 runs stages 0 and 4, device 3 stages 3 and 7).
TEST(PipelineScheduleOrder, Interleaved) {
  Schedule schedule = build(Strategy::Interleaved1F1B, {4, 2, 8});
  EXPECT_EQ(order(schedule[0], true),
            "0F0 0F1 0F2 0F3 4F0 4F1 4F2 4F3 0F4 0F5 "
            "0F6 4B0 4W0 0F7 4B1 4W1 4F4 4B2 4W2 4F5 4B3 4W3 "
            "4F6 0B0 0W0 4F7 0B1 0W1 "
            "0B2 0W2 0B3 0W3 4B4 4W4 4B5 4W5 4B6 4W6 4B7 4W7 "
            "0B4 0W4 0B5 0W5 0B6 0W6 0B7 0W7");
  EXPECT_EQ(order(schedule[3], true),
            "3F0 3F1 3F2 3F3 "
            "7F0 7B0 7W0 7F1 7B1 7W1 7F2 7B2 7W2 7F3 7B3 7W3 "
            "3F4 3B0 3W0 3F5 3B1 3W1 3F6 3B2 3W2 3F7 3B3 3W3 "
            "7F4 7B4 7W4 7F5 7B5 7W5 7F6 7B6 7W6 7F7 7B7 7W7 "
            "3B4 3W4 3B5 3W5 3B6 3W6 3B7 3W7");
}

// Qi et al. (ICLR 2024), Figure 3, top: the first device runs 1F1B; the
// last one defers each W by p - 1 backwards and ends with them.
TEST(PipelineScheduleOrder, ZeroBubbleH1) {
  Schedule schedule = build(Strategy::ZeroBubbleH1, {4, 1, 8});
  EXPECT_EQ(order(schedule[0], false),
            "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 B4 W4 "
            "B5 W5 B6 W6 B7 W7");
  EXPECT_EQ(order(schedule[3], false),
            "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 F6 B6 W3 "
            "F7 B7 W4 W5 W6 W7");
}

TEST(PipelineSchedule, RejectsBadShapes) {
  auto errorOf = [](Strategy strategy, ScheduleShape shape) {
    std::string error;
    EXPECT_TRUE(failed(buildSchedule(strategy, shape, error)));
    return error;
  };
  EXPECT_EQ(errorOf(Strategy::OneFOneB, {0, 1, 4}),
            "a pipeline needs at least one stage device, got 0");
  EXPECT_EQ(errorOf(Strategy::Interleaved1F1B, {2, 0, 4}),
            "a pipeline needs at least one stage per device, got 0");
  EXPECT_EQ(errorOf(Strategy::GPipe, {2, 1, -1}),
            "a pipeline needs at least one micro-batch, got -1");
  EXPECT_EQ(errorOf(Strategy::ZeroBubbleH1, {4, 2, 8}),
            "8 stages on 4 stage devices (2 per device) need the interleaved "
            "1F1B schedule (Interleaved1F1B); ZB-H1 runs one stage per device");
  EXPECT_EQ(errorOf(Strategy::Interleaved1F1B, {4, 2, 6}),
            "interleaved 1F1B needs a number of micro-batches that is a "
            "multiple of the 4 stage devices (as Megatron-LM does), got 6");
}

TEST(PipelineSimulate, RunsAHandWrittenProgram) {
  std::string error;
  auto sim = simulate(twoStages(), kSplit, error);
  ASSERT_TRUE(succeeded(sim)) << error;
  EXPECT_EQ(sim->makespan, 5);
  EXPECT_EQ(sim->busy, (std::vector<double>{3, 3}));
  EXPECT_EQ(sim->idle, (std::vector<double>{2, 2}));
  EXPECT_EQ(sim->peakInFlight, (std::vector<int64_t>{1, 1}));
}

TEST(PipelineSimulate, DeadlockIsAnError) {
  Program program = twoStages();
  // Device 0 waits for the gradient before sending the activations.
  std::swap(program.devices[0][1], program.devices[0][2]);
  EXPECT_EQ(simulationError(program),
            "device 0, event 1: the receive of B(stage 1, micro-batch 0) from "
            "device 1 (tag 1) waits forever: device 1 waits at event 0 for "
            "F(stage 0, micro-batch 0) from device 0, a cycle");
}

TEST(PipelineSimulate, MissingSendIsAnError) {
  Program program = twoStages();
  program.devices[1].erase(program.devices[1].begin() + 3);
  EXPECT_EQ(simulationError(program),
            "device 0, event 2: the receive of B(stage 1, micro-batch 0) from "
            "device 1 (tag 1) waits forever: device 1 has finished without "
            "sending it");
}

TEST(PipelineSimulate, UnreceivedMessageIsAnError) {
  Program program = twoStages();
  program.devices[0].push_back(send(W(0, 0), 1, 5));
  EXPECT_EQ(simulationError(program),
            "device 0, event 5: the send of W(stage 0, micro-batch 0) to "
            "device 1 (tag 5) is never received");
}

TEST(PipelineSimulate, MissingInputIsAnError) {
  Program program = twoStages();
  std::swap(program.devices[1][2], program.devices[1][4]); // W before its B.
  EXPECT_EQ(simulationError(program),
            "device 1, event 2: W(stage 1, micro-batch 0) needs B(stage 1, "
            "micro-batch 0), which the device has neither computed nor "
            "received before it");
}

// Two micro-batches sent in one order and received in the other: FIFO
// matching hands each receive the other's message.
TEST(PipelineSimulate, OutOfOrderStreamIsAnError) {
  Program program{2,
                  true,
                  {{compute(F(0, 0)), send(F(0, 0), 1, 0), compute(F(0, 1)),
                    send(F(0, 1), 1, 0)},
                   {recv(F(0, 1), 0, 0), recv(F(0, 0), 0, 0)}}};
  EXPECT_EQ(simulationError(program),
            "device 1, event 0: the receive of F(stage 0, micro-batch 1) from "
            "device 0 (tag 0) gets the message of event 1 of device 0, which "
            "carries F(stage 0, micro-batch 0)");
}

// A program read back from IR: stage 1 does not read stage 0 and stage 0
// gets no gradient; without the schedules' dependencies it runs, with them
// it is rejected.
TEST(PipelineSimulate, ProgramsFromIRNeedOnlyTheirMessages) {
  Program program{2,
                  false,
                  {{compute(F(0, 0)), compute(B(0, 0))},
                   {compute(F(1, 0)), compute(B(1, 0))}}};
  std::string error;
  EXPECT_TRUE(succeeded(simulate(program, Costs(), error))) << error;
  program.scheduleDependencies = true;
  EXPECT_NE(simulationError(program), "");
}

TEST(PipelineSimulate, RejectsUnknownDevicesAndStages) {
  Program program = twoStages();
  program.devices[0][1].peer = 0;
  EXPECT_EQ(simulationError(program),
            "device 0, event 1: the send of F(stage 0, micro-batch 0) to "
            "device 0 (tag 0): a device cannot message itself");
  program.devices[0][1].peer = 2;
  EXPECT_EQ(simulationError(program),
            "device 0, event 1: the send of F(stage 0, micro-batch 0) to "
            "device 2 (tag 0): the program has devices 0 to 1");
  program = twoStages();
  program.devices[1][1].action.virtualStage = 2;
  EXPECT_EQ(simulationError(program),
            "device 1, event 1: F(stage 2, micro-batch 0): the model has "
            "stages 0 to 1");
}

TEST(PipelineSimulate, Prints) {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(run(Strategy::ZeroBubbleH1, {4, 1, 8}, kSplit), os);
  EXPECT_EQ(text, "makespan 27\n"
                  "device       busy       idle  bubble  peak in flight\n"
                  "     0         24          3   11.1%               4\n"
                  "     1         24          3   11.1%               4\n"
                  "     2         24          3   11.1%               4\n"
                  "     3         24          3   11.1%               4\n");
}

/// The error checkInOrderPerDirection fails `program` with, or "".
std::string channelError(const Program &program) {
  std::string error;
  (void)checkInOrderPerDirection(program, error);
  return error;
}

/// The error checkGroupedRendezvous fails `program` with, or "".
std::string rendezvousError(const Program &program) {
  std::string error;
  (void)checkGroupedRendezvous(program, error);
  return error;
}

// 1F1B's steady state between two stages: each device sends, then receives
// what the other sends. Posted one at a time, both sends would wait for a
// receive behind the other's send; posted as a group with the receive after
// them, they meet.
TEST(PipelineRendezvous, SendsGoWithTheReceivesAfterThem) {
  Program program{2,
                  false,
                  {{compute(F(0, 1)), send(F(0, 1), 1, 0), recv(B(1, 0), 1, 1),
                    compute(B(0, 0))},
                   {compute(B(1, 0)), send(B(1, 0), 0, 1), recv(F(0, 1), 0, 0),
                    compute(F(1, 1))}}};
  EXPECT_EQ(rendezvousError(program), "");
  EXPECT_EQ(simulationError(program), "");
  // A compute between the send and the receive ends the group: now each
  // send waits for a receive the other device never reaches.
  program.devices[0].insert(program.devices[0].begin() + 2, compute(W(0, 0)));
  program.devices[1].insert(program.devices[1].begin() + 2, compute(W(1, 0)));
  EXPECT_EQ(simulationError(program), "");
  EXPECT_EQ(rendezvousError(program),
            "its groups of sends and receives would wait for each other "
            "forever: device 0 at event 1 (the send of F(stage 0, micro-batch "
            "1) to device 1 (tag 0)); device 1 at event 1 (the send of "
            "B(stage 1, micro-batch 0) to device 0 (tag 1))");
}

// Two streams from device 0 to device 1, received in the other order: with
// tags (MPI, threads) each receive finds its message; NCCL would hand the
// first receive the first message sent.
TEST(PipelineRendezvous, MessagesOfOnePairInTheirOrder) {
  Program program{3,
                  false,
                  {{compute(F(0, 0)), send(F(0, 0), 1, 0), compute(F(2, 0)),
                    send(F(2, 0), 1, 4)},
                   {recv(F(2, 0), 0, 4), recv(F(0, 0), 0, 0)}}};
  EXPECT_EQ(simulationError(program), "");
  EXPECT_EQ(rendezvousError(program),
            "device 1, event 0: the receive of F(stage 2, micro-batch 0) from "
            "device 0 (tag 4) would get the message of event 1 of device 0, "
            "F(stage 0, micro-batch 0) (tag 0): messages between two GPUs "
            "carry no tag");
  // Nor does a channel.
  EXPECT_EQ(channelError(program),
            "device 1, event 0: the receive of F(stage 2, micro-batch 0) from "
            "device 0 (tag 4) would get the message of event 1 of device 0, "
            "F(stage 0, micro-batch 0) (tag 0): a channel between two GPUs "
            "carries no tag");
  std::swap(program.devices[1][0], program.devices[1][1]);
  EXPECT_EQ(channelError(program), "");
}
