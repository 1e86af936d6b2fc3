//===- Safetensors.cpp - Reading and writing safetensors files ------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Support/Safetensors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

using namespace mlir::epl;
using llvm::StringRef;

namespace {
struct DTypeInfo {
  DType dtype;
  const char *name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F64, "F64", 8},   {DType::F32, "F32", 4}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2}, {DType::I64, "I64", 8}, {DType::I32, "I32", 4},
    {DType::I16, "I16", 2},   {DType::I8, "I8", 1},   {DType::U8, "U8", 1},
    {DType::Bool, "BOOL", 1},
};

llvm::Error malformed(StringRef path, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path +
                                     ": not a valid safetensors file: " + why);
}
} // namespace

std::optional<DType> mlir::epl::parseDType(StringRef name) {
  for (const DTypeInfo &info : kDTypes)
    if (name == info.name)
      return info.dtype;
  return std::nullopt;
}

StringRef mlir::epl::dtypeName(DType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info.name;
  return "?";
}

size_t mlir::epl::dtypeSize(DType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info.size;
  return 0;
}

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string HostTensor::describe() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "] " + dtypeName(dtype).str();
}

const HostTensor *SafetensorsFile::find(StringRef name) const {
  for (const HostTensor &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

/// How deep a header may nest arrays and objects: the format needs 3
/// (header, tensor, shape).
static constexpr int kMaxHeaderDepth = 64;

/// Walks `json`'s text: `onString(begin, end)` for each string (its quotes
/// at `begin` and `end`) and `onDepth(depth)` after each bracket, with the
/// depth of arrays and objects then; either returns false to stop.
static void walkJSON(StringRef json,
                     llvm::function_ref<bool(size_t, size_t, int)> onString,
                     llvm::function_ref<bool(int)> onDepth) {
  int depth = 0;
  size_t start = 0;
  bool inString = false, escaped = false;
  for (size_t i = 0, e = json.size(); i < e; ++i) {
    char c = json[i];
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"') {
        inString = false;
        if (!onString(start, i, depth))
          return;
      }
      continue;
    }
    if (c == '"') {
      inString = true;
      start = i;
    } else if ((c == '[' || c == '{') && !onDepth(++depth)) {
      return;
    } else if ((c == ']' || c == '}') && !onDepth(--depth)) {
      return;
    }
  }
}

bool mlir::epl::jsonNestsDeeperThan(StringRef json, int maxDepth) {
  bool deeper = false;
  walkJSON(
      json, [](size_t, size_t, int) { return true; },
      [&](int depth) { return !(deeper = depth > maxDepth); });
  return deeper;
}

/// The first name the top-level object of `json` (valid JSON) gives twice,
/// unescaped: llvm::json keeps the last, where the format (and the
/// safetensors library) refuses the file.
static std::optional<std::string> repeatedKey(StringRef json) {
  llvm::StringSet<> keys;
  std::optional<std::string> repeated;
  walkJSON(
      json,
      [&](size_t begin, size_t end, int depth) {
        // A string of the top-level object followed by ':' is one of its
        // keys.
        size_t next = json.find_first_not_of(" \t\r\n", end + 1);
        if (depth != 1 || next == StringRef::npos || json[next] != ':')
          return true;
        llvm::Expected<llvm::json::Value> key =
            llvm::json::parse(json.slice(begin, end + 1));
        if (!key) {
          llvm::consumeError(key.takeError());
          return true;
        }
        std::string name = key->getAsString()->str();
        if (!keys.insert(name).second)
          repeated = std::move(name);
        return !repeated;
      },
      [](int) { return true; });
  return repeated;
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
mlir::epl::readWholeFile(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read " + path + ": " +
                                       buffer.getError().message());
  return std::move(*buffer);
}

namespace {
/// A safetensors file's bytes, its parsed header, and where its data
/// section starts.
struct Header {
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  llvm::json::Value json = nullptr;
  StringRef data;
};

llvm::Expected<Header> readHeader(StringRef path) {
  auto buffer = readWholeFile(path);
  if (!buffer)
    return buffer.takeError();
  StringRef bytes = (*buffer)->getBuffer();
  if (bytes.size() < 8)
    return malformed(path, "shorter than its 8-byte header length");
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = headerSize << 8 | static_cast<uint8_t>(bytes[i]);
  if (headerSize > bytes.size() - 8)
    return malformed(path, "header length " + llvm::Twine(headerSize) +
                               " exceeds the file size " +
                               llvm::Twine(bytes.size()));
  StringRef header = bytes.substr(8, headerSize);
  StringRef data = bytes.substr(8 + headerSize);

  if (jsonNestsDeeperThan(header, kMaxHeaderDepth))
    return malformed(path, "header nests arrays and objects more than " +
                               llvm::Twine(kMaxHeaderDepth) + " levels deep");
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(header);
  if (!json)
    return malformed(path,
                     "header is not JSON: " + llvm::toString(json.takeError()));
  if (!json->getAsObject())
    return malformed(path, "header is not a JSON object");
  if (std::optional<std::string> name = repeatedKey(header))
    return malformed(path, "header names '" + *name + "' twice");
  return Header{std::move(*buffer), std::move(*json), data};
}

void readMetadata(const llvm::json::Value &meta,
                  std::map<std::string, std::string> &out) {
  if (const llvm::json::Object *object = meta.getAsObject())
    for (const auto &kv : *object)
      if (auto value = kv.second.getAsString())
        out[kv.first.str()] = value->str();
}
} // namespace

