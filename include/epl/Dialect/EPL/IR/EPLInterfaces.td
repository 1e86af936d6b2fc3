//===- EPLInterfaces.td - EPL interfaces -------------------*- tablegen -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_INTERFACES_TD
#define EPL_INTERFACES_TD

include "mlir/IR/OpBase.td"

def EPL_ScopeAttrInterface : AttrInterface<"ScopeAttrInterface"> {
  let cppNamespace = "::mlir::epl";
  let description = [{
    A strategy scope a user puts on part of the model (EPL's `replicate` and
    `split`). Passes that plan meshes treat all scopes alike through this
    interface: how many devices one copy of the scoped part uses, and the
    optional name that makes consecutive `replicate` scopes pipeline stages.
  }];
  let methods = [
    InterfaceMethod<"Number of devices one copy of the scoped part uses.",
      "int64_t", "getDevices">,
    InterfaceMethod<"The scope's name, or null when it has none.",
      "::mlir::StringAttr", "getName">,
  ];
}

def EPL_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::mlir::epl";
  let description = [{
    An op that acts on a device group: the devices of a mesh that differ
    only in their coordinates along some of its axes. Collectives,
    point-to-point ops and `group_index` implement it; lowering to the
    runtime reads them all through this interface.
  }];
  let methods = [
    InterfaceMethod<"The mesh the op communicates on.",
      "::mlir::FlatSymbolRefAttr", "getMeshAttr">,
    InterfaceMethod<"The mesh axes that span the op's device group.",
      "::mlir::ArrayAttr", "getAxes">,
  ];
  let extraClassDeclaration = [{
    /// The mesh this op communicates on. Only valid on verified IR.
    ::mlir::epl::MeshOp getMeshOp();
    /// Number of devices in this op's group. Only valid on verified IR.
    int64_t getGroupSize();
  }];
}

#endif // EPL_INTERFACES_TD
