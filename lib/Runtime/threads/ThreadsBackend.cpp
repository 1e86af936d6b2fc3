//===- ThreadsBackend.cpp - N ranks as threads of one process -------------===//
//
// Part of EPL-MLIR.
//
// Every rank runs on its own thread. A collective is a rendezvous: each
// member publishes its buffers, waits for the others, computes its own output
// reading the peers' inputs directly (in group order), and waits again so
// that no input is released while a peer still reads it. Waits poll for
// peers that failed, finished early or never came, so a broken program ends
// with a message instead of a hang.
//
//===----------------------------------------------------------------------===//

#include "../Reduce.h"
#include "epl/Runtime/Backend.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <sched.h>
#include <thread>
#include <tuple>

using namespace epl::rt;
using namespace epl::rt::detail;

namespace {
/// memcpy that accepts empty copies: an empty buffer's pointer may be null,
/// which memcpy must not get even for 0 bytes.
void copyBytes(void *dst, const void *src, size_t bytes) {
  if (bytes)
    std::memcpy(dst, src, bytes);
}
} // namespace

namespace {
using Clock = std::chrono::steady_clock;

/// What one member asked for in a collective; peers check they agree.
struct Slot {
  const char *op = nullptr;
  const void *in = nullptr;
  void *out = nullptr;
  size_t count = 0;
  EplDType dtype = EPL_RT_F32;
  int kind = 0;
  int root = 0;
};

struct GroupState {
  explicit GroupState(std::vector<int> members)
      : members(std::move(members)), slots(this->members.size()),
        arrivedAt(this->members.size(), 0) {}
  std::vector<int> members;
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<Slot> slots;
  /// Generation each member last arrived for.
  std::vector<uint64_t> arrivedAt;
  int arrived = 0;
  /// Written under `mutex`; read without it by members spinning.
  std::atomic<uint64_t> generation = 0;
};

struct Message {
  std::vector<char> data;
  EplDType dtype;
};

class ThreadsWorld;

class ThreadsCommunicator final : public Communicator {
public:
  ThreadsCommunicator(ThreadsWorld &world, GroupState &state, Group group)
      : world(world), state(state), group(std::move(group)) {}
  void allReduce(const void *in, void *out, size_t count, EplDType dtype,
                 EplReduction kind) override;
  void allGather(const void *in, void *out, size_t countPerRank,
                 EplDType dtype) override;
  void reduceScatter(const void *in, void *out, size_t countPerRank,
                     EplDType dtype, EplReduction kind) override;
  void allToAll(const void *in, void *out, size_t countPerRank,
                EplDType dtype) override;
  void broadcast(const void *in, void *out, size_t count, EplDType dtype,
                 int root) override;
  void send(const void *in, size_t count, EplDType dtype, int peer,
            int64_t tag) override;
  void recv(void *out, size_t count, EplDType dtype, int peer,
            int64_t tag) override;
  void barrier() override;

private:
  /// Publishes `mine`, waits for every member, checks they agree.
  void enter(const Slot &mine);
  /// Waits until every member is done reading.
  void leave(const char *op);
  void rendezvous(const char *op);

  ThreadsWorld &world;
  GroupState &state;
  Group group;
};

class ThreadsWorld final : public Backend {
public:
  /// `threadsPerRank`: Options::threadsPerRank (0: one each with several
  /// ranks).
  ThreadsWorld(int n, int threadsPerRank, double timeoutSeconds)
      : n(n), timeout(timeoutSeconds), finished(n) {
    for (auto &f : finished)
      f = false;
    cpu_set_t set;
    int cores = sched_getaffinity(0, sizeof(set), &set) == 0
                    ? CPU_COUNT(&set)
                    : static_cast<int>(std::thread::hardware_concurrency());
    // A rank's workers need cores too (kernels and GEMMs split over them).
    spins = static_cast<int64_t>(n) * std::max(1, threadsPerRank) <= cores;
  }
  /// Whether a rank waiting for its peers may spin: each of the ranks'
  /// threads has a core.
  bool spinning() const { return spins; }
  int worldSize() override { return n; }

