//===- EPLAttrs.h - EPL attributes ------------------------------*- C++ -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_IR_EPLATTRS_H
#define EPL_DIALECT_EPL_IR_EPLATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

#include "epl/Dialect/EPL/IR/EPLEnums.h.inc"

#include "epl/Dialect/EPL/IR/EPLAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "epl/Dialect/EPL/IR/EPLAttrs.h.inc"

namespace mlir::epl {
class MeshOp;

/// Checks `sharding` against the tensor type it describes and the mesh it
/// names: rank, axes present in `mesh`, and that each dimension's size is
/// divisible by the product of the sizes of the axes it is split over.
LogicalResult
verifyShardingForType(ShardingAttr sharding, Type type, MeshOp mesh,
                      function_ref<InFlightDiagnostic()> emitError);

/// Looks up the `epl.mesh` called `name` from `from`'s closest symbol table.
/// Reports an error through `emitError` when there is none.
FailureOr<MeshOp> lookupMesh(Operation *from, FlatSymbolRefAttr name,
                             function_ref<InFlightDiagnostic()> emitError);

/// Checks that every axis in `axes` exists in `mesh` and is named once;
/// returns the number of devices in a group spanned by them.
FailureOr<int64_t> verifyMeshAxes(MeshOp mesh, ArrayAttr axes,
                                  function_ref<InFlightDiagnostic()> emitError);
} // namespace mlir::epl

#endif // EPL_DIALECT_EPL_IR_EPLATTRS_H
