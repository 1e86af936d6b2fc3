//===- EPLConfig.cpp - EPL training configuration -------------------------===//
//
// Part of EPL-MLIR.
//
// Keys, kinds and defaults follow EPL's `epl.Config` (epl/config.py); the
// optimizer keys are this project's, since EPL leaves the optimizer to the
// TensorFlow program. Defaults are written as in MLIR (`false`, `"mean"`).
//
//===----------------------------------------------------------------------===//

#include "epl/Dialect/EPL/IR/EPLConfig.h"
#include "epl/Dialect/EPL/IR/EPLDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>

using namespace mlir;
using namespace mlir::epl;

namespace {
using K = ConfigValueKind;
constexpr llvm::StringLiteral kPipelineStrategies[] = {
    "PreferForward", "PreferBackward", "PreferBackwardOptimizer",
    "Interleaved1F1B", "ZeroBubbleH1"};
constexpr llvm::StringLiteral kCheckpointTypes[] = {"", "collection", "auto"};
constexpr llvm::StringLiteral kZeroLevels[] = {"", "v0", "v1", "v2"};
constexpr llvm::StringLiteral kOffloadLevels[] = {"", "v0"};
constexpr llvm::StringLiteral kAmpLevels[] = {"", "O1"};
constexpr llvm::StringLiteral kLossScales[] = {"dynamic"};
constexpr llvm::StringLiteral kReduceMethods[] = {"mean", "sum"};
constexpr llvm::StringLiteral kOptimizers[] = {"sgd", "momentum", "adam",
                                               "adamw"};
constexpr llvm::StringLiteral kLrSchedules[] = {"constant", "cosine"};

const ConfigKey kKeys[] = {
    {"pipeline.num_micro_batch",
     K::Integer,
     "micro-batches per step; with one stage, gradient accumulation steps",
     "1",
     {},
     1},
    {"pipeline.strategy", K::String,
     "pipeline schedule: PreferForward (GPipe: every forward, then every "
     "backward), PreferBackward (1F1B: stage s holds at most stages - s "
     "micro-batches), PreferBackwardOptimizer (1F1B; each stage updates its "
     "parameters as soon as its own backward ends, which on our runtime "
     "PreferBackward does too), Interleaved1F1B (1F1B over "
     "pipeline.num_virtual_stages model chunks per stage device) or "
     "ZeroBubbleH1 (the memory of 1F1B's first stage on every stage, weight "
     "gradients deferred into the "
     "bubble)",
     "\"PreferBackward\"", kPipelineStrategies},
    {"pipeline.num_virtual_stages",
     K::Integer,
     "model chunks per stage device (Interleaved1F1B): the named stages are "
     "virtual stages, stage k on stage device k mod (stages / this)",
     "1",
     {},
     1},
    {"gradient_checkpoint.type", K::String,
     "gradient checkpointing: \"collection\" (user-marked tensors) or "
     "\"auto\" (chosen by the compiler); \"\" disables it",
     "\"\"", kCheckpointTypes},
    {"gradient_checkpoint.memory_budget",
     K::Float,
     "auto: the most activation bytes the step holds for its backward (kept "
     "tensors plus the largest run recomputed at once): a fraction of the "
     "plain step's activations when at most 1, else bytes of one "
     "micro-batch on one device (which holds its shard of the batch); 0 asks "
     "for the least memory any plan needs",
     "0",
     {},
     0.0},
    {"gradient_checkpoint.check_gradients", K::Bool,
     "epl-run: before training, run one step with and one without "
     "checkpointing on the same arguments and fail unless the results (loss, "
     "new parameters and state) agree within 1e-5 relative (EPL)",
     "false"},
    {"zero.level", K::String,
     "ZeRO: v0 shards optimizer states, v1 also gradients, v2 also "
     "parameters; \"\" disables it",
     "\"\"", kZeroLevels},
    {"offload.level", K::String,
     "v0 keeps parameters and optimizer state in host memory, on the GPU "
     "only around their use (the cuda target); \"\" disables it",
     "\"\"", kOffloadLevels},
    {"amp.level", K::String,
     "automatic mixed precision: O1 computes in fp16 with fp32 master "
     "weights; \"\" disables it",
     "\"\"", kAmpLevels},
    {"amp.loss_scale", K::Float,
     "loss scale for mixed precision: a number, or \"dynamic\"", "\"dynamic\"",
     kLossScales, 0.0, true},
    {"communication.max_splits",
     K::Integer,
     "most buckets data-parallel gradients are fused into per step",
     "5",
     {},
     1},
    {"communication.fp16", K::Bool,
     "send gradients in fp16 and restore fp32 after reduction", "false"},
    {"communication.fp16_scale",
     K::Float,
     "scale applied to gradients before fp16 compression; a gradient or "
     "sum that it takes beyond fp16's 65504 ends the run with an error",
     "128",
     {},
     0.0,
     true},
    {"communication.gradients_reduce_method", K::String,
     "how the gradients of data-parallel replicas and of micro-batches are "
     "combined: mean, or sum (N replicas and M micro-batches give N x M "
     "times the mean's gradient, even on one device)",
     "\"mean\"", kReduceMethods},
    {"cluster.colocate_split_and_replicate", K::Bool,
     "place split and replicate parts of the model on the same devices",
     "false"},
    {"optimizer.num_apply_group",
     K::Integer,
     "groups the optimizer update is applied in, to bound peak memory",
     "1",
     {},
     1},
    {"auto.auto_parallel", K::Bool,
     "let the compiler choose the strategy for unannotated models", "false"},
    {"optimizer.type", K::String, "optimizer: sgd, momentum, adam or adamw",
     "\"sgd\"", kOptimizers},
    {"optimizer.lr", K::Float, "learning rate", "0.01", {}, 0.0, true},
    {"optimizer.lr_schedule", K::String,
     "learning rate by step: constant, or cosine (lr * (1 + cos(pi * "
     "min(t, decay_steps) / decay_steps)) / 2 at step t = 0, 1, ..., as "
     "PyTorch's CosineAnnealingLR up to decay_steps and TensorFlow's "
     "cosine_decay)",
     "\"constant\"", kLrSchedules},
    {"optimizer.decay_steps",
     K::Integer,
     "cosine: the steps over which the learning rate falls to 0 (required)",
     "0",
     {},
     0},
    {"optimizer.momentum",
     K::Float,
     "momentum factor (momentum)",
     "0.9",
     {},
     0.0},
    {"optimizer.beta1",
     K::Float,
     "first-moment decay (adam, adamw)",
     "0.9",
     {},
     0.0,
     false,
     1.0},
    {"optimizer.beta2",
     K::Float,
     "second-moment decay (adam, adamw)",
     "0.999",
     {},
     0.0,
     false,
     1.0},
    {"optimizer.eps",
     K::Float,
     "denominator term (adam, adamw)",
     "1e-08",
     {},
     0.0,
     true},
    {"optimizer.weight_decay",
     K::Float,
     "weight decay: L2 for sgd/momentum/adam, decoupled for adamw",
     "0",
     {},
     0.0},
};

/// Keys whose non-default values nothing implements yet, and the feature
/// that will (the open issues: pipeline stages, memory, mixed precision,
/// automatic parallelism).
struct MissingFeature {
  llvm::StringLiteral key;
  const char *feature;
};
constexpr MissingFeature kMissingFeatures[] = {
    {"amp.level", "automatic mixed precision"},
    {"amp.loss_scale", "automatic mixed precision"},
    {"auto.auto_parallel", "automatic parallelism"},
};

StringRef kindName(ConfigValueKind kind) {
  switch (kind) {
  case K::Integer:
    return "an integer";
  case K::Float:
    return "a number";
  case K::Bool:
    return "a boolean (true or false)";
  case K::String:
    return "a string";
  }
  llvm_unreachable("unknown config value kind");
}

std::string quotedList(ArrayRef<llvm::StringLiteral> values) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(values, os,
                        [&](StringRef v) { os << '"' << v << '"'; });
  return s;
}

