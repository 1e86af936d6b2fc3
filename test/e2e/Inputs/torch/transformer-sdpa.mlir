#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1) -> (d1)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
#map5 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map7 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#map8 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map9 = affine_map<(d0, d1, d2) -> ()>
#map10 = affine_map<() -> ()>
module attributes {epl.config = {optimizer.lr = 1.000000e-01 : f64, optimizer.type = "sgd"}} {
  func.func @model(%arg0: tensor<16xf32> {epl.arg = "param", epl.name = "block.ln1.weight"}, %arg1: tensor<16xf32> {epl.arg = "param", epl.name = "block.ln1.bias"}, %arg2: tensor<48x16xf32> {epl.arg = "param", epl.name = "block.attn.qkv.weight"}, %arg3: tensor<48xf32> {epl.arg = "param", epl.name = "block.attn.qkv.bias"}, %arg4: tensor<16x16xf32> {epl.arg = "param", epl.name = "block.attn.proj.weight"}, %arg5: tensor<16xf32> {epl.arg = "param", epl.name = "block.attn.proj.bias"}, %arg6: tensor<16xf32> {epl.arg = "param", epl.name = "block.ln2.weight"}, %arg7: tensor<16xf32> {epl.arg = "param", epl.name = "block.ln2.bias"}, %arg8: tensor<32x16xf32> {epl.arg = "param", epl.name = "block.mlp.0.weight"}, %arg9: tensor<32xf32> {epl.arg = "param", epl.name = "block.mlp.0.bias"}, %arg10: tensor<16x32xf32> {epl.arg = "param", epl.name = "block.mlp.2.weight"}, %arg11: tensor<16xf32> {epl.arg = "param", epl.name = "block.mlp.2.bias"}, %arg12: tensor<16xf32> {epl.arg = "param", epl.name = "ln.weight"}, %arg13: tensor<16xf32> {epl.arg = "param", epl.name = "ln.bias"}, %arg14: tensor<8x16xf32> {epl.arg = "param", epl.name = "head.weight"}, %arg15: tensor<8xf32> {epl.arg = "param", epl.name = "head.bias"}, %arg16: tensor<4x8x16xf32> {epl.arg = "input", epl.name = "x"}, %arg17: tensor<4x8x8xf32> {epl.arg = "label", epl.name = "y"}) -> tensor<f32> {
    %c0_i64 = arith.constant 0 : i64
    %c2_i64 = arith.constant 2 : i64
    %cst = arith.constant 0.000000e+00 : f64
    %cst_0 = arith.constant 0.000000e+00 : f32
    %cst_1 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_2 = arith.constant 1.000000e+00 : f32
    %cst_3 = arith.constant 5.000000e-01 : f32
    %cst_4 = arith.constant dense<0.000000e+00> : tensor<4x2x8x8xf32>
    %cst_5 = arith.constant 0xFFF0000000000000 : f64
    %cst_6 = arith.constant 0.59460355750136051 : f64
    %cst_7 = arith.constant 1.000000e-05 : f64
    %cst_8 = arith.constant 1.600000e+01 : f64
    %cst_9 = arith.constant 1.600000e+01 : f32
    %cst_10 = arith.constant 1.41421354 : f32
    %cst_11 = arith.constant 2.560000e+02 : f32
    %0 = tensor.empty() : tensor<4x8x16xf64>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg16 : tensor<4x8x16xf32>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f64):
      %119 = arith.extf %in : f32 to f64
      linalg.yield %119 : f64
    } -> tensor<4x8x16xf64>
    %2 = tensor.empty() : tensor<4x8x1xf64>
    %3 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f64) outs(%2 : tensor<4x8x1xf64>) -> tensor<4x8x1xf64>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%1 : tensor<4x8x16xf64>) outs(%3 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %119 = arith.addf %in, %out : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x1xf64>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4 : tensor<4x8x1xf64>) outs(%2 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %119 = arith.divf %in, %cst_8 : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x1xf64>
    %6 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %5 : tensor<4x8x16xf64>, tensor<4x8x1xf64>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_39: f64, %out: f64):
      %119 = arith.subf %in, %in_39 : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x16xf64>
    %7 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %6 : tensor<4x8x16xf64>, tensor<4x8x16xf64>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_39: f64, %out: f64):
      %119 = arith.mulf %in, %in_39 : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x16xf64>
    %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%7 : tensor<4x8x16xf64>) outs(%3 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %119 = arith.addf %in, %out : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x1xf64>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<4x8x1xf64>) outs(%2 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %119 = arith.divf %in, %cst_8 : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x1xf64>
    %10 = tensor.empty() : tensor<4x8x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%9 : tensor<4x8x1xf64>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f32):
      %119 = arith.truncf %in : f64 to f32
      linalg.yield %119 : f32
    } -> tensor<4x8x1xf32>
    %12 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%10 : tensor<4x8x1xf32>) -> tensor<4x8x1xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg16 : tensor<4x8x16xf32>) outs(%12 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.addf %in, %out : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x1xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%13 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.divf %in, %cst_9 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x1xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%11 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.truncf %cst_7 : f64 to f32
      %120 = arith.addf %in, %119 : f32
      linalg.yield %120 : f32
    } -> tensor<4x8x1xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%15 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = math.rsqrt %in : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x1xf32>
    %17 = tensor.empty() : tensor<4x8x16xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg16, %14 : tensor<4x8x16xf32>, tensor<4x8x1xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.subf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%18, %16 : tensor<4x8x16xf32>, tensor<4x8x1xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.mulf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19, %arg0 : tensor<4x8x16xf32>, tensor<16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.mulf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20, %arg1 : tensor<4x8x16xf32>, tensor<16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.addf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %collapsed = tensor.collapse_shape %21 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x16xf32> into tensor<32x16xf32>
    %22 = tensor.empty() : tensor<16x48xf32>
    %transposed = linalg.transpose ins(%arg2 : tensor<48x16xf32>) outs(%22 : tensor<16x48xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1>}
    %23 = tensor.empty() : tensor<32x48xf32>
    %24 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%23 : tensor<32x48xf32>) -> tensor<32x48xf32>
    %25 = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%collapsed, %transposed : tensor<32x16xf32>, tensor<16x48xf32>) outs(%24 : tensor<32x48xf32>) -> tensor<32x48xf32>
    %26 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg3 : tensor<48xf32>) outs(%23 : tensor<32x48xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x48xf32>
    %27 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%25, %26 : tensor<32x48xf32>, tensor<32x48xf32>) outs(%23 : tensor<32x48xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.addf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<32x48xf32>
    %expanded = tensor.expand_shape %27 [[0, 1], [2]] output_shape [4, 8, 48] {epl.scope = #epl.replicate<devices = 1>} : tensor<32x48xf32> into tensor<4x8x48xf32>
    %extracted_slice = tensor.extract_slice %expanded[0, 0, 0] [4, 8, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x48xf32> to tensor<4x8x16xf32>
    %extracted_slice_12 = tensor.extract_slice %expanded[0, 0, 16] [4, 8, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x48xf32> to tensor<4x8x16xf32>
    %extracted_slice_13 = tensor.extract_slice %expanded[0, 0, 32] [4, 8, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x48xf32> to tensor<4x8x16xf32>
    %expanded_14 = tensor.expand_shape %extracted_slice [[0], [1], [2, 3]] output_shape [4, 8, 2, 8] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x16xf32> into tensor<4x8x2x8xf32>
    %28 = tensor.empty() : tensor<4x2x8x8xf32>
    %transposed_15 = linalg.transpose ins(%expanded_14 : tensor<4x8x2x8xf32>) outs(%28 : tensor<4x2x8x8xf32>) permutation = [0, 2, 1, 3]  {epl.scope = #epl.replicate<devices = 1>}
    %expanded_16 = tensor.expand_shape %extracted_slice_12 [[0], [1], [2, 3]] output_shape [4, 8, 2, 8] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x16xf32> into tensor<4x8x2x8xf32>
    %expanded_17 = tensor.expand_shape %extracted_slice_13 [[0], [1], [2, 3]] output_shape [4, 8, 2, 8] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x16xf32> into tensor<4x8x2x8xf32>
    %transposed_18 = linalg.transpose ins(%expanded_17 : tensor<4x8x2x8xf32>) outs(%28 : tensor<4x2x8x8xf32>) permutation = [0, 2, 1, 3]  {epl.scope = #epl.replicate<devices = 1>}
    %29 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_15 : tensor<4x2x8x8xf32>) outs(%28 : tensor<4x2x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.truncf %cst_6 : f64 to f32
      %120 = arith.mulf %in, %119 : f32
      linalg.yield %120 : f32
    } -> tensor<4x2x8x8xf32>
    %transposed_19 = linalg.transpose ins(%expanded_16 : tensor<4x8x2x8xf32>) outs(%28 : tensor<4x2x8x8xf32>) permutation = [0, 2, 3, 1]  {epl.scope = #epl.replicate<devices = 1>}
    %30 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_19 : tensor<4x2x8x8xf32>) outs(%28 : tensor<4x2x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.truncf %cst_6 : f64 to f32
      %120 = arith.mulf %in, %119 : f32
      linalg.yield %120 : f32
    } -> tensor<4x2x8x8xf32>
    %collapsed_20 = tensor.collapse_shape %29 [[0, 1], [2], [3]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x2x8x8xf32> into tensor<8x8x8xf32>
    %collapsed_21 = tensor.collapse_shape %30 [[0, 1], [2], [3]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x2x8x8xf32> into tensor<8x8x8xf32>
    %31 = tensor.empty() : tensor<8x8x8xf32>
    %32 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%31 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %33 = linalg.batch_matmul {epl.scope = #epl.replicate<devices = 1>} ins(%collapsed_20, %collapsed_21 : tensor<8x8x8xf32>, tensor<8x8x8xf32>) outs(%32 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %expanded_22 = tensor.expand_shape %33 [[0, 1], [2], [3]] output_shape [4, 2, 8, 8] {epl.scope = #epl.replicate<devices = 1>} : tensor<8x8x8xf32> into tensor<4x2x8x8xf32>
    %34 = tensor.empty() : tensor<4x2x8xi64>
    %35 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%c0_i64 : i64) outs(%34 : tensor<4x2x8xi64>) -> tensor<4x2x8xi64>
    %36 = tensor.empty() : tensor<4x2x8xf32>
    %37 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_1 : f32) outs(%36 : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
    %38:2 = linalg.generic {indexing_maps = [#map5, #map6, #map6], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%expanded_22 : tensor<4x2x8x8xf32>) outs(%37, %35 : tensor<4x2x8xf32>, tensor<4x2x8xi64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32, %out_39: i64):
      %119 = linalg.index 3 : index
      %120 = arith.index_cast %119 : index to i64
      %121 = arith.maximumf %in, %out : f32
      %122 = arith.cmpf ogt, %in, %out : f32
      %123 = arith.select %122, %120, %out_39 : i64
      linalg.yield %121, %123 : f32, i64
    } -> (tensor<4x2x8xf32>, tensor<4x2x8xi64>)
    %expanded_23 = tensor.expand_shape %38#0 [[0], [1], [2, 3]] output_shape [4, 2, 8, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x2x8xf32> into tensor<4x2x8x1xf32>
    %39 = linalg.generic {indexing_maps = [#map5, #map7, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_22, %expanded_23 : tensor<4x2x8x8xf32>, tensor<4x2x8x1xf32>) outs(%28 : tensor<4x2x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.subf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x2x8x8xf32>
    %40 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%39 : tensor<4x2x8x8xf32>) outs(%28 : tensor<4x2x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = math.exp %in : f32
      linalg.yield %119 : f32
    } -> tensor<4x2x8x8xf32>
    %41 = tensor.empty() : tensor<4x2x8x1xf32>
    %42 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%41 : tensor<4x2x8x1xf32>) -> tensor<4x2x8x1xf32>
    %43 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%40 : tensor<4x2x8x8xf32>) outs(%42 : tensor<4x2x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.addf %in, %out : f32
      linalg.yield %119 : f32
    } -> tensor<4x2x8x1xf32>
    %44 = linalg.generic {indexing_maps = [#map5, #map7, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%40, %43 : tensor<4x2x8x8xf32>, tensor<4x2x8x1xf32>) outs(%28 : tensor<4x2x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.divf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x2x8x8xf32>
    %45 = tensor.empty() : tensor<4x2x8x8xi1>
    %46 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_22 : tensor<4x2x8x8xf32>) outs(%45 : tensor<4x2x8x8xi1>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: i1):
      %119 = arith.extf %in : f32 to f64
      %120 = arith.cmpf oeq, %119, %cst_5 : f64
      linalg.yield %120 : i1
    } -> tensor<4x2x8x8xi1>
    %47 = tensor.empty() : tensor<4x2x8x1xi1>
    %48 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%true : i1) outs(%47 : tensor<4x2x8x1xi1>) -> tensor<4x2x8x1xi1>
    %49 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%46 : tensor<4x2x8x8xi1>) outs(%48 : tensor<4x2x8x1xi1>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i1, %out: i1):
      %119 = arith.andi %in, %out : i1
      linalg.yield %119 : i1
    } -> tensor<4x2x8x1xi1>
    %50 = linalg.generic {indexing_maps = [#map7, #map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%49, %cst_4, %44 : tensor<4x2x8x1xi1>, tensor<4x2x8x8xf32>, tensor<4x2x8x8xf32>) outs(%28 : tensor<4x2x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: i1, %in_39: f32, %in_40: f32, %out: f32):
      %119 = arith.select %in, %in_39, %in_40 : f32
      linalg.yield %119 : f32
    } -> tensor<4x2x8x8xf32>
    %collapsed_24 = tensor.collapse_shape %50 [[0, 1], [2], [3]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x2x8x8xf32> into tensor<8x8x8xf32>
    %collapsed_25 = tensor.collapse_shape %transposed_18 [[0, 1], [2], [3]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x2x8x8xf32> into tensor<8x8x8xf32>
    %51 = linalg.batch_matmul {epl.scope = #epl.replicate<devices = 1>} ins(%collapsed_24, %collapsed_25 : tensor<8x8x8xf32>, tensor<8x8x8xf32>) outs(%32 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %expanded_26 = tensor.expand_shape %51 [[0, 1], [2], [3]] output_shape [4, 2, 8, 8] {epl.scope = #epl.replicate<devices = 1>} : tensor<8x8x8xf32> into tensor<4x2x8x8xf32>
    %52 = tensor.empty() : tensor<4x8x2x8xf32>
    %transposed_27 = linalg.transpose ins(%expanded_26 : tensor<4x2x8x8xf32>) outs(%52 : tensor<4x8x2x8xf32>) permutation = [0, 2, 1, 3]  {epl.scope = #epl.replicate<devices = 1>}
    %collapsed_28 = tensor.collapse_shape %transposed_27 [[0], [1], [2, 3]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x2x8xf32> into tensor<4x8x16xf32>
    %53 = tensor.empty() : tensor<16x16xf32>
    %transposed_29 = linalg.transpose ins(%arg4 : tensor<16x16xf32>) outs(%53 : tensor<16x16xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1>}
    %54 = tensor.empty() : tensor<4x16x16xf32>
    %55 = linalg.generic {indexing_maps = [#map8, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed_29 : tensor<16x16xf32>) outs(%54 : tensor<4x16x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4x16x16xf32>
    %56 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%17 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %57 = linalg.batch_matmul {epl.scope = #epl.replicate<devices = 1>} ins(%collapsed_28, %55 : tensor<4x8x16xf32>, tensor<4x16x16xf32>) outs(%56 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %58 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%57, %arg5 : tensor<4x8x16xf32>, tensor<16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.addf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %59 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg16, %58 : tensor<4x8x16xf32>, tensor<4x8x16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.addf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %60 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%59 : tensor<4x8x16xf32>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f64):
      %119 = arith.extf %in : f32 to f64
      linalg.yield %119 : f64
    } -> tensor<4x8x16xf64>
    %61 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%60 : tensor<4x8x16xf64>) outs(%3 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %119 = arith.addf %in, %out : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x1xf64>
    %62 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%61 : tensor<4x8x1xf64>) outs(%2 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %119 = arith.divf %in, %cst_8 : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x1xf64>
    %63 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%60, %62 : tensor<4x8x16xf64>, tensor<4x8x1xf64>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_39: f64, %out: f64):
      %119 = arith.subf %in, %in_39 : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x16xf64>
    %64 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%63, %63 : tensor<4x8x16xf64>, tensor<4x8x16xf64>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_39: f64, %out: f64):
      %119 = arith.mulf %in, %in_39 : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x16xf64>
    %65 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%64 : tensor<4x8x16xf64>) outs(%3 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %119 = arith.addf %in, %out : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x1xf64>
    %66 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%65 : tensor<4x8x1xf64>) outs(%2 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %119 = arith.divf %in, %cst_8 : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x1xf64>
    %67 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%66 : tensor<4x8x1xf64>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f32):
      %119 = arith.truncf %in : f64 to f32
      linalg.yield %119 : f32
    } -> tensor<4x8x1xf32>
    %68 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%59 : tensor<4x8x16xf32>) outs(%12 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.addf %in, %out : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x1xf32>
    %69 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%68 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.divf %in, %cst_9 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x1xf32>
    %70 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%67 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.truncf %cst_7 : f64 to f32
      %120 = arith.addf %in, %119 : f32
      linalg.yield %120 : f32
    } -> tensor<4x8x1xf32>
    %71 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%70 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = math.rsqrt %in : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x1xf32>
    %72 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%59, %69 : tensor<4x8x16xf32>, tensor<4x8x1xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.subf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %73 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%72, %71 : tensor<4x8x16xf32>, tensor<4x8x1xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.mulf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %74 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%73, %arg6 : tensor<4x8x16xf32>, tensor<16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.mulf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %75 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%74, %arg7 : tensor<4x8x16xf32>, tensor<16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.addf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %collapsed_30 = tensor.collapse_shape %75 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x16xf32> into tensor<32x16xf32>
    %76 = tensor.empty() : tensor<16x32xf32>
    %transposed_31 = linalg.transpose ins(%arg8 : tensor<32x16xf32>) outs(%76 : tensor<16x32xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1>}
    %77 = tensor.empty() : tensor<32x32xf32>
    %78 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%77 : tensor<32x32xf32>) -> tensor<32x32xf32>
    %79 = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%collapsed_30, %transposed_31 : tensor<32x16xf32>, tensor<16x32xf32>) outs(%78 : tensor<32x32xf32>) -> tensor<32x32xf32>
    %80 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg9 : tensor<32xf32>) outs(%77 : tensor<32x32xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x32xf32>
    %81 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%79, %80 : tensor<32x32xf32>, tensor<32x32xf32>) outs(%77 : tensor<32x32xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.addf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<32x32xf32>
    %expanded_32 = tensor.expand_shape %81 [[0, 1], [2]] output_shape [4, 8, 32] {epl.scope = #epl.replicate<devices = 1>} : tensor<32x32xf32> into tensor<4x8x32xf32>
    %82 = tensor.empty() : tensor<4x8x32xf32>
    %83 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_32 : tensor<4x8x32xf32>) outs(%82 : tensor<4x8x32xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.divf %in, %cst_10 : f32
      %120 = math.erf %119 : f32
      %121 = arith.addf %120, %cst_2 : f32
      %122 = arith.mulf %121, %cst_3 : f32
      %123 = arith.mulf %in, %122 : f32
      linalg.yield %123 : f32
    } -> tensor<4x8x32xf32>
    %collapsed_33 = tensor.collapse_shape %83 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x32xf32> into tensor<32x32xf32>
    %84 = tensor.empty() : tensor<32x16xf32>
    %transposed_34 = linalg.transpose ins(%arg10 : tensor<16x32xf32>) outs(%84 : tensor<32x16xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1>}
    %85 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%84 : tensor<32x16xf32>) -> tensor<32x16xf32>
    %86 = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%collapsed_33, %transposed_34 : tensor<32x32xf32>, tensor<32x16xf32>) outs(%85 : tensor<32x16xf32>) -> tensor<32x16xf32>
    %87 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg11 : tensor<16xf32>) outs(%84 : tensor<32x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x16xf32>
    %88 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%86, %87 : tensor<32x16xf32>, tensor<32x16xf32>) outs(%84 : tensor<32x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.addf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<32x16xf32>
    %expanded_35 = tensor.expand_shape %88 [[0, 1], [2]] output_shape [4, 8, 16] {epl.scope = #epl.replicate<devices = 1>} : tensor<32x16xf32> into tensor<4x8x16xf32>
    %89 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%59, %expanded_35 : tensor<4x8x16xf32>, tensor<4x8x16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.addf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %90 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%89 : tensor<4x8x16xf32>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f64):
      %119 = arith.extf %in : f32 to f64
      linalg.yield %119 : f64
    } -> tensor<4x8x16xf64>
    %91 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%90 : tensor<4x8x16xf64>) outs(%3 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %119 = arith.addf %in, %out : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x1xf64>
    %92 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%91 : tensor<4x8x1xf64>) outs(%2 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %119 = arith.divf %in, %cst_8 : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x1xf64>
    %93 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%90, %92 : tensor<4x8x16xf64>, tensor<4x8x1xf64>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_39: f64, %out: f64):
      %119 = arith.subf %in, %in_39 : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x16xf64>
    %94 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%93, %93 : tensor<4x8x16xf64>, tensor<4x8x16xf64>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_39: f64, %out: f64):
      %119 = arith.mulf %in, %in_39 : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x16xf64>
    %95 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%94 : tensor<4x8x16xf64>) outs(%3 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %119 = arith.addf %in, %out : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x1xf64>
    %96 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%95 : tensor<4x8x1xf64>) outs(%2 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %119 = arith.divf %in, %cst_8 : f64
      linalg.yield %119 : f64
    } -> tensor<4x8x1xf64>
    %97 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%96 : tensor<4x8x1xf64>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f32):
      %119 = arith.truncf %in : f64 to f32
      linalg.yield %119 : f32
    } -> tensor<4x8x1xf32>
    %98 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%89 : tensor<4x8x16xf32>) outs(%12 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.addf %in, %out : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x1xf32>
    %99 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%98 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.divf %in, %cst_9 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x1xf32>
    %100 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%97 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.truncf %cst_7 : f64 to f32
      %120 = arith.addf %in, %119 : f32
      linalg.yield %120 : f32
    } -> tensor<4x8x1xf32>
    %101 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%100 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = math.rsqrt %in : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x1xf32>
    %102 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%89, %99 : tensor<4x8x16xf32>, tensor<4x8x1xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.subf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %103 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%102, %101 : tensor<4x8x16xf32>, tensor<4x8x1xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.mulf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %104 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%103, %arg12 : tensor<4x8x16xf32>, tensor<16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.mulf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %105 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%104, %arg13 : tensor<4x8x16xf32>, tensor<16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.addf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x16xf32>
    %collapsed_36 = tensor.collapse_shape %105 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x16xf32> into tensor<32x16xf32>
    %106 = tensor.empty() : tensor<16x8xf32>
    %transposed_37 = linalg.transpose ins(%arg14 : tensor<8x16xf32>) outs(%106 : tensor<16x8xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1>}
    %107 = tensor.empty() : tensor<32x8xf32>
    %108 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%107 : tensor<32x8xf32>) -> tensor<32x8xf32>
    %109 = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%collapsed_36, %transposed_37 : tensor<32x16xf32>, tensor<16x8xf32>) outs(%108 : tensor<32x8xf32>) -> tensor<32x8xf32>
    %110 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg15 : tensor<8xf32>) outs(%107 : tensor<32x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x8xf32>
    %111 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%109, %110 : tensor<32x8xf32>, tensor<32x8xf32>) outs(%107 : tensor<32x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.addf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<32x8xf32>
    %expanded_38 = tensor.expand_shape %111 [[0, 1], [2]] output_shape [4, 8, 8] {epl.scope = #epl.replicate<devices = 1>} : tensor<32x8xf32> into tensor<4x8x8xf32>
    %112 = tensor.empty() : tensor<4x8x8xf32>
    %113 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_38, %arg17 : tensor<4x8x8xf32>, tensor<4x8x8xf32>) outs(%112 : tensor<4x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_39: f32, %out: f32):
      %119 = arith.subf %in, %in_39 : f32
      linalg.yield %119 : f32
    } -> tensor<4x8x8xf32>
    %114 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%113 : tensor<4x8x8xf32>) outs(%112 : tensor<4x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = math.fpowi %in, %c2_i64 : f32, i64
      linalg.yield %119 : f32
    } -> tensor<4x8x8xf32>
    %115 = tensor.empty() : tensor<f32>
    %116 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%115 : tensor<f32>) -> tensor<f32>
    %117 = linalg.generic {indexing_maps = [#map, #map9], iterator_types = ["reduction", "reduction", "reduction"]} ins(%114 : tensor<4x8x8xf32>) outs(%116 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.addf %in, %out : f32
      linalg.yield %119 : f32
    } -> tensor<f32>
    %118 = linalg.generic {indexing_maps = [#map10, #map10], iterator_types = []} ins(%117 : tensor<f32>) outs(%115 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %119 = arith.divf %in, %cst_11 : f32
      linalg.yield %119 : f32
    } -> tensor<f32>
    return %118 : tensor<f32>
  }
}
