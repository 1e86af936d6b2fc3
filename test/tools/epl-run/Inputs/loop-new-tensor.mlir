// A loop carrying a tensor its body computes anew (errors.test): x * w^3.
#m1 = affine_map<(i) -> (i)>
#s1 = affine_map<(i) -> ()>
module {
  func.func @model(%x: tensor<4xf32> {epl.arg = "input", epl.name = "x"}, %w: tensor<4xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %e = tensor.empty() : tensor<4xf32>
    %p = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
      %q = linalg.mul ins(%acc, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      scf.yield %q : tensor<4xf32>
    }
    %zero = arith.constant 0.0 : f32
    %es = tensor.empty() : tensor<f32>
    %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#m1, #s1], iterator_types = ["reduction"]} ins(%p : tensor<4xf32>) outs(%fs : tensor<f32>) {
    ^bb0(%v: f32, %a: f32):
      %r = arith.addf %a, %v : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
