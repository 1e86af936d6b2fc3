// Device 1 waits for a message device 0 never sends, while device 0 is
// still busy in a long step: only the timeout can end this run.
epl.mesh @mesh ["stage" = 2]
func.func @main() -> tensor<4xf32> {
  %i = epl.group_index on @mesh over ["stage"]
  %c1 = arith.constant 1 : index
  %is1 = arith.cmpi eq, %i, %c1 : index
  %x = arith.constant dense<1.0> : tensor<4xf32>
  %r = scf.if %is1 -> tensor<4xf32> {
    %y = epl.recv on @mesh over ["stage"] from 0 : tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
