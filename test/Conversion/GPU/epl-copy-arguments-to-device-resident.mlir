// RUN: epl-opt %s --epl-copy-arguments-to-device --split-input-file --verify-diagnostics | FileCheck %s

// A parameter and its update, which the runner passes one buffer for
// (epl.in_place_of): one device copy that lives from step to step, the
// runtime's (epl_rt_resident_buffer, keyed by the host buffer; written:
// the update side), never copied back by the step. The batch is copied in
// and freed as before; the attributes are dropped.
// CHECK: func.func private @epl_rt_resident_buffer(!llvm.ptr, i64, i32) -> !llvm.ptr
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<4xf32>, %[[W:[a-z0-9]+]]: memref<4xf32>, %[[NEWW:[a-z0-9]+]]: memref<4xf32>)
// CHECK-NOT: epl.
// CHECK: %[[DX:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: gpu.memcpy %[[DX]], %[[X]]
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: %[[I:.*]] = arith.index_cast %[[P]] : index to i64
// CHECK: %[[H:.*]] = llvm.inttoptr %[[I]] : i64 to !llvm.ptr
// CHECK: %[[BYTES:.*]] = arith.constant 16 : i64
// CHECK: %[[WRITTEN:.*]] = arith.constant 1 : i32
// CHECK: %[[D:.*]] = call @epl_rt_resident_buffer(%[[H]], %[[BYTES]], %[[WRITTEN]])
// CHECK: %[[DW:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<{{.*}}> to memref<4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[DX]], %[[DW]] : memref<4xf32>, memref<4xf32>) outs(%[[DW]] : memref<4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NOT: gpu.memcpy %[[NEWW]]
// CHECK-NOT: gpu.memcpy %[[W]]
// CHECK: memref.dealloc %[[DX]]
// CHECK-NEXT: return
#id = affine_map<(i) -> (i)>
func.func @step(%x: memref<4xf32> {epl.read_only}, %w: memref<4xf32> {epl.read_only},
                %new_w: memref<4xf32> {epl.in_place_of = 1 : i64}) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %w : memref<4xf32>, memref<4xf32>) outs(%new_w : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.subf %b, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// With offload.level = "v0" nothing stays: the pair shares one device
// copy around the uses of both, made before the first and copied back
// after the last.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[W:[a-z0-9]+]]: memref<4xf32>, %[[NEWW:[a-z0-9]+]]: memref<4xf32>)
// CHECK-NOT: epl_rt_resident_buffer
// CHECK: call @forward(%{{.*}}) : (memref<4xf32>) -> ()
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: %[[D:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: gpu.memcpy %[[D]], %[[W]]
// CHECK-NEXT: call @read(%[[D]])
// CHECK-NEXT: call @write(%[[D]])
// CHECK-NEXT: gpu.memcpy %[[W]], %[[D]]
// CHECK-NEXT: memref.dealloc %[[D]]
// CHECK-NEXT: return
module attributes {epl.config = {"offload.level" = "v0"}} {
  func.func private @forward(memref<4xf32>)
  func.func private @read(memref<4xf32>)
  func.func private @write(memref<4xf32>)
  func.func @step(%w: memref<4xf32> {epl.read_only}, %new_w: memref<4xf32> {epl.in_place_of = 0 : i64}) {
    %t = memref.alloc() : memref<4xf32>
    call @forward(%t) : (memref<4xf32>) -> ()
    memref.dealloc %t : memref<4xf32>
    call @read(%w) : (memref<4xf32>) -> ()
    call @write(%new_w) : (memref<4xf32>) -> ()
    return
  }
}

// -----

// Two results written over one argument: which one the buffer ends with
// is not defined, so it is an error.
// expected-error @+1 {{'func.func' op argument 0 is the buffer of more than one result (epl.in_place_of)}}
func.func @step(%w: memref<4xf32> {epl.read_only}, %a: memref<4xf32> {epl.in_place_of = 0 : i64},
                %b: memref<4xf32> {epl.in_place_of = 0 : i64}) {
  return
}
