//===- Arguments.cpp - The values a run starts from -----------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/Arguments.h"
#include "epl/Runner/Initializers.h"
#include "epl/Runner/Notes.h"
#include "epl/Runtime/Backend.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <unistd.h>

using namespace mlir::epl;

namespace {
/// `path` read, or std::nullopt when it is empty.
llvm::FailureOr<std::optional<SafetensorsFile>>
loadOptional(const std::string &path, std::string &error) {
  if (path.empty())
    return std::optional<SafetensorsFile>();
  auto file = readSafetensors(path);
  if (!file) {
    error = llvm::toString(file.takeError());
    return llvm::failure();
  }
  return std::optional<SafetensorsFile>(std::move(*file));
}

/// "it holds: w1, b1".
std::string contents(const SafetensorsFile &file) {
  std::string names;
  for (const HostTensor &t : file.tensors)
    names += (names.empty() ? "" : ", ") + t.name;
  return names.empty() ? "nothing" : names;
}

/// The value of `arg` from `file` (at `path`), else generated.
llvm::FailureOr<HostTensor>
argumentValue(const Program &program, const EntryArg &arg,
              const std::optional<SafetensorsFile> &file,
              const std::string &path, uint64_t seed, std::string &error) {
  if (!file)
    return initializeTensor(arg, seed);
  bool isState = arg.kind == ArgKind::OptState || arg.kind == ArgKind::State;
  bool isParam = arg.kind == ArgKind::Param || isState;
  const HostTensor *found = file->find(arg.name);
  // A file of parameters alone starts the optimizer (and model state, such
  // as running statistics) afresh.
  if (!found && isState)
    return initializeTensor(arg, seed);
  if (!found) {
    error = std::string(isParam ? "parameter" : "argument") + " '" + arg.name +
            "' is not in " + path + " (it holds: " + contents(*file) + ")";
    return llvm::failure();
  }
  if (found->dtype != *arg.dtype || found->shape != arg.shape) {
    HostTensor expected;
    expected.dtype = *arg.dtype;
    expected.shape = arg.shape;
    error = "tensor '" + arg.name + "' in " + path + " is " +
            found->describe() + " but @" + program.name + " takes " +
            expected.describe() + " (" + arg.typeName + ")";
    return llvm::failure();
  }
  // The optimizer's step count is a schedule's position and Adam's bias
  // correction's exponent: a negative one trains on a made-up schedule.
  if (arg.kind == ArgKind::OptState && arg.name == "optimizer.step" &&
      found->dtype == DType::I64 && found->data.size() == sizeof(int64_t)) {
    int64_t step;
    std::memcpy(&step, found->data.data(), sizeof(step));
    if (step < 0) {
      error = "tensor 'optimizer.step' in " + path + " is " +
              std::to_string(step) + "; a step count is not negative";
      return llvm::failure();
    }
  }
  return *found;
}
/// Whether `arg` is read from the parameters file (else from the data
/// file): parameters, model state and optimizer state.
bool isFromParamsFile(const EntryArg &arg) {
  return arg.kind == ArgKind::Param || arg.kind == ArgKind::OptState ||
         arg.kind == ArgKind::State;
}

/// Resuming is lenient (a file of parameters alone fine-tunes with a fresh
/// optimizer), but never silent where a checkpoint is incomplete: says
/// which optimizer state starts afresh and which tensors of the file
/// nothing reads (another optimizer's state, a misspelled name). Fresh
/// state beside resumed state trains as PyTorch would (a momentum buffer
/// afresh, a schedule restarted), except Adam's: its moments are
/// bias-corrected by the step count, one for all parameters here
/// (`optimizer.step`) where PyTorch keeps one per parameter, so moments and
/// count are resumed together or not at all.
llvm::LogicalResult checkCheckpoint(const Program &program,
                                    const std::optional<SafetensorsFile> &file,
                                    const std::string &path,
                                    std::string &error) {
  if (!file)
    return llvm::success();
  std::vector<std::string> fresh, freshModel, unused;
  size_t optState = 0;
  // Adam's moments (Optimizer::stateSuffixes) and the step count, which
  // other optimizers keep for a schedule alone.
  std::vector<std::string> correctedFound, correctedFresh;
  for (const EntryArg &arg : program.args) {
    optState += arg.kind == ArgKind::OptState;
    llvm::StringRef name = arg.name;
    bool found = file->find(arg.name);
    if (arg.kind == ArgKind::OptState &&
        (name == "optimizer.step" || name.ends_with(".exp_avg") ||
         name.ends_with(".exp_avg_sq")))
      (found ? correctedFound : correctedFresh).push_back(arg.name);
    if (found)
      continue;
    if (arg.kind == ArgKind::OptState)
      fresh.push_back(arg.name);
    else if (arg.kind == ArgKind::State)
      freshModel.push_back(arg.name);
  }
  // Inputs and labels come from the data file: one here is not read.
  for (const HostTensor &t : file->tensors)
    if (llvm::none_of(program.args, [&](const EntryArg &arg) {
          return arg.name == t.name && isFromParamsFile(arg);
        }))
      unused.push_back(t.name);
  if (!correctedFound.empty() && !correctedFresh.empty()) {
    error = path + " holds Adam's moments and step count in part, not " +
            someNames(correctedFresh) +
            ": resumed beside fresh ones, their bias correction would not be "
            "PyTorch's; give all of them (a checkpoint of this optimizer) or "
            "none (the parameters alone)";
    return llvm::failure();
  }
  std::string warning = ::epl::rt::toolName() + ": warning: ";
  // A file of parameters alone (pretrained weights, a frontend's initial
  // values) starts a fresh optimizer as PyTorch's load_state_dict does:
  // nothing to say; beside another optimizer's state, a line.
  if (!fresh.empty() && fresh.size() == optState && !unused.empty())
    notes() << warning << path
            << " holds none of the optimizer state the step reads (" << optState
            << (optState == 1 ? " tensor: " : " tensors: ")
            << someNames(fresh, 3) << "); it starts afresh\n";
  else if (!fresh.empty() && fresh.size() < optState)
    notes() << warning << path
            << " lacks part of the optimizer state the step reads, "
            << someNames(fresh) << "; that part starts afresh\n";
  if (!freshModel.empty())
    notes() << warning << path << " has no model state "
            << someNames(freshModel) << "; it starts from its initial value\n";
  if (!unused.empty())
    notes() << warning << "@" << program.name << " reads nothing of " << path
            << " named " << someNames(unused) << "\n";
  return llvm::success();
}
} // namespace

