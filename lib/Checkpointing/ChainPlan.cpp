//===- ChainPlan.cpp - Which activations to keep for the backward ---------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Checkpointing/ChainPlan.h"

#include <algorithm>
#include <limits>
#include <numeric>

using namespace mlir::epl::checkpointing;

int64_t mlir::epl::checkpointing::peakBytes(llvm::ArrayRef<ChainNode> nodes,
                                            const std::vector<bool> &keep) {
  int64_t kept = 0, run = 0, largestRun = 0;
  for (auto [node, k] : llvm::zip_equal(nodes, keep)) {
    if (k) {
      if (__builtin_add_overflow(kept, node.bytes, &kept))
        kept = std::numeric_limits<int64_t>::max() / 2;
      run = 0;
      continue;
    }
    run += node.bytesInRun();
    largestRun = std::max(largestRun, run);
  }
  return kept + largestRun;
}

double mlir::epl::checkpointing::recomputeCost(llvm::ArrayRef<ChainNode> nodes,
                                               const std::vector<bool> &keep) {
  double cost = 0;
  for (auto [node, k] : llvm::zip_equal(nodes, keep))
    if (!k)
      cost += node.cost;
  return cost;
}

namespace {
/// Chains up to this long are planned exactly; longer ones try at most
/// kMaxRunBounds bounds on the largest run and keep at most kMaxFront
/// entries of each Pareto front (evenly spread over the kept bytes).
constexpr size_t kExactNodes = 64;
constexpr size_t kMaxRunBounds = 32;
constexpr size_t kMaxFront = 16;

/// Prefix sums of the node sizes: bytes of nodes [i, j) = at(j) - at(i).
struct Prefix {
  std::vector<int64_t> sums;
  explicit Prefix(llvm::ArrayRef<ChainNode> nodes) : sums(nodes.size() + 1) {
    for (size_t i = 0; i < nodes.size(); ++i)
      sums[i + 1] = sums[i] + nodes[i].bytesInRun();
  }
  int64_t bytes(size_t from, size_t to) const { return sums[to] - sums[from]; }
};

/// Every bound on the largest run worth trying: 0 and each run's size, at
/// most `limit`, ascending; at most kMaxRunBounds of them.
std::vector<int64_t> runBounds(const Prefix &prefix, size_t n, int64_t limit) {
  std::vector<int64_t> bounds = {0};
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j <= n; ++j) {
      int64_t b = prefix.bytes(i, j);
      if (b > limit)
        break;
      bounds.push_back(b);
    }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  if (n <= kExactNodes || bounds.size() <= kMaxRunBounds)
    return bounds;
  // Long chains: evenly spread bounds, the smallest and largest among them
  // (each bound costs a dynamic program over the chain).
  std::vector<int64_t> spread;
  for (size_t k = 0; k < kMaxRunBounds; ++k)
    spread.push_back(bounds[k * (bounds.size() - 1) / (kMaxRunBounds - 1)]);
  spread.erase(std::unique(spread.begin(), spread.end()), spread.end());
  return spread;
}

/// A partial plan whose last kept node is fixed: what it keeps, and where
/// it came from (for reading the plan back).
struct Entry {
  int64_t keptBytes;
  double keptCost;
  /// The previous kept node (-1: none) and the entry there.
  int prevNode;
  int prevEntry;
};

/// Keeps the entries no other beats in both bytes (fewer) and cost kept
/// (more).
void prune(std::vector<Entry> &front, bool exact) {
  std::sort(front.begin(), front.end(), [](const Entry &a, const Entry &b) {
    return a.keptBytes != b.keptBytes ? a.keptBytes < b.keptBytes
                                      : a.keptCost > b.keptCost;
  });
  std::vector<Entry> kept;
  for (const Entry &e : front)
    if (kept.empty() || e.keptCost > kept.back().keptCost)
      kept.push_back(e);
  if (!exact && kept.size() > kMaxFront) {
    std::vector<Entry> spread;
    for (size_t k = 0; k < kMaxFront; ++k)
      spread.push_back(kept[k * (kept.size() - 1) / (kMaxFront - 1)]);
    kept = std::move(spread);
  }
  front = std::move(kept);
}

