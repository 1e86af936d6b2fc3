//===- FakeNccl.cpp - NCCL without GPUs, for tests ------------------------===//
//
// Part of EPL-MLIR.
//
// NCCL's collectives among the members of a communicator, which may be
// threads of one process (epl-exec's threads backend over several fake
// GPUs) or processes (under mpirun, the id bootstrapped through MPI as with
// the real NCCL). The members share a POSIX shared-memory segment named by
// the unique id: each posts its input there and meets the others, then each
// computes its output from everyone's, and they meet again before anyone
// posts the next. Sends and receives (in ncclGroupStart/End, as NCCL's
// point-to-point calls are used) involve only their two members: as with
// NCCL, a member's messages to a peer arrive in the order it sent them, with
// no tags, and a send is done only when its receive takes it, so a group
// returns when all its messages are matched. A send outside a group (as the
// runtime's channels post them, on a stream of their own) is posted at once
// and done when its receive takes it: its stream is busy until then
// (eplFakeCudaAddPendingWork), its buffer may not be freed, and in one
// process the receive checks that nothing wrote the buffer in between (on
// a GPU the send reads it only then). A receive outside a group waits for
// its message. Buffers must be device buffers
// of the member's GPU (the fake driver's). Members that do not all arrive
// within a minute end the process with a message (a mismatched program, or
// groups of messages that wait for each other), never a hang.
//
// Environment: EPL_FAKE_NCCL_SLOT_MB, the most one member posts at once
// (default 64); EPL_FAKE_NCCL_TIMEOUT_S, how long members wait for each
// other (default 60).
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <nccl.h>

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace {
constexpr int kMaxMembers = 64;
constexpr int kMaxSends = 64;

/// One send of a member's open group, in its slot: the `seq`-th message of
/// the member to `peer`, until the peer has `taken` it.
struct Send {
  int peer;
  size_t offset, bytes;
  uint64_t seq;
  int taken;
  /// Sends outside groups: the sender's process and buffer, and a checksum
  /// of what the buffer held when it was posted.
  pid_t pid;
  uintptr_t source;
  uint64_t checksum;
};

/// The shared segment: this header, then a slot per member.
struct Header {
  std::atomic<int> ready; // 1 once member 0 has initialized the rest
  int size;
  size_t slotBytes;
  pthread_mutex_t mutex;
  pthread_cond_t arrived;
  int waiting;
  uint64_t generation;
  int numSends[kMaxMembers];
  Send sends[kMaxMembers][kMaxSends];
  /// Each member's sends outside groups not yet reclaimed (taken ones go
  /// when the member posts the next).
  int numPosted[kMaxMembers];
  Send posted[kMaxMembers][kMaxSends];
};

struct Comm {
  Header *header;
  char *slots;
  int rank;
  /// The bytes mapped at `header`.
  size_t mapped;
  /// Messages this member has sent to and received from each member.
  std::vector<uint64_t> sent = std::vector<uint64_t>(kMaxMembers),
                        received = std::vector<uint64_t>(kMaxMembers);
  /// Which kind of messages this member's slot holds: the fake keeps a
  /// communicator's grouped and ungrouped messages apart.
  bool grouped = false, ungrouped = false;
  char *slot(int member) const {
    return slots + size_t(member) * header->slotBytes;
  }
};

[[noreturn]] void fail(const char *message) {
  eplFakeCudaFail("NCCL", message);
}

/// How long members wait for each other (EPL_FAKE_NCCL_TIMEOUT_S).
int timeoutSeconds() {
  const char *text = std::getenv("EPL_FAKE_NCCL_TIMEOUT_S");
  return text && std::atoi(text) > 0 ? std::atoi(text) : 60;
}

/// Waits, with the header locked, until `done`; timeoutSeconds() at most.
template <typename Done>
void waitLocked(Header &h, Done done, const char *what) {
  timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += timeoutSeconds();
  while (!done())
    if (pthread_cond_timedwait(&h.arrived, &h.mutex, &deadline) == ETIMEDOUT)
      fail(what);
}

/// Waits for every member (a barrier across threads and processes); `late`
/// says what a member that does not come means.
void meet(Header &h, const char *late = "a member of the communicator did "
                                        "not arrive in time (mismatched "
                                        "collectives)") {
  pthread_mutex_lock(&h.mutex);
  uint64_t mine = h.generation;
  if (++h.waiting == h.size) {
    h.waiting = 0;
    ++h.generation;
    pthread_cond_broadcast(&h.arrived);
    pthread_mutex_unlock(&h.mutex);
    return;
  }
  timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += timeoutSeconds();
  while (h.generation == mine)
    if (pthread_cond_timedwait(&h.arrived, &h.mutex, &deadline) == ETIMEDOUT)
      fail(late);
  pthread_mutex_unlock(&h.mutex);
}

size_t typeSize(ncclDataType_t type) {
  switch (type) {
  case ncclInt8:
  case ncclUint8:
    return 1;
  case ncclFloat16:
  case ncclBfloat16:
    return 2;
  case ncclInt32:
  case ncclUint32:
  case ncclFloat32:
    return 4;
  case ncclInt64:
  case ncclUint64:
  case ncclFloat64:
    return 8;
  default:
    return 0;
  }
}

template <typename T>
void reduceAs(ncclRedOp_t op, const Comm &c, size_t offset, size_t count,
              void *out) {
  auto *result = static_cast<T *>(out);
  int n = c.header->size;
  for (size_t i = 0; i < count; ++i) {
    T acc = reinterpret_cast<const T *>(c.slot(0))[offset + i];
    for (int r = 1; r < n; ++r) {
      T v = reinterpret_cast<const T *>(c.slot(r))[offset + i];
      if (op == ncclMax)
        acc = v > acc ? v : acc;
      else if (op == ncclMin)
        acc = v < acc ? v : acc;
      else if (op == ncclProd)
        acc = acc * v;
      else
        acc = acc + v;
    }
    if (op == ncclAvg)
      acc = acc / T(n);
    result[i] = acc;
  }
}

/// Elements [offset, offset + count) of the members' posted inputs reduced.
bool reduce(ncclDataType_t type, ncclRedOp_t op, const Comm &c, size_t offset,
            size_t count, void *out) {
  switch (type) {
  case ncclFloat32:
    reduceAs<float>(op, c, offset, count, out);
    return true;
  case ncclFloat64:
    reduceAs<double>(op, c, offset, count, out);
    return true;
  case ncclInt32:
    reduceAs<int32_t>(op, c, offset, count, out);
    return true;
  case ncclInt64:
    reduceAs<int64_t>(op, c, offset, count, out);
    return true;
  case ncclFloat16:
    reduceAs<_Float16>(op, c, offset, count, out);
    return true;
  default:
    return false;
  }
}

Comm *commOf(ncclComm_t comm) { return reinterpret_cast<Comm *>(comm); }

bool deviceBuffer(const void *p, size_t bytes) {
  return !bytes || eplFakeCudaIsDeviceBuffer(p, bytes);
}

/// A collective: every member posts `inBytes` of its input in its slot and
/// meets the others; each computes its output from everyone's into
/// `out`, and they meet again before a slot is reused.
template <typename Compute>
ncclResult_t collective(ncclComm_t comm, cudaStream_t stream, const void *in,
                        size_t inBytes, void *out, size_t outBytes,
                        Compute compute) {
  Comm *c = commOf(comm);
  if (!c || !eplFakeCudaIsCurrentStream(stream) || !deviceBuffer(in, inBytes) ||
      !deviceBuffer(out, outBytes))
    return ncclInvalidArgument;
  if (inBytes > c->header->slotBytes)
    fail("a collective larger than EPL_FAKE_NCCL_SLOT_MB");
  {
    epl::fake::DeviceWork work;
    std::memcpy(c->slot(c->rank), in, inBytes);
  }
  meet(*c->header);
  std::vector<char> scratch(outBytes);
  compute(*c, scratch.data());
  meet(*c->header);
  epl::fake::DeviceWork work;
  std::memcpy(out, scratch.data(), outBytes);
  return ncclSuccess;
}

/// The calling thread's open group (ncclGroupStart) and its operations.
struct Pending {
  bool send;
  const void *sendBuffer;
  void *recvBuffer;
  size_t bytes;
  int peer;
  ncclComm_t comm;
};
thread_local int groupDepth = 0;
thread_local std::vector<Pending> pending;

std::atomic<int> nextId{0};
/// Sends this process made (EPL_FAKE_CUDA_REPORT prints it at exit).
std::atomic<unsigned long> messagesSent{0};
/// This process's communicators made and not destroyed yet.
std::atomic<long> liveComms{0};

uint64_t checksum(const void *data, size_t bytes) {
  uint64_t h = 1469598103934665603ull; // FNV-1a
  for (size_t i = 0; i < bytes; ++i)
    h = (h ^ static_cast<const unsigned char *>(data)[i]) * 1099511628211ull;
  return h;
}

void useSlotFor(Comm &c, bool grouped) {
  (grouped ? c.grouped : c.ungrouped) = true;
  if (c.grouped && c.ungrouped)
    fail("a communicator with messages both in and outside groups (the "
         "runtime keeps them on communicators of their own)");
}

/// A posted send outside a group, until the sender sees it taken.
struct Ticket {
  Comm *comm;
  int peer;
  uint64_t seq;
};

/// Whether the posted send of `ticket` has been taken (or reclaimed).
bool taken(void *arg) {
  auto *t = static_cast<Ticket *>(arg);
  Header &h = *t->comm->header;
  pthread_mutex_lock(&h.mutex);
  bool done = true;
  int me = t->comm->rank;
  for (int k = 0; k < h.numPosted[me]; ++k) {
    const Send &m = h.posted[me][k];
    if (m.peer == t->peer && m.seq == t->seq)
      done = m.taken != 0;
  }
  pthread_mutex_unlock(&h.mutex);
  if (done)
    delete t;
  return done;
}

/// A send outside a group: posted in the member's slot at once, done
/// (for its stream) when the peer's receive takes it.
ncclResult_t post(const Pending &op, cudaStream_t stream) {
  Comm &c = *commOf(op.comm);
  Header &h = *c.header;
  useSlotFor(c, false);
  pthread_mutex_lock(&h.mutex);
  int me = c.rank;
  size_t offset = 0;
  // The taken sends go; the new one takes the first gap that fits (posted
  // sends are few: a pipeline's messages in flight to one peer).
  waitLocked(
      h,
      [&] {
        int n = 0;
        for (int k = 0; k < h.numPosted[me]; ++k)
          if (!h.posted[me][k].taken)
            h.posted[me][n++] = h.posted[me][k];
        h.numPosted[me] = n;
        if (n == kMaxSends)
          return false;
        std::vector<std::pair<size_t, size_t>> used;
        for (int k = 0; k < n; ++k)
          used.push_back({h.posted[me][k].offset,
                          h.posted[me][k].offset + h.posted[me][k].bytes});
        std::sort(used.begin(), used.end());
        offset = 0;
        for (auto [begin, end] : used) {
          if (begin >= offset + op.bytes)
            break;
          offset = std::max(offset, end);
        }
        return offset + op.bytes <= h.slotBytes;
      },
      "sends outside groups fill the fake's slot and none is received "
      "(EPL_FAKE_NCCL_SLOT_MB)");
  uint64_t sum = 0;
  {
    epl::fake::DeviceWork work;
    std::memcpy(c.slot(me) + offset, op.sendBuffer, op.bytes);
    sum = checksum(op.sendBuffer, op.bytes);
  }
  uint64_t seq = c.sent[op.peer]++;
  h.posted[me][h.numPosted[me]++] = {op.peer,
                                     offset,
                                     op.bytes,
                                     seq,
                                     0,
                                     getpid(),
                                     reinterpret_cast<uintptr_t>(op.sendBuffer),
                                     sum};
  pthread_cond_broadcast(&h.arrived);
  pthread_mutex_unlock(&h.mutex);
  ++messagesSent;
  eplFakeCudaAddPendingWork(stream, op.sendBuffer, op.bytes, &taken,
                            new Ticket{&c, op.peer, seq});
  return ncclSuccess;
}

/// A receive outside a group: waits for the next message of its peer to
/// this member and takes it.
ncclResult_t take(const Pending &op) {
  Comm &c = *commOf(op.comm);
  Header &h = *c.header;
  useSlotFor(c, false);
  std::vector<char> data;
  pthread_mutex_lock(&h.mutex);
  uint64_t seq = c.received[op.peer]++;
  Send *message = nullptr;
  waitLocked(
      h,
      [&] {
        for (int k = 0; k < h.numPosted[op.peer] && !message; ++k) {
          Send &m = h.posted[op.peer][k];
          if (m.peer == c.rank && m.seq == seq && !m.taken)
            message = &m;
        }
        return message != nullptr;
      },
      "a receive outside a group whose send never came (mismatched "
      "messages, or devices waiting for each other)");
  if (message->bytes != op.bytes)
    fail("a receive of another size than its send");
  {
    epl::fake::DeviceWork work;
    if (message->pid == getpid() &&
        checksum(reinterpret_cast<const void *>(message->source),
                 message->bytes) != message->checksum)
      fail("the buffer of a send outside a group was written before its "
           "receive took it (on a GPU the send reads it only then)");
  }
  const char *from = c.slot(op.peer) + message->offset;
  data.assign(from, from + message->bytes);
  message->taken = 1;
  pthread_cond_broadcast(&h.arrived);
  pthread_mutex_unlock(&h.mutex);
  epl::fake::DeviceWork work;
  if (!data.empty())
    std::memcpy(op.recvBuffer, data.data(), data.size());
  return ncclSuccess;
}

/// A send or receive, checked: into the open group, else posted or taken
/// at once.
ncclResult_t queue(const Pending &op, cudaStream_t stream) {
  Comm *c = commOf(op.comm);
  if (!c || !eplFakeCudaIsCurrentStream(stream) ||
      !deviceBuffer(op.send ? op.sendBuffer : op.recvBuffer, op.bytes) ||
      op.peer < 0 || op.peer >= c->header->size)
    return ncclInvalidArgument;
  if (!groupDepth)
    return op.send ? post(op, stream) : take(op);
  pending.push_back(op);
  return ncclSuccess;
}
} // namespace

