// RUN: epl-opt %s --split-input-file --epl-autodiff --epl-rematerialize=print-plan | FileCheck %s
// RUN: epl-opt %s --split-input-file --epl-autodiff --epl-rematerialize --epl-apply-optimizer --verify-each

// "collection": a1 is marked, so it is the only activation kept; the
// backward recomputes h2, a2, h3 and a3 from it right before the first
// backward op reading them (the loss's gradient), and h1 from the
// arguments where tanh's gradient reads it. Each recompute gets its own
// zero fill (sharing one would keep it alive through the backward); the
// marks are gone.
// CHECK: epl-rematerialize @model: keeps 1 of 7 forward tensors (marked epl.checkpoint)
// CHECK-LABEL: func.func @model
// CHECK-NOT: epl.checkpoint
// CHECK: %[[A1:.*]] = linalg.generic {{.*}} ins(%[[H1:.*]] : tensor<8x16xf32>) {{.*}} {epl.id = 4 : i64, epl.phase = #epl.phase<forward>}
// CHECK: %[[L:.*]] = linalg.generic {{.*}} {epl.id = 11 : i64, epl.phase = #epl.phase<forward>}
// CHECK: %[[E:.*]] = tensor.empty() {epl.origin = 1 : i64, epl.phase = #epl.phase<recompute>}
// CHECK: %[[Z:.*]] = linalg.generic {{.*}} outs(%[[E]] : {{.*}} {epl.origin = 2 : i64, epl.phase = #epl.phase<recompute>}
// CHECK: %[[H2:.*]] = linalg.generic {{.*}} ins(%[[A1]], %arg2 : {{.*}} outs(%[[Z]] : {{.*}} {epl.origin = 5 : i64, epl.phase = #epl.phase<recompute>}
// CHECK: %[[A2:.*]] = linalg.generic {{.*}} ins(%[[H2]] : {{.*}} {epl.origin = 6 : i64, epl.phase = #epl.phase<recompute>}
// CHECK: tensor.empty() {epl.origin = 1 : i64, epl.phase = #epl.phase<recompute>}
// CHECK: %[[H3:.*]] = linalg.generic {{.*}} ins(%[[A2]], %arg3 : {{.*}} {epl.origin = 7 : i64, epl.phase = #epl.phase<recompute>}
// CHECK: %[[A3:.*]] = linalg.generic {{.*}} ins(%[[H3]] : {{.*}} {epl.origin = 8 : i64, epl.phase = #epl.phase<recompute>}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.tanh
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[A3]] : {{.*}} {epl.origin = 11 : i64, epl.phase = #epl.phase<backward_input>}
// The weight gradient of w2 reads the kept a1 itself.
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[A1]] : {{.*}} {epl.origin = 5 : i64, epl.phase = #epl.phase<backward_weight>}
// CHECK: %[[H1AGAIN:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : {{.*}} {epl.origin = 3 : i64, epl.phase = #epl.phase<recompute>}
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[H1AGAIN]] : {{.*}} {epl.origin = 4 : i64, epl.phase = #epl.phase<backward_input>}
// CHECK: return %[[L]],
#id2 = affine_map<(i, j) -> (i, j)>
#red = affine_map<(i, j) -> ()>
module attributes {epl.config = {"gradient_checkpoint.type" = "collection"}} {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input", epl.name = "x"},
                   %w1: tensor<16x16xf32> {epl.arg = "param", epl.name = "w1"},
                   %w2: tensor<16x16xf32> {epl.arg = "param", epl.name = "w2"},
                   %w3: tensor<16x16xf32> {epl.arg = "param", epl.name = "w3"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %h1 = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a1 = math.tanh %h1 {epl.checkpoint} : tensor<8x16xf32>
    %h2 = linalg.matmul ins(%a1, %w2 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a2 = math.tanh %h2 : tensor<8x16xf32>
    %h3 = linalg.matmul ins(%a2, %w3 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a3 = math.tanh %h3 : tensor<8x16xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id2, #red], iterator_types = ["reduction", "reduction"]}
        ins(%a3 : tensor<8x16xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %sq = arith.mulf %v, %v : f32
      %t = arith.addf %acc, %sq : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// "auto" with no budget: the least memory any plan needs. Eight equal
// activations of 512 bytes the backward reads (h1 a1 h2 a2 h3 a3 h4 a4,
// each a cut point of this chain; the loss is the ninth forward tensor): k
// kept plus runs of (8 - k) / (k + 1) need the least at two kept and runs
// of two, 2 KiB. The only such plan keeps h2 and a3 and recomputes the
// other six, run by run from the loss backwards: h4 a4 from a3, a2 h3 from
// h2, h1 a1 from x.
// CHECK: epl-rematerialize @model: keeps 2 of 9 forward tensors; activations peak 2048 of 4096 bytes (2.0 KiB of 4.0 KiB), recompute 1.319e+04 flops
// CHECK-LABEL: func.func @model
// CHECK-NOT: epl.origin = {{5|8}} : i64, epl.phase = #epl.phase<recompute>
// CHECK: epl.origin = 9 : i64, epl.phase = #epl.phase<recompute>
// CHECK-NOT: epl.origin = {{5|8}} : i64, epl.phase = #epl.phase<recompute>
// CHECK: epl.origin = 10 : i64, epl.phase = #epl.phase<recompute>
// CHECK-NOT: epl.origin = {{5|8}} : i64, epl.phase = #epl.phase<recompute>
// CHECK: epl.origin = 6 : i64, epl.phase = #epl.phase<recompute>
// CHECK-NOT: epl.origin = {{5|8}} : i64, epl.phase = #epl.phase<recompute>
// CHECK: epl.origin = 7 : i64, epl.phase = #epl.phase<recompute>
// CHECK-NOT: epl.origin = {{5|8}} : i64, epl.phase = #epl.phase<recompute>
// CHECK: epl.origin = 3 : i64, epl.phase = #epl.phase<recompute>
// CHECK-NOT: epl.origin = {{5|8}} : i64, epl.phase = #epl.phase<recompute>
// CHECK: epl.origin = 4 : i64, epl.phase = #epl.phase<recompute>
// CHECK-NOT: epl.phase = #epl.phase<recompute>
// CHECK: return
#id2 = affine_map<(i, j) -> (i, j)>
#red = affine_map<(i, j) -> ()>
module attributes {epl.config = {"gradient_checkpoint.type" = "auto"}} {
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input", epl.name = "x"},
                   %w1: tensor<16x16xf32> {epl.arg = "param", epl.name = "w1"},
                   %w2: tensor<16x16xf32> {epl.arg = "param", epl.name = "w2"},
                   %w3: tensor<16x16xf32> {epl.arg = "param", epl.name = "w3"},
                   %w4: tensor<16x16xf32> {epl.arg = "param", epl.name = "w4"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %h1 = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a1 = math.tanh %h1 : tensor<8x16xf32>
    %h2 = linalg.matmul ins(%a1, %w2 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a2 = math.tanh %h2 : tensor<8x16xf32>
    %h3 = linalg.matmul ins(%a2, %w3 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a3 = math.tanh %h3 : tensor<8x16xf32>
    %h4 = linalg.matmul ins(%a3, %w4 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a4 = math.tanh %h4 : tensor<8x16xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id2, #red], iterator_types = ["reduction", "reduction"]}
        ins(%a4 : tensor<8x16xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %sq = arith.mulf %v, %v : f32
      %t = arith.addf %acc, %sq : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
