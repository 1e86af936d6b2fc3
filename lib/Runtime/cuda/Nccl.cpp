//===- Nccl.cpp - Collectives with NCCL on the ranks' GPUs ----------------===//
//
// Part of EPL-MLIR.
//
// A group's communicator is created the first time the group communicates:
// member 0 makes NCCL's unique id, the host backend (threads or MPI)
// broadcasts it, and every member joins with its GPU. Collectives then run
// on the device buffers in the rank's stream, in program order with its
// kernels. Sends and receives of a message group (a pipeline's `grouped`
// messages, which the compiler checked arrive between each pair of ranks
// in the order they are sent, and finish when each group waits for all its
// messages) go from device to device as one NCCL group. Direct messages
// (sendDirect, recvDirect: a pipeline's `direct` messages, which the
// compiler checked arrive, per direction, in the order they are sent) go
// from device to device over the peer's channel, which the program opened
// first (epl_rt_open_channel): a
// communicator of the two members per direction, so that a send waiting
// for its receive holds up neither the other direction nor the group's
// collectives, with the sends on a side stream of their own, so that it
// holds up no computation either. NCCL has no tags, so the other messages
// go through the host, matched by tag.
//
// NCCL connects members inside its calls (creating a communicator; the
// first collective or message between two members), waiting on the host
// for the others with no deadline of its own: every call has the run's
// (Watchdog.h), so a member that died or runs another program ends the run
// with a message instead of a rank blocked for good.
//
//===----------------------------------------------------------------------===//

#include "../Watchdog.h"
#include "Cuda.h"
#include "Library.h"

#include <nccl.h>

#include <cstdlib>
#include <map>

using namespace epl::rt;

namespace {
struct Nccl {
#define EPL_NCCL_FUNCTIONS(X)                                                  \
  X(ncclGetUniqueId)                                                           \
  X(ncclCommInitRank)                                                          \
  X(ncclCommDestroy)                                                           \
  X(ncclGetErrorString)                                                        \
  X(ncclAllReduce)                                                             \
  X(ncclAllGather)                                                             \
  X(ncclReduceScatter)                                                         \
  X(ncclBroadcast)                                                             \
  X(ncclSend)                                                                  \
  X(ncclRecv)                                                                  \
  X(ncclGroupStart)                                                            \
  X(ncclGroupEnd)
  EPL_NCCL_FUNCTIONS(EPL_DECLARE_FUNCTION)
  std::string error;

