//===- Launch.cpp - How this process was started --------------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runtime/Backend.h"

#include <cstdlib>

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
  return 1;
}