/// The plan keeping the most cost with runs of at most `bound` bytes and at
/// most `cap` bytes kept, or std::nullopt.
std::optional<ChainPlan> bestWithRunBound(llvm::ArrayRef<ChainNode> nodes,
                                          const Prefix &prefix, int64_t bound,
                                          int64_t cap) {
  int n = static_cast<int>(nodes.size());
  // fronts[i + 1]: node i is the last kept; fronts[0]: nothing kept yet.
  std::vector<std::vector<Entry>> fronts(n + 1);
  fronts[0].push_back({0, 0, -1, -1});
  for (int i = 0; i < n; ++i) {
    std::vector<Entry> &front = fronts[i + 1];
    // The run between the previous kept node j and i: nodes (j, i).
    for (int j = i - 1; j >= -1; --j) {
      if (prefix.bytes(j + 1, i) > bound)
        break;
      for (int e = 0, ee = fronts[j + 1].size(); e < ee; ++e) {
        const Entry &from = fronts[j + 1][e];
        int64_t bytes = from.keptBytes + nodes[i].bytes;
        if (bytes <= cap)
          front.push_back(
              {bytes, from.keptCost + nodes[i].cost, j, static_cast<int>(e)});
      }
    }
    prune(front, nodes.size() <= kExactNodes);
  }
  // The last run, after the last kept node, is bounded too.
  int bestNode = -2, bestEntry = -1;
  double bestCost = -1;
  for (int j = n - 1; j >= -1; --j) {
    if (prefix.bytes(j + 1, n) > bound)
      break;
    for (int e = 0, ee = fronts[j + 1].size(); e < ee; ++e)
      if (fronts[j + 1][e].keptCost > bestCost) {
        bestCost = fronts[j + 1][e].keptCost;
        bestNode = j;
        bestEntry = e;
      }
  }
  if (bestNode == -2)
    return std::nullopt;
  ChainPlan plan;
  plan.keep.assign(n, false);
  for (int node = bestNode, e = bestEntry; node >= 0;) {
    plan.keep[node] = true;
    const Entry &entry = fronts[node + 1][e];
    node = entry.prevNode;
    e = entry.prevEntry;
  }
  plan.peakBytes = peakBytes(nodes, plan.keep);
  plan.recomputeCost = recomputeCost(nodes, plan.keep);
  return plan;
}

/// The plan keeping the fewest bytes with runs of at most `bound` bytes
/// (exact, whatever the chain's length), or std::nullopt.
std::optional<std::vector<bool>> leastKept(llvm::ArrayRef<ChainNode> nodes,
                                           const Prefix &prefix,
                                           int64_t bound) {
  int n = static_cast<int>(nodes.size());
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  // least[i + 1]: the fewest bytes kept with node i the last kept, coming
  // from prev[i + 1] (-1: nothing kept before it).
  std::vector<int64_t> least(n + 1, kNone);
  std::vector<int> prev(n + 1, -2);
  least[0] = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i - 1; j >= -1 && prefix.bytes(j + 1, i) <= bound; --j)
      if (int64_t sum;
          least[j + 1] != kNone &&
          !__builtin_add_overflow(least[j + 1], nodes[i].bytes, &sum) &&
          sum < least[i + 1]) {
        least[i + 1] = sum;
        prev[i + 1] = j;
      }
  int64_t best = kNone;
  int last = -2;
  for (int j = n - 1; j >= -1 && prefix.bytes(j + 1, n) <= bound; --j)
    if (least[j + 1] < best) {
      best = least[j + 1];
      last = j;
    }
  if (last == -2)
    return std::nullopt;
  std::vector<bool> keep(n, false);
  for (int node = last; node >= 0; node = prev[node + 1])
    keep[node] = true;
  return keep;
}

/// cheapestPlan over the run bounds and fronts it tries (on long chains
/// not every plan: it may find none under a budget some plan meets).
std::optional<ChainPlan> cheapestTried(llvm::ArrayRef<ChainNode> nodes,
                                       int64_t budget) {
  Prefix prefix(nodes);
  std::optional<ChainPlan> best;
  for (int64_t bound : runBounds(prefix, nodes.size(), budget)) {
    std::optional<ChainPlan> plan =
        bestWithRunBound(nodes, prefix, bound, budget - bound);
    if (!plan)
      continue;
    if (!best || plan->recomputeCost < best->recomputeCost ||
        (plan->recomputeCost == best->recomputeCost &&
         plan->peakBytes < best->peakBytes))
      best = std::move(plan);
  }
  return best;
}
} // namespace

ChainPlan
mlir::epl::checkpointing::leastMemoryPlan(llvm::ArrayRef<ChainNode> nodes) {
  Prefix prefix(nodes);
  // Keeping nothing (one run of the whole chain, the largest bound) is
  // always a plan, so there is a least.
  std::optional<ChainPlan> least;
  for (int64_t bound :
       runBounds(prefix, nodes.size(), prefix.bytes(0, nodes.size()))) {
    std::optional<std::vector<bool>> keep = leastKept(nodes, prefix, bound);
    if (!keep)
      continue;
    int64_t peak = peakBytes(nodes, *keep);
    if (!least || peak < least->peakBytes)
      least = ChainPlan{std::move(*keep), peak, 0};
  }
  least->recomputeCost = recomputeCost(nodes, least->keep);
  // The cheapest plan of that peak; on long chains the search may miss the
  // one found above, which then stands.
  if (std::optional<ChainPlan> cheaper = cheapestTried(nodes, least->peakBytes);
      cheaper && cheaper->recomputeCost <= least->recomputeCost)
    return *cheaper;
  return *least;
}

std::optional<ChainPlan>
mlir::epl::checkpointing::cheapestPlan(llvm::ArrayRef<ChainNode> nodes,
                                       int64_t budget) {
  if (std::optional<ChainPlan> plan = cheapestTried(nodes, budget))
    return plan;
  // A long chain's search can miss every plan under a budget the least
  // memory plan meets.
  ChainPlan least = leastMemoryPlan(nodes);
  if (least.peakBytes <= budget)
    return least;
  return std::nullopt;
}
