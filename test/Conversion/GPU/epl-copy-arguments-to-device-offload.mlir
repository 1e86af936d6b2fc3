// RUN: epl-opt %s --epl-copy-arguments-to-device | FileCheck %s

// offload.level = "v0": each device copy lives from the first op using
// the argument to the last, not for the whole step. The optimizer state
// (%m, read only: its new value is a result) is on the device only around
// the update; the weight from its first use on. epl.read_only arguments
// are never copied back, and the attribute is dropped.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[W:[a-z0-9]+]]: memref<4xf32>, %[[M:[a-z0-9]+]]: memref<4xf32>, %[[NEWW:[a-z0-9]+]]: memref<4xf32>, %[[NEWM:[a-z0-9]+]]: memref<4xf32>)
// CHECK-NOT: epl.read_only
// CHECK: %[[DW:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: gpu.memcpy %[[DW]], %[[W]]
// CHECK-NEXT: call @forward(%[[DW]])
// CHECK-NEXT: %[[DM:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: gpu.memcpy %[[DM]], %[[M]]
// CHECK: linalg.generic {{.*}} ins(%[[DW]], %[[DM]] : memref<4xf32>, memref<4xf32>)
// CHECK: gpu.memcpy %[[NEWM]]
// CHECK: gpu.memcpy %[[NEWW]]
// CHECK: memref.dealloc %[[DM]]
// CHECK-NEXT: memref.dealloc %[[DW]]
// CHECK-NOT: gpu.memcpy %[[W]]
// CHECK-NOT: gpu.memcpy %[[M]]
// CHECK: return
module attributes {epl.config = {"offload.level" = "v0"}} {
  func.func private @forward(memref<4xf32>)
  func.func @step(%w: memref<4xf32> {epl.read_only}, %m: memref<4xf32> {epl.read_only},
                  %new_w: memref<4xf32>, %new_m: memref<4xf32>) {
    call @forward(%w) : (memref<4xf32>) -> ()
    linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                    iterator_types = ["parallel"]}
        ins(%w, %m : memref<4xf32>, memref<4xf32>) outs(%new_w, %new_m : memref<4xf32>, memref<4xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %d: f32):
      %s = arith.subf %a, %b : f32
      linalg.yield %s, %b : f32, f32
    }
    return
  }
}
