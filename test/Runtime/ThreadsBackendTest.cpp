//===- ThreadsBackendTest.cpp - Collectives on the threads backend --------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "CollectiveChecks.h"

#include "epl/Runtime/Backend.h"

#include <gtest/gtest.h>

#include <mutex>

using namespace epl::rt;

namespace {
class ThreadsCollectives : public ::testing::TestWithParam<int> {};

TEST_P(ThreadsCollectives, EveryCollectiveMatchesIndependentValues) {
  int n = GetParam();
  std::mutex mutex;
  std::vector<std::string> failures;
  Options options;
  options.ranks = n;
  options.timeoutSeconds = 60;
  runRanks(options, [&](int rank) {
    EXPECT_EQ(currentRank(), rank);
    EXPECT_EQ(worldSize(), n);
    auto mine = test::runCollectiveChecks(rank, n);
    std::lock_guard<std::mutex> lock(mutex);
    failures.insert(failures.end(), mine.begin(), mine.end());
  });
  for (const std::string &f : failures)
    ADD_FAILURE() << f;
}

INSTANTIATE_TEST_SUITE_P(Ranks, ThreadsCollectives,
                         ::testing::Values(1, 2, 3, 4, 8));

TEST(ThreadsBackend, AllGatherBytesCollectsEveryRankInOrder) {
  Options options;
  options.ranks = 3;
  std::vector<std::vector<char>> seen;
  runRanks(options, [&](int rank) {
    std::vector<char> mine(rank * 5 + 1, static_cast<char>('a' + rank));
    auto all = allGatherBytes(mine);
    if (rank == 0)
      seen = all;
  });
  ASSERT_EQ(seen.size(), 3u);
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(seen[r],
              std::vector<char>(r * 5 + 1, static_cast<char>('a' + r)));
}

TEST(ThreadsBackend, MemoryIsCountedPerRank) {
  Options options;
  options.ranks = 2;
  std::vector<int64_t> peaks(2);
  runRanks(options, [&](int rank) {
    void *a = _mlir_memref_to_llvm_aligned_alloc(64, 1000 * (rank + 1));
    void *b = _mlir_memref_to_llvm_alloc(24);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
    EXPECT_EQ(currentStats().currentBytes, 1000 * (rank + 1) + 24);
    _mlir_memref_to_llvm_free(a);
    _mlir_memref_to_llvm_free(b);
    EXPECT_EQ(currentStats().currentBytes, 0);
    peaks[rank] = currentStats().peakBytes;
  });
  EXPECT_EQ(peaks[0], 1024);
  EXPECT_EQ(peaks[1], 2024);
}

// A broken program ends every rank with exit code 1 and names the rank and
// the operation; it never hangs.
void runScenario(const char *name, int ranks) {
  Options options;
  options.ranks = ranks;
  options.timeoutSeconds = 1;
  runRanks(options,
           [&](int rank) { test::runFailureScenario(name, rank, ranks); });
  std::exit(0);
}

TEST(ThreadsBackendDeathTest, MismatchedSizesAreReported) {
  EXPECT_EXIT(runScenario("mismatch", 4), ::testing::ExitedWithCode(1),
              "rank [0-9]: mismatched collective over mesh 7 axes \\[0\\] \\(4 "
              "devices\\): this rank called all_reduce of [48] f32 elements "
              "\\(sum\\), rank [0-9] called all_reduce of [48] f32");
}

TEST(ThreadsBackendDeathTest, ARankThatFinishesEarlyIsReported) {
  EXPECT_EXIT(runScenario("early-exit", 4), ::testing::ExitedWithCode(1),
              "rank [0-2]: all_reduce over mesh 7 axes \\[0\\] \\(4 "
              "devices\\): rank\\(s\\) 3 finished the program without "
              "joining it");
}

TEST(ThreadsBackendDeathTest, AMissingMessageTimesOut) {
  EXPECT_EXIT(runScenario("timeout", 2), ::testing::ExitedWithCode(1),
              "rank 1: recv from rank 0 \\(tag 0\\): timed out after 1 s");
}
} // namespace
