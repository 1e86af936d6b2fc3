epl.mesh @mesh ["data" = 2, "tensor" = 4]
func.func @f(%x: tensor<10x8xf32>) -> tensor<10x8xf32> {
  %0 = epl.sharding_constraint %x <@mesh, [["tensor"], []]> : tensor<10x8xf32>
  return %0 : tensor<10x8xf32>
}
