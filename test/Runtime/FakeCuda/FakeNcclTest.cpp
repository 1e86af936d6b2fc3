//===- FakeNcclTest.cpp - The fake NCCL's messages are NCCL's -------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//
//
// The end-to-end runs under the fake (test_fake_cuda.py) show that pipeline
// stages exchanging messages over NCCL finish and equal the CPU run. That
// means something only if the fake's messages behave as NCCL's: untagged,
// in order between two members, and a send done only once its receive
// takes it. Here two members (threads on two fake GPUs) check each rule,
// including that sends posted alone where each waits for the other's
// receive end the program with a message instead of finishing. Sends
// outside groups (the runtime's channels) keep their stream busy until
// taken, and their buffers may be neither freed nor written until then,
// nor may a communicator be made (NCCL's cudaMalloc synchronizes the GPU),
// nor a cuBLAS kernel loaded at its first use (CUDA's lazy loading); and
// destroying a communicator waits for its other members, so members that
// destroy two in other orders wait for each other: the fake must say so,
// or a runtime doing it would pass.
//
//===----------------------------------------------------------------------===//

#include <cublas_v2.h>
#include <cuda.h>
#include <nccl.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

namespace {
/// One member: a context current on its thread, a stream, a communicator.
struct Member {
  CUstream stream = nullptr;
  ncclComm_t comm = nullptr;
  int rank = 0;

  /// A device buffer holding `values`.
  float *upload(const std::vector<float> &values) {
    CUdeviceptr p = 0;
    EXPECT_EQ(cuMemAllocAsync(&p, values.size() * sizeof(float), stream),
              CUDA_SUCCESS);
    EXPECT_EQ(cuMemcpyAsync(p, reinterpret_cast<CUdeviceptr>(values.data()),
                            values.size() * sizeof(float), stream),
              CUDA_SUCCESS);
    return reinterpret_cast<float *>(p);
  }
  std::vector<float> download(const float *buffer, size_t count) {
    std::vector<float> values(count);
    EXPECT_EQ(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(values.data()),
                            reinterpret_cast<CUdeviceptr>(buffer),
                            count * sizeof(float), stream),
              CUDA_SUCCESS);
    return values;
  }
  /// Posts `sends` (peer, buffer) and `receives` (peer, buffer) of one
  /// element each as one group.
  void group(const std::vector<std::pair<int, float *>> &sends,
             const std::vector<std::pair<int, float *>> &receives) {
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (auto [peer, buffer] : sends)
      ASSERT_EQ(ncclSend(buffer, 1, ncclFloat32, peer, comm, stream),
                ncclSuccess);
    for (auto [peer, buffer] : receives)
      ASSERT_EQ(ncclRecv(buffer, 1, ncclFloat32, peer, comm, stream),
                ncclSuccess);
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  }
};

/// Runs `body` on two members, each a thread on a GPU of its own.
void onTwoGPUs(const std::function<void(Member &)> &body) {
  setenv("EPL_FAKE_CUDA_DEVICES", "2", 1);
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      Member m;
      m.rank = rank;
      CUdevice device;
      CUcontext context;
      ASSERT_EQ(cuDeviceGet(&device, rank), CUDA_SUCCESS);
      ASSERT_EQ(cuDevicePrimaryCtxRetain(&context, device), CUDA_SUCCESS);
      ASSERT_EQ(cuCtxSetCurrent(context), CUDA_SUCCESS);
      ASSERT_EQ(cuStreamCreate(&m.stream, 0), CUDA_SUCCESS);
      ASSERT_EQ(ncclCommInitRank(&m.comm, 2, id, rank), ncclSuccess);
      body(m);
    });
  for (std::thread &t : threads)
    t.join();
}

// 1F1B's steady state: each member sends, then receives what the other
// sends. In one group each, they meet.
TEST(FakeNccl, SendsAndReceivesOfOneGroupMeet) {
  onTwoGPUs([](Member &m) {
    float *out = m.upload({float(m.rank + 1)});
    float *in = m.upload({0});
    m.group({{1 - m.rank, out}}, {{1 - m.rank, in}});
    EXPECT_EQ(m.download(in, 1), std::vector<float>{float(2 - m.rank)});
  });
}

// No tags: a member gets a peer's messages in the order the peer sent
// them, whichever groups they are in.
TEST(FakeNccl, MessagesOfAPairArriveInOrder) {
  onTwoGPUs([](Member &m) {
    std::vector<float *> got;
    if (m.rank == 0) {
      m.group({{1, m.upload({10})}, {1, m.upload({20})}}, {});
      m.group({{1, m.upload({30})}}, {});
    } else {
      for (int k = 0; k < 3; ++k)
        got.push_back(m.upload({0}));
      m.group({}, {{0, got[0]}});
      m.group({}, {{0, got[1]}, {0, got[2]}});
      EXPECT_EQ(m.download(got[0], 1), std::vector<float>{10});
      EXPECT_EQ(m.download(got[1], 1), std::vector<float>{20});
      EXPECT_EQ(m.download(got[2], 1), std::vector<float>{30});
    }
  });
}

