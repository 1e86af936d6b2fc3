//===- ParallelForTest.cpp - A kernel's loop over a rank's threads --------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//
//
// epl_rt_parallel_for as split kernels call it: every iteration runs exactly
// once, chunks are contiguous and ordered, back-to-back calls never mix, and
// ranks of one process each use their own workers at once. Also built with
// ThreadSanitizer (docs/reliability.md).
//
//===----------------------------------------------------------------------===//

#include "epl/Runtime/Backend.h"
#include "epl/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

using namespace epl::rt;

namespace {
/// What a task saw: each iteration's count, and the chunks it was given.
struct Coverage {
  std::vector<std::atomic<int>> hits;
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  std::vector<std::thread::id> threads;
  explicit Coverage(int64_t n) : hits(n) {}
};

void record(void *context, int64_t lo, int64_t hi) {
  auto *c = static_cast<Coverage *>(context);
  for (int64_t i = lo; i < hi; ++i)
    c->hits[i].fetch_add(1);
  std::lock_guard<std::mutex> lock(c->mutex);
  c->chunks.push_back({lo, hi});
  c->threads.push_back(std::this_thread::get_id());
}

/// Runs `body` on `ranks` ranks of `threads` threads each.
void onRanks(int ranks, int threads, const std::function<void(int)> &body) {
  Options options;
  options.ranks = ranks;
  options.threadsPerRank = threads;
  options.timeoutSeconds = 60;
  runRanks(options, body);
}

class ParallelFor : public ::testing::TestWithParam<int> {};

TEST_P(ParallelFor, EveryIterationOnceInOrderedChunks) {
  int threads = GetParam();
  onRanks(1, threads, [&](int) {
    EXPECT_EQ(threadsPerRank(), threads);
    for (int64_t n : {0, 1, 2, 3, 5, 7, 64, 1001}) {
      Coverage c(n);
      epl_rt_parallel_for(record, &c, n);
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(c.hits[i].load(), 1) << "n " << n << " iteration " << i;
      // One chunk per thread used, together [0, n) without gaps.
      std::sort(c.chunks.begin(), c.chunks.end());
      int64_t next = 0;
      for (auto [lo, hi] : c.chunks) {
        EXPECT_EQ(lo, next);
        EXPECT_LT(lo, hi);
        next = hi;
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(static_cast<int64_t>(c.chunks.size()),
                std::min<int64_t>(threads, std::max<int64_t>(n, 1)));
      if (n >= threads) {
        EXPECT_EQ(static_cast<int>(c.chunks.size()), threads);
      }
    }
  });
}

TEST_P(ParallelFor, BackToBackCallsDoNotMix) {
  int threads = GetParam();
  onRanks(1, threads, [&](int) {
    std::vector<int64_t> sums;
    for (int call = 0; call < 2000; ++call) {
      int64_t n = 1 + call % 37;
      Coverage c(n);
      epl_rt_parallel_for(record, &c, n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(c.hits[i].load(), 1) << "call " << call;
    }
  });
}

/// A chunk that itself calls epl_rt_parallel_for (a split kernel calling the
/// runtime's GEMM, which cuts large GEMMs over the same workers).
struct Nested {
  std::deque<Coverage> inner;
  explicit Nested(int64_t outer) {
    for (int64_t i = 0; i < outer; ++i)
      inner.emplace_back(100);
  }
};

void nested(void *context, int64_t lo, int64_t hi) {
  auto *n = static_cast<Nested *>(context);
  for (int64_t i = lo; i < hi; ++i)
    epl_rt_parallel_for(record, &n->inner[i], 100);
}

TEST_P(ParallelFor, NestedCallsRunWholeOnTheirThread) {
  int threads = GetParam();
  onRanks(1, threads, [&](int) {
    Nested n(7);
    epl_rt_parallel_for(nested, &n, 7);
    for (Coverage &c : n.inner) {
      for (int64_t i = 0; i < 100; ++i)
        EXPECT_EQ(c.hits[i].load(), 1);
      ASSERT_EQ(c.chunks.size(), 1u);
      EXPECT_EQ(c.chunks[0], std::make_pair(int64_t(0), int64_t(100)));
    }
    // The workers are free again afterwards.
    Coverage after(1000);
    epl_rt_parallel_for(record, &after, 1000);
    EXPECT_EQ(static_cast<int>(after.chunks.size()), threads);
  });
}

INSTANTIATE_TEST_SUITE_P(Threads, ParallelFor, ::testing::Values(1, 2, 3, 4));

TEST(ParallelForRanks, EachRankUsesItsOwnWorkers) {
  std::mutex mutex;
  std::vector<std::vector<std::thread::id>> seen(3);
  // Every rank (and its workers) alive at once, so no thread id is reused.
  std::atomic<int> started{0}, finished{0};
  auto meet = [](std::atomic<int> &count) {
    count.fetch_add(1);
    while (count.load() < 3)
      std::this_thread::yield();
  };
  onRanks(3, 2, [&](int rank) {
    meet(started);
    for (int call = 0; call < 200; ++call) {
      Coverage c(16);
      epl_rt_parallel_for(record, &c, 16);
      for (int64_t i = 0; i < 16; ++i)
        ASSERT_EQ(c.hits[i].load(), 1);
      std::lock_guard<std::mutex> lock(mutex);
      seen[rank].insert(seen[rank].end(), c.threads.begin(), c.threads.end());
    }
    meet(finished);
  });
  // No thread worked for two ranks.
  for (int a = 0; a < 3; ++a)
    for (int b = a + 1; b < 3; ++b)
      for (std::thread::id t : seen[a])
        EXPECT_EQ(std::count(seen[b].begin(), seen[b].end(), t), 0);
}

TEST(ParallelForRanks, SeveralRanksDefaultToOneThread) {
  onRanks(2, 0, [&](int) { EXPECT_EQ(threadsPerRank(), 1); });
}
} // namespace
