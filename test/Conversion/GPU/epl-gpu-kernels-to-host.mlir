// RUN: epl-opt %s --epl-gpu-kernels-to-host --split-input-file --verify-diagnostics | FileCheck %s

// The kernel becomes a host function over every block and thread; the
// launch a call of it with the grid's and the block's sizes, the copy a
// memref.copy, and the gpu.module is gone.
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>)
// CHECK: memref.copy %[[B]], %[[A]]
// CHECK: call @__epl_kernel_kernels_scale(%[[A]], %c2, %c1, %c1, %c4, %c1, %c1)
// CHECK-LABEL: func.func private @__epl_kernel_kernels_scale
// CHECK-SAME: (%[[BUF:.*]]: memref<8xf32>, %[[GX:.*]]: index, %[[GY:.*]]: index, %[[GZ:.*]]: index, %[[BX:.*]]: index, %[[BY:.*]]: index, %[[BZ:.*]]: index)
// CHECK-SAME: passthrough = ["noinline"]
// CHECK: scf.for %{{.*}} = %c0 to %[[GZ]]
// CHECK: scf.for %{{.*}} = %c0 to %[[GY]]
// CHECK: scf.for %[[BID:.*]] = %c0 to %[[GX]]
// CHECK: scf.for %{{.*}} = %c0 to %[[BZ]]
// CHECK: scf.for %{{.*}} = %c0 to %[[BY]]
// CHECK: scf.for %[[TID:.*]] = %c0 to %[[BX]]
// CHECK: %[[BASE:.*]] = arith.muli %[[BID]], %[[BX]]
// CHECK: %[[I:.*]] = arith.addi %[[BASE]], %[[TID]]
// CHECK: memref.load %[[BUF]][%[[I]]]
module attributes {gpu.container_module} {
  func.func @step(%a: memref<8xf32>, %b: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    gpu.memcpy %a, %b : memref<8xf32>, memref<8xf32>
    gpu.launch_func @kernels::@scale blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<8xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @scale(%buf: memref<8xf32>) kernel {
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %bdim = gpu.block_dim x
      %base = arith.muli %bid, %bdim : index
      %i = arith.addi %base, %tid : index
      %x = memref.load %buf[%i] : memref<8xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %buf[%i] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// Threads that must run together cannot run one after another.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sync(%buf: memref<8xf32>) kernel {
      // expected-error @+1 {{cannot run on the host: the threads of a block would have to run together}}
      gpu.barrier
      gpu.return
    }
  }
}
