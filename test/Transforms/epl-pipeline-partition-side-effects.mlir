// RUN: epl-opt %s --epl-pipeline-partition -verify-diagnostics

// The partition makes ops outside the pieces again wherever they are read,
// or not at all: one with side effects there is an error, not a message
// sent twice or never.
module attributes {epl.config = {"pipeline.num_micro_batch" = 1 : i64}} {
  epl.mesh @mesh ["stage" = 2]
  func.func @model(%x: tensor<4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4xf32> {epl.arg = "param", epl.name = "w"})
      -> (tensor<4xf32> {epl.result = "grad", epl.name = "w"}) {
    // expected-error @+1 {{epl-pipeline-partition: 'epl.send' has side effects outside the micro-batch loop; a pipelined step cannot place it}}
    epl.send %x on @mesh over ["stage"] to 1 : tensor<4xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %w) -> (tensor<4xf32>) {
      %g = arith.addf %acc, %x {epl.stage = #epl.stage<index = 0>, epl.phase = #epl.phase<backward_weight>} : tensor<4xf32>
      scf.yield %g : tensor<4xf32>
    }
    return %r : tensor<4xf32>
  }
}
