//===- Launch.cpp - How this process was started --------------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runtime/Backend.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

void epl::rt::injectFault(const char *point, int rank) {
  // Read once: this is on every all_reduce's path.
  static const char *spec = std::getenv("EPL_RT_FAULT");
  if (!spec)
    return;
  std::string s(spec);
  size_t a = s.find(':'), b = s.find(':', a == std::string::npos ? a : a + 1);
  if (a == std::string::npos || b == std::string::npos ||
      std::atoi(s.substr(0, a).c_str()) != rank)
    return;
  // POINT[@N]: the N-th time this rank reaches the point (the first by
  // default), counted by the thread that reaches it (a rank of the threads
  // backend; an MPI rank's main thread).
  std::string where = s.substr(a + 1, b - a - 1);
  int nth = 1;
  if (size_t at = where.find('@'); at != std::string::npos) {
    nth = std::atoi(where.c_str() + at + 1);
    if (nth < 1)
      fatalError("EPL_RT_FAULT=" + s +
                 ": the count after '@' must be 1 or "
                 "more");
    where.resize(at);
  }
  if (where != point)
    return;
  static thread_local int reached = 0;
  if (++reached != nth)
    return;
  std::string action = s.substr(b + 1);
  std::fprintf(stderr, "%s: rank %d: injected fault: %s at %s\n",
               toolName().c_str(), rank, action.c_str(),
               s.substr(a + 1, b - a - 1).c_str());
  std::fflush(stderr);
  if (action == "stop")
    std::raise(SIGSTOP);
  else if (action == "kill")
    std::raise(SIGKILL);
  else if (action.rfind("sleep=", 0) == 0)
    std::this_thread::sleep_for(
        std::chrono::duration<double>(std::atof(action.c_str() + 6)));
}
