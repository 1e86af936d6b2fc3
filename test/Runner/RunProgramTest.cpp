//===- RunProgramTest.cpp - The run loop without MLIR ---------------------===//
//
// Part of EPL-MLIR.
//
// Runs hand-written steps through EPLRunnerCore, as an ahead-of-time runner
// would: seeded arguments, per-rank shards, feedback of parameters into
// arguments, pipeline stages, the report and the checkpoint, and the check
// of a step against its reference (gradient_checkpoint.check_gradients),
// which passes on equal steps and ends the run on different ones. This
// executable
// links neither MLIR nor the JIT.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/Arguments.h"
#include "epl/Runner/Run.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstring>

#include <gtest/gtest.h>

using namespace mlir::epl;

namespace {
/// Element data and size of the rank-1 (or 0) f32 memref packed at `i`.
float *data(void **packed, int i) {
  auto *desc = *static_cast<int64_t **>(packed[i]);
  return reinterpret_cast<float *>(desc[1]) + desc[2];
}
int64_t size(void **packed, int i) {
  return (*static_cast<int64_t **>(packed[i]))[3];
}

/// (w: param, x: input) -> (loss = sum(w * x), w + x): w grows by x a step.
void accumulate(void **packed) {
  float *w = data(packed, 0), *x = data(packed, 1);
  float *loss = data(packed, 2), *next = data(packed, 3);
  *loss = 0;
  for (int64_t i = 0; i < size(packed, 0); ++i) {
    *loss += w[i] * x[i];
    next[i] = w[i] + x[i];
  }
}

/// An f32 argument (`V` = EntryArg) or result (EntryResult).
template <typename V, typename Kind>
V value(const std::string &name, Kind kind, std::vector<int64_t> shape,
        std::vector<int64_t> local) {
  V v;
  v.name = name;
  v.kind = kind;
  v.dtype = DType::F32;
  v.shape = std::move(shape);
  v.localShape = std::move(local);
  return v;
}

/// (x: input, w: param) -> (w + x): stage 0 of a pipeline that never
/// communicates.
void grow(void **packed) {
  float *x = data(packed, 0), *w = data(packed, 1), *next = data(packed, 2);
  for (int64_t i = 0; i < size(packed, 0); ++i)
    next[i] = w[i] + x[i];
}

std::vector<float> floats(const HostTensor &t) {
  std::vector<float> v(t.numElements());
  std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

/// `accumulate` on 2 ranks for 3 steps, w and x split in halves over the
/// mesh when `sharded`; checks the checkpoint and the report.
void runAccumulate(bool sharded) {
  Stage stage;
  EntryPoint &entry = stage.entry;
  entry.name = "step";
  std::vector<int64_t> local =
      sharded ? std::vector<int64_t>{2} : std::vector<int64_t>{4};
  entry.args = {value<EntryArg>("w", ArgKind::Param, {4}, local),
                value<EntryArg>("x", ArgKind::Input, {4}, local)};
  entry.args[0].init = "ones";
  entry.results = {value<EntryResult>("loss", ResultKind::Loss, {}, {}),
                   value<EntryResult>("w", ResultKind::Param, {4}, local)};
  if (sharded)
    for (EntryValue *v : {static_cast<EntryValue *>(&entry.args[0]),
                          static_cast<EntryValue *>(&entry.args[1]),
                          static_cast<EntryValue *>(&entry.results[1])})
      v->shard.dimAxes = {{0}};
  stage.call = accumulate;
  Program program;
  program.name = "step";
  program.stages = {stage};
  program.meshes = {{"mesh", {"x"}, {2}, true}};

  std::string error;
  ASSERT_TRUE(llvm::succeeded(collectArguments(program, error))) << error;
  auto args = prepareArguments(program, {"", "", 7}, error);
  ASSERT_TRUE(llvm::succeeded(args)) << error;
  std::vector<float> x = floats((*args)[1]);

  RunOptions options;
  options.ranks.ranks = 2;
  options.steps = 3;
  std::string dir = ::testing::TempDir();
  options.reportFile = dir + "/report.json";
  options.saveFile = dir + "/checkpoint.safetensors";
  ASSERT_TRUE(
      llvm::succeeded(checkMeshes(program.meshes, options.ranks, error)));
  EXPECT_EQ(runProgram(program, std::move(*args), options), 0);

  auto checkpoint = readSafetensors(options.saveFile);
  ASSERT_TRUE(bool(checkpoint)) << llvm::toString(checkpoint.takeError());
  ASSERT_EQ(checkpoint->tensors.size(), 1u);
  EXPECT_EQ(checkpoint->metadata["format"], "epl-checkpoint");
  std::vector<float> w = floats(checkpoint->tensors[0]);
  for (int i = 0; i < 4; ++i)
    EXPECT_FLOAT_EQ(w[i], 1 + 3 * x[i]);

  auto text = llvm::MemoryBuffer::getFile(options.reportFile);
  ASSERT_TRUE(bool(text));
  auto report = llvm::json::parse((*text)->getBuffer());
  ASSERT_TRUE(bool(report));
  const llvm::json::Array *steps = report->getAsObject()->getArray("steps");
  ASSERT_EQ(steps->size(), 3u);
  // Rank 0's loss: its part of sum(w * x) before the step's update.
  float sum = 0;
  for (int i = 0; i < (sharded ? 2 : 4); ++i)
    sum += (1 + 2 * x[i]) * x[i];
  EXPECT_NEAR(*(*steps)[2].getAsObject()->getNumber("loss"), sum, 1e-5);
  EXPECT_EQ(report->getAsObject()->getInteger("ranks"), 2);
}

TEST(RunProgram, FeedsParametersBackAndSavesThem) { runAccumulate(false); }

TEST(RunProgram, CutsShardsAndPutsThemBackTogether) { runAccumulate(true); }

/// A pipeline of `accumulate` and `grow` (stage 1 returns the loss), on a
/// mesh of 2 stages x 2 replicas: each stage updates its own parameter,
/// both read x, rank 0 reports stage 1's loss, and the checkpoint holds
/// both parameters, in name order.
TEST(RunProgram, RunsEachRankStageAndAssemblesTheStep) {
  Program program;
  program.name = "pipe";
  program.meshes = {{"mesh", {"stage", "data"}, {2, 2}, true}};
  program.stageAxis = 0;
  Stage first, last;
  first.entry.name = "pipe_stage0";
  first.entry.args = {value<EntryArg>("x", ArgKind::Input, {4}, {4}),
                      value<EntryArg>("w1", ArgKind::Param, {4}, {4})};
  first.entry.results = {value<EntryResult>("w1", ResultKind::Param, {4}, {4})};
  first.call = grow;
  last.entry.name = "pipe_stage1";
  last.entry.args = {value<EntryArg>("w0", ArgKind::Param, {4}, {4}),
                     value<EntryArg>("x", ArgKind::Input, {4}, {4})};
  last.entry.results = {value<EntryResult>("loss", ResultKind::Loss, {}, {}),
                        value<EntryResult>("w0", ResultKind::Param, {4}, {4})};
  last.call = accumulate;
  program.stages = {first, last};

  std::string error;
  ASSERT_TRUE(llvm::succeeded(collectArguments(program, error))) << error;
  ASSERT_EQ(program.args.size(), 3u);
  EXPECT_EQ(program.args[2].name, "w0");
  EXPECT_EQ(program.stages[1].argIndices, (std::vector<size_t>{2, 0}));
  EXPECT_EQ(program.stageOf(1), 0);
  EXPECT_EQ(program.stageOf(2), 1);
  auto args = prepareArguments(program, {"", "", 7}, error);
  ASSERT_TRUE(llvm::succeeded(args)) << error;
  std::vector<float> x = floats((*args)[0]), w0 = floats((*args)[2]),
                     w1 = floats((*args)[1]);

  RunOptions options;
  options.ranks.ranks = 4;
  options.steps = 2;
  std::string dir = ::testing::TempDir();
  options.reportFile = dir + "/pipe-report.json";
  options.saveFile = dir + "/pipe-checkpoint.safetensors";
  EXPECT_EQ(runProgram(program, std::move(*args), options), 0);

  auto checkpoint = readSafetensors(options.saveFile);
  ASSERT_TRUE(bool(checkpoint)) << llvm::toString(checkpoint.takeError());
  ASSERT_EQ(checkpoint->tensors.size(), 2u);
  EXPECT_EQ(checkpoint->tensors[0].name, "w0");
  EXPECT_EQ(checkpoint->tensors[1].name, "w1");
  std::vector<float> w0After = floats(checkpoint->tensors[0]),
                     w1After = floats(checkpoint->tensors[1]);
  float loss = 0;
  for (int i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(w0After[i], w0[i] + 2 * x[i]);
    EXPECT_FLOAT_EQ(w1After[i], w1[i] + 2 * x[i]);
    loss += (w0[i] + x[i]) * x[i];
  }

  auto text = llvm::MemoryBuffer::getFile(options.reportFile);
  ASSERT_TRUE(bool(text));
  auto report = llvm::json::parse((*text)->getBuffer());
  ASSERT_TRUE(bool(report));
  const llvm::json::Array *steps = report->getAsObject()->getArray("steps");
  EXPECT_NEAR(*(*steps)[1].getAsObject()->getNumber("loss"), loss, 1e-5);
  const llvm::json::Array *ranks = report->getAsObject()->getArray("per_rank");
  ASSERT_EQ(ranks->size(), 4u);
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ((*ranks)[r].getAsObject()->getInteger("stage"), r / 2);
}

TEST(RunProgram, StagesMustAgreeOnAnArgument) {
  Program program;
  Stage first, last;
  first.entry.name = "s0";
  first.entry.args = {value<EntryArg>("x", ArgKind::Input, {4}, {4})};
  first.entry.args[0].typeName = "tensor<4xf32>";
  last.entry.name = "s1";
  last.entry.args = {value<EntryArg>("x", ArgKind::Label, {4}, {4})};
  last.entry.args[0].typeName = "tensor<4xf32>";
  program.stages = {first, last};
  std::string error;
  EXPECT_TRUE(llvm::failed(collectArguments(program, error)));
  EXPECT_EQ(error, "argument 'x' is tensor<4xf32> (input) in @s0 but "
                   "tensor<4xf32> (label) in @s1");
}

TEST(RunProgram, MeshesMustMatchTheRanks) {
  std::vector<MeshInfo> meshes = {{"mesh", {"data"}, {4}, true}};
  ::epl::rt::Options ranks;
  ranks.ranks = 2;
  std::string error;
  EXPECT_TRUE(llvm::failed(checkMeshes(meshes, ranks, error)));
  EXPECT_EQ(error, "mesh @mesh has 4 devices but the run has 2 rank(s); pass "
                   "--ranks 4");
}
} // namespace

namespace {
/// `accumulate`, off by 1e-3 in the new w: a checkpointed step that went
/// wrong.
void accumulateWrongly(void **packed) {
  accumulate(packed);
  float *next = data(packed, 3);
  for (int64_t i = 0; i < size(packed, 0); ++i)
    next[i] += 1e-3f;
}

/// `accumulate` on 2 ranks checked against `reference` first
/// (gradient_checkpoint.check_gradients).
int runChecked(EntryFunction checked, EntryFunction reference) {
  auto programOf = [](EntryFunction call) {
    Stage stage;
    stage.entry.name = "step";
    stage.entry.args = {value<EntryArg>("w", ArgKind::Param, {4}, {4}),
                        value<EntryArg>("x", ArgKind::Input, {4}, {4})};
    stage.entry.args[0].init = "ones";
    stage.entry.results = {
        value<EntryResult>("loss", ResultKind::Loss, {}, {}),
        value<EntryResult>("w", ResultKind::Param, {4}, {4})};
    stage.call = call;
    Program program;
    program.name = "step";
    program.stages = {stage};
    program.meshes = {{"mesh", {"x"}, {2}, false}};
    return program;
  };
  Program program = programOf(checked), plain = programOf(reference);
  std::string error;
  if (failed(collectArguments(program, error)) ||
      failed(collectArguments(plain, error)))
    return 2;
  auto args = prepareArguments(program, {"", "", 7}, error);
  if (failed(args))
    return 2;
  RunOptions options;
  options.ranks.ranks = 2;
  options.steps = 2;
  options.reference = &plain;
  return runProgram(program, std::move(*args), options);
}

TEST(RunProgram, CheckGradientsPassesOnEqualSteps) {
  testing::internal::CaptureStdout();
  EXPECT_EQ(runChecked(accumulate, accumulate), 0);
  EXPECT_NE(testing::internal::GetCapturedStdout().find(
                "the checkpointed step equals the step keeping every "
                "activation (largest relative difference 0"),
            std::string::npos);
}

TEST(RunProgramDeathTest, CheckGradientsFailsOnDifferentSteps) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(runChecked(accumulateWrongly, accumulate),
              testing::ExitedWithCode(1),
              "gradient_checkpoint.check_gradients: the checkpointed step's "
              "'w' differs from the step keeping every activation");
}
} // namespace
