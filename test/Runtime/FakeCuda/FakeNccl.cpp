//===- FakeNccl.cpp - NCCL without GPUs, for tests ------------------------===//
//
// Part of EPL-MLIR.
//
// NCCL's collectives among the threads of one process (epl-exec's threads
// backend over several fake GPUs): the members of a communicator meet, each
// computes its output from everyone's input, and they meet again before
// anyone returns, so a member's output may be another's input. Buffers must
// be device buffers of the member's GPU (the fake driver's). A unique id
// from another process is refused: the fake does not reach across them.
// Members that do not all arrive within a minute end the process with a
// message (a mismatched program), never a hang.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <nccl.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {
/// What the members of one communicator share.
struct Shared {
  explicit Shared(int size) : size(size), in(size), out(size), sends(size) {}
  const int size;
  std::mutex mutex;
  std::condition_variable arrived;
  int waiting = 0;
  uint64_t generation = 0;
  std::vector<const void *> in;
  std::vector<void *> out;
  /// Per sender, its sends of the group being run: (peer, buffer, bytes).
  struct Send {
    int peer;
    const void *buffer;
    size_t bytes;
  };
  std::vector<std::vector<Send>> sends;

  void meet() {
    std::unique_lock<std::mutex> lock(mutex);
    uint64_t mine = generation;
    if (++waiting == size) {
      waiting = 0;
      ++generation;
      arrived.notify_all();
      return;
    }
    if (!arrived.wait_for(lock, std::chrono::seconds(60),
                          [&] { return generation != mine; }))
      eplFakeCudaFail("NCCL", "a member of the communicator did not arrive "
                              "within 60 s (mismatched collectives)");
  }
};

struct Comm {
  std::shared_ptr<Shared> shared;
  int rank;
};

