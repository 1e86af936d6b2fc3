//===- MPIBackendMain.cpp - Collectives on the MPI backend ----------------===//
//
// Part of EPL-MLIR.
//
// Run under mpirun with any number of processes:
//   mpirun -np 4 epl-runtime-mpi-test              every collective, checked
//   mpirun -np 4 epl-runtime-mpi-test SCENARIO     a failure scenario
// Prints "N passed, N failed" from rank 0 and exits non-zero on failure.
//
//===----------------------------------------------------------------------===//

#include "CollectiveChecks.h"

#include "epl/Runtime/Backend.h"

#include <cstdio>
#include <string>

using namespace epl::rt;

int main(int argc, char **argv) {
  Options options;
  options.backend = BackendKind::MPI;
  options.timeoutSeconds = argc > 1 ? 2 : 60;
  int exitCode = 0;
  runRanks(options, [&](int rank) {
    int n = worldSize();
    if (argc > 1) {
      test::runFailureScenario(argv[1], rank, n);
      return;
    }
    auto failures = test::runCollectiveChecks(rank, n);
    std::string text;
    for (const std::string &f : failures)
      text += f + "\n";
    auto all = allGatherBytes(std::vector<char>(text.begin(), text.end()));
    int failed = 0;
    for (auto &bytes : all)
      failed += !bytes.empty();
    if (rank == 0) {
      for (auto &bytes : all)
        std::fwrite(bytes.data(), 1, bytes.size(), stdout);
      std::printf("mpi collectives (%d ranks): %d passed, %d failed\n", n,
                  n - failed, failed);
    }
    exitCode = failed ? 1 : 0;
  });
  return exitCode;
}
