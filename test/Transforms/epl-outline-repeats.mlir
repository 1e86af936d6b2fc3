// RUN: epl-opt %s --epl-outline-repeats=min-ops=1 | FileCheck %s
// RUN: epl-opt %s --epl-outline-repeats | FileCheck %s --check-prefix=DEFAULT
// RUN: not epl-opt %s --epl-outline-repeats=min-ops=0 2>&1 | FileCheck %s --check-prefix=MIN
// MIN: error: epl-outline-repeats: min-ops must be at least 1, not 0
// The outlined host code lowers to LLVM like the rest.
// RUN: epl-opt %s --epl-outline-repeats=min-ops=1 --convert-scf-to-cf \
// RUN:   --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm \
// RUN:   --convert-cf-to-llvm \
// RUN:   --reconcile-unrealized-casts -o /dev/null

func.func private @__epl_kernel_0(memref<64xf32>, memref<64xf32>)
func.func private @__epl_kernel_1(memref<64xf32>, f32)

// Four layers; the first reads the argument and frees nothing, so it stays
// inline and the other three become calls. A buffer crosses a call as its
// two pointers and comes back through the caller's out-array; the constant
// every copy reads is made again in the function.
// CHECK-LABEL: func.func @layers(
// CHECK-SAME:      %[[X:.*]]: memref<64xf32>)
// CHECK:         %[[OUT:.*]] = llvm.alloca %{{.*}} x !llvm.array<2 x ptr>
// CHECK:         %[[A0:.*]] = memref.alloc()
// CHECK-NEXT:    call @__epl_kernel_0(%[[X]], %[[A0]])
// CHECK-COUNT-12: call @__epl_kernel_1(%[[A0]],
// CHECK:         %[[D0:.*]] = builtin.unrealized_conversion_cast %[[A0]]
// CHECK:         %[[P0:.*]] = llvm.extractvalue %[[D0]][0]
// CHECK:         %[[Q0:.*]] = llvm.extractvalue %[[D0]][1]
// CHECK:         call @[[LAYER:__epl_repeat_[0-9]+]](%[[P0]], %[[Q0]], %[[OUT]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK:         %[[P1:.*]] = llvm.load
// CHECK:         %[[Q1:.*]] = llvm.load
// CHECK-NEXT:    call @[[LAYER]](%[[P1]], %[[Q1]], %[[OUT]])
// CHECK:         call @[[LAYER]](
// CHECK-NOT:     call @__epl_kernel
// CHECK:         return
// CHECK:       func.func private @[[LAYER]](
// CHECK-SAME:      %[[ALLOCATED:.*]]: !llvm.ptr, %[[ALIGNED:.*]]: !llvm.ptr, %[[RESULTS:.*]]: !llvm.ptr)
// CHECK:         llvm.insertvalue %[[ALLOCATED]], %{{.*}}[0]
// CHECK:         llvm.insertvalue %[[ALIGNED]], %{{.*}}[1]
// CHECK:         %[[IN:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<64xf32>
// CHECK:         %[[C:.*]] = arith.constant 2.0
// CHECK:         %[[A:.*]] = memref.alloc()
// CHECK-NEXT:    call @__epl_kernel_0(%[[IN]], %[[A]])
// CHECK-COUNT-12: call @__epl_kernel_1(%[[A]], %[[C]])
// CHECK-NEXT:    memref.dealloc %[[IN]]
// CHECK:         llvm.store %{{.*}}, %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK:         llvm.store %{{.*}}, %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    return
// DEFAULT-LABEL: func.func @layers(
// DEFAULT-COUNT-48: call @__epl_kernel_1(
func.func @layers(%x: memref<64xf32>) -> memref<64xf32> {
  %c = arith.constant 2.0 : f32
  %a0 = memref.alloc() : memref<64xf32>
  call @__epl_kernel_0(%x, %a0) : (memref<64xf32>, memref<64xf32>) -> ()
  call @__epl_kernel_1(%a0, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a0, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a0, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a0, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a0, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a0, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a0, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a0, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a0, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a0, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a0, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a0, %c) : (memref<64xf32>, f32) -> ()
  %a1 = memref.alloc() : memref<64xf32>
  call @__epl_kernel_0(%a0, %a1) : (memref<64xf32>, memref<64xf32>) -> ()
  call @__epl_kernel_1(%a1, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a1, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a1, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a1, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a1, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a1, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a1, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a1, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a1, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a1, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a1, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a1, %c) : (memref<64xf32>, f32) -> ()
  memref.dealloc %a0 : memref<64xf32>
  %a2 = memref.alloc() : memref<64xf32>
  call @__epl_kernel_0(%a1, %a2) : (memref<64xf32>, memref<64xf32>) -> ()
  call @__epl_kernel_1(%a2, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a2, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a2, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a2, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a2, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a2, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a2, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a2, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a2, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a2, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a2, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a2, %c) : (memref<64xf32>, f32) -> ()
  memref.dealloc %a1 : memref<64xf32>
  %a3 = memref.alloc() : memref<64xf32>
  call @__epl_kernel_0(%a2, %a3) : (memref<64xf32>, memref<64xf32>) -> ()
  call @__epl_kernel_1(%a3, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a3, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a3, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a3, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a3, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a3, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a3, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a3, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a3, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a3, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a3, %c) : (memref<64xf32>, f32) -> ()
  call @__epl_kernel_1(%a3, %c) : (memref<64xf32>, f32) -> ()
  memref.dealloc %a2 : memref<64xf32>
  return %a3 : memref<64xf32>
}

