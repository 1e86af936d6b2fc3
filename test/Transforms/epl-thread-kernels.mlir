// RUN: epl-opt %s --epl-outline-kernels --epl-thread-kernels | FileCheck %s
// RUN: epl-opt %s --epl-outline-kernels --epl-thread-kernels="min-iterations=16" | FileCheck %s --check-prefix=SMALL
// RUN: epl-opt %s --epl-lower-to-cpu -o /dev/null

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#window = affine_map<(i, j) -> (i + j)>
#id3 = affine_map<(i, j, k) -> (i, j, k)>

// The split kernel runs rows [lo, hi) of both operands. A buffer whose
// layout is static comes as its aligned pointer; the task makes the rest of
// its descriptor from constants.
// CHECK-LABEL: func.func private @__epl_kernel_0_task(%arg0: !llvm.ptr, %arg1: i64, %arg2: i64)
// CHECK: %[[AT0:.*]] = llvm.getelementptr %arg0[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P0:.*]] = llvm.load %[[AT0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[A0:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.insertvalue %[[A0]], %{{.*}}[0]
// CHECK: llvm.insertvalue %[[A0]], %{{.*}}[1]
// CHECK: llvm.mlir.constant(0 : index)
// CHECK: llvm.mlir.constant(1024 : index)
// CHECK: llvm.mlir.constant(64 : index)
// CHECK: %[[M0:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<{{.*}}> to memref<1024x64xf32>
// CHECK: %[[LO:.*]] = arith.index_cast %arg1 : i64 to index
// CHECK: %[[HI:.*]] = arith.index_cast %arg2 : i64 to index
// CHECK: call @__epl_kernel_0(%[[M0]], %{{.*}}, %[[LO]], %[[HI]])
// CHECK-LABEL: func.func private @__epl_kernel_0(%arg0: memref<1024x64xf32>, %arg1: memref<1024x64xf32>, %arg2: index, %arg3: index)
// CHECK: %[[COUNT:.*]] = arith.subi %arg3, %arg2 : index
// CHECK: %[[IN:.*]] = memref.subview %arg0[%arg2, 0] [%[[COUNT]], 64] [1, 1]
// CHECK: %[[OUT:.*]] = memref.subview %arg1[%arg2, 0] [%[[COUNT]], 64] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[IN]] : {{.*}}) outs(%[[OUT]] : {{.*}})
// (One buffer read and written in place is one argument.)
// CHECK-LABEL: func.func private @__epl_kernel_6(%arg0: memref<1x1024x64xf32>, %arg1: index, %arg2: index)
// CHECK: memref.subview %arg0[0, %arg1, 0] [1, %{{.*}}, 64] [1, 1, 1]
// CHECK-LABEL: func.func @step
// The call's arguments go in slots on the stack, made once at the entry.
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: %[[CTX:.*]] = llvm.alloca %[[ONE]] x !llvm.array<2 x ptr>
// CHECK: %[[SLOT:.*]] = llvm.alloca %[[ONE]] x !llvm.ptr
// CHECK: scf.for
// CHECK:   %[[DESC:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<1024x64xf32> to !llvm.struct
// CHECK:   %[[ALIGNED:.*]] = llvm.extractvalue %[[DESC]][1]
// CHECK:   llvm.store %[[ALIGNED]], %[[SLOT]]
// CHECK:   %[[AT:.*]] = llvm.getelementptr %[[CTX]][0]
// CHECK:   llvm.store %[[SLOT]], %[[AT]]
// CHECK:   %[[TASK:.*]] = func.constant @__epl_kernel_0_task : (!llvm.ptr, i64, i64) -> ()
// CHECK:   %[[N:.*]] = arith.constant 1024 : i64
// CHECK:   call @epl_rt_parallel_for(%[[TASK]], %[[CTX]], %[[N]])
// A first loop that is a reduction, one read shifted by another loop, and
// a body that reads its position along the first loop stay one call.
// CHECK: call @__epl_kernel_1(
// CHECK: call @__epl_kernel_2(
// CHECK: call @__epl_kernel_3(
// Small kernels too (below min-iterations).
// CHECK: call @__epl_kernel_4(
// CHECK: call @__epl_kernel_5(
func.func @step(%a: memref<1024x64xf32>, %b: memref<1024x64xf32>,
                %v: memref<64xf32>, %w: memref<1087xf32>, %s: memref<8x4xf32>,
                %t: memref<8x4xf32>, %u: memref<1x1024x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %k = %c0 to %c3 step %c1 {
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a : memref<1024x64xf32>) outs(%b : memref<1024x64xf32>) {
      ^bb0(%x: f32, %y: f32):
        %e = math.exp %x : f32
        linalg.yield %e : f32
    }
  }
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<1024x64xf32>) outs(%v : memref<64xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %s0 = arith.addf %x, %acc : f32
      linalg.yield %s0 : f32
  }
  linalg.generic {indexing_maps = [#window, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<1087xf32>) outs(%b : memref<1024x64xf32>) {
    ^bb0(%x: f32, %y: f32):
      linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%b : memref<1024x64xf32>) {
    ^bb0(%y: f32):
      %i = linalg.index 0 : index
      %ii = arith.index_cast %i : index to i64
      %f = arith.sitofp %ii : i64 to f32
      linalg.yield %f : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<8x4xf32>) outs(%t : memref<8x4xf32>) {
    ^bb0(%x: f32, %y: f32):
      %e = math.exp %x : f32
      linalg.yield %e : f32
  }
  // A body that asserts stays on the rank's thread.
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<1024x64xf32>) outs(%b : memref<1024x64xf32>) {
    ^bb0(%x: f32, %y: f32):
      %zero = arith.constant 0.0 : f32
      %ok = arith.cmpf oge, %x, %zero : f32
      cf.assert %ok, "negative"
      linalg.yield %x : f32
  }
  // A first loop of one iteration: the split is of the next.
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%u : memref<1x1024x64xf32>) outs(%u : memref<1x1024x64xf32>) {
    ^bb0(%x: f32, %y: f32):
      %e = math.exp %x : f32
      linalg.yield %e : f32
  }
  return
}

