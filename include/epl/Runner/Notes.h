//===- Notes.h - Where the runner's notes and warnings go -------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_NOTES_H
#define EPL_RUNNER_NOTES_H

#include "epl/Runtime/Backend.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::epl {

/// Where the runner's notes and warnings about its options and files go:
/// standard error, from the first process of an MPI run only. Every
/// process reads the same options and files (each rank checks with rank 0
/// before the first step), so the others would say it again.
inline llvm::raw_ostream &notes() {
  return ::epl::rt::launcherRank() == 0 ? llvm::errs() : llvm::nulls();
}

} // namespace mlir::epl

#endif // EPL_RUNNER_NOTES_H