// Values other than buffers cross as they are.
// CHECK-LABEL: func.func @scalars(
// CHECK:         %[[Y0:.*]] = call @[[CHAIN:__epl_repeat_[0-9]+]](%arg0) : (f32) -> f32
// CHECK-NEXT:    %[[Y1:.*]] = call @[[CHAIN]](%[[Y0]]) : (f32) -> f32
// CHECK-NEXT:    %[[Y2:.*]] = call @[[CHAIN]](%[[Y1]]) : (f32) -> f32
// CHECK-NEXT:    return %[[Y2]]
// CHECK:       func.func private @[[CHAIN]](%arg0: f32) -> f32
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3.0
// CHECK-NEXT:    arith.mulf %arg0, %[[C3]]
// CHECK-COUNT-7: arith.
// CHECK-NEXT:    return
func.func @scalars(%x: f32) -> f32 {
  %c = arith.constant 3.0 : f32
  %y0_0 = arith.mulf %x, %c : f32
  %y0_1 = arith.addf %y0_0, %c : f32
  %y0_2 = arith.mulf %y0_1, %c : f32
  %y0_3 = arith.addf %y0_2, %c : f32
  %y0_4 = arith.mulf %y0_3, %c : f32
  %y0_5 = arith.addf %y0_4, %c : f32
  %y0_6 = arith.mulf %y0_5, %c : f32
  %y0 = arith.addf %y0_6, %c : f32
  %y1_0 = arith.mulf %y0, %c : f32
  %y1_1 = arith.addf %y1_0, %c : f32
  %y1_2 = arith.mulf %y1_1, %c : f32
  %y1_3 = arith.addf %y1_2, %c : f32
  %y1_4 = arith.mulf %y1_3, %c : f32
  %y1_5 = arith.addf %y1_4, %c : f32
  %y1_6 = arith.mulf %y1_5, %c : f32
  %y1 = arith.addf %y1_6, %c : f32
  %y2_0 = arith.mulf %y1, %c : f32
  %y2_1 = arith.addf %y2_0, %c : f32
  %y2_2 = arith.mulf %y2_1, %c : f32
  %y2_3 = arith.addf %y2_2, %c : f32
  %y2_4 = arith.mulf %y2_3, %c : f32
  %y2_5 = arith.addf %y2_4, %c : f32
  %y2_6 = arith.mulf %y2_5, %c : f32
  %y2 = arith.addf %y2_6, %c : f32
  return %y2 : f32
}

