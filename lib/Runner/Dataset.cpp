//===- Dataset.cpp - Training and evaluation data from a file -------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/Dataset.h"
#include "epl/Runner/Initializers.h"
#include "epl/Runner/Notes.h"
#include "epl/Runner/Shards.h"
#include "epl/Runtime/Backend.h"
#include "epl/Support/Npy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <cstring>

using namespace mlir::epl;

namespace {
/// "[784] F32": a shape and element type.
std::string describe(llvm::ArrayRef<int64_t> shape, DType dtype) {
  HostTensor t;
  t.shape.assign(shape.begin(), shape.end());
  t.dtype = dtype;
  return t.describe();
}

bool isFed(const EntryArg &arg) {
  return arg.kind == ArgKind::Input || arg.kind == ArgKind::Label;
}

/// Whether dataset `path` is NAME=FILE.npy pairs rather than one file: a
/// file that exists is a safetensors file, whatever its name holds.
bool isNpyList(llvm::StringRef path) {
  return path.contains('=') && !llvm::sys::fs::exists(path);
}

/// The tensors of dataset `path`: a safetensors file, or `NAME=FILE.npy`
/// pairs separated by commas (one .npy file per tensor); `files` gets the
/// file each tensor came from.
llvm::Expected<SafetensorsFile>
readDatasetTensors(llvm::StringRef path,
                   std::map<std::string, std::string> &files) {
  if (!isNpyList(path)) {
    // One NumPy array is not a dataset of named tensors: say which form
    // is (its header read as safetensors' was a length past the file).
    if (auto buffer = llvm::MemoryBuffer::getFileSlice(path, 6, 0,
                                                       /*IsVolatile=*/false);
        buffer && (*buffer)->getBuffer() == "\x93NUMPY")
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "dataset '" + path +
              "' is one NumPy array; give each tensor by the name the model "
              "reads as NAME=FILE.npy pairs separated by commas (x=" +
              llvm::sys::path::filename(path) +
              ",y=labels.npy), or a "
              "safetensors file");
    auto file = readSafetensors(path);
    if (file)
      for (const HostTensor &t : file->tensors)
        files[t.name] = path.str();
    return file;
  }
  SafetensorsFile file;
  llvm::SmallVector<llvm::StringRef> entries;
  path.split(entries, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef entry : entries) {
    auto [name, npy] = entry.split('=');
    if (name.empty() || npy.empty() || !npy.ends_with(".npy"))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "dataset '" + path + "': '" + entry +
              "' is not NAME=FILE.npy (a dataset is a safetensors file, or "
              "NAME=FILE.npy pairs separated by commas)");
    if (file.find(name))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "dataset '" + path + "' names '" + name +
                                         "' twice");
    llvm::Expected<HostTensor> t = readNpy(npy, name);
    if (!t)
      return t.takeError();
    files[name.str()] = npy.str();
    file.tensors.push_back(std::move(*t));
  }
  return file;
}
} // namespace

std::vector<std::string> mlir::epl::datasetFiles(llvm::StringRef spec) {
  if (spec.empty())
    return {};
  if (!isNpyList(spec))
    return {spec.str()};
  std::vector<std::string> files;
  llvm::SmallVector<llvm::StringRef> entries;
  spec.split(entries, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef entry : entries)
    if (llvm::StringRef npy = entry.split('=').second; !npy.empty())
      files.push_back(npy.str());
  return files;
}

std::vector<int64_t> Dataset::order(int epoch) const {
  if (shuffle)
    return shuffledOrder(numSamples, seed, epoch);
  std::vector<int64_t> identity(numSamples);
  for (int64_t i = 0; i < numSamples; ++i)
    identity[i] = i;
  return identity;
}

std::map<std::string, std::string> Dataset::position(int64_t batches) const {
  std::map<std::string, std::string> keys = {
      {"dataset.batches", std::to_string(batches)},
      {"dataset.samples", std::to_string(numSamples)},
      {"dataset.batch_size", std::to_string(batchSize)},
      {"dataset.shuffle", shuffle ? "true" : "false"}};
  // The seed makes the order only with --shuffle: an unshuffled run goes on
  // whatever seed either run had.
  if (shuffle)
    keys["dataset.seed"] = std::to_string(seed);
  keys["dataset.fingerprint"] =
      llvm::utohexstr(fingerprint, /*LowerCase=*/true);
  return keys;
}

