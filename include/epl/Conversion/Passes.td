//===- Passes.td - EPL conversion passes -------------------*- tablegen -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_CONVERSION_PASSES_TD
#define EPL_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def EPLLowerToRuntimePass : Pass<"epl-lower-to-runtime", "ModuleOp"> {
  let summary = "Turns EPL communication into calls to the EPL runtime";
  let description = [{
    Replaces every collective (`all_reduce`, `all_gather`, `reduce_scatter`,
    `all_to_all`, `broadcast`), point-to-point op (`send`, `recv`) and
    `group_index` by a call to the runtime's C ABI (`epl/Runtime/Runtime.h`),
    on tensors, before bufferization: each operand becomes a contiguous
    buffer (`bufferization.to_buffer`), each result a fresh buffer the
    runtime fills (`bufferization.to_tensor`). Collectives along a dimension
    other than the outermost are expressed as the runtime's outermost-
    dimension primitive between `linalg.transpose`s and reshapes, so the
    runtime only ever moves contiguous blocks.

    The device group of each call is a constant global describing the mesh
    and the axes; meshes are numbered in module order. `epl.pipeline` ops
    (read by the runner before lowering) are erased, and `epl.mesh` ops once
    nothing refers to them.

    A call of a pipeline schedule tagged `epl.action` is bracketed by
    `epl_rt_action_begin(phase, micro_batch, stage)` and
    `epl_rt_action_end()`, which time it for epl-run's trace and report;
    the attribute is dropped.

    Every `tensor.extract` in a linalg body with a computed index (a
    gather: class and token ids are data) first gets a `cf.assert` that the index is within
    the table, naming the gather's location. A `cf.assert` (these, and the
    model's own: torch-mlir checks gathered indices so) becomes a call of
    `epl_rt_assert_failed(message)` when its condition is false: the run
    ends with the message and the rank, exit 1.

    ```mlir
    epl.mesh @mesh ["data" = 2, "tensor" = 4]
    %y = epl.all_reduce %x on @mesh over ["tensor"] sum : tensor<8xf32>
    ```
    becomes
    ```mlir
    memref.global "private" constant @__epl_group_0 : memref<6xi64> = dense<[0, 2, 2, 4, 1, 1]>
    func.func private @epl_rt_all_reduce_f32(memref<*xf32>, memref<*xf32>, memref<*xi64>, i32)
        attributes {llvm.emit_c_interface}
    ...
    %in = bufferization.to_buffer %x read_only : tensor<8xf32> to memref<8xf32>
    %out = memref.alloc() : memref<8xf32>
    %group = memref.get_global @__epl_group_0 : memref<6xi64>
    ...
    call @epl_rt_all_reduce_f32(%in_u, %out_u, %group_u, %c0_i32) : (...) -> ()
    %y = bufferization.to_tensor %out restrict writable : memref<8xf32> to tensor<8xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let statistics = [
    Statistic<"numCollectives", "collectives",
              "Collective and point-to-point ops turned into runtime calls">,
    Statistic<"numTransposes", "transposes",
              "Transposes added around collectives along inner dimensions">,
    Statistic<"numActions", "actions",
              "Pipeline actions bracketed with timing calls">,
  ];
}

def EPLMatmulToRuntimePass : Pass<"epl-matmul-to-runtime", "ModuleOp"> {
  let summary = "Turns matmul-like linalg ops on buffers into BLAS calls";
  let description = [{
    After bufferization, replaces every linalg op that computes
    `C[b*, m, n] += A[b*, m|k, k|m] * B[b*, k|n, n|k]` in f32 or f64 — named
    (`linalg.matmul` with any indexing maps, `linalg.batch_matmul`) or
    `linalg.generic`, recognised from its indexing maps and its multiply-add
    body rather than its name — by a call to the runtime's GEMM
    (`epl_rt_matmul_f32`), which hands it to CBLAS. Transposed operands are
    passed as transposed views: BLAS reads them in place. Several loops of
    one kind become one GEMM dimension when every operand holds them as one
    strided dimension (`memref.collapse_shape`): a dense layer on
    `[batch, seq, dim]` and its weight gradient, which contracts over batch
    and seq. An operand whose groups are not (a slice of a padded buffer, a
    group read in another order than the other operand holds it) is staged
    in a contiguous copy, and an output so is copied back: a copy is one
    pass over the data, the loops a GEMM's worth. Contractions with several
    batch dimensions (attention's batch and heads) loop over all but the
    innermost one with `scf.for`, one batched GEMM per iteration.

    ```mlir
    linalg.matmul ins(%a, %b : memref<32x784xf32>, memref<784x512xf32>)
                  outs(%c : memref<32x512xf32>)
    ```
    becomes
    ```mlir
    %a_u = memref.cast %a : memref<32x784xf32> to memref<*xf32>
    ...
    call @epl_rt_matmul_f32(%a_u, %b_u, %c_u) : (memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
  let statistics = [
    Statistic<"numMatmuls", "matmuls", "Contractions turned into GEMM calls">,
  ];
}

#endif // EPL_CONVERSION_PASSES_TD
