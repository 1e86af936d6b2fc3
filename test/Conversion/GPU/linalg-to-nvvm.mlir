// The GPU lowering issue 12 builds on, by upstream passes alone, for what a
// lowered step holds: element-wise ops, fills and reductions on buffers.
// linalg -> parallel loops (tiled: 32 threads per block) -> gpu.launch ->
// outlined gpu.func kernels -> NVVM -> PTX for sm_90, and with CUDA's ptxas
// a cubin for sm_90; the host launches each kernel through runtime calls.
// (epl-lower-to-cuda maps linalg ops its own way, epl-linalg-to-gpu:
// docs/gpu.md; this test keeps the upstream passes it shares covered.)
//
// RUN: mlir-opt %s --convert-linalg-to-parallel-loops --scf-parallel-loop-tiling="parallel-loop-tile-sizes=1,32" --gpu-map-parallel-loops --convert-parallel-loops-to-gpu --lower-affine --gpu-kernel-outlining -o %t.outlined.mlir
// RUN: FileCheck %s --check-prefix=OUTLINED < %t.outlined.mlir
// RUN: mlir-opt %t.outlined.mlir --gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa" | FileCheck %s --check-prefix=PTX
// RUN: mlir-opt %t.outlined.mlir --gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa" | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=HOST

#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @step(%a: memref<64x128xf32>, %b: memref<64x128xf32>,
                %c: memref<64x128xf32>, %s: memref<64xf32>) {
  linalg.generic {indexing_maps = [#map, #map, #map],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<64x128xf32>, memref<64x128xf32>)
      outs(%c : memref<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %t = math.tanh %m : f32
    linalg.yield %t : f32
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<64xf32>)
  linalg.generic {indexing_maps = [#map, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%c : memref<64x128xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// Three kernels, launched from the host function: the element-wise op
// (blocks of 32 threads), the fill and the row reduction.
// OUTLINED-LABEL: func.func @step
// OUTLINED: gpu.launch_func @step_kernel::@step_kernel blocks in ({{.*}}) threads in ({{.*}}) args({{.*}}memref<64x128xf32>
// OUTLINED: gpu.launch_func @step_kernel_0::@step_kernel
// OUTLINED: gpu.launch_func @step_kernel_1::@step_kernel
// OUTLINED: gpu.module @step_kernel
// OUTLINED: gpu.func @step_kernel({{.*}}) kernel
// OUTLINED: gpu.block_id x
// OUTLINED: gpu.thread_id y
// OUTLINED: math.tanh
// OUTLINED: gpu.module @step_kernel_1
// OUTLINED: arith.addf

// PTX for sm_90, one binary per kernel module.
// PTX: gpu.binary @step_kernel [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "
// PTX-SAME: .target sm_90
// PTX: gpu.binary @step_kernel_0
// PTX: gpu.binary @step_kernel_1

// Host code: each kernel looked up and launched on a stream; each module
// loaded once, by a global constructor (PTX through the driver's JIT).
// HOST: call ptr @mgpuModuleGetFunction
// HOST: call ptr @mgpuStreamCreate
// HOST: call void @mgpuLaunchKernel
// HOST: call void @mgpuStreamSynchronize
// HOST: call ptr @mgpuModuleLoadJIT
