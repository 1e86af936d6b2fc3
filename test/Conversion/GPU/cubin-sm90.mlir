// With CUDA's ptxas, the same kernels become a cubin for sm_90
// (gpu-module-to-binary runs ptxas: its time is in the object's
// properties) and the object is an ELF file.
// REQUIRES: ptxas
//
// RUN: mlir-opt %S/linalg-to-nvvm.mlir --convert-linalg-to-parallel-loops --scf-parallel-loop-tiling="parallel-loop-tile-sizes=1,32" --gpu-map-parallel-loops --convert-parallel-loops-to-gpu --lower-affine --gpu-kernel-outlining --gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=bin" | FileCheck %s
// CHECK: gpu.binary @step_kernel [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, properties = {ISAToBinaryTimeInMs = {{[0-9]+}} : i64, {{.*}}}, bin = "\7FELF
// CHECK: gpu.binary @step_kernel_0
// CHECK: gpu.binary @step_kernel_1