// CHECK: call @epl_rt_parallel_for

// SMALL: call @epl_rt_parallel_for
// SMALL: call @__epl_kernel_1(
// SMALL: call @__epl_kernel_2(
// SMALL: call @__epl_kernel_3(
// SMALL: call @epl_rt_parallel_for
// SMALL: call @__epl_kernel_5(
// SMALL: call @epl_rt_parallel_for

// A buffer with a dynamic offset goes through the context as its whole
// descriptor.
// CHECK-LABEL: func.func @dynamic_offset
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK: %[[DYN:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<1024x64xf32, strided<[64, 1], offset: ?>> to !llvm.struct
// CHECK: llvm.store %[[DYN]], %{{.*}} : !llvm.struct
// CHECK: call @epl_rt_parallel_for
func.func @dynamic_offset(%a: memref<1024x64xf32, strided<[64, 1], offset: ?>>,
                          %b: memref<1024x64xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<1024x64xf32, strided<[64, 1], offset: ?>>) outs(%b : memref<1024x64xf32>) {
    ^bb0(%x: f32, %y: f32):
      %e = math.exp %x : f32
      linalg.yield %e : f32
  }
  return
}

// A buffer in another memory space too (the slots hold default pointers);
// one with a static offset and a column-major layout goes as its pointer.
// CHECK-LABEL: func.func @memory_space
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(ptr<1>, ptr<1>, i64, array<2 x i64>, array<2 x i64>)>
// CHECK: llvm.alloca %{{.*}} x !llvm.ptr
// CHECK: call @epl_rt_parallel_for
func.func @memory_space(%a: memref<1024x64xf32, strided<[64, 1], offset: 128>, 1>,
                        %b: memref<1024x64xf32, strided<[1, 1024]>>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<1024x64xf32, strided<[64, 1], offset: 128>, 1>)
      outs(%b : memref<1024x64xf32, strided<[1, 1024]>>) {
    ^bb0(%x: f32, %y: f32):
      %e = math.exp %x : f32
      linalg.yield %e : f32
  }
  return
}

// CHECK: func.func private @epl_rt_parallel_for((!llvm.ptr, i64, i64) -> (), !llvm.ptr, i64)