// Sends posted alone, each waiting for a receive behind the other's send:
// on a GPU they would wait forever; the fake ends the program.
TEST(FakeNcclDeathTest, SendsWaitingForEachOtherEndTheProgram) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  setenv("EPL_FAKE_NCCL_TIMEOUT_S", "1", 1);
  EXPECT_EXIT(onTwoGPUs([](Member &m) {
                float *out = m.upload({1});
                float *in = m.upload({0});
                m.group({{1 - m.rank, out}}, {});
                m.group({}, {{1 - m.rank, in}});
              }),
              testing::ExitedWithCode(86),
              "fake NCCL: a send or receive whose peer did not match it in "
              "time \\(mismatched messages, or groups of them waiting for "
              "each other\\)");
}
// A send outside a group is posted at once and done when taken: its
// stream is busy until then; receives outside groups take a peer's
// messages in the order it sent them.
TEST(FakeNccl, SendsOutsideGroupsAreDoneWhenTaken) {
  std::atomic<bool> posted{false};
  onTwoGPUs([&](Member &m) {
    if (m.rank == 0) {
      ASSERT_EQ(ncclSend(m.upload({10}), 1, ncclFloat32, 1, m.comm, m.stream),
                ncclSuccess);
      ASSERT_EQ(ncclSend(m.upload({20}), 1, ncclFloat32, 1, m.comm, m.stream),
                ncclSuccess);
      EXPECT_EQ(cuStreamQuery(m.stream), CUDA_ERROR_NOT_READY);
      CUevent sent;
      ASSERT_EQ(cuEventCreate(&sent, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
      ASSERT_EQ(cuEventRecord(sent, m.stream), CUDA_SUCCESS);
      EXPECT_EQ(cuEventQuery(sent), CUDA_ERROR_NOT_READY);
      posted = true;
      EXPECT_EQ(cuStreamSynchronize(m.stream), CUDA_SUCCESS);
      EXPECT_EQ(cuEventQuery(sent), CUDA_SUCCESS);
      EXPECT_EQ(cuEventDestroy(sent), CUDA_SUCCESS);
    } else {
      while (!posted)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      float *first = m.upload({0}), *second = m.upload({0});
      ASSERT_EQ(ncclRecv(first, 1, ncclFloat32, 0, m.comm, m.stream),
                ncclSuccess);
      ASSERT_EQ(ncclRecv(second, 1, ncclFloat32, 0, m.comm, m.stream),
                ncclSuccess);
      EXPECT_EQ(m.download(first, 1), std::vector<float>{10});
      EXPECT_EQ(m.download(second, 1), std::vector<float>{20});
    }
  });
}

// On a GPU a send outside a group reads its buffer when its receive takes
// it: writing the buffer before then would send what was written.
TEST(FakeNcclDeathTest, WritingASentBufferBeforeItIsTakenEndsTheProgram) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::atomic<bool> written{false};
  EXPECT_EXIT(onTwoGPUs([&](Member &m) {
                if (m.rank == 0) {
                  float *out = m.upload({1});
                  ncclSend(out, 1, ncclFloat32, 1, m.comm, m.stream);
                  float two = 2;
                  cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(out),
                                reinterpret_cast<CUdeviceptr>(&two), sizeof two,
                                m.stream);
                  written = true;
                } else {
                  while (!written)
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                  ncclRecv(m.upload({0}), 1, ncclFloat32, 0, m.comm, m.stream);
                }
              }),
              testing::ExitedWithCode(86),
              "fake NCCL: the buffer of a send outside a group was written "
              "before its receive took it");
}

// ... and freeing it would send freed memory.
TEST(FakeNcclDeathTest, FreeingASentBufferBeforeItIsTakenEndsTheProgram) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(onTwoGPUs([&](Member &m) {
                if (m.rank == 1)
                  return;
                float *out = m.upload({1});
                ncclSend(out, 1, ncclFloat32, 1, m.comm, m.stream);
                cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(out), m.stream);
              }),
              testing::ExitedWithCode(86),
              "fake driver: a buffer was freed while an NCCL send on another "
              "stream still reads it");
}
// Making a communicator allocates device memory with cudaMalloc, which
// synchronizes the GPU: with a send waiting for its receive, for good.
TEST(FakeNcclDeathTest, ACommunicatorMadeWhileASendWaitsEndsTheProgram) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(onTwoGPUs([&](Member &m) {
                if (m.rank == 1)
                  return;
                ncclSend(m.upload({1}), 1, ncclFloat32, 1, m.comm, m.stream);
                ncclUniqueId id;
                ncclComm_t alone;
                ncclGetUniqueId(&id);
                ncclCommInitRank(&alone, 1, id, 0);
              }),
              testing::ExitedWithCode(86),
              "fake NCCL: ncclCommInitRank while a send of this GPU waits for "
              "its receive");
}

