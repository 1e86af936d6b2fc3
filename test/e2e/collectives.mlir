// A hand-written per-device (L3) program on a 2x2 mesh: every collective and
// a send/recv exchange on rank-dependent data, run on 4 ranks by threads and
// by MPI. check-collectives.py recomputes every result independently.
//
// REQUIRES: epl-jit
// RUN: epl-run %s --ranks 4 --dump-results %t.threads.safetensors | FileCheck %s
// RUN: %python %S/check-collectives.py %t.threads.safetensors
// RUN: %if mpi %{ %mpirun -np 4 epl-run %s --dump-results %t.mpi.safetensors %}
// RUN: %if mpi %{ %python %S/check-collectives.py %t.mpi.safetensors --same-as %t.threads.safetensors %}
// CHECK: epl-run: 1 step of @main on 4 ranks (threads)

epl.mesh @mesh ["data" = 2, "tensor" = 2]

func.func @main() -> (tensor<4x8xf32>, tensor<4x16xf32>, tensor<8x8xf32>,
                      tensor<4x2xf32>, tensor<8x4xf32>, tensor<4x8xf32>,
                      tensor<4x8xf32>, tensor<4x8xf32>, tensor<3xi32>) {
  // x[i, j] = 100 * rank + 8 * i + j, rank = 2 * data + tensor.
  %rank = epl.group_index on @mesh over ["data", "tensor"]
  %x = tensor.generate {
  ^bb0(%i: index, %j: index):
    %c100 = arith.constant 100 : index
    %c8 = arith.constant 8 : index
    %r = arith.muli %rank, %c100 : index
    %row = arith.muli %i, %c8 : index
    %s = arith.addi %r, %row : index
    %v = arith.addi %s, %j : index
    %vi = arith.index_cast %v : index to i64
    %vf = arith.sitofp %vi : i64 to f32
    tensor.yield %vf : f32
  } : tensor<4x8xf32>

  %sum = epl.all_reduce %x on @mesh over ["tensor"] sum : tensor<4x8xf32>
  %cols = epl.all_gather %x on @mesh over ["tensor"] dim 1 : tensor<4x8xf32> -> tensor<4x16xf32>
  %rows = epl.all_gather %x on @mesh over ["data"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %rs = epl.reduce_scatter %x on @mesh over ["data", "tensor"] sum dim 1 : tensor<4x8xf32> -> tensor<4x2xf32>
  %a2a = epl.all_to_all %x on @mesh over ["tensor"] split 1 concat 0 : tensor<4x8xf32> -> tensor<8x4xf32>
  %bc = epl.broadcast %x on @mesh over ["data"] root 1 : tensor<4x8xf32>
  %mean = epl.all_reduce %x on @mesh over ["data", "tensor"] mean : tensor<4x8xf32>

  // Exchange along "data": device 0 sends first, device 1 receives first.
  %d = epl.group_index on @mesh over ["data"]
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %d, %c0 : index
  %swapped = scf.if %first -> tensor<4x8xf32> {
    epl.send %x on @mesh over ["data"] to 1 : tensor<4x8xf32>
    %got = epl.recv on @mesh over ["data"] from 1 : tensor<4x8xf32>
    scf.yield %got : tensor<4x8xf32>
  } else {
    %got = epl.recv on @mesh over ["data"] from 0 : tensor<4x8xf32>
    epl.send %x on @mesh over ["data"] to 0 : tensor<4x8xf32>
    scf.yield %got : tensor<4x8xf32>
  }

  // Integers: the max over all devices of (rank, -rank, 7).
  %ri64 = arith.index_cast %rank : index to i32
  %zero = arith.constant 0 : i32
  %seven = arith.constant 7 : i32
  %neg = arith.subi %zero, %ri64 : i32
  %ints = tensor.from_elements %ri64, %neg, %seven : tensor<3xi32>
  %imax = epl.all_reduce %ints on @mesh over ["data", "tensor"] max : tensor<3xi32>

  return %sum, %cols, %rows, %rs, %a2a, %bc, %mean, %swapped, %imax
      : tensor<4x8xf32>, tensor<4x16xf32>, tensor<8x8xf32>, tensor<4x2xf32>,
        tensor<8x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>,
        tensor<3xi32>
}
