// A hand-written per-device forward: each rank holds half the batch and
// the ranks sum their partial losses.
epl.mesh @mesh ["data" = 2]
func.func @model(%x: tensor<2x4xf32> {epl.arg = "input", epl.name = "x", epl.shard = #epl.sharding<@mesh, [["data"], []]>},
                 %w: tensor<4xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x, %w : tensor<2x4xf32>, tensor<4xf32>) outs(%z : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %t = arith.addf %acc, %m : f32
      linalg.yield %t : f32
  } -> tensor<f32>
  %r = epl.all_reduce %s on @mesh over ["data"] sum : tensor<f32>
  return %r : tensor<f32>
}
