// RUN: epl-opt %s --epl-free-local-buffers --split-input-file | FileCheck %s

// A buffer whose aliases are views used by kernels is freed on its own; the
// returned buffer, and a buffer a returned view aliases, stay with the
// dealloc, whose ownership results nobody uses, so the retained buffer
// itself leaves its list.
// CHECK-LABEL: func.func @step
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[VIEWED:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK: memref.dealloc %[[TMP]] : memref<8xf32>
// CHECK: bufferization.dealloc (%[[VIEWED]] : memref<2x4xf32>) if (%{{.*}}) retain (%[[OUT]], %{{.*}} :
// CHECK: return %[[OUT]]
func.func private @kernel(memref<8xf32>, memref<8xf32>)
func.func @step(%x: memref<8xf32>) -> (memref<8xf32>, memref<8xf32>) {
  %true = arith.constant true
  %tmp = memref.alloc() : memref<8xf32>
  %out = memref.alloc() : memref<8xf32>
  %viewed = memref.alloc() : memref<2x4xf32>
  %flat = memref.collapse_shape %tmp [[0]] : memref<8xf32> into memref<8xf32>
  call @kernel(%x, %flat) : (memref<8xf32>, memref<8xf32>) -> ()
  call @kernel(%flat, %out) : (memref<8xf32>, memref<8xf32>) -> ()
  %v = memref.collapse_shape %viewed [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  %r:2 = bufferization.dealloc (%tmp, %out, %viewed : memref<8xf32>, memref<8xf32>, memref<2x4xf32>)
      if (%true, %true, %true) retain (%out, %v : memref<8xf32>, memref<8xf32>)
  return %out, %v : memref<8xf32>, memref<8xf32>
}

// -----

// Conditional ownership, a buffer forwarded into a loop, and used
// ownership results are left to upstream's simplification.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: memref.dealloc
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}}, %{{.*}} :
func.func @kept(%c: i1, %n: index) -> (memref<8xf32>, i1) {
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  %l = scf.for %i = %c0 to %n step %c1 iter_args(%it = %b) -> (memref<8xf32>) {
    scf.yield %it : memref<8xf32>
  }
  %out = memref.alloc() : memref<8xf32>
  %r:1 = bufferization.dealloc (%a, %b, %out : memref<8xf32>, memref<8xf32>, memref<8xf32>)
      if (%c, %true, %true) retain (%out : memref<8xf32>)
  return %out, %r#0 : memref<8xf32>, i1
}