/// Each member makes a second communicator over both, then destroys it and
/// its first one, the first one first where `firstFirst`.
void destroyBoth(Member &m, bool firstFirst) {
  static ncclUniqueId second;
  static std::atomic<bool> made{false};
  if (m.rank == 0) {
    ASSERT_EQ(ncclGetUniqueId(&second), ncclSuccess);
    made = true;
  } else {
    while (!made)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ncclComm_t other;
  ASSERT_EQ(ncclCommInitRank(&other, 2, second, m.rank), ncclSuccess);
  // Both have joined: the next test's id is made afresh.
  made = false;
  ASSERT_EQ(ncclCommDestroy(firstFirst ? m.comm : other), ncclSuccess);
  ASSERT_EQ(ncclCommDestroy(firstFirst ? other : m.comm), ncclSuccess);
  m.comm = nullptr;
}

// Destroying a communicator waits for its other members (NCCL finalizes
// it): members that destroy theirs in one order go...
TEST(FakeNccl, CommunicatorsDestroyedInOneOrderGo) {
  onTwoGPUs([](Member &m) { destroyBoth(m, true); });
}

// ... and in other orders, each waits for the other for good.
TEST(FakeNcclDeathTest, CommunicatorsDestroyedInOtherOrdersEndTheProgram) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("EPL_FAKE_NCCL_TIMEOUT_S", "1", 1);
        onTwoGPUs([](Member &m) { destroyBoth(m, m.rank == 0); });
      },
      testing::ExitedWithCode(86),
      "fake NCCL: a member of the communicator did not destroy it in time");
}

// Destroying a communicator frees what a send of it that its receive has
// not taken reads.
TEST(FakeNcclDeathTest,
     DestroyingACommunicatorWithASendInFlightEndsTheProgram) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(onTwoGPUs([&](Member &m) {
                if (m.rank == 1)
                  return;
                ncclSend(m.upload({1}), 1, ncclFloat32, 1, m.comm, m.stream);
                ncclCommDestroy(m.comm);
              }),
              testing::ExitedWithCode(86),
              "fake NCCL: ncclCommDestroy while a send of the member waits "
              "for its receive");
}

/// Member 0 runs a cuBLAS GEMM while its send to member 1 waits for its
/// receive, which member 1 posts after the GEMM.
void gemmWhileASendWaits(Member &m) {
  static std::atomic<bool> multiplied{false};
  if (m.rank == 1) {
    while (!multiplied)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    float *in = m.upload({0});
    ASSERT_EQ(ncclRecv(in, 1, ncclFloat32, 0, m.comm, m.stream), ncclSuccess);
    EXPECT_EQ(m.download(in, 1), std::vector<float>{1});
    return;
  }
  cublasHandle_t handle;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasSetStream(handle, m.stream), CUBLAS_STATUS_SUCCESS);
  float *a = m.upload({2}), *b = m.upload({3}), *c = m.upload({0});
  ASSERT_EQ(ncclSend(m.upload({1}), 1, ncclFloat32, 1, m.comm, m.stream),
            ncclSuccess);
  float one = 1, zero = 0;
  ASSERT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, a, 1,
                        b, 1, &zero, c, 1),
            CUBLAS_STATUS_SUCCESS);
  multiplied = true;
  EXPECT_EQ(m.download(c, 1), std::vector<float>{6});
}

// CUDA's lazy loading (its default) loads a cuBLAS kernel at its first
// use, which may synchronize the context: with a send waiting for its
// receive, for good.
TEST(FakeNcclDeathTest, AGemmLoadedWhileASendWaitsEndsTheProgram) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(onTwoGPUs(gemmWhileASendWaits), testing::ExitedWithCode(86),
              "fake cuBLAS: the kernel of a 1x1x1 GEMM is loaded at its first "
              "use \\(CUDA's lazy loading\\) while a send of this GPU waits");
}

// Eager loading loaded it with cuBLAS: the same GEMM runs (in a process of
// its own, whose driver starts so).
TEST(FakeNcclDeathTest, UnderEagerLoadingAGemmRunsWhileASendWaits) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("CUDA_MODULE_LOADING", "EAGER", 1);
        onTwoGPUs(gemmWhileASendWaits);
        std::_Exit(testing::Test::HasFailure() ? 1 : 0);
      },
      testing::ExitedWithCode(0), "");
}
} // namespace
