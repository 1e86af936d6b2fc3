// As all-reduce-in-place.mlir, but the contributions are read after the
// all-reduce (multiplied into the sum): the sum keeps a buffer of its own.
#all = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
epl.mesh @mesh ["data" = 2]
func.func @main() -> tensor<f32> {
    %a = arith.constant dense<1.0> : tensor<4x4xf32>
    %e = tensor.empty() : tensor<4x4xf32>
    %g = linalg.exp ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %s = epl.all_reduce %g on @mesh over ["data"] sum : tensor<4x4xf32>
    %zero = arith.constant 0.0 : f32
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %t = linalg.generic {indexing_maps = [#all, #all, #none], iterator_types = ["reduction", "reduction"]} ins(%s, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %w: f32, %acc: f32):
      %m = arith.mulf %v, %w : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %t : tensor<f32>
}