  Communicator &getCommunicator(const Group &group) override {
    // Each rank is a thread: its first communicator is its first
    // collective.
    static thread_local bool first = true;
    if (first) {
      first = false;
      injectFault("communicator", group.members[group.index]);
    }
    std::lock_guard<std::mutex> lock(mutex);
    // Host-side gathers (mesh -1) rendezvous apart from the program's
    // collectives over the same ranks (a pipeline's stage axis spans every
    // rank), so that a rank gathering results is not mistaken for a peer in
    // the program's next collective.
    bool host = group.meshId < 0;
    auto key = std::make_tuple(group.members[group.index], host, group.members);
    auto it = communicators.find(key);
    if (it != communicators.end())
      return *it->second;
    auto &state = states[{host, group.members}];
    if (!state)
      state = std::make_unique<GroupState>(group.members);
    auto comm = std::make_unique<ThreadsCommunicator>(*this, *state, group);
    return *communicators.emplace(key, std::move(comm)).first->second;
  }

  [[noreturn]] void abort(const std::string &message) override {
    // One process holds every rank: ending it ends them all.
    std::fputs(message.c_str(), stderr);
    std::fflush(stderr);
    std::_Exit(1);
  }

  void finishProgram(int rank) override { finished[rank] = true; }
  bool isFinished(int rank) const { return finished[rank]; }
  Clock::time_point deadline() const {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(timeout));
  }
  double timeoutSeconds() const { return timeout; }

  // Point-to-point mailboxes, one FIFO per (source, destination, tag).
  std::mutex mailMutex;
  std::condition_variable mailCv;
  std::map<std::tuple<int, int, int64_t>, std::deque<Message>> mailboxes;

private:
  int n;
  double timeout;
  bool spins;
  std::vector<std::atomic<bool>> finished;
  std::mutex mutex;
  std::map<std::pair<bool, std::vector<int>>, std::unique_ptr<GroupState>>
      states;
  std::map<std::tuple<int, bool, std::vector<int>>,
           std::unique_ptr<ThreadsCommunicator>>
      communicators;
};

constexpr auto kPollInterval = std::chrono::milliseconds(20);
constexpr auto kSpin = std::chrono::microseconds(100);

inline void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

void ThreadsCommunicator::rendezvous(const char *op) {
  std::unique_lock<std::mutex> lock(state.mutex);
  uint64_t generation = state.generation;
  state.arrivedAt[group.index] = generation + 1;
  if (++state.arrived == group.size()) {
    state.arrived = 0;
    ++state.generation;
    state.cv.notify_all();
    return;
  }
  // Peers usually come within microseconds (the same step on other cores):
  // spin a little before sleeping, as waking from a condition variable
  // takes tens of microseconds, and a data-parallel step meets its peers
  // some twenty times. Only while the ranks have a core each: spinning on a
  // shared core would keep the peer it waits for off it.
  if (world.spinning()) {
    lock.unlock();
    auto until = Clock::now() + kSpin;
    while (state.generation.load(std::memory_order_acquire) == generation &&
           Clock::now() < until)
      pause();
    lock.lock();
    if (state.generation != generation)
      return;
  }
  auto deadline = world.deadline();
  while (state.generation == generation) {
    state.cv.wait_for(lock, kPollInterval);
    if (state.generation != generation)
      break;
    std::string missing;
    bool finishedPeer = false;
    for (int i = 0; i < group.size(); ++i) {
      if (state.arrivedAt[i] == generation + 1)
        continue;
      int rank = group.members[i];
      // Host-side gathers happen after the program: finished is expected.
      finishedPeer |= group.meshId >= 0 && world.isFinished(rank);
      missing += (missing.empty() ? "" : ", ") + std::to_string(rank);
    }
    if (finishedPeer)
      fatalError(std::string(op) + " over " + group.describe() + ": rank(s) " +
                 missing + " finished the program without joining it");
    if (Clock::now() > deadline)
      fatalError(std::string(op) + " over " + group.describe() +
                 ": timed out after " + formatSeconds(world.timeoutSeconds()) +
                 " waiting for rank(s) " + missing + " (see --timeout)");
  }
}

