#map = affine_map<(d0) -> (d0)>
#map1 = affine_map<(d0) -> ()>
module attributes {epl.config = {optimizer.lr = 1.000000e-02 : f64, optimizer.type = "sgd"}} {
  func.func @model(%arg0: tensor<4xf32> {epl.arg = "param", epl.name = "w"}, %arg1: tensor<2xi64> {epl.arg = "input", epl.name = "i"}) -> tensor<f32> {
    %c0_i64 = arith.constant 0 : i64
    %c4_i64 = arith.constant 4 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<2xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%arg1 : tensor<2xi64>) outs(%0 : tensor<2xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i64, %out: f32):
      %5 = arith.cmpi slt, %in, %c0_i64 : i64
      %6 = arith.addi %in, %c4_i64 : i64
      %7 = arith.select %5, %6, %in : i64
      %8 = arith.index_cast %7 : i64 to index
      %extracted = tensor.extract %arg0[%8] : tensor<4xf32>
      linalg.yield %extracted : f32
    } -> tensor<2xf32>
    %2 = tensor.empty() : tensor<f32>
    %3 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f32) outs(%2 : tensor<f32>) -> tensor<f32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction"]} ins(%1 : tensor<2xf32>) outs(%3 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %5 = arith.addf %in, %out : f32
      linalg.yield %5 : f32
    } -> tensor<f32>
    return %4 : tensor<f32>
  }
}
