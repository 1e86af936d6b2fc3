// RUN: epl-opt %s --epl-linalg-to-gpu --split-input-file | FileCheck %s

// An element-wise op on 3x100 points: 300 threads in two blocks of 256, the
// last block guarded; the innermost loop is the fastest-varying index.
// CHECK-LABEL: func.func @elementwise
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9_]+]], %{{.*}}, %{{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%[[TX:[a-z0-9_]+]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]])
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %[[C256]]
// CHECK: %[[LIN:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[LIN]], %{{.*}}
// CHECK: scf.if %[[IN]]
// CHECK: %[[J:.*]] = arith.remui %[[LIN]], %{{.*}}
// CHECK: %[[I:.*]] = arith.divui %[[LIN]], %{{.*}}
// CHECK: %[[X:.*]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK: %[[T:.*]] = math.tanh %[[X]]
// CHECK: memref.store %[[T]], %arg1[%[[I]], %[[J]]]
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
func.func @elementwise(%a: memref<3x100xf32>, %b: memref<3x100xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<3x100xf32>) outs(%b : memref<3x100xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.tanh %x : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// A row sum: one thread per row (8 threads, one block), the reduction loop
// inside it with the accumulator in a register, loaded and stored once.
// CHECK-LABEL: func.func @row_sum
// CHECK: gpu.launch
// CHECK-SAME: threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c8
// CHECK: %[[INIT:.*]] = memref.load %arg1[%[[ROW:[a-z0-9_]+]]] : memref<8xf32>
// CHECK: %[[SUM:.*]] = scf.for %[[K:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32)
// CHECK: %[[X:.*]] = memref.load %arg0[%[[ROW]], %[[K]]]
// CHECK: %[[NEW:.*]] = arith.addf %[[X]], %[[ACC]]
// CHECK: scf.yield %[[NEW]]
// CHECK: memref.store %[[SUM]], %arg1[%[[ROW]]]
#row = affine_map<(i, k) -> (i)>
#mat = affine_map<(i, k) -> (i, k)>
func.func @row_sum(%a: memref<8x16xf32>, %s: memref<8xf32>) {
  linalg.generic {indexing_maps = [#mat, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<8x16xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A sum from zeros the fill before it wrote: the accumulator starts from
// the fill's value, not a load, and the fill is no launch of its own. A
// fill that something reads before the sum stays, and its sum loads.
// CHECK-LABEL: func.func @row_sum_from_fill
// CHECK-SAME: (%[[A:.*]]: memref<8x16xf32>, %[[S:.*]]: memref<8xf32>, %[[T:.*]]: memref<8xf32>, %[[U:.*]]: memref<8xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: gpu.launch
// CHECK-NOT: memref.load %[[S]]
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32)
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: gpu.terminator
// The second fill, read by the copy, is a launch; its sum loads.
// CHECK: gpu.launch
// CHECK: memref.store %[[ZERO]], %[[T]]
// CHECK: gpu.launch
// CHECK: memref.load %[[T]]
// CHECK: gpu.launch
// CHECK: %[[INIT:.*]] = memref.load %[[T]]
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]]) -> (f32)
#row = affine_map<(i, k) -> (i)>
#mat = affine_map<(i, k) -> (i, k)>
func.func @row_sum_from_fill(%a: memref<8x16xf32>, %s: memref<8xf32>, %t: memref<8xf32>, %u: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<8xf32>)
  linalg.generic {indexing_maps = [#mat, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<8x16xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%t : memref<8xf32>)
  memref.copy %t, %u : memref<8xf32> to memref<8xf32>
  linalg.generic {indexing_maps = [#mat, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<8x16xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Fills that must stay: a result written at one index of a longer
// dimension (the rest keeps the fill's values), and a sum that reads its
// own result's buffer as an input.
// CHECK-LABEL: func.func @fills_that_stay
// CHECK-SAME: (%[[A:.*]]: memref<4x2xf32>, %[[X:.*]]: memref<4x2xf32>, %[[Y:.*]]: memref<4xf32>)
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[X]]
// CHECK: gpu.launch
// CHECK: memref.load %[[X]]
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[Y]]
// CHECK: gpu.launch
// CHECK: memref.load %[[Y]]
func.func @fills_that_stay(%a: memref<4x2xf32>, %x: memref<4x2xf32>, %y: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%x : memref<4x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i, 0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x2xf32>) outs(%x : memref<4x2xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%y : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>,
                                   affine_map<(i, k) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a, %y : memref<4x2xf32>, memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%v: f32, %w: f32, %acc: f32):
    %p = arith.mulf %v, %w : f32
    %r = arith.addf %p, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Bufferization copies a filled buffer that several sums start from: each
// starts from the fill's value and its copy goes; the fill stays (the
// third reader, a copy out, still reads it), passing over a call that is
// not given it.
// CHECK-LABEL: func.func @sums_from_copies_of_a_fill
// CHECK-SAME: (%[[A:.*]]: memref<8x16xf32>, %[[S:.*]]: memref<8xf32>, %[[T:.*]]: memref<8xf32>, %[[U:.*]]: memref<8xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[F:.*]] = memref.alloc() : memref<8xf32>
// CHECK: gpu.launch
// CHECK: memref.store %[[ZERO]], %[[F]]
// CHECK: gpu.launch
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32)
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: call @unrelated
// CHECK: gpu.launch
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32)
// CHECK: memref.store %{{.*}}, %[[T]]
// CHECK: gpu.launch
// CHECK: memref.load %[[F]]
// CHECK: memref.store %{{.*}}, %[[U]]
// CHECK-NOT: gpu.launch
#row = affine_map<(i, k) -> (i)>
#mat = affine_map<(i, k) -> (i, k)>
func.func private @unrelated(memref<8x16xf32>)
func.func @sums_from_copies_of_a_fill(%a: memref<8x16xf32>, %s: memref<8xf32>, %t: memref<8xf32>, %u: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %f = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%f : memref<8xf32>)
  memref.copy %f, %s : memref<8xf32> to memref<8xf32>
  linalg.generic {indexing_maps = [#mat, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<8x16xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  call @unrelated(%a) : (memref<8x16xf32>) -> ()
  memref.copy %f, %t : memref<8xf32> to memref<8xf32>
  linalg.generic {indexing_maps = [#mat, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<8x16xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  memref.copy %f, %u : memref<8xf32> to memref<8xf32>
  memref.dealloc %f : memref<8xf32>
  return
}

// -----

// What fusion makes: an element-wise producer's value at every point of a
// column sum is a result too, written at each point of the reduction loop.
// CHECK-LABEL: func.func @fused_column_sum
// CHECK: gpu.launch
// CHECK: %[[INIT:.*]] = memref.load %arg2[%[[COL:[a-z0-9_]+]]] : memref<16xf32>
// CHECK-NOT: memref.load %arg1
// CHECK: scf.for %[[K:[a-z0-9_]+]] = {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]])
// CHECK: %[[X:.*]] = memref.load %arg0[%[[K]], %[[COL]]]
// CHECK: %[[E:.*]] = math.exp %[[X]]
// CHECK: arith.addf %[[E]], %[[ACC]]
// CHECK: memref.store %[[E]], %arg1[%[[K]], %[[COL]]]
// CHECK: memref.store %{{.*}}, %arg2[%[[COL]]]
#m = affine_map<(k, j) -> (k, j)>
#col = affine_map<(k, j) -> (j)>
func.func @fused_column_sum(%a: memref<8x16xf32>, %e: memref<8x16xf32>, %s: memref<16xf32>) {
  linalg.generic {indexing_maps = [#m, #m, #col], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<8x16xf32>) outs(%e, %s : memref<8x16xf32>, memref<16xf32>) {
  ^bb0(%x: f32, %o: f32, %acc: f32):
    %v = math.exp %x : f32
    %r = arith.addf %v, %acc : f32
    linalg.yield %v, %r : f32, f32
  }
  return
}

// -----

// No parallel loop (a loss): one thread; a fill reads its scalar directly;
// a copy is an element-wise op; a constant global the kernels read is
// copied to device memory, a runtime descriptor (epl.host) is not.
// CHECK-LABEL: func.func @scalar_fill_copy_constant
// CHECK: %[[DESC:.*]] = memref.get_global @descriptor
// CHECK: %[[HOST:.*]] = memref.get_global @table
// CHECK: %[[DEV:.*]] = memref.alloc() : memref<4xf32>
// CHECK: gpu.memcpy %[[DEV]], %[[HOST]]
// CHECK: gpu.launch
// CHECK-SAME: threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1
// CHECK: scf.for
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg1[%{{.*}}]
// CHECK: gpu.launch
// CHECK: memref.load %[[DEV]]
// CHECK: call @use(%[[DESC]])
// CHECK: memref.dealloc %[[DEV]]
// CHECK-NEXT: return
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
memref.global "private" constant @descriptor : memref<2xi64> = dense<[0, 1]> {epl.host}
func.func private @use(memref<2xi64>)
#all = affine_map<(i) -> (i)>
#none = affine_map<(i) -> ()>
func.func @scalar_fill_copy_constant(%a: memref<4xf32>, %b: memref<4xf32>, %loss: memref<f32>) {
  %d = memref.get_global @descriptor : memref<2xi64>
  %t = memref.get_global @table : memref<4xf32>
  linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction"]}
      ins(%a : memref<4xf32>) outs(%loss : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%b : memref<4xf32>)
  memref.copy %t, %b : memref<4xf32> to memref<4xf32>
  call @use(%d) : (memref<2xi64>) -> ()
  return
}

// -----

// A scatter-add decomposed into loops (two ids may name one row): one
// thread runs the whole nest, in its order.
// CHECK-LABEL: func.func @scatter
// CHECK: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[ONE:.*]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads(%{{.*}}) in (%{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]])
// CHECK-NEXT: scf.for
// CHECK: memref.load %arg1
// CHECK: memref.store
// CHECK: gpu.terminator
func.func @scatter(%g: memref<4xf32>, %ids: memref<4xindex>, %table: memref<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %row = memref.load %ids[%i] : memref<4xindex>
    %v = memref.load %g[%i] : memref<4xf32>
    %old = memref.load %table[%row] : memref<10xf32>
    %new = arith.addf %old, %v : f32
    memref.store %new, %table[%row] : memref<10xf32>
  }
  return
}

// -----

// A scatter-add's independent rows (epl-parallelize-scatters), bufferized:
// one thread per row (600 rows, three blocks of 256), each running its
// row's loop in order.
// CHECK-LABEL: func.func @scatter_rows
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C600:.*]] = arith.constant 600 : index
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9_]+]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C3]], %{{.*}}) threads(%[[TX:[a-z0-9_]+]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]],
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %[[C256]]
// CHECK: %[[ROW:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %[[C600]]
// CHECK: scf.if %[[IN]]
// CHECK: memref.subview %arg2[%[[ROW]], 0]
// CHECK: scf.for
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK-NOT: scf.forall
func.func @scatter_rows(%g: memref<600x4xf32>, %ids: memref<600x4xindex>, %table: memref<600x10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.forall (%r) in (600) {
    %row = memref.subview %table[%r, 0] [1, 10] [1, 1]
        : memref<600x10xf32> to memref<10xf32, strided<[1], offset: ?>>
    scf.for %i = %c0 to %c4 step %c1 {
      %col = memref.load %ids[%r, %i] : memref<600x4xindex>
      %v = memref.load %g[%r, %i] : memref<600x4xf32>
      %old = memref.load %row[%col] : memref<10xf32, strided<[1], offset: ?>>
      %new = arith.addf %old, %v : f32
      memref.store %new, %row[%col] : memref<10xf32, strided<[1], offset: ?>>
    }
  }
  return
}

