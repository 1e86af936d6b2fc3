#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0)>
#map3 = affine_map<(d0, d1) -> (d0, 0)>
#map4 = affine_map<(d0) -> (d0)>
#map5 = affine_map<(d0) -> ()>
#map6 = affine_map<() -> ()>
module attributes {epl.config = {optimizer.lr = 1.000000e-01 : f64, optimizer.type = "sgd"}} {
  func.func @model(%arg0: tensor<16x12xf32> {epl.arg = "param", epl.name = "fc1.weight"}, %arg1: tensor<16xf32> {epl.arg = "param", epl.name = "fc1.bias"}, %arg2: tensor<16x16xf32> {epl.arg = "param", epl.name = "fc2.weight"}, %arg3: tensor<16xf32> {epl.arg = "param", epl.name = "fc2.bias"}, %arg4: tensor<8x16xf32> {epl.arg = "param", epl.name = "fc3.weight"}, %arg5: tensor<8xf32> {epl.arg = "param", epl.name = "fc3.bias"}, %arg6: tensor<8x12xf32> {epl.arg = "input", epl.name = "x"}, %arg7: tensor<8xi64> {epl.arg = "label", epl.name = "y"}) -> tensor<f32> {
    %c-100_i64 = arith.constant -100 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %c8 = arith.constant 8 : index
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_2 = arith.constant dense<0> : tensor<i64>
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
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %44 = arith.addf %in, %in_6 : f32
      linalg.yield %44 : f32
    } -> tensor<8x16xf32>
    %6 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<8x16xf32>) outs(%1 : tensor<8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %44 = math.tanh %in : f32
      linalg.yield %44 : f32
    } -> tensor<8x16xf32>
    %7 = tensor.empty() : tensor<16x16xf32>
    %transposed_3 = linalg.transpose ins(%arg2 : tensor<16x16xf32>) outs(%7 : tensor<16x16xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1>}
    %8 = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%6, %transposed_3 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%2 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg3 : tensor<16xf32>) outs(%1 : tensor<8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x16xf32>
    %10 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%8, %9 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%1 : tensor<8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %44 = arith.addf %in, %in_6 : f32
      linalg.yield %44 : f32
    } -> tensor<8x16xf32>
    %11 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%10 : tensor<8x16xf32>) outs(%1 : tensor<8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %44 = math.tanh %in : f32
      linalg.yield %44 : f32
    } -> tensor<8x16xf32>
    %12 = tensor.empty() : tensor<16x8xf32>
    %transposed_4 = linalg.transpose ins(%arg4 : tensor<8x16xf32>) outs(%12 : tensor<16x8xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1>}
    %13 = tensor.empty() : tensor<8x8xf32>
    %14 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f32) outs(%13 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %15 = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%11, %transposed_4 : tensor<8x16xf32>, tensor<16x8xf32>) outs(%14 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg5 : tensor<8xf32>) outs(%13 : tensor<8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x8xf32>
    %17 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%15, %16 : tensor<8x8xf32>, tensor<8x8xf32>) outs(%13 : tensor<8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %44 = arith.addf %in, %in_6 : f32
      linalg.yield %44 : f32
    } -> tensor<8x8xf32>
    %18 = tensor.empty() : tensor<8xi64>
    %19 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%c0_i64 : i64) outs(%18 : tensor<8xi64>) -> tensor<8xi64>
    %20 = tensor.empty() : tensor<8xf32>
    %21 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%20 : tensor<8xf32>) -> tensor<8xf32>
    %22:2 = linalg.generic {indexing_maps = [#map1, #map2, #map2], iterator_types = ["parallel", "reduction"]} ins(%17 : tensor<8x8xf32>) outs(%21, %19 : tensor<8xf32>, tensor<8xi64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32, %out_6: i64):
      %44 = linalg.index 1 : index
      %45 = arith.index_cast %44 : index to i64
      %46 = arith.maximumf %in, %out : f32
      %47 = arith.cmpf ogt, %in, %out : f32
      %48 = arith.select %47, %45, %out_6 : i64
      linalg.yield %46, %48 : f32, i64
    } -> (tensor<8xf32>, tensor<8xi64>)
    %expanded = tensor.expand_shape %22#0 [[0, 1]] output_shape [8, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<8xf32> into tensor<8x1xf32>
    %23 = linalg.generic {indexing_maps = [#map1, #map3, #map1], iterator_types = ["parallel", "parallel"]} ins(%17, %expanded : tensor<8x8xf32>, tensor<8x1xf32>) outs(%13 : tensor<8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %44 = arith.subf %in, %in_6 : f32
      linalg.yield %44 : f32
    } -> tensor<8x8xf32>
    %24 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%23 : tensor<8x8xf32>) outs(%13 : tensor<8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %44 = math.exp %in : f32
      linalg.yield %44 : f32
    } -> tensor<8x8xf32>
    %25 = tensor.empty() : tensor<8x1xf32>
    %26 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f32) outs(%25 : tensor<8x1xf32>) -> tensor<8x1xf32>
    %27 = linalg.generic {indexing_maps = [#map1, #map3], iterator_types = ["parallel", "reduction"]} ins(%24 : tensor<8x8xf32>) outs(%26 : tensor<8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %44 = arith.addf %in, %out : f32
      linalg.yield %44 : f32
    } -> tensor<8x1xf32>
    %28 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%27 : tensor<8x1xf32>) outs(%25 : tensor<8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %44 = math.log %in : f32
      linalg.yield %44 : f32
    } -> tensor<8x1xf32>
    %29 = linalg.generic {indexing_maps = [#map1, #map3, #map1], iterator_types = ["parallel", "parallel"]} ins(%23, %28 : tensor<8x8xf32>, tensor<8x1xf32>) outs(%13 : tensor<8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %44 = arith.subf %in, %in_6 : f32
      linalg.yield %44 : f32
    } -> tensor<8x8xf32>
    %30 = tensor.empty() : tensor<8xi1>
    %31 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel"]} ins(%arg7 : tensor<8xi64>) outs(%30 : tensor<8xi1>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i64, %out: i1):
      %44 = arith.cmpi ne, %in, %c-100_i64 : i64
      linalg.yield %44 : i1
    } -> tensor<8xi1>
    %32 = linalg.generic {indexing_maps = [#map4, #map4, #map5, #map4], iterator_types = ["parallel"]} ins(%31, %arg7, %cst_2 : tensor<8xi1>, tensor<8xi64>, tensor<i64>) outs(%18 : tensor<8xi64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i1, %in_6: i64, %in_7: i64, %out: i64):
      %44 = arith.select %in, %in_6, %in_7 : i64
      linalg.yield %44 : i64
    } -> tensor<8xi64>
    %expanded_5 = tensor.expand_shape %32 [[0, 1]] output_shape [8, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<8xi64> into tensor<8x1xi64>
    %33 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%expanded_5 : tensor<8x1xi64>) outs(%26 : tensor<8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i64, %out: f32):
      %44 = linalg.index 0 : index
      %45 = arith.index_cast %in : i64 to index
      %46 = arith.cmpi slt, %45, %c8 : index
      cf.assert %46, "index must be smaller than dim size"
      %47 = arith.cmpi sge, %in, %c0_i64 : i64
      cf.assert %47, "index must be larger or equal to 0"
      %extracted = tensor.extract %29[%44, %45] : tensor<8x8xf32>
      linalg.yield %extracted : f32
    } -> tensor<8x1xf32>
    %collapsed = tensor.collapse_shape %33 [[0, 1]] {epl.scope = #epl.replicate<devices = 1>} : tensor<8x1xf32> into tensor<8xf32>
    %34 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel"]} ins(%collapsed : tensor<8xf32>) outs(%20 : tensor<8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %44 = arith.negf %in : f32
      linalg.yield %44 : f32
    } -> tensor<8xf32>
    %35 = linalg.generic {indexing_maps = [#map4, #map4, #map5, #map4], iterator_types = ["parallel"]} ins(%31, %34, %cst_1 : tensor<8xi1>, tensor<8xf32>, tensor<f32>) outs(%20 : tensor<8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i1, %in_6: f32, %in_7: f32, %out: f32):
      %44 = arith.select %in, %in_6, %in_7 : f32
      linalg.yield %44 : f32
    } -> tensor<8xf32>
    %36 = tensor.empty() : tensor<i64>
    %37 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%c0_i64 : i64) outs(%36 : tensor<i64>) -> tensor<i64>
    %38 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["reduction"]} ins(%31 : tensor<8xi1>) outs(%37 : tensor<i64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i1, %out: i64):
      %44 = arith.extui %in : i1 to i64
      %45 = arith.addi %44, %out : i64
      linalg.yield %45 : i64
    } -> tensor<i64>
    %39 = tensor.empty() : tensor<f32>
    %40 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = []} ins(%38 : tensor<i64>) outs(%39 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i64, %out: f32):
      %44 = arith.sitofp %in : i64 to f32
      linalg.yield %44 : f32
    } -> tensor<f32>
    %41 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f32) outs(%39 : tensor<f32>) -> tensor<f32>
    %42 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["reduction"]} ins(%35 : tensor<8xf32>) outs(%41 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %44 = arith.addf %in, %out : f32
      linalg.yield %44 : f32
    } -> tensor<f32>
    %43 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = []} ins(%42, %40 : tensor<f32>, tensor<f32>) outs(%39 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %44 = arith.divf %in, %in_6 : f32
      linalg.yield %44 : f32
    } -> tensor<f32>
    return %43 : tensor<f32>
  }
}