// What a copy reads from before it is an argument, whichever value it is;
// but a copy whose op reads a value from before it where the others read
// one of their own is not the same code: the last copy's second op reads
// %x, so it stays inline.
// CHECK-LABEL: func.func @rewired(
// CHECK-NEXT:    %[[C:.*]] = arith.constant
// CHECK-NEXT:    %[[Y0:.*]] = call @[[CHAIN2:__epl_repeat_[0-9]+]](%arg0)
// CHECK-NEXT:    %[[Y1:.*]] = call @[[CHAIN2]](%arg0)
// CHECK-NEXT:    %[[Y2:.*]] = call @[[CHAIN2]](%[[Y1]])
// CHECK-NEXT:    %[[Y3:.*]] = arith.mulf %[[Y2]], %[[C]]
// CHECK-NEXT:    arith.addf %arg0, %[[C]]
// CHECK-COUNT-6: arith.
// CHECK-NEXT:    return
func.func @rewired(%x: f32) -> (f32, f32) {
  %c = arith.constant 3.0 : f32
  %y0_0 = arith.mulf %x, %c : f32
  %y0_1 = arith.addf %y0_0, %c : f32
  %y0_2 = arith.mulf %y0_1, %c : f32
  %y0_3 = arith.addf %y0_2, %c : f32
  %y0_4 = arith.mulf %y0_3, %c : f32
  %y0_5 = arith.addf %y0_4, %c : f32
  %y0_6 = arith.mulf %y0_5, %c : f32
  %y0 = arith.addf %y0_6, %c : f32
  %y1_0 = arith.mulf %x, %c : f32
  %y1_1 = arith.addf %y1_0, %c : f32
  %y1_2 = arith.mulf %y1_1, %c : f32
  %y1_3 = arith.addf %y1_2, %c : f32
  %y1_4 = arith.mulf %y1_3, %c : f32
  %y1_5 = arith.addf %y1_4, %c : f32
  %y1_6 = arith.mulf %y1_5, %c : f32
  %y1 = arith.addf %y1_6, %c : f32
  %y2_0 = arith.mulf %y1, %c : f32
  %y2_1 = arith.addf %y2_0, %c : f32
  %y2_2 = arith.mulf %y2_1, %c : f32
  %y2_3 = arith.addf %y2_2, %c : f32
  %y2_4 = arith.mulf %y2_3, %c : f32
  %y2_5 = arith.addf %y2_4, %c : f32
  %y2_6 = arith.mulf %y2_5, %c : f32
  %y2 = arith.addf %y2_6, %c : f32
  %y3_0 = arith.mulf %y2, %c : f32
  %y3_1 = arith.addf %x, %c : f32
  %y3_2 = arith.mulf %y3_1, %c : f32
  %y3_3 = arith.addf %y3_2, %c : f32
  %y3_4 = arith.mulf %y3_3, %c : f32
  %y3_5 = arith.addf %y3_4, %c : f32
  %y3_6 = arith.mulf %y3_5, %c : f32
  %y3 = arith.addf %y3_6, %c : f32
  return %y0, %y3 : f32, f32
}

// A copy that allocates on the stack stays inline, however the buffer leaves
// it (here through a region's yield): it would not outlive the call.
// CHECK-LABEL: func.func @stack(
// CHECK-NOT:     call @__epl_repeat
// CHECK:         return
func.func private @tick()
func.func @stack(%c: i1, %x0: i64, %x1: i64, %x2: i64)
    -> (memref<1xi64>, memref<1xi64>, memref<1xi64>) {
  %c0 = arith.constant 0 : index
  %r0 = scf.if %c -> memref<1xi64> {
    %a = memref.alloca() : memref<1xi64>
    memref.store %x0, %a[%c0] : memref<1xi64>
    scf.yield %a : memref<1xi64>
  } else {
    %b = memref.alloca() : memref<1xi64>
    scf.yield %b : memref<1xi64>
  }
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  %r1 = scf.if %c -> memref<1xi64> {
    %a = memref.alloca() : memref<1xi64>
    memref.store %x1, %a[%c0] : memref<1xi64>
    scf.yield %a : memref<1xi64>
  } else {
    %b = memref.alloca() : memref<1xi64>
    scf.yield %b : memref<1xi64>
  }
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  %r2 = scf.if %c -> memref<1xi64> {
    %a = memref.alloca() : memref<1xi64>
    memref.store %x2, %a[%c0] : memref<1xi64>
    scf.yield %a : memref<1xi64>
  } else {
    %b = memref.alloca() : memref<1xi64>
    scf.yield %b : memref<1xi64>
  }
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  return %r0, %r1, %r2 : memref<1xi64>, memref<1xi64>, memref<1xi64>
}

