//===- Compile.cpp - From a module to a loaded program --------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/Compile.h"
#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"
#include "epl/Dialect/EPL/IR/EPLOps.h"
#include "epl/Dialect/EPL/IR/ShardingRule.h"
#include "epl/Dialect/EPL/Transforms/Passes.h"
#include "epl/InitEPL.h"
#include "epl/Pipelines/Pipelines.h"
#include "epl/Runner/InitHints.h"
#include "epl/Runner/Notes.h"
#include "epl/Runtime/Backend.h"
#include "epl/Runtime/Symbols.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Memory.h"
#include "llvm/Support/Process.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Scalar/DCE.h"
#include "llvm/Transforms/Scalar/InstSimplifyPass.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <algorithm>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::epl;

void CompileCommandLine::addPassManagerOptions(
    llvm::cl::OptionCategory &category) {
  registerAllPasses();
  registerEPLPassesAndPipelines();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  llvm::cl::HideUnrelatedOptions(category);
}

CompileCommandLine::CompileCommandLine(llvm::cl::OptionCategory &category)
    : entry("entry",
            llvm::cl::desc("Function to run (default: the module's one "
                           "epl.pipeline, else the one tagging arguments with "
                           "epl.arg, else @main)"),
            llvm::cl::value_desc("name"), llvm::cl::cat(category)),
      noTrain("no-train",
              llvm::cl::desc("Evaluate an L0 model's forward only, without "
                             "building its training step"),
              llvm::cl::init(false), llvm::cl::cat(category)),
      target("target", llvm::cl::desc("What the step runs on"),
             llvm::cl::values(
                 clEnumValN(Target::CPU, "cpu", "CPU threads or processes"),
                 clEnumValN(Target::CUDA, "cuda",
                            "NVIDIA GPUs: one per rank (rank modulo the "
                            "GPUs there are), cuBLAS for contractions")),
             llvm::cl::init(Target::CPU), llvm::cl::cat(category)),
      gpuChip("gpu-chip",
              llvm::cl::desc("GPU architecture the cuda target's kernels "
                             "are compiled for"),
              llvm::cl::init("sm_90"), llvm::cl::cat(category)),
      gpuFormat(
          "gpu-format",
          llvm::cl::desc("What the cuda target's kernels are embedded as"),
          llvm::cl::values(
              clEnumValN(GPUFormat::Cubin, "cubin",
                         "machine code for --gpu-chip (default)"),
              clEnumValN(GPUFormat::Fatbin, "fatbin",
                         "that and its PTX, which GPUs newer than "
                         "--gpu-chip compile when they load it"),
              clEnumValN(GPUFormat::PTX, "ptx",
                         "PTX alone, compiled by the driver when loaded")),
          llvm::cl::init(GPUFormat::Cubin), llvm::cl::cat(category)),
      blas("blas", llvm::cl::desc("Run matmuls through CBLAS"),
           llvm::cl::init(true), llvm::cl::cat(category)),
      emulateGPU(
          "emulate-gpu",
          llvm::cl::desc(
              "Compile every kernel as for the cuda target, then run it on "
              "the CPU thread by thread: checks the GPU lowering's numbers "
              "without a GPU (slow; matmuls still go to BLAS)"),
          llvm::cl::init(false), llvm::cl::cat(category)),
      optLevel("O", llvm::cl::desc("LLVM optimization level (0-3)"),
               llvm::cl::init(2), llvm::cl::Prefix, llvm::cl::cat(category)),
      codegenOpt(
          "codegen-opt",
          llvm::cl::desc("Code generator optimization level of the "
                         "kernels (0-3); 0 selects instructions quickly"),
          llvm::cl::init(2), llvm::cl::cat(category)),
      timing("timing",
             llvm::cl::desc("Print how long compiling took, by phase"),
             llvm::cl::init(false), llvm::cl::cat(category)) {}

FailureOr<CompileOptions>
CompileCommandLine::compileOptions(std::string &error) const {
  if (optLevel > 3) {
    error = "-O must be 0, 1, 2 or 3";
    return failure();
  }
  if (codegenOpt > 3) {
    error = "--codegen-opt must be 0, 1, 2 or 3";
    return failure();
  }
  CompileOptions compile;
  compile.entry = entry;
  compile.train = !noTrain;
  compile.blas = blas;
  compile.emulateGPU = emulateGPU;
  compile.target = target;
  compile.gpuChip = gpuChip;
  compile.gpuFormat = gpuFormat;
  if (target == Target::CUDA && (emulateGPU || !blas)) {
    error = "--target cuda runs its kernels on the GPU and contractions "
            "with cuBLAS; --emulate-gpu and --blas=false are CPU options";
    return failure();
  }
  for (const llvm::cl::Option *gpuOnly :
       std::initializer_list<const llvm::cl::Option *>{&gpuChip, &gpuFormat})
    if (gpuOnly->getNumOccurrences() && target != Target::CUDA) {
      error = "--" + gpuOnly->ArgStr.str() + " is for --target cuda";
      return failure();
    }
  if (failed(ptxFeaturesFor(gpuChip, error)))
    return failure();
  // An `a` chip's PTX uses features of that chip alone: no newer GPU
  // compiles it, which is what a fatbin's PTX is for.
  if (gpuFormat == GPUFormat::Fatbin && StringRef(gpuChip).ends_with("a")) {
    error = "--gpu-format fatbin adds PTX for GPUs newer than --gpu-chip, "
            "but " +
            gpuChip + "'s runs on " + StringRef(gpuChip).drop_back().str() +
            " alone (its architecture-specific features); use "
            "--gpu-format cubin, or a chip without 'a'";
    return failure();
  }
  if (emulateGPU && !blas) {
    error = "--emulate-gpu runs contractions through the runtime's GEMM, as "
            "the GPU does; it cannot be combined with --blas=false";
    return failure();
  }
  compile.optLevel = optLevel;
  compile.codegenOptLevel = codegenOpt;
  compile.timing = timing;
  return compile;
}

