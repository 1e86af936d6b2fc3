// RUN: epl-opt %s --epl-training-step | epl-opt --epl-decompose-aggregates --epl-fuse-elementwise | FileCheck %s

// AdamW's update of a parameter (weight decay, both moments, the bias
// corrections applied, the step) is one pass over it: one loop nest reads
// the parameter, its gradient and both moments and writes the new
// parameter and moments. The bias corrections are computed once per step,
// on scalars, outside it.
// CHECK-LABEL: func.func @model
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"}
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<4x2xf32> {epl.arg = "opt_state", epl.name = "w.exp_avg"}
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<4x2xf32> {epl.arg = "opt_state", epl.name = "w.exp_avg_sq"}
// CHECK: %[[C:.*]]:2 = linalg.generic {{.*}} iterator_types = []} ins(%{{.*}} : tensor<i64>) outs(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>) attrs = {epl.phase = #epl.phase<optimizer>}
// CHECK: %[[UPD:.*]]:3 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[W]], %{{.*}}, %[[M]], %[[V]], %[[C]]#0, %[[C]]#1 : {{.*}}) outs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) attrs = {epl.phase = #epl.phase<optimizer>}
// CHECK-NOT: linalg.generic {{.*}} -> tensor<4x2xf32>
// CHECK: return %{{.*}}, %[[UPD]]#0, %[[UPD]]#1, %[[UPD]]#2,
#id = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
module attributes {epl.config = {"optimizer.type" = "adamw", "optimizer.lr" = 1.0e-03 : f64, "optimizer.weight_decay" = 1.0e-02 : f64}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x2xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
    %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
        ins(%y : tensor<8x2xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
