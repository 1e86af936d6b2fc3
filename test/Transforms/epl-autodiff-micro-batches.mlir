// RUN: epl-opt %s --epl-autodiff | FileCheck %s

// Micro-batches of hand-written IR: a named matmul accumulating into a
// dense zero constant, next to a tensor.empty nobody uses (once a crash).
// CHECK-LABEL: func.func private @model_micro_batch
// CHECK-SAME: tensor<4x4xf32>
// CHECK: arith.constant {{.*}}dense<0.000000e+00> : tensor<4x2xf32>
// CHECK-LABEL: func.func @model
// CHECK: scf.for
#id = affine_map<(i) -> (i)>
#none = affine_map<(i) -> ()>
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %unused = tensor.empty() : tensor<8x2xf32>
    %z = arith.constant dense<0.0> : tensor<8x2xf32>
    %h = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
    %c = tensor.collapse_shape %h [[0, 1]] : tensor<8x2xf32> into tensor<16xf32>
    %es = tensor.empty() : tensor<f32>
    %zero = arith.constant 0.0 : f32
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction"]}
        ins(%c : tensor<16xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %t = arith.addf %acc, %v : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
