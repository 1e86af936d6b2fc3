// RUN: epl-opt %s --epl-autodiff | FileCheck %s --check-prefix=STEP
// RUN: epl-opt %s --epl-parallelize="devices=4" | FileCheck %s

// Model state (epl.arg = "state"): batch norm's running mean, which the
// model returns updated (epl.result = "state") after its loss. The step
// passes it through, undifferentiated and in the forward phase; under data
// parallelism the state stays whole and its update reads the mean of the
// global batch (synchronized batch norm), so it is the same on every device
// and the same as on one.

// STEP-LABEL: func.func @model
// STEP-SAME: -> (tensor<f32> {epl.result = "loss"}, tensor<4x4xf32> {epl.name = "w", epl.result = "grad"}, tensor<4xf32> {epl.name = "bn/running_mean", epl.result = "state"})
// STEP: %[[NEXT:.*]] = linalg.generic {{.*}} ins(%arg2, %{{.*}} : tensor<4xf32>, tensor<4xf32>) {{.*}}epl.phase = #epl.phase<forward>
// STEP: return %{{.*}}, %{{.*}}, %[[NEXT]] :

// CHECK-LABEL: func.func @model
// CHECK-SAME: %arg2: tensor<4xf32> {epl.arg = "state", epl.init = "zeros", epl.name = "bn/running_mean", epl.shard = #epl.sharding<@mesh, {{\[}}[]]>})
// CHECK-SAME: tensor<4xf32> {epl.name = "bn/running_mean", epl.result = "state", epl.shard = #epl.sharding<@mesh, {{\[}}[]]>}
// CHECK: %[[MEAN:.*]] = epl.all_reduce %{{.*}} on @mesh over ["data"] sum {epl.phase = #epl.phase<forward>} : tensor<4xf32>
// CHECK: %[[NEXT:.*]] = linalg.generic {{.*}} ins(%arg2, %[[MEAN]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: return %{{.*}}, %{{.*}}, %[[NEXT]] :

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#rows = affine_map<(b, c) -> (b, c)>
#cols = affine_map<(b, c) -> (c)>
#vec = affine_map<(c) -> (c)>
#all = affine_map<(b, c) -> ()>

module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 0.1 : f64}} {
  func.func @model(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x4xf32> {epl.arg = "param", epl.name = "w"},
                   %rm: tensor<4xf32> {epl.arg = "state", epl.name = "bn/running_mean", epl.init = "zeros"})
      -> (tensor<f32>, tensor<4xf32> {epl.result = "state", epl.name = "bn/running_mean"}) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %h = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) {
      ^bb0(%a: f32, %b: f32, %acc: f32):
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
    } -> tensor<8x4xf32>
    // The batch mean of each channel.
    %ec = tensor.empty() : tensor<4xf32>
    %zc = linalg.fill ins(%zero : f32) outs(%ec : tensor<4xf32>) -> tensor<4xf32>
    %sum = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
        ins(%h : tensor<8x4xf32>) outs(%zc : tensor<4xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %s = arith.addf %acc, %a : f32
        linalg.yield %s : f32
    } -> tensor<4xf32>
    %eighth = arith.constant 0.125 : f32
    %mom = arith.constant 0.1 : f32
    %keep = arith.constant 0.9 : f32
    %mu = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
        ins(%sum : tensor<4xf32>) outs(%ec : tensor<4xf32>) {
      ^bb0(%a: f32, %o: f32):
        %m = arith.mulf %a, %eighth : f32
        linalg.yield %m : f32
    } -> tensor<4xf32>
    // The running mean's next value: 0.9 * running + 0.1 * batch mean.
    %next = linalg.generic {indexing_maps = [#vec, #vec, #vec], iterator_types = ["parallel"]}
        ins(%rm, %mu : tensor<4xf32>, tensor<4xf32>) outs(%ec : tensor<4xf32>) {
      ^bb0(%r: f32, %m: f32, %o: f32):
        %a = arith.mulf %r, %keep : f32
        %b = arith.mulf %m, %mom : f32
        %s = arith.addf %a, %b : f32
        linalg.yield %s : f32
    } -> tensor<4xf32>
    // loss = sum((h - mu)^2)
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [#rows, #cols, #all], iterator_types = ["reduction", "reduction"]}
        ins(%h, %mu : tensor<8x4xf32>, tensor<4xf32>) outs(%zs : tensor<f32>) {
      ^bb0(%a: f32, %m: f32, %acc: f32):
        %d = arith.subf %a, %m : f32
        %q = arith.mulf %d, %d : f32
        %s = arith.addf %acc, %q : f32
        linalg.yield %s : f32
    } -> tensor<f32>
    return %loss, %next : tensor<f32>, tensor<4xf32>
  }
}
