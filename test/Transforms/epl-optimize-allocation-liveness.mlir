// RUN: epl-opt %s --pass-pipeline='builtin.module(func.func(epl-optimize-allocation-liveness))' | FileCheck %s
// The same result as upstream's pass, op for op:
// RUN: epl-opt %s --pass-pipeline='builtin.module(func.func(optimize-allocation-liveness))' -o %t.upstream
// RUN: epl-opt %s --pass-pipeline='builtin.module(func.func(epl-optimize-allocation-liveness))' -o %t.ours
// RUN: diff %t.upstream %t.ours

func.func private @use(memref<8xf32>)
func.func private @other()

// Each free moves to right after its buffer's last use, a view's included;
// frees moved after the same op keep upstream's order (the last moved
// first: %b's, then %a's).
// CHECK-LABEL: func.func @last_use(
// CHECK:         %[[A:.*]] = memref.alloc()
// CHECK-NEXT:    %[[B:.*]] = memref.alloc()
// CHECK-NEXT:    %[[C:.*]] = memref.alloc()
// CHECK-NEXT:    call @use(%[[C]])
// CHECK-NEXT:    memref.dealloc %[[C]]
// CHECK-NEXT:    %[[V:.*]] = memref.expand_shape %[[B]]
// CHECK-NEXT:    call @pair(%[[A]], %[[V]])
// CHECK-NEXT:    memref.dealloc %[[B]]
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    call @other()
// CHECK-NEXT:    return
func.func private @pair(memref<8xf32>, memref<2x4xf32>)
func.func @last_use() {
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  %c = memref.alloc() : memref<8xf32>
  call @use(%c) : (memref<8xf32>) -> ()
  %v = memref.expand_shape %b [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  call @pair(%a, %v) : (memref<8xf32>, memref<2x4xf32>) -> ()
  call @other() : () -> ()
  memref.dealloc %c : memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  return
}

// A use in a nested region counts as its ancestor's; a free in another
// block than the allocation (here a branch) stays.
// CHECK-LABEL: func.func @regions(
// CHECK:         %[[A:.*]] = memref.alloc()
// CHECK-NEXT:    %[[B:.*]] = memref.alloc()
// CHECK-NEXT:    scf.if %arg0 {
// CHECK-NEXT:      call @use(%[[A]])
// CHECK-NEXT:      memref.dealloc %[[B]]
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    call @other()
func.func @regions(%p: i1) {
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  scf.if %p {
    func.call @use(%a) : (memref<8xf32>) -> ()
    memref.dealloc %b : memref<8xf32>
  }
  call @other() : () -> ()
  memref.dealloc %a : memref<8xf32>
  return
}
