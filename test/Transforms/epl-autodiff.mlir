// RUN: epl-opt %s --epl-autodiff --split-input-file | FileCheck %s

// epl-autodiff builds the forward and backward; the step returns each
// parameter's gradient (epl-apply-optimizer turns them into the update).

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#all = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>

module attributes {epl.config = {"optimizer.type" = "momentum", "optimizer.lr" = 0.5 : f64}} {
  // CHECK-LABEL: func.func @model
  // The results say what they are: the loss, and the gradient of "w".
  // CHECK-SAME: %[[W:[a-z0-9_]+]]: tensor<4x3xf32> {epl.arg = "param", epl.name = "w"})
  // CHECK-SAME: -> (tensor<f32> {epl.result = "loss"}, tensor<4x3xf32> {epl.name = "w", epl.result = "grad"})
  // No update yet, whatever the config says.
  // CHECK-NOT: opt_state
  // CHECK-NOT: #epl.phase<optimizer>
  func.func @model(%x: tensor<2x4xf32> {epl.arg = "input"},
                   %w: tensor<4x3xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x3xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
    // Named ops are generalized; forward ops keep their phase and get ids.
    // CHECK: %[[Y:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %[[W]] {{.*}}epl.id = [[MATMUL:[0-9]+]] : i64, epl.phase = #epl.phase<forward>
    %y = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    // loss = sum(tanh(y)^2)
    // CHECK: %[[LOSS:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]{{.*}}epl.id = [[SUM:[0-9]+]] : i64, epl.phase = #epl.phase<forward>
    %l = linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction", "reduction"]}
        ins(%y : tensor<2x3xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %t = math.tanh %v : f32
      %t2 = arith.mulf %t, %t : f32
      %s = arith.addf %acc, %t2 : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    // The gradient of the loss w.r.t. y: dout * 2 tanh(y) (1 - tanh(y)^2),
    // from the body alone.
    // CHECK: %[[DY:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}}epl.origin = [[SUM]] : i64, epl.phase = #epl.phase<backward_input>
    // CHECK: math.tanh
    // CHECK: arith.subf
    // The weight gradient of the matmul is again a multiply-add contraction,
    // over the batch: dW[k, n] = sum_m x[m, k] * dY[m, n].
    // CHECK: %[[DW:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel"]{{.*}} ins(%[[DY]], %{{.*}} : tensor<2x3xf32>, tensor<2x4xf32>) {{.*}}epl.origin = [[MATMUL]] : i64, epl.phase = #epl.phase<backward_weight>
    // CHECK-NEXT: ^bb0(%[[DOUT:.*]]: f32, %[[XS:.*]]: f32, %[[ACC:.*]]: f32):
    // CHECK-NEXT: %[[P:.*]] = arith.mulf %[[DOUT]], %[[XS]] : f32
    // CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
    // CHECK-NEXT: linalg.yield %[[S]]
    // CHECK: return %[[LOSS]], %[[DW]] : tensor<f32>, tensor<4x3xf32>
    return %l : tensor<f32>
  }
}

// -----

// Adjoints of tensor reshapes, slices and concatenation; a parameter that
// the loss does not use gets a zero gradient; an unnamed parameter's
// gradient is named like its argument in files.
module {
  // CHECK-LABEL: func.func @shapes
  // CHECK-SAME: -> (tensor<f32> {epl.result = "loss"}, tensor<2x3xf32> {epl.name = "a", epl.result = "grad"}, tensor<5xf32> {epl.name = "unused", epl.result = "grad"}, tensor<f32> {epl.name = "arg2", epl.result = "grad"})
  func.func @shapes(%a: tensor<2x3xf32> {epl.arg = "param", epl.name = "a"},
                    %unused: tensor<5xf32> {epl.arg = "param", epl.name = "unused"},
                    %anon: tensor<f32> {epl.arg = "param"}) -> tensor<f32> {
    // CHECK: tensor.collapse_shape
    // CHECK: tensor.insert_slice
    // CHECK: tensor.expand_shape
    %flat = tensor.collapse_shape %a [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
    %part = tensor.extract_slice %flat[1] [4] [1] : tensor<6xf32> to tensor<4xf32>
    %both = tensor.concat dim(0) %part, %part : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
    %sq = tensor.expand_shape %both [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
    %zero = arith.constant 0.0 : f32
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.reduce ins(%sq : tensor<2x4xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
      (%v: f32, %acc: f32) {
        %m = arith.mulf %v, %v : f32
        %s = arith.addf %m, %acc : f32
        linalg.yield %s : f32
      }
    // CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<5xf32>
    // CHECK: return %{{.*}}, %{{.*}}, %[[ZERO]], %{{.*}}
    return %l : tensor<f32>
  }
}

// -----

// Gradient accumulation: the forward program runs on a quarter of the batch
// in its own function, which the step calls once per micro-batch.
module attributes {epl.config = {"pipeline.num_micro_batch" = 4 : i64}} {
  // CHECK-LABEL: func.func private @mb_micro_batch
  // CHECK-SAME: (%{{.*}}: tensor<2x3xf32>, %{{.*}}: tensor<3x5xf32>) -> (tensor<f32>, tensor<3x5xf32>)
  // CHECK: } -> tensor<2x5xf32>
  // CHECK-LABEL: func.func @mb
  // CHECK-SAME: tensor<8x3xf32> {epl.arg = "input"}
  // CHECK-SAME: -> (tensor<f32> {epl.result = "loss"}, tensor<3x5xf32> {epl.name = "w", epl.result = "grad"})
  // CHECK: %[[SUMS:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
  // CHECK: %[[OFFSET:.*]] = arith.muli %[[I]]
  // CHECK: %[[X:.*]] = tensor.extract_slice %{{.*}}[%[[OFFSET]], 0] [2, 3] [1, 1] {epl.micro_batch} : tensor<8x3xf32> to tensor<2x3xf32>
  // CHECK: call @mb_micro_batch(%[[X]], %{{.*}}) : (tensor<2x3xf32>, tensor<3x5xf32>) -> (tensor<f32>, tensor<3x5xf32>)
  // CHECK: linalg.add
  // CHECK: scf.yield
  // The sums are the step's loss and gradient.
  // CHECK: return %[[SUMS]]#0, %[[SUMS]]#1 : tensor<f32>, tensor<3x5xf32>
  func.func @mb(%x: tensor<8x3xf32> {epl.arg = "input"},
                %w: tensor<3x5xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x5xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x5xf32>) -> tensor<8x5xf32>
    %y = linalg.matmul ins(%x, %w : tensor<8x3xf32>, tensor<3x5xf32>) outs(%z : tensor<8x5xf32>) -> tensor<8x5xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.reduce ins(%y : tensor<8x5xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
      (%v: f32, %acc: f32) {
        %s = arith.addf %v, %acc : f32
        linalg.yield %s : f32
      }
    return %l : tensor<f32>
  }
}

// -----

// The first contribution to a gradient that meets each element once (every
// loop parallel) is the gradient: written into an empty tensor, not added
// to zeros (0 + -0 would be +0, which PyTorch does not compute either); one
// passed through as it is (an add's, to each operand) is the value itself,
// not a copy. A second contribution adds to it. Here h = a * b + a: dh
// passes to s = a * b and to a; b's gradient is dh * a, a's is dh, then
// dh * b added.
#all = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 0.5 : f64}} {
  // CHECK-LABEL: func.func @elementwise
  // CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<2x3xf32> {epl.arg = "param", epl.name = "a"}
  // CHECK-SAME: %[[B:[a-z0-9_]+]]: tensor<2x3xf32> {epl.arg = "param", epl.name = "b"}
  // CHECK-NOT: linalg.fill {{.*}}backward
  // CHECK: %[[EH:.*]] = tensor.empty() {{.*}}backward_weight{{.*}} : tensor<2x3xf32>
  // CHECK-NEXT: %[[DH:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<f32>, tensor<2x3xf32>) outs(%[[EH]] : tensor<2x3xf32>)
  // CHECK-NOT: linalg.fill {{.*}}backward
  // CHECK: %[[DA:.*]] = linalg.generic {{.*}} ins(%[[DH]], %[[B]] : {{.*}}) outs(%[[DH]] : tensor<2x3xf32>)
  // CHECK: arith.mulf
  // CHECK-NEXT: arith.addf
  // CHECK: %[[EB:.*]] = tensor.empty() {{.*}}backward_weight{{.*}} : tensor<2x3xf32>
  // CHECK-NEXT: %[[DB:.*]] = linalg.generic {{.*}} ins(%[[DH]], %[[A]] : {{.*}}) outs(%[[EB]] : tensor<2x3xf32>)
  // CHECK-NEXT: ^bb0(%[[G:[^:]*]]: f32, %[[X:[^:]*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[X]] : f32
  // CHECK-NEXT: linalg.yield %[[P]] : f32
  // CHECK: return %{{.*}}, %[[DA]], %[[DB]]
  func.func @elementwise(%a: tensor<2x3xf32> {epl.arg = "param", epl.name = "a"},
                         %b: tensor<2x3xf32> {epl.arg = "param", epl.name = "b"}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x3xf32>
    %s = linalg.mul ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
    %h = linalg.add ins(%s, %a : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction", "reduction"]}
        ins(%h : tensor<2x3xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %t = arith.mulf %v, %v : f32
      %r = arith.addf %acc, %t : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
