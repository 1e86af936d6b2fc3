//===- Artifact.cpp - Ahead-of-time compiled programs ---------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "epl/Runner/Artifact.h"
#include "epl/Version.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SHA256.h"

#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fstream>
#include <iterator>
#include <limits>

using namespace mlir::epl;
namespace json = llvm::json;

std::string mlir::epl::artifactStageSymbol(size_t stage) {
  return "__epl_stage_" + std::to_string(stage);
}

std::string mlir::epl::artifactSignatureSymbol(size_t stage) {
  return artifactStageSymbol(stage) + "_signature";
}

std::string mlir::epl::stageSignature(const Stage &stage) {
  std::string text;
  auto add = [&](const char *what, const EntryValue &v) {
    text += what;
    text += v.dtype ? dtypeName(*v.dtype) : "?";
    for (int64_t d : v.localShape)
      text += " " + std::to_string(d);
    text += ";";
  };
  for (const EntryArg &a : stage.entry.args)
    add("arg ", a);
  for (const EntryResult &r : stage.entry.results)
    add("result ", r);
  return text;
}

std::string mlir::epl::eplVersionString() {
  return std::string("EPL-MLIR ") + EPL_VERSION_STRING;
}

std::string mlir::epl::runtimeInterfaceDigest() {
  // FNV-1a over the names, in the order the .def lists them.
  uint64_t hash = 0xcbf29ce484222325ull;
  auto add = [&](const char *name) {
    for (const char *c = name; *c; ++c)
      hash = (hash ^ static_cast<unsigned char>(*c)) * 0x100000001b3ull;
    hash = (hash ^ ';') * 0x100000001b3ull;
  };
#define EPL_RT_FUNCTION(NAME) add("epl_rt_" #NAME);
#define EPL_RT_TYPED_FUNCTION(NAME, T) add("epl_rt_" #NAME "_" #T);
#define EPL_RT_SYMBOL(SYMBOL) add(#SYMBOL);
#include "epl/Runtime/RuntimeSymbols.def"
  return llvm::utohexstr(hash, /*LowerCase=*/true, /*Width=*/16);
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

namespace {
// In the order of ArgKind and ResultKind.
constexpr const char *kArgKinds[] = {"param",     "input", "label",
                                     "opt_state", "state", "other"};
constexpr const char *kResultKinds[] = {"loss", "param", "opt_state",
                                        "grad", "state", "other"};

json::Array ints(const std::vector<int64_t> &values) {
  return json::Array(values);
}

json::Object valueJSON(const EntryValue &v) {
  json::Array shard;
  for (const auto &axes : v.shard.dimAxes)
    shard.push_back(ints(axes));
  return json::Object{{"name", v.name},
                      {"dtype", v.dtype ? json::Value(dtypeName(*v.dtype))
                                        : json::Value(nullptr)},
                      {"shape", ints(v.shape)},
                      {"local_shape", ints(v.localShape)},
                      {"type", v.typeName},
                      {"shard", std::move(shard)}};
}

json::Object argJSON(const EntryArg &a) {
  json::Object o = valueJSON(a);
  o["kind"] = kArgKinds[static_cast<int>(a.kind)];
  if (!a.init.empty())
    o["init"] = a.init;
  // What the model said of seeded values (InitHints.h).
  if (a.fanIn > 0)
    o["fan_in"] = a.fanIn;
  if (a.indexBound > 0)
    o["index_bound"] = a.indexBound;
  return o;
}

json::Array argsJSON(const std::vector<EntryArg> &args) {
  json::Array array;
  for (const EntryArg &a : args)
    array.push_back(argJSON(a));
  return array;
}

/// Reads what the JSON side of a manifest holds, with the path of the value
/// at fault in errors.
class Reader {
public:
  explicit Reader(std::string &error) : error(error) {}

  bool fail(const std::string &what) {
    if (error.empty())
      error = what;
    return false;
  }

  const json::Object *object(const json::Value *v, const std::string &what) {
    const json::Object *o = v ? v->getAsObject() : nullptr;
    if (!o)
      fail(what + " is not an object");
    return o;
  }
  const json::Array *array(const json::Object &o, llvm::StringRef key,
                           const std::string &what) {
    const json::Array *a = o.getArray(key);
    if (!a)
      fail(what + "." + key.str() + " is not an array");
    return a;
  }
  bool string(const json::Object &o, llvm::StringRef key, std::string &out,
              const std::string &what, bool optional = false) {
    const json::Value *v = o.get(key);
    if (!v && optional)
      return true;
    std::optional<llvm::StringRef> s = v ? v->getAsString() : std::nullopt;
    if (!s)
      return fail(what + "." + key.str() + " is not a string");
    out = s->str();
    return true;
  }
  bool integer(const json::Value *v, int64_t &out, const std::string &what) {
    std::optional<int64_t> i = v ? v->getAsInteger() : std::nullopt;
    if (!i)
      return fail(what + " is not an integer");
    out = *i;
    return true;
  }
  bool integers(const json::Object &o, llvm::StringRef key,
                std::vector<int64_t> &out, const std::string &what) {
    const json::Array *a = array(o, key, what);
    if (!a)
      return false;
    out.clear();
    for (const json::Value &v : *a) {
      int64_t i;
      if (!integer(&v, i, what + "." + key.str()))
        return false;
      out.push_back(i);
    }
    return true;
  }
  template <typename Kind, size_t N>
  bool kind(const json::Object &o, const char *const (&names)[N], Kind &out,
            const std::string &what) {
    std::string name;
    if (!string(o, "kind", name, what))
      return false;
    for (size_t k = 0; k < N; ++k)
      if (name == names[k]) {
        out = static_cast<Kind>(k);
        return true;
      }
    return fail(what + ".kind '" + name + "' is unknown");
  }

  bool value(const json::Object &o, EntryValue &v, const std::string &what) {
    if (!string(o, "name", v.name, what) ||
        !integers(o, "shape", v.shape, what) ||
        !integers(o, "local_shape", v.localShape, what) ||
        !string(o, "type", v.typeName, what))
      return false;
    if (const json::Value *d = o.get("dtype"); d && !d->getAsNull()) {
      std::optional<llvm::StringRef> name = d->getAsString();
      v.dtype = name ? parseDType(*name) : std::nullopt;
      if (!v.dtype)
        return fail(what + ".dtype is not a safetensors type");
    }
    const json::Array *shard = array(o, "shard", what);
    if (!shard)
      return false;
    for (const json::Value &dim : *shard) {
      const json::Array *axes = dim.getAsArray();
      if (!axes)
        return fail(what + ".shard holds a non-array");
      std::vector<int64_t> list;
      for (const json::Value &axis : *axes) {
        int64_t a;
        if (!integer(&axis, a, what + ".shard"))
          return false;
        list.push_back(a);
      }
      v.shard.dimAxes.push_back(std::move(list));
    }
    return true;
  }
  bool arg(const json::Value &j, EntryArg &a, const std::string &what) {
    const json::Object *o = object(&j, what);
    if (!o || !value(*o, a, what) || !kind(*o, kArgKinds, a.kind, what) ||
        !string(*o, "init", a.init, what, /*optional=*/true))
      return false;
    if (const json::Value *f = o->get("fan_in");
        f && !integer(f, a.fanIn, what + ".fan_in"))
      return false;
    if (const json::Value *b = o->get("index_bound");
        b && !integer(b, a.indexBound, what + ".index_bound"))
      return false;
    return true;
  }
  bool args(const json::Object &o, std::vector<EntryArg> &out,
            const std::string &what) {
    const json::Array *a = array(o, "args", what);
    if (!a)
      return false;
    for (auto [i, j] : llvm::enumerate(*a)) {
      EntryArg arg;
      if (!this->arg(j, arg, what + ".args[" + std::to_string(i) + "]"))
        return false;
      out.push_back(std::move(arg));
    }
    return true;
  }

private:
  std::string &error;
};
} // namespace

std::string mlir::epl::writeManifest(const Manifest &m) {
  const Program &p = m.program;
  json::Array meshes;
  for (const MeshInfo &mesh : p.meshes) {
    json::Array axes;
    for (const std::string &a : mesh.axes)
      axes.push_back(a);
    meshes.push_back(json::Object{{"name", mesh.name},
                                  {"axes", std::move(axes)},
                                  {"sizes", ints(mesh.sizes)},
                                  {"communicates", mesh.communicates}});
  }
  json::Array stages;
  for (auto [k, stage] : llvm::enumerate(p.stages)) {
    json::Array results;
    for (const EntryResult &r : stage.entry.results) {
      json::Object o = valueJSON(r);
      o["kind"] = kResultKinds[static_cast<int>(r.kind)];
      o["grad_bytes"] = r.gradBytes;
      results.push_back(std::move(o));
    }
    json::Array argIndices, inPlace;
    for (size_t i : stage.argIndices)
      argIndices.push_back(static_cast<int64_t>(i));
    for (auto [r, a] : stage.inPlace)
      inPlace.push_back(
          json::Array{static_cast<int64_t>(r), static_cast<int64_t>(a)});
    stages.push_back(json::Object{
        {"symbol", artifactStageSymbol(k)},
        {"name", stage.entry.name},
        {"args", argsJSON(stage.entry.args)},
        {"results", std::move(results)},
        {"arg_indices", std::move(argIndices)},
        {"estimated_peak_bytes", stage.estimatedPeakBytes
                                     ? json::Value(*stage.estimatedPeakBytes)
                                     : json::Value(nullptr)},
        {"in_place", std::move(inPlace)},
        {"resident_in_place", stage.residentInPlace}});
  }
  json::Object program{{"name", p.name},
                       {"args", argsJSON(p.args)},
                       {"stages", std::move(stages)},
                       {"meshes", std::move(meshes)},
                       {"mesh", static_cast<int64_t>(p.mesh)},
                       {"stage_axis", p.stageAxis},
                       {"direct_messages", p.directMessages}};
  json::Object root{{"format", m.format},
                    {"producer", m.producer},
                    {"runtime_interface", m.runtimeInterface},
                    {"target", m.target},
                    {"gpu_kernels", m.gpuKernels.empty()
                                        ? json::Value(nullptr)
                                        : json::Value(m.gpuKernels)},
                    {"triple", m.triple},
                    {"cpu", m.cpu},
                    {"devices", m.devices},
                    {"program", std::move(program)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", json::Value(std::move(root)));
  return text;
}

/// Why `v`'s shapes, element type or shard do not agree with its type
/// (`tensor<784x512xf32>`) and with `mesh`, if they do not.
static std::optional<std::string> checkValue(const EntryValue &v,
                                             const MeshInfo *mesh) {
  llvm::StringRef type = v.typeName;
  if (!type.consume_front("tensor<") || !type.consume_back(">"))
    return std::nullopt; // not a tensor: runners refuse it by its dtype
  llvm::SmallVector<llvm::StringRef> parts;
  type.split(parts, 'x');
  llvm::StringRef element = parts.pop_back_val();
  std::vector<int64_t> dims;
  for (llvm::StringRef part : parts) {
    int64_t d;
    if (part.getAsInteger(10, d))
      return std::nullopt; // dynamic: refused where the step is described
    dims.push_back(d);
  }
  if (dims != v.shape)
    return std::string("its shape does not match its type");
  // ("F32" for f32; a type runners do not pass has none, which the
  // callers report.)
  if (v.dtype && !element.equals_insensitive(dtypeName(*v.dtype)))
    return std::string("its dtype does not match its type");
  if (v.localShape.size() != v.shape.size() ||
      v.shard.dimAxes.size() > v.shape.size())
    return std::string("its local shape or shard has another rank");
  for (size_t d = 0; d < v.shape.size(); ++d) {
    int64_t parts = 1;
    const std::vector<int64_t> empty;
    for (int64_t axis :
         d < v.shard.dimAxes.size() ? v.shard.dimAxes[d] : empty) {
      if (!mesh || axis < 0 || axis >= static_cast<int64_t>(mesh->sizes.size()))
        return "its shard names mesh axis " + std::to_string(axis) +
               ", which the mesh does not have";
      parts *= mesh->sizes[axis];
    }
    if (parts < 1 || v.shape[d] % parts != 0 ||
        v.localShape[d] != v.shape[d] / parts)
      return "its local shape is not its shape cut by its shard (dimension " +
             std::to_string(d) + ")";
  }
  return std::nullopt;
}

llvm::FailureOr<Manifest> mlir::epl::parseManifest(llvm::StringRef text,
                                                   std::string &error) {
  // The format nests 6 levels (program, stages, stage, args, arg, shape).
  constexpr int kMaxDepth = 64;
  if (jsonNestsDeeperThan(text, kMaxDepth)) {
    error = "the manifest nests arrays and objects more than " +
            std::to_string(kMaxDepth) + " levels deep";
    return llvm::failure();
  }
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    error = "the manifest is not JSON: " + llvm::toString(parsed.takeError());
    return llvm::failure();
  }
  Reader read(error);
  Manifest m;
  const json::Object *root = read.object(&*parsed, "the manifest");
  if (!root)
    return llvm::failure();
  int64_t format = 0;
  if (!read.integer(root->get("format"), format, "format"))
    return llvm::failure();
  m.format = static_cast<int>(format);
  // Read what says who made it before anything a later format may change.
  if (!read.string(*root, "producer", m.producer, "manifest") ||
      !read.string(*root, "runtime_interface", m.runtimeInterface, "manifest"))
    return llvm::failure();
  if (m.format != kManifestFormat)
    return m;
  const json::Object *p = read.object(root->get("program"), "program");
  if (const json::Value *kernels = root->get("gpu_kernels");
      kernels && kernels->getAsString())
    m.gpuKernels = kernels->getAsString()->str();
  if (!p || !read.string(*root, "target", m.target, "manifest") ||
      !read.string(*root, "triple", m.triple, "manifest") ||
      !read.string(*root, "cpu", m.cpu, "manifest") ||
      !read.integer(root->get("devices"), m.devices, "devices"))
    return llvm::failure();
  // (epl-compile's --devices: one at least, and a rank count a run can
  // have, which it becomes when --ranks is not given.)
  if (m.devices < 1 || m.devices > std::numeric_limits<int32_t>::max()) {
    read.fail("devices is " + std::to_string(m.devices) +
              ", not a number of devices");
    return llvm::failure();
  }
  Program &program = m.program;
  int64_t mesh = 0;
  if (!read.string(*p, "name", program.name, "program") ||
      !read.args(*p, program.args, "program") ||
      !read.integer(p->get("mesh"), mesh, "program.mesh") ||
      !read.integer(p->get("stage_axis"), program.stageAxis,
                    "program.stage_axis"))
    return llvm::failure();
  program.mesh = static_cast<size_t>(mesh);
  std::optional<bool> direct = p->getBoolean("direct_messages");
  if (!direct) {
    read.fail("program.direct_messages is not true or false");
    return llvm::failure();
  }
  program.directMessages = *direct;
  const json::Array *meshes = read.array(*p, "meshes", "program");
  if (!meshes)
    return llvm::failure();
  for (auto [i, j] : llvm::enumerate(*meshes)) {
    std::string what = "program.meshes[" + std::to_string(i) + "]";
    const json::Object *o = read.object(&j, what);
    MeshInfo info;
    const json::Array *axes = o ? read.array(*o, "axes", what) : nullptr;
    if (!axes || !read.string(*o, "name", info.name, what) ||
        !read.integers(*o, "sizes", info.sizes, what))
      return llvm::failure();
    for (const json::Value &a : *axes) {
      std::optional<llvm::StringRef> s = a.getAsString();
      if (!s) {
        read.fail(what + ".axes holds a non-string");
        return llvm::failure();
      }
      info.axes.push_back(s->str());
    }
    info.communicates = o->getBoolean("communicates").value_or(false);
    if (info.axes.size() != info.sizes.size()) {
      read.fail(what + " has " + std::to_string(info.axes.size()) +
                " axes but " + std::to_string(info.sizes.size()) + " sizes");
      return llvm::failure();
    }
    program.meshes.push_back(std::move(info));
  }
  const json::Array *stages = read.array(*p, "stages", "program");
  if (!stages)
    return llvm::failure();
  for (auto [k, j] : llvm::enumerate(*stages)) {
    std::string what = "program.stages[" + std::to_string(k) + "]";
    const json::Object *o = read.object(&j, what);
    Stage stage;
    std::string symbol;
    std::vector<int64_t> argIndices;
    if (!o || !read.string(*o, "symbol", symbol, what) ||
        !read.string(*o, "name", stage.entry.name, what) ||
        !read.args(*o, stage.entry.args, what) ||
        !read.integers(*o, "arg_indices", argIndices, what))
      return llvm::failure();
    if (symbol != artifactStageSymbol(k)) {
      read.fail(what + ".symbol is '" + symbol + "', not '" +
                artifactStageSymbol(k) + "'");
      return llvm::failure();
    }
    const json::Array *results = read.array(*o, "results", what);
    if (!results)
      return llvm::failure();
    for (auto [i, rj] : llvm::enumerate(*results)) {
      std::string rwhat = what + ".results[" + std::to_string(i) + "]";
      const json::Object *ro = read.object(&rj, rwhat);
      EntryResult r;
      if (!ro || !read.value(*ro, r, rwhat) ||
          !read.kind(*ro, kResultKinds, r.kind, rwhat) ||
          !read.integer(ro->get("grad_bytes"), r.gradBytes,
                        rwhat + ".grad_bytes"))
        return llvm::failure();
      stage.entry.results.push_back(std::move(r));
    }
    for (int64_t i : argIndices) {
      if (i < 0 || static_cast<size_t>(i) >= program.args.size()) {
        read.fail(what + ".arg_indices holds " + std::to_string(i) +
                  ", out of the program's " +
                  std::to_string(program.args.size()) + " arguments");
        return llvm::failure();
      }
      stage.argIndices.push_back(static_cast<size_t>(i));
    }
    if (stage.argIndices.size() != stage.entry.args.size()) {
      read.fail(what + " has " + std::to_string(stage.entry.args.size()) +
                " arguments but " + std::to_string(stage.argIndices.size()) +
                " argument indices");
      return llvm::failure();
    }
    if (const json::Value *peak = o->get("estimated_peak_bytes");
        peak && !peak->getAsNull()) {
      int64_t bytes;
      if (!read.integer(peak, bytes, what + ".estimated_peak_bytes"))
        return llvm::failure();
      stage.estimatedPeakBytes = bytes;
    }
    const json::Array *inPlace = read.array(*o, "in_place", what);
    if (!inPlace)
      return llvm::failure();
    for (const json::Value &pair : *inPlace) {
      const json::Array *ra = pair.getAsArray();
      std::optional<int64_t> r, a;
      if (ra && ra->size() == 2) {
        r = (*ra)[0].getAsInteger();
        a = (*ra)[1].getAsInteger();
      }
      if (!r || !a || *r < 0 || *a < 0 ||
          static_cast<size_t>(*r) >= stage.entry.results.size() ||
          static_cast<size_t>(*a) >= stage.entry.args.size()) {
        read.fail(what + ".in_place holds a pair that is not (result, "
                         "argument)");
        return llvm::failure();
      }
      stage.inPlace.push_back({static_cast<size_t>(*r), *a});
    }
    stage.residentInPlace = o->getBoolean("resident_in_place").value_or(false);
    program.stages.push_back(std::move(stage));
  }
  if (program.stages.empty() ||
      (!program.meshes.empty() && program.mesh >= program.meshes.size()) ||
      (program.isPipelined() &&
       (program.meshes.empty() ||
        static_cast<size_t>(program.stageAxis) >=
            program.meshes[program.mesh].axes.size()))) {
    read.fail("the program has no stage, or its mesh or stage axis is out of "
              "range");
    return llvm::failure();
  }
  // Shapes and element types as the type spells them, and each device's
  // block of its shards: the run loop sizes and copies buffers by them.
  const MeshInfo *shardMesh =
      program.meshes.empty() ? nullptr : &program.meshes[program.mesh];
  auto consistent = [&](const EntryValue &v, const std::string &where) {
    if (std::optional<std::string> why = checkValue(v, shardMesh)) {
      read.fail(where + " '" + v.name + "' (" + v.typeName + "): " + *why);
      return false;
    }
    return true;
  };
  for (const EntryArg &a : program.args)
    if (!consistent(a, "@" + program.name + " argument"))
      return llvm::failure();
  for (const Stage &stage : program.stages) {
    for (const EntryArg &a : stage.entry.args)
      if (!consistent(a, "@" + stage.entry.name + " argument"))
        return llvm::failure();
    for (const EntryResult &r : stage.entry.results)
      if (!consistent(r, "@" + stage.entry.name + " result"))
        return llvm::failure();
  }
  // What runners pass: the run loop allocates results by their types.
  for (const Stage &stage : program.stages)
    for (const EntryResult &r : stage.entry.results)
      if (!r.dtype) {
        read.fail("@" + stage.entry.name + " returns " + r.typeName +
                  ", which runners do not pass");
        return llvm::failure();
      }
  return m;
}

//===----------------------------------------------------------------------===//
// Reading and loading artifacts
//===----------------------------------------------------------------------===//

namespace {
#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
constexpr uint16_t kHostMachine = EM_NONE;
#endif

const char *machineName(uint16_t machine) {
  switch (machine) {
  case EM_X86_64:
    return "x86-64";
  case EM_AARCH64:
    return "AArch64";
  case EM_PPC64:
    return "PowerPC 64";
  case EM_RISCV:
    return "RISC-V";
  default:
    return "an unknown architecture";
  }
}

/// The bytes of `section` of the ELF file `bytes`, or why there are none.
llvm::FailureOr<std::string> elfSection(const std::string &bytes,
                                        llvm::StringRef section,
                                        std::string &error, bool anyMachine) {
  Elf64_Ehdr header;
  if (bytes.size() < sizeof(header) ||
      std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) {
    error = "not an ELF shared object";
    return llvm::failure();
  }
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB) {
    error = "not a 64-bit little-endian ELF file";
    return llvm::failure();
  }
  if (header.e_machine != kHostMachine && !anyMachine) {
    error = std::string("built for ") + machineName(header.e_machine) +
            ", this machine is " + machineName(kHostMachine);
    return llvm::failure();
  }
  if (header.e_type != ET_DYN) {
    error = "not a shared object";
    return llvm::failure();
  }
  auto sectionHeader = [&](size_t i, Elf64_Shdr &out) {
    uint64_t at = header.e_shoff + i * sizeof(Elf64_Shdr);
    if (header.e_shentsize != sizeof(Elf64_Shdr) ||
        at + sizeof(Elf64_Shdr) > bytes.size())
      return false;
    std::memcpy(&out, bytes.data() + at, sizeof(out));
    return out.sh_type == SHT_NOBITS ||
           out.sh_offset + out.sh_size <= bytes.size();
  };
  Elf64_Shdr names;
  if (!sectionHeader(header.e_shstrndx, names)) {
    error = "truncated ELF file (section headers)";
    return llvm::failure();
  }
  for (size_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr s;
    if (!sectionHeader(i, s)) {
      error = "truncated ELF file (section " + std::to_string(i) + ")";
      return llvm::failure();
    }
    if (s.sh_name >= names.sh_size)
      continue;
    const char *name = bytes.data() + names.sh_offset + s.sh_name;
    size_t room = names.sh_size - s.sh_name;
    if (strnlen(name, room) == room || section != name)
      continue;
    std::string data = bytes.substr(s.sh_offset, s.sh_size);
    // The manifest is a C string: what follows its end is padding.
    data.resize(strnlen(data.data(), data.size()));
    return data;
  }
  error = "no " + section.str() +
          " section: not an artifact of epl-compile (a shared object without "
          "a manifest)";
  return llvm::failure();
}
} // namespace

std::string mlir::epl::checksumTrailer(llvm::StringRef image) {
  std::array<uint8_t, 32> hash =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef(image));
  return std::string(hash.begin(), hash.end()) + kChecksumMagic.str();
}