// -----

// Iterations from a lower bound with a step, of a dynamic count: thread t
// runs iteration 2 + 3 * t of ceil((n - 2) / 3).
// CHECK-LABEL: func.func @strided_rows
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[HI:.*]] = arith.maxsi %arg1, %[[C2]]
// CHECK: %[[SPAN:.*]] = arith.subi %[[HI]], %[[C2]]
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[N:.*]] = arith.ceildivui %[[SPAN]], %[[C3]]
// CHECK: gpu.launch
// CHECK: %[[T:.*]] = arith.addi
// CHECK: arith.cmpi ult, %[[T]], %{{.*}}
// CHECK: %[[S:.*]] = arith.muli %[[T]], %{{.*}}
// CHECK: %[[I:.*]] = arith.addi %{{.*}}, %[[S]]
// CHECK: memref.store %{{.*}}, %arg0[%[[I]]]
func.func @strided_rows(%out: memref<?xf32>, %n: index) {
  %one = arith.constant 1.0 : f32
  scf.forall (%i) = (2) to (%n) step (3) {
    memref.store %one, %out[%i] : memref<?xf32>
  }
  return
}

// -----

// A dynamic size then a static one: n * 4 threads, however many blocks
// that makes (before, the static size alone was counted: one block of 4).
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: %[[N:.*]] = memref.dim %arg0, %c0
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[PN:.*]] = arith.muli %{{.*}}, %[[N]]
// CHECK: %[[P:.*]] = arith.muli %[[PN]], %c4
// CHECK: %[[B:.*]] = arith.ceildivui %[[P]], %[[C256]]
// CHECK: %[[G:.*]] = arith.maxui %[[B]]
// CHECK: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[G]], %{{.*}}) threads(%{{.*}}) in (%{{.*}} = %[[C256]],
// CHECK: arith.cmpi ult, %{{.*}}, %[[P]]
func.func @dynamic_rows(%a: memref<?x4xf32>, %out: memref<?x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x4xf32>) outs(%out : memref<?x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

// A loop with no iterations (its upper bound below its lower one) is no
// launch.
// CHECK-LABEL: func.func @no_iterations
// CHECK-NOT: gpu.launch
// CHECK-NOT: scf.forall
// CHECK: return
func.func @no_iterations(%out: memref<16xf32>) {
  %one = arith.constant 1.0 : f32
  scf.forall (%i) = (10) to (2) step (3) {
    memref.store %one, %out[%i] : memref<16xf32>
  }
  return
}

// -----

// A body that allocates cannot move into a kernel: the loop stays on the
// host, and each iteration's buffer accesses run as one thread.
// CHECK-LABEL: func.func @allocating_rows
// CHECK: scf.forall
// CHECK: memref.alloc
// CHECK: gpu.launch
func.func @allocating_rows(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  scf.forall (%i) in (8) {
    %t = memref.alloc() : memref<1xf32>
    memref.store %one, %t[%c0] : memref<1xf32>
    %v = memref.load %t[%c0] : memref<1xf32>
    memref.store %v, %out[%i] : memref<8xf32>
    memref.dealloc %t : memref<1xf32>
  }
  return
}

// -----

// A one-element scatter-add folds to straight-line code: a scalar loaded,
// computed on and stored back. All of it runs as one thread; the buffer
// freed in the middle (at its last use) is freed after the launch.
// CHECK-LABEL: func.func @scalar_scatter
// CHECK: gpu.launch
// CHECK-NEXT: %[[ID:.*]] = memref.load %arg0
// CHECK-NEXT: %[[ROW:.*]] = arith.index_cast %[[ID]]
// CHECK-NEXT: %[[OLD:.*]] = memref.load %arg2[%[[ROW]]]
// CHECK-NEXT: %[[G:.*]] = memref.load %arg1
// CHECK-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[G]]
// CHECK-NEXT: memref.store %[[NEW]], %arg2[%[[ROW]]]
// CHECK-NEXT: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %arg0
func.func @scalar_scatter(%ids: memref<1xi64>, %g: memref<1xf32>, %table: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %id = memref.load %ids[%c0] : memref<1xi64>
  memref.dealloc %ids : memref<1xi64>
  %row = arith.index_cast %id : i64 to index
  %old = memref.load %table[%row] : memref<4xf32>
  %v = memref.load %g[%c0] : memref<1xf32>
  %new = arith.addf %old, %v : f32
  memref.store %new, %table[%row] : memref<4xf32>
  return
}

// -----

// A constant read in a branch that yields it: copied to the device once,
// at the function's start, and freed where the function returns (before,
// at the end of the branch, before its reader).
// CHECK-LABEL: func.func @constant_in_branch
// CHECK-NEXT: %[[G:.*]] = memref.get_global @k
// CHECK-NEXT: %[[D:.*]] = memref.alloc()
// CHECK-NEXT: gpu.memcpy %[[D]], %[[G]]
// CHECK: scf.if
// CHECK-NEXT: scf.yield %[[D]]
// CHECK: gpu.launch
// CHECK: memref.dealloc %[[D]]
// CHECK-NEXT: return
memref.global "private" constant @k : memref<4xf32> = dense<3.0>
func.func @constant_in_branch(%c: i1, %a: memref<4xf32>, %out: memref<4xf32>) {
  %r = scf.if %c -> memref<4xf32> {
    %g = memref.get_global @k : memref<4xf32>
    scf.yield %g : memref<4xf32>
  } else {
    scf.yield %a : memref<4xf32>
  }
  linalg.copy ins(%r : memref<4xf32>) outs(%out : memref<4xf32>)
  return
}

// -----

// A parallel loop of one point need not index the result: a keep-dim
// result reads it at 0, and its one thread writes each element.
// CHECK-LABEL: func.func @unit_parallel_loop
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg1[%c0{{.*}}, %{{.*}}]
func.func @unit_parallel_loop(%a: memref<1x8xf32>, %b: memref<1x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, c) -> (b, c)>, affine_map<(b, c) -> (0, c)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<1x8xf32>) outs(%b : memref<1x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.mulf %x, %x : f32
    linalg.yield %r : f32
  }
  return
}
