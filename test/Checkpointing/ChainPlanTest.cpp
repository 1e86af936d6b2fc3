//===- ChainPlanTest.cpp - Checkpointing plans against brute force --------===//
//
// Part of EPL-MLIR.
//
// On every small random chain (some nodes free in a run, as values the
// backward does not read) and every budget, the planner's plan fits the
// budget and costs exactly what the cheapest of all 2^n plans costs; its
// least-memory plan reaches the least peak of all plans; on n equal nodes
// the least peak is Chen's O(sqrt(n)).
//
//===----------------------------------------------------------------------===//

#include "epl/Checkpointing/ChainPlan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace mlir::epl::checkpointing;

namespace {
struct Best {
  int64_t leastPeak = std::numeric_limits<int64_t>::max();
  /// The cheapest cost for each budget in `budgets`; -1: nothing fits.
  std::vector<double> cheapest;
};

Best bruteForce(const std::vector<ChainNode> &nodes,
                const std::vector<int64_t> &budgets) {
  Best best;
  best.cheapest.assign(budgets.size(), -1);
  size_t n = nodes.size();
  for (uint64_t mask = 0; mask < (uint64_t(1) << n); ++mask) {
    std::vector<bool> keep(n);
    for (size_t i = 0; i < n; ++i)
      keep[i] = mask >> i & 1;
    int64_t peak = peakBytes(nodes, keep);
    double cost = recomputeCost(nodes, keep);
    best.leastPeak = std::min(best.leastPeak, peak);
    for (size_t b = 0; b < budgets.size(); ++b)
      if (peak <= budgets[b] &&
          (best.cheapest[b] < 0 || cost < best.cheapest[b]))
        best.cheapest[b] = cost;
  }
  return best;
}

TEST(ChainPlan, PeakModel) {
  std::vector<ChainNode> nodes = {{4, 1}, {2, 1}, {3, 1}, {5, 1}};
  // Kept: 2; runs: {4} and {3, 5}.
  EXPECT_EQ(peakBytes(nodes, {false, true, false, false}), 2 + 8);
  EXPECT_EQ(peakBytes(nodes, {true, true, true, true}), 14);
  EXPECT_EQ(peakBytes(nodes, {false, false, false, false}), 14);
  EXPECT_EQ(recomputeCost(nodes, {false, true, false, false}), 3);
}

TEST(ChainPlan, MatchesBruteForceOnRandomChains) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    size_t n = 1 + rng() % 11;
    std::vector<ChainNode> nodes(n);
    for (ChainNode &node : nodes) {
      node.bytes = 1 + rng() % 9;
      // Integral costs: sums compare exactly.
      node.cost = rng() % 7;
      // Some values the backward does not read: free in a run.
      if (rng() % 3 == 0)
        node.runBytes = 0;
    }
    int64_t total = 0;
    for (const ChainNode &node : nodes)
      total += node.bytes;
    std::vector<int64_t> budgets;
    for (int64_t b = 0; b <= total + 1; ++b)
      budgets.push_back(b);
    Best best = bruteForce(nodes, budgets);

    ChainPlan least = leastMemoryPlan(nodes);
    EXPECT_EQ(least.peakBytes, best.leastPeak) << "trial " << trial;
    for (size_t b = 0; b < budgets.size(); ++b) {
      std::optional<ChainPlan> plan = cheapestPlan(nodes, budgets[b]);
      if (best.cheapest[b] < 0) {
        EXPECT_FALSE(plan) << "trial " << trial << " budget " << budgets[b];
        continue;
      }
      ASSERT_TRUE(plan) << "trial " << trial << " budget " << budgets[b];
      EXPECT_LE(plan->peakBytes, budgets[b]);
      EXPECT_EQ(plan->peakBytes, peakBytes(nodes, plan->keep));
      EXPECT_EQ(plan->recomputeCost, best.cheapest[b])
          << "trial " << trial << " budget " << budgets[b];
    }
  }
}

TEST(ChainPlan, EqualNodesNeedSqrtMemory) {
  for (size_t n : {16, 64, 100}) {
    std::vector<ChainNode> nodes(n, ChainNode{1, 1});
    ChainPlan least = leastMemoryPlan(nodes);
    // k checkpoints and runs of n/k: k + n/k, least at k = sqrt(n).
    EXPECT_LE(least.peakBytes, 2 * std::ceil(std::sqrt(double(n))));
    EXPECT_GE(least.peakBytes, 2 * std::sqrt(double(n)) - 1);
  }
}

// epl-rematerialize gives the nodes that are no cut point a size above any
// budget. On a chain longer than the exact planner takes, the least-memory
// plan fell back to keeping everything (those nodes too), and its peak
// read 2^63 - 1 bytes: no plan at all, printed as a size.
TEST(ChainPlan, LongChainsWithNodesNeverKeptHaveAPlan) {
  constexpr int64_t kNeverKept = std::numeric_limits<int64_t>::max() / 8;
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    size_t n = 65 + rng() % 60;
    std::vector<ChainNode> nodes;
    int64_t all = 0;
    for (size_t i = 0; i < n; ++i) {
      int64_t bytes = 1 + rng() % 1000;
      bool cut = rng() % 10 < 3;
      int64_t inRun = rng() % 4 ? bytes : 0;
      all += inRun;
      nodes.push_back(
          {cut ? bytes : kNeverKept, double(1 + rng() % 50), inRun});
    }
    ChainPlan least = leastMemoryPlan(nodes);
    EXPECT_EQ(least.peakBytes, peakBytes(nodes, least.keep));
    EXPECT_LE(least.peakBytes, all);
    for (size_t i = 0; i < n; ++i)
      EXPECT_FALSE(least.keep[i] && nodes[i].bytes == kNeverKept) << i;
    std::optional<ChainPlan> plan = cheapestPlan(nodes, least.peakBytes);
    ASSERT_TRUE(plan);
    EXPECT_LE(plan->peakBytes, least.peakBytes);
  }
}

TEST(ChainPlan, EnoughBudgetKeepsEverything) {
  std::vector<ChainNode> nodes = {{3, 2}, {1, 5}, {4, 1}};
  std::optional<ChainPlan> plan = cheapestPlan(nodes, 8);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->recomputeCost, 0);
  EXPECT_EQ(plan->keep, std::vector<bool>({true, true, true}));
}

TEST(ChainPlan, EmptyChain) {
  std::optional<ChainPlan> plan = cheapestPlan({}, 0);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->peakBytes, 0);
  EXPECT_EQ(leastMemoryPlan({}).peakBytes, 0);
}
} // namespace
