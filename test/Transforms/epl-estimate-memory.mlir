// RUN: epl-opt %s -split-input-file --epl-estimate-memory | FileCheck %s
// RUN: epl-opt %s -split-input-file --epl-estimate-memory -o /dev/null | FileCheck %s --check-prefix=PRINT
// RUN: epl-opt %s -split-input-file --epl-estimate-memory=arguments-around-use=1 -o /dev/null | FileCheck %s --check-prefix=AROUND
// RUN: epl-opt %S/Inputs/linear.mlir --epl-training-step --epl-estimate-memory -o /dev/null | FileCheck %s --check-prefix=STEP
// RUN: epl-opt %s -split-input-file --epl-estimate-memory=blas=0 -o /dev/null | FileCheck %s --check-prefix=NOBLAS
// RUN: epl-opt %S/Inputs/linear.mlir --epl-training-step --epl-estimate-memory="print=false" | FileCheck %s --check-prefix=ATTR
// RUN: epl-opt %s -split-input-file --epl-estimate-memory="explain=1 print=0" -o /dev/null | FileCheck %s --check-prefix=EXPLAIN

// A training step: a linear layer (x: 4x3, w: 3x2) with momentum SGD.
// Parameters, optimizer state and inputs are its tagged arguments; the
// gradient is what the update reads (24 bytes). The new parameter and
// momentum are built in the runner's result buffers, not counted. epl-run
// measures 192 too.
// STEP: memory estimate @linear: params 24 B, opt_state 24 B, inputs 80 B, grads 24 B, peak buffers 192 B (192 bytes)
// ATTR: func.func @linear
// ATTR-SAME: epl.memory_estimate = {grads = 24 : i64, inputs = 80 : i64, opt_state = 24 : i64, params = 24 : i64, peak = 192 : i64}

// Every buffer the lowering allocates is counted with the 64 bytes of its
// alignment: a tensor<4x4xf32> is 64 + 64 bytes. epl-run measures these
// same numbers (its peak_bytes) for each function here.

// An op writes into its destination when nothing reads that buffer later:
// the negation cannot overwrite %x (the add reads %x after it), the add
// overwrites the negation. %x is built in the result buffer the runner
// passes (the chain of destinations from the returned %z ends at %e), so
// the step's own buffer is the negation's (64 + 64); the add's result is
// copied into the result buffer.

// CHECK-LABEL: func.func @in_place
// CHECK-SAME: epl.memory_estimate = {grads = 0 : i64, inputs = 64 : i64, opt_state = 0 : i64, params = 0 : i64, peak = 128 : i64}
// PRINT: memory estimate @in_place: params 0 B, opt_state 0 B, inputs 64 B, grads 0 B, peak buffers 128 B (128 bytes)
func.func @in_place(%a: tensor<4x4xf32> {epl.arg = "input"}) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %x = linalg.exp ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.negf ins(%x : tensor<4x4xf32>) outs(%x : tensor<4x4xf32>) -> tensor<4x4xf32>
  %z = linalg.add ins(%x, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%y : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %z : tensor<4x4xf32>
}

// -----

// The entry's arguments are read-only: writing into %a writes into a copy
// the runner makes for the whole call (128). An empty tensor's buffer is
// reused by its next user when nothing reads it after (%z into %y's); the
// scalar result is built in the runner's result buffer.

