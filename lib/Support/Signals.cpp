//===- Signals.cpp - Signals a tool was started with ignored --------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Support/Signals.h"

#include <csignal>

using namespace mlir::epl;

/// LLVM's interrupt signals (llvm/lib/Support/Unix/Signals.inc, IntSigs).
static constexpr int kInterrupts[] = {SIGHUP, SIGINT, SIGTERM, SIGUSR2};

IgnoredInterrupts::IgnoredInterrupts() {
  for (int sig : kInterrupts) {
    struct sigaction action;
    if (sigaction(sig, nullptr, &action) == 0 && action.sa_handler == SIG_IGN)
      signals.push_back(sig);
  }
}

void IgnoredInterrupts::restore() const {
  for (int sig : signals)
    std::signal(sig, SIG_IGN);
}
