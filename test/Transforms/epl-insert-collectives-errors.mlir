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

// -----

// A reassociation index of 2^32 (upstream's verifier reads it as 0) is
// reported, not indexed with.
module {
  epl.mesh @mesh ["tensor" = 2]
  func.func @reassociation(%x: tensor<4x4xf32> {epl.sharding = #epl.sharding<@mesh, [["tensor"], []]>}) -> tensor<16xf32> {
    // expected-error @+1 {{'tensor.collapse_shape' op epl-insert-collectives: reassociation [[4294967296, 1]] does not list the dimensions 0..1 of 'tensor<4x4xf32>' once each, in order}}
    %c = tensor.collapse_shape %x [[4294967296, 1]] {epl.shardings = [#epl.sharding<@mesh, [["tensor"]]>]} : tensor<4x4xf32> into tensor<16xf32>
    return %c : tensor<16xf32>
  }
}

// -----

// A split of a dynamic dimension has no local type: an error at the value,
// whether a constraint or the function's result asks for it (it was a
// failure with no message at all).
module {
  epl.mesh @mesh ["tensor" = 2]
  func.func @f(%x: tensor<?x4xf32>) -> (tensor<?x4xf32> {epl.sharding = #epl.sharding<@mesh, [["tensor"], []]>}) {
    // expected-error @below {{cannot shard 'tensor<?x4xf32>' as #epl.sharding<@mesh, [["tensor"], []]>: a split dimension is dynamic or not divisible by its devices}}
    return %x : tensor<?x4xf32>
  }
}
