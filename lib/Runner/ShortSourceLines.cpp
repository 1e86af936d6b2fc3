//===- ShortSourceLines.cpp - Quoting a window of a long line -------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/ShortSourceLines.h"

#include "llvm/ADT/StringRef.h"

using namespace mlir;
using namespace mlir::epl;

ShortSourceLineStream::ShortSourceLineStream(llvm::raw_ostream &out,
                                             size_t width)
    : out(out), width(width) {
  SetUnbuffered();
}

ShortSourceLineStream::~ShortSourceLineStream() {
  release();
  if (!partial.empty())
    out << partial;
  partial.clear();
  out.flush();
}

/// Whether `line` is the caret line under a quoted source line: blanks,
/// then the caret, or the tildes of a range.
static bool isCaretLine(llvm::StringRef line) {
  llvm::StringRef rest = line.ltrim(" \t");
  return !rest.empty() && (rest.front() == '^' || rest.front() == '~') &&
         rest.find_first_not_of("^~ ") == llvm::StringRef::npos;
}

void ShortSourceLineStream::emitLine(llvm::StringRef line) {
  if (!holding) {
    held = line.str();
    holding = true;
    return;
  }
  if (!isCaretLine(line) || held.size() <= width) {
    out << held << "\n";
    held = line.str();
    return;
  }
  // A window of `width` characters around the caret, a third before it.
  size_t caret = line.find_first_not_of(" \t");
  size_t begin = caret > width / 3 ? caret - width / 3 : 0;
  size_t end = std::min(held.size(), begin + width);
  std::string before = begin > 0 ? "..." : "";
  std::string after = end < held.size() ? "..." : "";
  out << before << llvm::StringRef(held).slice(begin, end) << after << "\n";
  llvm::StringRef marks = line.drop_front(caret);
  out << std::string(before.size() + caret - begin, ' ')
      << marks.take_front(end > caret ? end - caret : 1) << "\n";
  holding = false;
}

void ShortSourceLineStream::release() {
  if (holding)
    out << held << "\n";
  holding = false;
  out.flush();
}

void ShortSourceLineStream::write_impl(const char *ptr, size_t size) {
  position += size;
  partial.append(ptr, size);
  size_t start = 0;
  for (size_t nl; (nl = partial.find('\n', start)) != std::string::npos;
       start = nl + 1)
    emitLine(llvm::StringRef(partial).slice(start, nl));
  partial.erase(0, start);
}

ShortSourceLineDiagnosticHandler::ShortSourceLineDiagnosticHandler(
    llvm::SourceMgr &mgr, MLIRContext *ctx, llvm::raw_ostream &out)
    : detail::ShortSourceLineStreamHolder(out),
      SourceMgrDiagnosticHandler(mgr, ctx, stream) {
  // Each diagnostic is written whole before the next: the last line held
  // back (no caret follows it) goes out with it.
  setHandler([this](Diagnostic &diagnostic) {
    emitDiagnostic(diagnostic);
    stream.release();
    return success();
  });
}
