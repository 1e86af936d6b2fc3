#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1) -> (d1)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
#map5 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map7 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#map8 = affine_map<(d0, d1, d2) -> ()>
#map9 = affine_map<() -> ()>
module attributes {epl.config = {optimizer.lr = 1.000000e-01 : f64, optimizer.type = "sgd"}} {
  func.func @model(%arg0: tensor<16xf32> {epl.arg = "param", epl.name = "block.ln1.weight"}, %arg1: tensor<16xf32> {epl.arg = "param", epl.name = "block.ln1.bias"}, %arg2: tensor<48x16xf32> {epl.arg = "param", epl.name = "block.attn.qkv.weight"}, %arg3: tensor<48xf32> {epl.arg = "param", epl.name = "block.attn.qkv.bias"}, %arg4: tensor<16x16xf32> {epl.arg = "param", epl.name = "block.attn.proj.weight"}, %arg5: tensor<16xf32> {epl.arg = "param", epl.name = "block.attn.proj.bias"}, %arg6: tensor<16xf32> {epl.arg = "param", epl.name = "block.ln2.weight"}, %arg7: tensor<16xf32> {epl.arg = "param", epl.name = "block.ln2.bias"}, %arg8: tensor<32x16xf32> {epl.arg = "param", epl.name = "block.mlp.0.weight"}, %arg9: tensor<32xf32> {epl.arg = "param", epl.name = "block.mlp.0.bias"}, %arg10: tensor<16x32xf32> {epl.arg = "param", epl.name = "block.mlp.2.weight"}, %arg11: tensor<16xf32> {epl.arg = "param", epl.name = "block.mlp.2.bias"}, %arg12: tensor<16xf32> {epl.arg = "param", epl.name = "ln.weight"}, %arg13: tensor<16xf32> {epl.arg = "param", epl.name = "ln.bias"}, %arg14: tensor<8x16xf32> {epl.arg = "param", epl.name = "head.weight"}, %arg15: tensor<8xf32> {epl.arg = "param", epl.name = "head.bias"}, %arg16: tensor<4x8x16xf32> {epl.arg = "input", epl.name = "x"}, %arg17: tensor<4x8x8xf32> {epl.arg = "label", epl.name = "y"}) -> tensor<f32> {
    %c0_i64 = arith.constant 0 : i64
    %c2_i64 = arith.constant 2 : i64
    %cst = arith.constant 0.000000e+00 : f64
    %cst_0 = arith.constant 0.000000e+00 : f32
    %cst_1 = arith.constant 0xFF800000 : f32
    %cst_2 = arith.constant 1.000000e+00 : f32
    %cst_3 = arith.constant 5.000000e-01 : f32
    %cst_4 = arith.constant 2.8284271247461903 : f64
    %cst_5 = arith.constant 1.000000e-05 : f64
    %cst_6 = arith.constant 1.600000e+01 : f64
    %cst_7 = arith.constant 1.600000e+01 : f32
    %cst_8 = arith.constant 1.41421354 : f32
    %cst_9 = arith.constant 2.560000e+02 : f32
    %0 = tensor.empty() : tensor<4x8x16xf64>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg16 : tensor<4x8x16xf32>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f64):
      %110 = arith.extf %in : f32 to f64
      linalg.yield %110 : f64
    } -> tensor<4x8x16xf64>
    %2 = tensor.empty() : tensor<4x8x1xf64>
    %3 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst : f64) outs(%2 : tensor<4x8x1xf64>) -> tensor<4x8x1xf64>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%1 : tensor<4x8x16xf64>) outs(%3 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %110 = arith.addf %in, %out : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x1xf64>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4 : tensor<4x8x1xf64>) outs(%2 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %110 = arith.divf %in, %cst_6 : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x1xf64>
    %6 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %5 : tensor<4x8x16xf64>, tensor<4x8x1xf64>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_38: f64, %out: f64):
      %110 = arith.subf %in, %in_38 : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x16xf64>
    %7 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %6 : tensor<4x8x16xf64>, tensor<4x8x16xf64>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_38: f64, %out: f64):
      %110 = arith.mulf %in, %in_38 : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x16xf64>
    %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%7 : tensor<4x8x16xf64>) outs(%3 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %110 = arith.addf %in, %out : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x1xf64>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<4x8x1xf64>) outs(%2 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %110 = arith.divf %in, %cst_6 : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x1xf64>
    %10 = tensor.empty() : tensor<4x8x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%9 : tensor<4x8x1xf64>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f32):
      %110 = arith.truncf %in : f64 to f32
      linalg.yield %110 : f32
    } -> tensor<4x8x1xf32>
    %12 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%10 : tensor<4x8x1xf32>) -> tensor<4x8x1xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg16 : tensor<4x8x16xf32>) outs(%12 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = arith.addf %in, %out : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x1xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%13 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = arith.divf %in, %cst_7 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x1xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%11 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = arith.truncf %cst_5 : f64 to f32
      %111 = arith.addf %in, %110 : f32
      linalg.yield %111 : f32
    } -> tensor<4x8x1xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%15 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = math.rsqrt %in : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x1xf32>
    %17 = tensor.empty() : tensor<4x8x16xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg16, %14 : tensor<4x8x16xf32>, tensor<4x8x1xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.subf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x16xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%18, %16 : tensor<4x8x16xf32>, tensor<4x8x1xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.mulf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x16xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19, %arg0 : tensor<4x8x16xf32>, tensor<16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.mulf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x16xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20, %arg1 : tensor<4x8x16xf32>, tensor<16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.addf %in, %in_38 : f32
      linalg.yield %110 : f32
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
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.addf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<32x48xf32>
    %expanded = tensor.expand_shape %27 [[0, 1], [2]] output_shape [4, 8, 48] {epl.scope = #epl.replicate<devices = 1>} : tensor<32x48xf32> into tensor<4x8x48xf32>
    %extracted_slice = tensor.extract_slice %expanded[0, 0, 0] [4, 8, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x48xf32> to tensor<4x8x16xf32>
    %extracted_slice_10 = tensor.extract_slice %expanded[0, 0, 16] [4, 8, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x48xf32> to tensor<4x8x16xf32>
    %extracted_slice_11 = tensor.extract_slice %expanded[0, 0, 32] [4, 8, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x48xf32> to tensor<4x8x16xf32>
    %expanded_12 = tensor.expand_shape %extracted_slice [[0], [1], [2, 3]] output_shape [4, 8, 2, 8] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x16xf32> into tensor<4x8x2x8xf32>
    %28 = tensor.empty() : tensor<4x2x8x8xf32>
    %transposed_13 = linalg.transpose ins(%expanded_12 : tensor<4x8x2x8xf32>) outs(%28 : tensor<4x2x8x8xf32>) permutation = [0, 2, 1, 3]  {epl.scope = #epl.replicate<devices = 1>}
    %expanded_14 = tensor.expand_shape %extracted_slice_10 [[0], [1], [2, 3]] output_shape [4, 8, 2, 8] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x16xf32> into tensor<4x8x2x8xf32>
    %expanded_15 = tensor.expand_shape %extracted_slice_11 [[0], [1], [2, 3]] output_shape [4, 8, 2, 8] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x16xf32> into tensor<4x8x2x8xf32>
    %transposed_16 = linalg.transpose ins(%expanded_15 : tensor<4x8x2x8xf32>) outs(%28 : tensor<4x2x8x8xf32>) permutation = [0, 2, 1, 3]  {epl.scope = #epl.replicate<devices = 1>}
    %transposed_17 = linalg.transpose ins(%expanded_14 : tensor<4x8x2x8xf32>) outs(%28 : tensor<4x2x8x8xf32>) permutation = [0, 2, 3, 1]  {epl.scope = #epl.replicate<devices = 1>}
    %collapsed_18 = tensor.collapse_shape %transposed_13 [[0, 1], [2], [3]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x2x8x8xf32> into tensor<8x8x8xf32>
    %collapsed_19 = tensor.collapse_shape %transposed_17 [[0, 1], [2], [3]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x2x8x8xf32> into tensor<8x8x8xf32>
    %29 = tensor.empty() : tensor<8x8x8xf32>
    %30 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%29 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %31 = linalg.batch_matmul {epl.scope = #epl.replicate<devices = 1>} ins(%collapsed_18, %collapsed_19 : tensor<8x8x8xf32>, tensor<8x8x8xf32>) outs(%30 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %expanded_20 = tensor.expand_shape %31 [[0, 1], [2], [3]] output_shape [4, 2, 8, 8] {epl.scope = #epl.replicate<devices = 1>} : tensor<8x8x8xf32> into tensor<4x2x8x8xf32>
    %32 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_20 : tensor<4x2x8x8xf32>) outs(%28 : tensor<4x2x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = arith.truncf %cst_4 : f64 to f32
      %111 = arith.divf %in, %110 : f32
      linalg.yield %111 : f32
    } -> tensor<4x2x8x8xf32>
    %33 = tensor.empty() : tensor<4x2x8xi64>
    %34 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%c0_i64 : i64) outs(%33 : tensor<4x2x8xi64>) -> tensor<4x2x8xi64>
    %35 = tensor.empty() : tensor<4x2x8xf32>
    %36 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_1 : f32) outs(%35 : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
    %37:2 = linalg.generic {indexing_maps = [#map5, #map6, #map6], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%32 : tensor<4x2x8x8xf32>) outs(%36, %34 : tensor<4x2x8xf32>, tensor<4x2x8xi64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32, %out_38: i64):
      %110 = linalg.index 3 : index
      %111 = arith.index_cast %110 : index to i64
      %112 = arith.maximumf %in, %out : f32
      %113 = arith.cmpf ogt, %in, %out : f32
      %114 = arith.select %113, %111, %out_38 : i64
      linalg.yield %112, %114 : f32, i64
    } -> (tensor<4x2x8xf32>, tensor<4x2x8xi64>)
    %expanded_21 = tensor.expand_shape %37#0 [[0], [1], [2, 3]] output_shape [4, 2, 8, 1] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x2x8xf32> into tensor<4x2x8x1xf32>
    %38 = linalg.generic {indexing_maps = [#map5, #map7, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%32, %expanded_21 : tensor<4x2x8x8xf32>, tensor<4x2x8x1xf32>) outs(%28 : tensor<4x2x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.subf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x2x8x8xf32>
    %39 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%38 : tensor<4x2x8x8xf32>) outs(%28 : tensor<4x2x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = math.exp %in : f32
      linalg.yield %110 : f32
    } -> tensor<4x2x8x8xf32>
    %40 = tensor.empty() : tensor<4x2x8x1xf32>
    %41 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%40 : tensor<4x2x8x1xf32>) -> tensor<4x2x8x1xf32>
    %42 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%39 : tensor<4x2x8x8xf32>) outs(%41 : tensor<4x2x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = arith.addf %in, %out : f32
      linalg.yield %110 : f32
    } -> tensor<4x2x8x1xf32>
    %43 = linalg.generic {indexing_maps = [#map5, #map7, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%39, %42 : tensor<4x2x8x8xf32>, tensor<4x2x8x1xf32>) outs(%28 : tensor<4x2x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.divf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x2x8x8xf32>
    %collapsed_22 = tensor.collapse_shape %43 [[0, 1], [2], [3]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x2x8x8xf32> into tensor<8x8x8xf32>
    %collapsed_23 = tensor.collapse_shape %transposed_16 [[0, 1], [2], [3]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x2x8x8xf32> into tensor<8x8x8xf32>
    %44 = linalg.batch_matmul {epl.scope = #epl.replicate<devices = 1>} ins(%collapsed_22, %collapsed_23 : tensor<8x8x8xf32>, tensor<8x8x8xf32>) outs(%30 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %expanded_24 = tensor.expand_shape %44 [[0, 1], [2], [3]] output_shape [4, 2, 8, 8] {epl.scope = #epl.replicate<devices = 1>} : tensor<8x8x8xf32> into tensor<4x2x8x8xf32>
    %45 = tensor.empty() : tensor<4x8x2x8xf32>
    %transposed_25 = linalg.transpose ins(%expanded_24 : tensor<4x2x8x8xf32>) outs(%45 : tensor<4x8x2x8xf32>) permutation = [0, 2, 1, 3]  {epl.scope = #epl.replicate<devices = 1>}
    %collapsed_26 = tensor.collapse_shape %transposed_25 [[0, 1], [2, 3]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x2x8xf32> into tensor<32x16xf32>
    %46 = tensor.empty() : tensor<16x16xf32>
    %transposed_27 = linalg.transpose ins(%arg4 : tensor<16x16xf32>) outs(%46 : tensor<16x16xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1>}
    %47 = tensor.empty() : tensor<32x16xf32>
    %48 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%47 : tensor<32x16xf32>) -> tensor<32x16xf32>
    %49 = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%collapsed_26, %transposed_27 : tensor<32x16xf32>, tensor<16x16xf32>) outs(%48 : tensor<32x16xf32>) -> tensor<32x16xf32>
    %50 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg5 : tensor<16xf32>) outs(%47 : tensor<32x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x16xf32>
    %51 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%49, %50 : tensor<32x16xf32>, tensor<32x16xf32>) outs(%47 : tensor<32x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.addf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<32x16xf32>
    %expanded_28 = tensor.expand_shape %51 [[0, 1], [2]] output_shape [4, 8, 16] {epl.scope = #epl.replicate<devices = 1>} : tensor<32x16xf32> into tensor<4x8x16xf32>
    %52 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg16, %expanded_28 : tensor<4x8x16xf32>, tensor<4x8x16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.addf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x16xf32>
    %53 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%52 : tensor<4x8x16xf32>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f64):
      %110 = arith.extf %in : f32 to f64
      linalg.yield %110 : f64
    } -> tensor<4x8x16xf64>
    %54 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%53 : tensor<4x8x16xf64>) outs(%3 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %110 = arith.addf %in, %out : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x1xf64>
    %55 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%54 : tensor<4x8x1xf64>) outs(%2 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %110 = arith.divf %in, %cst_6 : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x1xf64>
    %56 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%53, %55 : tensor<4x8x16xf64>, tensor<4x8x1xf64>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_38: f64, %out: f64):
      %110 = arith.subf %in, %in_38 : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x16xf64>
    %57 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%56, %56 : tensor<4x8x16xf64>, tensor<4x8x16xf64>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_38: f64, %out: f64):
      %110 = arith.mulf %in, %in_38 : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x16xf64>
    %58 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%57 : tensor<4x8x16xf64>) outs(%3 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %110 = arith.addf %in, %out : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x1xf64>
    %59 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%58 : tensor<4x8x1xf64>) outs(%2 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %110 = arith.divf %in, %cst_6 : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x1xf64>
    %60 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%59 : tensor<4x8x1xf64>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f32):
      %110 = arith.truncf %in : f64 to f32
      linalg.yield %110 : f32
    } -> tensor<4x8x1xf32>
    %61 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%52 : tensor<4x8x16xf32>) outs(%12 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = arith.addf %in, %out : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x1xf32>
    %62 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%61 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = arith.divf %in, %cst_7 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x1xf32>
    %63 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%60 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = arith.truncf %cst_5 : f64 to f32
      %111 = arith.addf %in, %110 : f32
      linalg.yield %111 : f32
    } -> tensor<4x8x1xf32>
    %64 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%63 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = math.rsqrt %in : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x1xf32>
    %65 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%52, %62 : tensor<4x8x16xf32>, tensor<4x8x1xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.subf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x16xf32>
    %66 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%65, %64 : tensor<4x8x16xf32>, tensor<4x8x1xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.mulf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x16xf32>
    %67 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%66, %arg6 : tensor<4x8x16xf32>, tensor<16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.mulf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x16xf32>
    %68 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%67, %arg7 : tensor<4x8x16xf32>, tensor<16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.addf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x16xf32>
    %collapsed_29 = tensor.collapse_shape %68 [[0, 1], [2]] {epl.scope = #epl.split<devices = 2>} : tensor<4x8x16xf32> into tensor<32x16xf32>
    %69 = tensor.empty() : tensor<16x32xf32>
    %transposed_30 = linalg.transpose ins(%arg8 : tensor<32x16xf32>) outs(%69 : tensor<16x32xf32>) permutation = [1, 0]  {epl.scope = #epl.split<devices = 2>}
    %70 = tensor.empty() : tensor<32x32xf32>
    %71 = linalg.fill {epl.scope = #epl.split<devices = 2>} ins(%cst_0 : f32) outs(%70 : tensor<32x32xf32>) -> tensor<32x32xf32>
    %72 = linalg.matmul {epl.scope = #epl.split<devices = 2>} ins(%collapsed_29, %transposed_30 : tensor<32x16xf32>, tensor<16x32xf32>) outs(%71 : tensor<32x32xf32>) -> tensor<32x32xf32>
    %73 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg9 : tensor<32xf32>) outs(%70 : tensor<32x32xf32>) attrs =  {epl.scope = #epl.split<devices = 2>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x32xf32>
    %74 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%72, %73 : tensor<32x32xf32>, tensor<32x32xf32>) outs(%70 : tensor<32x32xf32>) attrs =  {epl.scope = #epl.split<devices = 2>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.addf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<32x32xf32>
    %expanded_31 = tensor.expand_shape %74 [[0, 1], [2]] output_shape [4, 8, 32] {epl.scope = #epl.split<devices = 2>} : tensor<32x32xf32> into tensor<4x8x32xf32>
    %75 = tensor.empty() : tensor<4x8x32xf32>
    %76 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_31 : tensor<4x8x32xf32>) outs(%75 : tensor<4x8x32xf32>) attrs =  {epl.scope = #epl.split<devices = 2>} {
    ^bb0(%in: f32, %out: f32):
      %110 = arith.divf %in, %cst_8 : f32
      %111 = math.erf %110 : f32
      %112 = arith.addf %111, %cst_2 : f32
      %113 = arith.mulf %112, %cst_3 : f32
      %114 = arith.mulf %in, %113 : f32
      linalg.yield %114 : f32
    } -> tensor<4x8x32xf32>
    %collapsed_32 = tensor.collapse_shape %76 [[0, 1], [2]] {epl.scope = #epl.split<devices = 2>} : tensor<4x8x32xf32> into tensor<32x32xf32>
    %transposed_33 = linalg.transpose ins(%arg10 : tensor<16x32xf32>) outs(%47 : tensor<32x16xf32>) permutation = [1, 0]  {epl.scope = #epl.split<devices = 2>}
    %77 = linalg.matmul {epl.scope = #epl.split<devices = 2>} ins(%collapsed_32, %transposed_33 : tensor<32x32xf32>, tensor<32x16xf32>) outs(%48 : tensor<32x16xf32>) -> tensor<32x16xf32>
    %78 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg11 : tensor<16xf32>) outs(%47 : tensor<32x16xf32>) attrs =  {epl.scope = #epl.split<devices = 2>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x16xf32>
    %79 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%77, %78 : tensor<32x16xf32>, tensor<32x16xf32>) outs(%47 : tensor<32x16xf32>) attrs =  {epl.scope = #epl.split<devices = 2>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.addf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<32x16xf32>
    %expanded_34 = tensor.expand_shape %79 [[0, 1], [2]] output_shape [4, 8, 16] {epl.scope = #epl.split<devices = 2>} : tensor<32x16xf32> into tensor<4x8x16xf32>
    %80 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%52, %expanded_34 : tensor<4x8x16xf32>, tensor<4x8x16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.addf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x16xf32>
    %81 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%80 : tensor<4x8x16xf32>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f64):
      %110 = arith.extf %in : f32 to f64
      linalg.yield %110 : f64
    } -> tensor<4x8x16xf64>
    %82 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%81 : tensor<4x8x16xf64>) outs(%3 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %110 = arith.addf %in, %out : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x1xf64>
    %83 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%82 : tensor<4x8x1xf64>) outs(%2 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %110 = arith.divf %in, %cst_6 : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x1xf64>
    %84 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%81, %83 : tensor<4x8x16xf64>, tensor<4x8x1xf64>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_38: f64, %out: f64):
      %110 = arith.subf %in, %in_38 : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x16xf64>
    %85 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%84, %84 : tensor<4x8x16xf64>, tensor<4x8x16xf64>) outs(%0 : tensor<4x8x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %in_38: f64, %out: f64):
      %110 = arith.mulf %in, %in_38 : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x16xf64>
    %86 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%85 : tensor<4x8x16xf64>) outs(%3 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %110 = arith.addf %in, %out : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x1xf64>
    %87 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%86 : tensor<4x8x1xf64>) outs(%2 : tensor<4x8x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f64):
      %110 = arith.divf %in, %cst_6 : f64
      linalg.yield %110 : f64
    } -> tensor<4x8x1xf64>
    %88 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%87 : tensor<4x8x1xf64>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f64, %out: f32):
      %110 = arith.truncf %in : f64 to f32
      linalg.yield %110 : f32
    } -> tensor<4x8x1xf32>
    %89 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%80 : tensor<4x8x16xf32>) outs(%12 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = arith.addf %in, %out : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x1xf32>
    %90 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%89 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = arith.divf %in, %cst_7 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x1xf32>
    %91 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%88 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = arith.truncf %cst_5 : f64 to f32
      %111 = arith.addf %in, %110 : f32
      linalg.yield %111 : f32
    } -> tensor<4x8x1xf32>
    %92 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%91 : tensor<4x8x1xf32>) outs(%10 : tensor<4x8x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = math.rsqrt %in : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x1xf32>
    %93 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%80, %90 : tensor<4x8x16xf32>, tensor<4x8x1xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.subf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x16xf32>
    %94 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%93, %92 : tensor<4x8x16xf32>, tensor<4x8x1xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.mulf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x16xf32>
    %95 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%94, %arg12 : tensor<4x8x16xf32>, tensor<16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.mulf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x16xf32>
    %96 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%95, %arg13 : tensor<4x8x16xf32>, tensor<16xf32>) outs(%17 : tensor<4x8x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.addf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x16xf32>
    %collapsed_35 = tensor.collapse_shape %96 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1>} : tensor<4x8x16xf32> into tensor<32x16xf32>
    %97 = tensor.empty() : tensor<16x8xf32>
    %transposed_36 = linalg.transpose ins(%arg14 : tensor<8x16xf32>) outs(%97 : tensor<16x8xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1>}
    %98 = tensor.empty() : tensor<32x8xf32>
    %99 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%98 : tensor<32x8xf32>) -> tensor<32x8xf32>
    %100 = linalg.matmul {epl.scope = #epl.replicate<devices = 1>} ins(%collapsed_35, %transposed_36 : tensor<32x16xf32>, tensor<16x8xf32>) outs(%99 : tensor<32x8xf32>) -> tensor<32x8xf32>
    %101 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg15 : tensor<8xf32>) outs(%98 : tensor<32x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x8xf32>
    %102 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%100, %101 : tensor<32x8xf32>, tensor<32x8xf32>) outs(%98 : tensor<32x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.addf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<32x8xf32>
    %expanded_37 = tensor.expand_shape %102 [[0, 1], [2]] output_shape [4, 8, 8] {epl.scope = #epl.replicate<devices = 1>} : tensor<32x8xf32> into tensor<4x8x8xf32>
    %103 = tensor.empty() : tensor<4x8x8xf32>
    %104 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_37, %arg17 : tensor<4x8x8xf32>, tensor<4x8x8xf32>) outs(%103 : tensor<4x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %110 = arith.subf %in, %in_38 : f32
      linalg.yield %110 : f32
    } -> tensor<4x8x8xf32>
    %105 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%104 : tensor<4x8x8xf32>) outs(%103 : tensor<4x8x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = math.fpowi %in, %c2_i64 : f32, i64
      linalg.yield %110 : f32
    } -> tensor<4x8x8xf32>
    %106 = tensor.empty() : tensor<f32>
    %107 = linalg.fill {epl.scope = #epl.replicate<devices = 1>} ins(%cst_0 : f32) outs(%106 : tensor<f32>) -> tensor<f32>
    %108 = linalg.generic {indexing_maps = [#map, #map8], iterator_types = ["reduction", "reduction", "reduction"]} ins(%105 : tensor<4x8x8xf32>) outs(%107 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = arith.addf %in, %out : f32
      linalg.yield %110 : f32
    } -> tensor<f32>
    %109 = linalg.generic {indexing_maps = [#map9, #map9], iterator_types = []} ins(%108 : tensor<f32>) outs(%106 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1>} {
    ^bb0(%in: f32, %out: f32):
      %110 = arith.divf %in, %cst_9 : f32
      linalg.yield %110 : f32
    } -> tensor<f32>
    return %109 : tensor<f32>
  }
}
