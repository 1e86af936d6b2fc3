#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
#map5 = affine_map<(d0, d1) -> (d1)>
#map6 = affine_map<(d0, d1) -> (d0)>
#map7 = affine_map<(d0, d1) -> (d0, 0)>
#map8 = affine_map<(d0) -> (d0)>
#map9 = affine_map<(d0) -> ()>
#map10 = affine_map<() -> ()>
module attributes {epl.config = {optimizer.lr = 1.000000e-01 : f64, optimizer.type = "sgd"}} {
  func.func @model(%arg0: tensor<4x3x3x3xf32> {epl.arg = "param", epl.name = "conv1.weight"}, %arg1: tensor<4xf32> {epl.arg = "param", epl.name = "conv1.bias"}, %arg2: tensor<4xf32> {epl.arg = "param", epl.name = "bn1.weight"}, %arg3: tensor<4xf32> {epl.arg = "param", epl.name = "bn1.bias"}, %arg4: tensor<4x4x3x3xf32> {epl.arg = "param", epl.name = "conv2.weight"}, %arg5: tensor<4xf32> {epl.arg = "param", epl.name = "bn2.weight"}, %arg6: tensor<4xf32> {epl.arg = "param", epl.name = "bn2.bias"}, %arg7: tensor<8x4x3x3xf32> {epl.arg = "param", epl.name = "conv3.weight"}, %arg8: tensor<8xf32> {epl.arg = "param", epl.name = "conv3.bias"}, %arg9: tensor<5x8xf32> {epl.arg = "param", epl.name = "fc.weight"}, %arg10: tensor<5xf32> {epl.arg = "param", epl.name = "fc.bias"}, %arg11: tensor<4x3x8x8xf32> {epl.arg = "input", epl.name = "x"}, %arg12: tensor<4xi64> {epl.arg = "label", epl.name = "y"}) -> tensor<f32> {
    %c-100_i64 = arith.constant -100 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f64
    %cst_1 = arith.constant 0xFF800000 : f32
    %c5 = arith.constant 5 : index
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_3 = arith.constant 1.000000e-05 : f64
    %cst_4 = arith.constant 2.560000e+02 : f64
    %cst_5 = arith.constant 2.560000e+02 : f32
    %cst_6 = arith.constant 6.400000e+01 : f64
    %cst_7 = arith.constant 6.400000e+01 : f32
    %cst_8 = arith.constant 4.000000e+00 : f32
    %cst_9 = arith.constant dense<0> : tensor<i64>
    %padded = tensor.pad %arg11 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg13: index, %arg14: index, %arg15: index, %arg16: index):
      tensor.yield %cst : f32
    } {epl.scope = #epl.replicate<devices = 1>} : tensor<4x3x8x8xf32> to tensor<4x3x10x10xf32>
    %0 = tensor.empty() : tensor<4x4x8x8xf32>
    %broadcasted = linalg.broadcast ins(%arg1 : tensor<4xf32>) outs(%0 : tensor<4x4x8x8xf32>) dimensions = [0, 2, 3]  {epl.scope = #epl.replicate<devices = 1>}
    %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, epl.scope = #epl.replicate<devices = 1>, strides = dense<1> : vector<2xi64>} ins(%padded, %arg0 : tensor<4x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%broadcasted : tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32>
    %2 = tensor.empty() : tensor<4x4x8x8xf64>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1 : tensor<4x4x8x8xf32>) outs(%2 : tensor<4x4x8x8xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f64):
      %88 = arith.extf %in : f32 to f64
      linalg.yield %88 : f64
    } -> tensor<4x4x8x8xf64>
    %4 = tensor.empty() : tensor<1x4x1x1xf64>
    %5 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f64) outs(%4 : tensor<1x4x1x1xf64>) -> tensor<1x4x1x1xf64>
    %6 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%3 : tensor<4x4x8x8xf64>) outs(%5 : tensor<1x4x1x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %88 = arith.addf %in, %out : f64
      linalg.yield %88 : f64
    } -> tensor<1x4x1x1xf64>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6 : tensor<1x4x1x1xf64>) outs(%4 : tensor<1x4x1x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %88 = arith.divf %in, %cst_4 : f64
      linalg.yield %88 : f64
    } -> tensor<1x4x1x1xf64>
    %8 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%3, %7 : tensor<4x4x8x8xf64>, tensor<1x4x1x1xf64>) outs(%2 : tensor<4x4x8x8xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_18: f64, %out: f64):
      %88 = arith.subf %in, %in_18 : f64
      linalg.yield %88 : f64
    } -> tensor<4x4x8x8xf64>
    %9 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8, %8 : tensor<4x4x8x8xf64>, tensor<4x4x8x8xf64>) outs(%2 : tensor<4x4x8x8xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_18: f64, %out: f64):
      %88 = arith.mulf %in, %in_18 : f64
      linalg.yield %88 : f64
    } -> tensor<4x4x8x8xf64>
    %10 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%9 : tensor<4x4x8x8xf64>) outs(%5 : tensor<1x4x1x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %88 = arith.addf %in, %out : f64
      linalg.yield %88 : f64
    } -> tensor<1x4x1x1xf64>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%10 : tensor<1x4x1x1xf64>) outs(%4 : tensor<1x4x1x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %88 = arith.divf %in, %cst_4 : f64
      linalg.yield %88 : f64
    } -> tensor<1x4x1x1xf64>
    %12 = tensor.empty() : tensor<1x4x1x1xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11 : tensor<1x4x1x1xf64>) outs(%12 : tensor<1x4x1x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f32):
      %88 = arith.truncf %in : f64 to f32
      linalg.yield %88 : f32
    } -> tensor<1x4x1x1xf32>
    %14 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f32) outs(%12 : tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%1 : tensor<4x4x8x8xf32>) outs(%14 : tensor<1x4x1x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = arith.addf %in, %out : f32
      linalg.yield %88 : f32
    } -> tensor<1x4x1x1xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%15 : tensor<1x4x1x1xf32>) outs(%12 : tensor<1x4x1x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = arith.divf %in, %cst_5 : f32
      linalg.yield %88 : f32
    } -> tensor<1x4x1x1xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%13 : tensor<1x4x1x1xf32>) outs(%12 : tensor<1x4x1x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = arith.truncf %cst_3 : f64 to f32
      %89 = arith.addf %in, %88 : f32
      linalg.yield %89 : f32
    } -> tensor<1x4x1x1xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%17 : tensor<1x4x1x1xf32>) outs(%12 : tensor<1x4x1x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = math.rsqrt %in : f32
      linalg.yield %88 : f32
    } -> tensor<1x4x1x1xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %16 : tensor<4x4x8x8xf32>, tensor<1x4x1x1xf32>) outs(%0 : tensor<4x4x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %88 = arith.subf %in, %in_18 : f32
      linalg.yield %88 : f32
    } -> tensor<4x4x8x8xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%19, %18 : tensor<4x4x8x8xf32>, tensor<1x4x1x1xf32>) outs(%0 : tensor<4x4x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %88 = arith.mulf %in, %in_18 : f32
      linalg.yield %88 : f32
    } -> tensor<4x4x8x8xf32>
    %expanded = tensor.expand_shape %arg2 [[0, 1, 2]] output_shape [4, 1, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<4xf32> into tensor<4x1x1xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%20, %expanded : tensor<4x4x8x8xf32>, tensor<4x1x1xf32>) outs(%0 : tensor<4x4x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %88 = arith.mulf %in, %in_18 : f32
      linalg.yield %88 : f32
    } -> tensor<4x4x8x8xf32>
    %expanded_10 = tensor.expand_shape %arg3 [[0, 1, 2]] output_shape [4, 1, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<4xf32> into tensor<4x1x1xf32>
    %22 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21, %expanded_10 : tensor<4x4x8x8xf32>, tensor<4x1x1xf32>) outs(%0 : tensor<4x4x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %88 = arith.addf %in, %in_18 : f32
      linalg.yield %88 : f32
    } -> tensor<4x4x8x8xf32>
    %23 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%22 : tensor<4x4x8x8xf32>) outs(%0 : tensor<4x4x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = arith.cmpf ugt, %in, %cst : f32
      %89 = arith.select %88, %in, %cst : f32
      linalg.yield %89 : f32
    } -> tensor<4x4x8x8xf32>
    %24 = tensor.empty() : tensor<4x4x4x4xf32>
    %25 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_1 : f32) outs(%24 : tensor<4x4x4x4xf32>) -> tensor<4x4x4x4xf32>
    %26 = tensor.empty() : tensor<2x2xf32>
    %27 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, epl.scope = #epl.replicate<devices = 1>, strides = dense<2> : vector<2xi64>} ins(%23, %26 : tensor<4x4x8x8xf32>, tensor<2x2xf32>) outs(%25 : tensor<4x4x4x4xf32>) -> tensor<4x4x4x4xf32>
    %padded_11 = tensor.pad %27 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg13: index, %arg14: index, %arg15: index, %arg16: index):
      tensor.yield %cst : f32
    } {epl.scope = #epl.replicate<devices = 1>} : tensor<4x4x4x4xf32> to tensor<4x4x6x6xf32>
    %28 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f32) outs(%24 : tensor<4x4x4x4xf32>) -> tensor<4x4x4x4xf32>
    %29 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, epl.scope = #epl.replicate<devices = 1>, strides = dense<1> : vector<2xi64>} ins(%padded_11, %arg4 : tensor<4x4x6x6xf32>, tensor<4x4x3x3xf32>) outs(%28 : tensor<4x4x4x4xf32>) -> tensor<4x4x4x4xf32>
    %30 = tensor.empty() : tensor<4x4x4x4xf64>
    %31 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%29 : tensor<4x4x4x4xf32>) outs(%30 : tensor<4x4x4x4xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f64):
      %88 = arith.extf %in : f32 to f64
      linalg.yield %88 : f64
    } -> tensor<4x4x4x4xf64>
    %32 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%31 : tensor<4x4x4x4xf64>) outs(%5 : tensor<1x4x1x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %88 = arith.addf %in, %out : f64
      linalg.yield %88 : f64
    } -> tensor<1x4x1x1xf64>
    %33 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%32 : tensor<1x4x1x1xf64>) outs(%4 : tensor<1x4x1x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %88 = arith.divf %in, %cst_6 : f64
      linalg.yield %88 : f64
    } -> tensor<1x4x1x1xf64>
    %34 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%31, %33 : tensor<4x4x4x4xf64>, tensor<1x4x1x1xf64>) outs(%30 : tensor<4x4x4x4xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_18: f64, %out: f64):
      %88 = arith.subf %in, %in_18 : f64
      linalg.yield %88 : f64
    } -> tensor<4x4x4x4xf64>
    %35 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%34, %34 : tensor<4x4x4x4xf64>, tensor<4x4x4x4xf64>) outs(%30 : tensor<4x4x4x4xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_18: f64, %out: f64):
      %88 = arith.mulf %in, %in_18 : f64
      linalg.yield %88 : f64
    } -> tensor<4x4x4x4xf64>
    %36 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%35 : tensor<4x4x4x4xf64>) outs(%5 : tensor<1x4x1x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %88 = arith.addf %in, %out : f64
      linalg.yield %88 : f64
    } -> tensor<1x4x1x1xf64>
    %37 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%36 : tensor<1x4x1x1xf64>) outs(%4 : tensor<1x4x1x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %88 = arith.divf %in, %cst_6 : f64
      linalg.yield %88 : f64
    } -> tensor<1x4x1x1xf64>
    %38 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%37 : tensor<1x4x1x1xf64>) outs(%12 : tensor<1x4x1x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f32):
      %88 = arith.truncf %in : f64 to f32
      linalg.yield %88 : f32
    } -> tensor<1x4x1x1xf32>
    %39 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%29 : tensor<4x4x4x4xf32>) outs(%14 : tensor<1x4x1x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = arith.addf %in, %out : f32
      linalg.yield %88 : f32
    } -> tensor<1x4x1x1xf32>
    %40 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%39 : tensor<1x4x1x1xf32>) outs(%12 : tensor<1x4x1x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = arith.divf %in, %cst_7 : f32
      linalg.yield %88 : f32
    } -> tensor<1x4x1x1xf32>
    %41 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%38 : tensor<1x4x1x1xf32>) outs(%12 : tensor<1x4x1x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = arith.truncf %cst_3 : f64 to f32
      %89 = arith.addf %in, %88 : f32
      linalg.yield %89 : f32
    } -> tensor<1x4x1x1xf32>
    %42 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%41 : tensor<1x4x1x1xf32>) outs(%12 : tensor<1x4x1x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = math.rsqrt %in : f32
      linalg.yield %88 : f32
    } -> tensor<1x4x1x1xf32>
    %43 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%29, %40 : tensor<4x4x4x4xf32>, tensor<1x4x1x1xf32>) outs(%24 : tensor<4x4x4x4xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %88 = arith.subf %in, %in_18 : f32
      linalg.yield %88 : f32
    } -> tensor<4x4x4x4xf32>
    %44 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%43, %42 : tensor<4x4x4x4xf32>, tensor<1x4x1x1xf32>) outs(%24 : tensor<4x4x4x4xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %88 = arith.mulf %in, %in_18 : f32
      linalg.yield %88 : f32
    } -> tensor<4x4x4x4xf32>
    %expanded_12 = tensor.expand_shape %arg5 [[0, 1, 2]] output_shape [4, 1, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<4xf32> into tensor<4x1x1xf32>
    %45 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%44, %expanded_12 : tensor<4x4x4x4xf32>, tensor<4x1x1xf32>) outs(%24 : tensor<4x4x4x4xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %88 = arith.mulf %in, %in_18 : f32
      linalg.yield %88 : f32
    } -> tensor<4x4x4x4xf32>
    %expanded_13 = tensor.expand_shape %arg6 [[0, 1, 2]] output_shape [4, 1, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<4xf32> into tensor<4x1x1xf32>
    %46 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%45, %expanded_13 : tensor<4x4x4x4xf32>, tensor<4x1x1xf32>) outs(%24 : tensor<4x4x4x4xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %88 = arith.addf %in, %in_18 : f32
      linalg.yield %88 : f32
    } -> tensor<4x4x4x4xf32>
    %47 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27, %46 : tensor<4x4x4x4xf32>, tensor<4x4x4x4xf32>) outs(%24 : tensor<4x4x4x4xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %88 = arith.addf %in, %in_18 : f32
      linalg.yield %88 : f32
    } -> tensor<4x4x4x4xf32>
    %48 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%47 : tensor<4x4x4x4xf32>) outs(%24 : tensor<4x4x4x4xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = arith.cmpf ugt, %in, %cst : f32
      %89 = arith.select %88, %in, %cst : f32
      linalg.yield %89 : f32
    } -> tensor<4x4x4x4xf32>
    %padded_14 = tensor.pad %48 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg13: index, %arg14: index, %arg15: index, %arg16: index):
      tensor.yield %cst : f32
    } {epl.scope = #epl.replicate<devices = 1>} : tensor<4x4x4x4xf32> to tensor<4x4x6x6xf32>
    %49 = tensor.empty() : tensor<4x8x2x2xf32>
    %broadcasted_15 = linalg.broadcast ins(%arg8 : tensor<8xf32>) outs(%49 : tensor<4x8x2x2xf32>) dimensions = [0, 2, 3]  {epl.scope = #epl.replicate<devices = 1>}
    %50 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, epl.scope = #epl.replicate<devices = 1>, strides = dense<2> : vector<2xi64>} ins(%padded_14, %arg7 : tensor<4x4x6x6xf32>, tensor<8x4x3x3xf32>) outs(%broadcasted_15 : tensor<4x8x2x2xf32>) -> tensor<4x8x2x2xf32>
    %51 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%50 : tensor<4x8x2x2xf32>) outs(%49 : tensor<4x8x2x2xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = arith.cmpf ugt, %in, %cst : f32
      %89 = arith.select %88, %in, %cst : f32
      linalg.yield %89 : f32
    } -> tensor<4x8x2x2xf32>
    %52 = tensor.empty() : tensor<4x8xf32>
    %53 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f32) outs(%52 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %54 = linalg.generic {indexing_maps = [#map, #map3], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%51 : tensor<4x8x2x2xf32>) outs(%53 : tensor<4x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = arith.addf %in, %out : f32
      linalg.yield %88 : f32
    } -> tensor<4x8xf32>
    %55 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%54 : tensor<4x8xf32>) outs(%52 : tensor<4x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = arith.divf %in, %cst_8 : f32
      linalg.yield %88 : f32
    } -> tensor<4x8xf32>
    %56 = tensor.empty() : tensor<8x5xf32>
    %transposed = linalg.transpose ins(%arg9 : tensor<5x8xf32>) outs(%56 : tensor<8x5xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1>}
    %57 = tensor.empty() : tensor<4x5xf32>
    %58 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f32) outs(%57 : tensor<4x5xf32>) -> tensor<4x5xf32>
    %59 = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%55, %transposed : tensor<4x8xf32>, tensor<8x5xf32>) outs(%58 : tensor<4x5xf32>) -> tensor<4x5xf32>
    %60 = linalg.generic {indexing_maps = [#map5, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg10 : tensor<5xf32>) outs(%57 : tensor<4x5xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4x5xf32>
    %61 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%59, %60 : tensor<4x5xf32>, tensor<4x5xf32>) outs(%57 : tensor<4x5xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %88 = arith.addf %in, %in_18 : f32
      linalg.yield %88 : f32
    } -> tensor<4x5xf32>
    %62 = tensor.empty() : tensor<4xi64>
    %63 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%c0_i64 : i64) outs(%62 : tensor<4xi64>) -> tensor<4xi64>
    %64 = tensor.empty() : tensor<4xf32>
    %65 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_1 : f32) outs(%64 : tensor<4xf32>) -> tensor<4xf32>
    %66:2 = linalg.generic {indexing_maps = [#map4, #map6, #map6], iterator_types = ["parallel", "reduction"]} ins(%61 : tensor<4x5xf32>) outs(%65, %63 : tensor<4xf32>, tensor<4xi64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32, %out_18: i64):
      %88 = linalg.index 1 : index
      %89 = arith.index_cast %88 : index to i64
      %90 = arith.maximumf %in, %out : f32
      %91 = arith.cmpf ogt, %in, %out : f32
      %92 = arith.select %91, %89, %out_18 : i64
      linalg.yield %90, %92 : f32, i64
    } -> (tensor<4xf32>, tensor<4xi64>)
    %expanded_16 = tensor.expand_shape %66#0 [[0, 1]] output_shape [4, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<4xf32> into tensor<4x1xf32>
    %67 = linalg.generic {indexing_maps = [#map4, #map7, #map4], iterator_types = ["parallel", "parallel"]} ins(%61, %expanded_16 : tensor<4x5xf32>, tensor<4x1xf32>) outs(%57 : tensor<4x5xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %88 = arith.subf %in, %in_18 : f32
      linalg.yield %88 : f32
    } -> tensor<4x5xf32>
    %68 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%67 : tensor<4x5xf32>) outs(%57 : tensor<4x5xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = math.exp %in : f32
      linalg.yield %88 : f32
    } -> tensor<4x5xf32>
    %69 = tensor.empty() : tensor<4x1xf32>
    %70 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f32) outs(%69 : tensor<4x1xf32>) -> tensor<4x1xf32>
    %71 = linalg.generic {indexing_maps = [#map4, #map7], iterator_types = ["parallel", "reduction"]} ins(%68 : tensor<4x5xf32>) outs(%70 : tensor<4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = arith.addf %in, %out : f32
      linalg.yield %88 : f32
    } -> tensor<4x1xf32>
    %72 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%71 : tensor<4x1xf32>) outs(%69 : tensor<4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = math.log %in : f32
      linalg.yield %88 : f32
    } -> tensor<4x1xf32>
    %73 = linalg.generic {indexing_maps = [#map4, #map7, #map4], iterator_types = ["parallel", "parallel"]} ins(%67, %72 : tensor<4x5xf32>, tensor<4x1xf32>) outs(%57 : tensor<4x5xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %88 = arith.subf %in, %in_18 : f32
      linalg.yield %88 : f32
    } -> tensor<4x5xf32>
    %74 = tensor.empty() : tensor<4xi1>
    %75 = linalg.generic {indexing_maps = [#map8, #map8], iterator_types = ["parallel"]} ins(%arg12 : tensor<4xi64>) outs(%74 : tensor<4xi1>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i64, %out: i1):
      %88 = arith.cmpi ne, %in, %c-100_i64 : i64
      linalg.yield %88 : i1
    } -> tensor<4xi1>
    %76 = linalg.generic {indexing_maps = [#map8, #map8, #map9, #map8], iterator_types = ["parallel"]} ins(%75, %arg12, %cst_9 : tensor<4xi1>, tensor<4xi64>, tensor<i64>) outs(%62 : tensor<4xi64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i1, %in_18: i64, %in_19: i64, %out: i64):
      %88 = arith.select %in, %in_18, %in_19 : i64
      linalg.yield %88 : i64
    } -> tensor<4xi64>
    %expanded_17 = tensor.expand_shape %76 [[0, 1]] output_shape [4, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<4xi64> into tensor<4x1xi64>
    %77 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%expanded_17 : tensor<4x1xi64>) outs(%70 : tensor<4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i64, %out: f32):
      %88 = linalg.index 0 : index
      %89 = arith.index_cast %in : i64 to index
      %90 = arith.cmpi slt, %89, %c5 : index
      cf.assert %90, "index must be smaller than dim size"
      %91 = arith.cmpi sge, %in, %c0_i64 : i64
      cf.assert %91, "index must be larger or equal to 0"
      %extracted = tensor.extract %73[%88, %89] : tensor<4x5xf32>
      linalg.yield %extracted : f32
    } -> tensor<4x1xf32>
    %collapsed = tensor.collapse_shape %77 [[0, 1]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x1xf32> into tensor<4xf32>
    %78 = linalg.generic {indexing_maps = [#map8, #map8], iterator_types = ["parallel"]} ins(%collapsed : tensor<4xf32>) outs(%64 : tensor<4xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = arith.negf %in : f32
      linalg.yield %88 : f32
    } -> tensor<4xf32>
    %79 = linalg.generic {indexing_maps = [#map8, #map8, #map9, #map8], iterator_types = ["parallel"]} ins(%75, %78, %cst_2 : tensor<4xi1>, tensor<4xf32>, tensor<f32>) outs(%64 : tensor<4xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i1, %in_18: f32, %in_19: f32, %out: f32):
      %88 = arith.select %in, %in_18, %in_19 : f32
      linalg.yield %88 : f32
    } -> tensor<4xf32>
    %80 = tensor.empty() : tensor<i64>
    %81 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%c0_i64 : i64) outs(%80 : tensor<i64>) -> tensor<i64>
    %82 = linalg.generic {indexing_maps = [#map8, #map9], iterator_types = ["reduction"]} ins(%75 : tensor<4xi1>) outs(%81 : tensor<i64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i1, %out: i64):
      %88 = arith.extui %in : i1 to i64
      %89 = arith.addi %88, %out : i64
      linalg.yield %89 : i64
    } -> tensor<i64>
    %83 = tensor.empty() : tensor<f32>
    %84 = linalg.generic {indexing_maps = [#map10, #map10], iterator_types = []} ins(%82 : tensor<i64>) outs(%83 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i64, %out: f32):
      %88 = arith.sitofp %in : i64 to f32
      linalg.yield %88 : f32
    } -> tensor<f32>
    %85 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f32) outs(%83 : tensor<f32>) -> tensor<f32>
    %86 = linalg.generic {indexing_maps = [#map8, #map9], iterator_types = ["reduction"]} ins(%79 : tensor<4xf32>) outs(%85 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %88 = arith.addf %in, %out : f32
      linalg.yield %88 : f32
    } -> tensor<f32>
    %87 = linalg.generic {indexing_maps = [#map10, #map10, #map10], iterator_types = []} ins(%86, %84 : tensor<f32>, tensor<f32>) outs(%83 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %88 = arith.divf %in, %in_18 : f32
      linalg.yield %88 : f32
    } -> tensor<f32>
    return %87 : tensor<f32>
  }
}
