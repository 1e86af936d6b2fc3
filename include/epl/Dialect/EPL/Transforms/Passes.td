//===- Passes.td - EPL transformation passes ---------------*- tablegen -*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_DIALECT_EPL_TRANSFORMS_PASSES_TD
#define EPL_DIALECT_EPL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def EPLAutodiffPass : Pass<"epl-autodiff", "ModuleOp"> {
  let summary = "Builds the gradients of an L0 model: forward and backward";
  let description = [{
    Turns each L0 model function (arguments tagged `epl.arg`, returning a
    scalar loss) into the forward and backward of a training step, in
    place; `epl-apply-optimizer` adds the update:

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
    * the function returns the loss (`epl.result = "loss"`) and then each
      parameter's gradient, in argument order (`epl.result = "grad"`,
      `epl.name` = the parameter's name, or `arg<N>` when it has none; the
      verifier checks that it names a parameter of the same type). A
      parameter the loss does not use gets zeros.

    With `pipeline.num_micro_batch` = M > 1 (gradient accumulation), or any
    M when ops carry pipeline stages (`epl.stage`, from `epl-plan`; each
    backward op then gets its forward origin's stage, and a value's summed
    gradient the value's stage), the forward program moves to a private function on 1/M of the
    batch (`@<model>_micro_batch`, the batch dimension followed through
    indexing maps and reshapes), differentiated as above, which the step
    calls in an `scf.for` over the M slices of the inputs and labels
    (marked `epl.micro_batch`: on several devices each cuts its own shard),
    summing losses and gradients; the sums are the step's results. Constants
    stay, so each micro-batch yields its contribution to the full batch's
    loss. Values reduced over the batch from the inputs and labels alone
    (cross-entropy's count of labels not ignored, a batch norm's mean and
    variance of the inputs) are computed by the step on the whole batch
    and passed to every micro-batch, which uses the batch's, not its own.
    With `communication.gradients_reduce_method = "mean"` the step
    equals the full-batch step; with `"sum"` the gradients are M times
    larger (the sum of the micro-batches' own mean gradients, as EPL).

    ```mlir
    func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"},
                     %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"})
        -> tensor<f32>
    ```
    becomes
    ```mlir
    func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"},
                     %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"})
        -> (tensor<f32> {epl.result = "loss"},
            tensor<4x2xf32> {epl.name = "w", epl.result = "grad"})
    ```
  }];
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
  ];
}

