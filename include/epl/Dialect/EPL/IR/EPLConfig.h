//===- EPLConfig.h - EPL training configuration -----------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// The `epl.config` module attribute holds EPL's `epl.Config` keys
// ("pipeline.num_micro_batch", "zero.level", ...). This header describes the
// schema once, so that the verifier, passes and tools agree on names, types,
// allowed values and defaults.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_IR_EPLCONFIG_H
#define EPL_DIALECT_EPL_IR_EPLCONFIG_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class ModuleOp;
namespace epl {

/// The kind of value a config key takes.
enum class ConfigValueKind { Integer, Float, Bool, String };

/// One key of EPL's configuration.
struct ConfigKey {
  llvm::StringLiteral name;
  ConfigValueKind kind;
  /// What the key means, for diagnostics and generated docs.
  llvm::StringLiteral help;
  /// Default, written as in MLIR (`1`, `0.01`, `false`, `"mean"`).
  llvm::StringLiteral defaultValue;
  /// String keys: the allowed values (empty: any string).
  llvm::ArrayRef<llvm::StringLiteral> allowed = {};
  /// Numeric keys: lower bound, and whether it is exclusive.
  std::optional<double> min = std::nullopt;
  bool minExclusive = false;
  /// Numeric keys: exclusive upper bound (decay rates stay below 1).
  std::optional<double> maxExclusive = std::nullopt;
};

/// All keys `epl.config` accepts, in documentation order.
llvm::ArrayRef<ConfigKey> getConfigKeys();

/// The key called `name`, or null.
const ConfigKey *lookupConfigKey(llvm::StringRef name);

/// What is still missing for `key` to take effect, when a value other than
/// its default is not implemented yet (e.g. "ZeRO"); null when it is.
const char *getMissingFeature(const ConfigKey &key);

/// Checks a whole `epl.config` dictionary: every key known, every value of
/// the right kind and in range. Diagnostics go through `emitError`.
LogicalResult verifyConfig(DictionaryAttr config,
                           function_ref<InFlightDiagnostic()> emitError);

/// Typed access to a verified module's config, falling back to the key's
/// default when the module does not set it.
class Config {
public:
  explicit Config(DictionaryAttr dict) : dict(dict) {}
  /// The config of `module` (empty when it has none).
  static Config get(ModuleOp module);

  int64_t getInt(llvm::StringRef key) const;
  /// A numeric key's value; std::nullopt when it holds one of its special
  /// string values instead (`"amp.loss_scale" = "dynamic"`).
  std::optional<double> getNumber(llvm::StringRef key) const;
  bool getBool(llvm::StringRef key) const;
  llvm::StringRef getString(llvm::StringRef key) const;
  /// Whether the module sets `key` itself (to any value, its default too).
  bool isSet(llvm::StringRef key) const { return dict && dict.get(key); }

  /// Fails (through `emitError`) on a key that only a GPU target
  /// implements when the step is lowered for the CPU: `offload.level`.
  LogicalResult checkTarget(bool gpu,
                            function_ref<InFlightDiagnostic()> emitError) const;
  /// Fails, naming the key, when `module`'s config sets a key that is not
  /// implemented yet to a value other than its default, or when another
  /// module attribute holds EPL config keys or is named like `epl.config`
  /// (`elp.config`, `tf.config`: nothing reads it): a key is either
  /// honoured or rejected, never silently ignored. Passes that build the
  /// training step call this first.
  static LogicalResult
  checkImplemented(ModuleOp module,
                   function_ref<InFlightDiagnostic()> emitError);

private:
  DictionaryAttr dict;
};

} // namespace epl
} // namespace mlir

#endif // EPL_DIALECT_EPL_IR_EPLCONFIG_H
