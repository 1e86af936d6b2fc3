// RUN: epl-opt %s --epl-copy-arguments-to-device | FileCheck %s

// A public step: its host buffers are copied into device buffers on entry;
// what it may write (the parameter updated in place) is copied back before
// the return, what it only reads (the batch) is not; private functions
// (called with device buffers) are left alone.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>, %[[W:.*]]: memref<4xf32>)
// CHECK: %[[DX:.*]] = memref.alloc() : memref<4xf32>
// CHECK: gpu.memcpy %[[DX]], %[[X]]
// CHECK: %[[DW:.*]] = memref.alloc() : memref<4xf32>
// CHECK: gpu.memcpy %[[DW]], %[[W]]
// CHECK: linalg.generic {{.*}} ins(%[[DX]] : memref<4xf32>) outs(%[[DW]] : memref<4xf32>)
// CHECK: call @helper(%[[DW]])
// CHECK-NEXT: memref.dealloc %[[DX]]
// CHECK-NEXT: gpu.memcpy %[[W]], %[[DW]]
// CHECK-NEXT: memref.dealloc %[[DW]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @helper
// CHECK-NOT: gpu.memcpy
#id = affine_map<(i) -> (i)>
func.func @step(%x: memref<4xf32>, %w: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<4xf32>) outs(%w : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.subf %b, %a : f32
    linalg.yield %s : f32
  }
  call @helper(%w) : (memref<4xf32>) -> ()
  return
}
func.func private @helper(%w: memref<4xf32>) {
  return
}
