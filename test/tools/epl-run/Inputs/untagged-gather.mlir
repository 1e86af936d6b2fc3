// A function with untagged arguments whose ids index a table of 4 (errors.test):
// seeded, they are drawn below 4, as a tagged model's are.
#m1 = affine_map<(i) -> (i)>
module {
  func.func @main(%t: tensor<4xf32> {epl.name = "t"}, %idx: tensor<4xi64> {epl.name = "idx"}) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#m1, #m1], iterator_types = ["parallel"]} ins(%idx : tensor<4xi64>) outs(%e : tensor<4xf32>) {
    ^bb0(%i: i64, %o: f32):
      %ii = arith.index_cast %i : i64 to index
      %v = tensor.extract %t[%ii] : tensor<4xf32>
      linalg.yield %v : f32
    } -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
