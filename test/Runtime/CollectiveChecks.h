//===- CollectiveChecks.h - Checks of every collective, per rank -*- C++
//-*-===//
//
// Part of EPL-MLIR.
//
// The same checks run on the threads backend (under GoogleTest) and on the
// MPI backend (under mpirun): each rank calls the C ABI exactly as lowered
// code does and compares with values computed here independently.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_TEST_RUNTIME_COLLECTIVECHECKS_H
#define EPL_TEST_RUNTIME_COLLECTIVECHECKS_H

#include <string>
#include <vector>

namespace epl::rt::test {

/// Runs every check on the calling rank of a world of `worldSize` ranks and
/// returns a description of each failure (empty: all passed).
std::vector<std::string> runCollectiveChecks(int rank, int worldSize);

/// Failure scenarios: the rank-specific misbehaviour of each, run on every
/// rank; the run must end with exit code 1 and a message naming the rank
/// and the operation.
///  - "mismatch": rank 1 all-reduces 8 elements, the others 4;
///  - "early-exit": the last rank returns without joining an all_reduce;
///  - "timeout": rank 0 never sends what rank 1 waits for.
void runFailureScenario(const std::string &name, int rank, int worldSize);

} // namespace epl::rt::test

#endif // EPL_TEST_RUNTIME_COLLECTIVECHECKS_H
