#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> ()>
#map3 = affine_map<() -> ()>
module attributes {epl.config = {optimizer.lr = 1.000000e-01 : f64, optimizer.type = "sgd"}} {
  func.func @model(%arg0: tensor<16x12xf32> {epl.arg = "param", epl.name = "fc1.weight"}, %arg1: tensor<16xf32> {epl.arg = "param", epl.name = "fc1.bias"}, %arg2: tensor<16x16xf32> {epl.arg = "param", epl.name = "fc2.weight"}, %arg3: tensor<16xf32> {epl.arg = "param", epl.name = "fc2.bias"}, %arg4: tensor<8x16xf32> {epl.arg = "param", epl.name = "fc3.weight"}, %arg5: tensor<8xf32> {epl.arg = "param", epl.name = "fc3.bias"}, %arg6: tensor<8x12xf32> {epl.arg = "input", epl.name = "x"}, %arg7: tensor<8x8xf32> {epl.arg = "label", epl.name = "y"}) -> tensor<f32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 6.400000e+01 : f32
    %0 = tensor.empty() : tensor<12x16xf32>
    %transposed = linalg.transpose ins(%arg0 : tensor<16x12xf32>) outs(%0 : tensor<12x16xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1>}
    %1 = tensor.empty() : tensor<8x16xf32>
    %2 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f32) outs(%1 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %3 = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%arg6, %transposed : tensor<8x12xf32>, tensor<12x16xf32>) outs(%2 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<16xf32>) outs(%1 : tensor<8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x16xf32>
    %5 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%3, %4 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%1 : tensor<8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %24 = arith.addf %in, %in_3 : f32
      linalg.yield %24 : f32
    } -> tensor<8x16xf32>
    %6 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<8x16xf32>) outs(%1 : tensor<8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %24 = math.tanh %in : f32
      linalg.yield %24 : f32
    } -> tensor<8x16xf32>
    %7 = tensor.empty() : tensor<16x16xf32>
    %transposed_1 = linalg.transpose ins(%arg2 : tensor<16x16xf32>) outs(%7 : tensor<16x16xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1>}
    %8 = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%6, %transposed_1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%2 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg3 : tensor<16xf32>) outs(%1 : tensor<8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x16xf32>
    %10 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%8, %9 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%1 : tensor<8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %24 = arith.addf %in, %in_3 : f32
      linalg.yield %24 : f32
    } -> tensor<8x16xf32>
    %11 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%10 : tensor<8x16xf32>) outs(%1 : tensor<8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %24 = math.tanh %in : f32
      linalg.yield %24 : f32
    } -> tensor<8x16xf32>
    %12 = tensor.empty() : tensor<16x8xf32>
    %transposed_2 = linalg.transpose ins(%arg4 : tensor<8x16xf32>) outs(%12 : tensor<16x8xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1>}
    %13 = tensor.empty() : tensor<8x8xf32>
    %14 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f32) outs(%13 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %15 = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%11, %transposed_2 : tensor<8x16xf32>, tensor<16x8xf32>) outs(%14 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg5 : tensor<8xf32>) outs(%13 : tensor<8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x8xf32>
    %17 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%15, %16 : tensor<8x8xf32>, tensor<8x8xf32>) outs(%13 : tensor<8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %24 = arith.addf %in, %in_3 : f32
      linalg.yield %24 : f32
    } -> tensor<8x8xf32>
    %18 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%17, %arg7 : tensor<8x8xf32>, tensor<8x8xf32>) outs(%13 : tensor<8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %24 = arith.subf %in, %in_3 : f32
      linalg.yield %24 : f32
    } -> tensor<8x8xf32>
    %19 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%18, %18 : tensor<8x8xf32>, tensor<8x8xf32>) outs(%13 : tensor<8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %24 = arith.mulf %in, %in_3 : f32
      linalg.yield %24 : f32
    } -> tensor<8x8xf32>
    %20 = tensor.empty() : tensor<f32>
    %21 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f32) outs(%20 : tensor<f32>) -> tensor<f32>
    %22 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["reduction", "reduction"]} ins(%19 : tensor<8x8xf32>) outs(%21 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %24 = arith.addf %in, %out : f32
      linalg.yield %24 : f32
    } -> tensor<f32>
    %23 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = []} ins(%22 : tensor<f32>) outs(%20 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %24 = arith.divf %in, %cst_0 : f32
      linalg.yield %24 : f32
    } -> tensor<f32>
    return %23 : tensor<f32>
  }
}
