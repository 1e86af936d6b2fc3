//===- epl-fuzz.cpp - In-process fuzz target for the EPL compiler ---------===//
//
// Part of EPL-MLIR.
//
// A libFuzzer target (issue 16): each input is MLIR source that goes through
// parse and verify, then through each public pipeline on a fresh copy. What
// a compiler must never do is a finding, and ends the process so that
// libFuzzer keeps the input:
//   - a crash or an abort (ASan's reports included, in a sanitizer build);
//   - a pass that succeeds but leaves IR the verifier rejects (the pass
//     manager's own verifier is off; this target verifies after each pass
//     and names the pass);
//   - a parse or a pipeline that fails without an error diagnostic.
// Hangs are libFuzzer's `-timeout`.
//
// Built with clang's -fsanitize=fuzzer (scripts/fuzz.sh), it is libFuzzer,
// mutating tokens rather than bytes (Mutator.h);
// built otherwise, it runs the files named on its command line once each
// (LLVM's runFuzzerOnInputs): how lit replays the test corpus, and how a
// finding is replayed (EPL_FUZZ_VERBOSE=1 prints every diagnostic).
//
//===----------------------------------------------------------------------===//

#include "Mutator.h"

#include "epl/InitEPL.h"
#include "epl/Pipelines/Pipelines.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/FuzzMutate/FuzzerCLI.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <string>

using namespace mlir;

