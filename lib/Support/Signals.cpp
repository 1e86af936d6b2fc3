//===- Signals.cpp - Signals a tool was started with ignored --------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Support/Signals.h"

#include <csignal>

using namespace mlir::epl;

/// The signals LLVM handles (llvm/lib/Support/Unix/Signals.inc: IntSigs,
/// KillSigs, InfoSigs) that come from outside rather than from a fault.
static constexpr int kSent[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM,
                                SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ};

IgnoredSignals::IgnoredSignals() {
  for (int sig : kSent) {
    struct sigaction action;
    if (sigaction(sig, nullptr, &action) == 0 && action.sa_handler == SIG_IGN)
      signals.push_back(sig);
  }
}

void IgnoredSignals::restore() const {
  for (int sig : signals)
    std::signal(sig, SIG_IGN);
  // A file past the size limit (ulimit -f) is a write error ("File too
  // large", and the writer's cleanup), not SIGXFSZ's kill, which LLVM's
  // handlers (registered once, by InitLLVM) would report as a crash: for
  // every file a tool writes.
  std::signal(SIGXFSZ, SIG_IGN);
}
