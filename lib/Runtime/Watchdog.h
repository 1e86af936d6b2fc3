//===- Watchdog.h - Deadlines for calls that have none ----------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// Some blocking calls wait on the host for other ranks and have no deadline
// or non-blocking form to poll: MPI_Init, MPI_Comm_create_group and
// MPI_Finalize; NCCL's communicator creation, and the connections NCCL
// makes between two members inside their first collective or group. A rank
// whose peer died, stopped or runs another program would wait in them for
// good. A Deadline bounds such a call: one thread of the process watches
// every armed deadline, and past one prints its message and ends the
// process with exit code 1 (under mpirun, the launcher then ends the other
// ranks; with threads, the process is the run). It calls no function of
// the library the rank waits in, which need not be thread-safe.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_LIB_RUNTIME_WATCHDOG_H
#define EPL_LIB_RUNTIME_WATCHDOG_H

#include <cstdint>
#include <string>

namespace epl::rt {

/// Armed from construction to destruction: past `seconds`, the process
/// prints its message (one line) and exits 1. Cheap enough to wrap every
/// call of a library (a lock and a map insertion; the watcher wakes on its
/// own), most of all with a message formatted only when it fires.
class Deadline {
public:
  /// Formats the message from `context`, on the watcher's thread, while
  /// the armed call has not returned: `context` may be the caller's.
  using Format = std::string (*)(const void *context);
  Deadline(double seconds, Format format, const void *context);
  Deadline(double seconds, std::string message);
  ~Deadline();
  Deadline(const Deadline &) = delete;
  Deadline &operator=(const Deadline &) = delete;

private:
  uint64_t id;
};

/// "epl-run: rank R: WHAT: timed out after T waiting for WHOM; a rank may
/// have failed, stopped or left (see --timeout)".
std::string timeoutMessage(int rank, const std::string &what,
                           const std::string &whom, double seconds);

} // namespace epl::rt

#endif // EPL_LIB_RUNTIME_WATCHDOG_H