void ThreadsCommunicator::enter(const Slot &mine) {
  state.slots[group.index] = mine;
  rendezvous(mine.op);
  for (int i = 0; i < group.size(); ++i) {
    const Slot &other = state.slots[i];
    auto describe = [&](const Slot &s) {
      return std::string(s.op) + " of " + std::to_string(s.count) + " " +
             dtypeName(s.dtype) + " elements" +
             (std::strcmp(s.op, "all_reduce") == 0 ||
                      std::strcmp(s.op, "reduce_scatter") == 0
                  ? std::string(" (") +
                        reductionName(static_cast<EplReduction>(s.kind)) + ")"
                  : std::string()) +
             (std::strcmp(s.op, "broadcast") == 0
                  ? " from root " + std::to_string(s.root)
                  : std::string());
    };
    if (std::strcmp(other.op, mine.op) != 0 || other.count != mine.count ||
        other.dtype != mine.dtype || other.kind != mine.kind ||
        other.root != mine.root)
      fatalError("mismatched collective over " + group.describe() +
                 ": this rank called " + describe(mine) + ", rank " +
                 std::to_string(group.members[i]) + " called " +
                 describe(other));
  }
}

void ThreadsCommunicator::leave(const char *op) { rendezvous(op); }

/// From this size on, an all-reduce is a reduce-scatter and an all-gather
/// (one more rendezvous, a few microseconds): each member reduces a 1/n
/// share of the elements and copies the others' shares, so the inputs are
/// read once in all instead of once per member (a data-parallel MLP step's
/// 7 MiB of gradients on 2 ranks: 1.4 to 0.8 ms).
constexpr size_t kShareReductionBytes = 1 << 20;

void ThreadsCommunicator::allReduce(const void *in, void *out, size_t count,
                                    EplDType dtype, EplReduction kind) {
  enter({"all_reduce", in, out, count, dtype, kind, 0});
  int n = group.size();
  size_t es = dtypeSize(dtype);
  // A member summing over its own input (epl-all-reduce-in-place) must not
  // write it while the others read it whole: shares, then, at any size.
  bool inPlace =
      std::any_of(state.slots.begin(), state.slots.end(),
                  [](const Slot &s) { return s.in && s.in == s.out; });
  if (n == 1 || (!inPlace && count * es < kShareReductionBytes)) {
    std::vector<const void *> inputs;
    for (const Slot &s : state.slots)
      inputs.push_back(s.in);
    reduceInOrder(out, inputs.data(), n, count, dtype, kind);
  } else {
    // Shares of whole cache lines; the last may be short, or empty.
    size_t line = std::max<size_t>(1, 64 / es);
    size_t share = (count + n - 1) / n;
    share = (share + line - 1) / line * line;
    auto begin = [&](int i) { return std::min(count, i * share); };
    auto end = [&](int i) { return std::min(count, (i + 1) * share); };
    int me = group.index;
    // The same elements in the same order as a whole reduction: every
    // backend's sums stay bit-identical. A member's input may be its output:
    // only it reads its share of the inputs, and the others' shares of its
    // buffer are written after the rendezvous, when all have read them.
    std::vector<const void *> inputs;
    for (const Slot &s : state.slots)
      inputs.push_back(static_cast<const char *>(s.in) + begin(me) * es);
    reduceInOrder(static_cast<char *>(out) + begin(me) * es, inputs.data(), n,
                  end(me) - begin(me), dtype, kind);
    rendezvous("all_reduce");
    for (int i = 0; i < n; ++i)
      if (i != me)
        copyBytes(static_cast<char *>(out) + begin(i) * es,
                  static_cast<const char *>(state.slots[i].out) + begin(i) * es,
                  (end(i) - begin(i)) * es);
  }
  injectFault("all_reduce", group.members[group.index]);
  leave("all_reduce");
}

void ThreadsCommunicator::allGather(const void *in, void *out,
                                    size_t countPerRank, EplDType dtype) {
  enter({"all_gather", in, out, countPerRank, dtype, 0, 0});
  size_t bytes = countPerRank * dtypeSize(dtype);
  for (int i = 0; i < group.size(); ++i)
    copyBytes(static_cast<char *>(out) + i * bytes, state.slots[i].in, bytes);
  leave("all_gather");
}

