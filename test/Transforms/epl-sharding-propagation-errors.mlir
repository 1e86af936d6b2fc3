// RUN: epl-opt %s --epl-sharding-propagation -split-input-file -verify-diagnostics

// A reassociation index of 2^32 + 2 passes upstream's verifier, which reads
// it as 2 (32 bits); propagation indexes with it, so it checks first.
module {
  epl.mesh @mesh ["tensor" = 4]
  func.func @expand(%x: tensor<8x64xf32> {epl.sharding = #epl.sharding<@mesh, [[], ["tensor"]]>})
      -> tensor<8x4x16xf32> {
    // expected-error @+1 {{'tensor.expand_shape' op epl-sharding-propagation: reassociation [[0], [1, 4294967298]] does not list the dimensions 0..2 of 'tensor<8x4x16xf32>' once each, in order}}
    %e = tensor.expand_shape %x [[0], [1, 4294967298]] output_shape [8, 4, 16]
        : tensor<8x64xf32> into tensor<8x4x16xf32>
    return %e : tensor<8x4x16xf32>
  }
}

// -----

module {
  epl.mesh @mesh ["tensor" = 4]
  func.func @collapse(%x: tensor<8x4x16xf32> {epl.sharding = #epl.sharding<@mesh, [[], ["tensor"], []]>})
      -> tensor<8x64xf32> {
    // expected-error @+1 {{'tensor.collapse_shape' op epl-sharding-propagation: reassociation [[4294967296], [1, 2]] does not list the dimensions 0..2 of 'tensor<8x4x16xf32>' once each, in order}}
    %c = tensor.collapse_shape %x [[4294967296], [1, 2]]
        : tensor<8x4x16xf32> into tensor<8x64xf32>
    return %c : tensor<8x64xf32>
  }
}
