// RUN: epl-opt %s --epl-host-kernel-images --split-input-file --verify-diagnostics | FileCheck %s
// The whole cuda lowering with host kernels: the host code as for a GPU,
// the kernels' launchers beside it.
// RUN: epl-opt %epl_src_root/examples/mlp.mlir --epl-training-step | epl-opt --epl-lower-to-cuda="host-kernels=1" | FileCheck %s --check-prefix=PIPELINE

// The module becomes an image naming it; the kernel a host function over
// its blocks and threads, and a launcher reading the kernel's arguments as
// cuLaunchKernel receives them: a memref's five descriptor fields (the
// buffer handed to the fake driver's check, as a GPU faults on memory not
// its own: its aligned pointer and the bytes it spans from there,
// (offset + 1 + (size - 1) * stride) * 4, none where a size is 0), then
// the f32.
// CHECK-LABEL: llvm.mlir.global private constant @__epl_host_name_kernels_add("add\00")
// CHECK-LABEL: func.func @step
// CHECK: gpu.launch_func @kernels::@add blocks in
// CHECK: gpu.binary @kernels [#gpu.object<#nvvm.target, bin = "epl-host-kernels:kernels:add\00">]
// CHECK: func.func private @__epl_host_kernel_kernels_add(%{{.*}}: memref<8xf32>, %{{.*}}: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index)
// CHECK-COUNT-6: scf.for
// CHECK: memref.store
// CHECK: func.func @__epl_host_launch_kernels_add(%[[PARAMS:.*]]: !llvm.ptr, %[[GX:.*]]: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK: %[[NAME:.*]] = llvm.getelementptr %{{.*}}[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x i8>
// CHECK: llvm.getelementptr %[[PARAMS]][0]
// CHECK: llvm.getelementptr %[[PARAMS]][1]
// CHECK-NEXT: llvm.load
// CHECK-NEXT: %[[ALIGNED:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.getelementptr %[[PARAMS]][2]
// CHECK: %[[OFFSET:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: llvm.getelementptr %[[PARAMS]][3]
// CHECK: %[[SIZE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: llvm.getelementptr %[[PARAMS]][4]
// CHECK: %[[STRIDE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: %[[E0:.*]] = llvm.add %[[OFFSET]], %{{.*}} : i64
// CHECK: %[[LAST:.*]] = llvm.sub %[[SIZE]], %{{.*}} : i64
// CHECK: %[[SPAN:.*]] = llvm.mul %[[LAST]], %[[STRIDE]] : i64
// CHECK: %[[E1:.*]] = llvm.add %[[E0]], %[[SPAN]] : i64
// CHECK: %[[NONE:.*]] = llvm.icmp "sle" %[[SIZE]], %{{.*}} : i64
// CHECK: %[[EMPTY:.*]] = llvm.or %{{.*}}, %[[NONE]] : i1
// CHECK: %[[FOUR:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK: %[[BYTES:.*]] = llvm.mul %[[E1]], %[[FOUR]] : i64
// CHECK: %[[CHECKED:.*]] = llvm.select %[[EMPTY]], %{{.*}}, %[[BYTES]] : i1, i64
// CHECK: %[[CSLOT:.*]] = llvm.mlir.addressof @__epl_host_check_buffer_kernels : !llvm.ptr
// CHECK: %[[CHECK:.*]] = llvm.load %[[CSLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[ARG0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: llvm.call %[[CHECK]](%[[NAME]], %[[ARG0]], %[[ALIGNED]], %[[CHECKED]]) : !llvm.ptr, (!llvm.ptr, i32, !llvm.ptr, i64) -> ()
// CHECK: %[[DESC:.*]] = llvm.insertvalue %{{.*}}[4, 0]
// CHECK: %[[A:.*]] = builtin.unrealized_conversion_cast %[[DESC]] : {{.*}} to memref<8xf32>
// CHECK: llvm.getelementptr %[[PARAMS]][5]
// CHECK: %[[S:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: %[[GXI:.*]] = arith.index_cast %[[GX]] : i64 to index
// CHECK: call @__epl_host_kernel_kernels_add(%[[A]], %[[S]], %[[GXI]],
module attributes {gpu.container_module} {
  func.func @step(%a: memref<8xf32>, %s: f32) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @kernels::@add blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>, %s : f32)
    return
  }
  gpu.module @kernels {
    gpu.func @add(%a: memref<8xf32>, %s: f32) kernel {
      %t = gpu.thread_id x
      %v = memref.load %a[%t] : memref<8xf32>
      %w = arith.addf %v, %s : f32
      memref.store %w, %a[%t] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// A kernel's assertion calls CUDA's __assertfail(message, file, line,
// function, 1) where it fails, through the pointer the fake driver sets
// when it loads the module.
// CHECK-LABEL: llvm.mlir.global private constant @__epl_host_kernel_checks_positive_assert0_function("positive\00")
// CHECK: llvm.mlir.global private constant @__epl_host_kernel_checks_positive_assert0_file("kernel.mlir\00")
// CHECK: llvm.mlir.global private constant @__epl_host_kernel_checks_positive_assert0_message("not positive\00")
// CHECK: func.func private @__epl_host_kernel_checks_positive(
// CHECK: %[[OK:.*]] = arith.cmpf ogt
// CHECK: %[[FAILED:.*]] = arith.xori %[[OK]], %true
// CHECK: scf.if %[[FAILED]] {
// CHECK: %[[SLOT:.*]] = llvm.mlir.addressof @__epl_host_assertfail_checks : !llvm.ptr
// CHECK: %[[FN:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[LINE:.*]] = llvm.mlir.constant(7 : i32) : i32
// CHECK: llvm.call %[[FN]](%{{.*}}, %{{.*}}, %[[LINE]], %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i64) -> ()
// CHECK-NOT: cf.assert
// CHECK: llvm.mlir.global weak @__epl_host_assertfail_checks(#llvm.zero) {addr_space = 0 : i32} : !llvm.ptr
module attributes {gpu.container_module} {
  gpu.module @checks {
    gpu.func @positive(%a: memref<8xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %a[%t] : memref<8xf32>
      %zero = arith.constant 0.0 : f32
      %ok = arith.cmpf ogt, %v, %zero : f32
      cf.assert %ok, "not positive" loc("kernel.mlir":7:3)
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{cannot run under the fake CUDA driver: an argument in memory space 3}}
    gpu.func @shared(%a: memref<8xf32, 3>) kernel {
      gpu.return
    }
  }
}

// PIPELINE: llvm.call @mgpuMemcpy
// PIPELINE: gpu.launch_func <%{{.*}} : !llvm.ptr> @__epl_kernels::@model_kernel blocks in
// PIPELINE: llvm.call @epl_rt_matmul_overwrite_f32
// PIPELINE: gpu.binary @__epl_kernels [#gpu.object<#nvvm.target, bin = "epl-host-kernels:__epl_kernels:{{[a-z0-9_,]+}}\00">]
// PIPELINE: llvm.func @__epl_host_launch___epl_kernels_model_kernel(%{{.*}}: !llvm.ptr, %{{.*}}: i64