// CHECK-LABEL: func.func @arguments_and_empties
// CHECK-SAME: peak = 256 : i64
func.func @arguments_and_empties(%a: tensor<4x4xf32>) -> tensor<f32> {
  %x = linalg.exp ins(%a : tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %y = linalg.exp ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %z = linalg.exp ins(%y : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = tensor.empty() : tensor<f32>
  %r = linalg.reduce ins(%z : tensor<4x4xf32>) outs(%s : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  return %r : tensor<f32>
}

// -----

// A call's results are buffers the caller allocates without alignment
// (64); the callee's own buffers (128) add to the caller's during the call.
// A slice is a view, but one passed to a call is copied (16 + 64).

// CHECK-LABEL: func.func @caller
// CHECK-SAME: peak = 272 : i64
// PRINT-NOT: @piece
// PRINT: memory estimate @caller: {{.*}}peak buffers 272 B (272 bytes)
// With explain, what holds that peak: during the call, the callee's own
// buffers, the contiguous copy of the strided slice it is passed, and the
// result buffer the caller allocates for it.
// EXPLAIN: memory estimate @caller: peak 272 bytes at 'func.call' at {{.*}}epl-estimate-memory.mlir:[[#@LINE+13]]:8, held by:
// EXPLAIN-NEXT: 128 bytes: during 'func.call' at {{.*}}: the callee's own buffers
// EXPLAIN-NEXT: 80 bytes: during 'func.call' at {{.*}}: a contiguous copy of a strided operand
// EXPLAIN-NEXT: 64 bytes: the result of 'func.call' at {{.*}}
// EXPLAIN-NEXT: memory estimate @
func.func private @piece(%a: tensor<4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.broadcast ins(%a : tensor<4xf32>) outs(%e : tensor<4x4xf32>) dimensions = [0]
  %r = linalg.exp ins(%t : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
func.func @caller(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %s = tensor.extract_slice %a[1, 0] [1, 4] [1, 1] : tensor<4x4xf32> to tensor<4xf32>
  %r = func.call @piece(%s) : (tensor<4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// A value used inside a loop lives to the loop's end; a buffer made in the
// body dies in the body. %c's buffer (128) is live through the loop, the
// accumulator is written in place, in the result buffer (the loop's init
// is built there), the body's %t (128) lives one iteration.

// CHECK-LABEL: func.func @loop
// CHECK-SAME: peak = 256 : i64
func.func @loop(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<4x4xf32>
  %c = linalg.exp ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %init = linalg.negf ins(%a : tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> tensor<4x4xf32> {
    %e3 = tensor.empty() : tensor<4x4xf32>
    %t = linalg.exp ins(%c : tensor<4x4xf32>) outs(%e3 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %n = linalg.add ins(%acc, %t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
    scf.yield %n : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// An all-reduce writes its sum over its contributions when nothing reads
// them after (epl-all-reduce-in-place): no buffer of its own (@in_place_sum,
// 64 + 64). When they are read after, the sum has its own, allocated
// without alignment (@kept_sum: 128 + 64).
#all = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>
module {
  epl.mesh @mesh ["data" = 2]
  // CHECK-LABEL: func.func @in_place_sum
  // CHECK-SAME: peak = 128 : i64
  func.func @in_place_sum(%a: tensor<4x4xf32> {epl.arg = "input"}) -> tensor<f32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %g = linalg.exp ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %s = epl.all_reduce %g on @mesh over ["data"] sum : tensor<4x4xf32>
    %zero = arith.constant 0.0 : f32
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %t = linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction", "reduction"]}
        ins(%s : tensor<4x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %r = arith.addf %acc, %v : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %t : tensor<f32>
  }
  // CHECK-LABEL: func.func @kept_sum
  // CHECK-SAME: peak = 192 : i64
  func.func @kept_sum(%a: tensor<4x4xf32> {epl.arg = "input"}) -> tensor<f32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %g = linalg.exp ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %s = epl.all_reduce %g on @mesh over ["data"] sum : tensor<4x4xf32>
    %zero = arith.constant 0.0 : f32
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %t = linalg.generic {indexing_maps = [#all, #all, #none], iterator_types = ["reduction", "reduction"]}
        ins(%s, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%v: f32, %w: f32, %acc: f32):
      %m = arith.mulf %v, %w : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %t : tensor<f32>
  }
}

// -----

// A sent buffer dies at its send (the sender copies it out), unless the
// send is grouped: NCCL reads it when the group goes, at the end of its run
// of messages, and the runtime holds back its free until then. Here the
// run's receive allocates while %x still lives: 192 bytes at once instead
// of 128 (the sums are built in the runner's result buffer).

epl.mesh @mesh ["stage" = 2]

// CHECK-LABEL: func.func @plain_send
// CHECK-SAME: peak = 128 : i64
func.func @plain_send(%a: tensor<4x4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %x = linalg.exp ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  epl.send %x on @mesh over ["stage"] to 1 : tensor<4x4xf32>
  %r = epl.recv on @mesh over ["stage"] from 1 : tensor<4x4xf32>
  %s = tensor.empty() : tensor<f32>
  %sum = linalg.reduce ins(%r : tensor<4x4xf32>) outs(%s : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  return %sum : tensor<f32>
}

// CHECK-LABEL: func.func @grouped_send
// CHECK-SAME: peak = 192 : i64
func.func @grouped_send(%a: tensor<4x4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %x = linalg.exp ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  epl.send %x on @mesh over ["stage"] to 1 grouped : tensor<4x4xf32>
  %r = epl.recv on @mesh over ["stage"] from 1 grouped : tensor<4x4xf32>
  %s = tensor.empty() : tensor<f32>
  %sum = linalg.reduce ins(%r : tensor<4x4xf32>) outs(%s : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  return %sum : tensor<f32>
}

// -----

// With arguments-around-use (a GPU step under offload v0), each argument's
// device copy is a buffer from its first use to its last, and so is a
// result's from its first write: %a (64) only during the exp, %b (64) and
// the result %y (64, built in its buffer) from the add on. With %x (128)
// that is 192 at the exp and 256 at the add; without, 128.

// CHECK-LABEL: func.func @around_use
// CHECK-SAME: peak = 128 : i64
// AROUND: memory estimate @around_use: {{.*}} peak buffers 256 B (256 bytes)
func.func @around_use(%a: tensor<4x4xf32> {epl.arg = "input"},
                      %b: tensor<4x4xf32> {epl.arg = "input"}) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %x = linalg.exp ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %f = tensor.empty() : tensor<4x4xf32>
  %y = linalg.add ins(%x, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// An update written over its argument shares the argument's device copy:
// %w (64) from the exp to the update, the update's result (built in its
// buffer) nothing more; the loss (4) from its write on. 64 + 128 (%x) at
// the exp.

// AROUND: memory estimate @update_over_argument: {{.*}} peak buffers 196 B (196 bytes)
func.func @update_over_argument(%w: tensor<4x4xf32> {epl.arg = "param", epl.name = "w"})
    -> (tensor<f32> {epl.result = "loss"},
        tensor<4x4xf32> {epl.result = "param", epl.name = "w"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %x = linalg.exp ins(%w : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %el = tensor.empty() : tensor<f32>
  %fl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%x : tensor<4x4xf32>) outs(%fl : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %u = tensor.empty() : tensor<4x4xf32>
  %w2 = linalg.sub ins(%w, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%u : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %l, %w2 : tensor<f32>, tensor<4x4xf32>
}

// -----

// A scatter-add as the lowering writes it (a loop over ids, a bounds check
// around each update): `scf.if` yields its branches' buffers, and the
// insert in one branch does not conflict with the other branch's yield of
// the same buffer. One buffer, the filled table (16 + 64); the result is
// built in the runner's buffer. epl-run measures 80.

// CHECK-LABEL: func.func @branch_in_place
// CHECK-SAME: peak = 80 : i64
func.func @branch_in_place(%v: tensor<2xf32> {epl.arg = "input", epl.name = "v"},
                           %i: tensor<2xi64> {epl.arg = "input", epl.name = "i"}) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %t = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %t) -> (tensor<4xf32>) {
    %id = tensor.extract %i[%k] : tensor<2xi64>
    %j = arith.index_cast %id : i64 to index
    %ok = arith.cmpi ult, %j, %c4 : index
    %n = scf.if %ok -> (tensor<4xf32>) {
      %x = tensor.extract %v[%k] : tensor<2xf32>
      %y = tensor.extract %acc[%j] : tensor<4xf32>
      %s = arith.addf %x, %y : f32
      %ins = tensor.insert %s into %acc[%j] : tensor<4xf32>
      scf.yield %ins : tensor<4xf32>
    } else {
      scf.yield %acc : tensor<4xf32>
    }
    scf.yield %n : tensor<4xf32>
  }
  %e2 = tensor.empty() : tensor<4xf32>
  %out = linalg.exp ins(%r : tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  return %out : tensor<4xf32>
}

// -----

// An empty tensor read as an input (a pooling's window, whose payload
// ignores it) is still a buffer of the lowering (16 + 64). epl-run
// measures 80.

// CHECK-LABEL: func.func @unwritten_input
// CHECK-SAME: peak = 80 : i64
func.func @unwritten_input(%a: tensor<4x4xf32> {epl.arg = "input", epl.name = "a"}) -> tensor<2x2xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %w = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(i, j, k, l) -> (2 * i + k, 2 * j + l)>,
                                        affine_map<(i, j, k, l) -> (k, l)>,
                                        affine_map<(i, j, k, l) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %w : tensor<4x4xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) {
  ^bb0(%in: f32, %win: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<2x2xf32>
  return %p : tensor<2x2xf32>
}

// -----

// Empty-tensor elimination, as the lowering runs it: %x, later inserted
// into the filled %b, is built in %b's slice, so %b (32 + 64) lives from
// %x's write, beside %t (16 + 64), and the insert copies nothing: 176.
// (Without it, %x, %t and %b would be 256.) epl-run measures 176.

// CHECK-LABEL: func.func @built_in_place_of_insert
// CHECK-SAME: peak = 176 : i64
func.func @built_in_place_of_insert(%a: tensor<4xf32> {epl.arg = "input", epl.name = "a"})
    -> (tensor<8xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.exp ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %t = linalg.negf ins(%a : tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %eb = tensor.empty() : tensor<8xf32>
  %b = linalg.fill ins(%zero : f32) outs(%eb : tensor<8xf32>) -> tensor<8xf32>
  %s = tensor.insert_slice %x into %b[0] [4] [2] : tensor<4xf32> into tensor<8xf32>
  %er = tensor.empty() : tensor<8xf32>
  %r = linalg.exp ins(%s : tensor<8xf32>) outs(%er : tensor<8xf32>) -> tensor<8xf32>
  %er2 = tensor.empty() : tensor<4xf32>
  %r2 = linalg.exp ins(%t : tensor<4xf32>) outs(%er2 : tensor<4xf32>) -> tensor<4xf32>
  return %r, %r2 : tensor<8xf32>, tensor<4xf32>
}

// -----

// The same insert when %b is read after it: %x cannot be built in %b's
// slice (that would change what the later read sees), so it has a buffer
// of its own (16 + 64) and the insert copies %b (32 + 64) beside %b:
// 80 + 96 + 96 = 272. epl-run measures 272.

// CHECK-LABEL: func.func @insert_of_a_read_tensor
// CHECK-SAME: peak = 272 : i64
func.func @insert_of_a_read_tensor(%a: tensor<4xf32> {epl.arg = "input", epl.name = "a"})
    -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %eb = tensor.empty() : tensor<8xf32>
  %b = linalg.fill ins(%zero : f32) outs(%eb : tensor<8xf32>) -> tensor<8xf32>
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.exp ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = tensor.insert_slice %x into %b[0] [4] [2] : tensor<4xf32> into tensor<8xf32>
  %er = tensor.empty() : tensor<8xf32>
  %r = linalg.exp ins(%s : tensor<8xf32>) outs(%er : tensor<8xf32>) -> tensor<8xf32>
  %er2 = tensor.empty() : tensor<8xf32>
  %r2 = linalg.exp ins(%b : tensor<8xf32>) outs(%er2 : tensor<8xf32>) -> tensor<8xf32>
  return %r, %r2 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Branches run one after the other in a loop: the then-branch's negation
// cannot overwrite %t, which the else-branch of a later iteration reads,
// so it writes a copy (16 + 64) beside %t and the sum: 160 (epl-run
// measures 160 where both branches run).

// CHECK-LABEL: func.func @branches_in_a_loop
// CHECK-SAME: peak = 160 : i64
func.func @branches_in_a_loop(%a: tensor<4xf32> {epl.arg = "input", epl.name = "a"},
                              %f: tensor<2xf32> {epl.arg = "input", epl.name = "f"}) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<4xf32>
  %t = linalg.exp ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %r = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %z) -> (tensor<4xf32>) {
    %v = tensor.extract %f[%k] : tensor<2xf32>
    %c = arith.cmpf ogt, %v, %zero : f32
    %n = scf.if %c -> (tensor<4xf32>) {
      %w = linalg.negf ins(%a : tensor<4xf32>) outs(%t : tensor<4xf32>) -> tensor<4xf32>
      %s = linalg.add ins(%w, %acc : tensor<4xf32>, tensor<4xf32>) outs(%acc : tensor<4xf32>) -> tensor<4xf32>
      scf.yield %s : tensor<4xf32>
    } else {
      %s = linalg.add ins(%t, %acc : tensor<4xf32>, tensor<4xf32>) outs(%acc : tensor<4xf32>) -> tensor<4xf32>
      scf.yield %s : tensor<4xf32>
    }
    scf.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// An `scf.if` that may yield the argument %a has no buffer to write in:
// the insert copies it (16 + 64), beside the exp the other branch made:
// 160 (epl-run measures 160 when that branch runs).

// CHECK-LABEL: func.func @branch_yielding_an_argument
// CHECK-SAME: peak = 160 : i64
func.func @branch_yielding_an_argument(%a: tensor<4xf32> {epl.arg = "input", epl.name = "a"},
                                       %f: tensor<f32> {epl.arg = "input", epl.name = "f"})
    -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %v = tensor.extract %f[] : tensor<f32>
  %c = arith.cmpf ogt, %v, %zero : f32
  %r = scf.if %c -> (tensor<4xf32>) {
    scf.yield %a : tensor<4xf32>
  } else {
    %e = tensor.empty() : tensor<4xf32>
    %x = linalg.exp ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %x : tensor<4xf32>
  }
  %w = tensor.insert %zero into %r[%c0] : tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %y = linalg.exp ins(%w : tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %e3 = tensor.empty() : tensor<4xf32>
  %z = linalg.exp ins(%a : tensor<4xf32>) outs(%e3 : tensor<4xf32>) -> tensor<4xf32>
  return %y, %z : tensor<4xf32>, tensor<4xf32>
}

// -----

// A contraction the runtime's GEMM runs, whose result (b, n, h) is no
// matrix BLAS reads in place (the rows b and h are not one strided
// dimension): the GEMM writes a contiguous copy (2 x 4 x 3 floats, no
// alignment), 96, during it; without BLAS none. epl-run measures 96 (and
// 0 with --blas=false).

// CHECK-LABEL: func.func @staged_gemm_output
// CHECK-SAME: peak = 96 : i64
// NOBLAS: memory estimate @staged_gemm_output: {{.*}} peak buffers 0 B (0 bytes)
func.func @staged_gemm_output(%a: tensor<2x4x5xf32> {epl.arg = "input", epl.name = "a"},
                              %w: tensor<5x3xf32> {epl.arg = "input", epl.name = "w"})
    -> tensor<2x3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(b, h, n, k) -> (b, h, k)>,
                                        affine_map<(b, h, n, k) -> (k, n)>,
                                        affine_map<(b, h, n, k) -> (b, n, h)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<2x4x5xf32>, tensor<5x3xf32>) outs(%z : tensor<2x3x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4xf32>
  return %c : tensor<2x3x4xf32>
}