/// The key closest to `name` by edit distance, if it is close enough to be a
/// plausible typo.
const ConfigKey *nearestKey(StringRef name) {
  const ConfigKey *best = nullptr;
  unsigned bestDistance = ~0u;
  for (const ConfigKey &key : kKeys) {
    unsigned d = name.edit_distance(key.name, /*AllowReplacements=*/true);
    if (d < bestDistance) {
      bestDistance = d;
      best = &key;
    }
  }
  unsigned limit = std::max<unsigned>(3, name.size() / 3);
  return bestDistance <= limit ? best : nullptr;
}

std::string formatNumber(double value) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", value);
  return s;
}

/// Whether `value`, of any width and signedness, is an int64_t.
bool fitsInt64(IntegerAttr value) {
  const APInt &v = value.getValue();
  return value.getType().isUnsignedInteger() ? v.getActiveBits() <= 63
                                             : v.getSignificantBits() <= 64;
}

/// `value` as an int64_t (fitsInt64).
int64_t asInt64(IntegerAttr value) {
  return value.getType().isUnsignedInteger()
             ? static_cast<int64_t>(value.getValue().getZExtValue())
             : value.getValue().getSExtValue();
}

std::optional<double> asNumber(Attribute value) {
  if (auto f = dyn_cast<FloatAttr>(value))
    return f.getValueAsDouble();
  // (Of any width and signedness: `255 : ui8` is 255.)
  if (auto i = dyn_cast<IntegerAttr>(value); i && !i.getType().isInteger(1))
    return i.getValue().roundToDouble(!i.getType().isUnsignedInteger());
  return std::nullopt;
}

