//===- Arguments.h - The values a run starts from ---------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// Every argument of the entry as a global host tensor: parameters and
// optimizer state from a parameters file (a checkpoint written by --save
// holds both), inputs and labels from a data file, anything not given
// generated from the seed (Initializers.h). Files are checked against the
// entry before anything runs.
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

/// The global value of every argument of `entry`, in order. Fails with one
/// line naming the file and the tensor at fault: a file that cannot be
/// read, a missing tensor, a wrong shape or element type, or an argument
/// of a type runners do not pass.
llvm::FailureOr<std::vector<HostTensor>>
prepareArguments(const EntryPoint &entry, const ArgumentSources &sources,
                 std::string &error);

} // namespace mlir::epl

#endif // EPL_RUNNER_ARGUMENTS_H
