//===- Safetensors.h - Reading and writing safetensors files ----*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// The interchange format of epl-run: an 8-byte little-endian header length,
// a JSON header {"name": {"dtype": "F32", "shape": [..], "data_offsets":
// [begin, end]}, "__metadata__": {..}}, then the raw little-endian data.
// Files are written atomically: to a temporary file, then renamed.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_SUPPORT_SAFETENSORS_H
#define EPL_SUPPORT_SAFETENSORS_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mlir::epl {

/// Element types of safetensors, by their names in the header.
enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool };

/// "F32" and friends; std::nullopt for a name safetensors does not define.
std::optional<DType> parseDType(llvm::StringRef name);
llvm::StringRef dtypeName(DType dtype);
size_t dtypeSize(DType dtype);

/// A tensor on the host: row-major, little-endian bytes.
struct HostTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<char> data;

  int64_t numElements() const;
  /// "[784, 512] F32".
  std::string describe() const;
};

struct SafetensorsFile {
  std::vector<HostTensor> tensors;
  std::map<std::string, std::string> metadata;

  /// The tensor called `name`, or null.
  const HostTensor *find(llvm::StringRef name) const;
};

/// Reads `path`; errors name the file and what is wrong with it.
llvm::Expected<SafetensorsFile> readSafetensors(llvm::StringRef path);

/// The `__metadata__` of the safetensors file at `path` (its header alone
/// is parsed; the file is mapped, not read).
llvm::Expected<std::map<std::string, std::string>>
readSafetensorsMetadata(llvm::StringRef path);

/// The names of the tensors in the safetensors file at `path` (its header
/// alone is parsed).
llvm::Expected<std::vector<std::string>>
readSafetensorsNames(llvm::StringRef path);

/// The bytes of the file at `path`; errors say "cannot read PATH: REASON".
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readWholeFile(llvm::StringRef path);

/// Whether `json` nests arrays and objects deeper than `maxDepth` (brackets
/// in strings do not count): llvm::json's parser recurses per level, so
/// headers and manifests are checked first, lest 100,000 levels overflow
/// the stack.
bool jsonNestsDeeperThan(llvm::StringRef json, int maxDepth);

/// Writes `file` to `path` atomically: either the whole file appears or the
/// old one (if any) stays.
llvm::Error writeSafetensors(llvm::StringRef path, const SafetensorsFile &file);

/// Writes what `write` prints to `path` atomically: to a temporary file
/// next to it (removed on failure, and on SIGINT or SIGTERM), flushed to
/// disk (fsync), then renamed over `path`. Errors say "cannot write PATH:
/// REASON".
llvm::Error
writeFileAtomically(llvm::StringRef path,
                    llvm::function_ref<void(llvm::raw_ostream &)> write);

/// The file `path` names through its symbolic links, followed one at a
/// time: a link to a file not made yet (a dangling one) names it, and
/// that is where writeFileAtomically writes. ELOOP past 40 links.
std::error_code throughLinks(llvm::StringRef path, llvm::SmallString<256> &out);

/// Creates a new, empty file `PATH.tmp-XXXXXX` next to `path` (so that a
/// rename over `path` stays on one file system), named in `temp`, open for
/// writing in `*fd` (closed when `fd` is null). It is removed if a signal
/// ends the process, from before it exists: no signal leaves it behind.
std::error_code createFileNextTo(llvm::StringRef path,
                                 llvm::SmallVectorImpl<char> &temp, int *fd);

} // namespace mlir::epl

#endif // EPL_SUPPORT_SAFETENSORS_H