llvm::FailureOr<Manifest>
mlir::epl::readArtifact(llvm::StringRef path, std::string &error, bool toRun) {
  std::ifstream in(path.str(), std::ios::binary);
  if (!in) {
    error = "cannot read " + path.str() + ": " + std::strerror(errno);
    return llvm::failure();
  }
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  std::string why;
  llvm::FailureOr<std::string> text =
      elfSection(bytes, kManifestSection, why, /*anyMachine=*/!toRun);
  llvm::FailureOr<Manifest> manifest = llvm::failure();
  if (succeeded(text))
    manifest = parseManifest(*text, why);
  if (failed(manifest)) {
    error = path.str() + ": not a valid artifact: " + why;
    return llvm::failure();
  }
  std::string runner = eplVersionString();
  if (toRun &&
      (manifest->format != kManifestFormat || manifest->producer != runner ||
       manifest->runtimeInterface != runtimeInterfaceDigest())) {
    error = path.str() + " was built by epl-compile of " + manifest->producer +
            " (manifest format " + std::to_string(manifest->format) +
            ", runtime ABI " + manifest->runtimeInterface + "); this is " +
            runner + " (format " + std::to_string(kManifestFormat) +
            ", runtime ABI " + runtimeInterfaceDigest() +
            "): compile it again with this version's epl-compile";
    return llvm::failure();
  }
  // Before anything loads it: damaged code would run.
  size_t trailer = 32 + kChecksumMagic.size();
  if (bytes.size() < trailer ||
      llvm::StringRef(bytes).ends_with(kChecksumMagic) == false) {
    error = path.str() + ": not a valid artifact: it does not end with "
                         "epl-compile's checksum (an older epl-compile's "
                         "artifact, or another file): compile it again";
    return llvm::failure();
  }
  llvm::StringRef image = llvm::StringRef(bytes).drop_back(trailer);
  if (checksumTrailer(image) != llvm::StringRef(bytes).take_back(trailer)) {
    error = path.str() + ": its bytes no longer match the checksum "
                         "epl-compile wrote: it was damaged or edited after "
                         "it was compiled; compile it again";
    return llvm::failure();
  }
  // (Whether this machine can run a cuda artifact is the runner's question:
  // its manifest can be read anywhere.)
  if (manifest->target != "cpu" && manifest->target != "cuda") {
    error = path.str() + " targets '" + manifest->target +
            "'; this runner runs cpu and cuda artifacts";
    return llvm::failure();
  }
  return manifest;
}

