// The whole cuda lowering of a data-parallel training step (2 devices): every
// linalg op a kernel compiled to PTX for sm_90, the contractions cuBLAS
// calls and the gradient reduction an all-reduce, both through the
// runtime's C ABI; launches in the host code, which is all LLVM dialect.
// RUN: epl-opt %epl_src_root/examples/mlp.mlir --epl-training-step="devices=2" | epl-opt --epl-lower-to-cuda="format=isa" | FileCheck %s
// A newer chip gets the PTX version that knows it (the pipeline derives it).
// RUN: epl-opt %epl_src_root/examples/mlp.mlir --epl-training-step | epl-opt --epl-lower-to-cuda="chip=sm_100 format=isa" | FileCheck %s --check-prefix=SM100
// SM100: #nvvm.target<O = 3, chip = "sm_100", features = "+ptx86">
// With CUDA's ptxas, the kernels are cubins for sm_90.
// RUN: %if ptxas %{ epl-opt %epl_src_root/examples/mlp.mlir --epl-training-step="devices=2" | epl-opt --epl-lower-to-cuda | FileCheck %s --check-prefix=CUBIN %}

// CHECK-NOT: linalg.
// CHECK-NOT: memref.
// The arguments (host buffers) are copied into device buffers first, and
// every launch and copy goes to a stream (the runtime's: one per rank).
// CHECK: llvm.func @model(
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.call @mgpuStreamCreate
// CHECK: llvm.call @mgpuMemcpy
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @__epl_kernels::@model_kernel blocks in
// CHECK: llvm.call @epl_rt_matmul_overwrite_f32
// CHECK: llvm.call @epl_rt_all_reduce_f32
// Updated parameters and state are copied back to the host buffers.
// CHECK: llvm.call @mgpuMemcpy
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// CHECK: gpu.binary @__epl_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_90
// CHECK-NOT: linalg.
// CHECK-NOT: memref.

// CUBIN: gpu.binary @__epl_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}bin = "\7FELF
