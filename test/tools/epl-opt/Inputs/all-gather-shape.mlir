epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<4x2xf32>) -> tensor<4x6xf32> {
  %0 = epl.all_gather %x on @mesh over ["tensor"] dim 1 : tensor<4x2xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}
