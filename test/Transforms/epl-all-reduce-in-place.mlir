// RUN: epl-opt %s --split-input-file --allow-unregistered-dialect --epl-all-reduce-in-place | FileCheck %s

// A gradient's contributions, read by nothing after its all-reduce: the sum
// is written over them (through the reshape the lowering made), and their
// buffer is freed where the sum's was.
// CHECK-LABEL: func.func @gradient
// CHECK: %[[G:.*]] = memref.alloc() : memref<4x2xf32>
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[G]]
// CHECK: %[[C:.*]] = memref.cast %[[FLAT]] : memref<8xf32> to memref<*xf32>
// CHECK-NOT: memref.alloc
// CHECK: call @epl_rt_all_reduce_f32(%[[C]], %[[C]], %{{.*}}, %{{.*}})
// CHECK-NOT: memref.dealloc
// CHECK: "test.use"(%[[FLAT]])
// CHECK-NEXT: memref.dealloc %[[G]] : memref<4x2xf32>
// CHECK-NEXT: return
func.func private @epl_rt_all_reduce_f32(memref<*xf32>, memref<*xf32>, memref<*xi64>, i32)
func.func @gradient(%group: memref<*xi64>) {
  %sum = arith.constant 0 : i32
  %g = memref.alloc() : memref<4x2xf32>
  "test.fill"(%g) : (memref<4x2xf32>) -> ()
  %flat = memref.collapse_shape %g [[0, 1]] : memref<4x2xf32> into memref<8xf32>
  %c = memref.cast %flat : memref<8xf32> to memref<*xf32>
  %s = memref.alloc() : memref<8xf32>
  %cs = memref.cast %s : memref<8xf32> to memref<*xf32>
  call @epl_rt_all_reduce_f32(%c, %cs, %group, %sum) : (memref<*xf32>, memref<*xf32>, memref<*xi64>, i32) -> ()
  memref.dealloc %g : memref<4x2xf32>
  "test.use"(%s) : (memref<8xf32>) -> ()
  memref.dealloc %s : memref<8xf32>
  return
}

// -----

// The contributions are read after the all-reduce (a step returning the
// local gradient too), or are the step's argument: the sum keeps its own
// buffer.
// CHECK-LABEL: func.func @kept
// CHECK: "test.fill"
// CHECK: %[[S1:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[CS1:.*]] = memref.cast %[[S1]]
// CHECK: call @epl_rt_all_reduce_f32(%{{.*}}, %[[CS1]],
// CHECK: %[[S2:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[CS2:.*]] = memref.cast %[[S2]]
// CHECK: call @epl_rt_all_reduce_f32(%{{.*}}, %[[CS2]],
func.func private @epl_rt_all_reduce_f32(memref<*xf32>, memref<*xf32>, memref<*xi64>, i32)
func.func @kept(%group: memref<*xi64>, %arg: memref<8xf32>) {
  %sum = arith.constant 0 : i32
  %g = memref.alloc() : memref<8xf32>
  "test.fill"(%g) : (memref<8xf32>) -> ()
  %c = memref.cast %g : memref<8xf32> to memref<*xf32>
  %s = memref.alloc() : memref<8xf32>
  %cs = memref.cast %s : memref<8xf32> to memref<*xf32>
  call @epl_rt_all_reduce_f32(%c, %cs, %group, %sum) : (memref<*xf32>, memref<*xf32>, memref<*xi64>, i32) -> ()
  "test.use"(%g, %s) : (memref<8xf32>, memref<8xf32>) -> ()
  memref.dealloc %g : memref<8xf32>
  memref.dealloc %s : memref<8xf32>
  %ca = memref.cast %arg : memref<8xf32> to memref<*xf32>
  %s2 = memref.alloc() : memref<8xf32>
  %cs2 = memref.cast %s2 : memref<8xf32> to memref<*xf32>
  call @epl_rt_all_reduce_f32(%ca, %cs2, %group, %sum) : (memref<*xf32>, memref<*xf32>, memref<*xi64>, i32) -> ()
  "test.use"(%s2) : (memref<8xf32>) -> ()
  memref.dealloc %s2 : memref<8xf32>
  return
}