LogicalResult verifyValue(const ConfigKey &key, Attribute value,
                          function_ref<InFlightDiagnostic()> emitError) {
  auto wrongKind = [&]() {
    InFlightDiagnostic diag = emitError();
    diag << "EPL config key \"" << key.name << "\" expects "
         << kindName(key.kind);
    if (key.kind != K::String && !key.allowed.empty())
      diag << " or one of " << quotedList(key.allowed);
    return std::move(diag) << ", got " << value;
  };

  // A numeric key may also name one of its special values ("dynamic").
  if (auto str = dyn_cast<StringAttr>(value);
      str && key.kind != K::String && !key.allowed.empty()) {
    if (llvm::is_contained(key.allowed, str.getValue()))
      return success();
    return wrongKind();
  }

  switch (key.kind) {
  case K::Bool:
    if (!isa<BoolAttr>(value))
      return wrongKind();
    return success();
  case K::String: {
    auto str = dyn_cast<StringAttr>(value);
    if (!str)
      return wrongKind();
    if (!key.allowed.empty() &&
        !llvm::is_contained(key.allowed, str.getValue()))
      return emitError() << "EPL config key \"" << key.name
                         << "\" expects one of " << quotedList(key.allowed)
                         << ", got \"" << str.getValue() << "\"";
    return success();
  }
  case K::Integer:
  case K::Float: {
    if (key.kind == K::Integer &&
        (!isa<IntegerAttr>(value) || isa<BoolAttr>(value)))
      return wrongKind();
    std::optional<double> number = asNumber(value);
    if (!number)
      return wrongKind();
    if (!std::isfinite(*number))
      return emitError() << "EPL config key \"" << key.name
                         << "\" must be a finite number, got " << value;
    // Config::getInt reads an int64_t.
    if (key.kind == K::Integer && !fitsInt64(cast<IntegerAttr>(value)))
      return emitError() << "EPL config key \"" << key.name
                         << "\" must fit in 64 bits, got " << value;
    if (key.min &&
        (key.minExclusive ? *number <= *key.min : *number < *key.min))
      return emitError() << "EPL config key \"" << key.name << "\" must be "
                         << (key.minExclusive ? "greater than " : "at least ")
                         << formatNumber(*key.min) << ", got " << value;
    if (key.maxExclusive && *number >= *key.maxExclusive)
      return emitError() << "EPL config key \"" << key.name
                         << "\" must be less than "
                         << formatNumber(*key.maxExclusive) << ", got "
                         << value;
    return success();
  }
  }
  llvm_unreachable("unknown config value kind");
}
} // namespace

ArrayRef<ConfigKey> mlir::epl::getConfigKeys() { return kKeys; }

