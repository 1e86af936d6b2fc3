//===- RuntimeAPI.h - Building calls to the EPL runtime ---------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// The compiler side of `epl/Runtime/Runtime.h`: declares its functions in a
// module with the C interface, encodes device groups as constant globals,
// and passes buffers the way the runtime reads them (unranked memrefs).
// Function names come from `epl/Runtime/RuntimeSymbols.def`, the list the
// runners register with the JIT: the lowering never calls anything else.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_CONVERSION_EPLTORUNTIME_RUNTIMEAPI_H
#define EPL_CONVERSION_EPLTORUNTIME_RUNTIMEAPI_H

#include "epl/Dialect/EPL/IR/EPLOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <vector>

namespace mlir::epl {

class RuntimeAPI {
public:
  explicit RuntimeAPI(ModuleOp module);

  /// `epl_rt_<name>_<suffix of elementType>` (`epl_rt_all_reduce_f32`), or
  /// std::nullopt when RuntimeSymbols.def has no such function.
  static std::optional<std::string> typedFunction(StringRef name,
                                                  Type elementType);

  /// `epl_rt_<name>`, a function without an element type.
  static std::string function(StringRef name);

  /// Declares `name` (once) as an external function with the C interface;
  /// `name` must be in RuntimeSymbols.def.
  func::FuncOp declare(StringRef name, TypeRange inputs, TypeRange results);

  /// Calls runtime function `name`, declaring it on first use.
  func::CallOp call(OpBuilder &builder, Location loc, StringRef name,
                    ValueRange operands, TypeRange results = {});

  /// An unranked view of a memref, as the runtime takes buffers.
  static Value unranked(OpBuilder &builder, Location loc, Value memref);

  /// The constant descriptor of the group spanned by `axes` of `mesh` (see
  /// Runtime.h), as an unranked i64 memref.
  Value groupDescriptor(OpBuilder &builder, Location loc, MeshOp mesh,
                        ArrayAttr axes);

private:
  ModuleOp module;
  llvm::DenseMap<Operation *, int64_t> meshIds;
  llvm::StringMap<func::FuncOp> declared;
  std::map<std::vector<int64_t>, memref::GlobalOp> groups;
};

} // namespace mlir::epl

#endif // EPL_CONVERSION_EPLTORUNTIME_RUNTIMEAPI_H
