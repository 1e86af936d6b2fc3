// RUN: epl-opt %s | epl-opt | FileCheck %s

epl.mesh @mesh ["data" = 2, "tensor" = 4]

// CHECK-LABEL: func @scopes
func.func @scopes(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: epl.scope = #epl.replicate<devices = 1>
  %0 = arith.addf %x, %x {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8xf32>
  // CHECK: epl.scope = #epl.replicate<devices = 2, name = "stage_0">
  %1 = arith.addf %0, %0 {epl.scope = #epl.replicate<devices = 2, name = "stage_0">} : tensor<4x8xf32>
  // CHECK: epl.scope = #epl.split<devices = 8>
  %2 = arith.addf %1, %1 {epl.scope = #epl.split<devices = 8>} : tensor<4x8xf32>
  // CHECK: epl.scope = #epl.split<devices = 4, name = "classifier">
  %3 = arith.addf %2, %2 {epl.scope = #epl.split<devices = 4, name = "classifier">} : tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// CHECK-LABEL: func @arguments
// CHECK-SAME: {epl.arg = "input", epl.name = "x"}
// CHECK-SAME: {epl.arg = "label"}
// CHECK-SAME: {epl.arg = "param", epl.init = "ones", epl.name = "gamma"}
// CHECK-SAME: {epl.arg = "param", epl.name = "w", epl.sharding = #epl.sharding<@mesh, {{\[\[}}], ["tensor"]]>}
// CHECK-SAME: (tensor<8x8xf32> {epl.sharding = #epl.sharding<@mesh, {{\[\[}}"data"], []], partial sum ["tensor"]>})
func.func @arguments(%x: tensor<8x16xf32> {epl.arg = "input", epl.name = "x"},
                     %y: tensor<8xi64> {epl.arg = "label"},
                     %gamma: tensor<16xf32> {epl.arg = "param", epl.name = "gamma", epl.init = "ones"},
                     %w: tensor<16x8xf32> {epl.arg = "param", epl.name = "w", epl.sharding = #epl.sharding<@mesh, [[], ["tensor"]]>})
    -> (tensor<8x8xf32> {epl.sharding = #epl.sharding<@mesh, [["data"], []], partial sum ["tensor"]>}) {
  %0 = tensor.empty() : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// CHECK-LABEL: func @shardings
// Dimension 0 split over both axes, major to minor.
// CHECK-SAME: #epl.sharding<@mesh, {{\[\[}}"data", "tensor"], []]>
// Scalars and fully replicated values.
// CHECK-SAME: #epl.sharding<@mesh, []>
// CHECK-SAME: #epl.sharding<@mesh, {{\[\[}}], []]>
// CHECK-SAME: #epl.sharding<@mesh, {{\[\[}}], ["data"]], partial max ["tensor"]>
// CHECK-SAME: #epl.sharding<@mesh, {{\[\[}}"tensor"]], partial min ["data"]>
func.func @shardings(%a: tensor<16x3xf32> {epl.sharding = #epl.sharding<@mesh, [["data", "tensor"], []]>},
                     %b: tensor<f32> {epl.sharding = #epl.sharding<@mesh, []>},
                     %c: tensor<5x7xf32> {epl.sharding = #epl.sharding<@mesh, [[], []]>},
                     %d: tensor<5x2xf32> {epl.sharding = #epl.sharding<@mesh, [[], ["data"]], partial max ["tensor"]>},
                     %e: tensor<?xf32> {epl.sharding = #epl.sharding<@mesh, [["tensor"]], partial min ["data"]>}) {
  return
}

// Attributes also print and parse on their own.
// CHECK-LABEL: func @standalone
// CHECK: test.kind = #epl.reduction<mean>
// CHECK-SAME: test.sharding = #epl.sharding<@mesh, {{\[\[}}"data"]]>
func.func @standalone() attributes {test.kind = #epl.reduction<mean>, test.sharding = #epl.sharding<@mesh, [["data"]]>} {
  return
}

// CHECK-LABEL: func @training_step
// CHECK-SAME: {epl.arg = "opt_state", epl.name = "w.momentum"}
// CHECK-SAME: -> (tensor<f32> {epl.result = "loss"}, tensor<4xf32> {epl.name = "w", epl.result = "param"})
func.func @training_step(%w: tensor<4xf32> {epl.arg = "param", epl.name = "w"},
                         %m: tensor<4xf32> {epl.arg = "opt_state", epl.name = "w.momentum"})
    -> (tensor<f32> {epl.result = "loss"}, tensor<4xf32> {epl.result = "param", epl.name = "w"}) {
  // CHECK: epl.id = 0 : i64, epl.phase = #epl.phase<forward>
  %0 = arith.addf %w, %w {epl.phase = #epl.phase<forward>, epl.id = 0 : i64} : tensor<4xf32>
  // CHECK: epl.origin = 0 : i64, epl.phase = #epl.phase<backward_weight>
  %1 = arith.addf %0, %m {epl.phase = #epl.phase<backward_weight>, epl.origin = 0 : i64} : tensor<4xf32>
  // CHECK: epl.phase = #epl.phase<optimizer>
  %2 = arith.subf %w, %1 {epl.phase = #epl.phase<optimizer>} : tensor<4xf32>
  // CHECK: epl.phase = #epl.phase<backward_input>
  %3 = arith.subf %w, %1 {epl.phase = #epl.phase<backward_input>} : tensor<4xf32>
  %l = tensor.empty() : tensor<f32>
  return %l, %2 : tensor<f32>, tensor<4xf32>
}
