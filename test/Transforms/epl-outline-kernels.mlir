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

// -----

// A kernel whose every call passes buffers that cannot overlap (fresh
// allocations, or one fresh and one argument) is marked so that LLVM sees
// its pointers as noalias (kernel 2: a fresh buffer and a view of another);
// one called with two of the step's arguments is not. A buffer an op reads
// and writes is one argument (kernel 3: the same body reading and writing
// one view): the vectorizer's overlap check of two would fail.
// CHECK-LABEL: func.func private @__epl_kernel_0(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>)
// CHECK-SAME: passthrough = ["noinline", ["epl-noalias-arguments", "true"]]
// CHECK-LABEL: func.func private @__epl_kernel_1(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>)
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-LABEL: func.func private @__epl_kernel_2(%{{.*}}: memref<2xf32>, %{{.*}}: memref<2xf32>)
// CHECK-SAME: passthrough = ["noinline", ["epl-noalias-arguments", "true"]]
// CHECK-LABEL: func.func private @__epl_kernel_3(
// CHECK-SAME: %[[ONE:[^:]*]]: memref<2xf32>)
// CHECK-SAME: passthrough = ["noinline", ["epl-noalias-arguments", "true"]]
// CHECK: linalg.generic {{.*}} ins(%[[ONE]] : memref<2xf32>) outs(%[[ONE]] : memref<2xf32>)
#id = affine_map<(d0) -> (d0)>
func.func @aliasing(%x: memref<8xf32>, %a: memref<4xf32>, %b: memref<4xf32>) {
  %t = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.mulf %in, %in : f32
    linalg.yield %s : f32
  }
  %lo = memref.subview %t[0] [2] [1] : memref<8xf32> to memref<2xf32, strided<[1]>>
  %lo2 = memref.cast %lo : memref<2xf32, strided<[1]>> to memref<2xf32>
  %hi2 = memref.alloc() : memref<2xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%hi2 : memref<2xf32>) outs(%lo2 : memref<2xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.subf %in, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%lo2 : memref<2xf32>) outs(%lo2 : memref<2xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.subf %in, %o : f32
    linalg.yield %s : f32
  }
  memref.dealloc %hi2 : memref<2xf32>
  memref.dealloc %t : memref<8xf32>
  return
}

// -----

// One kernel for both ops: distinct buffers at the first call, two views of
// one buffer at the second, so not noalias.
// CHECK-LABEL: func.func private @__epl_kernel_0
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-NOT: func.func private @__epl_kernel_1
#id = affine_map<(d0) -> (d0)>
func.func @every_call(%x: memref<4xf32>) {
  %t = memref.alloc() : memref<8xf32>
  %lo = memref.subview %t[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %hi = memref.subview %t[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %lo2 = memref.cast %lo : memref<4xf32, strided<[1]>> to memref<4xf32, strided<[1], offset: ?>>
  %hi2 = memref.cast %hi : memref<4xf32, strided<[1], offset: 4>> to memref<4xf32, strided<[1], offset: ?>>
  %u = memref.alloc() : memref<4xf32>
  %u2 = memref.cast %u : memref<4xf32> to memref<4xf32, strided<[1], offset: ?>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%u2 : memref<4xf32, strided<[1], offset: ?>>) outs(%lo2 : memref<4xf32, strided<[1], offset: ?>>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%hi2 : memref<4xf32, strided<[1], offset: ?>>) outs(%lo2 : memref<4xf32, strided<[1], offset: ?>>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %o : f32
    linalg.yield %s : f32
  }
  memref.dealloc %u : memref<4xf32>
  memref.dealloc %t : memref<8xf32>
  return
}

// -----

// A buffer of unknown origin (chosen by a select, a transpose: not a view
// op) may be the other one: not noalias.
// CHECK-LABEL: func.func private @__epl_kernel_0
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-LABEL: func.func private @__epl_kernel_1
// CHECK-SAME: passthrough = ["noinline"]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @unknown_origin(%c: i1, %x: memref<4x4xf32>) {
  %t = memref.alloc() : memref<4x4xf32>
  %either = arith.select %c, %t, %x : memref<4x4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%either : memref<4x4xf32>) outs(%t : memref<4x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %o : f32
    linalg.yield %s : f32
  }
  %tt = memref.transpose %t (i, j) -> (j, i) : memref<4x4xf32> to memref<4x4xf32, affine_map<(d0, d1) -> (d1 * 4 + d0)>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%tt : memref<4x4xf32, affine_map<(d0, d1) -> (d1 * 4 + d0)>>) outs(%t : memref<4x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.mulf %in, %o : f32
    linalg.yield %s : f32
  }
  memref.dealloc %t : memref<4x4xf32>
  return
}

// -----

// An unranked copy stays a memref.copy; a block argument that is not the
// function's (here the allocation itself, through a branch) is of unknown
// origin: not noalias.
// CHECK-LABEL: func.func @unranked
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<*xf32> to memref<*xf32>
// CHECK-LABEL: func.func private @__epl_kernel_0
// CHECK-SAME: passthrough = ["noinline"]
func.func @unranked(%a: memref<*xf32>, %b: memref<*xf32>) {
  memref.copy %a, %b : memref<*xf32> to memref<*xf32>
  return
}
func.func @blocks(%n: index) {
  %a = memref.alloc() : memref<16xf32>
  cf.br ^bb1(%a : memref<16xf32>)
^bb1(%b: memref<16xf32>):
  %v = memref.subview %a[1] [15] [1] : memref<16xf32> to memref<15xf32, strided<[1], offset: 1>>
  %w = memref.subview %b[0] [15] [1] : memref<16xf32> to memref<15xf32, strided<[1]>>
  linalg.copy ins(%v : memref<15xf32, strided<[1], offset: 1>>) outs(%w : memref<15xf32, strided<[1]>>)
  memref.dealloc %a : memref<16xf32>
  return
}
