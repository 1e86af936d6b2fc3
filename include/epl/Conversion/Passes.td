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
    the attribute is dropped. A run of `grouped` sends and receives is
    bracketed by `epl_rt_message_group_begin()`/`_end()`. Each program of a
    pipeline whose messages are `direct` (its stage programs and the
    runners' wrappers of them) first calls `epl_rt_prepare_group(group)`
    for the device group of each collective it runs, its callees'
    included, in the order of their mesh and axes (on GPUs, the
    group's NCCL communicator is made and connected then, not at its first
    collective, which would synchronize the GPU while a channel's send
    waits); a function with direct messages then calls
    `epl_rt_open_channel(group, peer)` for its peers in ascending order.

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
  let options = [
    Option<"deviceAssertions", "device-assertions", "bool",
           /*default=*/"false",
           "Leave a cf.assert in a linalg body as it is (on a GPU it "
           "becomes the kernel's own assertion, which cannot call the "
           "runtime)">,
    Option<"gpu", "gpu", "bool", /*default=*/"false",
           "The step is lowered for GPUs (or their emulation): "
           "offload.level is honoured (for the CPU it is an error), and a "
           "direct send sends a copy of its own, which the GPU reads when "
           "the receive takes it (a CPU backend copies at the send)">,
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

    When C is all zeros just before (a zero `linalg.fill` of it, or a copy
    into it of a buffer such a fill made, with nothing touching C in
    between in the block), the call is `epl_rt_matmul_overwrite_f32`, C =
    A B (BLAS's beta = 0), and that fill or copy goes: one pass over C less
    per GEMM (every GEMM of an MLP step; a convolution's tiles accumulate
    into a buffer filled outside their loop and keep it).

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

def EPLLinalgToGPUPass : Pass<"epl-linalg-to-gpu", "ModuleOp"> {
  let summary = "Runs every linalg op on buffers as a GPU launch";
  let description = [{
    After bufferization (and `epl-matmul-to-runtime`, which leaves
    contractions to the runtime's GEMM: cuBLAS on a GPU), every linalg op
    and `memref.copy` in host code becomes a `gpu.launch` of one thread per
    point of its parallel loops. The points are flattened onto the x
    dimension of the grid, `threads-per-block` at a time, the innermost
    loop fastest (neighbouring threads touch neighbouring elements), with a
    guard for the last block. Each thread runs the op's reduction loops in
    their order with the accumulators in registers: it computes exactly the
    sequence of operations the CPU's loop nest computes for that point. Any
    rank, broadcasts, windows, index-dependent bodies and ops with no
    parallel loop (one thread) are covered, and no grid dimension but x is
    used, so no shape meets the y/z grid limit. A reduction whose result a
    fill wrote right before (nothing touching it between: a sum's zeros, a
    max's lowest value), or a copy of a filled buffer (bufferization's, of
    one several reductions start from), starts its accumulators from the
    fill's value instead of loading them, and the fill or copy, whose
    every element the reduction overwrites, is dropped: one launch and one
    pass over memory fewer, the same numbers.

    A constant the kernels read (a `memref.global`) is copied into a device
    buffer where it is read (`gpu.memcpy`); globals marked `epl.host`
    (device group descriptors the runtime reads) stay on the host.

    Errors name the op: a body that calls a host function (unless
    `allow-host-calls` and the runtime's, for kernels run on the host by
    epl-gpu-kernels-to-host; on a GPU, a gather's bounds check stays a
    `cf.assert`, see epl-lower-to-runtime's `device-assertions`), a result
    that several threads would write (not indexed by every parallel loop,
    or not as a projected permutation), and a
    buffer access left on the host that cannot move into a kernel (its
    value used by the host, or an allocation or call beside it).

    A bufferized `scf.forall` (a scatter-add's independent rows, see
    epl-parallelize-scatters) becomes a launch of one thread per iteration,
    flattened like a linalg op's points, each running its iteration's body
    (a loop nested in it runs in the thread). One whose body cannot move
    into a kernel (it allocates, calls the host, or holds a linalg op,
    launched by then) stays a host loop, each iteration's buffer accesses
    a launch of one thread.
    Other code that reads or writes buffers (the loops `epl.scatter_add`
    decomposes into: a gradient scattered into the rows its gather read,
    where two ids may name one row) runs as a launch of one thread, in its
    order: exact, and as deterministic as the CPU.

    ```mlir
    linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%a : memref<64x128xf32>) outs(%s : memref<64xf32>) {...}
    ```
    becomes
    ```mlir
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, ...) threads(%tx, %ty, %tz) in (%sx = %c64, ...) {
      %i = ... %bx * 64 + %tx
      scf.if %i < 64 {
        %init = memref.load %s[%i]
        %sum = scf.for %j = %c0 to %c128 step %c1 iter_args(%acc = %init) -> f32 {...}
        memref.store %sum, %s[%i]
      }
      gpu.terminator
    }
    ```
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t",
           /*default=*/"256", "Threads in each block (1 to 1024)">,
    Option<"allowHostCalls", "allow-host-calls", "bool", /*default=*/"false",
           "Let kernels call the runtime's host functions (epl_rt_*; only "
           "for kernels that run on the host: epl-gpu-kernels-to-host)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
  let statistics = [
    Statistic<"numLaunches", "launches", "Linalg ops turned into launches">,
    Statistic<"numFillsDropped", "fills-dropped",
              "Fills of a reduction's result it starts from instead">,
    Statistic<"numParallel", "parallel",
              "Parallel loops (scf.forall) turned into launches">,
    Statistic<"numSequential", "sequential",
              "Host loop nests run as one GPU thread">,
    Statistic<"numConstants", "constants",
              "Constant globals copied to device memory">,
  ];
}

def EPLGPUKernelsToHostPass : Pass<"epl-gpu-kernels-to-host", "ModuleOp"> {
  let summary = "Runs outlined GPU kernels on the CPU, block by block and "
                "thread by thread";
  let description = [{
    Checks the GPU lowering's numbers where there is no GPU: every kernel of
    every `gpu.module` becomes a host function
    `@__epl_kernel_<module>_<kernel>` taking the kernel's arguments and the
    grid and block sizes, whose body is the kernel's inside explicit loops
    over the blocks and the threads of each (`gpu.block_id`,
    `gpu.thread_id`, `gpu.grid_dim` and `gpu.block_dim` become the loops'
    indices and bounds). Each `gpu.launch_func` becomes a call of it and
    each `gpu.memcpy` a `memref.copy`; the `gpu.module`s are erased. The
    kernels run exactly as compiled for the GPU, up to the device's
    floating-point contraction, so `epl-run --emulate-gpu` compares them
    with the CPU path. A kernel whose threads must run together (barriers,
    shuffles, workgroup memory) is an error: epl-linalg-to-gpu makes none.

    ```mlir
    gpu.launch_func @k::@k blocks in (%g, %c1, %c1) threads in (%t, %c1, %c1) args(%a : memref<8xf32>)
    ```
    becomes
    ```mlir
    call @__epl_kernel_k_k(%a, %g, %c1, %c1, %t, %c1, %c1) : (memref<8xf32>, index, ...) -> ()
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
  let statistics = [
    Statistic<"numKernels", "kernels", "Kernels turned into host functions">,
  ];
}

def EPLHostKernelImagesPass : Pass<"epl-host-kernel-images", "ModuleOp"> {
  let summary = "Compiles a cuda step's kernels for the host, to run it "
                "under the test suite's fake CUDA driver";
  let description = [{
    Tests the GPU runtime without a GPU: the host code stays exactly as
    `epl-lower-to-cuda` makes it (launches, copies and frees in stream
    order, lowered by `gpu-to-llvm` to the runtime's `mgpu*` calls, which
    call the CUDA driver), while each `gpu.module @M` becomes a
    `gpu.binary @M` whose one object is the text
    `epl-host-kernels:M:K1,K2,...` (the module and its kernels) instead of
    a cubin. Each kernel `@K` of it becomes a host function
    running every thread of every block (as epl-gpu-kernels-to-host makes
    them) and a launcher
    `@__epl_host_launch_M_K(!llvm.ptr params, i64 grid x, y, z, i64 block
    x, y, z)` that reads the kernel's arguments from `params` as
    `cuLaunchKernel` receives them (a memref as its descriptor's fields).
    The launcher first hands the fake driver each buffer it was launched
    with, through the pointer `@__epl_host_check_buffer_M` (the kernel's
    name, the argument, its aligned pointer and the bytes it spans): a GPU
    faults on a buffer that is not its own, where the host loops would
    read it. The fake driver (`test/Runtime/FakeCuda`) loads the image by
    its module's name and finds the launchers in the loaded program. A kernel's `cf.assert`
    calls CUDA's `__assertfail(message, file, line, function, 1)` where it
    fails, as on a GPU, through the pointer `@__epl_host_assertfail_M` the
    fake sets when it loads the module; its `__assertfail` prints what a GPU
    prints, stops the kernel and fails the context's next calls with
    `CUDA_ERROR_ASSERT`. `epl-compile --gpu-host-kernels` writes such
    artifacts.

    ```mlir
    gpu.module @__epl_kernels { gpu.func @k(%a: memref<8xf32>) kernel { ... } }
    ```
    becomes
    ```mlir
    gpu.binary @__epl_kernels [#gpu.object<#nvvm.target, bin = "epl-host-kernels:__epl_kernels:k\00">]
    func.func private @__epl_host_kernel___epl_kernels_k(memref<8xf32>, index, index, index, index, index, index)
    func.func @__epl_host_launch___epl_kernels_k(%params: !llvm.ptr, %gx: i64, ...) {
      // five llvm.load pairs packed into the memref's descriptor, after the
      // buffer's check
      call @__epl_host_kernel___epl_kernels_k(%a, %gx', ...)
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
  let statistics = [
    Statistic<"numKernels", "kernels", "Kernels compiled for the host">,
  ];
}

def EPLCopyArgumentsToDevicePass
    : Pass<"epl-copy-arguments-to-device", "ModuleOp"> {
  let summary = "Gives a GPU step device copies of the host buffers it is "
                "called with";
  let description = [{
    A runner calls the step's public functions with host buffers
    (parameters, optimizer state, the batch, result buffers); on the cuda
    target every buffer the step touches is device memory. In each public
    function, every memref argument is copied into a device buffer of its
    shape on entry (`gpu.memcpy`), the function works on the copy, and
    before each return the copy is written back to the argument if anything
    may have written it (parameters and state updated in place, results),
    then freed. Arguments only read (the batch), and those marked
    `epl.read_only` (epl-run's entry wrappers mark every argument that is not
    a result buffer), are not copied back: several ranks may share one host
    buffer of them.

    A result buffer marked `epl.in_place_of = N` is the same host buffer as
    argument N (a parameter or optimizer state and its update, which the
    runner passes once): the two share one device copy. Where its type is
    static and dense, that copy lives from call to call: it is the
    runtime's (`epl_rt_resident_buffer`, keyed by the host buffer, filled
    from it on first use), the step neither copies it in nor back, and the
    runner copies it to the host only when it reads the parameters (a
    checkpoint, an evaluation, the end). So a training step whose
    parameters are all updated in place moves only its batch and its other
    results (the loss) between host and device.

    With `offload.level = "v0"` in the module's `epl.config` (EPL's
    offload), nothing stays, and each copy lives only from the first op that
    uses the argument (or its partner) to the last: it is made right before
    the first, written back and freed right after the last. Optimizer state
    is then on the device only around its update, a parameter from its
    first use in the forward to its update.

    ```mlir
    func.func @step(%w: memref<4xf32>) {
      linalg.generic ... outs(%w : memref<4xf32>) ...
      return
    }
    ```
    becomes
    ```mlir
    func.func @step(%w: memref<4xf32>) {
      %d = memref.alloc() : memref<4xf32>
      gpu.memcpy %d, %w : memref<4xf32>, memref<4xf32>
      linalg.generic ... outs(%d : memref<4xf32>) ...
      gpu.memcpy %w, %d : memref<4xf32>, memref<4xf32>
      memref.dealloc %d : memref<4xf32>
      return
    }
    ```
    and a parameter with its update written over it,
    ```mlir
    func.func @step(%w: memref<4xf32> {epl.read_only},
                    %new_w: memref<4xf32> {epl.in_place_of = 0 : i64}) {
      linalg.generic ... ins(%w : memref<4xf32>) outs(%new_w : memref<4xf32>) ...
      return
    }
    ```
    becomes
    ```mlir
    func.func @step(%w: memref<4xf32>, %new_w: memref<4xf32>) {
      %host = ... %w's address as an !llvm.ptr
      %p = call @epl_rt_resident_buffer(%host, %c16_i64, %c1_i32)
      %d = builtin.unrealized_conversion_cast ... : !llvm.struct<...> to memref<4xf32>
      linalg.generic ... ins(%d : memref<4xf32>) outs(%d : memref<4xf32>) ...
      return
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
  ];
  let statistics = [
    Statistic<"numArguments", "arguments", "Arguments copied to the device">,
    Statistic<"numOffloaded", "offloaded",
              "Arguments on the device only around their use (offload v0)">,
    Statistic<"numResident", "resident",
              "Arguments whose device copy lives from call to call">,
  ];
}

def EPLGatherKernelsPass : Pass<"epl-gather-kernels", "ModuleOp"> {
  let summary = "Moves every outlined kernel into one GPU module, each "
                "distinct kernel once";
  let description = [{
    `gpu-kernel-outlining` makes a `gpu.module` per launch, and each module
    becomes a binary of its own: a ptxas run at compile time and a module
    load at run time each, 223 for a 2-block transformer's training step.
    This pass moves every kernel into one `gpu.module @__epl_kernels`
    (named after the module it came from) and lets launches of identical
    kernels (same signature and body, as one layer's ops in every block)
    share one, as `epl-outline-kernels` does on the CPU. The launches are
    renamed accordingly.

    ```mlir
    gpu.launch_func @step_kernel::@step_kernel ...
    gpu.launch_func @step_kernel_0::@step_kernel ...   // the same body
    gpu.module @step_kernel { gpu.func @step_kernel(...) kernel {...} }
    gpu.module @step_kernel_0 { gpu.func @step_kernel(...) kernel {...} }
    ```
    becomes
    ```mlir
    gpu.launch_func @__epl_kernels::@step_kernel ...
    gpu.launch_func @__epl_kernels::@step_kernel ...
    gpu.module @__epl_kernels { gpu.func @step_kernel(...) kernel {...} }
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
  let statistics = [
    Statistic<"numKernels", "kernels", "Distinct kernels kept">,
    Statistic<"numShared", "shared", "Kernels replaced by an identical one">,
  ];
}

#endif // EPL_CONVERSION_PASSES_TD
