// RUN: epl-opt %s --epl-gather-kernels | FileCheck %s

// Two launches of one body and one of another: one module, two kernels,
// the launches renamed.
// CHECK-LABEL: func.func @step
// CHECK: gpu.launch_func @__epl_kernels::@a
// CHECK-SAME: args(%arg0 : memref<8xf32>)
// CHECK: gpu.launch_func @__epl_kernels::@a
// CHECK-SAME: args(%arg1 : memref<8xf32>)
// CHECK: gpu.launch_func @__epl_kernels::@c
// CHECK: gpu.module @__epl_kernels
// CHECK-NEXT: gpu.func @a(
// CHECK: arith.addf
// CHECK: gpu.func @c(
// CHECK: arith.mulf
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @step(%x: memref<8xf32>, %y: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%x : memref<8xf32>)
    gpu.launch_func @b::@k blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%y : memref<8xf32>)
    gpu.launch_func @c::@k blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%y : memref<8xf32>)
    return
  }
  gpu.module @a {
    gpu.func @k(%buf: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %buf[%i] : memref<8xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %buf[%i] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @b {
    gpu.func @k(%buf: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %buf[%i] : memref<8xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %buf[%i] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @c {
    gpu.func @k(%buf: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %buf[%i] : memref<8xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %buf[%i] : memref<8xf32>
      gpu.return
    }
  }
}
