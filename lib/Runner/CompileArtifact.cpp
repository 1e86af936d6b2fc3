//===- CompileArtifact.cpp - A step compiled into a shared object ---------===//
//
// Part of EPL-MLIR.
//
// The ahead-of-time twin of loadProgram: the same lowering, the same LLVM
// pipeline and target (so that an artifact computes what the JIT computes,
// bit for bit), then code generation into an object and a link by the
// system's C compiler driver into a shared object. Its undefined symbols
// are the runtime's (and libm's): the runner that loads it exports them.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/Artifact.h"
#include "epl/Runner/Compile.h"
#include "epl/Support/Safetensors.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::epl;

namespace {
/// `artifactStageSymbol(stage)(void **args)`: calls the C interface of
/// stage `stage`'s entry wrapper with `*args[i]` as its i-th argument (what
/// the JIT's packed functions do, see ExecutionEngine).
LogicalResult addPackedStage(llvm::Module &m, size_t stage,
                             std::string &error) {
  std::string target = "_mlir_ciface_" + entryWrapperName(stage);
  llvm::Function *callee = m.getFunction(target);
  if (!callee || callee->isDeclaration()) {
    error = "the lowered module has no " + target;
    return failure();
  }
  llvm::LLVMContext &ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  auto *type = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()},
                                       /*isVarArg=*/false);
  auto *packed = llvm::Function::Create(
      type, llvm::GlobalValue::ExternalLinkage, artifactStageSymbol(stage), m);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", packed));
  llvm::SmallVector<llvm::Value *> args;
  for (auto [i, arg] : llvm::enumerate(callee->args())) {
    llvm::Value *slot =
        b.CreateGEP(b.getPtrTy(), packed->getArg(0), b.getInt64(i));
    llvm::Value *pointer = b.CreateLoad(b.getPtrTy(), slot);
    args.push_back(b.CreateLoad(arg.getType(), pointer));
  }
  b.CreateCall(callee, args);
  b.CreateRetVoid();
  return success();
}

/// `text` as an exported C string `symbol`, in `section` when one is named.
void addConstantString(llvm::Module &m, const std::string &symbol,
                       const std::string &text, llvm::StringRef section) {
  llvm::Constant *data = llvm::ConstantDataArray::getString(
      m.getContext(), text, /*AddNull=*/true);
  auto *global = new llvm::GlobalVariable(
      m, data->getType(), /*isConstant=*/true,
      llvm::GlobalValue::ExternalLinkage, data, symbol);
  if (!section.empty())
    global->setSection(section);
  global->setAlignment(llvm::Align(1));
}

/// The manifest as a C string in its own section, and as a symbol.
void addManifest(llvm::Module &m, const std::string &text) {
  addConstantString(m, kManifestSymbol, text, kManifestSection);
}

/// Removes a temporary file when it goes out of scope (and on a signal).
struct TemporaryFile {
  explicit TemporaryFile(std::string path) : path(std::move(path)) {
    llvm::sys::RemoveFileOnSignal(this->path);
  }
  ~TemporaryFile() {
    llvm::sys::fs::remove(path);
    llvm::sys::DontRemoveFileOnSignal(path);
  }
  std::string path;
};
} // namespace

