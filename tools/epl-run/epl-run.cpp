//===- epl-run.cpp - Run an EPL module on CPU ranks -----------------------===//
//
// Part of EPL-MLIR.
//
// Parses a tensor-level module (L0 to L3), lowers what it still needs with
// the `epl-lower-to-cpu` pipeline, JIT-compiles it once per process and calls
// its entry on every rank: threads of this process (--ranks N) or one process
// per rank under mpirun. Parameters come from a seed or a safetensors file,
// inputs from a file or a seeded generator. Rank 0 reports each step, and
// optionally writes a JSON report and the results as safetensors.
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLOps.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/InitEPL.h"
#include "epl/Pipelines/Pipelines.h"
#include "epl/Runner/EntryPoint.h"
#include "epl/Runner/Initializers.h"
#include "epl/Runner/Shards.h"
#include "epl/Runtime/Backend.h"
#include "epl/Runtime/Runtime.h"
#include "epl/Support/Safetensors.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

using namespace mlir;
using namespace mlir::epl;
namespace cl = llvm::cl;
namespace rt = ::epl::rt;

namespace {
cl::OptionCategory category("epl-run options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> entryName("entry",
                               cl::desc("Function to run (default: the one "
                                        "tagging arguments with epl.arg, "
                                        "else @main)"),
                               cl::value_desc("name"), cl::cat(category));
cl::opt<int> numRanks("ranks", cl::desc("Ranks for the threads backend"),
                      cl::init(1), cl::cat(category));
cl::opt<rt::BackendKind>
    backendKind("backend",
                cl::desc("Communication backend (default: mpi under an MPI "
                         "launcher, else threads)"),
                cl::values(clEnumValN(rt::BackendKind::Threads, "threads",
                                      "N ranks as threads of this process"),
                           clEnumValN(rt::BackendKind::MPI, "mpi",
                                      "one rank per process (mpirun)")),
                cl::cat(category));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of parameters and data"),
                       cl::init(0), cl::cat(category));
