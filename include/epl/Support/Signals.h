//===- Signals.h - Signals a tool was started with ignored ------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_SUPPORT_SIGNALS_H
#define EPL_SUPPORT_SIGNALS_H

#include "llvm/ADT/SmallVector.h"

namespace mlir::epl {
/// The signals another process sends (SIGHUP, SIGINT, SIGQUIT, SIGTERM,
/// SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ) that a tool was started with
/// ignored: `nohup`'s SIGHUP, a script's background job's SIGINT and
/// SIGQUIT. InitLLVM takes each over, to remove the files being written
/// (llvm::sys::RemoveFileOnSignal) or print a stack, and then raises it
/// again under its old disposition: an ignored one would remove a
/// checkpoint's temporary file while the run goes on, to fail at the
/// rename. Read before InitLLVM, given back after it, an ignored signal
/// stays ignored:
///
///   IgnoredSignals ignored;
///   llvm::InitLLVM init(argc, argv);
///   ignored.restore();
///
/// `restore` also ignores SIGXFSZ, so that a file past the size limit is
/// a write error rather than a kill.
class IgnoredSignals {
public:
  IgnoredSignals();
  void restore() const;

private:
  llvm::SmallVector<int, 4> signals;
};
} // namespace mlir::epl

#endif // EPL_SUPPORT_SIGNALS_H
