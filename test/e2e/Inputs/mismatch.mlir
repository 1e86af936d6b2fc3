// Rank 1 all-reduces 8 elements, the others 4.
epl.mesh @mesh ["data" = 4]
func.func @main() -> tensor<4xf32> {
  %i = epl.group_index on @mesh over ["data"]
  %c1 = arith.constant 1 : index
  %is1 = arith.cmpi eq, %i, %c1 : index
  %r = scf.if %is1 -> tensor<4xf32> {
    %x = arith.constant dense<1.0> : tensor<8xf32>
    %y = epl.all_reduce %x on @mesh over ["data"] sum : tensor<8xf32>
    %s = tensor.extract_slice %y[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  } else {
    %x = arith.constant dense<1.0> : tensor<4xf32>
    %y = epl.all_reduce %x on @mesh over ["data"] sum : tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
