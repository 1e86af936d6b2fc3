// An L0 model whose reshape has a reassociation index of 2^32 + 2, which
// upstream's verifier reads as 2 (32 bits): the sharding passes must
// report it, not index with it (issue 16).
#replicate = #epl.replicate<devices = 1>
#split = #epl.split<devices = 2>
#map_rows = affine_map<(i, j) -> (i, j)>
#map_row = affine_map<(i, j) -> (i)>
#map_all = affine_map<(i) -> (i)>
#map_scalar = affine_map<(i) -> ()>

module attributes {epl.config = {"pipeline.num_micro_batch" = 1 : i64,
                                 "optimizer.type" = "momentum",
                                 "optimizer.lr" = 1.0e-01 : f64,
                                 "optimizer.momentum" = 9.0e-01 : f64}} {
  func.func @model(%x: tensor<32x784xf32> {epl.arg = "input", epl.name = "x"},
                   %y: tensor<32x10xf32> {epl.arg = "label", epl.name = "y"},
                   %w1: tensor<784x512xf32> {epl.arg = "param", epl.name = "w1"},
                   %b1: tensor<512xf32> {epl.arg = "param", epl.name = "b1"},
                   %w2: tensor<512x10xf32> {epl.arg = "param", epl.name = "w2"})
      -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %batch = arith.constant 32.0 : f32

    // Feature extractor: h = relu(x @ w1 + b1).
    %e1 = tensor.empty() : tensor<32x512xf32>
    %f1 = linalg.fill {epl.scope = #replicate} ins(%zero : f32)
            outs(%e1 : tensor<32x512xf32>) -> tensor<32x512xf32>
    %xw = linalg.matmul {epl.scope = #replicate}
            ins(%x, %w1 : tensor<32x784xf32>, tensor<784x512xf32>)
            outs(%f1 : tensor<32x512xf32>) -> tensor<32x512xf32>
    %bb = linalg.broadcast {epl.scope = #replicate}
            ins(%b1 : tensor<512xf32>) outs(%e1 : tensor<32x512xf32>)
            dimensions = [0]
    %pre = linalg.add {epl.scope = #replicate}
             ins(%xw, %bb : tensor<32x512xf32>, tensor<32x512xf32>)
             outs(%e1 : tensor<32x512xf32>) -> tensor<32x512xf32>
    %p3 = tensor.expand_shape %pre [[0], [1, 4294967298]] output_shape [32, 2, 256]
            : tensor<32x512xf32> into tensor<32x2x256xf32>
    %e3 = tensor.empty() : tensor<32x2x256xf32>
    %f3 = linalg.fill {epl.scope = #replicate} ins(%zero : f32)
            outs(%e3 : tensor<32x2x256xf32>) -> tensor<32x2x256xf32>
    %h3 = linalg.max {epl.scope = #replicate}
           ins(%p3, %f3 : tensor<32x2x256xf32>, tensor<32x2x256xf32>)
           outs(%e3 : tensor<32x2x256xf32>) -> tensor<32x2x256xf32>
    %h = tensor.collapse_shape %h3 [[0], [1, 2]]
           : tensor<32x2x256xf32> into tensor<32x512xf32>

    // Classifier: logits = h @ w2, split across devices.
    %e2 = tensor.empty() : tensor<32x10xf32>
    %f2 = linalg.fill {epl.scope = #split} ins(%zero : f32)
            outs(%e2 : tensor<32x10xf32>) -> tensor<32x10xf32>
    %logits = linalg.matmul {epl.scope = #split}
                ins(%h, %w2 : tensor<32x512xf32>, tensor<512x10xf32>)
                outs(%f2 : tensor<32x10xf32>) -> tensor<32x10xf32>

    // Softmax cross-entropy, numerically stable: max, shifted log-sum-exp.
    %er = tensor.empty() : tensor<32xf32>
    %fmax = linalg.fill {epl.scope = #split} ins(%ninf : f32)
              outs(%er : tensor<32xf32>) -> tensor<32xf32>
    %rowmax = linalg.generic {epl.scope = #split,
                indexing_maps = [#map_rows, #map_row],
                iterator_types = ["parallel", "reduction"]}
                ins(%logits : tensor<32x10xf32>) outs(%fmax : tensor<32xf32>) {
    ^bb0(%l: f32, %acc: f32):
      %m = arith.maximumf %l, %acc : f32
      linalg.yield %m : f32
    } -> tensor<32xf32>
    %fsum = linalg.fill {epl.scope = #split} ins(%zero : f32)
              outs(%er : tensor<32xf32>) -> tensor<32xf32>
    %sumexp = linalg.generic {epl.scope = #split,
                indexing_maps = [#map_rows, #map_row, #map_row],
                iterator_types = ["parallel", "reduction"]}
                ins(%logits, %rowmax : tensor<32x10xf32>, tensor<32xf32>)
                outs(%fsum : tensor<32xf32>) {
    ^bb0(%l: f32, %m: f32, %acc: f32):
      %s = arith.subf %l, %m : f32
      %e = math.exp %s : f32
      %a = arith.addf %acc, %e : f32
      linalg.yield %a : f32
    } -> tensor<32xf32>
    // Per row: sum_j y[i,j] * (logits[i,j] - max[i] - log(sumexp[i])), negated.
    %rowloss = linalg.generic {epl.scope = #split,
                 indexing_maps = [#map_rows, #map_rows, #map_row, #map_row,
                                  #map_row],
                 iterator_types = ["parallel", "reduction"]}
                 ins(%logits, %y, %rowmax, %sumexp
                     : tensor<32x10xf32>, tensor<32x10xf32>, tensor<32xf32>,
                       tensor<32xf32>)
                 outs(%fsum : tensor<32xf32>) {
    ^bb0(%l: f32, %t: f32, %m: f32, %se: f32, %acc: f32):
      %lse = math.log %se : f32
      %s = arith.subf %l, %m : f32
      %lp = arith.subf %s, %lse : f32
      %p = arith.mulf %t, %lp : f32
      %a = arith.subf %acc, %p : f32
      linalg.yield %a : f32
    } -> tensor<32xf32>

    // Mean over the batch.
    %es = tensor.empty() : tensor<f32>
    %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %total = linalg.generic {indexing_maps = [#map_all, #map_scalar],
                             iterator_types = ["reduction"]}
               ins(%rowloss : tensor<32xf32>) outs(%fs : tensor<f32>) {
    ^bb0(%r: f32, %acc: f32):
      %a = arith.addf %acc, %r : f32
      linalg.yield %a : f32
    } -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>,
                                             affine_map<() -> ()>],
                            iterator_types = []}
              ins(%total : tensor<f32>) outs(%es : tensor<f32>) {
    ^bb0(%t: f32, %o: f32):
      %d = arith.divf %t, %batch : f32
      linalg.yield %d : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}
