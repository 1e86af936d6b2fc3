// The whole CPU pipeline ends in the LLVM dialect with runtime calls for
// communication and matmuls, and the runtime's allocation functions.
// RUN: epl-opt %epl_src_root/examples/mlp.mlir --epl-lower-to-cpu | FileCheck %s
// RUN: epl-opt %epl_src_root/examples/mlp.mlir --epl-lower-to-cpu="blas=false" | FileCheck %s --check-prefix=LOOPS

// CHECK-NOT: linalg.
// CHECK-NOT: memref.
// CHECK: llvm.func @model
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// The forward GEMMs write their zero-filled outputs (beta = 0).
// CHECK: llvm.call @epl_rt_matmul_overwrite_f32
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// CHECK: llvm.func @_mlir_ciface_epl_rt_matmul_overwrite_f32

// LOOPS-NOT: epl_rt_matmul
