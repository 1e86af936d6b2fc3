// RUN: epl-opt %s --allow-unregistered-dialect --epl-expand-math --split-input-file | FileCheck %s

// GELU's erf and its gradient's exp in a loop body become arithmetic, so
// the loop vectorizes instead of calling libm element by element.
// CHECK-LABEL: func.func @gelu_and_gradient
// CHECK: linalg.generic
// CHECK-NOT: math.erf
// CHECK-NOT: math.exp
// CHECK: arith.mulf
// CHECK: linalg.yield
func.func @gelu_and_gradient(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.erf %in : f32
    %b = math.exp %a : f32
    linalg.yield %b : f32
  } -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

// A constant exponent is a product; the bias correction's pow with a
// variable exponent stays a call, and f64 keeps libm's functions.
// CHECK-LABEL: func.func @powers
// CHECK-SAME: (%[[X:.*]]: f32, %[[T:.*]]: f64)
// CHECK: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: math.powf %{{.*}}, %[[T]] : f64
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.tanh %{{.*}} : f64
func.func @powers(%x: f32, %t: f64) -> (f32, f64, f64, f64) {
  %c2 = arith.constant 2.0 : f32
  %b = arith.constant 0.9 : f64
  %sq = math.powf %x, %c2 : f32
  %p = math.powf %b, %t : f64
  %e = math.exp %t : f64
  %h = math.tanh %t : f64
  return %sq, %p, %e, %h : f32, f64, f64, f64
}

// -----

// Trigonometric functions are left to libm.
// CHECK-LABEL: func.func @trigonometry
// CHECK: math.sin
// CHECK: math.cos
func.func @trigonometry(%x: f32) -> (f32, f32) {
  %s = math.sin %x : f32
  %c = math.cos %x : f32
  return %s, %c : f32, f32
}

// -----

// Only math ops are visited: an op of no registered dialect is passed over
// (it crashed the pass), and other ops are left as they are, even a dead
// one that folds (the pass is no greedy rewrite of the whole module).
// CHECK-LABEL: func.func @unregistered
// CHECK:         "test.foo"()
// CHECK:         arith.addf
// CHECK-NOT:     math.exp
func.func @unregistered(%x: f32) -> f32 {
  "test.foo"() : () -> ()
  %dead = arith.addf %x, %x : f32
  %y = math.exp %x : f32
  return %y : f32
}

// -----

// A subnormal stays one: log's input below 2^-126 is scaled by 2^64 into
// the normal range and 64 ln 2 taken off the result; exp's argument below
// -87 (a subnormal result) is raised by 64 ln 2 and the result scaled by
// 2^-64. One approximation each (test_expand_math.py checks the values).
// CHECK-LABEL: func.func @subnormals
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[TINY:.*]] = arith.constant 1.17549435E-38 : f32
// CHECK: %[[SMALL:.*]] = arith.cmpf olt, %[[X]], %[[TINY]] : f32
// CHECK: arith.select %[[SMALL]], %{{.*}}, %[[X]] : f32
// CHECK: %[[LOW:.*]] = arith.constant -8.700000e+01 : f32
// CHECK: %[[NEG:.*]] = arith.cmpf olt, %[[X]], %[[LOW]] : f32
// CHECK: arith.select %[[NEG]], %{{.*}}, %[[X]] : f32
// CHECK-NOT: math.log
// CHECK-NOT: math.exp
// CHECK: return
func.func @subnormals(%x: f32) -> (f32, f32) {
  %l = math.log %x : f32
  %e = math.exp %x : f32
  return %l, %e : f32, f32
}
