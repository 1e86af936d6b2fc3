//===- Program.h - A compiled step, described without MLIR ------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// A runner calls one function of a compiled program on every rank, or for a
// pipelined step (`epl.pipeline`) the function of the rank's stage. This
// describes those functions in the user's terms (arguments and results with
// names, kinds, element types, global and per-device shapes, shards), the
// step's arguments by name and the program's meshes, in plain C++: the run
// loop, the report and checkpoints need no MLIR, so that the JIT
// (Compile.h) and an ahead-of-time runner share them.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_PROGRAM_H
#define EPL_RUNNER_PROGRAM_H

#include "epl/Support/Safetensors.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::epl {

/// What an argument of an entry point is (`epl.arg`). `State` is model
/// state that is not trained (batch norm's running statistics).
enum class ArgKind { Param, Input, Label, OptState, State, Other };

/// What a result of a training step is (`epl.result`).
enum class ResultKind { Loss, Param, OptState, Grad, State, Other };

/// How a per-device program's argument or result is one device's shard of
/// a global value (`epl.shard`): for each dimension, the indices of the mesh
/// axes it is split over. Empty when the value is whole on every device.
struct Shard {
  std::vector<std::vector<int64_t>> dimAxes;
  bool isWhole() const {
    return std::all_of(dimAxes.begin(), dimAxes.end(),
                       [](const auto &axes) { return axes.empty(); });
  }
};

/// An argument or result of the entry.
struct EntryValue {
  /// `epl.name`, or `arg<position>` / `result<position>`.
  std::string name;
  /// The element type, or std::nullopt for one runners do not pass (f32,
  /// f64, i32 and i64 are passed).
  std::optional<DType> dtype;
  /// The global shape (what files hold); `localShape` is what one device
  /// gets.
  std::vector<int64_t> shape;
  std::vector<int64_t> localShape;
  /// The global type as the compiler spells it (`tensor<784x512xf32>`), for
  /// messages.
  std::string typeName;
  Shard shard;

  /// The bytes one device holds (0 for a type runners do not pass).
  int64_t localBytes() const {
    if (!dtype)
      return 0;
    int64_t bytes = static_cast<int64_t>(dtypeSize(*dtype));
    for (int64_t d : localShape)
      bytes *= d;
    return bytes;
  }
};

struct EntryArg : EntryValue {
  ArgKind kind = ArgKind::Other;
  /// `epl.init` of a parameter ("normal", "zeros", "ones"), or empty.
  std::string init;
  /// What the model says of seeded values (InitHints.h); 0: unknown.
  int64_t fanIn = 0;
  int64_t indexBound = 0;
};

struct EntryResult : EntryValue {
  ResultKind kind = ResultKind::Other;
  /// Of a new parameter: the bytes of the gradient its update read on one
  /// device (`epl.grad_shard`; the parameter's own shard without it).
  int64_t gradBytes = 0;
};

struct EntryPoint {
  std::string name;
  std::vector<EntryArg> args;
  std::vector<EntryResult> results;

  /// Whether this is a training step (its results say what they are).
  bool isTrainingStep() const {
    return std::any_of(
        results.begin(), results.end(),
        [](const EntryResult &r) { return r.kind == ResultKind::Param; });
  }

  /// The result a run reports as the loss: the one tagged `loss`, else,
  /// when no result says what it is but model state (a model's forward:
  /// its loss, then its state's next values), the first.
  std::optional<size_t> lossResult() const {
    for (size_t i = 0; i < results.size(); ++i)
      if (results[i].kind == ResultKind::Loss)
        return i;
    bool tagged =
        std::any_of(results.begin(), results.end(), [](const EntryResult &r) {
          return r.kind != ResultKind::Other && r.kind != ResultKind::State;
        });
    if (!results.empty() && results.front().kind == ResultKind::State)
      return std::nullopt;
    if (tagged || results.empty())
      return std::nullopt;
    return 0;
  }
};

/// A mesh of the program, as the runtime numbers them (module order).
struct MeshInfo {
  std::string name;
  std::vector<std::string> axes;
  std::vector<int64_t> sizes;
  /// Whether the program communicates on it (only those need every device
  /// of the run).
  bool communicates = false;

  int64_t numDevices() const {
    int64_t n = 1;
    for (int64_t s : sizes)
      n *= s;
    return n;
  }
};

/// The entry with the C interface: a pointer to the memref descriptor of
/// each argument, then of each result (written by the callee), in order.
using EntryFunction = void (*)(void **);

/// What the devices of one pipeline stage call (every device, when the
/// program is not pipelined).
struct Stage {
  EntryPoint entry;
  /// The position in Program::args of each of `entry.args`.
  std::vector<size_t> argIndices;
  EntryFunction call = nullptr;
  /// epl-estimate-memory's peak of the buffers the function allocates (what
  /// the runtime counts as a rank's peak), when it was estimated.
  std::optional<int64_t> estimatedPeakBytes;
  /// (result, argument) pairs of `entry` that share a buffer: the new
  /// parameter or state overwrites the old one (wrapEntryPoint).
  std::vector<std::pair<size_t, size_t>> inPlace;
  /// On a GPU: the in-place pairs' buffers stay on the device from call to
  /// call (epl_rt_resident_buffer), so the runner's host copies of them are
  /// read and written only around the run; not with offload v0, whose
  /// parameters and state move every step.
  bool residentInPlace = false;

  /// The bytes of the buffers a call of it is passed: its arguments, and
  /// its results but those written over an argument.
  int64_t callBytes() const {
    int64_t bytes = 0;
    for (const EntryArg &a : entry.args)
      bytes += a.localBytes();
    for (size_t r = 0; r < entry.results.size(); ++r)
      if (std::none_of(inPlace.begin(), inPlace.end(),
                       [&](const auto &pair) { return pair.first == r; }))
        bytes += entry.results[r].localBytes();
    return bytes;
  }
};

/// A compiled step, ready to run. A program that is not pipelined is the
/// one-stage case: every rank runs stage 0.
struct Program {
  /// The entry function's name, or the `epl.pipeline`'s.
  std::string name;
  /// The step's arguments, global, each once by name: the stages' in
  /// order of first use (stage 0 first). Stage::argIndices point here.
  std::vector<EntryArg> args;
  std::vector<Stage> stages;
  std::vector<MeshInfo> meshes;
  /// The mesh the ranks number row-major: shards are cut over it, and the
  /// stages are laid out along its axis `stageAxis` (-1: one stage).
  size_t mesh = 0;
  int64_t stageAxis = -1;
  /// Whether the stages send messages over channels (`direct` ones:
  /// interleaved 1F1B's), which on GPUs are NCCL sends waiting for their
  /// receives in streams of their own (epl::rt::gpuAvailable).
  bool directMessages = false;

  bool isPipelined() const { return stageAxis >= 0; }

  /// The stage `rank` runs: its coordinate along the stage axis.
  int stageOf(int rank) const {
    if (!isPipelined())
      return 0;
    const std::vector<int64_t> &sizes = meshes[mesh].sizes;
    int64_t inner = 1;
    for (size_t a = stageAxis + 1; a < sizes.size(); ++a)
      inner *= sizes[a];
    return static_cast<int>(rank / inner % sizes[stageAxis]);
  }

  /// The ranks, of `worldSize`, that run stage `stage`.
  std::vector<int> ranksOf(int stage, int worldSize) const {
    std::vector<int> ranks;
    for (int r = 0; r < worldSize; ++r)
      if (stageOf(r) == stage)
        ranks.push_back(r);
    return ranks;
  }
};

} // namespace mlir::epl

#endif // EPL_RUNNER_PROGRAM_H
