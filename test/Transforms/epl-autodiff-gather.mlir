// RUN: epl-opt %s --epl-autodiff --split-input-file | FileCheck %s
// RUN: epl-opt %s --epl-autodiff --split-input-file --epl-decompose-aggregates | FileCheck %s --check-prefix=LOOPS

// A gather (tensor.extract in a generic body) of a parameter: the adjoint
// computes each iteration's contribution and indices over the forward's
// loops, then scatter-adds them into the parameter's gradient.

// loss = sum_k w[i[k]]
// CHECK-LABEL: func.func @model
// CHECK-SAME: %[[I:[a-z0-9_]+]]: tensor<2xi64>
// CHECK-SAME: %[[W:[a-z0-9_]+]]: tensor<4xf32>
// CHECK: %[[C:[a-z0-9_]+]]:2 = linalg.generic
// CHECK-SAME: iterator_types = ["parallel"]
// CHECK-SAME: ins({{.*}}, %[[I]] : tensor<f32>, tensor<2xi64>)
// CHECK-SAME: outs({{.*}} : tensor<2xf32>, tensor<2xi64>)
// CHECK: arith.index_cast {{.*}} : index to i64
// CHECK: linalg.yield
// CHECK: %[[DW:.*]] = epl.scatter_add %[[C]]#0 at (%[[C]]#1) into
// CHECK-SAME: : tensor<2xf32>, tensor<2xi64> into tensor<4xf32>
// CHECK: return {{.*}}, %[[DW]]

// LOOPS-LABEL: func.func @model
// LOOPS-NOT: epl.scatter_add
// LOOPS: scf.for
// LOOPS: arith.cmpi ult
// LOOPS: scf.if
// LOOPS: tensor.insert
func.func @model(%i: tensor<2xi64> {epl.arg = "input", epl.name = "i"},
                 %w: tensor<4xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%i : tensor<2xi64>) outs(%f : tensor<f32>) {
  ^bb0(%a: i64, %acc: f32):
    %idx = arith.index_cast %a : i64 to index
    %v = tensor.extract %w[%idx] : tensor<4xf32>
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// The table is itself computed (w * 2): its gradient flows on to w. The
// same table gathered twice scatters twice. A shape read (tensor.dim) of a
// parameter is no dependency, and a constant table gets no gradient.
// CHECK-LABEL: func.func @model
// CHECK-COUNT-2: epl.scatter_add
// CHECK-NOT: epl.scatter_add
// CHECK: return
func.func @model(%i: tensor<3xi64> {epl.arg = "input", epl.name = "i"},
                 %w: tensor<5xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %table = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %e5 = tensor.empty() : tensor<5xf32>
  %w2 = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> (k)>],
                        iterator_types = ["parallel"]}
      ins(%w : tensor<5xf32>) outs(%e5 : tensor<5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<5xf32>
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%i : tensor<3xi64>) outs(%f : tensor<f32>) {
  ^bb0(%a: i64, %acc: f32):
    %idx = arith.index_cast %a : i64 to index
    %n = tensor.dim %w, %c0 : tensor<5xf32>
    %last = arith.subi %n, %idx : index
    %v = tensor.extract %w2[%idx] : tensor<5xf32>
    %u = tensor.extract %w2[%c0] : tensor<5xf32>
    %t = tensor.extract %table[%idx] : tensor<5xf32>
    %vu = arith.mulf %v, %u : f32
    %vut = arith.mulf %vu, %t : f32
    %s = arith.addf %acc, %vut : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A table read through a cast to dynamic rows: the gradient's zeros take
// the rows' count (a tensor.dim, folded here through the cast), then cast
// back to the parameter's type through the cast's adjoint.
// CHECK-LABEL: func.func @model
// CHECK-SAME: %[[W:[a-z0-9_]+]]: tensor<4xf32>
// CHECK: %[[N:.*]] = arith.constant {{.*}} 4 : index
// CHECK: tensor.cast %[[W]] {{.*}}: tensor<4xf32> to tensor<?xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) {{.*}}: tensor<?xf32>
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} outs(%[[E]] : tensor<?xf32>)
// CHECK: %[[G:.*]] = epl.scatter_add {{.*}} into %[[Z]]
// CHECK-SAME: into tensor<?xf32>
// CHECK: %[[DW:.*]] = tensor.cast %[[G]] {{.*}}: tensor<?xf32> to tensor<4xf32>
// CHECK: return {{.*}}, %[[DW]]
func.func @model(%i: tensor<2xi64> {epl.arg = "input", epl.name = "i"},
                 %w: tensor<4xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %wd = tensor.cast %w : tensor<4xf32> to tensor<?xf32>
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%i : tensor<2xi64>) outs(%f : tensor<f32>) {
  ^bb0(%a: i64, %acc: f32):
    %idx = arith.index_cast %a : i64 to index
    %v = tensor.extract %wd[%idx] : tensor<?xf32>
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A diagonal: one loop is the position of two dimensions (or three). It is
// no dimension's batching dimension (as the sharding rule keeps the table
// whole): the gradient scatters at an index tensor per dimension.
// CHECK-LABEL: func.func @model
// CHECK: epl.scatter_add %{{.*}} at (%{{.*}}, %{{.*}}) into
// CHECK-NOT: batching_dims
// CHECK-SAME: : tensor<3xf32>, tensor<3xi64>, tensor<3xi64> into tensor<3x3xf32>
func.func @model(%w: tensor<3x3xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %e3 = tensor.empty() : tensor<3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%e3 : tensor<3xf32>) outs(%f : tensor<f32>) {
  ^bb0(%unused: f32, %acc: f32):
    %k = linalg.index 0 : index
    %v = tensor.extract %w[%k, %k] : tensor<3x3xf32>
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @model
// CHECK: epl.scatter_add %{{.*}} at (%{{.*}}, %{{.*}}, %{{.*}}) into
// CHECK-SAME: : tensor<3xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64> into tensor<3x3x3xf32>
func.func @model(%w: tensor<3x3x3xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %e3 = tensor.empty() : tensor<3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%e3 : tensor<3xf32>) outs(%f : tensor<f32>) {
  ^bb0(%unused: f32, %acc: f32):
    %k = linalg.index 0 : index
    %v = tensor.extract %w[%k, %k, %k] : tensor<3x3x3xf32>
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