extern "C" {
const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclInvalidArgument:
    return "invalid argument (fake NCCL)";
  case ncclInvalidUsage:
    return "invalid usage (fake NCCL)";
  case ncclSystemError:
    return "unhandled system error (fake NCCL)";
  default:
    return "fake NCCL error";
  }
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  // The time too: a process that died before its members joined (a death
  // test, a run ended mid-way) leaves its segment, which a later process
  // given the same pid would otherwise find and fail to make.
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  std::memset(id->internal, 0, sizeof(id->internal));
  std::snprintf(id->internal, sizeof(id->internal),
                "/epl-fake-nccl-%d-%lld%09ld-%d", int(getpid()),
                static_cast<long long>(now.tv_sec), now.tv_nsec, nextId++);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int size, ncclUniqueId id,
                              int rank) {
  // NCCL allocates device memory for a communicator with cudaMalloc, which
  // synchronizes the GPU.
  if (eplFakeCudaSendInFlight())
    eplFakeCudaFail("NCCL", "ncclCommInitRank while a send of this GPU waits "
                            "for its receive: the cudaMalloc it makes would "
                            "wait for the send, and the peer for this rank, "
                            "for good; make communicators before messages "
                            "are in flight");
  std::string name(id.internal, strnlen(id.internal, sizeof(id.internal)));
  if (name.rfind("/epl-fake-nccl-", 0) != 0 || size < 1 || size > kMaxMembers ||
      rank < 0 || rank >= size)
    return ncclInvalidArgument;
  size_t slotBytes = size_t(std::atoi(std::getenv("EPL_FAKE_NCCL_SLOT_MB")
                                          ? std::getenv("EPL_FAKE_NCCL_SLOT_MB")
                                          : "64"))
                     << 20;
  size_t headerBytes = (sizeof(Header) + 4095) / 4096 * 4096;
  size_t total = headerBytes + slotBytes * size;
  int fd = -1;
  if (rank == 0) {
    fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, off_t(total)) != 0)
      return ncclSystemError;
  } else {
    // Member 0 makes the segment; the others wait for it.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((fd = shm_open(name.c_str(), O_RDWR, 0600)) < 0) {
      if (std::chrono::steady_clock::now() > until)
        fail("member 0 of the communicator did not make it within 60 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  void *p = MAP_FAILED;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  // A member may open the segment before member 0 has sized it.
  while (true) {
    off_t length = lseek(fd, 0, SEEK_END);
    if (length == off_t(total)) {
      p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      break;
    }
    if (std::chrono::steady_clock::now() > until)
      fail("the communicator's shared memory has another size: members "
           "disagree on the group or EPL_FAKE_NCCL_SLOT_MB");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  close(fd);
  if (p == MAP_FAILED)
    return ncclSystemError;
  auto *h = static_cast<Header *>(p);
  if (rank == 0) {
    h->size = size;
    h->slotBytes = slotBytes;
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&h->mutex, &ma);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
    pthread_cond_init(&h->arrived, &ca);
    h->ready.store(1);
  } else {
    while (!h->ready.load()) {
      if (std::chrono::steady_clock::now() > until)
        fail("member 0 of the communicator did not start it within 60 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  if (h->size != size)
    return ncclInvalidArgument;
  static bool reporting = [] {
    if (std::getenv("EPL_FAKE_CUDA_REPORT"))
      std::atexit([] {
        std::fprintf(stderr, "fake NCCL: %lu point-to-point messages sent\n",
                     messagesSent.load());
        if (long live = liveComms.load())
          std::fprintf(stderr,
                       "fake NCCL: %ld communicator(s) never "
                       "destroyed\n",
                       live);
      });
    return true;
  }();
  (void)reporting;
  *comm = reinterpret_cast<ncclComm_t>(
      new Comm{h, static_cast<char *>(p) + headerBytes, rank, total});
  ++liveComms;
  // ncclCommInitRank returns once every member has joined; the segment's
  // name is then no longer needed (the mappings keep it).
  meet(*h);
  if (rank == 0)
    shm_unlink(name.c_str());
  return ncclSuccess;
}

/// NCCL finalizes a communicator it destroys, which synchronizes with the
/// other members: each waits here for the others, so members that destroy
/// their communicators in other orders wait for each other, and the fake
/// says so. A send of the member that its receive has not taken would read
/// freed buffers.
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  Comm *c = commOf(comm);
  if (!c)
    return ncclInvalidArgument;
  Header &h = *c->header;
  pthread_mutex_lock(&h.mutex);
  bool sending = false;
  for (int k = 0; k < h.numPosted[c->rank]; ++k)
    sending |= !h.posted[c->rank][k].taken;
  pthread_mutex_unlock(&h.mutex);
  if (sending)
    fail("ncclCommDestroy while a send of the member waits for its receive");
  meet(h, "a member of the communicator did not destroy it in time: "
          "members destroy their communicators in other orders, or one "
          "never does");
  munmap(c->header, c->mapped);
  delete c;
  --liveComms;
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *in, void *out, size_t count,
                           ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  size_t bytes = count * typeSize(type);
  if (!bytes && count)
    return ncclInvalidArgument;
  bool ok = true;
  ncclResult_t r = collective(comm, stream, in, bytes, out, bytes,
                              [&](const Comm &c, char *scratch) {
                                ok = reduce(type, op, c, 0, count, scratch);
                              });
  return ok ? r : ncclInvalidArgument;
}

ncclResult_t ncclReduceScatter(const void *in, void *out, size_t countPerRank,
                               ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream) {
  size_t bytes = countPerRank * typeSize(type);
  if (!commOf(comm) || (!bytes && countPerRank))
    return ncclInvalidArgument;
  bool ok = true;
  ncclResult_t r = collective(
      comm, stream, in, bytes * commOf(comm)->header->size, out, bytes,
      [&](const Comm &c, char *scratch) {
        ok = reduce(type, op, c, c.rank * countPerRank, countPerRank, scratch);
      });
  return ok ? r : ncclInvalidArgument;
}

ncclResult_t ncclAllGather(const void *in, void *out, size_t countPerRank,
                           ncclDataType_t type, ncclComm_t comm,
                           cudaStream_t stream) {
  size_t bytes = countPerRank * typeSize(type);
  if (!commOf(comm) || (!bytes && countPerRank))
    return ncclInvalidArgument;
  return collective(comm, stream, in, bytes, out,
                    bytes * commOf(comm)->header->size,
                    [&](const Comm &c, char *scratch) {
                      for (int r = 0; r < c.header->size; ++r)
                        std::memcpy(scratch + r * bytes, c.slot(r), bytes);
                    });
}

ncclResult_t ncclBroadcast(const void *in, void *out, size_t count,
                           ncclDataType_t type, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  size_t bytes = count * typeSize(type);
  Comm *c = commOf(comm);
  if (!c || (!bytes && count) || root < 0 || root >= c->header->size)
    return ncclInvalidArgument;
  // Only the root's input is read.
  return collective(comm, stream, c->rank == root ? in : nullptr,
                    c->rank == root ? bytes : 0, out, bytes,
                    [&](const Comm &m, char *scratch) {
                      std::memcpy(scratch, m.slot(root), bytes);
                    });
}

ncclResult_t ncclGroupStart() {
  ++groupDepth;
  return ncclSuccess;
}

ncclResult_t ncclSend(const void *in, size_t count, ncclDataType_t type,
                      int peer, ncclComm_t comm, cudaStream_t stream) {
  return queue({true, in, nullptr, count * typeSize(type), peer, comm}, stream);
}

ncclResult_t ncclRecv(void *out, size_t count, ncclDataType_t type, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return queue({false, nullptr, out, count * typeSize(type), peer, comm},
               stream);
}

/// Runs the group's sends and receives, all on one communicator: posts
/// the sends in the member's slot, takes each receive's message (the next
/// one its peer sent this member) as it comes, and returns once the peers
/// have taken every send.
ncclResult_t ncclGroupEnd() {
  if (groupDepth == 0)
    return ncclInvalidUsage;
  if (--groupDepth > 0 || pending.empty())
    return ncclSuccess;
  std::vector<Pending> ops;
  ops.swap(pending);
  for (const Pending &op : ops)
    if (op.comm != ops.front().comm)
      return ncclInvalidUsage;
  Comm &c = *commOf(ops.front().comm);
  Header &h = *c.header;
  useSlotFor(c, true);
  std::vector<Send> sends;
  size_t offset = 0;
  {
    epl::fake::DeviceWork work;
    for (const Pending &op : ops) {
      if (!op.send)
        continue;
      if (sends.size() == kMaxSends || offset + op.bytes > h.slotBytes)
        fail("a group of sends larger than the fake's slot");
      std::memcpy(c.slot(c.rank) + offset, op.sendBuffer, op.bytes);
      sends.push_back(
          {op.peer, offset, op.bytes, c.sent[op.peer]++, 0, 0, 0, 0});
      ++messagesSent;
      offset += op.bytes;
    }
  }
  const char *stuck = "a send or receive whose peer did not match it in time "
                      "(mismatched messages, or groups of them waiting for "
                      "each other)";
  std::vector<std::pair<void *, std::vector<char>>> received;
  pthread_mutex_lock(&h.mutex);
  // The previous group's sends were all taken before it returned.
  std::copy(sends.begin(), sends.end(), h.sends[c.rank]);
  h.numSends[c.rank] = static_cast<int>(sends.size());
  pthread_cond_broadcast(&h.arrived);
  // The receives, each the next message of its peer to this member, taken
  // in whatever order they come (NCCL progresses a group's messages
  // together).
  struct Receive {
    const Pending *op;
    uint64_t seq;
    bool done;
  };
  std::vector<Receive> receives;
  for (const Pending &op : ops)
    if (!op.send)
      receives.push_back({&op, c.received[op.peer]++, false});
  waitLocked(
      h,
      [&] {
        bool all = true;
        for (Receive &r : receives) {
          for (int k = 0; k < h.numSends[r.op->peer] && !r.done; ++k) {
            Send &m = h.sends[r.op->peer][k];
            if (m.peer != c.rank || m.seq != r.seq)
              continue;
            if (m.bytes != r.op->bytes)
              fail("a receive of another size than its send");
            const char *data = c.slot(r.op->peer) + m.offset;
            received.emplace_back(r.op->recvBuffer,
                                  std::vector<char>(data, data + m.bytes));
            m.taken = 1;
            r.done = true;
            pthread_cond_broadcast(&h.arrived);
          }
          all &= r.done;
        }
        for (int k = 0; k < h.numSends[c.rank]; ++k)
          all &= h.sends[c.rank][k].taken != 0;
        return all;
      },
      stuck);
  h.numSends[c.rank] = 0;
  pthread_mutex_unlock(&h.mutex);
  epl::fake::DeviceWork work;
  for (auto &[buffer, data] : received)
    if (!data.empty())
      std::memcpy(buffer, data.data(), data.size());
  return ncclSuccess;
}
}
