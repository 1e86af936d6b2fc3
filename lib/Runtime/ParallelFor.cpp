//===- ParallelFor.cpp - A kernel's outer loop over a rank's threads ------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//
//
// `epl-thread-kernels` makes large kernels callable on a range of their
// outermost parallel loop; `epl_rt_parallel_for` cuts the loop into one
// contiguous chunk per thread of the calling rank and runs them at once.
// Each rank has its own workers (threads of a process running several
// ranks never share them), started on its first split kernel. A split
// kernel's chunks are disjoint output rows computed by the same loops, so
// its results do not depend on the number of threads. The runtime's GEMM
// (Gemm.cpp) also cuts large GEMMs into blocks here; a GEMM's blocks may
// round differently from the whole in the last bits.
//
//===----------------------------------------------------------------------===//

#include "epl/Runtime/Backend.h"
#include "epl/Runtime/Runtime.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/resource.h>

namespace {
using Task = void (*)(void *, int64_t, int64_t);

/// Whether this thread is running a chunk: a call from inside one (a
/// kernel's chunk calling the runtime's GEMM) runs whole, on this thread,
/// as the rank's workers are busy with the outer call.
thread_local bool inChunk = false;

/// `threads - 1` workers; the caller runs the first chunk itself.
class Workers {
public:
  explicit Workers(int threads) : faults(threads) {
    for (int i = 1; i < threads; ++i)
      workers.push_back(epl::rt::startThread(
          [this, i] { work(i); }, "a worker thread of the rank (" +
                                      std::to_string(i) + " of " +
                                      std::to_string(threads - 1) + ")"));
  }
  ~Workers() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
      generation.fetch_add(1);
    }
    wake.notify_all();
    for (std::thread &t : workers)
      t.join();
  }

  int threads() const { return static_cast<int>(workers.size()) + 1; }

  /// Page faults the workers have taken (for the rank's step report).
  int64_t pageFaults() const {
    int64_t sum = 0;
    for (const std::atomic<int64_t> &f : faults)
      sum += f.load();
    return sum;
  }

  void run(Task fn, void *context, int64_t n) {
    int used = static_cast<int>(std::min<int64_t>(n, threads()));
    {
      std::lock_guard<std::mutex> lock(mutex);
      task = fn;
      this->context = context;
      count = n;
      parts = used;
      pending.store(used - 1);
      generation.fetch_add(1);
    }
    wake.notify_all();
    inChunk = true;
    fn(context, 0, n / used);
    inChunk = false;
    // The other chunks are as long: wait by spinning briefly, then sleep.
    auto start = std::chrono::steady_clock::now();
    while (pending.load() != 0) {
      if (std::chrono::steady_clock::now() - start <
          std::chrono::microseconds(200)) {
        std::this_thread::yield();
        continue;
      }
      std::unique_lock<std::mutex> lock(mutex);
      done.wait(lock, [&] { return pending.load() == 0; });
    }
  }

private:
  void work(int index) {
    uint64_t seen = 0;
    while (true) {
      // Kernels come in quick succession: spin a little before sleeping.
      auto start = std::chrono::steady_clock::now();
      while (generation.load() == seen &&
             std::chrono::steady_clock::now() - start <
                 std::chrono::microseconds(200))
        std::this_thread::yield();
      Task fn;
      void *ctx;
      int64_t n, used;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return generation.load() != seen; });
        seen = generation.load();
        if (stopping)
          return;
        fn = task;
        ctx = context;
        n = count;
        used = parts;
      }
      if (index >= used)
        continue;
      inChunk = true;
      fn(ctx, n * index / used, n * (index + 1) / used);
      inChunk = false;
      struct rusage usage;
      if (getrusage(RUSAGE_THREAD, &usage) == 0)
        faults[index].store(usage.ru_minflt + usage.ru_majflt);
      if (pending.fetch_sub(1) == 1) {
        std::lock_guard<std::mutex> lock(mutex);
        done.notify_one();
      }
    }
  }

  std::vector<std::thread> workers;
  /// Each worker's page faults so far (index 0, the caller's, unused).
  std::vector<std::atomic<int64_t>> faults;
  std::mutex mutex;
  std::condition_variable wake, done;
  std::atomic<uint64_t> generation{0};
  std::atomic<int> pending{0};
  bool stopping = false;
  Task task = nullptr;
  void *context = nullptr;
  int64_t count = 0, parts = 0;
};

thread_local std::unique_ptr<Workers> rankWorkers;
/// Page faults of this rank's workers that are gone.
thread_local int64_t retiredFaults = 0;

} // namespace

extern "C" void epl_rt_parallel_for(Task task, void *context, int64_t n) {
  if (n <= 0)
    return;
  int threads = epl::rt::threadsPerRank();
  if (threads <= 1 || n <= 1 || inChunk)
    return task(context, 0, n);
  if (!rankWorkers || rankWorkers->threads() != threads) {
    if (rankWorkers)
      retiredFaults += rankWorkers->pageFaults();
    rankWorkers = std::make_unique<Workers>(threads);
  }
  rankWorkers->run(task, context, n);
}

int64_t epl::rt::workerPageFaults() {
  return retiredFaults + (rankWorkers ? rankWorkers->pageFaults() : 0);
}
