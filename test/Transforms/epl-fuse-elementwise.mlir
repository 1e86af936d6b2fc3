// RUN: epl-opt %s --epl-decompose-aggregates --epl-fuse-elementwise --split-input-file | FileCheck %s
// RUN: epl-opt %s --epl-decompose-aggregates --epl-fuse-elementwise="keep-contractions=false" --split-input-file | FileCheck %s --check-prefix=LOOPS
// RUN: epl-opt %s --epl-decompose-aggregates --epl-fuse-elementwise="split-target-threads=1024 split-min-per-thread=2" --split-input-file | FileCheck %s --check-prefix=SPLIT
// RUN: epl-opt %s --epl-decompose-aggregates --epl-fuse-elementwise="split-max-per-thread=4 split-min-per-thread=2" --split-input-file | FileCheck %s --check-prefix=SPLIT
// RUN: epl-opt %s --epl-decompose-aggregates --epl-fuse-elementwise="split-target-threads=1024" --split-input-file | FileCheck %s --check-prefix=SHORT

// A softmax decomposes into max, exp(x - max), sum and division: the
// exponentials are computed in the sum's loop, which also yields them for
// the division. Two loops read the logits, one the exponentials.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x16xf32>)
// CHECK: arith.maxnumf
// CHECK: %[[ES:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %[[MAX]] : tensor<8x16xf32>, tensor<8xf32>)
// CHECK: %[[E:.*]] = math.exp
// CHECK: %[[S:.*]] = arith.addf %[[E]]
// CHECK: linalg.yield %[[E]], %[[S]]
// CHECK: linalg.generic {{.*}} ins(%[[ES]]#0, %[[ES]]#1 :
// CHECK: arith.divf
// CHECK-NOT: linalg.generic
// Where epl-split-reductions would split the sum (8 rows, 1024 threads
// wanted, parts of 2 or more; or rows longer than 4, parts of 2 to 4), the
// exponentials the division reads too are a kernel of their own: fused, 8
// threads would write all 128, and the sum could not be split; the sum
// reads them. Where it would not (parts of 16 at least: a row of 16 makes
// one), they are fused, as without the options.
// SHORT-LABEL: func.func @softmax
// SHORT: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x16xf32>)
// SHORT: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %{{.*}} : tensor<8x16xf32>, tensor<8xf32>)
// SHORT: math.exp
// SHORT: arith.divf
// SHORT-NOT: linalg.generic
// SHORT: return
// SPLIT-LABEL: func.func @softmax
// SPLIT: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x16xf32>)
// SPLIT: %[[E:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg0, %[[MAX]] : tensor<8x16xf32>, tensor<8xf32>)
// SPLIT: math.exp
// SPLIT: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[E]] : tensor<8x16xf32>)
// SPLIT: linalg.generic {{.*}} ins(%[[E]], %[[S]] :
// SPLIT: arith.divf
func.func @softmax(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// A chain of element-wise ops (bias, GELU-like arithmetic, scale) and the
// row sum of its result are one loop nest; the bias is read through a
// broadcast, and the chain's inputs are what the fused op reads.
// CHECK-LABEL: func.func @chain_into_reduction
// CHECK: %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16xf32>)
// CHECK: arith.addf
// CHECK: math.tanh
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @chain_into_reduction(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %a = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %s = arith.addf %i, %j : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %h = math.tanh %i : f32
    %c = arith.constant 0.5 : f32
    %m = arith.mulf %h, %c : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %zero = linalg.fill ins(%z : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<8x16xf32>) outs(%zero : tensor<8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %s = arith.addf %i, %o : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A contraction reads its operands through projections: fusing the ReLU
// would compute it again for every column; nor is a producer the consumer
// broadcasts. A producer two ops read is computed once, in one loop with
// both of them, which yields their results and not the producer's.
// CHECK-LABEL: func.func @kept
// CHECK: %[[RELU:.*]] = linalg.generic
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} ins(%[[RELU]], %{{.*}} : tensor<8x16xf32>, tensor<16x4xf32>)
// CHECK: %[[BOTH:.*]]:2 = linalg.generic {{.*}} ins(%arg0 : tensor<8x16xf32>)
// CHECK: %[[EXP:.*]] = math.exp
// CHECK: %[[NEG:.*]] = arith.negf %[[EXP]]
// CHECK: %[[SQ:.*]] = arith.mulf %[[EXP]], %[[EXP]]
// CHECK: linalg.yield %[[NEG]], %[[SQ]]
// CHECK-NOT: math.exp
// CHECK: %[[ROW:.*]] = linalg.generic
// CHECK: math.log
// CHECK: linalg.generic {{.*}} ins(%[[ROW]] :
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @kept(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %v: tensor<8xf32>)
    -> (tensor<8x4xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %z = arith.constant 0.0 : f32
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.maximumf %i, %z : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %zero = linalg.fill ins(%z : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %mm = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%relu, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%zero : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %shared = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = math.exp %i : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  %u1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%shared : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.negf %i : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  %u2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%shared : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.mulf %i, %i : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %rowv = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%v : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = math.log %i : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %bc = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%rowv : tensor<8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.addf %i, %i : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  return %mm, %u1, %u2, %bc : tensor<8x4xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}
// CHECK: return %{{.*}}, %[[BOTH]]#0, %[[BOTH]]#1

// -----

// A dot product reads both operands through all its loops: BLAS runs it, so
// its operand stays a tensor, unless contractions are loops anyway.
// CHECK-LABEL: func.func @dot
// CHECK: %[[SQ:.*]] = linalg.generic
// CHECK: linalg.generic {{.*}} ins(%[[SQ]], %{{.*}} :
// LOOPS-LABEL: func.func @dot
// LOOPS: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}}, %{{.*}} : tensor<16xf32>, tensor<16xf32>)
// LOOPS: arith.mulf
// LOOPS: arith.mulf
// LOOPS: arith.addf
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
func.func @dot(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<16xf32>
  %sq = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.mulf %i, %i : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %zero = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %d = linalg.generic {indexing_maps = [#v, #v, #s], iterator_types = ["reduction"]}
      ins(%sq, %y : tensor<16xf32>, tensor<16xf32>) outs(%zero : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %d : tensor<f32>
}

// -----

// ReLU as max(h, zeros), the zeros also the init of the product before it
// (so they cannot fuse into the ReLU): the zeros are a broadcast of one
// scalar, which the ReLU reads instead of the tensor, no pass over a
// buffer of zeros.
#id = affine_map<(i, j) -> (i, j)>
#scalar = affine_map<(i, j) -> ()>
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
// CHECK-LABEL: func.func @relu
// CHECK:         %[[ZERO:.*]] = arith.constant 0.0
// CHECK:         %[[ZEROS:.*]] = linalg.generic {{.*}} ins(%[[ZERO]] : f32)
// CHECK:         %[[H:.*]] = linalg.generic {{.*}} outs(%[[ZEROS]] : tensor<4x8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[H]]
// CHECK-NEXT:    ^bb0(%[[IN:[^:]*]]: f32
// CHECK-NEXT:      arith.maximumf %[[IN]], %[[ZERO]] : f32
func.func @relu(%x: tensor<4x3xf32>, %w: tensor<3x8xf32>, %e: tensor<4x8xf32>)
    -> tensor<4x8xf32> {
  %z = arith.constant 0.0 : f32
  %zeros = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z : f32) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %h = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x3xf32>, tensor<3x8xf32>) outs(%zeros : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %zeros : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.maximumf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %relu : tensor<4x8xf32>
}

// -----

// A generic that writes its scalar into some elements only (the diagonal)
// is no fill: the consumer keeps reading the tensor.
#s1 = affine_map<(i) -> ()>
#diag = affine_map<(i) -> (i, i)>
#id2 = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @diagonal
// CHECK:         ^bb0(%[[A:[^:]*]]: f32, %[[B:[^:]*]]: f32,
// CHECK-NEXT:      arith.maximumf %[[A]], %[[B]] : f32
func.func @diagonal(%h: tensor<4x4xf32>, %e: tensor<4x4xf32>, %s: f32)
    -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %z = linalg.generic {indexing_maps = [#s1, #diag], iterator_types = ["parallel"]}
      ins(%s : f32) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h, %z : tensor<4x4xf32>, tensor<4x4xf32>) outs(%h : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.maximumf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  return %r, %z : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A contraction keeps its filled operand when BLAS runs contractions: read
// as a scalar it would be a contraction no more (and with a fill of 1.0 the
// multiplication folds away), left as loops.
#ma = affine_map<(i, j, k) -> (i, k)>
#mb = affine_map<(i, j, k) -> (k, j)>
#mc = affine_map<(i, j, k) -> (i, j)>
// CHECK-LABEL: func.func @filled_matmul
// CHECK:         arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    arith.addf
// LOOPS-LABEL: func.func @filled_matmul
// LOOPS:         ^bb0(%{{.*}}: f32, %[[W:[^:]*]]: f32, %[[OUT:[^:]*]]: f32):
// LOOPS-NEXT:      arith.addf %[[OUT]], %[[W]] : f32
func.func @filled_matmul(%w: tensor<3x8xf32>, %e: tensor<4x3xf32>, %acc: tensor<4x8xf32>)
    -> tensor<4x8xf32> {
  %one = arith.constant 1.0 : f32
  %ones = linalg.fill ins(%one : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %h = linalg.generic {indexing_maps = [#ma, #mb, #mc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ones, %w : tensor<4x3xf32>, tensor<3x8xf32>) outs(%acc : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %h : tensor<4x8xf32>
}

// -----

// A fill written as a generic that yields a value from above (upstream's
// "inlined" fill form) is one too: the ReLU reads its zero.
// CHECK-LABEL: func.func @inlined_fill
// CHECK: %[[Z:.*]] = arith.constant 0.0
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: arith.maximumf %{{.*}}, %[[Z]] : f32
#fid = affine_map<(i, j) -> (i, j)>
#fa = affine_map<(i, j, k) -> (i, k)>
#fb = affine_map<(i, j, k) -> (k, j)>
#fc = affine_map<(i, j, k) -> (i, j)>
func.func @inlined_fill(%x: tensor<4x3xf32>, %w: tensor<3x8xf32>, %e: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %z = arith.constant 0.0 : f32
  %zeros = linalg.generic {indexing_maps = [#fid], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<4x8xf32>) {
  ^bb0(%out: f32):
    linalg.yield %z : f32
  } -> tensor<4x8xf32>
  %h = linalg.generic {indexing_maps = [#fa, #fb, #fc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x3xf32>, tensor<3x8xf32>) outs(%zeros : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %relu = linalg.generic {indexing_maps = [#fid, #fid, #fid], iterator_types = ["parallel", "parallel"]}
      ins(%h, %zeros : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.maximumf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %relu : tensor<4x8xf32>
}
