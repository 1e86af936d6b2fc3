// RUN: epl-opt %s --epl-outline-kernels --split-input-file | FileCheck %s

// Each linalg op on buffers becomes a call; identical ops (the same layer's
// op in two blocks, annotated with different phases) share one kernel, and
// a different op gets its own.
// CHECK-LABEL: func.func private @__epl_kernel_0
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: arith.addf
// CHECK-NOT: epl.phase
// CHECK: return
// CHECK-LABEL: func.func private @__epl_kernel_1
// CHECK: arith.mulf
// CHECK-NOT: func.func private @__epl_kernel_2
// CHECK-LABEL: func.func @two_blocks
// CHECK: call @__epl_kernel_0(%{{.*}}, %{{.*}}, %[[T0:[a-z0-9]+]])
// CHECK: call @__epl_kernel_0(%[[T0]], %{{.*}}, %[[T1:[a-z0-9]+]])
// CHECK: call @__epl_kernel_1(%[[T1]], %{{.*}})
#id = affine_map<(d0) -> (d0)>
func.func @two_blocks(%x: memref<8xf32>, %b: memref<8xf32>, %t0: memref<8xf32>,
                      %t1: memref<8xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %b : memref<8xf32>, memref<8xf32>) outs(%t0 : memref<8xf32>)
      attrs = {epl.phase = #epl.phase<forward>} {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%t0, %b : memref<8xf32>, memref<8xf32>) outs(%t1 : memref<8xf32>)
      attrs = {epl.phase = #epl.phase<backward_input>} {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%t1 : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The same body on another shape is another kernel.
// CHECK-LABEL: func.func private @__epl_kernel_0(%{{.*}}: memref<4xf32>
// CHECK-LABEL: func.func private @__epl_kernel_1(%{{.*}}: memref<8xf32>
#id = affine_map<(d0) -> (d0)>
func.func @shapes(%a: memref<4xf32>, %b: memref<8xf32>) {
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%a : memref<4xf32>) {
  ^bb0(%o: f32):
    %s = arith.addf %o, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%b : memref<8xf32>) {
  ^bb0(%o: f32):
    %s = arith.addf %o, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A copy into a pad's interior (a strided view) becomes a linalg.copy kernel;
// a copy between contiguous buffers stays a memref.copy (one memcpy).
// CHECK-LABEL: func.func private @__epl_kernel_0(%{{.*}}: memref<2x4xf32>, %{{.*}}: memref<2x4xf32, strided<[6, 1], offset: 7>>)
// CHECK-NEXT: linalg.copy
// CHECK-LABEL: func.func @copies
// CHECK: call @__epl_kernel_0
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<2x4xf32> to memref<2x4xf32>
// CHECK-NOT: memref.copy
func.func @copies(%x: memref<2x4xf32>, %padded: memref<4x6xf32>, %y: memref<2x4xf32>) {
  %interior = memref.subview %padded[1, 1] [2, 4] [1, 1]
      : memref<4x6xf32> to memref<2x4xf32, strided<[6, 1], offset: 7>>
  memref.copy %x, %interior : memref<2x4xf32> to memref<2x4xf32, strided<[6, 1], offset: 7>>
  memref.copy %x, %y : memref<2x4xf32> to memref<2x4xf32>
  return
}