void Dataset::resumeFrom(const std::map<std::string, std::string> &metadata,
                         std::string &note, bool &mismatch) {
  mismatch = false;
  auto it = metadata.find("dataset.batches");
  int64_t batches = 0;
  if (it == metadata.end() ||
      llvm::StringRef(it->second).getAsInteger(10, batches) || batches < 0)
    return;
  // The order the checkpoint's run read is this one only if everything
  // that makes it agrees.
  std::map<std::string, std::string> mine = position(batches);
  std::vector<std::string> differ;
  for (const auto &[key, value] : mine) {
    auto theirs = metadata.find(key);
    // Beside an unshuffled checkpoint (which records no seed) the shuffle
    // differs already: its seed would only add noise.
    if (key == "dataset.seed" && theirs == metadata.end()) {
      auto shuffled = metadata.find("dataset.shuffle");
      if (shuffled == metadata.end() || shuffled->second != "true")
        continue;
    }
    // (Checkpoints of earlier versions record no fingerprint.)
    if (key == "dataset.fingerprint") {
      if (theirs != metadata.end() && theirs->second != value)
        differ.push_back("its contents differ (fingerprint " + theirs->second +
                         " there, " + value + " here)");
      continue;
    }
    if (theirs == metadata.end() || theirs->second != value)
      differ.push_back(key.substr(strlen("dataset.")) + " " +
                       (theirs == metadata.end() ? "?" : theirs->second) +
                       " there, " + value + " here");
  }
  if (!differ.empty()) {
    mismatch = true;
    note = "the checkpoint was taken on another dataset or order (";
    for (auto [i, d] : llvm::enumerate(differ))
      note += (i ? "; " : "") + d;
    note += "): this one starts at its first batch";
    return;
  }
  start = batches;
  note = "the checkpoint read " + std::to_string(batches) +
         " batches of this dataset: going on at epoch " +
         std::to_string(batches / batchesPerEpoch + 1) + ", batch " +
         std::to_string(batches % batchesPerEpoch + 1);
}

llvm::FailureOr<Dataset> mlir::epl::openDataset(const Program &program,
                                                const std::string &path,
                                                bool shuffle, uint64_t seed,
                                                std::string &error) {
  std::map<std::string, std::string> files;
  auto file = readDatasetTensors(path, files);
  if (!file) {
    error = llvm::toString(file.takeError());
    return llvm::failure();
  }
  Dataset data;
  data.path = path;
  data.file = std::move(*file);
  data.shuffle = shuffle;
  data.seed = seed;
  std::string first; // The argument that set the batch and sample counts.
  for (auto [index, arg] : llvm::enumerate(program.args)) {
    if (!isFed(arg))
      continue;
    const char *kind = arg.kind == ArgKind::Input ? "input" : "label";
    auto it = llvm::find_if(data.file.tensors, [&](const HostTensor &t) {
      return t.name == arg.name;
    });
    if (it == data.file.tensors.end()) {
      std::string names;
      for (const HostTensor &t : data.file.tensors)
        names += (names.empty() ? "" : ", ") + t.name;
      error = "dataset " + path + " has no tensor '" + arg.name + "' for the " +
              kind + " '" + arg.name + "' of @" + program.name +
              " (it holds: " + (names.empty() ? "nothing" : names) + ")";
      return llvm::failure();
    }
    if (arg.shape.empty() || !arg.dtype) {
      error = std::string(kind) + " '" + arg.name + "' of @" + program.name +
              " is " + arg.typeName +
              ": a dataset feeds tensors with a batch dimension";
      return llvm::failure();
    }
    llvm::ArrayRef<int64_t> sample = llvm::ArrayRef(arg.shape).drop_front();
    llvm::ArrayRef<int64_t> found = it->shape;
    if (found.empty() || found.drop_front() != sample ||
        it->dtype != *arg.dtype) {
      error = "tensor '" + arg.name + "' in " + files[arg.name] + " is " +
              it->describe() + ", samples of " +
              (found.empty() ? std::string("nothing (a scalar)")
                             : describe(found.drop_front(), it->dtype)) +
              ", but @" + program.name + " takes samples of " +
              describe(sample, *arg.dtype) + " (" + kind + " " + arg.typeName +
              ")";
      return llvm::failure();
    }
    if (first.empty()) {
      first = arg.name;
      data.numSamples = found.front();
      data.batchSize = arg.shape.front();
    } else if (found.front() != data.numSamples) {
      error = "tensor '" + arg.name + "' in " + files[arg.name] + " has " +
              std::to_string(found.front()) + " samples but '" + first +
              "' in " + files[first] + " has " +
              std::to_string(data.numSamples);
      return llvm::failure();
    } else if (arg.shape.front() != data.batchSize) {
      error = "@" + program.name + " takes batches of " +
              std::to_string(data.batchSize) + " '" + first + "' but of " +
              std::to_string(arg.shape.front()) + " '" + arg.name +
              "': a dataset feeds one batch size";
      return llvm::failure();
    }
    data.feeds[index] = it - data.file.tensors.begin();
  }
  if (first.empty()) {
    error = "@" + program.name + " takes no input or label for dataset " +
            path + " to feed";
    return llvm::failure();
  }
  if (data.numSamples < data.batchSize) {
    error = "dataset " + path + " holds " + std::to_string(data.numSamples) +
            " samples, fewer than one global batch of " +
            std::to_string(data.batchSize) + " (@" + program.name + " takes '" +
            first + "' as " + program.args[data.feeds.begin()->first].typeName +
            ")";
    return llvm::failure();
  }
  // A tensor nothing reads is often a misspelt name: said, as those of
  // --data are.
  std::vector<std::string> unread;
  for (auto [i, t] : llvm::enumerate(data.file.tensors))
    if (llvm::none_of(data.feeds, [&](const auto &f) { return f.second == i; }))
      unread.push_back(t.name);
  if (!unread.empty())
    notes() << ::epl::rt::toolName() << ": warning: @" << program.name
            << " reads nothing of " << path << " named " << someNames(unread)
            << "\n";
  data.batchesPerEpoch = data.numSamples / data.batchSize;
  // What it feeds, in the program's order of arguments: a checkpoint taken
  // on other data of one size goes on at its first batch, not mid-epoch.
  std::string contents;
  for (auto [argIndex, tensorIndex] : data.feeds) {
    const HostTensor &t = data.file.tensors[tensorIndex];
    contents += t.name + '\0';
    contents += llvm::utohexstr(llvm::xxh3_64bits(llvm::ArrayRef(
        reinterpret_cast<const uint8_t *>(t.data.data()), t.data.size())));
  }
  data.fingerprint = llvm::xxh3_64bits(llvm::StringRef(contents));
  return data;
}

