//===- Arguments.h - The values a run starts from ---------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// Every argument of the step as a global host tensor: parameters and
// optimizer state from a parameters file (a checkpoint written by --save
// holds both), inputs and labels from a data file, anything not given
// generated from the seed (Initializers.h). Arguments go by name, so that a
// pipelined step, whose stages each take some of them, starts from the same
// values as the step on one device. Files are checked against the step
// before anything runs.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_ARGUMENTS_H
#define EPL_RUNNER_ARGUMENTS_H

#include "epl/Runner/Program.h"

#include "llvm/Support/LogicalResult.h"

namespace mlir::epl {

struct ArgumentSources {
  /// Parameters and optimizer state by name (safetensors); empty: seeded.
  std::string paramsFile;
  /// Inputs, labels and untagged arguments by name; empty: seeded.
  std::string dataFile;
  /// Seed of whatever the files do not hold.
  uint64_t seed = 0;
};

/// Sets `program.args` to the union by name of its stages' arguments (in
/// order of first use, stage 0 first) and each stage's `argIndices`. Fails
/// when two stages take one name with different global types or kinds,
/// naming both.
llvm::LogicalResult collectArguments(Program &program, std::string &error);

/// The global value of every argument of `program` (`program.args`), in
/// order. Fails with one line naming the file and the tensor at fault: a
/// file that cannot be read, a missing tensor, a wrong shape or element
/// type, or an argument of a type runners do not pass.
llvm::FailureOr<std::vector<HostTensor>>
prepareArguments(const Program &program, const ArgumentSources &sources,
                 std::string &error);

} // namespace mlir::epl

#endif // EPL_RUNNER_ARGUMENTS_H