static const char *kindName(ArgKind kind) {
  switch (kind) {
  case ArgKind::Param:
    return "param";
  case ArgKind::Input:
    return "input";
  case ArgKind::Label:
    return "label";
  case ArgKind::OptState:
    return "opt_state";
  case ArgKind::State:
    return "state";
  case ArgKind::Other:
    break;
  }
  return "untagged";
}

llvm::LogicalResult mlir::epl::collectArguments(Program &program,
                                                std::string &error) {
  program.args.clear();
  std::vector<size_t> firstStage;
  for (size_t s = 0; s < program.stages.size(); ++s) {
    Stage &stage = program.stages[s];
    stage.argIndices.clear();
    for (const EntryArg &arg : stage.entry.args) {
      auto it = llvm::find_if(program.args, [&](const EntryArg &other) {
        return other.name == arg.name;
      });
      size_t index = it - program.args.begin();
      if (it == program.args.end()) {
        program.args.push_back(arg);
        firstStage.push_back(s);
      } else if (it->typeName != arg.typeName || it->kind != arg.kind) {
        error = "argument '" + arg.name + "' is " + it->typeName + " (" +
                kindName(it->kind) + ") in @" +
                program.stages[firstStage[index]].entry.name + " but " +
                arg.typeName + " (" + kindName(arg.kind) + ") in @" +
                stage.entry.name;
        return llvm::failure();
      }
      stage.argIndices.push_back(index);
    }
  }
  return llvm::success();
}

/// The machine's memory; 0 where it cannot be told.
static uint64_t physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * size : 0;
}

static std::string gibibytes(uint64_t bytes) {
  return llvm::formatv("{0:F1} GiB", bytes / double(1ull << 30)).str();
}

llvm::FailureOr<std::vector<HostTensor>>
mlir::epl::prepareArguments(const Program &program,
                            const ArgumentSources &sources,
                            std::string &error) {
  // The global values are made whole before each rank cuts its shard:
  // more than the machine holds would end in the allocator's abort.
  uint64_t total = 0, physical = physicalMemoryBytes();
  for (const EntryArg &arg : program.args)
    if (arg.dtype) {
      uint64_t bytes = dtypeSize(*arg.dtype);
      for (int64_t d : arg.shape)
        bytes = llvm::SaturatingMultiply(bytes, static_cast<uint64_t>(d));
      total = llvm::SaturatingAdd(total, bytes);
    }
  if (physical && total > physical) {
    error = "the arguments of @" + program.name + " hold " + gibibytes(total) +
            ", more than this machine's memory (" + gibibytes(physical) + ")";
    return llvm::failure();
  }
  auto params = loadOptional(sources.paramsFile, error);
  if (llvm::failed(params))
    return llvm::failure();
  auto data = loadOptional(sources.dataFile, error);
  if (llvm::failed(data))
    return llvm::failure();
  std::vector<HostTensor> values;
  for (const EntryArg &arg : program.args) {
    if (!arg.dtype) {
      error = "argument '" + arg.name + "' of @" + program.name + " has type " +
              arg.typeName + "; epl-run passes f32, f64, i32 and i64 tensors";
      return llvm::failure();
    }
    // Parameters, model state and optimizer state come from the
    // parameters file, everything else from the data file.
    bool isParam = isFromParamsFile(arg);
    llvm::FailureOr<HostTensor> value = argumentValue(
        program, arg, isParam ? *params : *data,
        isParam ? sources.paramsFile : sources.dataFile, sources.seed, error);
    if (llvm::failed(value))
      return llvm::failure();
    values.push_back(std::move(*value));
  }
  if (llvm::failed(
          checkCheckpoint(program, *params, sources.paramsFile, error)))
    return llvm::failure();
  // A tensor of the data file nothing reads is a misspelled input or a
  // parameter given in the wrong file (its seeded value is used instead).
  if (*data) {
    std::vector<std::string> unread;
    bool aParameter = false;
    for (const HostTensor &t : (*data)->tensors) {
      auto arg = llvm::find_if(program.args, [&](const EntryArg &arg) {
        return arg.name == t.name;
      });
      if (arg != program.args.end() && !isFromParamsFile(*arg))
        continue;
      unread.push_back(t.name);
      aParameter |= arg != program.args.end();
    }
    if (!unread.empty())
      notes() << ::epl::rt::toolName() << ": warning: @" << program.name
              << " reads nothing of " << sources.dataFile << " named "
              << someNames(unread)
              << (aParameter ? " (parameters and their state come from "
                               "--params)"
                             : "")
              << "\n";
  }
  return values;
}
