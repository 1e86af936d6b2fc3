// RUN: epl-opt %s --epl-parallelize="devices=2" --split-input-file | FileCheck %s

// Gathers under data parallelism. The embedding's table is replicated and
// each device gathers its own rows of the batch; the table's gradient is a
// scatter-add of the device's own positions, a partial sum that one
// all-reduce finishes. The label gather reads each example's row of the
// scores at the example's own position (linalg.index): each device reads
// its own shard of the scores with its own positions, and the gradient of
// the scores is a scatter-add along that batching dimension. Nothing is
// gathered; the loss is a partial sum.

// CHECK-LABEL: func.func @model
// CHECK-SAME: %[[IDS:[a-z0-9_]+]]: tensor<2x3xi64>
// CHECK-SAME: %[[LABELS:[a-z0-9_]+]]: tensor<2xi64>
// CHECK-SAME: %[[EMB:[a-z0-9_]+]]: tensor<10x4xf32>
// CHECK-NOT: epl.all_gather
// CHECK: tensor.extract %[[EMB]]
// CHECK: %[[LOSS:.*]] = linalg.generic {{.*}} ins(%[[LABELS]] : tensor<2xi64>)
// CHECK: %[[ROW:.*]] = linalg.index 0
// CHECK: tensor.extract %{{.*}}[%[[ROW]], %{{.*}}] : tensor<2x4xf32>
// CHECK: epl.scatter_add {{.*}} {dest_batching_dims = array<i64: 0>, {{.*}}updates_batching_dims = array<i64: 0>} : tensor<2xf32>, tensor<2xi64> into tensor<2x4xf32>
// CHECK: epl.scatter_add {{.*}} : tensor<2x3x4xf32>, tensor<2x3x4xi64> into tensor<10x4xf32>
// CHECK-DAG: epl.all_reduce %[[LOSS]] on @mesh over ["data"] sum
// CHECK-DAG: epl.all_reduce {{.*}} on @mesh over ["data"] sum {{.*}} : tensor<40xf32>
// CHECK-NOT: epl.all_gather
module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 1.0e-01 : f64}} {
  func.func @model(%ids: tensor<4x3xi64> {epl.arg = "input", epl.name = "ids"},
                   %labels: tensor<4xi64> {epl.arg = "label", epl.name = "labels"},
                   %emb: tensor<10x4xf32> {epl.arg = "param", epl.name = "emb"})
      -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %eh = tensor.empty() : tensor<4x4xf32>
    %fh = linalg.fill ins(%zero : f32) outs(%eh : tensor<4x4xf32>) -> tensor<4x4xf32>
    // scores[b, d] = sum_s emb[ids[b, s], d]
    %scores = linalg.generic {
        indexing_maps = [affine_map<(b, s, d) -> (b, s)>, affine_map<(b, s, d) -> (b, d)>],
        iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%ids : tensor<4x3xi64>) outs(%fh : tensor<4x4xf32>) {
    ^bb0(%id: i64, %acc: f32):
      %row = arith.index_cast %id : i64 to index
      %col = linalg.index 2 : index
      %v = tensor.extract %emb[%row, %col] : tensor<10x4xf32>
      %s = arith.addf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    // loss = -sum_b scores[b, labels[b]]
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {
        indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>],
        iterator_types = ["reduction"]}
        ins(%labels : tensor<4xi64>) outs(%f0 : tensor<f32>) {
    ^bb0(%label: i64, %acc: f32):
      %row = linalg.index 0 : index
      %col = arith.index_cast %label : i64 to index
      %v = tensor.extract %scores[%row, %col] : tensor<4x4xf32>
      %s = arith.subf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// A row computed from the position (the scores of the example mirrored
// across the batch) reads other devices' examples: the scores are gathered
// whole first, never the local shard at a global row.

// CHECK-LABEL: func.func @mirrored
// CHECK-SAME: %[[LABELS:[a-z0-9_]+]]: tensor<2xi64>
// CHECK-DAG: %[[ALL_LABELS:.*]] = epl.all_gather %[[LABELS]] on @mesh over ["data"] dim 0 {{.*}} : tensor<2xi64> -> tensor<4xi64>
// CHECK-DAG: %[[ALL_SCORES:.*]] = epl.all_gather %{{.*}} on @mesh over ["data"] dim 0 {{.*}} : tensor<2x4xf32> -> tensor<4x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[ALL_LABELS]] : tensor<4xi64>)
// CHECK: tensor.extract %[[ALL_SCORES]]
module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 1.0e-01 : f64}} {
  func.func @mirrored(%x: tensor<4x4xf32> {epl.arg = "input", epl.name = "x"},
                      %labels: tensor<4xi64> {epl.arg = "label", epl.name = "labels"},
                      %w: tensor<4x4xf32> {epl.arg = "param", epl.name = "w"})
      -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %last = arith.constant 3 : index
    %es = tensor.empty() : tensor<4x4xf32>
    %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x4xf32>) -> tensor<4x4xf32>
    %scores = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>)
                            outs(%fs : tensor<4x4xf32>) -> tensor<4x4xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {
        indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>],
        iterator_types = ["reduction"]}
        ins(%labels : tensor<4xi64>) outs(%f0 : tensor<f32>) {
    ^bb0(%label: i64, %acc: f32):
      %b = linalg.index 0 : index
      %row = arith.subi %last, %b : index
      %col = arith.index_cast %label : i64 to index
      %v = tensor.extract %scores[%row, %col] : tensor<4x4xf32>
      %s = arith.subf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// The example's own position as IR is written before canonicalization
// (`+ 0`, a round trip through i64): still the position, nothing gathered.
// CHECK-LABEL: func.func @position_as_written
// CHECK-NOT: epl.all_gather
// CHECK: epl.scatter_add {{.*}} {dest_batching_dims = array<i64: 0>, {{.*}}updates_batching_dims = array<i64: 0>} : tensor<2xf32>, tensor<2xi64> into tensor<2x4xf32>
// CHECK-NOT: epl.all_gather
module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 1.0e-01 : f64}} {
  func.func @position_as_written(%labels: tensor<4xi64> {epl.arg = "label", epl.name = "labels"},
                   %w: tensor<4x4xf32> {epl.arg = "param", epl.name = "w"},
                   %x: tensor<4x4xf32> {epl.arg = "input", epl.name = "x"})
      -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %eh = tensor.empty() : tensor<4x4xf32>
    %fh = linalg.fill ins(%zero : f32) outs(%eh : tensor<4x4xf32>) -> tensor<4x4xf32>
    %scores = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%fh : tensor<4x4xf32>) -> tensor<4x4xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {
        indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>],
        iterator_types = ["reduction"]}
        ins(%labels : tensor<4xi64>) outs(%f0 : tensor<f32>) {
    ^bb0(%label: i64, %acc: f32):
      %b = linalg.index 0 : index
      %c0 = arith.constant 0 : index
      %b0 = arith.addi %b, %c0 : index
      %b64 = arith.index_cast %b0 : index to i64
      %row = arith.index_cast %b64 : i64 to index
      %col = arith.index_cast %label : i64 to index
      %v = tensor.extract %scores[%row, %col] : tensor<4x4xf32>
      %s = arith.subf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}
