//===- Artifact.h - Ahead-of-time compiled programs -------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// `epl-compile` writes a step, compiled ahead of time, as a shared object
// (an artifact) that `epl-exec` loads with dlopen and runs with the same run
// loop as epl-run (Run.h). The artifact carries its own description, the
// manifest: a JSON document in the ELF section `.epl_manifest` (also the
// symbol `__epl_manifest`) holding the Program (Program.h) without its
// function pointers, the symbol of each stage's function, the format and
// the versions that made it. The runner reads the manifest from the file
// before loading it, so that an artifact of another version or machine is
// one error line, not a failed relocation. No MLIR: an ahead-of-time runner
// links this, the run loop and the runtime only (docs/aot.md).
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_ARTIFACT_H
#define EPL_RUNNER_ARTIFACT_H

#include "epl/Runner/Program.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <string>

namespace mlir::epl {

/// The manifest's format; a runner reads its own format only.
constexpr int kManifestFormat = 3;

/// The ELF section and the symbol that hold the manifest.
constexpr const char *kManifestSection = ".epl_manifest";
constexpr const char *kManifestSymbol = "__epl_manifest";

/// After the shared object, epl-compile appends a trailer: the SHA-256 of
/// every byte before it, then this magic. The loader
/// ignores bytes past the ELF image; the runner refuses an artifact whose
/// bytes no longer match, before dlopen runs damaged code.
constexpr llvm::StringLiteral kChecksumMagic = "EPL-SHA256";

/// The trailer to append to `image` (the linked shared object's bytes).
std::string checksumTrailer(llvm::StringRef image);

/// The symbol of stage `stage`'s function in an artifact: the packed form
/// of its entry wrapper (EntryFunction: a pointer to each argument's and
/// result's descriptor pointer).
std::string artifactStageSymbol(size_t stage);

/// What the code of stage `stage` was compiled to be called with: each
/// argument's and result's element type and local shape, in order. An
/// artifact holds it beside the stage's function
/// (artifactSignatureSymbol), and the runner checks the manifest against
/// it: a manifest edited to call the code otherwise (a result dropped, an
/// argument added) would have it read or write past its buffers.
std::string stageSignature(const Stage &stage);
std::string artifactSignatureSymbol(size_t stage);

/// "EPL-MLIR <version>": who made an artifact, and who may run it.
std::string eplVersionString();

/// A digest of the runtime's C ABI (every symbol of RuntimeSymbols.def):
/// an artifact calls the runtime of the runner that loads it.
std::string runtimeInterfaceDigest();

struct Manifest {
  int format = kManifestFormat;
  /// eplVersionString() of the compiler.
  std::string producer;
  /// runtimeInterfaceDigest() of the compiler.
  std::string runtimeInterface;
  /// "cpu" (or "cuda").
  std::string target = "cpu";
  /// The cuda target's kernels: "cubin for sm_90", "fatbin for sm_90 and
  /// newer (its PTX)", "PTX for sm_90", or "for the host (the fake
  /// driver's)"; empty for the CPU.
  std::string gpuKernels;
  /// The target triple and CPU the code was generated for.
  std::string triple;
  std::string cpu;
  /// The devices the step was built for (epl-compile --devices).
  int64_t devices = 1;
  /// The step; the stages' calls are null.
  Program program;
};

/// The manifest as JSON.
std::string writeManifest(const Manifest &manifest);

/// Parses a manifest; fails with `error` when it is not one.
llvm::FailureOr<Manifest> parseManifest(llvm::StringRef json,
                                        std::string &error);

/// Reads and checks the manifest of the artifact at `path`: a readable ELF
/// shared object for this machine's architecture with a manifest of this
/// runner's format, version and runtime ABI. Without `toRun` (to show what
/// it is), one of another machine or version is read too. Errors are one
/// line naming the file and what is wrong.
llvm::FailureOr<Manifest> readArtifact(llvm::StringRef path, std::string &error,
                                       bool toRun = true);

/// Loads the artifact at `path` (dlopen, every symbol bound now) and points
/// the calls of `manifest.program`'s stages into it. The handle stays open
/// for the process's lifetime.
llvm::LogicalResult loadArtifact(llvm::StringRef path, Manifest &manifest,
                                 std::string &error);

} // namespace mlir::epl

#endif // EPL_RUNNER_ARTIFACT_H
