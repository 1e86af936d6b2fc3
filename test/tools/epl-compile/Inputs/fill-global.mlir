// A kernel that writes a mutable global (epl-compile once substituted
// its address into the kernel, which then wrote the kernels module's own
// copy of the global: zeros came back).
memref.global "private" @g : memref<4xf32> = dense<0.0>
func.func @main() -> tensor<4xf32> {
  %g = memref.get_global @g : memref<4xf32>
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%g : memref<4xf32>)
  %t = bufferization.to_tensor %g restrict : memref<4xf32> to tensor<4xf32>
  return %t : tensor<4xf32>
}