def EPLRematerializePass : Pass<"epl-rematerialize", "ModuleOp"> {
  let summary = "Recomputes activations in the backward instead of keeping them (gradient checkpointing)";
  let description = [{
    Runs after `epl-autodiff` when `gradient_checkpoint.type` is set. The
    backward of a training step reads forward values, the activations,
    which plain reverse mode keeps from the forward until their backward
    use. This pass keeps some of them and recomputes the others: in each
    function `epl-autodiff` built (the step, or its micro-batch function),
    the forward ops a backward op needs are copied again right before the
    first backward op that reads what they make, from the nearest kept
    values (or arguments); the copies are tagged
    `epl.phase = #epl.phase<recompute>` with `epl.origin` the id of the op
    they copy, and keep its pipeline stage, so they run in that stage's
    backward. The original forward values then die at their last forward
    use. Values that cost nothing to keep or make are never recomputed:
    constants, and views (reshapes, slices) of kept values.

    Which activations to keep, by `gradient_checkpoint.type`:

    * `"collection"`: those the user marked: results of ops with
      `epl.checkpoint` (EPL's collection of tensors; the frontend's
      `epl.checkpoint(t)`). Everything else the backward reads is
      recomputed. A module that marks nothing is an error.
    * `"auto"`: the tensors the forward computes form a chain in forward
      order (views stand for what they view), each with its size in bytes
      and the flops of computing it again (its op's loop trip count times
      its body's ops, plus the ops before it that only it needs). Only cut
      points can be kept: tensors after which the forward reads nothing
      computed earlier but them (every layer output of an MLP, the
      residual stream between a transformer's blocks), so that a run of
      tensors not kept is recomputed from the kept cut point before it.
      The cost model is Chen et al. 2016's: the backward holds the kept
      tensors plus one recomputed run at a time (of a run, the tensors the
      backward reads), so a plan needs the kept bytes plus the largest
      run's. Under `gradient_checkpoint.memory_budget` (a fraction of the
      activations the plain step keeps when at most 1, bytes above: of one
      micro-batch on one device, which holds its shard of the batch, the
      inputs' dimension 0 split over the mesh axes epl-plan seeded) the
      pass keeps the plan with the least recompute flops, found by a
      dynamic program over the chain (lib/Checkpointing: exact on chains
      of up to 64 tensors, checked against brute force; longer chains are
      planned over sampled bounds); with no budget, the cheapest plan of
      least memory (Chen's sqrt(n) checkpoints on n equal layers). A budget
      below the least any plan needs is an error naming both. With
      pipeline stages, each stage's tensors are planned on their own
      against the budget (each stage device holds its own).

    Recomputation is exact whatever is kept; memory follows the model when
    runs are recomputed from cut points (always under `"auto"`; under
    `"collection"` when the marks are cut points).

    ```mlir
    %h = linalg.matmul ins(%x, %w1 ...) {epl.checkpoint, epl.phase = #epl.phase<forward>, epl.id = 1}
    %a = linalg.generic ... ins(%h) {epl.phase = #epl.phase<forward>, epl.id = 2}   // relu
    ...
    %da = linalg.generic ... ins(%a, %dy) {epl.phase = #epl.phase<backward_input>, epl.origin = 3}
    ```
    with `"collection"` becomes
    ```mlir
    %a2 = linalg.generic ... ins(%h) {epl.phase = #epl.phase<recompute>, epl.origin = 2}
    %da = linalg.generic ... ins(%a2, %dy) {epl.phase = #epl.phase<backward_input>, epl.origin = 3}
    ```
  }];
  let dependentDialects = [];
  let options = [
    Option<"printPlan", "print-plan", "bool", /*default=*/"false",
           "Print, for each function, the activations kept and recomputed, "
           "their bytes and the plan's peak and recompute flops">,
  ];
  let statistics = [
    Statistic<"numKept", "kept-activations", "Activations kept for the backward">,
    Statistic<"numRecomputed", "recomputed-ops", "Forward ops copied into the backward">,
  ];
}

def EPLApplyOptimizerPass : Pass<"epl-apply-optimizer", "ModuleOp"> {
  let summary = "Replaces each gradient a training step returns by its parameter's update";
  let description = [{
    Reads `optimizer.*` from `epl.config` and, in every function whose
    results include gradients (`epl.result = "grad"`, from `epl-autodiff`),
    replaces each gradient result by the update of the parameter it names,
    with PyTorch 1.13's arithmetic (`optimizer.type` sgd, momentum, adam or
    adamw; `optimizer.lr`, `.momentum`, `.beta1`, `.beta2`, `.eps`,
    `.weight_decay`): the result becomes the new parameter
    (`epl.result = "param"`, same name). The optimizer's state becomes
    explicit: arguments `epl.arg = "opt_state"` (`optimizer.step`, a
    `tensor<i64>`, first for adam and adamw; then per parameter
    `<param>.momentum_buffer`, or `.exp_avg` and `.exp_avg_sq`) and results
    of the same names after the parameters, so that runners feed them back
    and checkpoints hold them. The new ops are tagged
    `epl.phase = #epl.phase<optimizer>`.

    The update is element-wise, so it runs after parallelization on each
    device's shard: a state argument or result takes its parameter's
    `epl.shard` (or `epl.sharding`), the step counter is replicated.
    Between `epl-autodiff` (or `epl-insert-collectives`, which reduces the
    gradients) and this pass, the gradients are the step's results, where
    later passes (ZeRO, offload) can work on them.

    A gradient laid out more finely than its parameter (ZeRO, `epl-zero`:
    `[["data"], []]` for a replicated parameter) is updated on its shard:
    the parameter is sliced at the device's `epl.group_index`, its state is
    laid out like the gradient (1/N of it per device), and the new
    parameter is all-gathered back to the parameter's layout. Each new
    parameter records the gradient's layout as `epl.grad_shard` (reports
    count gradient bytes from it).

    With `optimizer.num_apply_group` = G, the parameters are split into G
    groups of about equal bytes, each consecutive in the order their
    gradients are made; each group's updates, in argument order, go right after the
    last op making one of its gradients (groups in the order they become
    ready), so that with more groups updates start earlier and gradients
    die earlier (with one group, all updates follow the last gradient). State arguments and results keep their
    order.

    ```mlir
    module attributes {epl.config = {"optimizer.type" = "momentum"}} {
      func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"},
                       %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"})
          -> (tensor<f32> {epl.result = "loss"},
              tensor<4x2xf32> {epl.name = "w", epl.result = "grad"})
    ```
    becomes
    ```mlir
      func.func @model(%x: tensor<8x4xf32> {epl.arg = "input"},
                       %w: tensor<4x2xf32> {epl.arg = "param", epl.name = "w"},
                       %m: tensor<4x2xf32> {epl.arg = "opt_state", epl.name = "w.momentum_buffer"})
          -> (tensor<f32> {epl.result = "loss"},
              tensor<4x2xf32> {epl.name = "w", epl.result = "param"},
              tensor<4x2xf32> {epl.name = "w.momentum_buffer", epl.result = "opt_state"})
    ```
    where the new `w` is `w - lr * m'` and `m' = 0.9 m + dw`, one
    element-wise `linalg.generic`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let statistics = [
    Statistic<"numUpdated", "updated-params", "Parameters updated">,
    Statistic<"numOptimizer", "optimizer-ops", "Optimizer ops added">,
  ];
}

def EPLPlanPass : Pass<"epl-plan", "ModuleOp"> {
  let summary = "Turns strategy scopes and a device count into a mesh and seed shardings";
  let description = [{
    Reads the `epl.scope`s of an L0 model and plans its devices as EPL does:
    the stage's device count is the largest `split` or `replicate` in it,
    replicas = devices / that count, and the mesh is `["data" = replicas,
    "tensor" = split]` (axes of size 1 omitted). With
    `cluster.colocate_split_and_replicate`, replicated and split parts share
    the same devices: the batch is split over every axis and the split parts
    use the "tensor" axis too. Without `split`s, every copy of a
    `replicate(n)` is data parallel: the mesh is `["data" = devices]`.

    Seeds, as `epl.sharding` on the function's arguments:
    * inputs and labels: the batch (dimension 0) over the data axes (with
      `pipeline.num_micro_batch` = M, each device's shard must hold M
      micro-batches);
    * each weight of a contraction in a `split` scope: along its output
      features (column parallel), or along its input features when the
      contraction's input is already split by a previous column-parallel
      layer of the scope (row parallel), as Megatron does.

    Everything else is left to `epl-sharding-propagation`. A split that does
    not divide its dimension, or a device count the stages do not divide,
    is an error naming both sizes.

    Pipelines: with several named scopes (`replicate` or `split`, in the
    order the model first uses them) or ops tagged `epl.stage`, the mesh
    gains a leading `"stage"` axis, `["stage" = p, "data" = r,
    "tensor" = t]`: p = the stages, or the stages over
    `pipeline.num_virtual_stages` for Interleaved1F1B (stage k on stage
    device k mod p). Every stage must use as many devices (its largest
    scope). Each forward op gets `epl.stage` (see `#epl.stage`). Errors name
    the numbers or ops: a stage reading a later stage's value, stages of
    different device counts, devices not divisible by stages x devices per
    stage, virtual stages without the interleaved schedule or not dividing
    the stages.

    ```mlir
    // epl-opt --epl-plan="devices=4" on a model with split(2) scopes:
    epl.mesh @mesh ["data" = 2, "tensor" = 2]
    func.func @model(%x: tensor<32x784xf32> {epl.arg = "input",
                         epl.sharding = #epl.sharding<@mesh, [["data"], []]>}, ...
    ```
  }];
  let options = [
    Option<"devices", "devices", "int64_t", /*default=*/"1",
           "Number of devices to plan for">,
  ];
}

def EPLFoldReshapesPass : Pass<"epl-fold-reshapes"> {
  let summary = "Folds reshapes into the generics they feed and read, so that merged dimensions are loops of their own";
  let description = [{
    Models merge dimensions to call a contraction: PyTorch's linear layer
    flattens a seq-first `(L, B, E)` activation to `(L * B, E)` rows, and
    its attention merges batch and heads, `(B * H, S, D)`, for `bmm`. A
    device's block of such a merged dimension cannot hold the block of
    the dimension inside it (the batch below the sequence, the heads
    below the batch), so sharding propagation gathered the activations
    before the contraction: data parallelism of a seq-first transformer
    computed every linear layer on the whole batch, and a split of its
    attention every head on every device.

    This pass folds each `tensor.collapse_shape` into the `linalg.generic`
    that reads it and each `tensor.expand_shape` into the one that makes
    its operand (upstream's fusion of reshapes by expansion), until the
    merged dimensions are loops of their own that propagation shards like
    any other. The generics compute the same values in the same order;
    the ops that replace one keep its `epl` attributes (scope, stage,
    phase), and a reshaped `tensor.empty` becomes one of the new shape. A
    generic that adds to a loop's accumulator (gradient accumulation over
    micro-batches) keeps its shape: collective insertion carries the
    accumulator's pending sum through the loop and reduces it once after.
    So does one that reads its loops' positions (`linalg.index`), whose
    index of a merged loop would become an affine sum that the sharding
    rules do not read as a position.
    It runs in `epl-parallelize` before sharding propagation; the
    CPU lowering's GEMM still takes the expanded contraction as one
    matrix product over its merged rows where they are contiguous.

    ```mlir
    %rows = tensor.collapse_shape %x [[0, 1], [2]]
              : tensor<6x4x16xf32> into tensor<24x16xf32>
    %y = linalg.generic {indexing_maps = [(m, n, k) -> (m, k),
                                          (m, n, k) -> (k, n),
                                          (m, n, k) -> (m, n)], ...}
           ins(%rows, %w : tensor<24x16xf32>, tensor<16x8xf32>) ...
    %out = tensor.expand_shape %y [[0, 1], [2]] output_shape [6, 4, 8]
    ```
    becomes one generic over `(l, b, n, k)` reading `%x` and writing
    `tensor<6x4x8xf32>`, whose `b` a data-parallel plan splits.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def EPLShardingPropagationPass : Pass<"epl-sharding-propagation", "ModuleOp"> {
  let summary = "Gives every value of a planned program a sharding";
  let description = [{
    Starting from the seeds (`epl.sharding` on arguments, from `epl-plan`
    or the user) and `epl.sharding_constraint`s, assigns a sharding to every
    tensor value of the functions of a module with an `epl.mesh`. It is a
    driver over each op's sharding rule (`ShardingRuleOpInterface`: the
    op's factors, e.g. a `linalg.generic`'s loops from its indexing maps
    and iterator types, a reshape's finer dimensions; the compiler
    generalizes named linalg ops first):

    * the mesh axes of a factor come from any value whose dimension it
      leads; an axis shards at most one factor; only the major factor of a
      merged dimension may be sharded;
    * parallel factors carry their axes to every value that holds them; a
      sharded reduction factor makes the results pending partial values
      with the combiner of the body (`sum` for `+`/`-`, `max`, `min`);
      factors that must stay whole (a cut or joined dimension, a loop whose
      index the body computes with) are never sharded; a micro-batch slice,
      `epl.micro_batch`, keeps the batch's split;
    * a tensor a body reads from outside (`tensor.extract`) is a value of
      the op too: a dimension it reads at a loop's own position
      (`linalg.index`, cross-entropy's `logp[b, label[b]]`) holds that
      loop's factor, one read at a computed index (a token id) none;
    * values cheap to make (`tensor.empty`, splat constants, fills, and
      element-wise generics of those) and inits the body does not read have
      no say: each user gets its own (see `epl-insert-collectives`);
    * an element-wise op linear in its partial-sum operands (over the same
      axes; a sum of them, one scaled by a replicated value) keeps a
      partial sum, and so does a loop's accumulator of one; a reshape or
      cast passes a pending partial value on;
    * an `scf.for`'s initial value, loop-carried value, yielded value and
      result share one sharding (partial state included). Calls must be
      inlined first (`epl-parallelize` does).

    Each sharded dimension remembers the strength of its evidence: a
    constraint on its own value, over a seed, over anything propagated (the
    fewer ops from its source, the stronger). Within an op, stronger
    evidence claims a factor first, then the bigger tensor (the costlier to
    move). An unsharded dimension takes any evidence, a sharded one changes
    only for stronger evidence, and nothing is unsharded, so the forward
    and backward sweeps reach a fixed point whatever the visit order: an op
    visited too early is revisited and revised. Finally each op's results
    are what its factors make of them (consumers that want another sharding
    get a reshard). With `print-decisions`, each op's factors are reported
    as a remark, with the value that decided each sharded factor and the
    strength of that evidence:

    ```
    model.mlir:20:10: remark: factors sharded as [[], ["tensor"], []]; factor 1 from operand 1 (a seed)
    ```

    A result laid out like the argument of its name (a gradient like its
    parameter) unless it has an `epl.sharding` already (`epl-zero`'s
    sharded gradients). Each op gets `epl.shardings` (one per result) and
    each op with a rule
    `epl.loop_axes` (the mesh axes of each factor), for
    `epl-insert-collectives`, which must run right after (it rejects ops
    without them).

    ```mlir
    // x: [["data"], []], w replicated: the matmul's batch loop goes over
    // "data", so the result is [["data"], []] too; its weight gradient
    // contracts over that loop: partial sum over "data".
    ```
  }];
  let options = [
    Option<"printDecisions", "print-decisions", "bool", /*default=*/"false",
           "Report the sharding chosen for each op, and why, as remarks">,
  ];
  let statistics = [
    Statistic<"numSharded", "sharded-values", "Values given a non-trivial sharding">,
    Statistic<"numConflicts", "conflicts", "Ops whose values disagreed on a factor">,
  ];
}

def EPLInsertCollectivesPass : Pass<"epl-insert-collectives", "ModuleOp"> {
  let summary = "Partitions a sharded program into the per-device program";
  let description = [{
    Rewrites every function of a module whose values carry shardings (see
    `epl-sharding-propagation`) into the program one device runs: local
    shapes everywhere, and the communication each op needs to see its
    operands as its factors are sharded (read through the op's sharding
    rule, as propagation reads it):

    * a pending partial value is resolved by `epl.all_reduce`, or by
      `epl.reduce_scatter` when the consumer wants it split over the same
      axes (after any axes that dimension is split over already); a sum accumulated into a partial sum over the same axes (how
      autodiff adds up a gradient's contributions) stays partial;
    * values cheap to make (`tensor.empty`, splat constants, fills and
      element-wise generics of those) are made again in the layout each
      user needs, never communicated;
    * each `epl.sharding_constraint` communicates where it stands: the copy
      it makes is its own, never shared with another use of the value
      (so `epl-zero` can gather a parameter again for the backward);
    * a dimension split where the consumer wants it whole is gathered
      (`epl.all_gather`); whole where it wants it split, sliced locally at
      the device's `epl.group_index`; split over other axes, moved
      (`epl.all_to_all`);
    * arguments and results take their local types and keep
      `epl.sharding`, so that runners split and assemble them;
    * `scf.for` loops take local types for what they carry, so partial
      sums accumulated over micro-batches are reduced once, after the
      loop; a micro-batch slice's offsets along split dimensions are
      divided by the devices (each cuts its own shard).

    Then the gradient reduction. The data-parallel axes are those the
    inputs' batch is split over (dimension 0 of their `epl.shard`: "data",
    and "tensor" too under `cluster.colocate_split_and_replicate`). The
    sum all-reduces over them that make the step's gradients (the
    all-reduce behind each result tagged `epl.result = "grad"`, through
    reshapes, slices and element-wise scaling; no phase tag is read) are
    fused into at most `communication.max_splits` buckets per set of axes,
    element type and pipeline stage device (each stage reduces its own
    gradients; flatten, concatenate, one `all_reduce`, slice back), of
    gradients consecutive in the order they are made, each bucket right
    after its last gradient (so that the updates of
    `optimizer.num_apply_group` can start before the backward ends), sent in f16 with
    `communication.fp16` (scaled by `communication.fp16_scale` first; a
    `cf.assert` where the sum comes back ends the run, naming the scale,
    when an element is not finite, as one beyond fp16's range becomes).
    With `communication.gradients_reduce_method = "sum"`, every gradient is
    scaled by the number of batch shards (the sum of the replicas' own mean
    gradients, as EPL), in its bucket or alone; with "mean" the per-device
    program computes exactly what one device computes.

    ```mlir
    %w2: tensor<512x10xf32> {epl.sharding = #epl.sharding<@mesh, [["tensor"], []]>}
    ```
    becomes a `tensor<256x10xf32>` argument on a 2-device "tensor" axis,
    and the row-parallel product it feeds is followed by
    `epl.all_reduce ... over ["tensor"] sum`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let statistics = [
    Statistic<"numCollectives", "collectives", "Collectives inserted">,
    Statistic<"numBuckets", "gradient-buckets", "Fused gradient all-reduces">,
  ];
}

def EPLZeroPass : Pass<"epl-zero", "ModuleOp"> {
  let summary = "ZeRO by `zero.level`: optimizer state, gradients and parameters sharded over the data axes";
  let description = [{
    Reads `zero.level` from `epl.config` and, in each training step of a
    planned module (after `epl-sharding-propagation`, whose layouts of the
    parameters it refines), shards what the ZeRO paper's stages shard over
    the data-parallel axes (the axes of dimension 0 of the inputs' and
    labels' `epl.sharding`; N = their devices), then runs propagation
    again. It only writes shardings; `epl-insert-collectives` makes the
    communication, `epl-apply-optimizer` updates shards (see
    docs/zero.md):

    * every level: each parameter's gradient result gets an `epl.sharding`
      split over the data axes: on the first dimension no other axis splits
      that N divides, else after the axes of the first split dimension
      (`tensor` x `data`) that they divide. Its all-reduce becomes a
      reduce-scatter, and `epl-apply-optimizer` updates only that shard of
      the parameter with a shard of its state (which is laid out like the
      gradient: 1/N of it per device), then all-gathers the new parameter.
      Communication: a reduce-scatter and an all-gather, the bytes of one
      all-reduce. A parameter with no dimension N divides stays whole
      (remark naming it);
    * `v0` (optimizer state): with `pipeline.num_micro_batch` M > 1 the
      micro-batch loop accumulates full gradients, reduce-scattered once
      after the loop (ZeRO-1);
    * `v1` (+ gradients): the loop's accumulator is a shard too (an
      `epl.sharding_constraint` on what the loop yields): each micro-batch's
      gradient is reduce-scattered into a 1/N accumulator (DeepSpeed's
      ZeRO-2). With M = 1, v0 and v1 are the same program;
    * `v2` (+ parameters): each parameter argument is the shard at rest
      (its update needs no all-gather) and is gathered where it is used,
      by an `epl.sharding_constraint` to its own layout before its first
      user per block and phase: the backward gathers it again instead of
      keeping the forward's copy (1.5x the communication of an all-reduce,
      as ZeRO-3).

    Checkpoints stay global: runners assemble and split arguments by their
    shardings. Fewer than 2 data-parallel workers (one device, a mesh
    without a batch split) is an error: ZeRO needs at least 2 (as EPL).

    ```mlir
    // zero.level = "v2", epl.mesh @mesh ["data" = 4]
    func.func @model(%x: tensor<16x12xf32> {epl.arg = "input",
                         epl.sharding = #epl.sharding<@mesh, [["data"], []]>},
                     %w: tensor<12x32xf32> {epl.arg = "param", epl.name = "w"})
        -> (tensor<f32> {epl.result = "loss"},
            tensor<12x32xf32> {epl.name = "w", epl.result = "grad"})
    ```
    becomes
    ```mlir
    func.func @model(%x: ...,
                     %w: tensor<12x32xf32> {epl.arg = "param", epl.name = "w",
                         epl.sharding = #epl.sharding<@mesh, [["data"], []]>})
        -> (tensor<f32> {epl.result = "loss"},
            tensor<12x32xf32> {epl.name = "w", epl.result = "grad",
                epl.sharding = #epl.sharding<@mesh, [["data"], []]>}) {
      %wf = epl.sharding_constraint %w <@mesh, [[], []]> {epl.phase = #epl.phase<forward>} : tensor<12x32xf32>
      ... forward uses of %wf ...
      %wb = epl.sharding_constraint %w <@mesh, [[], []]> {epl.phase = #epl.phase<backward_input>} : tensor<12x32xf32>
      ... backward uses of %wb ...
    ```
  }];
  let statistics = [
    Statistic<"numSharded", "sharded-params", "Parameters sharded over the data axes">,
    Statistic<"numConstraints", "constraints", "Sharding constraints added">,
  ];
}

def EPLPipelinePartitionPass : Pass<"epl-pipeline-partition", "ModuleOp"> {
  let summary = "Turns a pipelined training step into one program per stage device";
  let description = [{
    On a module whose mesh has a `"stage"` axis (epl-plan makes one for a
    model with several named scopes), takes the per-device training step
    (after `epl-insert-collectives`, before `epl-apply-optimizer`): a loop
    over `pipeline.num_micro_batch` micro-batches whose body is one
    micro-batch's forward and backward, each op on a stage (`epl.stage`,
    else the latest stage of what it reads) and in a phase (`epl.phase`,
    else the latest phase of what it reads). Then:
    * the body is cut into pieces, one per stage and phase, each outlined
      as a private function `@<step>_s<stage>_<phase>`: the stage's forward
      (F), input gradients (B) and weight gradients (W) of one micro-batch.
      A piece takes the micro-batch index, the accumulators it adds to, the
      step's arguments it reads and the values of other pieces; it returns
      what other pieces and the accumulators need. Ops that read no stage's
      value (constants, fills, a micro-batch's slice of the inputs) are
      made again in each piece that reads them;
    * a piece may read only what every schedule has made by then: F reads
      F of earlier stages, B reads B of later stages and F of any stage, W
      reads B of its own or later stages and F of any stage; anything else
      is an error naming the op;
    * stage device `d` runs `@<step>_stage<d>`: its arguments (the
      parameters, inputs and labels its pieces read, with their attributes),
      the calls of its pieces in the order of `pipeline.strategy`'s
      schedule, each tagged `epl.action` with its phase, micro-batch and
      stage; an `epl.send` after each value another device reads, an
      `epl.recv` before its first use there (one message stream, the tag,
      per value; micro-batches in order); then what it does with its
      accumulators after the loop (the gradient reduction) and its results;
    * `epl.pipeline @<step>` lists the stage programs; the step is erased.
    Stage `s` runs on stage device `s mod p` (interleaved schedules hold
    several stages per device). The programs are simulated before they are
    written: one that would wait forever is a compile-time error.
    Parameters belong to one stage; a parameter read on two stage devices
    is an error naming it.
    ```mlir
    epl.mesh @mesh ["stage" = 2]
    epl.pipeline @model on @mesh over "stage" stages [@model_stage0, @model_stage1]
        strategy "PreferBackward" micro_batches 2
    func.func @model_stage0(%x: tensor<8x4xf32> {epl.arg = "input", epl.name = "x"}, ...) {
      %c0 = arith.constant 0 : index
      %a0:2 = call @model_s0_forward(%c0, %x, %w) {epl.action = #epl.action<phase = forward, micro_batch = 0, stage = 0>} ...
      epl.send %a0#0 on @mesh over ["stage"] to 1 tag 0 : tensor<4x16xf32>
      ...
      %g0 = epl.recv on @mesh over ["stage"] from 1 tag 1 : tensor<4x16xf32>
      %b0 = call @model_s0_backward_input(...)
      ...
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
  ];
}
def EPLSimulatePipelinePass : Pass<"epl-simulate-pipeline", "ModuleOp"> {
  let summary = "Prints how long each pipeline of a module takes, from its stage programs";
  let description = [{
    For each `epl.pipeline` (see `epl-pipeline-partition`), reads the
    stage programs back into the schedule simulator: each call tagged
    `epl.action` is a compute of the given cost (per stage: a stage of an
    interleaved schedule is a chunk of a device's share), each `epl.send`
    and `epl.recv` a message that arrives `send` after it leaves. Prints to
    standard output the makespan and, per stage device, its busy and idle
    time, its bubble (idle / makespan) and its peak number of micro-batches
    in flight (forwarded, weight gradient not yet computed: the activations
    it holds). The IR is left
    unchanged; a program that would wait forever is an error.
    ```
    $ epl-opt model.mlir --epl-parallelize=devices=4 \
        --epl-simulate-pipeline="forward=1 backward-input=1 backward-weight=1" -o /dev/null
    pipeline @model: ZeroBubbleH1, 4 stage devices, 4 stages, 8 micro-batches
    makespan 27
    device       busy       idle  bubble  peak in flight
         0         24          3   11.1%               4
    ...
    ```
  }];
  let options = [
    Option<"forward", "forward", "double", /*default=*/"1",
           "Cost of one stage's forward of one micro-batch">,
    Option<"backwardInput", "backward-input", "double", /*default=*/"1",
           "Cost of one stage's input gradients of one micro-batch">,
    Option<"backwardWeight", "backward-weight", "double", /*default=*/"1",
           "Cost of one stage's weight gradients of one micro-batch">,
    Option<"send", "send", "double", /*default=*/"0",
           "Time from a send to the arrival of its message">,
  ];
}
def EPLDecomposeAggregatesPass : Pass<"epl-decompose-aggregates"> {
  let summary = "Decomposes aggregated ops (linalg.softmax, epl.scatter_add) into simpler ones";
  let description = [{
    Replaces every op implementing `linalg::AggregatedOpInterface` by the
    ops it stands for: `linalg.softmax` by a max reduction, an exponential
    of the shifted input, a sum reduction and a division (`epl-autodiff`
    differentiates the parts); `epl.scatter_add` by a loop nest of
    `tensor.extract`/`tensor.insert`. The CPU lowering has no loops for
    aggregated ops.

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
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def EPLParallelizeScattersPass : Pass<"epl-parallelize-scatters"> {
  let summary = "Runs a scatter-add's batching rows in parallel";
  let description = [{
    A scatter-add with batching dimensions (the gradient of an embedding
    lookup, of cross-entropy's label pick) adds the updates of each
    position along them into the destination's own row along them, and
    into no other: the rows are independent. This pass makes that
    explicit, so that the GPU lowering runs one thread per row instead of
    one thread for the whole scatter: an `scf.forall` over the batching
    dimensions whose iterations each scatter their slice of the updates,
    without batching dimensions, into their slice of the destination.
    Within a row the updates are added in the order of the positions, as
    before, so the result is the same bit for bit.

    ```mlir
    %dl = epl.scatter_add %minus_ones at (%labels) into %zeros
            {dest_batching_dims = array<i64: 0>,
             updates_batching_dims = array<i64: 0>}
            : tensor<8xf32>, tensor<8xi64> into tensor<8x4xf32>
    ```
    becomes

    ```mlir
    %dl = scf.forall (%b) in (8) shared_outs(%out = %zeros) -> tensor<8x4xf32> {
      %row = tensor.extract_slice %out[%b, 0] [1, 4] [1, 1]
               : tensor<8x4xf32> to tensor<4xf32>
      %label = tensor.extract_slice %labels[%b] [1] [1]
                 : tensor<8xi64> to tensor<i64>
      %update = tensor.extract_slice %minus_ones[%b] [1] [1]
                  : tensor<8xf32> to tensor<f32>
      %sum = epl.scatter_add %update at (%label) into %row
               : tensor<f32>, tensor<i64> into tensor<4xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %sum into %out[%b, 0] [1, 4] [1, 1]
          : tensor<4xf32> into tensor<8x4xf32>
      }
    }
    ```

    The GPU lowerings run it before `epl-decompose-aggregates`; the CPU's
    has no use for it (one core scatters a row at a time anyway).
  }];
  let dependentDialects = [
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def EPLSplitReductionsPass : Pass<"epl-split-reductions"> {
  let summary = "Splits a long reduction over few results into parts reduced in parallel";
  let description = [{
    Each result of a reduction is one thread (of a GPU, or of a CPU rank's
    threads), which runs the reduction's loop, adding one value after
    another: a loss's sum over the batch is one thread over every example,
    a bias's gradient a few hundred threads over batch and sequence. Slow
    on a GPU, and inexact anywhere: a float sum of n values added in turn
    drifts from the exact sum about as n grows (~4e-6 relative at 65536,
    where PyTorch's cascade sums stay near 1e-7). This pass splits such a
    reduction, where it has fewer than
    `target-threads` results, along one of its reduction loops into
    parts: value `r` of the loop goes to part `r mod parts` (neighbouring
    threads read neighbouring values). The parts are reduced in parallel
    into partial results, which a second reduction combines; both are
    split again while they are long. The loop and the number of parts give
    about `target-threads` threads in all, each reducing at least
    `min-per-thread` values, the parts a divisor of the loop's size (of
    the loops, the one with the most parts; a reduction with no loop of at
    least 4 parts is left whole). A keep-dim reduction
    (`(n, c, h, w) -> (0, c, 0, 0)`, batch norm's statistics as torch
    writes them) has its unit dimensions dropped first (upstream's
    `linalg::dropUnitDims`).

    It splits a `linalg.generic` on tensors with one result and static
    loops whose body combines each value into the accumulator with one
    operation of a neutral element (a sum, a product, a maximum) and does
    not read its position, nor writes a result along a reduction loop;
    contractions that BLAS or cuBLAS runs (`epl-matmul-to-runtime`, which
    sum in blocks of their own) stay whole with `keep-gemms` (the
    lowerings set it as `--blas` says), and so does a reduction of `index`
    values. Integer overflow flags are dropped from the combiner (`nsw`:
    a sum in another order may overflow where the sequential one did
    not). Integer reductions and `arith.maximumf`/`minimumf` are
    exact; a float sum or product is computed in another order, a tree of
    parts of at least `min-per-thread` values, whose rounding error grows
    with the parts' sizes and the tree's depth rather than with the
    reduction's length. With `max-per-thread`, a reduction of more values
    per result than that is split too, however many results it has, into
    parts of at most that many. Every lowering runs it after fusion: the
    GPU's with the defaults (threads), the CPU's with `target-threads=1
    max-per-thread=64` (accuracy: a batch-65536 loss and its gradients as
    close to float64 as PyTorch's cascade sums).

    ```mlir
    // The sum of 65536 values: one thread.
    %s = linalg.generic {indexing_maps = [affine_map<(r) -> (r)>, affine_map<(r) -> ()>],
                         iterator_types = ["reduction"]}
        ins(%x : tensor<65536xf32>) outs(%zero : tensor<f32>) {...}
    ```
    becomes, with `target-threads=4096 min-per-thread=16`, 4096 threads
    each summing 16 values, 256 threads summing 16 of those, 16 threads
    summing 16, and one thread summing the last 16:

    ```mlir
    %x2 = tensor.expand_shape %x [[0, 1]] output_shape [16, 4096]
            : tensor<65536xf32> into tensor<16x4096xf32>
    %p = linalg.generic {indexing_maps = [affine_map<(j, k) -> (j, k)>, affine_map<(j, k) -> (k)>],
                         iterator_types = ["reduction", "parallel"]}
        ins(%x2 : tensor<16x4096xf32>) outs(%zeros : tensor<4096xf32>) {...}
    ...
    ```
  }];
  let options = [
    Option<"targetThreads", "target-threads", "int64_t", /*default=*/"65536",
           "Split reductions with fewer results than this, into about this "
           "many threads">,
    Option<"minPerThread", "min-per-thread", "int64_t", /*default=*/"16",
           "Values each thread reduces at least">,
    Option<"maxPerThread", "max-per-thread", "int64_t", /*default=*/"0",
           "Split a reduction of more values per result than this too, "
           "whatever its number of results (0: none)">,
    Option<"keepGemms", "keep-gemms", "bool", /*default=*/"true",
           "Leave whole the contractions epl-matmul-to-runtime makes GEMMs">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let statistics = [
    Statistic<"numSplit", "split", "Reductions split">,
  ];
}

def EPLEmptyTensorPerUsePass : Pass<"epl-empty-tensor-per-use"> {
  let summary = "Gives each use of a tensor.empty an empty tensor of its own, made right before it";
  let description = [{
    Bufferization allocates an empty tensor's buffer where the
    `tensor.empty` is, and an op writing into an empty tensor that a later
    op writes into again gets a copy of its own. torch-mlir makes one
    `tensor.empty` for a run of element-wise ops of one shape, and fusion
    gives one op several results into one: each of them then holds a
    buffer from the `tensor.empty` on, however late it is first written,
    and one of them holds a buffer nothing reads; an empty tensor made
    early (torch-mlir makes a reduction's before the ops that compute its
    input) holds its buffer from there. With an empty tensor per use, made
    right before its user, each buffer comes into being where it is first
    written, as `epl-estimate-memory` counts it. A use in a
    nested region (a loop's body) gets its empty tensor in the
    `tensor.empty`'s block, before the op holding it. The lowerings run it
    after fusion and the splitting of reductions.

    ```mlir
    %e = tensor.empty() : tensor<4x16xf32>
    ...
    %a = linalg.generic ... outs(%e : tensor<4x16xf32>)
    ...
    %b:2 = linalg.generic ... outs(%e, %e : tensor<4x16xf32>, tensor<4x16xf32>)
    ```
    becomes

    ```mlir
    %e0 = tensor.empty() : tensor<4x16xf32>
    %a = linalg.generic ... outs(%e0 : tensor<4x16xf32>)
    ...
    %e1 = tensor.empty() : tensor<4x16xf32>
    %e2 = tensor.empty() : tensor<4x16xf32>
    %b:2 = linalg.generic ... outs(%e1, %e2 : tensor<4x16xf32>, tensor<4x16xf32>)
    ```
  }];
  let statistics = [
    Statistic<"numMade", "made", "Empty tensors made right before their use">,
  ];
}

def EPLSplitStridedWindowsPass : Pass<"epl-split-strided-windows"> {
  let summary = "Splits a contraction over a stride-spread input into one contraction per phase";
  let description = [{
    The input gradient of a strided convolution (`epl-autodiff`'s
    transposed window) reads the output gradient spread by the stride: a
    `tensor.insert_slice` with strides into a zero fill, read at
    `i + c * k + P`, `i` an output position and `k` a tap. All but one in
    s^d of its products are with those zeros. This pass splits such a
    multiply-add contraction by the phase of the output position along each
    strided dimension, `i = s * q + a`: only the taps `k = k0 + s * u` with
    `a + c * k0 + P - offset` divisible by `s` meet a value, at position
    `q + c * u + r` of the dense gradient. Each phase is a contraction of
    the dense gradient (padded where the phases read past it) with that
    strided slice of the taps, inserted into every s-th output position, so
    the contraction does the products that matter and nothing else (4x fewer
    for a stride-2 convolution). Each phase is again a window contraction,
    which `epl-im2col` hands to BLAS. It applies when the output and tap
    loops of each strided dimension read no other dimension of the spread
    input, appear plainly in the output and the taps respectively, and the
    tap's coefficient is coprime with the stride; anything else is left as
    it is (exact either way). The products with the spread's zeros are not
    computed at all, so a NaN or infinite filter value no longer turns them
    into NaN (as in PyTorch's and XLA's transposed convolutions).

    ```mlir
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
    %spread = tensor.insert_slice %dy into %z[0, 2, 0] [1, 3, 4] [1, 2, 1]
        : tensor<1x3x4xf32> into tensor<1x8x4xf32>
    // dx[n, i, c] += spread[n, i - k + 2, f] * w[k, c, f]
    %dx = linalg.generic {...} ins(%spread, %w : tensor<1x8x4xf32>, tensor<3x2x4xf32>)
        outs(%init : tensor<1x6x2xf32>) -> tensor<1x6x2xf32>
    ```
    becomes two contractions of `%dy` (one zero before it: `tensor<1x4x4xf32>`), one
    with the taps `%w[0:3:2]` into `dx[:, 0:6:2]` and one with `%w[1:2:2]`
    into `dx[:, 1:6:2]`.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let statistics = [
    Statistic<"numSplit", "split", "Contractions split by phase">,
  ];
}

def EPLIm2ColPass : Pass<"epl-im2col"> {
  let summary = "Reads convolution windows through patch tensors, so that BLAS runs them";
  let description = [{
    A multiply-add contraction one of whose inputs is read through windows
    (an indexing map that is not a projection: `s * oh + d * kh` of a
    convolution, `i - d * kh + P` of its input gradient) is rewritten to
    read a patch tensor instead, made by a copying `linalg.generic` (im2col)
    and laid out (batch, m, k): the loops it shares with the other input and
    the output, then with the output only, then with the other input only;
    or (batch, k, m), which BLAS reads transposed, when the windowed input's
    contiguous dimension is an m loop (a filter gradient's channels), so
    that the copy runs along it (the ResNet step 13% faster).
    The other input is copied into (batch, k, n) order when its groups are
    not already runs of its dimensions. The result is a contraction over
    projections, which `epl-matmul-to-runtime` hands to BLAS after
    bufferization. Named convolutions are generalized first. This covers a
    convolution, the gradient of its filter and the gradient of its input
    (`epl-autodiff`'s transposed windows); depthwise convolutions and
    pooling are not contractions over a GEMM and stay loops.

    Patches larger than `tile-bytes` are made a tile at a time: an `scf.for`
    over the outermost patch dimension the input reads plainly (the batch),
    in steps of the largest divisor of its size whose tile fits, copies each
    tile and contracts it at once, while it is in cache; the result is a
    slice of the whole (a convolution, an input gradient) or a sum over the
    tiles (a filter gradient). With few channels the patches are several
    times the input, and whole they went out to memory and back: the
    ResNet step of bench/resnet_train.py 62 -> 37 ms, its peak 61 -> 35 MB.
    The GPU lowerings copy all patches at once (`tile-bytes=0`).

    ```mlir
    %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
           ins(%x, %w : tensor<8x28x28x1xf32>, tensor<3x3x1x16xf32>) outs(%z : tensor<8x26x26x16xf32>) -> tensor<8x26x26x16xf32>
    ```
    becomes a copy of `%x`'s patches into `tensor<8x26x26x3x3x1xf32>`
    (`[n, oh, ow, kh, kw, c]`) and a generic contracting them with `%w`
    over (kh, kw, c): a `[5408 x 9] x [9 x 16]` GEMM.
  }];
  let options = [
    Option<"tileBytes", "tile-bytes", "int64_t", /*default=*/"262144",
           "Bytes of patches copied at a time (0: all at once)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let statistics = [
    Statistic<"numContractions", "contractions",
              "Window contractions rewritten to read patches">,
  ];
}

def EPLExpandMathPass : Pass<"epl-expand-math"> {
  let summary = "Expands f32 transcendental functions into polynomials the loop vectorizer can vectorize";
  let description = [{
    `math.exp`, `math.expm1`, `math.log`, `math.log1p`, `math.log2`,
    `math.erf` and `math.tanh` on f32 become arithmetic (range reduction and
    a polynomial or rational approximation: upstream MLIR's
    `populateMathPolynomialApproximationPatterns`), and `math.powf` and
    `math.fpowi` with a constant exponent become multiplications, a square
    root or a reciprocal (`populateMathAlgebraicSimplificationPatterns`).
    A call to libm inside a loop keeps LLVM from vectorizing it: on the
    2-block transformer step, GELU's `erff` and its gradient's `expf` were a
    fifth of the step. The approximations are within a few ulp of the exact
    value over the whole f32 range (test/e2e/test_expand_math.py), subnormals
    included: upstream's read a subnormal input of `log` as 2^-126 and flush
    a subnormal result of `exp` to 0, so around them the input is scaled
    into the normal range by a power of two and the result scaled back (5
    cheap ops beside some 25); f64 keeps libm's functions.

    ```mlir
    %y = math.powf %x, %c2 : f32   // %c2 = arith.constant 2.0 : f32
    ```
    becomes
    ```mlir
    %y = arith.mulf %x, %x : f32
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def EPLFuseElementwisePass : Pass<"epl-fuse-elementwise"> {
  let summary = "Fuses element-wise linalg ops on tensors into their consumers";
  let description = [{
    Producer-consumer fusion of `linalg.generic` ops on tensors
    (upstream's `fuseElementwiseOps`), before bufferization: an element-wise
    producer moves into the loop of its consumer, element-wise or
    reduction, so an intermediate only that consumer reads is never
    written. Without fusion a training step is one loop nest per op.

    A producer other ops also read stays a result of the fused op and
    replaces the producer for them (computed once, stored once; upstream's
    pattern would compute it again in the fused op). Fused only when nothing
    is computed twice and BLAS keeps its GEMMs: the consumer reads the
    producer through a permutation of its loops (not a broadcast, a window,
    or a contraction's operand, which would compute each element again), the
    producer's other users come after the consumer, and the consumer is not
    a contraction (with `keep-contractions`, for `epl-matmul-to-runtime`).
    The arithmetic is unchanged, op for op: fused and unfused steps compute
    the same bits.

    Each result of a reduction is a thread, so a producer other ops read
    too stays out of a reduction that `epl-split-reductions` (which every
    lowering runs next) would split with the options given here as
    `split-target-threads`, `split-min-per-thread` and
    `split-max-per-thread` (its own, by one rule): fused, the producer's
    whole result would be written by the reduction's threads (a ReLU's
    gradient, 4096x16, by the 16 threads of its bias's gradient), and the
    reduction could not be split. It is then a kernel of its own; into a
    reduction left whole, fusion saves a kernel.

    A consumer that reads a tensor of one repeated scalar (a `linalg.fill`,
    or its generic form) where the producer cannot fuse (ReLU's `max(h, 0)`
    whose zeros are also the init of the matmul before it) reads the scalar
    instead: the operand is left unread, so no pass goes over the buffer of
    zeros, and bufferization may write into it.

    ```mlir
    %e = linalg.generic {...["parallel", "parallel"]} ins(%x, %max) ... {
      %d = arith.subf %in, %m : f32
      %v = math.exp %d : f32
      linalg.yield %v : f32
    } -> tensor<8x16xf32>
    %s = linalg.generic {...["parallel", "reduction"]} ins(%e) outs(%zero) {
      %a = arith.addf %in, %out : f32
      linalg.yield %a : f32
    } -> tensor<8xf32>
    %y = linalg.generic {...} ins(%e, %s) ... // the softmax: e / s
    ```
    becomes one reduction computing `exp(x - max)` as it sums, yielding the
    exponentials for the division too: a softmax is three loop nests (max;
    exponentials and their sum; division), two of them over the logits.
  }];
  let options = [
    Option<"keepContractions", "keep-contractions", "bool", /*default=*/"true",
           "Do not fuse into contractions, which BLAS runs">,
    Option<"splitTargetThreads", "split-target-threads", "int64_t",
           /*default=*/"0",
           "epl-split-reductions' target-threads, which the next pass "
           "splits with: no producer other ops read too is fused into a "
           "reduction it splits (0 with no max: none is split)">,
    Option<"splitMinPerThread", "split-min-per-thread", "int64_t",
           /*default=*/"16", "epl-split-reductions' min-per-thread">,
    Option<"splitMaxPerThread", "split-max-per-thread", "int64_t",
           /*default=*/"0", "epl-split-reductions' max-per-thread">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numFused", "fused", "Producers fused into a consumer">,
    Statistic<"numScalarReads", "scalar-reads",
              "Reads of a filled tensor turned into reads of its scalar">,
  ];
}

def EPLOptimizeAllocationLivenessPass
    : Pass<"epl-optimize-allocation-liveness", "::mlir::func::FuncOp"> {
  let summary = "Moves each buffer's free to right after its last use, in linear time";
  let description = [{
    Upstream's `optimize-allocation-liveness`, with the same result, for
    large functions: a buffer allocated in a block and freed once in that
    block is freed right after its last use in the block (a use inside a
    nested region counts as its ancestor's; views of the buffer count, as
    `BufferViewFlowAnalysis` finds them). Upstream compares ops with
    `isBeforeInBlock` after moving each free, which renumbers the block:
    time quadratic in the block's size (a 12-block transformer step's host
    code: 0.24 s, against 0.008 s at 2 blocks). This pass numbers each
    block's ops once and keeps the order of the frees it moves in the
    numbers (frees moved after the same op go in upstream's order: the one
    moved last first).

    ```mlir
    %a = memref.alloc() : memref<8xf32>
    call @use(%a) : (memref<8xf32>) -> ()
    call @other() : () -> ()
    memref.dealloc %a : memref<8xf32>
    ```
    becomes
    ```mlir
    %a = memref.alloc() : memref<8xf32>
    call @use(%a) : (memref<8xf32>) -> ()
    memref.dealloc %a : memref<8xf32>
    call @other() : () -> ()
    ```
  }];
  let statistics = [
    Statistic<"numMoved", "moved", "Frees moved to their buffer's last use">,
  ];
}

def EPLFreeLocalBuffersPass : Pass<"epl-free-local-buffers"> {
  let summary = "Frees unconditionally the buffers a `bufferization.dealloc` holds that alias nothing it retains";
  let description = [{
    `ownership-based-buffer-deallocation` ends a straight-line function with
    one `bufferization.dealloc` of every buffer it allocated, retaining what
    the function returns. Upstream's `buffer-deallocation-simplification`
    splits it by asking alias analysis about every pair of buffers: 2.4 s of
    a 12-block transformer step's 5.9 s lowering, growing with the square of
    the step's size. Most of those buffers are `memref.alloc`s whose every
    alias is a view (`memref.subview`, `memref.collapse_shape`, ...) used by
    calls and kernels, never returned, yielded or stored: such a buffer is
    freed by a `memref.dealloc` of its own (its condition must be constant
    true), found in one walk over its uses. What remains goes to upstream's
    simplification, now small. `optimize-allocation-liveness` then moves
    each `memref.dealloc` to right after its buffer's last use.

    ```mlir
    %r:1 = bufferization.dealloc (%a, %b : memref<8xf32>, memref<8xf32>)
        if (%true, %true) retain (%b : memref<8xf32>)
    ```
    becomes
    ```mlir
    memref.dealloc %a : memref<8xf32>
    %r:1 = bufferization.dealloc (%b : memref<8xf32>) if (%true) retain (%b : memref<8xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numFreed", "freed", "Buffers freed unconditionally">,
  ];
}

def EPLAllReduceInPlacePass : Pass<"epl-all-reduce-in-place", "ModuleOp"> {
  let summary = "Writes an all-reduce's sum over its contributions when nothing reads them after";
  let description = [{
    The runtime call of an all-reduce writes its sum into a buffer of its
    own. A gradient's contributions are read by nothing else: the sum can
    be written over them, and the buffer they are in lives as long as the
    sum's would. That saves writing 7 MiB of fresh memory per data-parallel
    MLP step per rank, and a buffer as large at the step's busiest point
    (both runtimes' all-reduces accept one buffer for both: the threads
    backend then always shares the reduction out, MPI copies its input
    before writing).

    Runs on buffers after deallocation is placed. A call
    `epl_rt_all_reduce_<type>(in, out, ...)` is rewritten when `out` is a
    fresh `memref.alloc` used by nothing before the call, `in` is an
    allocation (or a reshape of one) of the same type and identity layout
    that nothing uses after the call but its `memref.dealloc`, all in one
    block. Then `out`'s uses become `in`'s, and `in`'s allocation is freed
    where `out` was.

    ```mlir
    %c = memref.cast %g : memref<8xf32> to memref<*xf32>
    %s = memref.alloc() : memref<8xf32>
    %cs = memref.cast %s : memref<8xf32> to memref<*xf32>
    call @epl_rt_all_reduce_f32(%c, %cs, %group, %sum) : (...) -> ()
    memref.dealloc %g : memref<8xf32>
    "use"(%s) : (memref<8xf32>) -> ()
    memref.dealloc %s : memref<8xf32>
    ```
    becomes
    ```mlir
    %c = memref.cast %g : memref<8xf32> to memref<*xf32>
    call @epl_rt_all_reduce_f32(%c, %c, %group, %sum) : (...) -> ()
    "use"(%g) : (memref<8xf32>) -> ()
    memref.dealloc %g : memref<8xf32>
    ```
  }];
  let statistics = [
    Statistic<"numInPlace", "in-place", "All-reduces written over their input">,
  ];
}

def EPLTieInPlaceArgumentsPass
    : Pass<"epl-tie-in-place-arguments", "func::FuncOp"> {
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let summary = "Writes each result that a runner updates in place over its argument";
  let description = [{
    epl-run updates parameters and optimizer state in place: for a result
    argument marked `epl.in_place_of = N` (the entry wrappers mark those
    that `mayUpdateInPlace` proved safe) it passes the buffer of argument
    `N`. Said in the IR, that is one buffer; left implicit, the function
    sees two arguments and every kernel of the update takes both. LLVM's
    loop vectorizer then checks at run time that they do not overlap; they
    do, being one buffer, so every optimizer update ran its scalar loop
    (the MLP's momentum update: 5 of bench/cpu_train.py's 17 ms on two data
    parallel ranks).

    Runs on buffers, after bufferization, whose analysis must see the
    result and the argument apart (it relies on the argument being read
    only). The wrapper proved the update safe on tensors; the lowering since
    may have moved a read of the argument after the update (fusion), or
    built the result's init in its buffer first (empty-tensor elimination).
    So the pass checks it again on buffers: every op that touches argument
    `N` (through any view) comes before every op that touches the result,
    but for one element-wise op reading the argument and writing the
    result element by element. Then every use of the result argument
    becomes a use of argument `N`; otherwise the argument's readers read a
    copy of it taken on entry (the runner passes one buffer either way).
    The mark goes; the argument stays, unused, because the runner still
    passes it.

    ```mlir
    func.func @step(%p: memref<4xf32>, %g: memref<4xf32>,
                    %new: memref<4xf32> {epl.in_place_of = 0 : i64}) {
      linalg.sub ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%new : memref<4xf32>)
      return
    }
    ```
    becomes
    ```mlir
    func.func @step(%p: memref<4xf32>, %g: memref<4xf32>, %new: memref<4xf32>) {
      linalg.sub ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%p : memref<4xf32>)
      return
    }
    ```
  }];
  let statistics = [
    Statistic<"numTied", "tied", "Result arguments written over their argument">,
    Statistic<"numCopied", "copied",
              "Arguments read after their result is written, copied on entry">,
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
    either way. Identical ops (same types, attributes and body, such as one
    layer's ops in every block of a transformer) call one shared kernel, so
    code size and compile time grow with the distinct ops, not with depth.

    A `memref.copy` between buffers that are not both contiguous (a pad's
    interior, a transpose staged for BLAS) becomes a `linalg.copy` kernel
    first: lowered to LLVM it would call MLIR's `memrefCopy`, which steps
    through the elements in a generic loop with a call per row, several
    times slower than compiled loops. Contiguous copies stay one `memcpy`.

    A buffer the op both reads and writes (an optimizer update written over
    its parameter, see `epl-tie-in-place-arguments`) is one argument of the
    kernel, not two: LLVM's loop vectorizer checks two pointer arguments for
    overlap at run time, and for one buffer passed twice that check fails
    and the scalar loop runs.

    A kernel whose every call passes buffers that cannot overlap (different
    allocations, an allocation and any other buffer of known origin,
    different globals; not two views of one buffer, nor two of the
    function's arguments, which the runner may pass as one buffer, nor a
    buffer of unknown origin: chosen by a select, yielded by a loop, made by
    an op that is not a view) gets the LLVM function
    attribute `"epl-noalias-arguments"="true"` through `passthrough`, and
    the JIT and `epl-compile` make its pointer arguments `noalias`: the
    loop vectorizer needs no overlap checks, without which it left short
    loops scalar (a convolution's input-gradient patches: the ResNet step of
    bench/resnet_train.py 29 -> 24.5 ms).

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
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numOps", "ops", "Linalg ops outlined">,
    Statistic<"numCopies", "copies", "Non-contiguous copies made kernels">,
    Statistic<"numKernels", "kernels", "Distinct kernel functions">,
  ];
}

def EPLThreadKernelsPass : Pass<"epl-thread-kernels", "ModuleOp"> {
  let summary = "Splits large kernels' outermost parallel loop over the rank's threads";
  let description = [{
    Runs after `epl-outline-kernels` on the CPU. A kernel whose op's
    outermost loop (loops of one iteration before it do not count: an
    im2col tile of one image) is parallel, with a static trip count N, and
    whose whole iteration space has at least `min-iterations` points, takes
    two more arguments `%lo, %hi`: it runs iterations `[lo, hi)` of that
    loop, on subviews of the operands that loop indexes. Each call of it becomes a call of the
    runtime's `epl_rt_parallel_for(task, context, N)`, which cuts `[0, N)`
    into one contiguous chunk per thread of the rank (`epl-run --threads-per-rank`)
    and runs `task(context, lo, hi)` for each: `task` is the kernel's
    `@<kernel>_task`, which reads the call's arguments (as LLVM values:
    memref descriptors, scalars) from `context`, an array of pointers to
    them that the caller fills on its stack.

    Every output element is computed by one thread, by the same sequential
    loops as before, so results are bit-identical to one thread. Kernels
    are left alone where a split could change that or race: a first loop
    that is a reduction, an output that loop does not index, an operand
    that reads it in any form but a plain dimension (`d0 + d4`), a body
    that reads its `linalg.index`, calls out or asserts (a failed
    `cf.assert` ends the run through the runtime, on the rank's own thread)
    or writes memory, or dynamic shapes.

    ```mlir
    call @__epl_kernel_0(%a, %b) : (memref<1024x64xf32>, memref<1024x64xf32>) -> ()
    ```
    becomes
    ```mlir
    %fn = constant @__epl_kernel_0_task : (!llvm.ptr, i64, i64) -> ()
    call @epl_rt_parallel_for(%fn, %context, %c1024) : (...) -> ()
    ...
    func.func private @__epl_kernel_0(%a: memref<1024x64xf32>,
        %b: memref<1024x64xf32>, %lo: index, %hi: index) {
      %sa = memref.subview %a[%lo, 0] [%n, 64] [1, 1] : ...
      %sb = memref.subview %b[%lo, 0] [%n, 64] [1, 1] : ...
      linalg.generic {...} ins(%sa : ...) outs(%sb : ...) {...}
    }
    ```
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", "1 << 15",
           "Iteration points a kernel needs to be split (smaller ones cost "
           "more to hand to threads than they take)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numKernels", "kernels", "Kernels split over threads">,
    Statistic<"numCalls", "calls", "Calls made parallel">,
  ];
}

def EPLOutlineRepeatsPass : Pass<"epl-outline-repeats", "ModuleOp"> {
  let summary = "Outlines repeated runs of host code into one function each";
  let description = [{
    Runs on the host code of a lowered step (after `epl-outline-kernels` and
    `epl-thread-kernels`: buffers, kernel calls and runtime calls). A model of
    N identical blocks lowers to host code that repeats N times on other
    buffers; every later pass, and LLVM's code generator, would handle each
    copy again, so compile time grows with depth. This pass finds runs of
    consecutive, structurally identical pieces of a function's body (the
    same ops, attributes, types and regions, wired alike: an operand defined
    in the piece at the same position in every copy, else an input), moves
    one copy into a private function `@__epl_repeat_<n>` and replaces every
    copy with a call of it. What a copy reads from before it becomes an
    argument (a constant, global or other operand-free pure op that every
    copy reads alike is cloned into the function instead, so kernels still
    see constants); what later code reads becomes a result.

    The calls are cheap for LLVM: a buffer whose layout is static crosses as
    its two pointers (allocated, aligned) instead of its descriptor's
    3 + 2 x rank fields, and comes back through an array of pointer pairs in
    the caller's frame (`out`, the last argument) instead of an aggregate
    return; the callee and caller rebuild descriptors from constants.

    The program does the same work in the same order: allocations, frees,
    kernel and runtime calls happen as before, so results and peak memory
    are unchanged. Pieces are found by their ops' signatures (the periods at
    which they recur), biggest first, and checked op by op; a piece is
    outlined when the ops it removes exceed what its calls add by
    `min-ops` (counted as LLVM sees them, descriptors folded), and left
    inline when it allocates on the stack anywhere (`memref.alloca`,
    `llvm.alloca`, `llvm.intr.stacksave`, nested regions included): what it
    hands on from its frame would not outlive the call. Kernels
    (`@__epl_kernel_*`) are left alone.

    ```mlir
    // Copy 1 of 12: copy 0 reads the step's argument and frees nothing.
    %b = memref.alloc() : memref<64xf32>
    call @__epl_kernel_0(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
    call @__epl_kernel_1(%b, %c2) : (memref<64xf32>, f32) -> ()
    // ... (more kernel and runtime calls)
    memref.dealloc %a : memref<64xf32>
    // Copy 2 of 12, alike on %b, and so on.
    ```
    becomes
    ```mlir
    %out = llvm.alloca %one x !llvm.array<2 x ptr> : (i64) -> !llvm.ptr
    ...
    call @__epl_repeat_0(%a_allocated, %a_aligned, %out)
        : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
    %b_allocated = llvm.load ...   // %out[0]
    %b_aligned = llvm.load ...     // %out[1]
    call @__epl_repeat_0(%b_allocated, %b_aligned, %out) : ...
    ...
    func.func private @__epl_repeat_0(%allocated: !llvm.ptr,
        %aligned: !llvm.ptr, %out: !llvm.ptr) {
      %a = ... // memref<64xf32> rebuilt from the pointers and constants
      %c2 = arith.constant 2.0 : f32
      %b = memref.alloc() : memref<64xf32>
      call @__epl_kernel_0(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
      ...
      memref.dealloc %a : memref<64xf32>
      // %b's pointers stored to %out[0], %out[1]
      return
    }
    ```
  }];
  let options = [
    Option<"minOps", "min-ops", "int64_t", "32",
           "Ops outlining a piece must save, net of its calls; also the "
           "fewest ops a piece has (at least 1)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numFunctions", "functions", "Functions outlined">,
    Statistic<"numCalls", "calls", "Copies replaced with a call">,
  ];
}

def EPLEstimateMemoryPass : Pass<"epl-estimate-memory", "ModuleOp"> {
  let summary = "Estimates the memory each device's training step holds";
  let description = [{
    For each public function (the step one device runs; for a pipeline,
    each stage device's program), computes from the tensor-level IR the
    bytes of its parameters, optimizer state and inputs (arguments tagged
    `epl.arg`), of its gradients (results tagged `grad`, or what the
    optimizer's ops read that the step computed), and the peak of the
    buffers the step allocates itself (activations and temporaries), by
    replaying what the CPU lowering does: an op writes into its destination
    operand when nothing reads that buffer afterwards (one-shot
    bufferization; a tensor later inserted into another is built in that
    one's buffer, as empty-tensor elimination does), else into a fresh
    buffer; slices and reshapes are views; `scf.if` yields its branches'
    buffers;
    collectives, receives and calls allocate their results, and a callee's
    own buffers add to its caller's at the call; a buffer dies at its last
    use, which inside a loop is the loop's end; what the step returns lives
    to its end. The peak is what `epl-run` measures (`peak_bytes`: buffers
    the step allocates; the runner holds the arguments). See
    docs/memory.md.

    With `arguments-around-use`, the step's arguments and results are
    buffers of its peak too, each from the first top-level op that uses it
    (or a view of it) to the last, an update sharing its argument's: the
    device copies of a GPU step under `offload.level = "v0"`
    (`epl-copy-arguments-to-device`), which `epl-run` and `epl-compile` ask
    for there.

    The numbers are attached to the function as `epl.memory_estimate`
    (bytes) and, with `print` (the default), printed one line per function:
    ```
    $ epl-opt model.mlir --epl-training-step --epl-estimate-memory -o /dev/null
    memory estimate @mlp: params 7.11 MiB, opt_state 7.11 MiB, inputs 794.0 KiB, grads 7.11 MiB, peak buffers 18.18 MiB (19059436 bytes)
    ```
    With `explain`, what makes the peak, largest first: what to change
    to bring it down (a layer to checkpoint, a buffer the fusion keeps):
    ```
    $ epl-opt model.mlir --epl-training-step --epl-estimate-memory="explain" -o /dev/null
    memory estimate @mlp: peak 19059436 bytes at 'linalg.matmul' at mlp.mlir:12:10, held by:
      3211280 bytes: the result of 'linalg.generic' at mlp.mlir:10:10
      ...
    ```
    ```mlir
    func.func @mlp(...) attributes {epl.memory_estimate = {grads = 7454760 : i64,
        inputs = 813056 : i64, opt_state = 7454760 : i64,
        params = 7454760 : i64, peak = 19059436 : i64}}
    ```
  }];
  let options = [
    Option<"print", "print", "bool", /*default=*/"true",
           "Print one line per function to standard output">,
    Option<"argumentsAroundUse", "arguments-around-use", "bool",
           /*default=*/"false",
           "Count the step's arguments and results in its peak, each from "
           "its first use to its last (a GPU step under offload v0)">,
    Option<"blas", "blas", "bool", /*default=*/"true",
           "Contractions run as the runtime's GEMM (epl-run --blas): an "
           "operand BLAS cannot read in place is a contiguous copy during "
           "the GEMM">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Print, for each function, the op at its peak and the buffers "
           "live there, largest first, with the ops that made them">,
  ];
  // The replay runs the lowering's empty-tensor elimination, whose analysis
  // needs the bufferization dialect's interfaces.
  let dependentDialects = ["bufferization::BufferizationDialect"];
}

#endif // EPL_DIALECT_EPL_TRANSFORMS_PASSES_TD