cl::opt<std::string> paramsFile("params",
                                cl::desc("Parameters by name (safetensors)"),
                                cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> dataFile("data",
                              cl::desc("Inputs and labels by name "
                                       "(safetensors)"),
                              cl::value_desc("file"), cl::cat(category));
cl::opt<int> numSteps("steps", cl::desc("Steps to run"), cl::init(1),
                      cl::cat(category));
cl::opt<std::string> reportFile("report", cl::desc("Write a JSON report"),
                                cl::value_desc("file"), cl::cat(category));
cl::opt<std::string>
    dumpFile("dump-results",
             cl::desc("Write the entry's results (safetensors)"),
             cl::value_desc("file"), cl::cat(category));
cl::opt<double> timeout("timeout",
                        cl::desc("Seconds a rank waits for its peers in one "
                                 "operation before the run fails"),
                        cl::init(120), cl::cat(category));
cl::opt<bool> showTiming("timing",
                         cl::desc("Print how long compiling took, by phase"),
                         cl::init(false), cl::cat(category));
// Instruction selection is where the JIT spends its time: SelectionDAG took
// 10 s on a 2-block transformer step that FastISel (level 0) compiles in
// 0.5 s. The IR is optimized (-O) either way, and matmuls run in BLAS, so
// level 0 loses little at run time.
cl::opt<unsigned> codegenOpt(
    "codegen-opt",
    cl::desc("Code generator optimization level of the JIT (0-3); 0 selects "
             "instructions quickly"),
    cl::init(0), cl::cat(category));
cl::opt<unsigned> optLevel("O",
                           cl::desc("LLVM optimization level of the JIT "
                                    "(0-3)"),
                           cl::init(2), cl::Prefix, cl::cat(category));
cl::opt<bool> useBlas("blas", cl::desc("Run matmuls through CBLAS"),
                      cl::init(true), cl::cat(category));
cl::opt<std::string>
    saveFile("save",
             cl::desc("After the last step, write the parameters and optimizer "
                      "state (safetensors; --params resumes from it)"),
             cl::value_desc("file"), cl::cat(category));
cl::opt<bool> noTrain("no-train",
                      cl::desc("Evaluate an L0 model's forward only, without "
                               "building its training step"),
                      cl::init(false), cl::cat(category));

llvm::CodeGenOptLevel codegenLevel() {
  llvm::CodeGenOptLevel levels[] = {
      llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less,
      llvm::CodeGenOptLevel::Default, llvm::CodeGenOptLevel::Aggressive};
  return levels[std::min(codegenOpt.getValue(), 3u)];
}

size_t instructionCount(llvm::Module &m) {
  size_t n = 0;
  for (llvm::Function &f : m)
    n += f.getInstructionCount();
  return n;
}

/// LLVM's default pipeline at `level`, without loop unrolling: a step is
/// hundreds of small loop nests with static trip counts, which full
/// unrolling turns into huge blocks that instruction selection handles in
/// quadratic time (13 s instead of 2 s for a 2-block transformer), for no
/// measurable gain at run time.
void optimizeModule(llvm::Module &m, unsigned level, llvm::TargetMachine *tm) {
  if (level == 0)
    return;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder pb(tm, tuning);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  pb.buildPerModuleDefaultPipeline(levels[level]).run(m, mam);
}

/// Reports the time since the previous call under `--timing`.
void phaseDone(const char *phase) {
  static auto last = std::chrono::steady_clock::now();
  auto now = std::chrono::steady_clock::now();
  if (showTiming)
    llvm::errs() << llvm::format(
        "epl-run: %-12s %8.3f s\n", phase,
        std::chrono::duration<double>(now - last).count());
  last = now;
}

[[noreturn]] void fail(const llvm::Twine &message) {
  llvm::errs() << "epl-run: error: " << message << "\n";
  std::exit(1);
}

/// Symbols of the runtime the JIT-compiled code calls.
void registerRuntimeSymbols(ExecutionEngine &engine) {
  engine.registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    auto add = [&](const char *name, auto *fn) {
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                             llvm::JITSymbolFlags::Exported};
    };
#define EPL_ADD(T)                                                             \
  add("_mlir_ciface_epl_rt_all_reduce_" #T,                                    \
      &_mlir_ciface_epl_rt_all_reduce_##T);                                    \
  add("_mlir_ciface_epl_rt_all_gather_" #T,                                    \
      &_mlir_ciface_epl_rt_all_gather_##T);                                    \
  add("_mlir_ciface_epl_rt_reduce_scatter_" #T,                                \
      &_mlir_ciface_epl_rt_reduce_scatter_##T);                                \
  add("_mlir_ciface_epl_rt_all_to_all_" #T,                                    \
      &_mlir_ciface_epl_rt_all_to_all_##T);                                    \
  add("_mlir_ciface_epl_rt_broadcast_" #T,                                     \
      &_mlir_ciface_epl_rt_broadcast_##T);                                     \
  add("_mlir_ciface_epl_rt_send_" #T, &_mlir_ciface_epl_rt_send_##T);          \
  add("_mlir_ciface_epl_rt_recv_" #T, &_mlir_ciface_epl_rt_recv_##T);
    EPL_ADD(f32)
    EPL_ADD(f64)
    EPL_ADD(i32)
    EPL_ADD(i64)
    EPL_ADD(f16)
#undef EPL_ADD
    add("_mlir_ciface_epl_rt_group_index", &_mlir_ciface_epl_rt_group_index);
    add("_mlir_ciface_epl_rt_barrier", &_mlir_ciface_epl_rt_barrier);
    add("_mlir_ciface_epl_rt_matmul_f32", &_mlir_ciface_epl_rt_matmul_f32);
    add("_mlir_ciface_epl_rt_matmul_f64", &_mlir_ciface_epl_rt_matmul_f64);
    add("epl_rt_now", &epl_rt_now);
    add("memrefCopy", &memrefCopy);
    add("_mlir_memref_to_llvm_alloc", &_mlir_memref_to_llvm_alloc);
    add("_mlir_memref_to_llvm_aligned_alloc",
        &_mlir_memref_to_llvm_aligned_alloc);
    add("_mlir_memref_to_llvm_free", &_mlir_memref_to_llvm_free);
    return map;
  });
}

std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream(s) << type;
  return s;
}

std::optional<SafetensorsFile> loadOptional(const std::string &path) {
  if (path.empty())
    return std::nullopt;
  auto file = readSafetensors(path);
  if (!file)
    fail(llvm::toString(file.takeError()));
  return std::move(*file);
}

/// The host value of every argument: from the files, else generated.
std::vector<HostTensor>
prepareArguments(const EntryPoint &entry,
                 const std::optional<SafetensorsFile> &params,
                 const std::optional<SafetensorsFile> &data) {
  std::vector<HostTensor> values;
  for (const EntryArg &arg : entry.args) {
    std::optional<DType> dtype = dtypeOf(arg.type.getElementType());
    if (!dtype)
      fail("argument '" + arg.name + "' of @" + entry.name + " has type " +
           typeString(arg.type) +
           "; epl-run passes f32, f64, i32 and i64 tensors");
    // Parameters and optimizer state come from --params (a checkpoint
    // written by --save holds both), everything else from --data.
    bool isState = arg.kind == ArgKind::OptState;
    bool isParam = arg.kind == ArgKind::Param || isState;
    const std::optional<SafetensorsFile> &file = isParam ? params : data;
    const std::string &path = isParam ? paramsFile : dataFile;
    if (!file) {
      values.push_back(initializeTensor(arg, seed));
      continue;
    }
    const HostTensor *found = file->find(arg.name);
    if (!found && isState) {
      // A file of parameters alone starts the optimizer afresh.
      values.push_back(initializeTensor(arg, seed));
      continue;
    }
    if (!found) {
      std::string names;
      for (const HostTensor &t : file->tensors)
        names += (names.empty() ? "" : ", ") + t.name;
      fail(std::string(isParam ? "parameter" : "argument") + " '" + arg.name +
           "' is not in " + path +
           " (it holds: " + (names.empty() ? "nothing" : names) + ")");
    }
    std::vector<int64_t> shape(arg.type.getShape().begin(),
                               arg.type.getShape().end());
    if (found->dtype != *dtype || found->shape != shape) {
      HostTensor expected;
      expected.dtype = *dtype;
      expected.shape = shape;
      fail("tensor '" + arg.name + "' in " + path + " is " + found->describe() +
           " but @" + entry.name + " takes " + expected.describe() + " (" +
           typeString(arg.type) + ")");
    }
    values.push_back(*found);
  }
  return values;
}

/// A ranked memref descriptor over `data` (see Runtime.h).
std::vector<int64_t> descriptorOf(void *data, ArrayRef<int64_t> shape) {
  std::vector<int64_t> d = {reinterpret_cast<int64_t>(data),
                            reinterpret_cast<int64_t>(data), 0};
  d.insert(d.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}

std::optional<double> scalarLoss(const HostTensor &t) {
  if (!t.shape.empty())
    return std::nullopt;
  if (t.dtype == DType::F32) {
    float v;
    std::memcpy(&v, t.data.data(), 4);
    return v;
  }
  if (t.dtype == DType::F64) {
    double v;
    std::memcpy(&v, t.data.data(), 8);
    return v;
  }
  return std::nullopt;
}

template <typename T> std::vector<char> bytesOf(const std::vector<T> &v) {
  const char *p = reinterpret_cast<const char *>(v.data());
  return std::vector<char>(p, p + v.size() * sizeof(T));
}
template <typename T> std::vector<T> valuesOf(const std::vector<char> &b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

struct StepRecord {
  int step;
  std::optional<double> loss;
  double timeMs;
};

void writeReport(const std::vector<StepRecord> &steps, int ranks,
                 const char *backend, const std::vector<int64_t> &peaks,
                 const rt::RankStats &stats,
                 const std::vector<MeshInfo> &meshes) {
  llvm::json::Array stepArray;
  for (const StepRecord &s : steps) {
    llvm::json::Object o{{"step", s.step}, {"time_ms", s.timeMs}};
    if (s.loss)
      o["loss"] = *s.loss;
    stepArray.push_back(std::move(o));
  }
  llvm::json::Array collectives;
  for (const auto &[key, stat] : stats.collectives) {
    llvm::json::Array axes;
    std::string mesh = "?";
    if (key.meshId >= 0 && key.meshId < static_cast<int64_t>(meshes.size())) {
      mesh = meshes[key.meshId].name;
      for (int64_t a : key.axes)
        axes.push_back(meshes[key.meshId].axes[a]);
    }
    collectives.push_back(llvm::json::Object{{"kind", key.kind},
                                             {"mesh", mesh},
                                             {"axes", std::move(axes)},
                                             {"group_size", key.groupSize},
                                             {"bytes", stat.bytes},
                                             {"count", stat.count}});
  }
  llvm::json::Array peakArray;
  for (int64_t p : peaks)
    peakArray.push_back(p);
  llvm::json::Object report{{"steps", std::move(stepArray)},
                            {"ranks", ranks},
                            {"backend", backend},
                            {"peak_bytes", std::move(peakArray)},
                            {"collectives", std::move(collectives)}};
  // Same discipline as the safetensors files: write, then rename.
  std::string temp = reportFile + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(temp, ec);
    if (ec)
      rt::fatalError("cannot write " + reportFile + ": " + ec.message());
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
  }
  if (std::rename(temp.c_str(), reportFile.c_str()) != 0)
    rt::fatalError("cannot write " + reportFile);
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  addVersionPrinter();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "epl-run: runs an EPL module on CPU ranks (threads or MPI)\n");

  rt::Options runOptions;
  runOptions.ranks = numRanks;
  runOptions.timeoutSeconds = timeout;
  runOptions.backend = backendKind.getNumOccurrences()
                           ? backendKind.getValue()
                           : (rt::launchedByMPI() ? rt::BackendKind::MPI
                                                  : rt::BackendKind::Threads);
  if (numRanks < 1)
    fail("--ranks must be at least 1");
  if (numSteps < 0)
    fail("--steps must not be negative");
  if (runOptions.backend == rt::BackendKind::MPI && !rt::mpiAvailable())
    fail("this epl-run was built without MPI");

  DialectRegistry registry;
  registerEPLDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input)
    fail(error);
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  phaseDone("start");
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  phaseDone("parse");

  FailureOr<func::FuncOp> entryFn = findEntryPoint(*module, entryName, error);
  if (failed(entryFn))
    fail(error);
  // An L0 model trains: build its training step first (the same pipeline as
  // `epl-opt --epl-training-step`).
  // On several devices it is planned and partitioned too (epl-parallelize).
  if (isModel(*entryFn) && !noTrain) {
    PassManager step(&context);
    int64_t devices = runOptions.backend == rt::BackendKind::MPI
                          ? rt::launcherWorldSize()
                          : numRanks.getValue();
    ParallelizeOptions parallelize;
    parallelize.devices = devices;
    buildTrainingStepPipeline(step, parallelize);
    if (failed(step.run(*module)))
      return 1;
    phaseDone("autodiff");
  }
  FailureOr<EntryPoint> entry = describeEntryPoint(*entryFn, error);
  if (failed(entry))
    fail(error);
  std::vector<MeshInfo> meshes = collectMeshes(*module);
  std::vector<rt::MeshName> meshNames;
  for (const MeshInfo &m : meshes)
    meshNames.push_back({m.name, m.axes});
  rt::setMeshNames(std::move(meshNames));
  if (runOptions.backend == rt::BackendKind::Threads)
    for (MeshOp mesh : module->getOps<MeshOp>())
      // Only meshes the program communicates on need every device.
      if (!SymbolTable::symbolKnownUseEmpty(mesh, *module) &&
          llvm::any_of(*SymbolTable::getSymbolUses(mesh, *module),
                       [](const SymbolTable::SymbolUse &use) {
                         return isa<CollectiveOpInterface>(use.getUser());
                       }) &&
          mesh.getNumDevices() != numRanks)
        fail("mesh @" + mesh.getSymName() + " has " +
             llvm::Twine(mesh.getNumDevices()) + " devices but the run has " +
             llvm::Twine(numRanks.getValue()) + " rank(s); pass --ranks " +
             llvm::Twine(mesh.getNumDevices()));

  // Load and check every input before compiling or running anything.
  std::vector<HostTensor> args = prepareArguments(
      *entry, loadOptional(paramsFile), loadOptional(dataFile));

  wrapEntryPoint(*module, *entryFn);
  PassManager pm(&context);
  CPULoweringOptions lowering;
  lowering.blas = useBlas;
  buildCPULoweringPipeline(pm, lowering);
  if (failed(pm.run(*module)))
    return 1;
  phaseDone("lowering");

  ExecutionEngineOptions engineOptions;
  if (optLevel > 3)
    fail("-O takes 0, 1, 2 or 3");
  // The optimizer needs the host's target to cost loops: without it, LLVM
  // unrolls and vectorizes blindly and compile times explode.
  auto hostTarget = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!hostTarget)
    fail("cannot detect the host CPU: " +
         llvm::toString(hostTarget.takeError()));
  hostTarget->setCodeGenOptLevel(codegenLevel());
  auto targetMachine = hostTarget->createTargetMachine();
  if (!targetMachine)
    fail("cannot target the host CPU: " +
         llvm::toString(targetMachine.takeError()));
  std::function<llvm::Error(llvm::Module *)> transformer =
      [&](llvm::Module *m) -> llvm::Error {
    size_t before = instructionCount(*m);
    optimizeModule(*m, optLevel, targetMachine->get());
    if (showTiming)
      llvm::errs() << "epl-run: LLVM IR " << before << " -> "
                   << instructionCount(*m) << " instructions\n";
    return llvm::Error::success();
  };
  engineOptions.transformer = transformer;
  engineOptions.enableGDBNotificationListener = false;
  auto jitTarget = hostTarget->createTargetMachine();
  if (!jitTarget)
    fail("cannot target the host CPU: " +
         llvm::toString(jitTarget.takeError()));
  auto engine =
      ExecutionEngine::create(*module, engineOptions, std::move(*jitTarget));
  if (!engine)
    fail("JIT compilation failed: " + llvm::toString(engine.takeError()));
  registerRuntimeSymbols(**engine);
  phaseDone("jit-setup");
  auto packed = (*engine)->lookupPacked(
      (llvm::Twine("_mlir_ciface_") + kEntryWrapperName).str());
  if (!packed)
    fail("JIT lookup failed: " + llvm::toString(packed.takeError()));
  void (*call)(void **) = *packed;
  phaseDone("jit-compile");

  const char *backendName =
      runOptions.backend == rt::BackendKind::MPI ? "mpi" : "threads";
  int exitCode = 0;
  // Training steps feed their new parameters and optimizer state back into
  // the arguments of the same name before the next step.
  std::vector<std::pair<size_t, size_t>> feedback; // result -> argument
  for (auto [r, result] : llvm::enumerate(entry->results)) {
    if (result.kind != ResultKind::Param && result.kind != ResultKind::OptState)
      continue;
    ArgKind wanted =
        result.kind == ResultKind::Param ? ArgKind::Param : ArgKind::OptState;
    for (auto [a, arg] : llvm::enumerate(entry->args))
      if (arg.kind == wanted && arg.name == result.name)
        feedback.push_back({r, a});
  }

  MeshInfo mesh = meshes.empty() ? MeshInfo() : meshes.front();
  rt::runRanks(runOptions, [&](int rank) {
    int ranks = rt::worldSize();
    // Without feedback, arguments are read-only: ranks share the host
    // copies. A training rank owns its parameters.
    // Shards are cut from the global values; whole arguments are shared
    // while read-only, copied when training updates them.
    bool sharded = llvm::any_of(
        entry->args, [](const EntryArg &a) { return !a.shard.isWhole(); });
    std::vector<HostTensor> ownArgs;
    if (!feedback.empty() || sharded)
      for (auto [a, arg] : llvm::enumerate(entry->args))
        ownArgs.push_back(sliceShard(args[a], arg.shard, mesh, rank));
    std::vector<HostTensor> &rankArgs =
        feedback.empty() && !sharded ? args : ownArgs;
    std::vector<std::vector<int64_t>> descriptors;
    for (HostTensor &a : rankArgs)
      descriptors.push_back(descriptorOf(a.data.data(), a.shape));
    std::vector<HostTensor> results;
    for (const EntryResult &er : entry->results) {
      HostTensor r;
      r.name = er.name;
      r.dtype = *dtypeOf(er.type.getElementType());
      r.shape.assign(er.localType.getShape().begin(),
                     er.localType.getShape().end());
      r.data.assign(r.numElements() * dtypeSize(r.dtype), 0);
      results.push_back(std::move(r));
    }
    for (HostTensor &r : results)
      descriptors.push_back(descriptorOf(r.data.data(), r.shape));
    std::vector<void *> descriptorPtrs;
    for (auto &d : descriptors)
      descriptorPtrs.push_back(d.data());
    std::vector<void *> packedArgs;
    for (void *&p : descriptorPtrs)
      packedArgs.push_back(&p);

    std::vector<StepRecord> steps;
    for (int step = 1; step <= numSteps; ++step) {
      auto start = std::chrono::steady_clock::now();
      call(packedArgs.data());
      double ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count();
      std::optional<double> loss =
          results.empty() ? std::nullopt : scalarLoss(results[0]);
      steps.push_back({step, loss, ms});
      for (auto [r, a] : feedback)
        std::memcpy(rankArgs[a].data.data(), results[r].data.data(),
                    results[r].data.size());
      if (rank == 0) {
        if (loss)
          std::printf("step %d loss %.9g time_ms %.3f\n", step, *loss, ms);
        else
          std::printf("step %d time_ms %.3f\n", step, ms);
        std::fflush(stdout);
      }
    }

    rt::finishProgram();
    // Every rank takes part in the gathers below, then rank 0 reports.
    std::vector<int64_t> peaks;
    for (auto &b : rt::allGatherBytes(
             bytesOf(std::vector<int64_t>{rt::currentStats().peakBytes})))
      peaks.push_back(valuesOf<int64_t>(b)[0]);
    std::vector<std::vector<std::vector<char>>> allResults(results.size());
    if (!dumpFile.empty())
      for (auto [i, r] : llvm::enumerate(results))
        allResults[i] = rt::allGatherBytes(r.data);
    // Checkpoints hold global values: put the shards back together.
    std::vector<HostTensor> saved;
    if (!saveFile.empty())
      for (auto [a, arg] : llvm::enumerate(entry->args))
        if (arg.kind == ArgKind::Param || arg.kind == ArgKind::OptState)
          saved.push_back(assembleShards(rankArgs[a], arg.type.getShape(),
                                         arg.shard, mesh,
                                         rt::allGatherBytes(rankArgs[a].data)));
    // Results are named after what they hold in a training step; dumps
    // keep positional names so that every result is there exactly once.
    for (auto [i, r] : llvm::enumerate(results))
      r.name = "result" + std::to_string(i);
    if (rank != 0)
      return;

    double total = 0;
    for (const StepRecord &s : steps)
      total += s.timeMs;
    int64_t peak = *std::max_element(peaks.begin(), peaks.end());
    std::printf("epl-run: %d step%s of @%s on %d rank%s (%s): mean step %.3f "
                "ms, peak memory %.2f MiB per rank\n",
                numSteps.getValue(), numSteps == 1 ? "" : "s",
                entry->name.c_str(), ranks, ranks == 1 ? "" : "s", backendName,
                steps.empty() ? 0.0 : total / steps.size(),
                peak / (1024.0 * 1024.0));
    std::fflush(stdout);

    if (!reportFile.empty())
      writeReport(steps, ranks, backendName, peaks, rt::currentStats(), meshes);
    if (!dumpFile.empty()) {
      SafetensorsFile out;
      out.metadata["entry"] = entry->name;
      out.metadata["ranks"] = std::to_string(ranks);
      for (auto [i, r] : llvm::enumerate(results)) {
        const EntryResult &er = entry->results[i];
        if (!er.shard.isWhole()) {
          // A shard per rank: the dump holds the global value.
          out.tensors.push_back(assembleShards(r, er.type.getShape(), er.shard,
                                               mesh, allResults[i]));
          continue;
        }
        out.tensors.push_back(r);
        for (int other = 1; other < ranks; ++other) {
          HostTensor t = r;
          t.name = "rank" + std::to_string(other) + "/" + r.name;
          t.data = allResults[i][other];
          out.tensors.push_back(std::move(t));
        }
      }
      if (llvm::Error e = writeSafetensors(dumpFile, out))
        rt::fatalError(llvm::toString(std::move(e)));
    }
    if (!saveFile.empty()) {
      SafetensorsFile checkpoint;
      checkpoint.metadata["format"] = "epl-checkpoint";
      checkpoint.metadata["entry"] = entry->name;
      checkpoint.tensors = saved;
      if (llvm::Error e = writeSafetensors(saveFile, checkpoint))
        rt::fatalError(llvm::toString(std::move(e)));
    }
    exitCode = 0;
  });
  return exitCode;
}
