//===- EPLDialect.h - EPL dialect -------------------------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_IR_EPLDIALECT_H
#define EPL_DIALECT_EPL_IR_EPLDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "epl/Dialect/EPL/IR/EPLDialect.h.inc"

namespace mlir::epl {
/// What argument `index` of a model function is (its `epl.arg`: "param",
/// "input", "label", "state" or "opt_state"); empty when it is not tagged.
StringRef getArgKind(FunctionOpInterface fn, unsigned index);

/// Whether `fn` has an argument tagged with `epl.arg`: a model's function.
bool hasTaggedArguments(FunctionOpInterface fn);

/// The name of argument `index` in files and in the results that refer to
/// it: its `epl.name`, else "arg<index>".
std::string getArgName(FunctionOpInterface fn, unsigned index);

/// `{<attrName> = "<kind>", epl.name = "<name>"}` (no name when empty): the
/// attributes of a training step's arguments (`epl.arg`) and results
/// (`epl.result`).
DictionaryAttr getKindAndName(MLIRContext *ctx, StringRef attrName,
                              StringRef kind, StringRef name);

/// The argument of kind `kind` named `name` (see `getArgName`), if any.
std::optional<unsigned> findArgOfKind(FunctionOpInterface fn, StringRef kind,
                                      StringRef name);

/// The results of a training step `fn` that are the next value of one of
/// its arguments (a parameter's, model state's or optimizer state's update:
/// the same kind, `epl.name` and type), as (result, argument) pairs; an
/// argument two results name has none. The runner may pass one buffer for
/// both of a pair.
SmallVector<std::pair<unsigned, unsigned>>
getArgumentUpdates(FunctionOpInterface fn);

/// The parameter argument named `name`, if any.
inline std::optional<unsigned> findParamArg(FunctionOpInterface fn,
                                            StringRef name) {
  return findArgOfKind(fn, "param", name);
}

/// Argument and result attributes of `fn`, edited here and written back at
/// once by `apply`. Setting one argument's attribute on the function
/// rebuilds (and uniques, for good) the list of every argument's: done per
/// argument, memory grows with the square of the parameters.
class FunctionAttrEdit {
public:
  explicit FunctionAttrEdit(FunctionOpInterface fn);
  void setArg(unsigned index, StringRef name, Attribute value);
  void setResult(unsigned index, StringRef name, Attribute value);
  NamedAttrList &arg(unsigned index) { return args[index]; }
  NamedAttrList &result(unsigned index) { return results[index]; }
  void apply();

private:
  FunctionOpInterface fn;
  SmallVector<NamedAttrList> args, results;
};
} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_IR_EPLDIALECT_H
