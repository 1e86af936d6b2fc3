//===- Npy.cpp - Reading NumPy .npy files ---------------------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Support/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir::epl;
using llvm::StringRef;

namespace {
llvm::Error malformed(StringRef path, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": not a .npy file EPL reads: " + why);
}

/// The value of `key` in the header's dict literal: the text after
/// `'key':` up to the next top-level comma or the closing brace.
std::optional<StringRef> field(StringRef header, StringRef key) {
  std::string quoted = ("'" + key + "'").str();
  size_t at = header.find(quoted);
  if (at == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(at + quoted.size()).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  rest = rest.ltrim();
  int depth = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    char c = rest[i];
    if (c == '(' || c == '[')
      ++depth;
    else if (c == ')' || c == ']')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      return rest.take_front(i).trim();
  }
  return std::nullopt;
}

std::optional<DType> dtypeOf(StringRef descr) {
  // '<f4' (little-endian), '|u1' (no byte order), '=f4' is native, which
  // is little-endian on every machine EPL runs on.
  if (descr.size() < 3 || !llvm::is_contained(StringRef("<|="), descr[0]))
    return std::nullopt;
  return llvm::StringSwitch<std::optional<DType>>(descr.drop_front())
      .Case("f8", DType::F64)
      .Case("f4", DType::F32)
      .Case("f2", DType::F16)
      .Case("i8", DType::I64)
      .Case("i4", DType::I32)
      .Case("i2", DType::I16)
      .Case("i1", DType::I8)
      .Case("u1", DType::U8)
      .Case("b1", DType::Bool)
      .Default(std::nullopt);
}
} // namespace

llvm::Expected<HostTensor> mlir::epl::readNpy(StringRef path, StringRef name) {
  auto buffer = readWholeFile(path);
  if (!buffer)
    return buffer.takeError();
  StringRef bytes = (*buffer)->getBuffer();
  if (!bytes.starts_with("\x93NUMPY"))
    return malformed(path, "it does not start with \\x93NUMPY");
  if (bytes.size() < 10)
    return malformed(path, "shorter than its 10-byte preamble");
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  // Version 1 has a 2-byte header length, 2 and 3 a 4-byte one.
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3)
    return malformed(path, "format version " +
                               llvm::Twine(static_cast<unsigned>(major)) +
                               " (1 to 3 are read)");
  if (bytes.size() < 8 + lengthBytes)
    return malformed(path, "truncated header");
  uint64_t headerSize = 0;
  for (size_t i = lengthBytes; i-- > 0;)
    headerSize = headerSize << 8 | static_cast<uint8_t>(bytes[8 + i]);
  size_t start = 8 + lengthBytes;
  if (headerSize > bytes.size() - start)
    return malformed(path, "header length " + llvm::Twine(headerSize) +
                               " exceeds the file size " +
                               llvm::Twine(bytes.size()));
  StringRef header = bytes.substr(start, headerSize);
  StringRef data = bytes.substr(start + headerSize);

  std::optional<StringRef> descr = field(header, "descr");
  std::optional<StringRef> order = field(header, "fortran_order");
  std::optional<StringRef> shapeText = field(header, "shape");
  if (!descr || !order || !shapeText)
    return malformed(path, "its header lacks 'descr', 'fortran_order' or "
                           "'shape': " +
                               header.trim());
  StringRef d = descr->trim("'\"");
  std::optional<DType> dtype = dtypeOf(d);
  if (!dtype)
    return malformed(path, "elements '" + d +
                               "' (little-endian f8, f4, f2, i8, i4, i2, i1, "
                               "u1 and b1 are read)");
  if (*order != "False")
    return malformed(path, "Fortran order (save a C-ordered array: "
                           "numpy.ascontiguousarray)");

  HostTensor t;
  t.name = name.str();
  t.dtype = *dtype;
  StringRef dims = shapeText->trim();
  if (!dims.consume_front("(") || !dims.consume_back(")"))
    return malformed(path, "shape " + *shapeText + " is not a tuple");
  llvm::SmallVector<StringRef> parts;
  dims.split(parts, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  uint64_t elements = 1;
  for (StringRef part : parts) {
    uint64_t n = 0;
    if (part.trim().getAsInteger(10, n) || n > (uint64_t(1) << 40))
      return malformed(path, "shape " + *shapeText + " has a dimension '" +
                                 part.trim() + "'");
    t.shape.push_back(static_cast<int64_t>(n));
    // Checked before multiplying: (2^40, 2^24) must not wrap to 0.
    if (n != 0 && elements > (uint64_t(1) << 40) / n)
      return malformed(path, "shape " + *shapeText + " is too large");
    elements *= n;
  }
  uint64_t size = elements * dtypeSize(t.dtype);
  if (data.size() != size)
    return malformed(
        path, "its " + llvm::Twine(data.size()) + " bytes of elements are " +
                  (data.size() < size ? "fewer" : "more") + " than shape " +
                  *shapeText + " needs (" + llvm::Twine(size) + ")");
  t.data.assign(data.begin(), data.begin() + size);
  return t;
}
