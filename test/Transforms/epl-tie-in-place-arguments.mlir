// RUN: epl-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(func.func(epl-tie-in-place-arguments))" | FileCheck %s

// A momentum update written over its parameter and its velocity: each
// result argument's uses become its argument's, the marks go, the
// arguments stay (the runner passes them).
// CHECK-LABEL: func.func @update(
// CHECK-SAME: %[[P:[^:]*]]: memref<4xf32>, %[[G:[^:]*]]: memref<4xf32>, %[[V:[^:]*]]: memref<4xf32>,
// CHECK-SAME: %{{[^:]*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32>, %[[LOSS:[^:]*]]: memref<f32>)
// CHECK-NOT: epl.in_place_of
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[P]], %[[G]], %[[V]] : memref<4xf32>, memref<4xf32>, memref<4xf32>)
// CHECK-SAME: outs(%[[P]], %[[V]] : memref<4xf32>, memref<4xf32>)
// CHECK: memref.copy %{{.*}}, %[[LOSS]]
#id = affine_map<(d0) -> (d0)>
func.func @update(%p: memref<4xf32>, %g: memref<4xf32>, %v: memref<4xf32>,
                  %newp: memref<4xf32> {epl.in_place_of = 0 : i64},
                  %newv: memref<4xf32> {epl.in_place_of = 2 : i64},
                  %loss: memref<f32>) {
  %lr = arith.constant -0.01 : f32
  %mu = arith.constant 0.9 : f32
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g, %v : memref<4xf32>, memref<4xf32>, memref<4xf32>)
      outs(%newp, %newv : memref<4xf32>, memref<4xf32>) {
  ^bb0(%pi: f32, %gi: f32, %vi: f32, %o0: f32, %o1: f32):
    %m = arith.mulf %vi, %mu : f32
    %v2 = arith.addf %m, %gi : f32
    %s = arith.mulf %v2, %lr : f32
    %p2 = arith.addf %pi, %s : f32
    linalg.yield %p2, %v2 : f32, f32
  }
  %l = memref.alloc() : memref<f32>
  memref.copy %l, %loss : memref<f32> to memref<f32>
  memref.dealloc %l : memref<f32>
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 2: 'epl.in_place_of' names argument 1, which is itself written in place of another}}
func.func @chain(%p: memref<4xf32>, %a: memref<4xf32> {epl.in_place_of = 0 : i64},
                 %b: memref<4xf32> {epl.in_place_of = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op arguments 1 and 2 are both written in place of argument 0}}
func.func @twice(%p: memref<4xf32>, %a: memref<4xf32> {epl.in_place_of = 0 : i64},
                 %b: memref<4xf32> {epl.in_place_of = 0 : i64}) {
  return
}

// -----

// The lowering moved a read of the parameter after the update (fusion puts
// a fused op where its consumer was): the parameter's readers read a copy
// taken on entry, and the update writes the result argument the runner
// passes the parameter's buffer for.
// CHECK-LABEL: func.func @late_read(
// CHECK-SAME: %[[P:[^:]*]]: memref<4xf32>, %[[G:[^:]*]]: memref<4xf32>, %[[NEW:[^:]*]]: memref<4xf32>, %[[Y:[^:]*]]: memref<4xf32>)
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[P]], %[[COPY]]
// CHECK: linalg.sub ins(%[[COPY]], %[[G]] : {{.*}}) outs(%[[NEW]] : memref<4xf32>)
// CHECK: linalg.mul ins(%[[COPY]], %[[COPY]] : {{.*}}) outs(%[[Y]] : memref<4xf32>)
// CHECK: memref.dealloc %[[COPY]]
// CHECK-NEXT: return
func.func @late_read(%p: memref<4xf32>, %g: memref<4xf32>,
                     %new: memref<4xf32> {epl.in_place_of = 0 : i64},
                     %y: memref<4xf32>) {
  linalg.sub ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%new : memref<4xf32>)
  linalg.mul ins(%p, %p : memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>)
  return
}

// -----

// The result's init was built in its buffer before the parameter's last
// reader (empty-tensor elimination), and the update reads it: a copy.
// CHECK-LABEL: func.func @init_first(
// CHECK-SAME: %[[P:[^:]*]]: memref<4xf32>, %{{[^:]*}}: memref<4xf32>, %[[NEW:[^:]*]]: memref<4xf32>, %{{[^:]*}}: memref<4xf32>)
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[P]], %[[COPY]]
// CHECK: linalg.fill {{.*}} outs(%[[NEW]] : memref<4xf32>)
// CHECK: linalg.mul ins(%[[COPY]], %[[COPY]]
// CHECK: ins(%[[COPY]], %{{.*}} : {{.*}}) outs(%[[NEW]] : memref<4xf32>)
#id1 = affine_map<(d0) -> (d0)>
func.func @init_first(%p: memref<4xf32>, %g: memref<4xf32>,
                      %new: memref<4xf32> {epl.in_place_of = 0 : i64},
                      %s: memref<4xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%new : memref<4xf32>)
  linalg.mul ins(%p, %p : memref<4xf32>, memref<4xf32>) outs(%s : memref<4xf32>)
  linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%new : memref<4xf32>) {
  ^bb0(%pi: f32, %gi: f32, %o: f32):
    %x = arith.subf %pi, %gi : f32
    %z = arith.mulf %x, %o : f32
    linalg.yield %z : f32
  }
  return
}

// -----

// Read through a transpose by the update itself: not element for element,
// so a copy.
// CHECK-LABEL: func.func @transposed_read(
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK: memref.transpose %[[COPY]]
func.func @transposed_read(%p: memref<4x4xf32>,
                           %new: memref<4x4xf32> {epl.in_place_of = 0 : i64}) {
  %t = memref.transpose %p (d0, d1) -> (d1, d0) : memref<4x4xf32> to memref<4x4xf32, strided<[1, 4]>>
  linalg.add ins(%p, %t : memref<4x4xf32>, memref<4x4xf32, strided<[1, 4]>>) outs(%new : memref<4x4xf32>)
  return
}
