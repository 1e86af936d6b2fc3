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

// -----

// A fractional budget is one micro-batch's. Around the micro-batches the
// step counts the labels not ignored (a whole-batch statistic, 8 bytes the
// backward reads): that chain takes the least memory. The budget was
// applied to it too and could not be met: "memory_budget of 4 bytes (0.5
// of 8) is below the least any plan needs, 8 bytes".
// CHECK: epl-rematerialize @model_micro_batch: keeps {{[0-9]+}} of {{[0-9]+}} forward tensors
// CHECK: epl-rematerialize @model: keeps 1 of 1 forward tensors; activations peak 8 of 8 bytes
module attributes {epl.config = {"pipeline.num_micro_batch" = 2 : i64, "gradient_checkpoint.type" = "auto", "gradient_checkpoint.memory_budget" = 5.000000e-01 : f64}} {
  func.func @model(%x: tensor<4x3xf32> {epl.arg = "input", epl.name = "x"},
                   %y: tensor<4xi64> {epl.arg = "label", epl.name = "y"},
                   %w: tensor<3x3xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %zi = arith.constant 0 : i64
    %ignore = arith.constant -100 : i64
    %el = tensor.empty() : tensor<4x3xf32>
    %fl = linalg.fill ins(%zero : f32) outs(%el : tensor<4x3xf32>) -> tensor<4x3xf32>
    %logits = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x3xf32>) outs(%fl : tensor<4x3xf32>) -> tensor<4x3xf32>
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

// A budget holds in a function that calls one of its own (not the micro-
// batches' function): it took the least memory there (keeps 4 of 10).
// CHECK: epl-rematerialize @model: keeps 8 of 10 forward tensors; activations peak 4100 of 4608 bytes
module attributes {epl.config = {"gradient_checkpoint.type" = "auto", "gradient_checkpoint.memory_budget" = 0.95 : f64}} {
  func.func private @scale(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %r = math.absf %a : tensor<8x16xf32>
    return %r : tensor<8x16xf32>
  }
  func.func @model(%x: tensor<8x16xf32> {epl.arg = "input", epl.name = "x"},
                   %w1: tensor<16x16xf32> {epl.arg = "param", epl.name = "w1"},
                   %w2: tensor<16x16xf32> {epl.arg = "param", epl.name = "w2"},
                   %w3: tensor<16x16xf32> {epl.arg = "param", epl.name = "w3"},
                   %w4: tensor<16x16xf32> {epl.arg = "param", epl.name = "w4"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %x2 = func.call @scale(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %e = tensor.empty() : tensor<8x16xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %h1 = linalg.matmul ins(%x2, %w1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a1 = math.tanh %h1 : tensor<8x16xf32>
    %h2 = linalg.matmul ins(%a1, %w2 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a2 = math.tanh %h2 : tensor<8x16xf32>
    %h3 = linalg.matmul ins(%a2, %w3 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a3 = math.tanh %h3 : tensor<8x16xf32>
    %h4 = linalg.matmul ins(%a3, %w4 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %a4 = math.tanh %h4 : tensor<8x16xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
        ins(%a4 : tensor<8x16xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %sq = arith.mulf %v, %v : f32
      %t = arith.addf %acc, %sq : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
