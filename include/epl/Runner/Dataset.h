//===- Dataset.h - Training and evaluation data from a file -----*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// A dataset is a safetensors file with one tensor per input and label of
// the step, by name, each holding N samples along its leading dimension
// (`[N, ...]` for an argument `[B, ...]`, same element type). Step k of an
// epoch reads the global batch of samples order[k*B .. (k+1)*B), where the
// order is 0..N-1 or, shuffled, a permutation drawn per epoch from the seed
// (shuffledOrder, Initializers.h); the last N mod B samples of an epoch are
// dropped. Each rank copies only its shard of each batch: the samples of
// its block along the batch dimension (EPL's io.slicing), cut further when
// the argument is split along another dimension too. docs/epl-run.md
// describes it for users.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_DATASET_H
#define EPL_RUNNER_DATASET_H

#include "epl/Runner/Program.h"

#include "llvm/Support/LogicalResult.h"

#include <map>

namespace mlir::epl {

struct Dataset {
  std::string path;
  SafetensorsFile file;
  /// Samples in the file, the step's global batch, and full batches per
  /// epoch (N / B, rounded down).
  int64_t numSamples = 0;
  int64_t batchSize = 0;
  int64_t batchesPerEpoch = 0;
  bool shuffle = false;
  uint64_t seed = 0;
  /// The tensor of `file` (index into file.tensors) that feeds each
  /// argument of the program (index into Program::args) it was opened for.
  std::map<size_t, size_t> feeds;

  /// A hash of what the dataset feeds (the names and bytes of its fed
  /// tensors): two datasets of one size differ in it.
  uint64_t fingerprint = 0;

  /// Global batches read before this run: a checkpoint (--params) of a
  /// run on this dataset records where it stopped, and the run goes on
  /// from there (resumeFrom).
  int64_t start = 0;

  /// The order epoch `epoch` (1-based) visits the samples in.
  std::vector<int64_t> order(int epoch) const;

  /// What a checkpoint records of its run on this dataset after `batches`
  /// global batches in all: the count, what makes the dataset's order
  /// (samples, batch, shuffle and seed), and its fingerprint.
  std::map<std::string, std::string> position(int64_t batches) const;

  /// Goes on from a checkpoint's position (its metadata, from position())
  /// when it was taken on a dataset with this order; a checkpoint of
  /// another dataset (a fine-tuning start) leaves `start` at 0. Either way
  /// `note` says which, for the user, unless the checkpoint read no dataset.
  void resumeFrom(const std::map<std::string, std::string> &metadata,
                  std::string &note, bool &mismatch);
};

/// Reads `path` as the data of `program`: every input and label of
/// `program.args` must be a tensor of the file of the same name whose
/// samples have the argument's shape without its leading (batch)
/// dimension and its element type, all with the same number of samples, at
/// least one global batch. Fails with one line naming the file and both
/// shapes.
llvm::FailureOr<Dataset> openDataset(const Program &program,
                                     const std::string &path, bool shuffle,
                                     uint64_t seed, std::string &error);

/// The files dataset `spec` reads: the safetensors file, or the file of each
/// NAME=FILE.npy pair (for the outputs to be checked against them).
std::vector<std::string> datasetFiles(llvm::StringRef spec);

/// Writes into `local`, `rank`'s shard (per `arg.shard` over `mesh`) of
/// argument `arg` (Program::args[`argIndex`]), its part of batch `batch`
/// (0-based within the epoch) of `order`.
void fillBatch(const Dataset &data, size_t argIndex, const EntryArg &arg,
               const std::vector<int64_t> &order, int64_t batch,
               const MeshInfo &mesh, int rank, HostTensor &local);

/// Checks that `evaluation` can run after `trained`: a forward of one
/// device (neither a training step nor pipelined, no collectives) whose
/// parameters the trained step has, with the same global type, and whose
/// other arguments are inputs and labels.
llvm::LogicalResult checkEvaluation(const Program &trained,
                                    const Program &evaluation,
                                    std::string &error);

/// The result of an evaluation entry that holds its scores (logits): the
/// first one besides the loss that is a float matrix with one row per
/// sample of the batch. std::nullopt when it has none (then only the loss
/// is reported).
std::optional<size_t> scoresResult(const EntryPoint &entry, int64_t batchSize);

} // namespace mlir::epl

#endif // EPL_RUNNER_DATASET_H
