// A result runners cannot allocate (an i8 tensor): an error, not a crash.
func.func @main(%x: tensor<4xf32>) -> tensor<4xi8> {
  %e = tensor.empty() : tensor<4xi8>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xi8>) {
  ^bb0(%a: f32, %o: i8):
    %c = arith.fptosi %a : f32 to i8
    linalg.yield %c : i8
  } -> tensor<4xi8>
  return %r : tensor<4xi8>
}
