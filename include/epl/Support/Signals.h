//===- Signals.h - Signals a tool was started with ignored ------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_SUPPORT_SIGNALS_H
#define EPL_SUPPORT_SIGNALS_H

#include "llvm/ADT/SmallVector.h"

namespace mlir::epl {
/// The interrupts (SIGHUP, SIGINT, SIGTERM, SIGUSR2) a tool was started
/// with ignored: `nohup`'s SIGHUP, a background job's SIGINT. InitLLVM
/// takes every interrupt over, to remove the files being written
/// (llvm::sys::RemoveFileOnSignal), and then raises it again under its old
/// disposition: an ignored one would remove a checkpoint's temporary file
/// while the run goes on, to fail at the rename. Read before InitLLVM,
/// given back after it, an ignored interrupt stays ignored:
///
///   IgnoredInterrupts ignored;
///   llvm::InitLLVM init(argc, argv);
///   ignored.restore();
class IgnoredInterrupts {
public:
  IgnoredInterrupts();
  void restore() const;

private:
  llvm::SmallVector<int, 4> signals;
};
} // namespace mlir::epl

#endif // EPL_SUPPORT_SIGNALS_H
