//===- NoMPI.cpp - Stand-in when the runtime is built without MPI ---------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runtime/Backend.h"

bool epl::rt::mpiAvailable() { return false; }

void epl::rt::detail::runMPI(const Options &,
                             const std::function<void(int)> &) {
  fatalError("this build of the runtime has no MPI backend; reconfigure with "
             "OpenMPI installed (libopenmpi-dev)");
}
