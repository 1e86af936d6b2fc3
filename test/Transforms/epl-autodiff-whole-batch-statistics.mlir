// RUN: epl-opt %s --epl-autodiff --split-input-file | FileCheck %s

// Cross-entropy with ignored labels, as torch-mlir writes it: the mean is
// over the labels not ignored (-100), a count over the batch computed from
// the labels alone. Micro-batches cannot each count their own (the sum of
// their losses would not be the batch's): the step counts on the whole
// batch, before the micro-batches, and hands the count to each. The label
// gather reads each example's row at its own position, so it splits with
// the micro-batch.

// CHECK-LABEL: func.func private @model_micro_batch
// CHECK-SAME: %{{.*}}: tensor<2x3xf32>, %{{.*}}: tensor<2xi64>, %{{.*}}: tensor<3x3xf32>, %[[COUNT:.*]]: tensor<i64>)
// CHECK-NOT: -> tensor<i64>
// CHECK: arith.sitofp
// CHECK: epl.scatter_add {{.*}}dest_batching_dims = array<i64: 0>{{.*}} : tensor<2xf32>, tensor<2xi64> into tensor<2x3xf32>

// CHECK-LABEL: func.func @model
// CHECK-SAME: %[[Y:[a-z0-9_]+]]: tensor<4xi64>
// CHECK: %[[STEP_COUNT:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<4xi64>) outs(%{{.*}} : tensor<i64>) attrs = {{.*}}epl.phase = #epl.phase<forward>
// CHECK: scf.for
// CHECK: call @model_micro_batch({{.*}}, %[[STEP_COUNT]])
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @model(%x: tensor<4x3xf32> {epl.arg = "input", epl.name = "x"},
                   %y: tensor<4xi64> {epl.arg = "label", epl.name = "y"},
                   %w: tensor<3x3xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %zi = arith.constant 0 : i64
    %ignore = arith.constant -100 : i64
    %el = tensor.empty() : tensor<4x3xf32>
    %fl = linalg.fill ins(%zero : f32) outs(%el : tensor<4x3xf32>) -> tensor<4x3xf32>
    %logits = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x3xf32>) outs(%fl : tensor<4x3xf32>) -> tensor<4x3xf32>
    // The negative log-likelihood of each kept label (logits stand for
    // log-probabilities here).
    %e4 = tensor.empty() : tensor<4xf32>
    %nll = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> (b)>],
                           iterator_types = ["parallel"]}
        ins(%y : tensor<4xi64>) outs(%e4 : tensor<4xf32>) {
    ^bb0(%label: i64, %o: f32):
      %keep = arith.cmpi ne, %label, %ignore : i64
      %safe = arith.select %keep, %label, %zi : i64
      %b = linalg.index 0 : index
      %c = arith.index_cast %safe : i64 to index
      %v = tensor.extract %logits[%b, %c] : tensor<4x3xf32>
      %n = arith.negf %v : f32
      %r = arith.select %keep, %n, %zero : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    %es = tensor.empty() : tensor<f32>
    %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %sum = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>],
                           iterator_types = ["reduction"]}
        ins(%nll : tensor<4xf32>) outs(%fs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %ei = tensor.empty() : tensor<i64>
    %fi = linalg.fill ins(%zi : i64) outs(%ei : tensor<i64>) -> tensor<i64>
    %count = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>],
                             iterator_types = ["reduction"]}
        ins(%y : tensor<4xi64>) outs(%fi : tensor<i64>) {
    ^bb0(%label: i64, %acc: i64):
      %keep = arith.cmpi ne, %label, %ignore : i64
      %one = arith.extui %keep : i1 to i64
      %s = arith.addi %acc, %one : i64
      linalg.yield %s : i64
    } -> tensor<i64>
    %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>],
                            iterator_types = []}
        ins(%sum, %count : tensor<f32>, tensor<i64>) outs(%es : tensor<f32>) {
    ^bb0(%s: f32, %n: i64, %o: f32):
      %nf = arith.sitofp %n : i64 to f32
      %m = arith.divf %s, %nf : f32
      linalg.yield %m : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// A mean over the batch of the inputs, subtracted from each example (a
// batch norm over the inputs): a statistic of rank 1, with no batch in it.
// The step takes it on the whole batch; each micro-batch gets it whole
// (tensor<3xf32>) while its examples shrink to 2.

// CHECK-LABEL: func.func private @centered_micro_batch
// CHECK-SAME: (%{{.*}}: tensor<2x3xf32>, %{{.*}}: tensor<3xf32>, %[[MEAN:.*]]: tensor<3xf32>)
// CHECK-NOT: iterator_types = ["reduction", "parallel"]} ins(%arg0 : tensor<2x3xf32>)
// CHECK: ins(%{{.*}}, %[[MEAN]], %{{.*}} : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)

// CHECK-LABEL: func.func @centered
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[STEP_MEAN:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[X]] : tensor<4x3xf32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK: scf.for
// CHECK: call @centered_micro_batch({{.*}}, %[[STEP_MEAN]])
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @centered(%x: tensor<4x3xf32> {epl.arg = "input", epl.name = "x"},
                      %w: tensor<3xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e3 = tensor.empty() : tensor<3xf32>
    %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
    %mean = linalg.generic {indexing_maps = [affine_map<(b, d) -> (b, d)>, affine_map<(b, d) -> (d)>],
                            iterator_types = ["reduction", "parallel"]}
        ins(%x : tensor<4x3xf32>) outs(%f3 : tensor<3xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %q = arith.constant 0.25 : f32
      %s = arith.mulf %a, %q : f32
      %r = arith.addf %acc, %s : f32
      linalg.yield %r : f32
    } -> tensor<3xf32>
    %e = tensor.empty() : tensor<4x3xf32>
    %c = linalg.generic {indexing_maps = [affine_map<(b, d) -> (b, d)>, affine_map<(b, d) -> (d)>,
                                          affine_map<(b, d) -> (d)>, affine_map<(b, d) -> (b, d)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x, %mean, %w : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
    ^bb0(%a: f32, %m: f32, %ww: f32, %o: f32):
      %d = arith.subf %a, %m : f32
      %p = arith.mulf %d, %ww : f32
      %p2 = arith.mulf %p, %p : f32
      linalg.yield %p2 : f32
    } -> tensor<4x3xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(b, d) -> (b, d)>, affine_map<(b, d) -> ()>],
                         iterator_types = ["reduction", "reduction"]}
        ins(%c : tensor<4x3xf32>) outs(%f0 : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
