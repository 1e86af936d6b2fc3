// Rank 3 returns without joining the all_reduce.
epl.mesh @mesh ["data" = 4]
func.func @main() -> tensor<4xf32> {
  %i = epl.group_index on @mesh over ["data"]
  %c3 = arith.constant 3 : index
  %is3 = arith.cmpi eq, %i, %c3 : index
  %x = arith.constant dense<1.0> : tensor<4xf32>
  %r = scf.if %is3 -> tensor<4xf32> {
    scf.yield %x : tensor<4xf32>
  } else {
    %y = epl.all_reduce %x on @mesh over ["data"] sum : tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
