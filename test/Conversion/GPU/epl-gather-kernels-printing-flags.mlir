// RUN: epl-opt %s --epl-gather-kernels --mlir-elide-elementsattrs-if-larger=2 | FileCheck %s
// RUN: epl-opt %s --epl-gather-kernels --mlir-print-skip-regions --mlir-print-op-generic -o /dev/null

// Kernels are compared by their whole text, whatever the command line asks
// of printing: two kernels whose constants differ only past the elision
// limit stay two, each launch running its own.
// CHECK-LABEL: func.func @f
// CHECK: gpu.launch_func @__epl_kernels::@m0 blocks
// CHECK: gpu.launch_func @__epl_kernels::@m1 blocks
module attributes {gpu.container_module} {
  gpu.module @m0 {
    gpu.func @k(%out: memref<4xf32>, %i: index) kernel {
      %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
      %v = tensor.extract %c[%i] : tensor<4xf32>
      memref.store %v, %out[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @m1 {
    gpu.func @k(%out: memref<4xf32>, %i: index) kernel {
      %c = arith.constant dense<[5.0, 6.0, 7.0, 8.0]> : tensor<4xf32>
      %v = tensor.extract %c[%i] : tensor<4xf32>
      memref.store %v, %out[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @f(%a: memref<4xf32>, %b: memref<4xf32>, %i: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @m0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>, %i : index)
    gpu.launch_func @m1::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<4xf32>, %i : index)
    return
  }
}
