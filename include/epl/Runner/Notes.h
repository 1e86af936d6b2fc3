//===- Notes.h - Where the runner's notes and warnings go -------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_NOTES_H
#define EPL_RUNNER_NOTES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <string>

namespace mlir::epl {

/// Whether this process keeps its notes to itself: a process other than
/// the first of an MPI run (RunCommandLine::runOptions decides). Every
/// process of one reads the same options and files (each rank checks with
/// rank 0 before the first step), so the others would say it again;
/// processes that mpirun starts with `--backend threads` are runs of their
/// own and say theirs.
inline bool &quietProcess() {
  static bool quiet = false;
  return quiet;
}

/// `names` joined by commas; past `limit` of them, how many more.
inline std::string someNames(llvm::ArrayRef<std::string> names,
                             size_t limit = 8) {
  std::string text;
  for (size_t i = 0; i < std::min(names.size(), limit); ++i)
    text += (i ? ", " : "") + names[i];
  if (names.size() > limit)
    text += " and " + std::to_string(names.size() - limit) + " more";
  return text;
}

/// Where the runner's notes and warnings about its options and files go.
inline llvm::raw_ostream &notes() {
  return quietProcess() ? llvm::nulls() : llvm::errs();
}

} // namespace mlir::epl

#endif // EPL_RUNNER_NOTES_H
