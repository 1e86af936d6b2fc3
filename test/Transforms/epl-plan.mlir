// RUN: epl-opt %s --epl-plan="devices=4" --split-input-file | FileCheck %s
// RUN: epl-opt %s --epl-plan="devices=1" --split-input-file | FileCheck %s --check-prefix=ONE

// 4 devices, a split(2) stage: 2 replicas of 2 devices.
// CHECK: epl.mesh @mesh ["data" = 2, "tensor" = 2]
// ONE-NOT: epl.mesh
// ONE-NOT: epl.sharding

#split = #epl.split<devices = 2>
module {
  // CHECK-LABEL: func.func @model
  // The batch of inputs and labels over the data axis.
  // CHECK-SAME: %{{.*}}: tensor<8x16xf32> {epl.arg = "input", epl.sharding = #epl.sharding<@mesh, {{\[\[}}"data"], []]>}
  // Not a split layer's weight: left to propagation.
  // CHECK-SAME: %{{.*}}: tensor<16x16xf32> {epl.arg = "param"}
  // Column parallel (output features), then row parallel (input features).
  // CHECK-SAME: %{{.*}}: tensor<16x32xf32> {epl.arg = "param", epl.sharding = #epl.sharding<@mesh, {{\[\[}}], ["tensor"]]>}
  // CHECK-SAME: %{{.*}}: tensor<32x16xf32> {epl.arg = "param", epl.sharding = #epl.sharding<@mesh, {{\[\[}}"tensor"], []]>}
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"},
                   %w0: tensor<16x16xf32> {epl.arg = "param"},
                   %w1: tensor<16x32xf32> {epl.arg = "param"},
                   %w2: tensor<32x16xf32> {epl.arg = "param"}) -> tensor<8x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e16 = tensor.empty() : tensor<8x16xf32>
    %z16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %h = linalg.matmul ins(%x, %w0 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z16 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %e32 = tensor.empty() : tensor<8x32xf32>
    %z32 = linalg.fill {epl.scope = #split} ins(%zero : f32) outs(%e32 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %a = linalg.matmul {epl.scope = #split} ins(%h, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z32 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %r = linalg.max {epl.scope = #split} ins(%a, %z32 : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e32 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %b = linalg.matmul {epl.scope = #split} ins(%r, %w2 : tensor<8x32xf32>, tensor<32x16xf32>) outs(%z16 : tensor<8x16xf32>) -> tensor<8x16xf32>
    return %b : tensor<8x16xf32>
  }
}

// -----

// A stage of replicate(2) on 4 devices, nothing split: 2 replicas of 2
// copies each, all data parallel, so the batch goes over one axis of all 4.
// CHECK: epl.mesh @mesh ["data" = 4]
// CHECK-NOT: "tensor"
#replicate = #epl.replicate<devices = 2>
module {
  // CHECK-LABEL: func.func @replicated
  // CHECK-SAME: %{{.*}}: tensor<8x16xf32> {epl.arg = "input", epl.sharding = #epl.sharding<@mesh, {{\[\[}}"data"], []]>}
  // CHECK-SAME: %{{.*}}: tensor<16x4xf32> {epl.arg = "param"}
  func.func @replicated(%x: tensor<8x16xf32> {epl.arg = "input"},
                        %w: tensor<16x4xf32> {epl.arg = "param"}) -> tensor<8x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %z = linalg.fill {epl.scope = #replicate} ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %y = linalg.matmul {epl.scope = #replicate} ins(%x, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    return %y : tensor<8x4xf32>
  }
}

// -----

// torch's Linear keeps its weight as (out, in) and multiplies by its
// transpose: the split reaches the weight through the transpose (column
// parallel: the out features, dimension 0 of the stored weight).
module {
  // CHECK-LABEL: func.func @transposed
  // CHECK-SAME: tensor<12x16xf32> {epl.arg = "param", epl.name = "w", epl.sharding = #epl.sharding<@mesh, {{\[\[}}"tensor"], []]>}
  func.func @transposed(%x: tensor<8x16xf32> {epl.arg = "input"},
                        %w: tensor<12x16xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<8x12xf32> {
    %et = tensor.empty() : tensor<16x12xf32>
    %wt = linalg.transpose ins(%w : tensor<12x16xf32>) outs(%et : tensor<16x12xf32>) permutation = [1, 0]
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x12xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
    %y = linalg.matmul {epl.scope = #epl.split<devices = 4>}
        ins(%x, %wt : tensor<8x16xf32>, tensor<16x12xf32>) outs(%z : tensor<8x12xf32>) -> tensor<8x12xf32>
    return %y : tensor<8x12xf32>
  }
}

// -----

// Another symbol called @mesh: the plan's mesh takes another name.
// CHECK-LABEL: module
// CHECK: epl.mesh @[[MESH:mesh_[0-9]+]] ["data" = 4]
// CHECK: func.func private @mesh
// CHECK: func.func @model(%{{.*}}: tensor<8x16xf32> {epl.arg = "input", epl.sharding = #epl.sharding<@[[MESH]], {{\[\[}}"data"], []]>})
module {
  func.func private @mesh()
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input"}) -> tensor<8x16xf32> {
    return %x : tensor<8x16xf32>
  }
}

// -----

// Convolutions split like products, over their channels: the first's
// filter by output channels (column parallel), the second's, which reads
// the split channels, by input channels (row parallel).
// CHECK-LABEL: func.func @convolutions
// CHECK-SAME: {epl.arg = "param", epl.name = "c1", epl.sharding = #epl.sharding<@mesh, {{\[}}[], [], [], ["tensor"]]>}
// CHECK-SAME: {epl.arg = "param", epl.name = "c2", epl.sharding = #epl.sharding<@mesh, {{\[}}[], [], ["tensor"], []]>}
#split = #epl.split<devices = 2>
func.func @convolutions(%x: tensor<2x6x6x3xf32> {epl.arg = "input", epl.name = "x"},
                        %c1: tensor<3x3x3x8xf32> {epl.arg = "param", epl.name = "c1"},
                        %c2: tensor<1x1x8x4xf32> {epl.arg = "param", epl.name = "c2"}) -> tensor<2x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x4x4x8xf32>
  %f1 = linalg.fill {epl.scope = #split} ins(%zero : f32) outs(%e1 : tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32>
  %h = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, epl.scope = #split}
         ins(%x, %c1 : tensor<2x6x6x3xf32>, tensor<3x3x3x8xf32>) outs(%f1 : tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32>
  %e2 = tensor.empty() : tensor<2x4x4x4xf32>
  %f2 = linalg.fill {epl.scope = #split} ins(%zero : f32) outs(%e2 : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, epl.scope = #split}
         ins(%h, %c2 : tensor<2x4x4x8xf32>, tensor<1x1x8x4xf32>) outs(%f2 : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  return %y : tensor<2x4x4x4xf32>
}
