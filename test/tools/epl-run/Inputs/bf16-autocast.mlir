// A forward under torch.autocast to bfloat16, as torch-mlir writes it: the
// truncation to bf16 ended in the JIT, "Symbols not found: __truncsfbf2".
func.func @model(%x: tensor<4xf32> {epl.arg = "input", epl.name = "x"}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xbf16>
  %h = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4xbf16>
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%h : tensor<4xbf16>) outs(%z : tensor<f32>) {
  ^bb0(%a: bf16, %acc: f32):
    %w = arith.extf %a : bf16 to f32
    %r = arith.addf %acc, %w : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
