//===- Passes.td - EPL transformation passes ---------------*- tablegen -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_PASSES_TD
#define EPL_DIALECT_EPL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def EPLAutodiffPass : Pass<"epl-autodiff", "ModuleOp"> {
  let summary = "Builds the training step of an L0 model: forward, backward, update";
  let description = [{
    Turns each L0 model function (arguments tagged `epl.arg`, returning a
    scalar loss) into an L1 training step, in place:

    * the forward ops stay, each tagged `epl.phase = #epl.phase<forward>`
      and a unique `epl.id`;
    * reverse-mode gradients follow. Every linalg op (named ops are
      generalized first, `linalg.softmax` decomposed, element-wise `arith`
      and `math` on tensors turned into linalg) is differentiated by one
      rule: the gradient of an input of a `linalg.generic` is a
      `linalg.generic` over the same loops, whose body is the reverse-mode
      derivative of the forward body and whose loops absent from the
      input's indexing map become reductions. Reductions combine with
      `addf`, `maximumf` or `minimumf`. The gradient of a multiply-add is a
      multiply-add, so the gradients of matmuls are matmuls again.
      `tensor` reshapes, slices, inserts and concatenations have their
      adjoints. Each backward op is tagged `backward_input` (a gradient
      flowing to data) or `backward_weight` (a parameter's gradient, computed
      separately so pipeline schedules can delay it) and `epl.origin`, the
      id of the forward op it comes from;
    * the optimizer of `epl.config` (`optimizer.type` sgd, momentum, adam or
      adamw, with PyTorch's semantics and `optimizer.lr`, `.momentum`,
      `.beta1`, `.beta2`, `.eps`, `.weight_decay`) updates every parameter;
      its state becomes explicit arguments (`epl.arg = "opt_state"`, named
      `<param>.momentum_buffer`, `.exp_avg`, `.exp_avg_sq`, and
      `optimizer.step`) and results.

    With `pipeline.num_micro_batch` = M > 1 (gradient accumulation, one
    stage), the forward program moves to a private function on 1/M of the
    batch (`@<model>_micro_batch`, the batch dimension followed through
    indexing maps and reshapes), differentiated as above, which the step
    calls in an `scf.for` over the M slices of the inputs and labels,
    summing losses and gradients before one update. Constants stay, so each
    micro-batch yields its contribution to the full batch's loss: with
    `communication.gradients_reduce_method = "mean"` the step equals the
    full-batch step; with `"sum"` the gradients are M times larger (the sum
    of the micro-batches' own mean gradients, as EPL).

    The step returns the loss (`epl.result = "loss"`), the new parameters
    (`"param"`) and the new optimizer state (`"opt_state"`), each named with
    `epl.name`; with `return-gradients`, the loss and each parameter's
    gradient (`"grad"`) instead.

    ```mlir
    func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"},
                     %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"})
        -> tensor<f32>
    ```
    becomes, with `optimizer.type = "momentum"`,
    ```mlir
    func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"},
                     %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"},
                     %m: tensor<4x2xf32> {epl.arg = "opt_state", epl.name = "w.momentum_buffer"})
        -> (tensor<f32> {epl.result = "loss"},
            tensor<4x2xf32> {epl.name = "w", epl.result = "param"},
            tensor<4x2xf32> {epl.name = "w.momentum_buffer", epl.result = "opt_state"})
    ```
  }];
  let options = [
    Option<"returnGradients", "return-gradients", "bool", /*default=*/"false",
           "Return each parameter's gradient instead of updating it">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let statistics = [
    Statistic<"numForward", "forward-ops", "Forward ops of the step">,
    Statistic<"numBackward", "backward-ops", "Backward ops added">,
    Statistic<"numOptimizer", "optimizer-ops", "Optimizer ops added">,
  ];
}

def EPLDecomposeAggregatesPass : Pass<"epl-decompose-aggregates"> {
  let summary = "Decomposes aggregated linalg ops (linalg.softmax) into generics";
  let description = [{
    Replaces every op implementing `linalg::AggregatedOpInterface` (today
    `linalg.softmax`) by the linalg ops it stands for: a max reduction, an
    exponential of the shifted input, a sum reduction and a division. The
    CPU lowering has no loops for aggregated ops, and `epl-autodiff`
    differentiates the parts.

    ```mlir
    %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>)
           outs(%init : tensor<4x6xf32>) -> tensor<4x6xf32>
    ```
    becomes `linalg.fill`, two `linalg.generic` reductions and two
    element-wise `linalg.generic`s.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def EPLOutlineKernelsPass : Pass<"epl-outline-kernels", "ModuleOp"> {
  let summary = "Moves every linalg op on buffers into a function of its own";
  let description = [{
    After bufferization, each linalg op becomes a call to a private
    function (`@__epl_kernel_<n>`) marked `noinline`, holding just that op.
    A training step is one function with hundreds of loop nests; LLVM's loop
    optimizations scale badly with function size (a 2-block transformer
    step took 13 s to JIT at -O2), while one small function per op compiles
    in linear time and runs as fast: the ops communicate through memory
    either way.

    ```mlir
    linalg.generic {...} ins(%a : memref<8xf32>) outs(%b : memref<8xf32>) {...}
    ```
    becomes
    ```mlir
    call @__epl_kernel_0(%a, %b) : (memref<8xf32>, memref<8xf32>) -> ()
    ...
    func.func private @__epl_kernel_0(%a: memref<8xf32>, %b: memref<8xf32>)
        attributes {passthrough = ["noinline"]} {
      linalg.generic {...} ins(%a : memref<8xf32>) outs(%b : memref<8xf32>) {...}
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let statistics = [
    Statistic<"numKernels", "kernels", "Linalg ops outlined">,
  ];
}

#endif // EPL_DIALECT_EPL_TRANSFORMS_PASSES_TD