std::mutex registryMutex;
std::map<std::string, std::weak_ptr<Shared>> &registry() {
  static auto *r = new std::map<std::string, std::weak_ptr<Shared>>;
  return *r;
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
void reduceAs(ncclRedOp_t op, const std::vector<const void *> &inputs,
              size_t offset, size_t count, void *out) {
  auto *result = static_cast<T *>(out);
  for (size_t i = 0; i < count; ++i) {
    T acc = static_cast<const T *>(inputs[0])[offset + i];
    for (size_t r = 1; r < inputs.size(); ++r) {
      T v = static_cast<const T *>(inputs[r])[offset + i];
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
      acc = acc / T(inputs.size());
    result[i] = acc;
  }
}

/// Elements [offset, offset + count) of the members' inputs reduced.
bool reduce(ncclDataType_t type, ncclRedOp_t op,
            const std::vector<const void *> &inputs, size_t offset,
            size_t count, void *out) {
  switch (type) {
  case ncclFloat32:
    reduceAs<float>(op, inputs, offset, count, out);
    return true;
  case ncclFloat64:
    reduceAs<double>(op, inputs, offset, count, out);
    return true;
  case ncclInt32:
    reduceAs<int32_t>(op, inputs, offset, count, out);
    return true;
  case ncclInt64:
    reduceAs<int64_t>(op, inputs, offset, count, out);
    return true;
  case ncclFloat16:
    reduceAs<_Float16>(op, inputs, offset, count, out);
    return true;
  default:
    return false;
  }
}

Comm *commOf(ncclComm_t comm) { return reinterpret_cast<Comm *>(comm); }

bool deviceBuffer(const void *p, size_t bytes) {
  return !bytes || eplFakeCudaIsDeviceBuffer(p, bytes);
}

/// A collective: every member posts its buffers and meets the others; then
/// each computes its output into `scratch` from everyone's input, they
/// meet, each writes its output, and they meet once more.
template <typename Compute>
ncclResult_t collective(ncclComm_t comm, cudaStream_t stream, const void *in,
                        size_t inBytes, void *out, size_t outBytes,
                        Compute compute) {
  Comm *c = commOf(comm);
  if (!c)
    return ncclInvalidArgument;
  if (!eplFakeCudaIsCurrentStream(stream) || !deviceBuffer(in, inBytes) ||
      !deviceBuffer(out, outBytes))
    return ncclInvalidArgument;
  Shared &s = *c->shared;
  s.in[c->rank] = in;
  s.out[c->rank] = out;
  s.meet();
  std::vector<char> scratch(outBytes);
  {
    epl::fake::DeviceWork work;
    compute(s, c->rank, scratch.data());
  }
  s.meet();
  {
    epl::fake::DeviceWork work;
    std::memcpy(out, scratch.data(), outBytes);
  }
  s.meet();
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
  static std::atomic<int> next{0};
  std::memset(id->internal, 0, sizeof(id->internal));
  std::snprintf(id->internal, sizeof(id->internal), "fake-nccl:%d:%d",
                int(getpid()), next++);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int size, ncclUniqueId id,
                              int rank) {
  std::string key(id.internal, strnlen(id.internal, sizeof(id.internal)));
  int pid = 0, serial = 0;
  if (std::sscanf(key.c_str(), "fake-nccl:%d:%d", &pid, &serial) != 2)
    return ncclInvalidArgument;
  if (pid != int(getpid())) {
    std::fprintf(stderr, "fake NCCL: a communicator across processes (the "
                         "fake runs within one)\n");
    return ncclSystemError;
  }
  if (size < 1 || rank < 0 || rank >= size)
    return ncclInvalidArgument;
  std::shared_ptr<Shared> shared;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    std::weak_ptr<Shared> &entry = registry()[key];
    shared = entry.lock();
    if (!shared) {
      shared = std::make_shared<Shared>(size);
      entry = shared;
    }
  }
  if (shared->size != size)
    return ncclInvalidArgument;
  *comm = reinterpret_cast<ncclComm_t>(new Comm{shared, rank});
  // ncclCommInitRank returns once every member has joined.
  shared->meet();
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
                              [&](Shared &s, int, char *scratch) {
                                ok = reduce(type, op, s.in, 0, count, scratch);
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
      comm, stream, in, bytes * commOf(comm)->shared->size, out, bytes,
      [&](Shared &s, int rank, char *scratch) {
        ok = reduce(type, op, s.in, rank * countPerRank, countPerRank, scratch);
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
                    bytes * commOf(comm)->shared->size,
                    [&](Shared &s, int, char *scratch) {
                      for (int r = 0; r < s.size; ++r)
                        std::memcpy(scratch + r * bytes, s.in[r], bytes);
                    });
}

ncclResult_t ncclBroadcast(const void *in, void *out, size_t count,
                           ncclDataType_t type, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  size_t bytes = count * typeSize(type);
  Comm *c = commOf(comm);
  if (!c || (!bytes && count) || root < 0 || root >= c->shared->size)
    return ncclInvalidArgument;
  // Only the root's input is read.
  return collective(comm, stream, c->rank == root ? in : nullptr,
                    c->rank == root ? bytes : 0, out, bytes,
                    [&](Shared &s, int, char *scratch) {
                      std::memcpy(scratch, s.in[root], bytes);
                    });
}

ncclResult_t ncclGroupStart() {
  ++groupDepth;
  return ncclSuccess;
}

ncclResult_t ncclSend(const void *in, size_t count, ncclDataType_t type,
                      int peer, ncclComm_t comm, cudaStream_t stream) {
  size_t bytes = count * typeSize(type);
  if (!groupDepth)
    return ncclInvalidUsage; // the fake runs point-to-point in groups only
  if (!commOf(comm) || !eplFakeCudaIsCurrentStream(stream) ||
      !deviceBuffer(in, bytes) || peer < 0 ||
      peer >= commOf(comm)->shared->size)
    return ncclInvalidArgument;
  pending.push_back({true, in, nullptr, bytes, peer, comm});
  return ncclSuccess;
}

ncclResult_t ncclRecv(void *out, size_t count, ncclDataType_t type, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  size_t bytes = count * typeSize(type);
  if (!groupDepth)
    return ncclInvalidUsage;
  if (!commOf(comm) || !eplFakeCudaIsCurrentStream(stream) ||
      !deviceBuffer(out, bytes) || peer < 0 ||
      peer >= commOf(comm)->shared->size)
    return ncclInvalidArgument;
  pending.push_back({false, nullptr, out, bytes, peer, comm});
  return ncclSuccess;
}

/// Runs the group's sends and receives: all on one communicator, whose
/// every member runs a group with it (the runtime's all_to_all).
ncclResult_t ncclGroupEnd() {
  if (groupDepth == 0)
    return ncclInvalidUsage;
  if (--groupDepth > 0 || pending.empty())
    return ncclSuccess;
  std::vector<Pending> ops;
  ops.swap(pending);
  Comm *c = commOf(ops.front().comm);
  for (const Pending &op : ops)
    if (op.comm != ops.front().comm)
      return ncclInvalidUsage;
  Shared &s = *c->shared;
  s.sends[c->rank].clear();
  for (const Pending &op : ops)
    if (op.send)
      s.sends[c->rank].push_back({op.peer, op.sendBuffer, op.bytes});
  s.meet();
  // Each receive takes the next send of its peer to this member.
  std::vector<size_t> taken(s.size, 0);
  std::vector<std::pair<void *, std::vector<char>>> received;
  {
    epl::fake::DeviceWork work;
    for (const Pending &op : ops) {
      if (op.send)
        continue;
      const std::vector<Shared::Send> &from = s.sends[op.peer];
      size_t &k = taken[op.peer];
      while (k < from.size() && from[k].peer != c->rank)
        ++k;
      if (k == from.size() || from[k].bytes != op.bytes)
        eplFakeCudaFail("NCCL", "a receive without a matching send");
      const char *data = static_cast<const char *>(from[k].buffer);
      received.emplace_back(op.recvBuffer,
                            std::vector<char>(data, data + op.bytes));
      ++k;
    }
  }
  s.meet();
  {
    epl::fake::DeviceWork work;
    for (auto &[buffer, data] : received)
      std::memcpy(buffer, data.data(), data.size());
  }
  s.meet();
  return ncclSuccess;
}
}