// Regions take part, their blocks in any order: a value used before its
// block defines it is the copy's own, not an input.
// CHECK-LABEL: func.func @regions(
// CHECK-NEXT:    call @[[REGION:__epl_repeat_[0-9]+]](%arg0) : (i64) -> ()
// CHECK-NEXT:    call @[[REGION]](%arg0) : (i64) -> ()
// CHECK-NEXT:    call @[[REGION]](%arg0) : (i64) -> ()
// CHECK-NEXT:    return
// CHECK:       func.func private @[[REGION]](%arg0: i64) {
// CHECK-NEXT:    %[[R:.*]] = scf.execute_region -> i64 {
// CHECK:           arith.muli %arg0, %arg0
// CHECK:         }
// CHECK-COUNT-4: call @use(%[[R]])
// CHECK-NEXT:    return
func.func private @use(i64)
func.func @regions(%x: i64) {
  %r0 = scf.execute_region -> i64 {
    cf.br ^bb2
  ^bb1:
    %s = arith.addi %t, %t : i64
    scf.yield %s : i64
  ^bb2:
    %t = arith.muli %x, %x : i64
    cf.br ^bb1
  }
  call @use(%r0) : (i64) -> ()
  call @use(%r0) : (i64) -> ()
  call @use(%r0) : (i64) -> ()
  call @use(%r0) : (i64) -> ()
  %r1 = scf.execute_region -> i64 {
    cf.br ^bb2
  ^bb1:
    %s = arith.addi %t, %t : i64
    scf.yield %s : i64
  ^bb2:
    %t = arith.muli %x, %x : i64
    cf.br ^bb1
  }
  call @use(%r1) : (i64) -> ()
  call @use(%r1) : (i64) -> ()
  call @use(%r1) : (i64) -> ()
  call @use(%r1) : (i64) -> ()
  %r2 = scf.execute_region -> i64 {
    cf.br ^bb2
  ^bb1:
    %s = arith.addi %t, %t : i64
    scf.yield %s : i64
  ^bb2:
    %t = arith.muli %x, %x : i64
    cf.br ^bb1
  }
  call @use(%r2) : (i64) -> ()
  call @use(%r2) : (i64) -> ()
  call @use(%r2) : (i64) -> ()
  call @use(%r2) : (i64) -> ()
  return
}

// Five copies alike by their ops whose regions differ: two of one kind,
// which save nothing as a run of their own, then three of another, which
// pay and are outlined (the search goes on after a run that does not pay
// but stopped short).
// CHECK-LABEL: func.func @trimmed
// CHECK-COUNT-2: scf.execute_region
// CHECK-COUNT-3: call @__epl_repeat_[[B:[0-9]+]](%{{.*}}) : (i64) -> ()
// CHECK-NEXT:    return
// A kernel is one loop nest, never host code to outline from, whatever
// repeats in it.
// CHECK-LABEL: func.func private @__epl_kernel_9
// CHECK-NOT:     call @__epl_repeat
// CHECK:         return
func.func private @use_i64(i64)
func.func @trimmed(%x: i64) {
  %ra0 = scf.execute_region -> i64 {
    %t = arith.muli %x, %x : i64
    scf.yield %t : i64
  }
  call @use_i64(%ra0) : (i64) -> ()
  call @use_i64(%ra0) : (i64) -> ()
  call @use_i64(%ra0) : (i64) -> ()
  %ra1 = scf.execute_region -> i64 {
    %t = arith.muli %x, %x : i64
    scf.yield %t : i64
  }
  call @use_i64(%ra1) : (i64) -> ()
  call @use_i64(%ra1) : (i64) -> ()
  call @use_i64(%ra1) : (i64) -> ()
  %rb0 = scf.execute_region -> i64 {
    %t = arith.addi %x, %x : i64
    scf.yield %t : i64
  }
  call @use_i64(%rb0) : (i64) -> ()
  call @use_i64(%rb0) : (i64) -> ()
  call @use_i64(%rb0) : (i64) -> ()
  %rb1 = scf.execute_region -> i64 {
    %t = arith.addi %x, %x : i64
    scf.yield %t : i64
  }
  call @use_i64(%rb1) : (i64) -> ()
  call @use_i64(%rb1) : (i64) -> ()
  call @use_i64(%rb1) : (i64) -> ()
  %rb2 = scf.execute_region -> i64 {
    %t = arith.addi %x, %x : i64
    scf.yield %t : i64
  }
  call @use_i64(%rb2) : (i64) -> ()
  call @use_i64(%rb2) : (i64) -> ()
  call @use_i64(%rb2) : (i64) -> ()
  return
}
func.func private @__epl_kernel_9(%x: i64) {
  %a = arith.muli %x, %x : i64
  call @use_i64(%a) : (i64) -> ()
  call @use_i64(%a) : (i64) -> ()
  %b = arith.muli %x, %x : i64
  call @use_i64(%b) : (i64) -> ()
  call @use_i64(%b) : (i64) -> ()
  %c = arith.muli %x, %x : i64
  call @use_i64(%c) : (i64) -> ()
  call @use_i64(%c) : (i64) -> ()
  return
}