const char *mlir::epl::getMissingFeature(const ConfigKey &key) {
  // The table names keys by string: a key renamed in the schema must not
  // drop out of it (it would then be accepted and ignored).
  static const bool consistent = [] {
    for (const MissingFeature &missing : kMissingFeatures)
      if (!lookupConfigKey(missing.key))
        llvm::report_fatal_error(llvm::Twine("EPL config schema: \"") +
                                 missing.key +
                                 "\" is marked not implemented but is no key");
    return true;
  }();
  (void)consistent;
  for (const MissingFeature &missing : kMissingFeatures)
    if (missing.key == key.name)
      return missing.feature;
  return nullptr;
}

const ConfigKey *mlir::epl::lookupConfigKey(StringRef name) {
  for (const ConfigKey &key : kKeys)
    if (key.name == name)
      return &key;
  return nullptr;
}

LogicalResult
mlir::epl::verifyConfig(DictionaryAttr config,
                        function_ref<InFlightDiagnostic()> emitError) {
  for (NamedAttribute entry : config) {
    StringRef name = entry.getName().getValue();
    const ConfigKey *key = lookupConfigKey(name);
    if (!key) {
      InFlightDiagnostic diag = emitError();
      diag << "unknown EPL config key \"" << name << "\"";
      if (const ConfigKey *near = nearestKey(name))
        diag << "; did you mean \"" << near->name << "\"?";
      else
        diag << "; valid keys are "
             << quotedList(llvm::to_vector(llvm::map_range(
                    kKeys, [](const ConfigKey &k) { return k.name; })));
      return diag;
    }
    if (failed(verifyValue(*key, entry.getValue(), emitError)))
      return failure();
  }
  // A schedule that falls to 0 needs to know over how many steps.
  auto schedule = config.getAs<StringAttr>("optimizer.lr_schedule");
  auto stepsAttr = config.getAs<IntegerAttr>("optimizer.decay_steps");
  int64_t steps = stepsAttr ? asInt64(stepsAttr) : 0;
  bool cosine = schedule && schedule.getValue() == "cosine";
  if (cosine && steps < 1)
    return emitError() << "EPL config key \"optimizer.lr_schedule\" = "
                          "\"cosine\" needs \"optimizer.decay_steps\" of at "
                          "least 1: the steps over which the learning rate "
                          "falls to 0";
  // Read by the cosine schedule only: anywhere else it would change nothing.
  if (!cosine && steps != 0)
    return emitError() << "EPL config key \"optimizer.decay_steps\" = " << steps
                       << " is read only by \"optimizer.lr_schedule\" = "
                          "\"cosine\"; the schedule is constant";
  // Each optimizer's own keys: set beside another optimizer, they would
  // change nothing (momentum beside "sgd" is no momentum).
  auto type = config.getAs<StringAttr>("optimizer.type");
  StringRef optimizer = type ? type.getValue() : "sgd";
  auto readBy = [&](StringRef key, ArrayRef<StringRef> optimizers) {
    return !config.get(key) || llvm::is_contained(optimizers, optimizer);
  };
  for (StringRef key : {"optimizer.beta1", "optimizer.beta2", "optimizer.eps"})
    if (!readBy(key, {"adam", "adamw"}))
      return emitError() << "EPL config key \"" << key
                         << "\" is read only by \"optimizer.type\" = "
                            "\"adam\" or \"adamw\"; the optimizer is \""
                         << optimizer << "\"";
  if (!readBy("optimizer.momentum", {"momentum"}))
    return emitError() << "EPL config key \"optimizer.momentum\" is read only "
                          "by \"optimizer.type\" = \"momentum\"; the "
                          "optimizer is \""
                       << optimizer << "\"";
  auto fp16 = config.getAs<BoolAttr>("communication.fp16");
  if (config.get("communication.fp16_scale") && !(fp16 && fp16.getValue()))
    return emitError() << "EPL config key \"communication.fp16_scale\" is "
                          "read only with \"communication.fp16\" = true";
  return success();
}

//===----------------------------------------------------------------------===//
// Config
//===----------------------------------------------------------------------===//

Config Config::get(ModuleOp module) {
  return Config(
      module->getAttrOfType<DictionaryAttr>(EPLDialect::kConfigAttrName));
}

