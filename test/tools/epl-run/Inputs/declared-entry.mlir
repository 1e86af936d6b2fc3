// An entry that is only declared (errors.test).
module {
  func.func private @model(%x: tensor<4xf32> {epl.arg = "input", epl.name = "x"}, %w: tensor<4xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32>
}
