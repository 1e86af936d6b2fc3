#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#map5 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map6 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map7 = affine_map<(d0, d1, d2) -> (d2)>
#map8 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map9 = affine_map<(d0, d1) -> (d0)>
#map10 = affine_map<(d0, d1) -> (d0, 0)>
#map11 = affine_map<(d0) -> (d0)>
#map12 = affine_map<(d0) -> ()>
#map13 = affine_map<() -> ()>
module attributes {epl.config = {optimizer.lr = 1.000000e-01 : f64, optimizer.type = "sgd"}} {
  func.func @model(%arg0: tensor<48x16xf32> {epl.arg = "param", epl.name = "enc.self_attn.in_proj_weight"}, %arg1: tensor<48xf32> {epl.arg = "param", epl.name = "enc.self_attn.in_proj_bias"}, %arg2: tensor<16x16xf32> {epl.arg = "param", epl.name = "enc.self_attn.out_proj.weight"}, %arg3: tensor<16xf32> {epl.arg = "param", epl.name = "enc.self_attn.out_proj.bias"}, %arg4: tensor<32x16xf32> {epl.arg = "param", epl.name = "enc.linear1.weight"}, %arg5: tensor<32xf32> {epl.arg = "param", epl.name = "enc.linear1.bias"}, %arg6: tensor<16x32xf32> {epl.arg = "param", epl.name = "enc.linear2.weight"}, %arg7: tensor<16xf32> {epl.arg = "param", epl.name = "enc.linear2.bias"}, %arg8: tensor<16xf32> {epl.arg = "param", epl.name = "enc.norm1.weight"}, %arg9: tensor<16xf32> {epl.arg = "param", epl.name = "enc.norm1.bias"}, %arg10: tensor<16xf32> {epl.arg = "param", epl.name = "enc.norm2.weight"}, %arg11: tensor<16xf32> {epl.arg = "param", epl.name = "enc.norm2.bias"}, %arg12: tensor<48x16xf32> {epl.arg = "param", epl.name = "gru.weight_ih_l0"}, %arg13: tensor<48x16xf32> {epl.arg = "param", epl.name = "gru.weight_hh_l0"}, %arg14: tensor<48xf32> {epl.arg = "param", epl.name = "gru.bias_ih_l0"}, %arg15: tensor<48xf32> {epl.arg = "param", epl.name = "gru.bias_hh_l0"}, %arg16: tensor<3x16xf32> {epl.arg = "param", epl.name = "head.weight"}, %arg17: tensor<3xf32> {epl.arg = "param", epl.name = "head.bias"}, %arg18: tensor<4x6x16xf32> {epl.arg = "input", epl.name = "x"}, %arg19: tensor<4xi64> {epl.arg = "label", epl.name = "y"}) -> tensor<f32> {
    %c-100_i64 = arith.constant -100 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %c3 = arith.constant 3 : index
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant 0.000000e+00 : f64
    %cst_2 = arith.constant 1.000000e+00 : f32
    %cst_3 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_4 = arith.constant dense<0.000000e+00> : tensor<4x16xf32>
    %cst_5 = arith.constant dense<0.000000e+00> : tensor<1x4x16xf32>
    %cst_6 = arith.constant dense<0.000000e+00> : tensor<4x2x6x6xf32>
    %cst_7 = arith.constant 1.000000e-05 : f64
    %cst_8 = arith.constant 0xFFF0000000000000 : f64
    %cst_9 = arith.constant 0.59460355750136051 : f64
    %cst_10 = arith.constant 1.600000e+01 : f64
    %cst_11 = arith.constant 1.600000e+01 : f32
    %cst_12 = arith.constant 6.000000e+00 : f32
    %cst_13 = arith.constant dense<0> : tensor<i64>
    %0 = tensor.empty() : tensor<6x4x16xf32>
    %transposed = linalg.transpose ins(%arg18 : tensor<4x6x16xf32>) outs(%0 : tensor<6x4x16xf32>) permutation = [1, 0, 2]  {epl.scope = #epl.replicate<devices = 1, name = "s0">}
    %collapsed = tensor.collapse_shape %transposed [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<6x4x16xf32> into tensor<24x16xf32>
    %1 = tensor.empty() : tensor<16x48xf32>
    %transposed_14 = linalg.transpose ins(%arg0 : tensor<48x16xf32>) outs(%1 : tensor<16x48xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1, name = "s0">}
    %2 = tensor.empty() : tensor<24x48xf32>
    %3 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%cst : f32) outs(%2 : tensor<24x48xf32>) -> tensor<24x48xf32>
    %4 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%collapsed, %transposed_14 : tensor<24x16xf32>, tensor<16x48xf32>) outs(%3 : tensor<24x48xf32>) -> tensor<24x48xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<48xf32>) outs(%2 : tensor<24x48xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<24x48xf32>
    %6 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%4, %5 : tensor<24x48xf32>, tensor<24x48xf32>) outs(%2 : tensor<24x48xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<24x48xf32>
    %expanded = tensor.expand_shape %6 [[0, 1, 2], [3, 4]] output_shape [1, 6, 4, 3, 16] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<24x48xf32> into tensor<1x6x4x3x16xf32>
    %7 = tensor.empty() : tensor<3x6x4x1x16xf32>
    %transposed_15 = linalg.transpose ins(%expanded : tensor<1x6x4x3x16xf32>) outs(%7 : tensor<3x6x4x1x16xf32>) permutation = [3, 1, 2, 0, 4]  {epl.scope = #epl.replicate<devices = 1, name = "s0">}
    %collapsed_16 = tensor.collapse_shape %transposed_15 [[0], [1], [2, 3], [4]] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<3x6x4x1x16xf32> into tensor<3x6x4x16xf32>
    %extracted_slice = tensor.extract_slice %collapsed_16[0, 0, 0, 0] [1, 6, 4, 16] [1, 1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<3x6x4x16xf32> to tensor<1x6x4x16xf32>
    %extracted_slice_17 = tensor.extract_slice %collapsed_16[1, 0, 0, 0] [1, 6, 4, 16] [1, 1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<3x6x4x16xf32> to tensor<1x6x4x16xf32>
    %extracted_slice_18 = tensor.extract_slice %collapsed_16[2, 0, 0, 0] [1, 6, 4, 16] [1, 1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<3x6x4x16xf32> to tensor<1x6x4x16xf32>
    %collapsed_19 = tensor.collapse_shape %extracted_slice [[0, 1], [2, 3]] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<1x6x4x16xf32> into tensor<6x64xf32>
    %expanded_20 = tensor.expand_shape %collapsed_19 [[0], [1, 2]] output_shape [6, 8, 8] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<6x64xf32> into tensor<6x8x8xf32>
    %8 = tensor.empty() : tensor<8x6x8xf32>
    %transposed_21 = linalg.transpose ins(%expanded_20 : tensor<6x8x8xf32>) outs(%8 : tensor<8x6x8xf32>) permutation = [1, 0, 2]  {epl.scope = #epl.replicate<devices = 1, name = "s0">}
    %collapsed_22 = tensor.collapse_shape %extracted_slice_17 [[0, 1], [2, 3]] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<1x6x4x16xf32> into tensor<6x64xf32>
    %expanded_23 = tensor.expand_shape %collapsed_22 [[0], [1, 2]] output_shape [6, 8, 8] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<6x64xf32> into tensor<6x8x8xf32>
    %transposed_24 = linalg.transpose ins(%expanded_23 : tensor<6x8x8xf32>) outs(%8 : tensor<8x6x8xf32>) permutation = [1, 0, 2]  {epl.scope = #epl.replicate<devices = 1, name = "s0">}
    %collapsed_25 = tensor.collapse_shape %extracted_slice_18 [[0, 1], [2, 3]] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<1x6x4x16xf32> into tensor<6x64xf32>
    %expanded_26 = tensor.expand_shape %collapsed_25 [[0], [1, 2]] output_shape [6, 8, 8] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<6x64xf32> into tensor<6x8x8xf32>
    %transposed_27 = linalg.transpose ins(%expanded_26 : tensor<6x8x8xf32>) outs(%8 : tensor<8x6x8xf32>) permutation = [1, 0, 2]  {epl.scope = #epl.replicate<devices = 1, name = "s0">}
    %expanded_28 = tensor.expand_shape %transposed_21 [[0, 1], [2], [3]] output_shape [4, 2, 6, 8] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<8x6x8xf32> into tensor<4x2x6x8xf32>
    %expanded_29 = tensor.expand_shape %transposed_24 [[0, 1], [2], [3]] output_shape [4, 2, 6, 8] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<8x6x8xf32> into tensor<4x2x6x8xf32>
    %9 = tensor.empty() : tensor<4x2x6x8xf32>
    %10 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_28 : tensor<4x2x6x8xf32>) outs(%9 : tensor<4x2x6x8xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.truncf %cst_9 : f64 to f32
      %210 = arith.mulf %in, %209 : f32
      linalg.yield %210 : f32
    } -> tensor<4x2x6x8xf32>
    %11 = tensor.empty() : tensor<4x2x8x6xf32>
    %transposed_30 = linalg.transpose ins(%expanded_29 : tensor<4x2x6x8xf32>) outs(%11 : tensor<4x2x8x6xf32>) permutation = [0, 1, 3, 2]  {epl.scope = #epl.replicate<devices = 1, name = "s0">}
    %12 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_30 : tensor<4x2x8x6xf32>) outs(%11 : tensor<4x2x8x6xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.truncf %cst_9 : f64 to f32
      %210 = arith.mulf %in, %209 : f32
      linalg.yield %210 : f32
    } -> tensor<4x2x8x6xf32>
    %collapsed_31 = tensor.collapse_shape %10 [[0, 1], [2], [3]] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<4x2x6x8xf32> into tensor<8x6x8xf32>
    %collapsed_32 = tensor.collapse_shape %12 [[0, 1], [2], [3]] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<4x2x8x6xf32> into tensor<8x8x6xf32>
    %13 = tensor.empty() : tensor<8x6x6xf32>
    %14 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%cst : f32) outs(%13 : tensor<8x6x6xf32>) -> tensor<8x6x6xf32>
    %15 = linalg.batch_matmul {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%collapsed_31, %collapsed_32 : tensor<8x6x8xf32>, tensor<8x8x6xf32>) outs(%14 : tensor<8x6x6xf32>) -> tensor<8x6x6xf32>
    %expanded_33 = tensor.expand_shape %15 [[0, 1], [2], [3]] output_shape [4, 2, 6, 6] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<8x6x6xf32> into tensor<4x2x6x6xf32>
    %16 = tensor.empty() : tensor<4x2x6xi64>
    %17 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%c0_i64 : i64) outs(%16 : tensor<4x2x6xi64>) -> tensor<4x2x6xi64>
    %18 = tensor.empty() : tensor<4x2x6xf32>
    %19 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%cst_0 : f32) outs(%18 : tensor<4x2x6xf32>) -> tensor<4x2x6xf32>
    %20:2 = linalg.generic {indexing_maps = [#map2, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%expanded_33 : tensor<4x2x6x6xf32>) outs(%19, %17 : tensor<4x2x6xf32>, tensor<4x2x6xi64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32, %out_114: i64):
      %209 = linalg.index 3 : index
      %210 = arith.index_cast %209 : index to i64
      %211 = arith.maximumf %in, %out : f32
      %212 = arith.cmpf ogt, %in, %out : f32
      %213 = arith.select %212, %210, %out_114 : i64
      linalg.yield %211, %213 : f32, i64
    } -> (tensor<4x2x6xf32>, tensor<4x2x6xi64>)
    %expanded_34 = tensor.expand_shape %20#0 [[0], [1], [2, 3]] output_shape [4, 2, 6, 1] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<4x2x6xf32> into tensor<4x2x6x1xf32>
    %21 = tensor.empty() : tensor<4x2x6x6xf32>
    %22 = linalg.generic {indexing_maps = [#map2, #map4, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_33, %expanded_34 : tensor<4x2x6x6xf32>, tensor<4x2x6x1xf32>) outs(%21 : tensor<4x2x6x6xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.subf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<4x2x6x6xf32>
    %23 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%22 : tensor<4x2x6x6xf32>) outs(%21 : tensor<4x2x6x6xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      %209 = math.exp %in : f32
      linalg.yield %209 : f32
    } -> tensor<4x2x6x6xf32>
    %24 = tensor.empty() : tensor<4x2x6x1xf32>
    %25 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%cst : f32) outs(%24 : tensor<4x2x6x1xf32>) -> tensor<4x2x6x1xf32>
    %26 = linalg.generic {indexing_maps = [#map2, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%23 : tensor<4x2x6x6xf32>) outs(%25 : tensor<4x2x6x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.addf %in, %out : f32
      linalg.yield %209 : f32
    } -> tensor<4x2x6x1xf32>
    %27 = linalg.generic {indexing_maps = [#map2, #map4, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%23, %26 : tensor<4x2x6x6xf32>, tensor<4x2x6x1xf32>) outs(%21 : tensor<4x2x6x6xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.divf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<4x2x6x6xf32>
    %28 = tensor.empty() : tensor<4x2x6x6xi1>
    %29 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_33 : tensor<4x2x6x6xf32>) outs(%28 : tensor<4x2x6x6xi1>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: i1):
      %209 = arith.extf %in : f32 to f64
      %210 = arith.cmpf oeq, %209, %cst_8 : f64
      linalg.yield %210 : i1
    } -> tensor<4x2x6x6xi1>
    %30 = tensor.empty() : tensor<4x2x6x1xi1>
    %31 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%true : i1) outs(%30 : tensor<4x2x6x1xi1>) -> tensor<4x2x6x1xi1>
    %32 = linalg.generic {indexing_maps = [#map2, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%29 : tensor<4x2x6x6xi1>) outs(%31 : tensor<4x2x6x1xi1>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: i1, %out: i1):
      %209 = arith.andi %in, %out : i1
      linalg.yield %209 : i1
    } -> tensor<4x2x6x1xi1>
    %33 = linalg.generic {indexing_maps = [#map4, #map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%32, %cst_6, %27 : tensor<4x2x6x1xi1>, tensor<4x2x6x6xf32>, tensor<4x2x6x6xf32>) outs(%21 : tensor<4x2x6x6xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: i1, %in_114: f32, %in_115: f32, %out: f32):
      %209 = arith.select %in, %in_114, %in_115 : f32
      linalg.yield %209 : f32
    } -> tensor<4x2x6x6xf32>
    %collapsed_35 = tensor.collapse_shape %33 [[0, 1], [2], [3]] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<4x2x6x6xf32> into tensor<8x6x6xf32>
    %34 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%cst : f32) outs(%8 : tensor<8x6x8xf32>) -> tensor<8x6x8xf32>
    %35 = linalg.batch_matmul {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%collapsed_35, %transposed_27 : tensor<8x6x6xf32>, tensor<8x6x8xf32>) outs(%34 : tensor<8x6x8xf32>) -> tensor<8x6x8xf32>
    %expanded_36 = tensor.expand_shape %35 [[0, 1], [2], [3]] output_shape [4, 2, 6, 8] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<8x6x8xf32> into tensor<4x2x6x8xf32>
    %36 = tensor.empty() : tensor<6x4x2x8xf32>
    %transposed_37 = linalg.transpose ins(%expanded_36 : tensor<4x2x6x8xf32>) outs(%36 : tensor<6x4x2x8xf32>) permutation = [2, 0, 1, 3]  {epl.scope = #epl.replicate<devices = 1, name = "s0">}
    %collapsed_38 = tensor.collapse_shape %transposed_37 [[0, 1], [2, 3]] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<6x4x2x8xf32> into tensor<24x16xf32>
    %37 = tensor.empty() : tensor<16x16xf32>
    %transposed_39 = linalg.transpose ins(%arg2 : tensor<16x16xf32>) outs(%37 : tensor<16x16xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1, name = "s0">}
    %38 = tensor.empty() : tensor<24x16xf32>
    %39 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%cst : f32) outs(%38 : tensor<24x16xf32>) -> tensor<24x16xf32>
    %40 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%collapsed_38, %transposed_39 : tensor<24x16xf32>, tensor<16x16xf32>) outs(%39 : tensor<24x16xf32>) -> tensor<24x16xf32>
    %41 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg3 : tensor<16xf32>) outs(%38 : tensor<24x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<24x16xf32>
    %42 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%40, %41 : tensor<24x16xf32>, tensor<24x16xf32>) outs(%38 : tensor<24x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<24x16xf32>
    %expanded_40 = tensor.expand_shape %42 [[0, 1], [2]] output_shape [6, 4, 16] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<24x16xf32> into tensor<6x4x16xf32>
    %43 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed, %expanded_40 : tensor<6x4x16xf32>, tensor<6x4x16xf32>) outs(%0 : tensor<6x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x16xf32>
    %44 = tensor.empty() : tensor<6x4x16xf64>
    %45 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%43 : tensor<6x4x16xf32>) outs(%44 : tensor<6x4x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f64):
      %209 = arith.extf %in : f32 to f64
      linalg.yield %209 : f64
    } -> tensor<6x4x16xf64>
    %46 = tensor.empty() : tensor<6x4x1xf64>
    %47 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%cst_1 : f64) outs(%46 : tensor<6x4x1xf64>) -> tensor<6x4x1xf64>
    %48 = linalg.generic {indexing_maps = [#map5, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%45 : tensor<6x4x16xf64>) outs(%47 : tensor<6x4x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f64, %out: f64):
      %209 = arith.addf %in, %out : f64
      linalg.yield %209 : f64
    } -> tensor<6x4x1xf64>
    %49 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%48 : tensor<6x4x1xf64>) outs(%46 : tensor<6x4x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f64, %out: f64):
      %209 = arith.divf %in, %cst_10 : f64
      linalg.yield %209 : f64
    } -> tensor<6x4x1xf64>
    %50 = linalg.generic {indexing_maps = [#map5, #map6, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%45, %49 : tensor<6x4x16xf64>, tensor<6x4x1xf64>) outs(%44 : tensor<6x4x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f64, %in_114: f64, %out: f64):
      %209 = arith.subf %in, %in_114 : f64
      linalg.yield %209 : f64
    } -> tensor<6x4x16xf64>
    %51 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%50, %50 : tensor<6x4x16xf64>, tensor<6x4x16xf64>) outs(%44 : tensor<6x4x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f64, %in_114: f64, %out: f64):
      %209 = arith.mulf %in, %in_114 : f64
      linalg.yield %209 : f64
    } -> tensor<6x4x16xf64>
    %52 = linalg.generic {indexing_maps = [#map5, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%51 : tensor<6x4x16xf64>) outs(%47 : tensor<6x4x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f64, %out: f64):
      %209 = arith.addf %in, %out : f64
      linalg.yield %209 : f64
    } -> tensor<6x4x1xf64>
    %53 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%52 : tensor<6x4x1xf64>) outs(%46 : tensor<6x4x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f64, %out: f64):
      %209 = arith.divf %in, %cst_10 : f64
      linalg.yield %209 : f64
    } -> tensor<6x4x1xf64>
    %54 = tensor.empty() : tensor<6x4x1xf32>
    %55 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%53 : tensor<6x4x1xf64>) outs(%54 : tensor<6x4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f64, %out: f32):
      %209 = arith.truncf %in : f64 to f32
      linalg.yield %209 : f32
    } -> tensor<6x4x1xf32>
    %56 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%cst : f32) outs(%54 : tensor<6x4x1xf32>) -> tensor<6x4x1xf32>
    %57 = linalg.generic {indexing_maps = [#map5, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%43 : tensor<6x4x16xf32>) outs(%56 : tensor<6x4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.addf %in, %out : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x1xf32>
    %58 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%57 : tensor<6x4x1xf32>) outs(%54 : tensor<6x4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.divf %in, %cst_11 : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x1xf32>
    %59 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%55 : tensor<6x4x1xf32>) outs(%54 : tensor<6x4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.truncf %cst_7 : f64 to f32
      %210 = arith.addf %in, %209 : f32
      linalg.yield %210 : f32
    } -> tensor<6x4x1xf32>
    %60 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%59 : tensor<6x4x1xf32>) outs(%54 : tensor<6x4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      %209 = math.rsqrt %in : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x1xf32>
    %61 = linalg.generic {indexing_maps = [#map5, #map6, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%43, %58 : tensor<6x4x16xf32>, tensor<6x4x1xf32>) outs(%0 : tensor<6x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.subf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x16xf32>
    %62 = linalg.generic {indexing_maps = [#map5, #map6, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%61, %60 : tensor<6x4x16xf32>, tensor<6x4x1xf32>) outs(%0 : tensor<6x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x16xf32>
    %63 = linalg.generic {indexing_maps = [#map5, #map7, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%62, %arg8 : tensor<6x4x16xf32>, tensor<16xf32>) outs(%0 : tensor<6x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x16xf32>
    %64 = linalg.generic {indexing_maps = [#map5, #map7, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%63, %arg9 : tensor<6x4x16xf32>, tensor<16xf32>) outs(%0 : tensor<6x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x16xf32>
    %collapsed_41 = tensor.collapse_shape %64 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<6x4x16xf32> into tensor<24x16xf32>
    %65 = tensor.empty() : tensor<16x32xf32>
    %transposed_42 = linalg.transpose ins(%arg4 : tensor<32x16xf32>) outs(%65 : tensor<16x32xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1, name = "s0">}
    %66 = tensor.empty() : tensor<24x32xf32>
    %67 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%cst : f32) outs(%66 : tensor<24x32xf32>) -> tensor<24x32xf32>
    %68 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%collapsed_41, %transposed_42 : tensor<24x16xf32>, tensor<16x32xf32>) outs(%67 : tensor<24x32xf32>) -> tensor<24x32xf32>
    %69 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg5 : tensor<32xf32>) outs(%66 : tensor<24x32xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<24x32xf32>
    %70 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%68, %69 : tensor<24x32xf32>, tensor<24x32xf32>) outs(%66 : tensor<24x32xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<24x32xf32>
    %expanded_43 = tensor.expand_shape %70 [[0, 1], [2]] output_shape [6, 4, 32] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<24x32xf32> into tensor<6x4x32xf32>
    %71 = tensor.empty() : tensor<6x4x32xf32>
    %72 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_43 : tensor<6x4x32xf32>) outs(%71 : tensor<6x4x32xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.cmpf ugt, %in, %cst : f32
      %210 = arith.select %209, %in, %cst : f32
      linalg.yield %210 : f32
    } -> tensor<6x4x32xf32>
    %collapsed_44 = tensor.collapse_shape %72 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<6x4x32xf32> into tensor<24x32xf32>
    %73 = tensor.empty() : tensor<32x16xf32>
    %transposed_45 = linalg.transpose ins(%arg6 : tensor<16x32xf32>) outs(%73 : tensor<32x16xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1, name = "s0">}
    %74 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s0">} ins(%collapsed_44, %transposed_45 : tensor<24x32xf32>, tensor<32x16xf32>) outs(%39 : tensor<24x16xf32>) -> tensor<24x16xf32>
    %75 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg7 : tensor<16xf32>) outs(%38 : tensor<24x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<24x16xf32>
    %76 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%74, %75 : tensor<24x16xf32>, tensor<24x16xf32>) outs(%38 : tensor<24x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<24x16xf32>
    %expanded_46 = tensor.expand_shape %76 [[0, 1], [2]] output_shape [6, 4, 16] {epl.scope = #epl.replicate<devices = 1, name = "s0">} : tensor<24x16xf32> into tensor<6x4x16xf32>
    %77 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%64, %expanded_46 : tensor<6x4x16xf32>, tensor<6x4x16xf32>) outs(%0 : tensor<6x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x16xf32>
    %78 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%77 : tensor<6x4x16xf32>) outs(%44 : tensor<6x4x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f64):
      %209 = arith.extf %in : f32 to f64
      linalg.yield %209 : f64
    } -> tensor<6x4x16xf64>
    %79 = linalg.generic {indexing_maps = [#map5, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%78 : tensor<6x4x16xf64>) outs(%47 : tensor<6x4x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f64, %out: f64):
      %209 = arith.addf %in, %out : f64
      linalg.yield %209 : f64
    } -> tensor<6x4x1xf64>
    %80 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%79 : tensor<6x4x1xf64>) outs(%46 : tensor<6x4x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f64, %out: f64):
      %209 = arith.divf %in, %cst_10 : f64
      linalg.yield %209 : f64
    } -> tensor<6x4x1xf64>
    %81 = linalg.generic {indexing_maps = [#map5, #map6, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%78, %80 : tensor<6x4x16xf64>, tensor<6x4x1xf64>) outs(%44 : tensor<6x4x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f64, %in_114: f64, %out: f64):
      %209 = arith.subf %in, %in_114 : f64
      linalg.yield %209 : f64
    } -> tensor<6x4x16xf64>
    %82 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%81, %81 : tensor<6x4x16xf64>, tensor<6x4x16xf64>) outs(%44 : tensor<6x4x16xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f64, %in_114: f64, %out: f64):
      %209 = arith.mulf %in, %in_114 : f64
      linalg.yield %209 : f64
    } -> tensor<6x4x16xf64>
    %83 = linalg.generic {indexing_maps = [#map5, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%82 : tensor<6x4x16xf64>) outs(%47 : tensor<6x4x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f64, %out: f64):
      %209 = arith.addf %in, %out : f64
      linalg.yield %209 : f64
    } -> tensor<6x4x1xf64>
    %84 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%83 : tensor<6x4x1xf64>) outs(%46 : tensor<6x4x1xf64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f64, %out: f64):
      %209 = arith.divf %in, %cst_10 : f64
      linalg.yield %209 : f64
    } -> tensor<6x4x1xf64>
    %85 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%84 : tensor<6x4x1xf64>) outs(%54 : tensor<6x4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f64, %out: f32):
      %209 = arith.truncf %in : f64 to f32
      linalg.yield %209 : f32
    } -> tensor<6x4x1xf32>
    %86 = linalg.generic {indexing_maps = [#map5, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%77 : tensor<6x4x16xf32>) outs(%56 : tensor<6x4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.addf %in, %out : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x1xf32>
    %87 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%86 : tensor<6x4x1xf32>) outs(%54 : tensor<6x4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.divf %in, %cst_11 : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x1xf32>
    %88 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%85 : tensor<6x4x1xf32>) outs(%54 : tensor<6x4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.truncf %cst_7 : f64 to f32
      %210 = arith.addf %in, %209 : f32
      linalg.yield %210 : f32
    } -> tensor<6x4x1xf32>
    %89 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%88 : tensor<6x4x1xf32>) outs(%54 : tensor<6x4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %out: f32):
      %209 = math.rsqrt %in : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x1xf32>
    %90 = linalg.generic {indexing_maps = [#map5, #map6, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%77, %87 : tensor<6x4x16xf32>, tensor<6x4x1xf32>) outs(%0 : tensor<6x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.subf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x16xf32>
    %91 = linalg.generic {indexing_maps = [#map5, #map6, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%90, %89 : tensor<6x4x16xf32>, tensor<6x4x1xf32>) outs(%0 : tensor<6x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x16xf32>
    %92 = linalg.generic {indexing_maps = [#map5, #map7, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%91, %arg10 : tensor<6x4x16xf32>, tensor<16xf32>) outs(%0 : tensor<6x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x16xf32>
    %93 = linalg.generic {indexing_maps = [#map5, #map7, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%92, %arg11 : tensor<6x4x16xf32>, tensor<16xf32>) outs(%0 : tensor<6x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s0">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<6x4x16xf32>
    %collapsed_47 = tensor.collapse_shape %93 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<6x4x16xf32> into tensor<24x16xf32>
    %transposed_48 = linalg.transpose ins(%arg12 : tensor<48x16xf32>) outs(%1 : tensor<16x48xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1, name = "s1">}
    %94 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%collapsed_47, %transposed_48 : tensor<24x16xf32>, tensor<16x48xf32>) outs(%3 : tensor<24x48xf32>) -> tensor<24x48xf32>
    %95 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg14 : tensor<48xf32>) outs(%2 : tensor<24x48xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<24x48xf32>
    %96 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%94, %95 : tensor<24x48xf32>, tensor<24x48xf32>) outs(%2 : tensor<24x48xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<24x48xf32>
    %expanded_49 = tensor.expand_shape %96 [[0, 1], [2]] output_shape [6, 4, 48] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<24x48xf32> into tensor<6x4x48xf32>
    %extracted_slice_50 = tensor.extract_slice %expanded_49[0, 0, 0] [1, 4, 48] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<6x4x48xf32> to tensor<1x4x48xf32>
    %extracted_slice_51 = tensor.extract_slice %expanded_49[1, 0, 0] [1, 4, 48] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<6x4x48xf32> to tensor<1x4x48xf32>
    %extracted_slice_52 = tensor.extract_slice %expanded_49[2, 0, 0] [1, 4, 48] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<6x4x48xf32> to tensor<1x4x48xf32>
    %extracted_slice_53 = tensor.extract_slice %expanded_49[3, 0, 0] [1, 4, 48] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<6x4x48xf32> to tensor<1x4x48xf32>
    %extracted_slice_54 = tensor.extract_slice %expanded_49[4, 0, 0] [1, 4, 48] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<6x4x48xf32> to tensor<1x4x48xf32>
    %extracted_slice_55 = tensor.extract_slice %expanded_49[5, 0, 0] [1, 4, 48] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<6x4x48xf32> to tensor<1x4x48xf32>
    %collapsed_56 = tensor.collapse_shape %extracted_slice_50 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> into tensor<4x48xf32>
    %collapsed_57 = tensor.collapse_shape %extracted_slice_51 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> into tensor<4x48xf32>
    %collapsed_58 = tensor.collapse_shape %extracted_slice_52 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> into tensor<4x48xf32>
    %collapsed_59 = tensor.collapse_shape %extracted_slice_53 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> into tensor<4x48xf32>
    %collapsed_60 = tensor.collapse_shape %extracted_slice_54 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> into tensor<4x48xf32>
    %collapsed_61 = tensor.collapse_shape %extracted_slice_55 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> into tensor<4x48xf32>
    %extracted_slice_62 = tensor.extract_slice %collapsed_56[0, 0] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %extracted_slice_63 = tensor.extract_slice %collapsed_56[0, 16] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %extracted_slice_64 = tensor.extract_slice %collapsed_56[0, 32] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %transposed_65 = linalg.transpose ins(%arg13 : tensor<48x16xf32>) outs(%1 : tensor<16x48xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1, name = "s1">}
    %97 = tensor.empty() : tensor<4x48xf32>
    %98 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%cst : f32) outs(%97 : tensor<4x48xf32>) -> tensor<4x48xf32>
    %99 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%cst_4, %transposed_65 : tensor<4x16xf32>, tensor<16x48xf32>) outs(%98 : tensor<4x48xf32>) -> tensor<4x48xf32>
    %100 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg15 : tensor<48xf32>) outs(%97 : tensor<4x48xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4x48xf32>
    %101 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%99, %100 : tensor<4x48xf32>, tensor<4x48xf32>) outs(%97 : tensor<4x48xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<4x48xf32>
    %expanded_66 = tensor.expand_shape %101 [[0, 1], [2]] output_shape [1, 4, 48] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> into tensor<1x4x48xf32>
    %extracted_slice_67 = tensor.extract_slice %expanded_66[0, 0, 0] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %extracted_slice_68 = tensor.extract_slice %expanded_66[0, 0, 16] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %extracted_slice_69 = tensor.extract_slice %expanded_66[0, 0, 32] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %102 = tensor.empty() : tensor<1x4x16xf32>
    %103 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_67, %extracted_slice_62 : tensor<1x4x16xf32>, tensor<4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %104 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%103 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.negf %in : f32
      %210 = math.exp %209 : f32
      %211 = arith.addf %210, %cst_2 : f32
      %212 = arith.divf %cst_2, %211 : f32
      linalg.yield %212 : f32
    } -> tensor<1x4x16xf32>
    %105 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_68, %extracted_slice_63 : tensor<1x4x16xf32>, tensor<4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %106 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%105 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.negf %in : f32
      %210 = math.exp %209 : f32
      %211 = arith.addf %210, %cst_2 : f32
      %212 = arith.divf %cst_2, %211 : f32
      linalg.yield %212 : f32
    } -> tensor<1x4x16xf32>
    %107 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_69, %104 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %108 = linalg.generic {indexing_maps = [#map8, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_64, %107 : tensor<4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %109 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%108 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = math.tanh %in : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %110 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_5, %109 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.subf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %111 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%110, %106 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %112 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%111, %109 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %extracted_slice_70 = tensor.extract_slice %collapsed_57[0, 0] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %extracted_slice_71 = tensor.extract_slice %collapsed_57[0, 16] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %extracted_slice_72 = tensor.extract_slice %collapsed_57[0, 32] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %collapsed_73 = tensor.collapse_shape %112 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x16xf32> into tensor<4x16xf32>
    %113 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%collapsed_73, %transposed_65 : tensor<4x16xf32>, tensor<16x48xf32>) outs(%98 : tensor<4x48xf32>) -> tensor<4x48xf32>
    %114 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%113, %100 : tensor<4x48xf32>, tensor<4x48xf32>) outs(%97 : tensor<4x48xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<4x48xf32>
    %expanded_74 = tensor.expand_shape %114 [[0, 1], [2]] output_shape [1, 4, 48] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> into tensor<1x4x48xf32>
    %extracted_slice_75 = tensor.extract_slice %expanded_74[0, 0, 0] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %extracted_slice_76 = tensor.extract_slice %expanded_74[0, 0, 16] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %extracted_slice_77 = tensor.extract_slice %expanded_74[0, 0, 32] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %115 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_75, %extracted_slice_70 : tensor<1x4x16xf32>, tensor<4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %116 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%115 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.negf %in : f32
      %210 = math.exp %209 : f32
      %211 = arith.addf %210, %cst_2 : f32
      %212 = arith.divf %cst_2, %211 : f32
      linalg.yield %212 : f32
    } -> tensor<1x4x16xf32>
    %117 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_76, %extracted_slice_71 : tensor<1x4x16xf32>, tensor<4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %118 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%117 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.negf %in : f32
      %210 = math.exp %209 : f32
      %211 = arith.addf %210, %cst_2 : f32
      %212 = arith.divf %cst_2, %211 : f32
      linalg.yield %212 : f32
    } -> tensor<1x4x16xf32>
    %119 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_77, %116 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %120 = linalg.generic {indexing_maps = [#map8, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_72, %119 : tensor<4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %121 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%120 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = math.tanh %in : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %122 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%112, %121 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.subf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %123 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%122, %118 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %124 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%123, %121 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %extracted_slice_78 = tensor.extract_slice %collapsed_58[0, 0] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %extracted_slice_79 = tensor.extract_slice %collapsed_58[0, 16] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %extracted_slice_80 = tensor.extract_slice %collapsed_58[0, 32] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %collapsed_81 = tensor.collapse_shape %124 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x16xf32> into tensor<4x16xf32>
    %125 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%collapsed_81, %transposed_65 : tensor<4x16xf32>, tensor<16x48xf32>) outs(%98 : tensor<4x48xf32>) -> tensor<4x48xf32>
    %126 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%125, %100 : tensor<4x48xf32>, tensor<4x48xf32>) outs(%97 : tensor<4x48xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<4x48xf32>
    %expanded_82 = tensor.expand_shape %126 [[0, 1], [2]] output_shape [1, 4, 48] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> into tensor<1x4x48xf32>
    %extracted_slice_83 = tensor.extract_slice %expanded_82[0, 0, 0] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %extracted_slice_84 = tensor.extract_slice %expanded_82[0, 0, 16] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %extracted_slice_85 = tensor.extract_slice %expanded_82[0, 0, 32] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %127 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_83, %extracted_slice_78 : tensor<1x4x16xf32>, tensor<4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %128 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%127 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.negf %in : f32
      %210 = math.exp %209 : f32
      %211 = arith.addf %210, %cst_2 : f32
      %212 = arith.divf %cst_2, %211 : f32
      linalg.yield %212 : f32
    } -> tensor<1x4x16xf32>
    %129 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_84, %extracted_slice_79 : tensor<1x4x16xf32>, tensor<4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %130 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%129 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.negf %in : f32
      %210 = math.exp %209 : f32
      %211 = arith.addf %210, %cst_2 : f32
      %212 = arith.divf %cst_2, %211 : f32
      linalg.yield %212 : f32
    } -> tensor<1x4x16xf32>
    %131 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_85, %128 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %132 = linalg.generic {indexing_maps = [#map8, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_80, %131 : tensor<4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %133 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%132 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = math.tanh %in : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %134 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%124, %133 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.subf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %135 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%134, %130 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %136 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%135, %133 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %extracted_slice_86 = tensor.extract_slice %collapsed_59[0, 0] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %extracted_slice_87 = tensor.extract_slice %collapsed_59[0, 16] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %extracted_slice_88 = tensor.extract_slice %collapsed_59[0, 32] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %collapsed_89 = tensor.collapse_shape %136 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x16xf32> into tensor<4x16xf32>
    %137 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%collapsed_89, %transposed_65 : tensor<4x16xf32>, tensor<16x48xf32>) outs(%98 : tensor<4x48xf32>) -> tensor<4x48xf32>
    %138 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%137, %100 : tensor<4x48xf32>, tensor<4x48xf32>) outs(%97 : tensor<4x48xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<4x48xf32>
    %expanded_90 = tensor.expand_shape %138 [[0, 1], [2]] output_shape [1, 4, 48] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> into tensor<1x4x48xf32>
    %extracted_slice_91 = tensor.extract_slice %expanded_90[0, 0, 0] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %extracted_slice_92 = tensor.extract_slice %expanded_90[0, 0, 16] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %extracted_slice_93 = tensor.extract_slice %expanded_90[0, 0, 32] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %139 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_91, %extracted_slice_86 : tensor<1x4x16xf32>, tensor<4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %140 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%139 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.negf %in : f32
      %210 = math.exp %209 : f32
      %211 = arith.addf %210, %cst_2 : f32
      %212 = arith.divf %cst_2, %211 : f32
      linalg.yield %212 : f32
    } -> tensor<1x4x16xf32>
    %141 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_92, %extracted_slice_87 : tensor<1x4x16xf32>, tensor<4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %142 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%141 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.negf %in : f32
      %210 = math.exp %209 : f32
      %211 = arith.addf %210, %cst_2 : f32
      %212 = arith.divf %cst_2, %211 : f32
      linalg.yield %212 : f32
    } -> tensor<1x4x16xf32>
    %143 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_93, %140 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %144 = linalg.generic {indexing_maps = [#map8, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_88, %143 : tensor<4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %145 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%144 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = math.tanh %in : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %146 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%136, %145 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.subf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %147 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%146, %142 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %148 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%147, %145 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %extracted_slice_94 = tensor.extract_slice %collapsed_60[0, 0] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %extracted_slice_95 = tensor.extract_slice %collapsed_60[0, 16] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %extracted_slice_96 = tensor.extract_slice %collapsed_60[0, 32] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %collapsed_97 = tensor.collapse_shape %148 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x16xf32> into tensor<4x16xf32>
    %149 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%collapsed_97, %transposed_65 : tensor<4x16xf32>, tensor<16x48xf32>) outs(%98 : tensor<4x48xf32>) -> tensor<4x48xf32>
    %150 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%149, %100 : tensor<4x48xf32>, tensor<4x48xf32>) outs(%97 : tensor<4x48xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<4x48xf32>
    %expanded_98 = tensor.expand_shape %150 [[0, 1], [2]] output_shape [1, 4, 48] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> into tensor<1x4x48xf32>
    %extracted_slice_99 = tensor.extract_slice %expanded_98[0, 0, 0] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %extracted_slice_100 = tensor.extract_slice %expanded_98[0, 0, 16] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %extracted_slice_101 = tensor.extract_slice %expanded_98[0, 0, 32] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %151 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_99, %extracted_slice_94 : tensor<1x4x16xf32>, tensor<4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %152 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%151 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.negf %in : f32
      %210 = math.exp %209 : f32
      %211 = arith.addf %210, %cst_2 : f32
      %212 = arith.divf %cst_2, %211 : f32
      linalg.yield %212 : f32
    } -> tensor<1x4x16xf32>
    %153 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_100, %extracted_slice_95 : tensor<1x4x16xf32>, tensor<4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %154 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%153 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.negf %in : f32
      %210 = math.exp %209 : f32
      %211 = arith.addf %210, %cst_2 : f32
      %212 = arith.divf %cst_2, %211 : f32
      linalg.yield %212 : f32
    } -> tensor<1x4x16xf32>
    %155 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_101, %152 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %156 = linalg.generic {indexing_maps = [#map8, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_96, %155 : tensor<4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %157 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%156 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = math.tanh %in : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %158 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%148, %157 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.subf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %159 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%158, %154 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %160 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%159, %157 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %extracted_slice_102 = tensor.extract_slice %collapsed_61[0, 0] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %extracted_slice_103 = tensor.extract_slice %collapsed_61[0, 16] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %extracted_slice_104 = tensor.extract_slice %collapsed_61[0, 32] [4, 16] [1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> to tensor<4x16xf32>
    %collapsed_105 = tensor.collapse_shape %160 [[0, 1], [2]] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x16xf32> into tensor<4x16xf32>
    %161 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%collapsed_105, %transposed_65 : tensor<4x16xf32>, tensor<16x48xf32>) outs(%98 : tensor<4x48xf32>) -> tensor<4x48xf32>
    %162 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%161, %100 : tensor<4x48xf32>, tensor<4x48xf32>) outs(%97 : tensor<4x48xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<4x48xf32>
    %expanded_106 = tensor.expand_shape %162 [[0, 1], [2]] output_shape [1, 4, 48] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x48xf32> into tensor<1x4x48xf32>
    %extracted_slice_107 = tensor.extract_slice %expanded_106[0, 0, 0] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %extracted_slice_108 = tensor.extract_slice %expanded_106[0, 0, 16] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %extracted_slice_109 = tensor.extract_slice %expanded_106[0, 0, 32] [1, 4, 16] [1, 1, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<1x4x48xf32> to tensor<1x4x16xf32>
    %163 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_107, %extracted_slice_102 : tensor<1x4x16xf32>, tensor<4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %164 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%163 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.negf %in : f32
      %210 = math.exp %209 : f32
      %211 = arith.addf %210, %cst_2 : f32
      %212 = arith.divf %cst_2, %211 : f32
      linalg.yield %212 : f32
    } -> tensor<1x4x16xf32>
    %165 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_108, %extracted_slice_103 : tensor<1x4x16xf32>, tensor<4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %166 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%165 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.negf %in : f32
      %210 = math.exp %209 : f32
      %211 = arith.addf %210, %cst_2 : f32
      %212 = arith.divf %cst_2, %211 : f32
      linalg.yield %212 : f32
    } -> tensor<1x4x16xf32>
    %167 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_109, %164 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %168 = linalg.generic {indexing_maps = [#map8, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_104, %167 : tensor<4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %169 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%168 : tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = math.tanh %in : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %170 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%160, %169 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.subf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %171 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%170, %166 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.mulf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %172 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%171, %169 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%102 : tensor<1x4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<1x4x16xf32>
    %concat = tensor.concat dim(0) %112, %124, %136, %148, %160, %172 {epl.scope = #epl.replicate<devices = 1, name = "s1">} : (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<6x4x16xf32>
    %173 = tensor.empty() : tensor<4x16xf32>
    %174 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%cst : f32) outs(%173 : tensor<4x16xf32>) -> tensor<4x16xf32>
    %175 = linalg.generic {indexing_maps = [#map5, #map8], iterator_types = ["reduction", "parallel", "parallel"]} ins(%concat : tensor<6x4x16xf32>) outs(%174 : tensor<4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.addf %in, %out : f32
      linalg.yield %209 : f32
    } -> tensor<4x16xf32>
    %176 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%175 : tensor<4x16xf32>) outs(%173 : tensor<4x16xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.divf %in, %cst_12 : f32
      linalg.yield %209 : f32
    } -> tensor<4x16xf32>
    %177 = tensor.empty() : tensor<16x3xf32>
    %transposed_110 = linalg.transpose ins(%arg16 : tensor<3x16xf32>) outs(%177 : tensor<16x3xf32>) permutation = [1, 0]  {epl.scope = #epl.replicate<devices = 1, name = "s1">}
    %178 = tensor.empty() : tensor<4x3xf32>
    %179 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%cst : f32) outs(%178 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %180 = linalg.matmul {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%176, %transposed_110 : tensor<4x16xf32>, tensor<16x3xf32>) outs(%179 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %181 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg17 : tensor<3xf32>) outs(%178 : tensor<4x3xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4x3xf32>
    %182 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%180, %181 : tensor<4x3xf32>, tensor<4x3xf32>) outs(%178 : tensor<4x3xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.addf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<4x3xf32>
    %183 = tensor.empty() : tensor<4xi64>
    %184 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%c0_i64 : i64) outs(%183 : tensor<4xi64>) -> tensor<4xi64>
    %185 = tensor.empty() : tensor<4xf32>
    %186 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%cst_0 : f32) outs(%185 : tensor<4xf32>) -> tensor<4xf32>
    %187:2 = linalg.generic {indexing_maps = [#map1, #map9, #map9], iterator_types = ["parallel", "reduction"]} ins(%182 : tensor<4x3xf32>) outs(%186, %184 : tensor<4xf32>, tensor<4xi64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32, %out_114: i64):
      %209 = linalg.index 1 : index
      %210 = arith.index_cast %209 : index to i64
      %211 = arith.maximumf %in, %out : f32
      %212 = arith.cmpf ogt, %in, %out : f32
      %213 = arith.select %212, %210, %out_114 : i64
      linalg.yield %211, %213 : f32, i64
    } -> (tensor<4xf32>, tensor<4xi64>)
    %expanded_111 = tensor.expand_shape %187#0 [[0, 1]] output_shape [4, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4xf32> into tensor<4x1xf32>
    %188 = linalg.generic {indexing_maps = [#map1, #map10, #map1], iterator_types = ["parallel", "parallel"]} ins(%182, %expanded_111 : tensor<4x3xf32>, tensor<4x1xf32>) outs(%178 : tensor<4x3xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.subf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<4x3xf32>
    %189 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%188 : tensor<4x3xf32>) outs(%178 : tensor<4x3xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = math.exp %in : f32
      linalg.yield %209 : f32
    } -> tensor<4x3xf32>
    %190 = tensor.empty() : tensor<4x1xf32>
    %191 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%cst : f32) outs(%190 : tensor<4x1xf32>) -> tensor<4x1xf32>
    %192 = linalg.generic {indexing_maps = [#map1, #map10], iterator_types = ["parallel", "reduction"]} ins(%189 : tensor<4x3xf32>) outs(%191 : tensor<4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.addf %in, %out : f32
      linalg.yield %209 : f32
    } -> tensor<4x1xf32>
    %193 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%192 : tensor<4x1xf32>) outs(%190 : tensor<4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = math.log %in : f32
      linalg.yield %209 : f32
    } -> tensor<4x1xf32>
    %194 = linalg.generic {indexing_maps = [#map1, #map10, #map1], iterator_types = ["parallel", "parallel"]} ins(%188, %193 : tensor<4x3xf32>, tensor<4x1xf32>) outs(%178 : tensor<4x3xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.subf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<4x3xf32>
    %195 = tensor.empty() : tensor<4xi1>
    %196 = linalg.generic {indexing_maps = [#map11, #map11], iterator_types = ["parallel"]} ins(%arg19 : tensor<4xi64>) outs(%195 : tensor<4xi1>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: i64, %out: i1):
      %209 = arith.cmpi ne, %in, %c-100_i64 : i64
      linalg.yield %209 : i1
    } -> tensor<4xi1>
    %197 = linalg.generic {indexing_maps = [#map11, #map11, #map12, #map11], iterator_types = ["parallel"]} ins(%196, %arg19, %cst_13 : tensor<4xi1>, tensor<4xi64>, tensor<i64>) outs(%183 : tensor<4xi64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: i1, %in_114: i64, %in_115: i64, %out: i64):
      %209 = arith.select %in, %in_114, %in_115 : i64
      linalg.yield %209 : i64
    } -> tensor<4xi64>
    %expanded_112 = tensor.expand_shape %197 [[0, 1]] output_shape [4, 1] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4xi64> into tensor<4x1xi64>
    %198 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%expanded_112 : tensor<4x1xi64>) outs(%191 : tensor<4x1xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: i64, %out: f32):
      %209 = linalg.index 0 : index
      %210 = arith.index_cast %in : i64 to index
      %211 = arith.cmpi slt, %210, %c3 : index
      cf.assert %211, "index must be smaller than dim size"
      %212 = arith.cmpi sge, %in, %c0_i64 : i64
      cf.assert %212, "index must be larger or equal to 0"
      %extracted = tensor.extract %194[%209, %210] : tensor<4x3xf32>
      linalg.yield %extracted : f32
    } -> tensor<4x1xf32>
    %collapsed_113 = tensor.collapse_shape %198 [[0, 1]] {epl.scope = #epl.replicate<devices = 1, name = "s1">} : tensor<4x1xf32> into tensor<4xf32>
    %199 = linalg.generic {indexing_maps = [#map11, #map11], iterator_types = ["parallel"]} ins(%collapsed_113 : tensor<4xf32>) outs(%185 : tensor<4xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.negf %in : f32
      linalg.yield %209 : f32
    } -> tensor<4xf32>
    %200 = linalg.generic {indexing_maps = [#map11, #map11, #map12, #map11], iterator_types = ["parallel"]} ins(%196, %199, %cst_3 : tensor<4xi1>, tensor<4xf32>, tensor<f32>) outs(%185 : tensor<4xf32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: i1, %in_114: f32, %in_115: f32, %out: f32):
      %209 = arith.select %in, %in_114, %in_115 : f32
      linalg.yield %209 : f32
    } -> tensor<4xf32>
    %201 = tensor.empty() : tensor<i64>
    %202 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%c0_i64 : i64) outs(%201 : tensor<i64>) -> tensor<i64>
    %203 = linalg.generic {indexing_maps = [#map11, #map12], iterator_types = ["reduction"]} ins(%196 : tensor<4xi1>) outs(%202 : tensor<i64>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: i1, %out: i64):
      %209 = arith.extui %in : i1 to i64
      %210 = arith.addi %209, %out : i64
      linalg.yield %210 : i64
    } -> tensor<i64>
    %204 = tensor.empty() : tensor<f32>
    %205 = linalg.generic {indexing_maps = [#map13, #map13], iterator_types = []} ins(%203 : tensor<i64>) outs(%204 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: i64, %out: f32):
      %209 = arith.sitofp %in : i64 to f32
      linalg.yield %209 : f32
    } -> tensor<f32>
    %206 = linalg.fill {epl.scope = #epl.replicate<devices = 1, name = "s1">} ins(%cst : f32) outs(%204 : tensor<f32>) -> tensor<f32>
    %207 = linalg.generic {indexing_maps = [#map11, #map12], iterator_types = ["reduction"]} ins(%200 : tensor<4xf32>) outs(%206 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %out: f32):
      %209 = arith.addf %in, %out : f32
      linalg.yield %209 : f32
    } -> tensor<f32>
    %208 = linalg.generic {indexing_maps = [#map13, #map13, #map13], iterator_types = []} ins(%207, %205 : tensor<f32>, tensor<f32>) outs(%204 : tensor<f32>) attrs =  {epl.scope = #epl.replicate<devices = 1, name = "s1">} {
    ^bb0(%in: f32, %in_114: f32, %out: f32):
      %209 = arith.divf %in, %in_114 : f32
      linalg.yield %209 : f32
    } -> tensor<f32>
    return %208 : tensor<f32>
  }
}
