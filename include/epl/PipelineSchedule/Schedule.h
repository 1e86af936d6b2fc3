//===- Schedule.h - Pipeline schedules --------------------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// The order in which each stage device runs the forward (F), input-gradient
// backward (B) and weight-gradient backward (W) of every micro-batch in one
// training step, for each schedule `pipeline.strategy` names. Plain C++: the
// pipeline partition pass emits this order as IR, and the simulator
// (Simulate.h) times it.
//
// A model of S = p * v stages ("virtual stages") runs on p stage devices,
// v stages each: stage vs on device vs % p, round-robin as in Megatron-LM's
// interleaved schedule. Micro-batch i of stage vs depends on
//   F(vs, i) <- F(vs - 1, i)                  (activations, from upstream)
//   B(vs, i) <- B(vs + 1, i) and F(vs, i)     (gradients, from downstream;
//                                              the last stage: F only)
//   W(vs, i) <- B(vs, i)
//
//===----------------------------------------------------------------------===//

#ifndef EPL_PIPELINESCHEDULE_SCHEDULE_H
#define EPL_PIPELINESCHEDULE_SCHEDULE_H

#include "llvm/Support/LogicalResult.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlir::epl::pipeline {

enum class Strategy {
  /// All forwards, then all backwards (EPL's PreferForward; Huang et al.,
  /// "GPipe", 2019).
  GPipe,
  /// One forward, one backward after a warm-up, so that device s holds at
  /// most p - s micro-batches (EPL's PreferBackward; PipeDream-Flush).
  OneFOneB,
  /// 1F1B over v stages per device: the bubble shrinks by v for v times the
  /// point-to-point messages (Narayanan et al., "Efficient Large-Scale
  /// Language Model Training on GPU Clusters Using Megatron-LM", SC 2021).
  Interleaved1F1B,
  /// 1F1B with W split from B and deferred into the cool-down bubble: the
  /// peak memory of 1F1B's busiest device (p micro-batches) on every
  /// device, a third of its bubble when F, B and W cost the same (Qi et
  /// al., "Zero Bubble Pipeline Parallelism", ICLR 2024).
  ZeroBubbleH1,
};

/// Parses EPL's `pipeline.strategy`: "PreferForward" (GPipe),
/// "PreferBackward" and "PreferBackwardOptimizer" (1F1B; they differ only in
/// when each stage's optimizer runs), "Interleaved1F1B", "ZeroBubbleH1".
/// std::nullopt for anything else.
std::optional<Strategy> parseStrategy(std::string_view name);

/// The names parseStrategy accepts, in the order the docs list them, for
/// "one of ..." messages.
std::vector<std::string> strategyNames();

/// The schedule's name in the literature ("1F1B", "ZB-H1"), for messages.
std::string_view toString(Strategy strategy);

enum class ActionKind { Forward, BackwardInput, BackwardWeight };

/// One compute action: F, B or W of one micro-batch on one (virtual) stage.
struct Action {
  ActionKind kind;
  int64_t virtualStage;
  int64_t microBatch;
};

inline bool operator==(const Action &a, const Action &b) {
  return a.kind == b.kind && a.virtualStage == b.virtualStage &&
         a.microBatch == b.microBatch;
}
inline bool operator!=(const Action &a, const Action &b) { return !(a == b); }

/// "F(stage 2, micro-batch 5)", for messages.
std::string toString(const Action &action);

struct ScheduleShape {
  /// p: devices the stages run on.
  int64_t devices = 1;
  /// v: stages per device; more than 1 only for Interleaved1F1B.
  int64_t chunks = 1;
  /// m: micro-batches per step.
  int64_t microBatches = 1;

  int64_t virtualStages() const { return devices * chunks; }
  int64_t deviceOf(int64_t virtualStage) const {
    return virtualStage % devices;
  }
};

/// For each device, the compute actions it runs in one step, in order.
using Schedule = std::vector<std::vector<Action>>;

/// The schedule of `strategy` for `shape`: every F, B and W of every stage
/// and micro-batch exactly once, on the stage's device, in an order that
/// respects the dependencies above and does not deadlock when sends do not
/// block. Fails, filling `error` with the numbers at fault, for fewer than
/// one device, stage per device or micro-batch; several stages per device
/// with a schedule other than Interleaved1F1B; Interleaved1F1B with a
/// micro-batch count that is not a multiple of the devices (Megatron-LM's
/// rule, which keeps its micro-batch groups whole).
llvm::FailureOr<Schedule> buildSchedule(Strategy strategy, ScheduleShape shape,
                                        std::string &error);

} // namespace mlir::epl::pipeline

#endif // EPL_PIPELINESCHEDULE_SCHEDULE_H
