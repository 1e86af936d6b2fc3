// RUN: epl-opt %s --epl-parallelize="devices=2" -verify-diagnostics -o /dev/null
// Half precision on the wire is for f32 gradients: an f64 model's would be
// sent as they are, communication.fp16 ignored.
#id = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
module attributes {epl.config = {"communication.fp16" = true}} {
  func.func @model(%x: tensor<8x4xf64> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<4x2xf64> {epl.arg = "param", epl.name = "w"}) -> tensor<f64> {
    %zero = arith.constant 0.0 : f64
    %e = tensor.empty() : tensor<8x2xf64>
    %z = linalg.fill ins(%zero : f64) outs(%e : tensor<8x2xf64>) -> tensor<8x2xf64>
    %y = linalg.matmul ins(%x, %w : tensor<8x4xf64>, tensor<4x2xf64>) outs(%z : tensor<8x2xf64>) -> tensor<8x2xf64>
    %es = tensor.empty() : tensor<f64>
    %zs = linalg.fill ins(%zero : f64) outs(%es : tensor<f64>) -> tensor<f64>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
        ins(%y : tensor<8x2xf64>) outs(%zs : tensor<f64>) {
    ^bb0(%a: f64, %acc: f64):
      %s = arith.addf %acc, %a : f64
      linalg.yield %s : f64
    } -> tensor<f64>
    // expected-error @+1 {{epl-insert-collectives: communication.fp16 sends f32 gradients in half precision; this gradient is 'tensor<4x2xf64>' (turn the key off for this model)}}
    return %l : tensor<f64>
  }
}