LogicalResult mlir::epl::writeArtifact(ModuleOp module, Step step,
                                       const CompileOptions &options,
                                       const ArtifactOptions &artifact,
                                       PhaseTimer &timer, std::string &error) {
  // Found before anything long runs.
  llvm::ErrorOr<std::string> linker =
      llvm::sys::findProgramByName(artifact.linker);
  if (!linker) {
    error = "cannot find the linker driver '" + artifact.linker +
            "' (a C compiler, to link the shared object): " +
            linker.getError().message();
    return failure();
  }
  // A path that cannot be written fails before anything long runs too.
  {
    llvm::SmallString<256> probe;
    if (std::error_code ec = llvm::sys::fs::createUniqueFile(
            artifact.output + ".probe-%%%%%%", probe)) {
      error = "cannot write " + artifact.output + ": " + ec.message();
      return failure();
    }
    llvm::sys::fs::remove(probe);
  }
  if (failed(lowerStep(module, step, options, timer)))
    return failure();

  FailureOr<llvm::orc::JITTargetMachineBuilder> builder =
      hostTargetBuilder(options, error);
  if (failed(builder))
    return failure();
  builder->setRelocationModel(llvm::Reloc::PIC_);
  auto tm = builder->createTargetMachine();
  if (!tm) {
    error = "cannot target the host CPU: " + llvm::toString(tm.takeError());
    return failure();
  }
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "epl-artifact");
  if (!llvmModule) {
    error = "cannot translate the lowered module to LLVM IR";
    return failure();
  }
  llvmModule->setDataLayout((*tm)->createDataLayout());
  llvmModule->setTargetTriple((*tm)->getTargetTriple());
  for (size_t k = 0; k < step.program.stages.size(); ++k)
    if (failed(addPackedStage(*llvmModule, k, error)))
      return failure();
  optimizeLLVMModule(*llvmModule, options, tm->get());
  // (After the optimization, which links the module's globals back from
  // the kernels' module, as the manifest is.)
  for (auto [k, stage] : llvm::enumerate(step.program.stages))
    addConstantString(*llvmModule, artifactSignatureSymbol(k),
                      stageSignature(stage), /*section=*/"");

  Manifest manifest;
  manifest.producer = eplVersionString();
  manifest.runtimeInterface = runtimeInterfaceDigest();
  manifest.target = options.target == Target::CUDA ? "cuda" : "cpu";
  // What a GPU machine will be asked to load (--print-manifest shows it).
  if (options.target == Target::CUDA) {
    if (options.gpuHostKernels)
      manifest.gpuKernels = "for the host (the fake driver's)";
    else if (options.gpuFormat == GPUFormat::Fatbin)
      manifest.gpuKernels =
          "fatbin for " + options.gpuChip + " and newer (its PTX)";
    else
      manifest.gpuKernels =
          (options.gpuFormat == GPUFormat::PTX ? "PTX for " : "cubin for ") +
          options.gpuChip;
  }
  manifest.triple = (*tm)->getTargetTriple().str();
  manifest.cpu = (*tm)->getTargetCPU().str();
  manifest.devices = artifact.devices;
  manifest.program = std::move(step.program);
  addManifest(*llvmModule, writeManifest(manifest));
  timer.done("optimize");

  // Code generation into a temporary object.
  llvm::SmallString<128> objectPath;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "epl-artifact", "o", fd, objectPath)) {
    error = "cannot create a temporary object file: " + ec.message();
    return failure();
  }
  TemporaryFile object(objectPath.str().str());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    llvm::legacy::PassManager pm;
    if ((*tm)->addPassesToEmitFile(pm, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
      error = "the host target cannot emit object files";
      return failure();
    }
    pm.run(*llvmModule);
    os.close();
    if (os.has_error()) {
      error = "cannot write " + object.path + ": " + os.error().message();
      os.clear_error();
      return failure();
    }
  }
  timer.done("codegen");

  // Linked next to the output, then renamed over it: the artifact appears
  // whole or not at all.
  llvm::SmallString<256> linkedPath;
  if (std::error_code ec =
          createFileNextTo(artifact.output, linkedPath, /*fd=*/nullptr)) {
    error = "cannot write " + artifact.output + ": " + ec.message();
    return failure();
  }
  TemporaryFile linked(linkedPath.str().str());
  llvm::SmallVector<llvm::StringRef> args = {*linker,     "-shared",   "-o",
                                             linked.path, object.path, "-lm"};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*linker, args, std::nullopt, {}, 0, 0,
                                         &message);
  if (status != 0) {
    error = "linking " + artifact.output + " with " + *linker + " failed" +
            (message.empty() ? " (exit code " + std::to_string(status) + ")"
                             : ": " + message);
    return failure();
  }
  // The checksum the runner checks before loading (Artifact.h).
  {
    auto image = llvm::MemoryBuffer::getFile(linked.path, /*IsText=*/false,
                                             /*RequiresNullTerminator=*/false);
    std::error_code ec = image.getError();
    if (!ec) {
      // A linker that exits 0 without writing the shared object (a
      // --linker that is not one) must not replace a good artifact.
      if (!(*image)->getBuffer().starts_with("\x7f"
                                             "ELF")) {
        error = "linking " + artifact.output + " with " + *linker +
                " wrote no shared object (its output is " +
                std::to_string((*image)->getBufferSize()) +
                " bytes, not ELF): is --linker a C compiler driver?";
        return failure();
      }
      std::string trailer = checksumTrailer((*image)->getBuffer());
      image->reset();
      llvm::raw_fd_ostream out(linked.path, ec, llvm::sys::fs::OF_Append);
      if (!ec) {
        out << trailer;
        out.close();
        ec = out.error();
        out.clear_error();
      }
    }
    if (ec) {
      error = "cannot write " + artifact.output + ": " + ec.message();
      return failure();
    }
  }
  if (std::error_code ec =
          llvm::sys::fs::rename(linked.path, artifact.output)) {
    error = "cannot write " + artifact.output + ": " + ec.message();
    return failure();
  }
  timer.done("link");
  return success();
}