  Nccl() {
    // Several GPUs of one process (the threads backend) must not read each
    // other's buffers directly: they come from each GPU's memory pool,
    // which gives no other GPU access (NCCL's NCCL_P2P_DIRECT_DISABLE).
    // NCCL reads it when a communicator is made; a user's value stands.
    // (Loaded by the main thread, before the ranks run: loadNccl.)
    setenv("NCCL_P2P_DIRECT_DISABLE", "1", /*overwrite=*/0);
    void *library = cuda::openLibrary({"libnccl.so.2"}, "NCCL", error);
    const char *name = "NCCL";
    if (library) {
      EPL_NCCL_FUNCTIONS(EPL_LOOKUP_FUNCTION)
    }
  }
};

Nccl &nccl() {
  static Nccl n;
  return n;
}

void check(ncclResult_t r, const char *what) {
  if (r != ncclSuccess)
    fatalError(std::string("NCCL: ") + what +
               " failed: " + nccl().ncclGetErrorString(r));
}

/// No "where" for a call (never destroyed: a deadline may fire while the
/// process exits).
const std::string &kNowhere = *new std::string;

/// An NCCL call under way, as its timeout names it: "NCCL: OP WHERE".
struct Waiting {
  int rank;
  const char *op;
  const std::string &where, &whom;
  double seconds;
};

std::string describe(const void *context) {
  const auto &w = *static_cast<const Waiting *>(context);
  return timeoutMessage(w.rank, "NCCL: " + (w.op + w.where), w.whom, w.seconds);
}

/// Calls NCCL (`run` returns its result) under the run's deadline, and
/// checks the result. The message is formatted only if the deadline
/// passes: a collective's host overhead is a microsecond or two.
template <typename Run>
void call(const char *op, const std::string &where, const std::string &whom,
          Run &&run) {
  injectFault("nccl", currentRank());
  Waiting waiting{currentRank(), op, where, whom, cuda::timeout()};
  Deadline deadline(waiting.seconds, &describe, &waiting);
  if (ncclResult_t r = run(); r != ncclSuccess)
    check(r, (op + where).c_str());
}

ncclDataType_t ncclType(EplDType dtype) {
  switch (dtype) {
  case EPL_RT_F32:
    return ncclFloat32;
  case EPL_RT_F64:
    return ncclFloat64;
  case EPL_RT_I32:
    return ncclInt32;
  case EPL_RT_I64:
    return ncclInt64;
  case EPL_RT_F16:
    return ncclFloat16;
  }
  fatalError("NCCL: an element type it does not move");
}

ncclRedOp_t ncclOp(EplReduction kind) {
  switch (kind) {
  case EPL_RT_SUM:
    return ncclSum;
  case EPL_RT_MAX:
    return ncclMax;
  case EPL_RT_MIN:
    return ncclMin;
  case EPL_RT_MEAN:
    return ncclAvg;
  }
  fatalError("NCCL: a reduction it does not compute");
}

class NcclCommunicator final : public Communicator {
public:
  NcclCommunicator(Communicator &host, const Group &group)
      : host(host), size(group.size()), index(group.index),
        members(group.members) {
    int listed = 0;
    for (int m : members)
      if (m != members[index])
        others += (listed++ ? ", " : "") + std::to_string(m);
    others = "the rest of the group (rank" +
             std::string(listed > 1 ? "s " : " ") + others + ")";
    over = " over " + group.describe();
    overGroupEnd = over + " (ncclGroupEnd)";
    ofInit = " of " + group.describe() + " (ncclCommInitRank)";
  }
  ~NcclCommunicator() override {
    // The rank has run its program, its GPU's work done (finishProgram):
    // NCCL's buffers go back. Destroying a communicator may wait for its
    // other members to destroy it too, so every member destroys them in one
    // order: the runtime takes a rank's groups in an order of their own
    // (destroyDeviceCommunicators), and here the group's communicator goes
    // first, then the channels by peer, each pair's from the lower member
    // first, which orders every pair of members alike.
    for (auto &[peer, c] : channels)
      if (c.sideStream)
        cuda::deleteSideStream(c.sideStream);
    if (comm)
      call("destroying the communicator (ncclCommDestroy)", over, others,
           [&] { return nccl().ncclCommDestroy(comm); });
    for (auto &[peer, c] : channels) {
      bool low = index < peer;
      for (ncclComm_t made :
           {low ? c.sends : c.receives, low ? c.receives : c.sends})
        if (made)
          call("destroying a channel (ncclCommDestroy)", kNowhere, c.peer,
               [&] { return nccl().ncclCommDestroy(made); });
    }
  }

  void allReduce(const void *in, void *out, size_t count, EplDType dtype,
                 EplReduction kind) override {
    ncclComm_t comm = communicator();
    call("all_reduce", over, others, [&] {
      return nccl().ncclAllReduce(in, out, count, ncclType(dtype), ncclOp(kind),
                                  comm, stream());
    });
  }
  void allGather(const void *in, void *out, size_t countPerRank,
                 EplDType dtype) override {
    ncclComm_t comm = communicator();
    call("all_gather", over, others, [&] {
      return nccl().ncclAllGather(in, out, countPerRank, ncclType(dtype), comm,
                                  stream());
    });
  }
  void reduceScatter(const void *in, void *out, size_t countPerRank,
                     EplDType dtype, EplReduction kind) override {
    ncclComm_t comm = communicator();
    call("reduce_scatter", over, others, [&] {
      return nccl().ncclReduceScatter(in, out, countPerRank, ncclType(dtype),
                                      ncclOp(kind), comm, stream());
    });
  }
  void allToAll(const void *in, void *out, size_t countPerRank,
                EplDType dtype) override {
    // Block i of the input to member i, member i's block to block i.
    size_t bytes = countPerRank * dtypeSize(dtype);
    ncclComm_t comm = communicator();
    check(nccl().ncclGroupStart(), "all_to_all");
    for (int peer = 0; peer < size; ++peer) {
      check(nccl().ncclSend(static_cast<const char *>(in) + peer * bytes,
                            countPerRank, ncclType(dtype), peer, comm,
                            stream()),
            "all_to_all");
      check(nccl().ncclRecv(static_cast<char *>(out) + peer * bytes,
                            countPerRank, ncclType(dtype), peer, comm,
                            stream()),
            "all_to_all");
    }
    call("all_to_all", over, others, [] { return nccl().ncclGroupEnd(); });
  }
  void broadcast(const void *in, void *out, size_t count, EplDType dtype,
                 int root) override {
    ncclComm_t comm = communicator();
    call("broadcast", over, others, [&] {
      return nccl().ncclBroadcast(in, out, count, ncclType(dtype), root, comm,
                                  stream());
    });
  }
  void beginMessages() override {
    communicator();
    grouping = true;
  }
  void prepare() override {
    ncclComm_t comm = communicator();
    if (connected)
      return;
    // NCCL connects a communicator's ranks (and allocates the buffers for
    // it) at its first collective: here, not at a later one.
    connected = true;
    void *probe = cuda::allocate(sizeof(float));
    call("preparing the group (its first collective)", over, others, [&] {
      return nccl().ncclAllReduce(probe, probe, 1, ncclFloat32, ncclSum, comm,
                                  stream());
    });
    cuda::synchronize();
    cuda::release(probe, sizeof(float));
  }

