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

def EPL_ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::mlir::epl";
  let description = [{
    How an op's tensor dimensions shard together, as a rule over factors
    (see `ShardingRule.h`): sharding propagation, partitioning and batch
    splitting read every op through it, so an op is supported by giving it
    a rule in one place. EPL attaches it to every linalg structured op
    (factors are the loops, from the indexing maps and iterator types; the
    combiner is the body's) and to `tensor.expand_shape`,
    `tensor.collapse_shape`, `tensor.extract_slice`, `tensor.insert_slice`,
    `tensor.concat`, `tensor.pad` and `tensor.cast` as external models.

    For example, `tensor.expand_shape %x [[0], [1], [2, 3]] : tensor<8x16x64xf32>
    into tensor<8x16x4x16xf32>` has factors b = 8, s = 16, h = 4, d = 16;
    the operand's dimensions are `[b], [s], [h, d]`, the result's
    `[b], [s], [h], [d]`. An operand split over "tensor" along its last
    dimension (4 devices) splits factor h: the heads of attention.
  }];
  let methods = [
    InterfaceMethod<[{
        The op's rule, or failure when it has none it can state (e.g. a
        rank-reducing slice): such ops compute their values whole.
      }],
      "::mlir::FailureOr<::mlir::epl::ShardingRule>", "getShardingRule">,
    InterfaceMethod<[{
        After partitioning gave the operands and results their local
        types: updates attributes that repeat them (a reshape's output
        shape, a slice's sizes).
      }],
      "void", "adaptToLocalTypes", (ins), [{}], [{ return; }]>,
  ];
}

#endif // EPL_INTERFACES_TD
