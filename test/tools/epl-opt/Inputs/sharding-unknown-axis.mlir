epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = epl.sharding_constraint %x <@mesh, [["model"], []]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
