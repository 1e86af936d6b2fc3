// RUN: epl-opt %s --epl-pipeline-partition -verify-diagnostics -split-input-file | FileCheck %s

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

// -----

// An op whose only effect is an assertion (a gather's bounds check, the
// fp16 bucket's overflow check) is placed as a pure op is: it is made again
// in the piece that reads it, where the check runs.
// CHECK-LABEL: func.func private @model_s1_backward_weight(
// CHECK-SAME: %{{.*}}: tensor<4xf32>, %[[X:.*]]: tensor<4xf32>)
// CHECK: %[[CHECKED:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4xf32>)
// CHECK: cf.assert %{{.*}}, "x is not a number"
// CHECK: arith.addf %{{.*}}, %[[CHECKED]]
// CHECK-LABEL: func.func @model_stage0()
// CHECK-NOT: cf.assert
// CHECK-LABEL: func.func @model_stage1(
module attributes {epl.config = {"pipeline.num_micro_batch" = 1 : i64}} {
  epl.mesh @mesh ["stage" = 2]
  func.func @model(%x: tensor<4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4xf32> {epl.arg = "param", epl.name = "w"})
      -> (tensor<4xf32> {epl.result = "grad", epl.name = "w"}) {
    %e = tensor.empty() : tensor<4xf32>
    %checked = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %ok = arith.cmpf ord, %a, %a : f32
      cf.assert %ok, "x is not a number"
      linalg.yield %a : f32
    } -> tensor<4xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %w) -> (tensor<4xf32>) {
      %g = arith.addf %acc, %checked {epl.stage = #epl.stage<index = 1>, epl.phase = #epl.phase<backward_weight>} : tensor<4xf32>
      scf.yield %g : tensor<4xf32>
    }
    return %r : tensor<4xf32>
  }
}

// -----

// An assertion whose result no stage reads would be made nowhere, its
// check never run: an error, before the loop and in it.
module attributes {epl.config = {"pipeline.num_micro_batch" = 1 : i64}} {
  epl.mesh @mesh ["stage" = 2]
  func.func @model(%x: tensor<4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4xf32> {epl.arg = "param", epl.name = "w"})
      -> (tensor<4xf32> {epl.result = "grad", epl.name = "w"}) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %w) -> (tensor<4xf32>) {
      %e = tensor.empty() : tensor<4xf32>
      // expected-error @+1 {{epl-pipeline-partition: 'linalg.generic' is a check no stage would run: it reads no stage's value and no stage reads its results; give it a stage (epl.stage: the stage whose values it checks) or remove it}}
      %unread = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%a: f32, %b: f32):
        %ok = arith.cmpf ord, %a, %a : f32
        cf.assert %ok, "x is not a number"
        linalg.yield %a : f32
      } -> tensor<4xf32>
      %g = arith.addf %acc, %x {epl.stage = #epl.stage<index = 1>, epl.phase = #epl.phase<backward_weight>} : tensor<4xf32>
      scf.yield %g : tensor<4xf32>
    }
    return %r : tensor<4xf32>
  }
}

// -----

module attributes {epl.config = {"pipeline.num_micro_batch" = 1 : i64}} {
  epl.mesh @mesh ["stage" = 2]
  func.func @model(%x: tensor<4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4xf32> {epl.arg = "param", epl.name = "w"})
      -> (tensor<4xf32> {epl.result = "grad", epl.name = "w"}) {
    %e = tensor.empty() : tensor<4xf32>
    // expected-error @+1 {{epl-pipeline-partition: 'linalg.generic' is a check no stage would run: no stage reads its results; read them in a stage or remove it}}
    %unread = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %ok = arith.cmpf ord, %a, %a : f32
      cf.assert %ok, "x is not a number"
      linalg.yield %a : f32
    } -> tensor<4xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %w) -> (tensor<4xf32>) {
      %g = arith.addf %acc, %x {epl.stage = #epl.stage<index = 1>, epl.phase = #epl.phase<backward_weight>} : tensor<4xf32>
      scf.yield %g : tensor<4xf32>
    }
    return %r : tensor<4xf32>
  }
}