  void openChannel(int peer) override {
    Channel &c = channels[peer];
    if (c.sends)
      return;
    // Without pools, buffers are allocated and freed with cuMemAlloc and
    // cuMemFree in the middle of a step, which synchronize the GPU: with a
    // channel's send waiting for its receive, for good.
    if (!cuda::hasMemoryPools())
      fatalError("opening a channel to rank " + std::to_string(members[peer]) +
                 ": this GPU has no stream-ordered memory pools (some "
                 "virtualized ones), which a pipeline's direct messages "
                 "need over NCCL (its allocations and frees would wait for "
                 "a send in flight, for good); run with --gpu-collectives "
                 "host, or on a GPU with pools");
    // The lower member makes the ids of both directions' communicators and
    // hands them to the other through the host (whose sends do not wait);
    // both join them in the same order.
    bool low = index < peer;
    ncclUniqueId ids[2];
    static_assert(sizeof(ids) % sizeof(int64_t) == 0);
    constexpr size_t words = sizeof(ids) / (sizeof(int64_t));
    // Program tags are the partition's (2 per stage) and no message of the
    // pair is in flight when its channel opens, first thing in a program.
    constexpr int64_t kChannelTag = 4095;
    if (low) {
      check(nccl().ncclGetUniqueId(&ids[0]), "ncclGetUniqueId");
      check(nccl().ncclGetUniqueId(&ids[1]), "ncclGetUniqueId");
      host.send(ids, words, EPL_RT_I64, peer, kChannelTag);
    } else {
      host.recv(ids, words, EPL_RT_I64, peer, kChannelTag);
    }
    // ids[0]: low to high, ids[1]: high to low; the sender is member 0.
    cuda::returnCachedMemory();
    ncclComm_t lowToHigh, highToLow;
    std::string end =
        "rank " + std::to_string(members[peer]) + ", the channel's other end";
    call("opening a channel (ncclCommInitRank)", kNowhere, end, [&] {
      return nccl().ncclCommInitRank(&lowToHigh, 2, ids[0], low ? 0 : 1);
    });
    call("opening a channel (ncclCommInitRank)", kNowhere, end, [&] {
      return nccl().ncclCommInitRank(&highToLow, 2, ids[1], low ? 1 : 0);
    });
    c.peer = "rank " + std::to_string(members[peer]);
    c.sends = low ? lowToHigh : highToLow;
    c.receives = low ? highToLow : lowToHigh;
    c.sideStream = cuda::newSideStream();
    // NCCL connects two ranks at their first message, a rendezvous: here,
    // in the opening's order, not at a program's first send, which must
    // not wait. One element each way, low to high first.
    void *probe = cuda::allocate(sizeof(float));
    for (ncclComm_t comm : {lowToHigh, highToLow})
      call("opening a channel (its first message)", kNowhere, end, [&] {
        return comm == c.sends
                   ? nccl().ncclSend(probe, 1, ncclFloat32, 1, comm, stream())
                   : nccl().ncclRecv(probe, 1, ncclFloat32, 0, comm, stream());
      });
    cuda::synchronize();
    cuda::release(probe, sizeof(float));
  }
  void send(const void *in, size_t count, EplDType dtype, int peer,
            int64_t tag) override {
    if (!grouping)
      return staged().send(in, count, dtype, peer, tag);
    // NCCL reads `in` when the group goes, at its end: the runtime holds
    // back the program's frees until then, and between a group's messages
    // the program writes nothing (the lowering checks).
    messages.push_back({true, const_cast<void *>(in), count, dtype, peer});
  }
  void recv(void *out, size_t count, EplDType dtype, int peer,
            int64_t tag) override {
    if (!grouping)
      return staged().recv(out, count, dtype, peer, tag);
    messages.push_back({false, out, count, dtype, peer});
  }
  void sendDirect(const void *in, size_t count, EplDType dtype, int peer,
                  int64_t tag) override {
    // After the kernels that wrote `in`, on the side stream; `in` is freed
    // only once the receive has taken it (cuda::release).
    Channel &c = channel(peer, "send");
    auto *side = static_cast<CUstream_st *>(c.sideStream);
    cuda::sideStreamFollowsRank(side);
    call("send", kNowhere, c.peer, [&] {
      return nccl().ncclSend(in, count, ncclType(dtype), /*peer=*/1, c.sends,
                             side);
    });
    cuda::readBySideStream(in, count * dtypeSize(dtype), side);
  }
  void recvDirect(void *out, size_t count, EplDType dtype, int peer,
                  int64_t tag) override {
    // In the rank's stream: what reads `out` comes after it.
    Channel &c = channel(peer, "recv");
    call("recv", kNowhere, c.peer, [&] {
      return nccl().ncclRecv(out, count, ncclType(dtype), /*peer=*/0,
                             c.receives, stream());
    });
  }
  void endMessages() override {
    grouping = false;
    if (messages.empty())
      return;
    ncclComm_t comm = communicator();
    check(nccl().ncclGroupStart(), "a group of messages (ncclGroupStart)");
    for (const Message &m : messages)
      check(m.send ? nccl().ncclSend(m.buffer, m.count, ncclType(m.dtype),
                                     m.peer, comm, stream())
                   : nccl().ncclRecv(m.buffer, m.count, ncclType(m.dtype),
                                     m.peer, comm, stream()),
            m.send ? "send" : "recv");
    call("a group of messages", overGroupEnd, others,
         [] { return nccl().ncclGroupEnd(); });
    messages.clear();
  }
  void barrier() override {
    cuda::synchronize();
    host.barrier();
  }

private:
  /// Per peer with an open channel: the communicators (of two members,
  /// the sender member 0) of the messages to it and from it, and the side
  /// stream the sends go on.
  struct Channel {
    ncclComm_t sends = nullptr, receives = nullptr;
    void *sideStream = nullptr;
    /// "rank R": whom a message on it waits for.
    std::string peer;
  };
  std::map<int, Channel> channels;
  /// The open channel to `peer`, which a direct message needs.
  Channel &channel(int peer, const char *op) {
    auto open = channels.find(peer);
    if (open == channels.end() || !open->second.sends)
      fatalError(std::string(op) + ": a direct message to or from device " +
                 std::to_string(peer) +
                 " of the group before its channel opened "
                 "(epl_rt_open_channel)");
    return open->second;
  }
  /// The group's NCCL communicator, made when the group first needs it (a
  /// collective or a message group), which every member then does: ranks
  /// that only message through the host, or not at all (a pipeline stage
  /// with nothing on it), never wait for each other to make it.
  ncclComm_t communicator() {
    if (comm)
      return comm;
    // Member 0 makes the id; the host backend hands it to the others.
    ncclUniqueId id;
    if (index == 0)
      check(nccl().ncclGetUniqueId(&id), "ncclGetUniqueId");
    static_assert(sizeof(id) % sizeof(int64_t) == 0);
    ncclUniqueId shared;
    host.broadcast(&id, &shared, sizeof(id) / sizeof(int64_t), EPL_RT_I64, 0);
    // NCCL allocates its buffers outside the rank's pool.
    cuda::returnCachedMemory();
    call("joining the communicator", ofInit, others,
         [&] { return nccl().ncclCommInitRank(&comm, size, shared, index); });
    return comm;
  }
  static CUstream_st *stream() {
    return static_cast<CUstream_st *>(cuda::stream());
  }
  Communicator &staged() {
    if (!hostStaged)
      hostStaged = cuda::stageThroughHost(host, size);
    return *hostStaged;
  }
  Communicator &host;
  int size, index;
  /// The members' ranks, and how a timeout names the calls and whom they
  /// wait for.
  std::vector<int> members;
  std::string others, over, overGroupEnd, ofInit;
  ncclComm_t comm = nullptr;
  /// Whether prepare() has run a collective, which connects the members.
  bool connected = false;
  std::unique_ptr<Communicator> hostStaged;
  /// The open message group's sends and receives, in program order.
  struct Message {
    bool send;
    void *buffer;
    size_t count;
    EplDType dtype;
    int peer;
  };
  bool grouping = false;
  std::vector<Message> messages;
};
} // namespace

void cuda::loadNccl() { nccl(); }

std::unique_ptr<Communicator>
cuda::ncclFor(Communicator &host, const Group &group, std::string &why) {
  if (!nccl().error.empty()) {
    why = nccl().error;
    return nullptr;
  }
  return std::make_unique<NcclCommunicator>(host, group);
}
