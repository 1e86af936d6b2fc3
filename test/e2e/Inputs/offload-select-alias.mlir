// offload v0: an argument's device copy is freed after its last *direct* use
// (arith.select), while the select's result, an alias of it, is read later.
module attributes {epl.config = {"offload.level" = "v0"}} {
  epl.mesh @mesh ["data" = 1]
  func.func @main(%a: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<1024xf32> {
    %i = epl.group_index on @mesh over ["data"]
    %c0 = arith.constant 0 : index
    %c = arith.cmpi eq, %i, %c0 : index
    %r = arith.select %c, %a, %b : tensor<1024xf32>
    %zero = arith.constant 7.0 : f32
    %e = tensor.empty() : tensor<1024xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
    %e2 = tensor.empty() : tensor<1024xf32>
    %o = linalg.add ins(%r, %z : tensor<1024xf32>, tensor<1024xf32>) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
    return %o : tensor<1024xf32>
  }
}
