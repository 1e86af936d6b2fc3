// A bag-of-embeddings classifier with integer class labels, written the way
// torch-mlir lowers nn.Embedding and cross_entropy: both read a tensor by
// index inside a linalg.generic body (tensor.extract), so their gradients
// are scatter-adds (epl.scatter_add).
//
//   h[b, d]   = mean_s emb[ids[b, s], d]
//   logits    = h @ w
//   loss      = -mean_b log_softmax(logits)[b, labels[b]]

#replicate = #epl.replicate<devices = 1>

module attributes {epl.config = {"optimizer.type" = "momentum",
                                 "optimizer.lr" = 5.0e-01 : f64,
                                 "optimizer.momentum" = 9.0e-01 : f64}} {
  func.func @model(%ids: tensor<8x5xi64> {epl.arg = "input", epl.name = "ids"},
                   %labels: tensor<8xi64> {epl.arg = "label", epl.name = "labels"},
                   %emb: tensor<20x6xf32> {epl.arg = "param", epl.name = "emb"},
                   %w: tensor<6x4xf32> {epl.arg = "param", epl.name = "w"})
      -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %seq = arith.constant 5.0 : f32
    %batch = arith.constant 8.0 : f32

    // Embedding bag: the row index is data, the column the loop's own.
    %eh = tensor.empty() : tensor<8x6xf32>
    %fh = linalg.fill {epl.scope = #replicate} ins(%zero : f32)
            outs(%eh : tensor<8x6xf32>) -> tensor<8x6xf32>
    %sum = linalg.generic {epl.scope = #replicate,
        indexing_maps = [affine_map<(b, s, d) -> (b, s)>,
                         affine_map<(b, s, d) -> (b, d)>],
        iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%ids : tensor<8x5xi64>) outs(%fh : tensor<8x6xf32>) {
    ^bb0(%id: i64, %acc: f32):
      %row = arith.index_cast %id : i64 to index
      %col = linalg.index 2 : index
      %v = tensor.extract %emb[%row, %col] : tensor<20x6xf32>
      %s = arith.addf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<8x6xf32>
    %h = linalg.generic {epl.scope = #replicate,
        indexing_maps = [affine_map<(b, d) -> (b, d)>,
                         affine_map<(b, d) -> (b, d)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%sum : tensor<8x6xf32>) outs(%eh : tensor<8x6xf32>) {
    ^bb0(%x: f32, %o: f32):
      %m = arith.divf %x, %seq : f32
      linalg.yield %m : f32
    } -> tensor<8x6xf32>

    %el = tensor.empty() : tensor<8x4xf32>
    %fl = linalg.fill {epl.scope = #replicate} ins(%zero : f32)
            outs(%el : tensor<8x4xf32>) -> tensor<8x4xf32>
    %logits = linalg.matmul {epl.scope = #replicate}
                ins(%h, %w : tensor<8x6xf32>, tensor<6x4xf32>)
                outs(%fl : tensor<8x4xf32>) -> tensor<8x4xf32>

    // log_softmax
    %er = tensor.empty() : tensor<8xf32>
    %fmax = linalg.fill {epl.scope = #replicate} ins(%ninf : f32)
              outs(%er : tensor<8xf32>) -> tensor<8xf32>
    %rowmax = linalg.generic {epl.scope = #replicate,
        indexing_maps = [affine_map<(b, c) -> (b, c)>, affine_map<(b, c) -> (b)>],
        iterator_types = ["parallel", "reduction"]}
        ins(%logits : tensor<8x4xf32>) outs(%fmax : tensor<8xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %m = arith.maximumf %acc, %x : f32
      linalg.yield %m : f32
    } -> tensor<8xf32>
    %fsum = linalg.fill {epl.scope = #replicate} ins(%zero : f32)
              outs(%er : tensor<8xf32>) -> tensor<8xf32>
    %sumexp = linalg.generic {epl.scope = #replicate,
        indexing_maps = [affine_map<(b, c) -> (b, c)>, affine_map<(b, c) -> (b)>,
                         affine_map<(b, c) -> (b)>],
        iterator_types = ["parallel", "reduction"]}
        ins(%logits, %rowmax : tensor<8x4xf32>, tensor<8xf32>)
        outs(%fsum : tensor<8xf32>) {
    ^bb0(%x: f32, %m: f32, %acc: f32):
      %d = arith.subf %x, %m : f32
      %e = math.exp %d : f32
      %s = arith.addf %acc, %e : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    %logp = linalg.generic {epl.scope = #replicate,
        indexing_maps = [affine_map<(b, c) -> (b, c)>, affine_map<(b, c) -> (b)>,
                         affine_map<(b, c) -> (b)>, affine_map<(b, c) -> (b, c)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%logits, %rowmax, %sumexp : tensor<8x4xf32>, tensor<8xf32>, tensor<8xf32>)
        outs(%el : tensor<8x4xf32>) {
    ^bb0(%x: f32, %m: f32, %s: f32, %o: f32):
      %d = arith.subf %x, %m : f32
      %l = math.log %s : f32
      %r = arith.subf %d, %l : f32
      linalg.yield %r : f32
    } -> tensor<8x4xf32>

    // nll: the label picks the column.
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill {epl.scope = #replicate} ins(%zero : f32)
            outs(%e0 : tensor<f32>) -> tensor<f32>
    %nll = linalg.generic {epl.scope = #replicate,
        indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>],
        iterator_types = ["reduction"]}
        ins(%labels : tensor<8xi64>) outs(%f0 : tensor<f32>) {
    ^bb0(%label: i64, %acc: f32):
      %row = linalg.index 0 : index
      %col = arith.index_cast %label : i64 to index
      %v = tensor.extract %logp[%row, %col] : tensor<8x4xf32>
      %s = arith.subf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %loss = linalg.generic {epl.scope = #replicate,
        indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
        iterator_types = []}
        ins(%nll : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%x: f32, %o: f32):
      %m = arith.divf %x, %batch : f32
      linalg.yield %m : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}
