// Stages meet their device groups in different orders: stage 0 reduces over
// "data" before it sends, stage 1 receives first. Under MPI each group's
// communicator must be created by its members alone, whatever the order.
epl.mesh @mesh ["stage" = 2, "data" = 2]
epl.pipeline @step on @mesh over "stage" stages [@stage0, @stage1] strategy "PreferBackward" micro_batches 1

func.func @stage0(%x: tensor<2xf32> {epl.arg = "input", epl.name = "x", epl.shard = #epl.sharding<@mesh, [["data"]]>}) {
  %r = epl.all_reduce %x on @mesh over ["data"] sum : tensor<2xf32>
  epl.send %r on @mesh over ["stage"] to 1 tag 0 : tensor<2xf32>
  return
}

func.func @stage1() -> (tensor<f32> {epl.result = "loss"}) {
  %h = epl.recv on @mesh over ["stage"] from 0 tag 0 : tensor<2xf32>
  %r = epl.all_reduce %h on @mesh over ["data"] sum : tensor<2xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%r : tensor<2xf32>) outs(%z : tensor<f32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %t = arith.addf %a, %b : f32
      linalg.yield %t : f32
    }
  return %s : tensor<f32>
}
