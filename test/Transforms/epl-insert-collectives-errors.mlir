// RUN: epl-opt %s --epl-insert-collectives -split-input-file -verify-diagnostics

// The shardings propagation decided live on the ops; an op without one (made
// by a pass run in between, or never propagated) is an error, not a guess.
module {
  epl.mesh @mesh ["tensor" = 2]
  func.func @f(%x: tensor<4x4xf32> {epl.sharding = #epl.sharding<@mesh, [["tensor"], []]>}) -> tensor<4x4xf32> {
    // expected-error @+1 {{epl-insert-collectives: this op has no sharding; run epl-sharding-propagation right before (epl-parallelize does)}}
    %c = tensor.cast %x : tensor<4x4xf32> to tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}
