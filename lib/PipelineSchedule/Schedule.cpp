//===- Schedule.cpp - Pipeline schedules ----------------------------------===//
//
// Part of EPL-MLIR.
//
// Every schedule here has the shape of 1F1B, so one function builds them all
// from two numbers per device s: the warm-up w (forwards run before the
// first backward) and the W delay d (the W of the k-th backward runs right
// after backward k + d, or at the end). After the warm-up a device runs one
// forward and one backward in turn while forwards remain, then the remaining
// backwards.
//
//   GPipe         w = m                                   d = 0
//   1F1B          w = min(p - s - 1, m)                   d = 0
//   interleaved   w = min(2 (p - s - 1) + (v - 1) p, mv)  d = 0
//   ZB-H1         w = min(p - s - 1, m)                   d = s
//
//===----------------------------------------------------------------------===//

#include "epl/PipelineSchedule/Schedule.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir::epl::pipeline;
using llvm::failure;
using llvm::FailureOr;

namespace {
struct NamedStrategy {
  std::string_view name;
  Strategy strategy;
};
} // namespace

static constexpr NamedStrategy kStrategies[] = {
    {"PreferForward", Strategy::GPipe},
    {"PreferBackward", Strategy::OneFOneB},
    {"PreferBackwardOptimizer", Strategy::OneFOneB},
    {"Interleaved1F1B", Strategy::Interleaved1F1B},
    {"ZeroBubbleH1", Strategy::ZeroBubbleH1},
};

std::optional<Strategy>
mlir::epl::pipeline::parseStrategy(std::string_view name) {
  for (const NamedStrategy &s : kStrategies)
    if (s.name == name)
      return s.strategy;
  return std::nullopt;
}

std::vector<std::string> mlir::epl::pipeline::strategyNames() {
  std::vector<std::string> names;
  for (const NamedStrategy &s : kStrategies)
    names.emplace_back(s.name);
  return names;
}

std::string_view mlir::epl::pipeline::toString(Strategy strategy) {
  switch (strategy) {
  case Strategy::GPipe:
    return "GPipe";
  case Strategy::OneFOneB:
    return "1F1B";
  case Strategy::Interleaved1F1B:
    return "interleaved 1F1B";
  case Strategy::ZeroBubbleH1:
    return "ZB-H1";
  }
  llvm_unreachable("unknown strategy");
}

std::string mlir::epl::pipeline::toString(const Action &action) {
  const char *kind = action.kind == ActionKind::Forward         ? "F"
                     : action.kind == ActionKind::BackwardInput ? "B"
                                                                : "W";
  return llvm::formatv("{0}(stage {1}, micro-batch {2})", kind,
                       action.virtualStage, action.microBatch);
}

/// The k-th action of `kind` on device s. Micro-batches go through in groups
/// of p: a group runs through the device's first stage, then its second,
/// and so on (backwards: from its last stage), as in Megatron-LM's
/// `get_model_chunk_id`. With one stage per device the k-th is micro-batch k.
static Action nth(ActionKind kind, ScheduleShape shape, int64_t s, int64_t k) {
  int64_t p = shape.devices, v = shape.chunks;
  int64_t chunk = k / p % v;
  if (kind != ActionKind::Forward)
    chunk = v - 1 - chunk;
  return {kind, chunk * p + s, k / (p * v) * p + k % p};
}

/// Device s's order for warm-up `warmup` and W delay `delay` (see above).
static std::vector<Action> deviceOrder(ScheduleShape shape, int64_t s,
                                       int64_t warmup, int64_t delay) {
  int64_t n = shape.chunks * shape.microBatches;
  std::vector<Action> order;
  order.reserve(3 * n);
  for (int64_t k = 0; k < warmup; ++k)
    order.push_back(nth(ActionKind::Forward, shape, s, k));
  int64_t weights = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (warmup + k < n)
      order.push_back(nth(ActionKind::Forward, shape, s, warmup + k));
    order.push_back(nth(ActionKind::BackwardInput, shape, s, k));
    if (k >= delay)
      order.push_back(nth(ActionKind::BackwardWeight, shape, s, weights++));
  }
  while (weights < n)
    order.push_back(nth(ActionKind::BackwardWeight, shape, s, weights++));
  return order;
}

FailureOr<Schedule> mlir::epl::pipeline::buildSchedule(Strategy strategy,
                                                       ScheduleShape shape,
                                                       std::string &error) {
  int64_t p = shape.devices, v = shape.chunks, m = shape.microBatches;
  auto fail = [&](std::string message) -> FailureOr<Schedule> {
    error = std::move(message);
    return failure();
  };
  if (p < 1)
    return fail(llvm::formatv(
        "a pipeline needs at least one stage device, got {0}", p));
  if (v < 1)
    return fail(llvm::formatv(
        "a pipeline needs at least one stage per device, got {0}", v));
  if (m < 1)
    return fail(
        llvm::formatv("a pipeline needs at least one micro-batch, got {0}", m));
  if (v > 1 && strategy != Strategy::Interleaved1F1B)
    return fail(llvm::formatv(
        "{0} stages on {1} stage devices ({2} per device) need the "
        "interleaved 1F1B schedule (Interleaved1F1B); {3} runs one stage "
        "per device",
        p * v, p, v, toString(strategy)));
  // With one stage per device the interleaved schedule is 1F1B; Megatron's
  // warm-up of 2 (p - s - 1) would only hold more micro-batches.
  if (strategy == Strategy::Interleaved1F1B && v == 1)
    strategy = Strategy::OneFOneB;
  if (strategy == Strategy::Interleaved1F1B && m % p != 0)
    return fail(llvm::formatv(
        "interleaved 1F1B needs a number of micro-batches that is a multiple "
        "of the {0} stage devices (as Megatron-LM does), got {1}",
        p, m));

  Schedule schedule;
  for (int64_t s = 0; s < p; ++s) {
    int64_t warmup = 0, delay = 0;
    switch (strategy) {
    case Strategy::GPipe:
      warmup = m;
      break;
    case Strategy::OneFOneB:
      warmup = std::min(p - s - 1, m);
      break;
    case Strategy::Interleaved1F1B:
      // Megatron-LM's count: one group of p micro-batches through each of
      // the device's stages but its last, plus two per device downstream.
      warmup = std::min(2 * (p - s - 1) + (v - 1) * p, m * v);
      break;
    case Strategy::ZeroBubbleH1:
      // 1F1B's warm-up, hence its peak of micro-batches between F and B. B
      // alone is on the critical path, so gradients come back sooner; device
      // s defers its W's by s backwards, so that the last device, whose
      // backwards end first, fills the cool-down with the W's it deferred
      // (as torch.distributed.pipelining's zero-bubble schedules do).
      warmup = std::min(p - s - 1, m);
      delay = s;
      break;
    }
    schedule.push_back(deviceOrder(shape, s, warmup, delay));
  }
  return schedule;
}
