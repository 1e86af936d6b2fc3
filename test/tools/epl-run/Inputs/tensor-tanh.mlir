// A forward with math on tensors (tanh of the input), summed.
func.func @model(%x: tensor<8x16xf32> {epl.arg = "input", epl.name = "x"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %a = math.tanh %x : tensor<8x16xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%a : tensor<8x16xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