/// A module attribute other than `epl.config` that holds EPL config keys
/// or is named like it: an error (Config::checkImplemented).
static LogicalResult
checkMisnamed(ModuleOp module, function_ref<InFlightDiagnostic()> emitError) {
  StringRef expected = EPLDialect::kConfigAttrName;
  for (NamedAttribute attr : module->getDiscardableAttrs()) {
    StringRef name = attr.getName().getValue();
    if (name == expected)
      continue;
    // A configuration is a dictionary: other values (a build's name, a
    // flag) are someone else's.
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!dict)
      continue;
    bool holdsKeys = llvm::any_of(dict, [](NamedAttribute entry) {
      return lookupConfigKey(entry.getName().getValue());
    });
    bool namedLikeIt =
        name.substr(name.rfind('.') + 1).equals_insensitive("config") ||
        name.edit_distance(expected) <= 2;
    if (holdsKeys || namedLikeIt)
      return emitError() << "the module attribute '" << name
                         << "' is not read: EPL's configuration is '"
                         << expected
                         << "', so its keys would be ignored; rename it";
  }
  return success();
}

namespace {
const ConfigKey &schemaOf(StringRef key) {
  const ConfigKey *schema = lookupConfigKey(key);
  assert(schema && "querying an unknown config key");
  return *schema;
}

/// The value the module sets for `key`, or null to use the default.
Attribute lookup(DictionaryAttr dict, StringRef key) {
  (void)schemaOf(key);
  return dict ? dict.get(key) : Attribute();
}
} // namespace

int64_t Config::getInt(StringRef key) const {
  if (auto value = dyn_cast_or_null<IntegerAttr>(lookup(dict, key)))
    return asInt64(value);
  int64_t value = 0;
  bool failed = StringRef(schemaOf(key).defaultValue).getAsInteger(10, value);
  assert(!failed && "integer config key has a non-integer default");
  (void)failed;
  return value;
}

std::optional<double> Config::getNumber(StringRef key) const {
  if (Attribute value = lookup(dict, key))
    return asNumber(value);
  double value = 0;
  if (StringRef(schemaOf(key).defaultValue).getAsDouble(value))
    return std::nullopt;
  return value;
}

bool Config::getBool(StringRef key) const {
  if (auto value = dyn_cast_or_null<BoolAttr>(lookup(dict, key)))
    return value.getValue();
  return schemaOf(key).defaultValue == "true";
}

StringRef Config::getString(StringRef key) const {
  if (auto value = dyn_cast_or_null<StringAttr>(lookup(dict, key)))
    return value.getValue();
  return StringRef(schemaOf(key).defaultValue).trim('"');
}

LogicalResult
Config::checkTarget(bool gpu,
                    function_ref<InFlightDiagnostic()> emitError) const {
  StringRef offload = getString("offload.level");
  if (gpu || offload.empty())
    return success();
  return emitError() << "EPL config key \"offload.level\" = \"" << offload
                     << "\" moves parameters and optimizer state between host "
                        "and GPU memory: it needs the cuda target (epl-run "
                        "--target cuda, epl-lower-to-cuda) or --emulate-gpu";
}

LogicalResult
Config::checkImplemented(ModuleOp module,
                         function_ref<InFlightDiagnostic()> emitError) {
  if (failed(checkMisnamed(module, emitError)))
    return failure();
  DictionaryAttr dict = get(module).dict;
  if (!dict)
    return success();
  MLIRContext *context = module.getContext();
  for (NamedAttribute entry : dict) {
    const ConfigKey *key = lookupConfigKey(entry.getName().getValue());
    const char *feature = key ? getMissingFeature(*key) : nullptr;
    if (!feature)
      continue;
    // Setting a key to its default asks for nothing.
    Attribute value = entry.getValue();
    Attribute byDefault = parseAttribute(key->defaultValue, context);
    std::optional<double> number = asNumber(value);
    if (value == byDefault ||
        (number && byDefault && number == asNumber(byDefault)))
      continue;
    return emitError() << "EPL config key \"" << key->name << "\" = " << value
                       << " is not implemented yet (" << feature
                       << "); remove it or set it to its default "
                       << key->defaultValue;
  }
  return success();
}
