//===- TextKey.h - An op's full text, as a key for deduplication ----------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_SUPPORT_TEXTKEY_H
#define EPL_SUPPORT_TEXTKEY_H

#include "mlir/IR/Operation.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <string>

namespace mlir::epl {

/// `op`'s text in full, whatever printing options the command line set:
/// equal for two ops only if they are the same op (two kernels whose
/// constants differ beyond an elision limit, or whose regions a
/// `--mlir-print-skip-regions` would hide, must not share one). A local
/// scope: numbering the values of the whole module for each op would be
/// quadratic, and the ops keyed are isolated from above.
inline std::string textKey(Operation *op) {
  std::string key;
  llvm::raw_string_ostream os(key);
  constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();
  op->print(os, OpPrintingFlags()
                    .printGenericOpForm()
                    .useLocalScope()
                    .skipRegions(false)
                    .elideLargeElementsAttrs(kNoLimit)
                    .elideLargeResourceString(kNoLimit));
  return key;
}

} // namespace mlir::epl

#endif // EPL_SUPPORT_TEXTKEY_H
