// RUN: epl-opt %s -split-input-file -verify-diagnostics

// What epl-sharding-propagation leaves on ops for epl-insert-collectives
// ('epl.shardings', 'epl.loop_axes') is verified against the op it is on:
// the passes index with it (issue 16).

module {
  epl.mesh @mesh ["data" = 2]
  func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    // expected-error @+1 {{'arith.addf' op 'epl.shardings' entry 0: sharding has 3 dimension entries but result 0 ('tensor<4x4xf32>') has rank 2}}
    %0 = arith.addf %x, %x {epl.shardings = [#epl.sharding<@mesh, [["data"], [], []]>]} : tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}

// -----

module {
  epl.mesh @mesh ["data" = 2]
  func.func @f(%x: f32) -> f32 {
    // expected-error @+1 {{'arith.addf' op 'epl.shardings' entry 0: a sharding describes a ranked tensor, but result 0 is 'f32'}}
    %0 = arith.addf %x, %x {epl.shardings = [#epl.sharding<@mesh, []>]} : f32
    return %0 : f32
  }
}

// -----

module {
  epl.mesh @mesh ["data" = 2]
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'arith.addf' op 'epl.shardings' entry 0: mesh axis "tensor" is not in mesh @mesh (its axes are "data")}}
    %0 = arith.addf %x, %x {epl.shardings = [#epl.sharding<@mesh, [["tensor"]]>]} : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'arith.addf' op 'epl.shardings' entry 0: no epl.mesh named @mesh}}
    %0 = arith.addf %x, %x {epl.shardings = [#epl.sharding<@mesh, [[]]>]} : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// More loop entries than the op has loops: the partitioner would write
// past its factors.
module {
  epl.mesh @mesh ["data" = 2]
  func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    // expected-error @+1 {{'linalg.add' op 'epl.loop_axes': has 3 entries but the op has 2 loops}}
    %0 = linalg.add {epl.loop_axes = [["data"], [], []]} ins(%x, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%x : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}

// -----

module {
  epl.mesh @mesh ["data" = 2]
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'arith.addf' op 'epl.loop_axes': the op has no sharding rule, so no loops to shard}}
    %0 = arith.addf %x, %x {epl.loop_axes = [["data"]]} : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module {
  epl.mesh @mesh ["data" = 2]
  func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    // expected-error @+1 {{'linalg.add' op 'epl.loop_axes': mesh axis "model" is not in mesh @mesh (its axes are "data")}}
    %0 = linalg.add {epl.loop_axes = [["model"], []]} ins(%x, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%x : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}

// -----

// A loop sharded twice over one axis (epl-insert-collectives used to fail
// on it without a word).
module {
  epl.mesh @mesh ["data" = 2]
  func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    // expected-error @+1 {{'linalg.add' op 'epl.loop_axes': mesh axis "data" is named more than once}}
    %0 = linalg.add {epl.loop_axes = [["data", "data"], []]} ins(%x, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%x : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}

// -----

module {
  epl.mesh @mesh ["data" = 2]
  func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    // expected-error @+1 {{'linalg.add' op 'epl.loop_axes': mesh axis "data" shards both loop 0 and loop 1}}
    %0 = linalg.add {epl.loop_axes = [["data"], ["data"]]} ins(%x, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%x : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}

// -----

module {
  epl.mesh @mesh ["data" = 2]
  func.func @f(%x: tensor<8xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'tensor.extract_slice' op 'epl.loop_axes': loop 0 must stay whole on every device (a cut or joined dimension, or a loop whose index the body reads), but is sharded over ["data"]}}
    %0 = tensor.extract_slice %x[0] [4] [1] {epl.loop_axes = [["data"]]} : tensor<8xf32> to tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module {
  epl.mesh @mesh ["data" = 2]
  func.func @f(%x: tensor<4x4xf32>) -> tensor<16xf32> {
    // expected-error @+1 {{'tensor.collapse_shape' op 'epl.loop_axes': reassociation [[4294967296, 1]] does not list the dimensions 0..1 of 'tensor<4x4xf32>' once each, in order}}
    %0 = tensor.collapse_shape %x [[4294967296, 1]] {epl.loop_axes = [["data"], []]} : tensor<4x4xf32> into tensor<16xf32>
    return %0 : tensor<16xf32>
  }
}

// -----

module {
  epl.mesh @a ["data" = 2]
  epl.mesh @b ["data" = 2]
  func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    // expected-error @+1 {{'linalg.add' op 'epl.loop_axes': no 'epl.shardings' names the mesh of its axes and the module does not have exactly one epl.mesh}}
    %0 = linalg.add {epl.loop_axes = [["data"], []]} ins(%x, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%x : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}
