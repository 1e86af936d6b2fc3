// An argument runners cannot pass (errors.test).
func.func @model(%x: tensor<4xf16> {epl.arg = "input", epl.name = "x"}) -> tensor<4xf16> {
  return %x : tensor<4xf16>
}