llvm::LogicalResult mlir::epl::loadArtifact(llvm::StringRef path,
                                            Manifest &manifest,
                                            std::string &error) {
  // A path without a slash would be searched for in the library path.
  std::string file = path.str();
  if (file.find('/') == std::string::npos)
    file = "./" + file;
  // Every symbol bound now: a runtime function the runner lacks is an
  // error here, not a crash in the middle of a step.
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    error = "cannot load " + path.str() + ": " + (why ? why : "dlopen failed");
    return llvm::failure();
  }
  for (auto [k, stage] : llvm::enumerate(manifest.program.stages)) {
    std::string symbol = artifactStageSymbol(k);
    void *address = dlsym(handle, symbol.c_str());
    if (!address) {
      error = path.str() + " has no symbol " + symbol + " for stage " +
              std::to_string(k) + " (@" + stage.entry.name + ")";
      return llvm::failure();
    }
    stage.call = reinterpret_cast<EntryFunction>(address);
    // The manifest calls the code as it was compiled (an artifact of this
    // version always has the signature).
    auto *signature = static_cast<const char *>(
        dlsym(handle, artifactSignatureSymbol(k).c_str()));
    if (!signature || stageSignature(stage) != signature) {
      error = path.str() + ": not a valid artifact: its manifest calls stage " +
              std::to_string(k) + " (@" + stage.entry.name +
              ") with other arguments or results than its code was compiled "
              "for (" +
              (signature ? std::string(signature) : "none recorded") +
              "): was the manifest edited?";
      return llvm::failure();
    }
  }
  return llvm::success();
}
