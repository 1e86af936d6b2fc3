//===- Launch.cpp - How this process was started --------------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runtime/Backend.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

static std::string &toolNameStorage() {
  static std::string name = "epl-run";
  return name;
}

const std::string &epl::rt::toolName() { return toolNameStorage(); }

void epl::rt::setToolName(std::string name) {
  toolNameStorage() = std::move(name);
}

bool epl::rt::launchedByMPI() {
  // Open MPI, MPICH/Hydra and PMIx-based launchers (srun) set these.
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(var))
      return true;
  return false;
}

int epl::rt::launcherWorldSize() {
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char *value = std::getenv(var))
      return std::atoi(value);
  // Slurm's srun with PMIx need not set PMIX_SIZE; its step's task count
  // (not the allocation's, SLURM_NTASKS, which a lone process shares).
  if (std::getenv("PMIX_RANK"))
    if (const char *value = std::getenv("SLURM_STEP_NUM_TASKS"))
      return std::atoi(value);
  return 1;
}

int epl::rt::launcherRank() {
  for (const char *var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char *value = std::getenv(var))
      return std::atoi(value);
  return 0;
}

namespace {
/// EPL_RT_FAULT=RANK:POINT[@N]:ACTION, read and checked once: a fault test
/// with a typo in it must not pass without its fault.
struct FaultSpec {
  int rank = -1;
  std::string at; // POINT[@N], as given
  std::string point;
  long nth = 1;
  std::string action;
  double sleepSeconds = 0;
};

/// `text` whole as a decimal integer (no sign, no spaces).
bool wholeNumber(const std::string &text, long &out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  errno = 0;
  out = std::strtol(text.c_str(), nullptr, 10);
  return errno == 0 && out <= INT32_MAX;
}

std::optional<FaultSpec> readFaultSpec() {
  const char *value = std::getenv("EPL_RT_FAULT");
  if (!value)
    return std::nullopt;
  std::string s(value);
  auto bad = [&](const std::string &why) -> std::optional<FaultSpec> {
    epl::rt::fatalError(
        "EPL_RT_FAULT=" + s + ": " + why +
        " (RANK:POINT[@N]:ACTION; points start, communicator, nccl, "
        "all_reduce, write; actions stop, kill, sleep=SECONDS)");
  };
  size_t a = s.find(':'), b = a == std::string::npos ? a : s.find(':', a + 1);
  if (b == std::string::npos || s.find(':', b + 1) != std::string::npos)
    return bad("not three fields separated by ':'");
  FaultSpec spec;
  long rank;
  if (!wholeNumber(s.substr(0, a), rank))
    return bad("the rank '" + s.substr(0, a) + "' is not a rank number");
  spec.rank = static_cast<int>(rank);
  spec.at = s.substr(a + 1, b - a - 1);
  size_t count = spec.at.find('@');
  spec.point = spec.at.substr(0, count);
  if (spec.point != "start" && spec.point != "communicator" &&
      spec.point != "nccl" && spec.point != "all_reduce" &&
      spec.point != "write")
    return bad("no fault point '" + spec.point + "'");
  if (count != std::string::npos &&
      (!wholeNumber(spec.at.substr(count + 1), spec.nth) || spec.nth < 1))
    return bad("the count after '@' must be 1 or more");
  spec.action = s.substr(b + 1);
  if (spec.action.rfind("sleep=", 0) == 0) {
    const char *seconds = spec.action.c_str() + 6;
    char *end = nullptr;
    spec.sleepSeconds = std::strtod(seconds, &end);
    if (end == seconds || *end || !(spec.sleepSeconds >= 0) ||
        !(spec.sleepSeconds <= 86400))
      return bad("sleep= takes a number of seconds up to a day");
  } else if (spec.action != "stop" && spec.action != "kill") {
    return bad("no fault action '" + spec.action + "'");
  }
  return spec;
}
} // namespace

void epl::rt::injectFault(const char *point, int rank) {
  // Read once: this is on every all_reduce's path.
  static const std::optional<FaultSpec> spec = readFaultSpec();
  if (!spec || spec->rank != rank || spec->point != point)
    return;
  // The N-th time this rank reaches the point (the first by default),
  // whichever of its threads reaches it (rank 0's writer of files).
  static std::atomic<long> reached{0};
  if (++reached != spec->nth)
    return;
  std::fprintf(stderr, "%s: rank %d: injected fault: %s at %s\n",
               toolName().c_str(), rank, spec->action.c_str(),
               spec->at.c_str());
  std::fflush(stderr);
  if (spec->action == "stop")
    std::raise(SIGSTOP);
  else if (spec->action == "kill")
    std::raise(SIGKILL);
  else
    std::this_thread::sleep_for(
        std::chrono::duration<double>(spec->sleepSeconds));
}