void mlir::epl::fillBatch(const Dataset &data, size_t argIndex,
                          const EntryArg &arg,
                          const std::vector<int64_t> &order, int64_t batch,
                          const MeshInfo &mesh, int rank, HostTensor &local) {
  const HostTensor &samples = data.file.tensors[data.feeds.at(argIndex)];
  size_t sampleBytes = dtypeSize(samples.dtype);
  for (size_t d = 1; d < samples.shape.size(); ++d)
    sampleBytes *= samples.shape[d];
  // The rank's rows of the batch: its block along the batch dimension.
  int64_t rows = arg.localShape.front();
  int64_t first = batch * data.batchSize +
                  shardOffset(arg.shard, mesh, arg.localShape, rank, 0);
  bool splitElsewhere =
      llvm::any_of(llvm::drop_begin(arg.shard.dimAxes),
                   [](const auto &axes) { return !axes.empty(); });
  HostTensor rowsOnly;
  char *out = local.data.data();
  if (splitElsewhere) {
    rowsOnly.name = arg.name;
    rowsOnly.dtype = samples.dtype;
    rowsOnly.shape = arg.shape;
    rowsOnly.shape.front() = rows;
    rowsOnly.data.resize(rows * sampleBytes);
    out = rowsOnly.data.data();
  }
  for (int64_t i = 0; i < rows; ++i)
    std::memcpy(out + i * sampleBytes,
                samples.data.data() + order[first + i] * sampleBytes,
                sampleBytes);
  if (!splitElsewhere)
    return;
  Shard rest = arg.shard;
  rest.dimAxes.front().clear();
  HostTensor shard = sliceShard(rowsOnly, rest, mesh, rank);
  std::memcpy(local.data.data(), shard.data.data(), shard.data.size());
}

llvm::LogicalResult mlir::epl::checkEvaluation(const Program &trained,
                                               const Program &evaluation,
                                               std::string &error) {
  std::string what = "the evaluation entry @" + evaluation.name;
  if (evaluation.isPipelined() ||
      evaluation.stages.front().entry.isTrainingStep() ||
      llvm::any_of(evaluation.meshes,
                   [](const MeshInfo &m) { return m.communicates; })) {
    error = what + " must be a forward on one device (an L0 model or a "
                   "function of its inputs, labels and parameters), not a "
                   "training step, a pipeline or a per-device program";
    return llvm::failure();
  }
  for (const EntryArg &arg : evaluation.args) {
    if (isFed(arg))
      continue;
    // Parameters, and model state (batch norm's running statistics, which
    // an inference-mode forward reads), come from the training.
    bool fromTraining =
        arg.kind == ArgKind::Param || arg.kind == ArgKind::State;
    auto it = llvm::find_if(trained.args, [&](const EntryArg &other) {
      return other.name == arg.name && other.kind == arg.kind;
    });
    if (!fromTraining || it == trained.args.end()) {
      error = what + " takes '" + arg.name + "' (" + arg.typeName +
              "), which is neither an input, a label, a parameter nor model "
              "state of @" +
              trained.name;
      return llvm::failure();
    }
    if (it->shape != arg.shape || it->dtype != arg.dtype) {
      error = what + " takes " +
              (arg.kind == ArgKind::State ? "state" : "parameter") + " '" +
              arg.name + "' as " + arg.typeName + " but @" + trained.name +
              " trains it as " + it->typeName;
      return llvm::failure();
    }
  }
  return llvm::success();
}

std::optional<size_t> mlir::epl::scoresResult(const EntryPoint &entry,
                                              int64_t batchSize) {
  std::optional<size_t> loss = entry.lossResult();
  for (auto [i, r] : llvm::enumerate(entry.results))
    if (i != loss && r.kind != ResultKind::State && r.dtype &&
        (*r.dtype == DType::F32 || *r.dtype == DType::F64) &&
        r.shape.size() == 2 && r.shape.front() == batchSize)
      return i;
  return std::nullopt;
}