llvm::Expected<std::map<std::string, std::string>>
mlir::epl::readSafetensorsMetadata(StringRef path) {
  llvm::Expected<Header> header = readHeader(path);
  if (!header)
    return header.takeError();
  std::map<std::string, std::string> metadata;
  if (const llvm::json::Value *meta =
          header->json.getAsObject()->get("__metadata__"))
    readMetadata(*meta, metadata);
  return metadata;
}

llvm::Expected<std::vector<std::string>>
mlir::epl::readSafetensorsNames(StringRef path) {
  llvm::Expected<Header> header = readHeader(path);
  if (!header)
    return header.takeError();
  std::vector<std::string> names;
  for (const auto &entry : *header->json.getAsObject())
    if (entry.first != "__metadata__")
      names.push_back(entry.first.str());
  return names;
}

llvm::Expected<SafetensorsFile> mlir::epl::readSafetensors(StringRef path) {
  llvm::Expected<Header> header = readHeader(path);
  if (!header)
    return header.takeError();
  const llvm::json::Object *object = header->json.getAsObject();
  StringRef data = header->data;

  SafetensorsFile file;
  struct Extent {
    int64_t begin, end;
    StringRef name;
  };
  std::vector<Extent> extents;
  for (const auto &entry : *object) {
    StringRef name = entry.first;
    if (name == "__metadata__") {
      readMetadata(entry.second, file.metadata);
      continue;
    }
    const llvm::json::Object *info = entry.second.getAsObject();
    auto bad = [&](const llvm::Twine &why) {
      return malformed(path, "tensor '" + name + "': " + why);
    };
    if (!info)
      return bad("entry is not an object");
    std::optional<StringRef> dtypeName = info->getString("dtype");
    if (!dtypeName)
      return bad("no dtype");
    std::optional<DType> dtype = parseDType(*dtypeName);
    if (!dtype)
      return bad("unknown dtype '" + *dtypeName + "'");
    const llvm::json::Array *shape = info->getArray("shape");
    const llvm::json::Array *offsets = info->getArray("data_offsets");
    if (!shape)
      return bad("no shape");
    if (!offsets || offsets->size() != 2)
      return bad("data_offsets must be [begin, end]");
    HostTensor tensor;
    tensor.name = name.str();
    tensor.dtype = *dtype;
    // The tensor's bytes, which must fit the data section: a shape whose
    // size overflows would otherwise wrap around to a small one.
    uint64_t expected = dtypeSize(*dtype);
    for (const llvm::json::Value &d : *shape) {
      std::optional<int64_t> size = d.getAsInteger();
      if (!size || *size < 0)
        return bad("shape entries must be non-negative integers");
      tensor.shape.push_back(*size);
      expected =
          llvm::SaturatingMultiply(expected, static_cast<uint64_t>(*size));
    }
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger();
    std::optional<int64_t> end = (*offsets)[1].getAsInteger();
    if (!begin || !end)
      return bad("data_offsets must be two integers");
    if (*begin < 0 || *end < *begin ||
        static_cast<uint64_t>(*end) > data.size())
      return bad("data_offsets [" + llvm::Twine(*begin) + ", " +
                 llvm::Twine(*end) + "] fall outside the data section of " +
                 llvm::Twine(data.size()) + " bytes");
    if (expected > data.size())
      return bad("shape " + tensor.describe() + " needs more bytes than the " +
                 llvm::Twine(data.size()) + " of the data section");
    if (static_cast<uint64_t>(*end - *begin) != expected)
      return bad("holds " + llvm::Twine(*end - *begin) +
                 " bytes but shape and dtype need " + llvm::Twine(expected));
    tensor.data.assign(data.begin() + *begin, data.begin() + *end);
    file.tensors.push_back(std::move(tensor));
    if (*end > *begin)
      extents.push_back({*begin, *end, name});
  }
  // Two tensors over the same bytes would each read the other's data.
  llvm::sort(extents, [](const Extent &a, const Extent &b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  for (size_t i = 1; i < extents.size(); ++i) {
    const Extent &a = extents[i - 1], &b = extents[i];
    if (b.begin < a.end)
      return malformed(path, "tensors '" + a.name + "' and '" + b.name +
                                 "' share bytes " + llvm::Twine(b.begin) +
                                 " to " + llvm::Twine(std::min(a.end, b.end)) +
                                 " of the data section");
  }
  return file;
}

llvm::Error mlir::epl::writeSafetensors(StringRef path,
                                        const SafetensorsFile &file) {
  llvm::json::Object header;
  uint64_t offset = 0;
  for (const HostTensor &t : file.tensors) {
    llvm::json::Array shape;
    for (int64_t d : t.shape)
      shape.push_back(d);
    header[t.name] = llvm::json::Object{
        {"dtype", dtypeName(t.dtype)},
        {"shape", std::move(shape)},
        {"data_offsets", llvm::json::Array{offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  if (!file.metadata.empty()) {
    llvm::json::Object meta;
    for (const auto &[k, v] : file.metadata)
      meta[k] = v;
    header["__metadata__"] = std::move(meta);
  }
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(std::move(header));
  // Pad with spaces so the data starts 8-byte aligned, as the format allows.
  text.append((8 - text.size() % 8) % 8, ' ');

  return writeFileAtomically(path, [&](llvm::raw_ostream &os) {
    uint64_t size = text.size();
    for (int i = 0; i < 8; ++i)
      os << static_cast<char>((size >> (8 * i)) & 0xff);
    os << text;
    for (const HostTensor &t : file.tensors)
      os.write(t.data.data(), t.data.size());
  });
}

std::error_code mlir::epl::createFileNextTo(StringRef path,
                                            llvm::SmallVectorImpl<char> &temp,
                                            int *fd) {
  StringRef dir = llvm::sys::path::parent_path(path);
  llvm::SmallString<256> model(dir.empty() ? "." : dir);
  llvm::sys::path::append(model,
                          llvm::sys::path::filename(path) + ".tmp-%%%%%%");
  // Named for removal before it is created: a signal between creating it
  // and naming it (as createUniqueFile then RemoveFileOnSignal do) left it.
  for (int attempt = 0; attempt < 128; ++attempt) {
    llvm::sys::fs::createUniquePath(model, temp, /*MakeAbsolute=*/false);
    std::string name(temp.begin(), temp.end());
    llvm::sys::RemoveFileOnSignal(name);
    int opened;
    std::error_code ec = llvm::sys::fs::openFileForWrite(
        name, opened, llvm::sys::fs::CD_CreateNew, llvm::sys::fs::OF_None);
    if (!ec) {
      if (fd)
        *fd = opened;
      else
        ::close(opened);
      return {};
    }
    llvm::sys::DontRemoveFileOnSignal(name);
    if (ec != std::errc::file_exists)
      return ec;
  }
  return std::make_error_code(std::errc::file_exists);
}

std::error_code mlir::epl::throughLinks(StringRef path,
                                        llvm::SmallString<256> &out) {
  out = path;
  for (int links = 0;; ++links) {
    llvm::sys::fs::file_status status;
    if (llvm::sys::fs::status(out, status, /*Follow=*/false) ||
        status.type() != llvm::sys::fs::file_type::symlink_file)
      return {};
    if (links == 40)
      return std::make_error_code(std::errc::too_many_symbolic_link_levels);
    char target[4096];
    ssize_t size = ::readlink(out.c_str(), target, sizeof(target) - 1);
    if (size < 0)
      return std::error_code(errno, std::generic_category());
    StringRef next(target, size);
    if (llvm::sys::path::is_absolute(next)) {
      out = next;
    } else {
      llvm::SmallString<256> joined = llvm::sys::path::parent_path(out);
      llvm::sys::path::append(joined, next);
      out = joined;
    }
  }
}

llvm::Error mlir::epl::writeFileAtomically(
    StringRef given, llvm::function_ref<void(llvm::raw_ostream &)> write) {
  // A symbolic link is written through: the rename replaces the file it
  // names (made if it is not there yet), and the link stays.
  llvm::SmallString<256> target;
  if (std::error_code ec = throughLinks(given, target))
    return llvm::createStringError(ec, "cannot write " + given + ": " +
                                           ec.message());
  StringRef path = target;
  // Next to the destination, so that the rename stays on one file system: a
  // reader never sees half a file, and a failed run leaves the old one.
  llvm::SmallString<256> temp;
  int fd;
  auto fail = [&](std::error_code ec) {
    llvm::sys::fs::remove(temp);
    llvm::sys::DontRemoveFileOnSignal(temp);
    return llvm::createStringError(ec, "cannot write " + path + ": " +
                                           ec.message());
  };
  if (std::error_code ec = createFileNextTo(path, temp, &fd))
    return llvm::createStringError(ec, "cannot write " + path + ": " +
                                           ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    write(os);
    os.flush();
    // The data is on disk before the name points at it: a crash of the
    // machine after the rename leaves the new file, not an empty one.
    if (!os.has_error() && ::fsync(fd) != 0)
      return fail(std::error_code(errno, std::generic_category()));
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      return fail(ec);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path))
    return fail(ec);
  llvm::sys::DontRemoveFileOnSignal(temp);
  return llvm::Error::success();
}
