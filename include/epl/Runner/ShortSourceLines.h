//===- ShortSourceLines.h - Quoting a window of a long line -----*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// A diagnostic quotes the source line it points at, with a caret under the
// column. An exported model's function signature is one line of thousands
// of characters (a parameter per argument): an error at an argument
// buried its message under it. This handler prints diagnostics as
// SourceMgrDiagnosticHandler does, but quotes a window of a long line
// around the caret, "..." where it is cut.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_RUNNER_SHORTSOURCELINES_H
#define EPL_RUNNER_SHORTSOURCELINES_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::epl {

/// A stream to `out` that cuts a quoted source line longer than `width`
/// characters, and the caret line under it, to a window around the caret.
class ShortSourceLineStream : public llvm::raw_ostream {
public:
  explicit ShortSourceLineStream(llvm::raw_ostream &out, size_t width = 160);
  ~ShortSourceLineStream() override;

  /// Writes what is held back (a line that may be followed by its caret).
  void release();

private:
  void write_impl(const char *ptr, size_t size) override;
  uint64_t current_pos() const override { return position; }
  void emitLine(llvm::StringRef line);

  llvm::raw_ostream &out;
  size_t width;
  uint64_t position = 0;
  /// The incomplete line, and the last complete one, held back until the
  /// next shows whether it is a caret line.
  std::string partial, held;
  bool holding = false;
};

namespace detail {
struct ShortSourceLineStreamHolder {
  ShortSourceLineStream stream;
  explicit ShortSourceLineStreamHolder(llvm::raw_ostream &out) : stream(out) {}
};
} // namespace detail

/// SourceMgrDiagnosticHandler printing through ShortSourceLineStream.
class ShortSourceLineDiagnosticHandler
    : private detail::ShortSourceLineStreamHolder,
      public SourceMgrDiagnosticHandler {
public:
  ShortSourceLineDiagnosticHandler(llvm::SourceMgr &mgr, MLIRContext *ctx,
                                   llvm::raw_ostream &out = llvm::errs());
};

} // namespace mlir::epl

#endif // EPL_RUNNER_SHORTSOURCELINES_H