void ThreadsCommunicator::reduceScatter(const void *in, void *out,
                                        size_t countPerRank, EplDType dtype,
                                        EplReduction kind) {
  enter({"reduce_scatter", in, out, countPerRank, dtype, kind, 0});
  size_t offset = group.index * countPerRank * dtypeSize(dtype);
  std::vector<const void *> inputs;
  for (const Slot &s : state.slots)
    inputs.push_back(static_cast<const char *>(s.in) + offset);
  reduceInOrder(out, inputs.data(), group.size(), countPerRank, dtype, kind);
  leave("reduce_scatter");
}

void ThreadsCommunicator::allToAll(const void *in, void *out,
                                   size_t countPerRank, EplDType dtype) {
  enter({"all_to_all", in, out, countPerRank, dtype, 0, 0});
  size_t bytes = countPerRank * dtypeSize(dtype);
  for (int i = 0; i < group.size(); ++i)
    copyBytes(static_cast<char *>(out) + i * bytes,
              static_cast<const char *>(state.slots[i].in) +
                  group.index * bytes,
              bytes);
  leave("all_to_all");
}

void ThreadsCommunicator::broadcast(const void *in, void *out, size_t count,
                                    EplDType dtype, int root) {
  enter({"broadcast", in, out, count, dtype, 0, root});
  copyBytes(out, state.slots[root].in, count * dtypeSize(dtype));
  leave("broadcast");
}

void ThreadsCommunicator::barrier() {
  enter({"barrier", nullptr, nullptr, 0, EPL_RT_F32, 0, 0});
  leave("barrier");
}

void ThreadsCommunicator::send(const void *in, size_t count, EplDType dtype,
                               int peer, int64_t tag) {
  Message message{std::vector<char>(count * dtypeSize(dtype)), dtype};
  copyBytes(message.data.data(), in, message.data.size());
  std::lock_guard<std::mutex> lock(world.mailMutex);
  world.mailboxes[{group.members[group.index], group.members[peer], tag}]
      .push_back(std::move(message));
  world.mailCv.notify_all();
}

void ThreadsCommunicator::recv(void *out, size_t count, EplDType dtype,
                               int peer, int64_t tag) {
  int source = group.members[peer];
  std::unique_lock<std::mutex> lock(world.mailMutex);
  auto &queue = world.mailboxes[{source, group.members[group.index], tag}];
  auto deadline = world.deadline();
  while (queue.empty()) {
    world.mailCv.wait_for(lock, kPollInterval);
    if (!queue.empty())
      break;
    if (world.isFinished(source))
      fatalError("recv from rank " + std::to_string(source) + " (tag " +
                 std::to_string(tag) +
                 "): that rank finished the program without sending");
    if (Clock::now() > deadline)
      fatalError("recv from rank " + std::to_string(source) + " (tag " +
                 std::to_string(tag) + "): timed out after " +
                 formatSeconds(world.timeoutSeconds()) + " (see --timeout)");
  }
  Message message = std::move(queue.front());
  queue.pop_front();
  size_t bytes = count * dtypeSize(dtype);
  if (message.dtype != dtype || message.data.size() != bytes)
    fatalError("recv from rank " + std::to_string(source) + " expected " +
               std::to_string(count) + " " + dtypeName(dtype) +
               " elements, but it sent " +
               std::to_string(message.data.size() / dtypeSize(message.dtype)) +
               " " + dtypeName(message.dtype) + " elements");
  copyBytes(out, message.data.data(), bytes);
}
} // namespace

void epl::rt::detail::runThreads(const Options &options,
                                 const std::function<void(int)> &body) {
  ThreadsWorld world(options.ranks, options.threadsPerRank,
                     options.timeoutSeconds);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < options.ranks; ++rank)
    threads.push_back(startThread(
        [&, rank]() {
          enterRank(&world, rank);
          body(rank);
          leaveRank();
        },
        "rank " + std::to_string(rank) + "'s thread (of " +
            std::to_string(options.ranks) + " ranks)"));
  for (std::thread &t : threads)
    t.join();
}