namespace {

/// What epl-opt's users run: `mutate.py` (the seeded run in the suite) runs
/// the same pipelines as separate processes.
constexpr const char *kPipelines[] = {
    "builtin.module(epl-training-step)",
    "builtin.module(epl-parallelize{devices=4})",
    "builtin.module(epl-lower-to-cpu)",
    // epl-run's path: the step of 4 ranks, lowered.
    "builtin.module(epl-training-step{devices=4},epl-lower-to-cpu)",
};

DialectRegistry *registry;

/// How deep the inputs went, printed when the fuzzer exits: mutants the
/// verifier rejects test diagnostics, the others the passes.
struct Depth {
  uint64_t inputs = 0, verified = 0, pipelinesSucceeded = 0;
  ~Depth() {
    if (inputs > 1)
      llvm::errs() << "epl-fuzz: " << inputs << " inputs, " << verified
                   << " parsed and verified, " << pipelinesSucceeded << " of "
                   << verified * std::size(kPipelines)
                   << " pipeline runs on those succeeded\n";
  }
} depth;

/// The current input's diagnostics, printed with a finding.
std::string diagnostics;

[[noreturn]] void finding(const llvm::Twine &what) {
  llvm::errs() << diagnostics;
  llvm::errs() << "epl-fuzz: FINDING: " << what << "\n";
  llvm::errs().flush();
  std::abort();
}

/// Verifies what each pass that succeeded leaves behind, so that a pass
/// making invalid IR is told apart from input the verifier rejects.
struct VerifyAfterEachPass : public PassInstrumentation {
  void runAfterPass(Pass *pass, Operation *op) override {
    if (failed(verify(op)))
      finding("pass '" +
              (pass->getArgument().empty() ? pass->getName()
                                           : pass->getArgument()) +
              "' succeeded but left IR that the verifier rejects (the "
              "errors above)");
  }
};

/// Upstream MLIR code that crashes on some input: not ours to fix, and a
/// crash in it would end every fuzzing run. Such input is skipped, in the
/// parser before it is parsed, in a verifier before it is verified.
/// docs/reliability.md lists them (test/fuzz/mutate.py's KNOWN_UPSTREAM
/// knows the first by its stack frame).
bool reachesKnownUpstreamParserCrash(llvm::StringRef source) {
  // LLVM 22's parser asks an `index` dense array for its bit width (null).
  static const llvm::Regex indexArray("array<[[:space:]]*index");
  if (indexArray.match(source))
    return true;
  // linalg.transpose/reduce/broadcast's custom parsers set their
  // `permutation` or `dimensions` even when its list failed to parse (a
  // null attribute).
  static const llvm::Regex keyword("(dimensions|permutation)[[:space:]]*=");
  static const llvm::Regex list(
      "^[[:space:]]*\\[[[:space:]]*(-?[0-9]+[[:space:]]*"
      "(,[[:space:]]*-?[0-9]+[[:space:]]*)*)?\\]");
  llvm::SmallVector<llvm::StringRef> match;
  for (llvm::StringRef rest = source; keyword.match(rest, &match);) {
    rest = rest.drop_front(match[0].data() + match[0].size() - rest.data());
    if (!list.match(rest))
      return true;
  }
  return false;
}

bool reachesKnownUpstreamVerifierCrash(ModuleOp module) {
  bool found = false;
  module->walk([&](Operation *op) {
    // LLVM 22's tensor.concat verifier indexes the shape with dim(-1).
    if (auto concat = dyn_cast<tensor::ConcatOp>(op))
      if (static_cast<int64_t>(concat.getDim()) < 0)
        found = true;
  });
  return found;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  registerAllPasses();
  epl::registerEPLPassesAndPipelines();
  registry = new DialectRegistry();
  epl::registerEPLDialects(*registry);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ++depth.inputs;
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  context.allowUnregisteredDialects(false);
  // Diagnostics are counted and kept for a finding, not printed: a million
  // of them would be the fuzzer's whole output. An error that should have
  // been reported and was not is what matters.
  unsigned errors = 0;
  diagnostics.clear();
  context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++errors;
    std::string line;
    llvm::raw_string_ostream os(line);
    os << diag.getLocation() << ": " << diag << "\n";
    if (getenv("EPL_FUZZ_VERBOSE"))
      llvm::errs() << line;
    // The last ones matter: the verifier's, after a pass.
    if (diagnostics.size() > 65536)
      diagnostics.clear();
    diagnostics += line;
  });

  // MLIR's lexer reads up to a terminating NUL, which libFuzzer's buffer
  // does not have.
  std::string source(reinterpret_cast<const char *>(data), size);
  if (reachesKnownUpstreamParserCrash(source))
    return -1;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      source, ParserConfig(&context, /*verifyAfterParse=*/false));
  // Input the parser or the verifier rejects is tested (it must get a
  // diagnostic) but not kept in the corpus (-1): mutants of it would mostly
  // be rejected again, never reaching the passes.
  if (!module) {
    if (errors == 0)
      finding("the parser failed without an error");
    return -1;
  }
  if (reachesKnownUpstreamVerifierCrash(*module))
    return -1;
  if (failed(verify(*module))) {
    if (errors == 0)
      finding("the verifier failed without an error");
    return -1;
  }
  ++depth.verified;
  if (getenv("EPL_FUZZ_VERBOSE"))
    llvm::errs() << "epl-fuzz: verified\n";

  for (const char *pipeline : kPipelines) {
    OwningOpRef<ModuleOp> copy = module->clone();
    PassManager pm(&context);
    pm.enableVerifier(false);
    pm.addInstrumentation(std::make_unique<VerifyAfterEachPass>());
    if (failed(parsePassPipeline(pipeline, pm)))
      finding(llvm::Twine("cannot build the pipeline ") + pipeline);
    errors = 0;
    bool ok = succeeded(pm.run(*copy));
    depth.pipelinesSucceeded += ok;
    if (!ok && errors == 0)
      finding(llvm::Twine(pipeline) + " failed without an error");
    if (getenv("EPL_FUZZ_VERBOSE"))
      llvm::errs() << "epl-fuzz: " << pipeline << ": "
                   << (ok ? "succeeded" : "failed") << "\n";
  }
  return 0;
}

#ifdef EPL_LIBFUZZER
/// libFuzzer's mutations replaced by token-level ones (Mutator.h): mutants
/// stay parseable, so the fuzzing reaches the passes.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  std::string mutant = epl::fuzz::mutate(
      std::string(reinterpret_cast<const char *>(data), size), seed);
  if (mutant.size() > maxSize)
    return size;
  std::copy(mutant.begin(), mutant.end(), data);
  return mutant.size();
}
#else
int main(int argc, char **argv) {
  return llvm::runFuzzerOnInputs(argc, argv, LLVMFuzzerTestOneInput,
                                 LLVMFuzzerInitialize);
}
#endif