void PhaseTimer::done(const char *phase) {
  auto now = std::chrono::steady_clock::now();
  if (enabled)
    llvm::errs() << llvm::format(
        "%s: %-12s %8.3f s\n", ::epl::rt::toolName().c_str(), phase,
        std::chrono::duration<double>(now - last).count());
  last = now;
}

void mlir::epl::registerRunnerDialects(DialectRegistry &registry) {
  registerEPLDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

SourceModule::SourceModule()
    : context(MLIRContext::Threading::ENABLED),
      diagnostics(sourceMgr, &context) {
  DialectRegistry registry;
  registerRunnerDialects(registry);
  context.appendDialectRegistry(registry);
  context.printOpOnDiagnostic(false);
  // The compiler's warnings are notes about the model, said once per run
  // (Notes.h); errors are every process's own. Registered after the
  // printing handler, so it is asked first.
  context.getDiagEngine().registerHandler([](Diagnostic &diagnostic) {
    return success(quietProcess() &&
                   diagnostic.getSeverity() != DiagnosticSeverity::Error);
  });
}

LogicalResult SourceModule::parse(StringRef path, PhaseTimer &timer,
                                  std::string &error) {
  auto input = openInputFile(path, &error);
  if (!input)
    return failure();
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  timer.done("start");
  module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return failure();
  timer.done("parse");
  return success();
}

/// Runs `pm` on `module` for the tools' phase `phase`. A pass that fails
/// says why in a diagnostic, which the tools print; one that fails without
/// any (a bug) still leaves the user a line naming the phase, not a bare
/// exit status.
/// Whether the step's arguments live on a GPU only around their uses
/// (offload v0 on the cuda target, or its emulation), not for the whole
/// step.
static bool offloadsArguments(ModuleOp module, const CompileOptions &options) {
  return (options.target == Target::CUDA || options.emulateGPU) &&
         Config::get(module).getString("offload.level") == "v0";
}

static LogicalResult runPhase(PassManager &pm, ModuleOp module,
                              StringRef phase) {
  DiagnosticEngine &engine = module.getContext()->getDiagEngine();
  bool reported = false;
  DiagnosticEngine::HandlerID handler =
      engine.registerHandler([&](Diagnostic &diagnostic) -> LogicalResult {
        if (diagnostic.getSeverity() == DiagnosticSeverity::Error)
          reported = true;
        // Not handled: the tool's own handler prints it.
        return failure();
      });
  // MLIR's own pass-manager options (--mlir-timing,
  // --mlir-print-ir-after=PASS) where the tool registered them; each phase
  // reports on its own passes.
  LogicalResult result = applyPassManagerCLOptions(pm);
  applyDefaultTimingPassManagerCLOptions(pm);
  if (succeeded(result))
    result = pm.run(module);
  engine.eraseHandler(handler);
  if (failed(result) && !reported)
    emitError(module.getLoc())
        << phase
        << " failed without saying why: a bug in EPL-MLIR, please report it "
           "with this model";
  return result;
}

FailureOr<Step> mlir::epl::buildStep(ModuleOp module,
                                     const CompileOptions &options,
                                     PhaseTimer &timer, std::string &error) {
  // A key nothing implements is an error even where nothing trains (a
  // forward under amp.level would silently run in f32).
  if (failed(Config::checkImplemented(module, [&] {
        return module.emitError(::epl::rt::toolName() + ": ");
      })))
    return failure();
  if (failed(Config::get(module).checkTarget(
          options.target == Target::CUDA || options.emulateGPU,
          [&] { return module.emitError(::epl::rt::toolName() + ": "); })))
    return failure();
  // What upstream's verifiers let through and the pipeline indexes with.
  if (failed(verifyUpstreamGapsIn(module, ::epl::rt::toolName())))
    return failure();
  // bf16 arithmetic has no lowering here (its conversions would be
  // compiler-rt calls the JIT cannot find, and matmuls would sum in bf16):
  // it comes with mixed precision (amp.level).
  WalkResult bf16 = module.walk<WalkOrder::PreOrder>([](Operation *op) {
    if (isa<tensor::EmptyOp>(op))
      return WalkResult::advance();
    for (Type type : op->getResultTypes())
      if (getElementTypeOrSelf(type).isBF16()) {
        op->emitError() << ::epl::rt::toolName()
                        << ": this op computes in bf16, which the runners do "
                           "not (mixed precision, amp.level, is not built "
                           "yet): compute in f32 (a PyTorch model: without "
                           "torch.autocast to bfloat16)";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (bf16.wasInterrupted())
    return failure();
  FailureOr<StepFunctions> step = findEntryPoint(module, options.entry, error);
  if (failed(step))
    return failure();
  // What a runner passes, said at the argument the user wrote (after the
  // step is built, describeProgram knows no line).
  for (func::FuncOp fn : step->functions)
    for (BlockArgument arg : fn.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (type && type.hasStaticShape() && dtypeOf(type.getElementType()))
        continue;
      auto name =
          fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "epl.name");
      return emitError(arg.getLoc())
             << ::epl::rt::toolName() << ": argument "
             << (name ? "'" + name.str() + "'"
                      : std::to_string(arg.getArgNumber()))
             << " of @" << fn.getSymName() << " has type " << arg.getType()
             << "; runners pass statically shaped f32, f64, i32 and i64 "
                "tensors";
    }
  // A model's forward runs as written: on several ranks each would compute
  // the whole batch, its scopes and stages unpartitioned. (A hand-written
  // per-device program, with shards of arguments or collectives, runs on
  // several.)
  auto perDevice = [](func::FuncOp fn) {
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
      if (fn.getArgAttr(i, EPLDialect::kShardAttrName))
        return true;
    return fn
        .walk([](CollectiveOpInterface) { return WalkResult::interrupt(); })
        .wasInterrupted();
  };
  if (!options.train && options.devices > 1 && !step->pipeline &&
      isModel(step->functions.front()) && !perDevice(step->functions.front())) {
    error = "--no-train runs @" + step->name +
            "'s forward as written, unpartitioned (its batch, scopes and "
            "stages are partitioned only for training): run it on one "
            "rank, not " +
            std::to_string(options.devices);
    return failure();
  }
  // An L0 model trains: build its training step first (the same pipeline
  // as `epl-opt --epl-training-step`), on several devices planned and
  // partitioned too (epl-parallelize).
  // (Of an L0 model, of a training step built already, or of a function
  // whose arguments are untagged: an untagged @main's ids are bounded by
  // its gathers too. A step already partitioned gives the bounds of its
  // ids, not fan-ins: its local shapes would give other ones.)
  InitHints hints;
  func::FuncOp entry = step->functions.front();
  if (!step->pipeline)
    hints = analyzeInitHints(entry, /*fanIns=*/!perDevice(entry));
  if (!step->pipeline && isModel(entry) && options.train) {
    PassManager pm(module.getContext());
    ParallelizeOptions parallelize;
    parallelize.devices = options.devices;
    buildTrainingStepPipeline(pm, parallelize);
    if (failed(runPhase(pm, module, "building the training step")))
      return failure();
    timer.done("autodiff");
    // A model with pipeline stages is now an epl.pipeline of its name.
    step = findEntryPoint(module, step->name, error);
    if (failed(step))
      return failure();
  }
  FailureOr<Program> program = describeProgram(module, *step, error);
  if (failed(program))
    return failure();
  applyInitHints(hints, program->args);
  for (Stage &stage : program->stages)
    applyInitHints(hints, stage.entry.args);
  // The static estimate of each stage's peak, next to the measured one in
  // the report.
  {
    PassManager pm(module.getContext());
    // The buffers the lowering makes at tensor level are buffers of the step
    // too: decomposed aggregates, the patches convolutions read through
    // BLAS, and what fusion leaves (the lowering's first steps, run here so
    // the estimate sees them).
    bool gpu = options.target == Target::CUDA || options.emulateGPU;
    addTensorRewrites(pm, options.blas, gpu);
    addKernelFormation(pm, options.blas, gpu);
    EPLEstimateMemoryPassOptions estimate;
    estimate.print = false;
    estimate.blas = options.blas;
    // On a GPU under offload, the arguments' device copies come and go
    // around their uses (epl-copy-arguments-to-device); without it they
    // stay for the whole step (lowerStep adds them).
    estimate.argumentsAroundUse = offloadsArguments(module, options);
    pm.addPass(createEPLEstimateMemoryPass(estimate));
    if (failed(runPhase(pm, module, "estimating memory")))
      return failure();
    for (auto [stage, function] : llvm::zip(program->stages, step->functions))
      if (auto figures = function->getAttrOfType<DictionaryAttr>(
              EPLDialect::kMemoryEstimateAttrName))
        if (auto peak = figures.getAs<IntegerAttr>("peak"))
          stage.estimatedPeakBytes = peak.getInt();
    timer.done("estimate");
  }
  // Gradients without an update (epl-autodiff's output run as it is): each
  // step repeats the same loss, which would pass for training.
  for (const Stage &stage : program->stages) {
    auto returns = [&](ResultKind kind) {
      return llvm::any_of(stage.entry.results,
                          [&](const EntryResult &r) { return r.kind == kind; });
    };
    if (returns(ResultKind::Grad) && !returns(ResultKind::Param))
      notes() << ::epl::rt::toolName() << ": warning: @" << stage.entry.name
              << " returns gradients but updates no parameter; run "
                 "epl-apply-optimizer on it (or give epl-run the L0 "
                 "model) to train\n";
  }
  return Step{std::move(step->functions), std::move(*program)};
}

namespace {
size_t instructionCount(llvm::Module &m) {
  size_t n = 0;
  for (llvm::Function &f : m)
    n += f.getInstructionCount();
  return n;
}
} // namespace

namespace {
/// The analysis managers of a new-pass-manager run, registered with `pb`.
struct AnalysisManagers {
  explicit AnalysisManagers(llvm::PassBuilder &pb) {
    pb.registerModuleAnalyses(module);
    pb.registerCGSCCAnalyses(cgscc);
    pb.registerFunctionAnalyses(function);
    pb.registerLoopAnalyses(loop);
    pb.crossRegisterProxies(loop, function, cgscc, module);
  }
  llvm::LoopAnalysisManager loop;
  llvm::FunctionAnalysisManager function;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager module;
};

/// Replaces each load and store of a struct or array in `f` by loads and
/// stores of its scalar fields.
void splitAggregateAccesses(llvm::Function &f) {
  SmallVector<llvm::Instruction *> accesses;
  for (llvm::BasicBlock &block : f)
    for (llvm::Instruction &i : block)
      if ((isa<llvm::StoreInst>(i) && cast<llvm::StoreInst>(i)
                                          .getValueOperand()
                                          ->getType()
                                          ->isAggregateType()) ||
          (isa<llvm::LoadInst>(i) && i.getType()->isAggregateType()))
        accesses.push_back(&i);
  for (llvm::Instruction *access : accesses) {
    llvm::IRBuilder<> b(access);
    auto *store = dyn_cast<llvm::StoreInst>(access);
    llvm::Type *type =
        store ? store->getValueOperand()->getType() : access->getType();
    llvm::Value *pointer = llvm::getLoadStorePointerOperand(access);
    llvm::Value *loaded = llvm::PoisonValue::get(type);
    SmallVector<unsigned> path;
    SmallVector<llvm::Value *> gepIndices{b.getInt32(0)};
    std::function<void(llvm::Type *)> visit = [&](llvm::Type *t) {
      if (t->isAggregateType()) {
        unsigned n = isa<llvm::StructType>(t)
                         ? t->getStructNumElements()
                         : (unsigned)t->getArrayNumElements();
        for (unsigned k = 0; k < n; ++k) {
          path.push_back(k);
          gepIndices.push_back(b.getInt32(k));
          visit(isa<llvm::StructType>(t) ? t->getStructElementType(k)
                                         : t->getArrayElementType());
          gepIndices.pop_back();
          path.pop_back();
        }
        return;
      }
      llvm::Value *field = b.CreateInBoundsGEP(type, pointer, gepIndices);
      if (store)
        b.CreateStore(b.CreateExtractValue(store->getValueOperand(), path),
                      field);
      else
        loaded = b.CreateInsertValue(loaded, b.CreateLoad(t, field), path);
    };
    visit(type);
    if (!store)
      access->replaceAllUsesWith(loaded);
    access->eraseFromParent();
  }
}

/// Gives each kernel the constants its every call passes, and drops the
/// arguments it then no longer reads. A kernel takes each buffer as a memref
/// descriptor, 3 + 2 x rank scalars (allocated and aligned pointers, offset,
/// sizes, strides), and its static shape makes all but the aligned pointer
/// the same constants at every call: the glue's calls shrink to about one
/// argument a buffer (the glue's instruction selection and register
/// allocation, on one function as long as the model is deep, are most of
/// the JIT's time). Only plain data (integers, floats, null) is substituted:
/// a global's address would refer to the kernels module's own copy of the
/// global once the kernels are optimized apart. A kernel whose address is
/// taken (called through epl_rt_parallel_for's task) keeps its signature.
void specializeKernelArguments(
    llvm::Module &m,
    llvm::function_ref<bool(const llvm::GlobalValue *)> isKernel) {
  SmallVector<llvm::Function *> kernels;
  for (llvm::Function &f : m)
    if (isKernel(&f) && !f.isDeclaration() && !f.isVarArg() &&
        f.getReturnType()->isVoidTy() &&
        llvm::none_of(f.args(), [](const llvm::Argument &arg) {
          return arg.hasPassPointeeByValueCopyAttr() || arg.hasStructRetAttr();
        }))
      kernels.push_back(&f);
  for (llvm::Function *f : kernels) {
    SmallVector<llvm::CallInst *> calls;
    bool directOnly = true;
    for (llvm::User *user : f->users()) {
      auto *call = dyn_cast<llvm::CallInst>(user);
      if (!call || call->getCalledFunction() != f || call->hasOperandBundles())
        directOnly = false;
      else
        calls.push_back(call);
    }
    if (!directOnly || calls.empty())
      continue;
    SmallVector<unsigned> kept;
    for (llvm::Argument &arg : f->args()) {
      unsigned i = arg.getArgNo();
      auto *common =
          dyn_cast<llvm::ConstantData>(calls.front()->getArgOperand(i));
      for (llvm::CallInst *call : calls)
        if (call->getArgOperand(i) != common)
          common = nullptr;
      if (common)
        arg.replaceAllUsesWith(common);
      if (!arg.use_empty())
        kept.push_back(i);
    }
    if (kept.size() == f->arg_size())
      continue;
    SmallVector<llvm::Type *> types;
    SmallVector<llvm::AttributeSet> argAttrs;
    llvm::AttributeList attrs = f->getAttributes();
    for (unsigned i : kept) {
      types.push_back(f->getArg(i)->getType());
      argAttrs.push_back(attrs.getParamAttrs(i));
    }
    auto *type = llvm::FunctionType::get(f->getReturnType(), types, false);
    llvm::Function *specialized = llvm::Function::Create(
        type, f->getLinkage(), f->getAddressSpace(), "", &m);
    specialized->copyAttributesFrom(f);
    specialized->setAttributes(llvm::AttributeList::get(
        m.getContext(), attrs.getFnAttrs(), attrs.getRetAttrs(), argAttrs));
    specialized->copyMetadata(f, 0);
    specialized->splice(specialized->begin(), f);
    for (auto [k, i] : llvm::enumerate(kept)) {
      f->getArg(i)->replaceAllUsesWith(specialized->getArg(k));
      specialized->getArg(k)->takeName(f->getArg(i));
    }
    for (llvm::CallInst *call : calls) {
      SmallVector<llvm::Value *> operands;
      SmallVector<llvm::AttributeSet> callArgAttrs;
      llvm::AttributeList callAttrs = call->getAttributes();
      for (unsigned i : kept) {
        operands.push_back(call->getArgOperand(i));
        callArgAttrs.push_back(callAttrs.getParamAttrs(i));
      }
      auto *replacement = llvm::CallInst::Create(type, specialized, operands,
                                                 "", call->getIterator());
      replacement->setCallingConv(call->getCallingConv());
      replacement->setTailCallKind(call->getTailCallKind());
      replacement->setAttributes(
          llvm::AttributeList::get(m.getContext(), callAttrs.getFnAttrs(),
                                   callAttrs.getRetAttrs(), callArgAttrs));
      replacement->copyMetadata(*call);
      call->eraseFromParent();
    }
    specialized->takeName(f);
    f->eraseFromParent();
  }
}
} // namespace

void mlir::epl::optimizeLLVMModule(llvm::Module &m,
                                   const CompileOptions &options,
                                   llvm::TargetMachine *tm) {
  size_t before = instructionCount(m);
  // The kernels (`__epl_kernel_*`, leaf functions) are where the step spends
  // its time. The glue around them (calls, allocations, collectives) is one
  // large straight-line function per step, whose size grows with the
  // model's depth while the kernels do not (identical ops share one); the
  // module-wide passes of LLVM's pipeline and SelectionDAG take time on it
  // that grows faster than its size (12 transformer blocks: 6 s to
  // optimize). So the kernels are optimized in a module of their own, and
  // the glue runs as it is, selected by FastISel.
  auto isKernel = [](const llvm::GlobalValue *gv) {
    return isa<llvm::Function>(gv) && isKernelName(gv->getName());
  };
  // The JIT (mlir::ExecutionEngine) gave every function with external
  // linkage a `_mlir_<name>` wrapper taking packed arguments, before this
  // runs. Only the C interfaces' (`_mlir__mlir_ciface_*`, the entry points)
  // are looked up: the others would be compiled for nothing (the entry's
  // unpacks thousands of descriptor fields on a deep model), and a kernel's
  // would keep each kernel from its constants.
  // (The C interfaces themselves, `_mlir_ciface_*`, are what epl-compile's
  // artifact calls.)
  for (llvm::Function &f : llvm::make_early_inc_range(m))
    if (f.getName().starts_with("_mlir_") &&
        !f.getName().starts_with("_mlir__mlir_ciface_") &&
        !f.getName().starts_with("_mlir_ciface_") && !f.isDeclaration() &&
        f.use_empty())
      f.eraseFromParent();
  // A C interface (`_mlir_ciface_<f>`) loads each descriptor its caller
  // passes and calls `f` with every field as an argument, 3 + 2 x rank per
  // buffer; `f` packs them into descriptors again. Where it is `f`'s only
  // caller, it absorbs `f`, and the folding below removes both halves.
  for (llvm::Function &wrapper : m) {
    if (wrapper.isDeclaration() ||
        !wrapper.getName().starts_with("_mlir_ciface_"))
      continue;
    llvm::Function *f =
        m.getFunction(wrapper.getName().drop_front(strlen("_mlir_ciface_")));
    if (!f || f->isDeclaration() || !f->hasOneUse())
      continue;
    auto *call = dyn_cast<llvm::CallInst>(f->user_back());
    if (!call || call->getFunction() != &wrapper ||
        call->getCalledFunction() != f)
      continue;
    llvm::InlineFunctionInfo info;
    if (llvm::InlineFunction(*call, info).isSuccess() && f->use_empty())
      f->eraseFromParent();
  }
  // FastISel cannot select a load or store of a whole memref descriptor (how
  // the glue passes one to the runtime) nor an insertvalue building one, and
  // hands the rest of the basic block to SelectionDAG: split those accesses
  // field by field, then fold the descriptors away, in time linear in the
  // glue. That also leaves the constants the glue passes to kernels in
  // plain sight.
  for (llvm::Function &f : m)
    if (!f.isDeclaration() && !isKernel(&f))
      splitAggregateAccesses(f);
  {
    llvm::PassBuilder pb(tm);
    AnalysisManagers am(pb);
    llvm::FunctionPassManager glue;
    glue.addPass(llvm::InstSimplifyPass());
    glue.addPass(llvm::DCEPass());
    for (llvm::Function &f : m)
      if (!f.isDeclaration() && !isKernel(&f))
        glue.run(f, am.function);
  }
  specializeKernelArguments(m, isKernel);

  unsigned level = options.optLevel;
  if (level != 0) {
    // With the kernels go the private functions they call (the runtime's
    // wrappers, such as the one reporting a failed assertion) and the
    // globals: private symbols only link within a module. Other functions
    // link by name.
    llvm::SmallPtrSet<const llvm::Function *, 16> callees;
    SmallVector<const llvm::Function *> worklist;
    for (llvm::Function &f : m)
      if (isKernel(&f))
        worklist.push_back(&f);
    while (!worklist.empty()) {
      const llvm::Function *f = worklist.pop_back_val();
      for (const llvm::BasicBlock &block : *f)
        for (const llvm::Instruction &i : block)
          if (auto *call = dyn_cast<llvm::CallBase>(&i))
            if (const llvm::Function *callee = call->getCalledFunction())
              if (callee->hasLocalLinkage() && !isKernel(callee) &&
                  callees.insert(callee).second)
                worklist.push_back(callee);
    }
    llvm::ValueToValueMapTy map;
    std::unique_ptr<llvm::Module> kernels =
        llvm::CloneModule(m, map, [&](const llvm::GlobalValue *gv) {
          // Not the constructor lists (the cuda target's kernel images are
          // loaded by the glue's constructors): appended twice on linking.
          if (gv->hasAppendingLinkage())
            return false;
          return isKernel(gv) || isa<llvm::GlobalVariable>(gv) ||
                 callees.contains(dyn_cast<llvm::Function>(gv));
        });
    // Linked back by name below: the kernels must be visible symbols.
    for (llvm::Function &f : *kernels)
      if (isKernel(&f) && !f.isDeclaration())
        f.setLinkage(llvm::GlobalValue::ExternalLinkage);
    // Buffers that epl-outline-kernels found never overlap at any call.
    for (llvm::Function &f : *kernels)
      if (f.getFnAttribute(kNoAliasAttribute).getValueAsString() == "true")
        for (llvm::Argument &arg : f.args())
          if (arg.getType()->isPointerTy())
            arg.addAttr(llvm::Attribute::NoAlias);

    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = false;
    tuning.LoopInterleaving = true;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    llvm::PassBuilder pb(tm, tuning);
    AnalysisManagers am(pb);
    llvm::OptimizationLevel levels[] = {
        llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
        llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
    pb.buildPerModuleDefaultPipeline(levels[std::min(level, 3u)])
        .run(*kernels, am.module);

    for (llvm::Function &f : m)
      if (isKernel(&f))
        f.deleteBody();
    // Cannot fail: the kernels module was cloned from `m`.
    bool failed = llvm::Linker::linkModules(m, std::move(kernels));
    assert(!failed && "linking the optimized kernels back");
    (void)failed;
  }
  for (llvm::Function &f : m)
    if (!f.isDeclaration() && !isKernel(&f)) {
      f.addFnAttr(llvm::Attribute::OptimizeNone);
      f.addFnAttr(llvm::Attribute::NoInline);
    }
  if (options.timing)
    llvm::errs() << ::epl::rt::toolName() << ": LLVM IR " << before << " -> "
                 << instructionCount(m) << " instructions\n";
}

FailureOr<llvm::orc::JITTargetMachineBuilder>
mlir::epl::hostTargetBuilder(const CompileOptions &options,
                             std::string &error) {
  if (options.optLevel > 3) {
    error = "-O takes 0, 1, 2 or 3";
    return failure();
  }
  // The optimizer needs the host's target to cost loops: without it, LLVM
  // unrolls and vectorizes blindly and compile times explode.
  auto hostTarget = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!hostTarget) {
    error =
        "cannot detect the host CPU: " + llvm::toString(hostTarget.takeError());
    return failure();
  }
  if (!options.hostCPU.empty()) {
    // The named CPU's features, not this machine's.
    hostTarget->setCPU(options.hostCPU);
    hostTarget->getFeatures() = llvm::SubtargetFeatures();
    std::string why;
    const llvm::Target *target =
        llvm::TargetRegistry::lookupTarget(hostTarget->getTargetTriple(), why);
    std::unique_ptr<llvm::MCSubtargetInfo> info(
        target ? target->createMCSubtargetInfo(hostTarget->getTargetTriple(),
                                               "", "")
               : nullptr);
    if (!info || !info->isCPUStringValid(options.hostCPU)) {
      error = "--host-cpu: '" + options.hostCPU +
              "' is not a CPU LLVM knows "
              "for " +
              hostTarget->getTargetTriple().str() +
              " (e.g. x86-64-v3, sapphirerapids, znver4)";
      return failure();
    }
  }
  llvm::CodeGenOptLevel levels[] = {
      llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less,
      llvm::CodeGenOptLevel::Default, llvm::CodeGenOptLevel::Aggressive};
  hostTarget->setCodeGenOptLevel(levels[std::min(options.codegenOptLevel, 3u)]);
  // Small code, position independent, as a shared object is: LLVM's
  // fast instruction selector only calls a function directly in the small
  // code model, and in the JIT's default (large) one hands every call of
  // the host code to SelectionDAG. The JIT's linker reaches what is further
  // than 2 GiB (the runtime, BLAS) through stubs and a GOT; its own sections
  // stay within reach of each other (NearbySectionMapper).
  hostTarget->setCodeModel(llvm::CodeModel::Small);
  hostTarget->setRelocationModel(llvm::Reloc::PIC_);
  return std::move(*hostTarget);
}

namespace {
/// The JIT's sections (code, constants, data, its GOT) within one reserved
/// GiB of address space. In the small code model they reach each other with
/// 32-bit PC-relative offsets, which RuntimeDyld does not check: sections
/// mapped further apart than 2 GiB would silently run wrong code. The
/// address space is reserved once per process and not reused; running out
/// of it is an error of the JIT, not a wrong offset.
class NearbySectionMapper final
    : public llvm::SectionMemoryManager::MemoryMapper {
public:
  static NearbySectionMapper &get() {
    static NearbySectionMapper mapper;
    return mapper;
  }

  llvm::sys::MemoryBlock
  allocateMappedMemory(llvm::SectionMemoryManager::AllocationPurpose,
                       size_t bytes, const llvm::sys::MemoryBlock *,
                       unsigned flags, std::error_code &ec) override {
    std::lock_guard<std::mutex> lock(mutex);
    size_t size = llvm::alignTo(bytes, pageSize);
    if (!base || used + size > kReserved) {
      ec = std::make_error_code(std::errc::not_enough_memory);
      return {};
    }
    llvm::sys::MemoryBlock block(base + used, size);
    used += size;
    ec = llvm::sys::Memory::protectMappedMemory(block, flags);
    return ec ? llvm::sys::MemoryBlock() : block;
  }

  std::error_code protectMappedMemory(const llvm::sys::MemoryBlock &block,
                                      unsigned flags) override {
    return llvm::sys::Memory::protectMappedMemory(block, flags);
  }

  std::error_code releaseMappedMemory(llvm::sys::MemoryBlock &block) override {
    // The pages go back to the system; the addresses stay reserved.
    if (::mmap(block.base(), block.allocatedSize(), PROT_NONE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
               0) == MAP_FAILED)
      return std::error_code(errno, std::generic_category());
    block = llvm::sys::MemoryBlock();
    return {};
  }

private:
  static constexpr size_t kReserved = size_t(1) << 30;

  NearbySectionMapper() : pageSize(llvm::sys::Process::getPageSizeEstimate()) {
    void *region = ::mmap(nullptr, kReserved, PROT_NONE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    base = region == MAP_FAILED ? nullptr : static_cast<char *>(region);
  }

  std::mutex mutex;
  size_t pageSize;
  char *base = nullptr;
  size_t used = 0;
};

/// The runtime's symbols, for the calls of the lowered program.
void registerRuntimeSymbols(ExecutionEngine &engine) {
  engine.registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (const ::epl::rt::Symbol &symbol : ::epl::rt::symbols())
      map[interner(symbol.name)] = {
          llvm::orc::ExecutorAddr::fromPtr(symbol.address),
          llvm::JITSymbolFlags::Exported};
    return map;
  });
}

/// A JIT for the host CPU that optimizes `module` as optimizeLLVMModule
/// does.
FailureOr<std::unique_ptr<ExecutionEngine>>
createEngine(ModuleOp module, const CompileOptions &options,
             std::string &error) {
  FailureOr<llvm::orc::JITTargetMachineBuilder> hostTarget =
      hostTargetBuilder(options, error);
  if (failed(hostTarget))
    return failure();
  auto optTarget = hostTarget->createTargetMachine();
  auto jitTarget = hostTarget->createTargetMachine();
  for (auto *target : {&optTarget, &jitTarget})
    if (!*target) {
      error =
          "cannot target the host CPU: " + llvm::toString(target->takeError());
      return failure();
    }
  // `transformer` is a function_ref: the callable must outlive `create`,
  // which runs it. (A temporary lambda here left the optimizer a dangling
  // target machine: no host features, no vector code in the JIT.)
  std::unique_ptr<llvm::TargetMachine> tm = std::move(*optTarget);
  auto optimize = [&](llvm::Module *m) -> llvm::Error {
    optimizeLLVMModule(*m, options, tm.get());
    return llvm::Error::success();
  };
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = optimize;
  engineOptions.enableGDBNotificationListener = false;
  engineOptions.enableObjectDump = !options.objectDumpPath.empty();
  engineOptions.sectionMemoryMapper = &NearbySectionMapper::get();
  auto engine =
      ExecutionEngine::create(module, engineOptions, std::move(*jitTarget));
  if (!engine) {
    error = "JIT compilation failed: " + llvm::toString(engine.takeError());
    return failure();
  }
  return std::move(*engine);
}
} // namespace

LogicalResult mlir::epl::lowerStep(ModuleOp module, Step &step,
                                   const CompileOptions &options,
                                   PhaseTimer &timer) {
  for (auto [k, function] : llvm::enumerate(step.functions)) {
    Stage &stage = step.program.stages[k];
    stage.inPlace = wrapEntryPoint(module, function, k);
    bool gpu = options.target == Target::CUDA || options.emulateGPU;
    bool offload = offloadsArguments(module, options);
    stage.residentInPlace = gpu && !offload;
    // On a GPU the step's arguments and results are device buffers too
    // (epl-copy-arguments-to-device): a result written over its argument is
    // one, the others each their own. (With offload each lives only around
    // its uses, which the estimate counted.)
    if (gpu && !offload && stage.estimatedPeakBytes)
      *stage.estimatedPeakBytes += stage.callBytes();
  }
  PassManager pm(module.getContext());
  if (options.target == Target::CUDA) {
    CUDALoweringOptions lowering;
    lowering.chip = options.gpuChip;
    switch (options.gpuFormat) {
    case GPUFormat::Cubin:
      lowering.format = "bin";
      break;
    case GPUFormat::Fatbin:
      lowering.format = "fatbin";
      break;
    case GPUFormat::PTX:
      lowering.format = "isa";
      break;
    }
    lowering.hostKernels = options.gpuHostKernels;
    buildCUDALoweringPipeline(pm, lowering);
  } else {
    CPULoweringOptions lowering;
    lowering.blas = options.blas;
    lowering.emulateGPU = options.emulateGPU;
    buildCPULoweringPipeline(pm, lowering);
  }
  if (failed(runPhase(pm, module, "the lowering")))
    return failure();
  timer.done("lowering");
  return success();
}

FailureOr<LoadedProgram> mlir::epl::loadProgram(ModuleOp module, Step step,
                                                const CompileOptions &options,
                                                PhaseTimer &timer,
                                                std::string &error) {
  if (failed(lowerStep(module, step, options, timer)))
    return failure();

  FailureOr<std::unique_ptr<ExecutionEngine>> engine =
      createEngine(module, options, error);
  if (failed(engine))
    return failure();
  registerRuntimeSymbols(**engine);
  timer.done("jit-setup");
  LoadedProgram loaded;
  loaded.program = std::move(step.program);
  for (auto [k, stage] : llvm::enumerate(loaded.program.stages)) {
    auto packed =
        (*engine)->lookupPacked("_mlir_ciface_" + entryWrapperName(k));
    if (!packed) {
      error = "JIT lookup failed: " + llvm::toString(packed.takeError());
      return failure();
    }
    stage.call = *packed;
  }
  // The module's constructors: on a GPU they hand the runtime the kernel
  // images (mgpuModuleLoad), which launches look up. After the lookups,
  // which report what fails to compile (initialize() cannot).
  (*engine)->initialize();
  // Every stage is compiled now (the lookups above materialized them).
  if (!options.objectDumpPath.empty()) {
    // Whole or not at all, as every file epl-run writes: into a temporary
    // file next to it, then renamed. dumpToObjectFile only prints what goes
    // wrong, so the temporary is created (and its folder checked) first.
    const std::string &path = options.objectDumpPath;
    std::string temporary = path + ".tmp" + std::to_string(::getpid());
    std::error_code ec;
    { llvm::raw_fd_ostream probe(temporary, ec); }
    if (!ec) {
      (*engine)->dumpToObjectFile(temporary);
      ec = llvm::sys::fs::rename(temporary, path);
    }
    if (ec) {
      llvm::sys::fs::remove(temporary);
      error = "cannot write --dump-object " + path + ": " + ec.message();
      return failure();
    }
  }
  loaded.engine = std::move(*engine);
  timer.done("jit-compile");
  return std::move(loaded);
}
