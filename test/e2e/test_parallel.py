"""Data and tensor parallelism: for every strategy, the N-rank run's per-step
losses and final parameters equal the 1-rank run's, on threads and under
mpirun; the run report shows the communication the strategies need and no
more."""

import json
import pathlib

import numpy as np
import pytest

from conftest import BUILD, MPIRUN, epl_run, losses, run
import epl
from epl import safetensors

STEPS = 10
RTOL = 1e-5


def mlp(kind, micro_batches=1):
    """The models of the strategies under test, as EPL users write them."""
    config = {"optimizer.type": "momentum", "optimizer.lr": 0.05,
              "pipeline.num_micro_batch": micro_batches}
    if kind == "colocated":
        config["cluster.colocate_split_and_replicate"] = True
    epl.init(epl.Config(config))
    x = epl.input("x", (16, 12))
    y = epl.label("y", (16, 8))
    if kind in ("data", "replicate2"):
        # replicate(2): a replica spans 2 devices, still data parallel.
        with epl.replicate(device_count=1 if kind == "data" else 2):
            h = epl.layers.Dense(32, activation="tanh", name="fc1")(x)
            logits = epl.layers.Dense(8, name="head")(h)
    elif kind in ("split", "data_split"):
        devices = 4 if kind == "split" else 2
        h = epl.layers.Dense(16, activation="tanh", name="embed")(x)
        with epl.split(device_count=devices):   # a Megatron MLP block
            f = epl.layers.Dense(32, activation="gelu", name="mlp_in")(h)
            h = epl.layers.add(h, epl.layers.Dense(16, name="mlp_out")(f))
        logits = epl.layers.Dense(8, name="head")(h)
    elif kind == "colocated":
        with epl.replicate(device_count=4):
            h = epl.layers.Dense(32, activation="relu", name="features")(x)
        with epl.split(device_count=4):
            logits = epl.layers.Dense(8, name="classifier")(h)
    return epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y))


def problem():
    rng = np.random.default_rng(2)
    return {"x": rng.standard_normal((16, 12)).astype(np.float32),
            "y": np.eye(8, dtype=np.float32)[rng.integers(0, 8, 16)]}


def train(tmp_path, kind, ranks, mpi=False, tag="", micro_batches=1):
    model = tmp_path / f"{kind}.mlir"
    model.write_text(mlp(kind, micro_batches))
    data = tmp_path / "d.safetensors"
    safetensors.save(data, problem())
    save = tmp_path / f"{kind}{tag}.{ranks}.safetensors"
    report = tmp_path / f"{kind}{tag}.{ranks}.json"
    out = epl_run(model, "--data", data, "--steps", STEPS, "--seed", 5, "--save", save,
                  "--report", report, ranks=ranks, mpi=mpi)
    return losses(out.stdout), safetensors.load(save), json.loads(report.read_text())


@pytest.mark.parametrize("mpi", [False, True], ids=["threads", "mpi"])
@pytest.mark.parametrize("kind", ["data", "replicate2", "split", "data_split", "colocated"])
def test_four_ranks_equal_one(tmp_path, kind, mpi):
    if mpi and not MPIRUN:
        pytest.skip("mpirun is not installed")
    one_losses, one_params, _ = train(tmp_path, kind, 1)
    four_losses, four_params, report = train(tmp_path, kind, 4, mpi=mpi, tag="mpi" * mpi)
    assert report["ranks"] == 4
    assert report["collectives"], "a 4-rank run must communicate"
    np.testing.assert_allclose(four_losses, one_losses, rtol=RTOL)
    assert sorted(four_params) == sorted(one_params)
    for name, value in one_params.items():
        np.testing.assert_allclose(four_params[name], value, rtol=RTOL, atol=1e-6,
                                   err_msg=name)
    assert one_losses[-1] < one_losses[0]


def collectives(report, kind, axes):
    return [c for c in report["collectives"] if c["kind"] == kind and c["axes"] == axes]


def test_megatron_block_all_reduces_once_forward_once_backward(tmp_path):
    _, _, report = train(tmp_path, "split", 4)
    tensor = collectives(report, "all_reduce", ["tensor"])
    assert len(tensor) == 1
    assert tensor[0]["count"] == 2 * STEPS       # one forward, one backward
    assert not [c for c in report["collectives"] if c["kind"] == "all_gather"]


def test_data_parallel_gradients_in_at_most_max_splits_buckets(tmp_path):
    _, params, report = train(tmp_path, "data", 4)
    data = collectives(report, "all_reduce", ["data"])
    grad_bytes = sum(v.nbytes for n, v in params.items() if "." not in n)
    # Per step: the gradient buckets (at most communication.max_splits = 5)
    # and the loss.
    (entry,) = data
    assert entry["count"] <= (5 + 1) * STEPS
    assert entry["bytes"] == STEPS * (grad_bytes + 4)


@pytest.mark.parametrize("mpi", [False, True], ids=["threads", "mpi"])
@pytest.mark.parametrize("kind", ["data", "data_split", "colocated"])
def test_gradient_accumulation_on_four_ranks_equals_one(tmp_path, kind, mpi):
    """2 micro-batches: each replica cuts its shard of the batch into
    micro-batches and accumulates unreduced gradients; they are all-reduced
    once per step, before the update."""
    if mpi and not MPIRUN:
        pytest.skip("mpirun is not installed")
    one_losses, one_params, _ = train(tmp_path, kind, 1, micro_batches=2)
    losses, params, report = train(tmp_path, kind, 4, mpi=mpi, tag="ga", micro_batches=2)
    np.testing.assert_allclose(losses, one_losses, rtol=RTOL)
    for name, value in one_params.items():
        np.testing.assert_allclose(params[name], value, rtol=RTOL, atol=1e-6, err_msg=name)
    # Against the run without accumulation: the same full-batch step.
    plain_losses, _, _ = train(tmp_path, kind, 1)
    np.testing.assert_allclose(one_losses, plain_losses, rtol=RTOL)
    if kind == "data":
        (entry,) = collectives(report, "all_reduce", ["data"])
        grad_bytes = sum(v.nbytes for n, v in params.items() if "." not in n)
        # Gradients and the loss once per step (at most max_splits
        # buckets, and the loss: a mean scaled in each micro-batch is still
        # a partial sum), never once per micro-batch.
        assert entry["count"] <= (5 + 1) * STEPS
        assert entry["bytes"] == STEPS * (grad_bytes + 4)


def test_split_cross_entropy_never_gathers_logits(tmp_path):
    """The classifier's logits are split by class; the cross-entropy reduces
    their max and sum of exponentials over the devices instead of gathering
    them. (Only the batch is ever gathered: the features, forward.)"""
    model = tmp_path / "colocated.mlir"
    model.write_text(mlp("colocated"))
    program = run([BUILD / "bin" / "epl-opt", model, "--epl-parallelize=devices=4"]).stdout
    gathers = [l for l in program.splitlines() if "epl.all_gather" in l]
    assert gathers and all(" dim 0 " in l for l in gathers), gathers
    assert "over [\"tensor\"] max" in program       # the max of the logits
    _, _, report = train(tmp_path, "colocated", 4)
    assert collectives(report, "all_reduce", ["tensor"])


def test_sequence_parallel_block_equals_one_device(tmp_path):
    """The sequence-parallel module of test/Transforms/epl-insert-collectives
    (its first; reduce_scatter forward, all_gather backward) trains like one
    device."""
    from conftest import ROOT
    text = (ROOT / "test" / "Transforms" / "epl-insert-collectives.mlir").read_text()
    text = text.split("// -----")[0]
    model = tmp_path / "sp.mlir"
    model.write_text("\n".join(l for l in text.splitlines() if not l.startswith("// RUN")))
    one = losses(epl_run(model, "--steps", STEPS, "--seed", 3).stdout)
    report = tmp_path / "r.json"
    four = losses(epl_run(model, "--steps", STEPS, "--seed", 3, "--report", report,
                          ranks=4).stdout)
    np.testing.assert_allclose(four, one, rtol=RTOL)
    kinds = {c["kind"] for c in json.loads(report.read_text())["collectives"]}
    assert {"reduce_scatter", "all_gather"} <= kinds


def _data_parallel_module(tmp_path, extra, lr=0.05, kind="data"):
    """The data-parallel MLP, or (kind "colocated") the replicated feature
    extractor and split classifier sharing 4 devices, whose batch is split
    over the split axis."""
    config = {"optimizer.type": "momentum", "optimizer.lr": lr, **extra}
    if kind == "colocated":
        config["cluster.colocate_split_and_replicate"] = True
    epl.init(epl.Config(config))
    x = epl.input("x", (16, 12))
    y = epl.label("y", (16, 8))
    if kind == "colocated":
        with epl.replicate(device_count=4):
            h = epl.layers.Dense(32, activation="relu", name="features")(x)
        with epl.split(device_count=4):
            logits = epl.layers.Dense(8, name="classifier")(h)
    else:
        with epl.replicate(device_count=1):
            h = epl.layers.Dense(32, activation="tanh", name="fc1")(x)
            logits = epl.layers.Dense(8, name="head")(h)
    path = tmp_path / (f"{kind}-" + "-".join(f"{k}={v}" for k, v in extra.items()) +
                       f"-lr{lr}.mlir")
    path.write_text(epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y)))
    data = tmp_path / "d.safetensors"
    safetensors.save(data, problem())
    return path, data


@pytest.mark.parametrize("kind", ["data", "colocated"])
@pytest.mark.parametrize("micro_batches", [1, 2])
def test_sum_reduce_method_sums_the_replicas_mean_gradients(tmp_path, micro_batches, kind):
    """"sum": 4 replicas' own mean gradients summed, i.e. 4 times the
    full batch's; with momentum SGD that is the 1-device run at 4x lr (with
    micro-batches, both sum them too). Colocated, the batch is split over
    the split axis: its 4 shards are the replicas, for every gradient (the
    classifier's too, computed on the gathered batch)."""
    micro = {"pipeline.num_micro_batch": micro_batches}
    summed, data = _data_parallel_module(
        tmp_path, {"communication.gradients_reduce_method": "sum", **micro}, kind=kind)
    reference, _ = _data_parallel_module(
        tmp_path, {"communication.gradients_reduce_method": "sum", **micro}, lr=0.2,
        kind=kind)
    four = losses(epl_run(summed, "--data", data, "--steps", STEPS, "--seed", 5,
                          ranks=4).stdout)
    one = losses(epl_run(reference, "--data", data, "--steps", STEPS, "--seed", 5).stdout)
    np.testing.assert_allclose(four, one, rtol=RTOL)


@pytest.mark.parametrize("kind", ["data", "colocated"])
def test_fp16_gradients_halve_the_traffic(tmp_path, kind):
    """fp16 compresses the data-parallel gradient reductions: over "data",
    or colocated over the split axis that carries the batch (where the
    classifier's activations are reduced too, in f32 both times)."""
    fp16, data = _data_parallel_module(tmp_path, {"communication.fp16": True}, kind=kind)
    fp32, _ = _data_parallel_module(tmp_path, {"communication.max_splits": 5}, kind=kind)
    report16, report32 = tmp_path / "16.json", tmp_path / "32.json"
    half = losses(epl_run(fp16, "--data", data, "--steps", STEPS, "--seed", 5,
                          "--report", report16, ranks=4).stdout)
    full = losses(epl_run(fp32, "--data", data, "--steps", STEPS, "--seed", 5,
                          "--report", report32, ranks=4).stdout)
    # Half precision on the wire, f32 arithmetic: close, not equal.
    np.testing.assert_allclose(half, full, rtol=2e-3)
    axis = ["data"] if kind == "data" else ["tensor"]
    traffic = {}
    for name, path in (("16", report16), ("32", report32)):
        entries = collectives(json.loads(path.read_text()), "all_reduce", axis)
        traffic[name] = sum(e["bytes"] for e in entries)
    if kind == "data":
        loss_bytes = 4 * STEPS
        assert traffic["16"] - loss_bytes == (traffic["32"] - loss_bytes) // 2
    else:
        # The reduced gradients are the replicated features' (12x32 + 32):
        # 2 bytes per element instead of 4.
        assert traffic["32"] - traffic["16"] == STEPS * (12 * 32 + 32) * 2


FP16_OVERFLOW = ("the model's assertion failed in step 1: \"a gradient bucket summed in fp16 "
                 "(communication.fp16) is not finite: a gradient times "
                 "communication.fp16_scale = 1e+09, or its sum over the replicas, is "
                 "beyond fp16's 65504 (lower the scale), or a gradient is not finite at ")


@pytest.mark.parametrize("mpi", [False, True], ids=["threads", "mpi"])
def test_fp16_gradients_beyond_fp16_are_an_error(tmp_path, mpi):
    """A gradient that overflows fp16 on the wire would make every parameter
    NaN with exit code 0: the step stops instead, naming the key."""
    fp16, data = _data_parallel_module(
        tmp_path, {"communication.fp16": True, "communication.fp16_scale": 1e9})
    out = epl_run(fp16, "--data", data, "--steps", STEPS, "--save", tmp_path / "w.safetensors",
                  ranks=4, mpi=mpi, expect_ok=False)
    assert out.returncode == 1, out.stderr
    assert FP16_OVERFLOW in out.stderr
    assert "step 1 loss" not in out.stdout
    assert not (tmp_path / "w.safetensors").exists()


def test_threads_and_mpi_ranks_are_bit_identical(tmp_path):
    """The same program on 2 thread ranks and on 2 MPI processes prints the
    same losses to the last digit (one BLAS thread per rank on both) and
    saves the same bytes."""
    if not MPIRUN:
        pytest.skip("mpirun is not installed")
    threads, _, _ = train(tmp_path, "data_split", 4, tag="t")
    mpi, _, _ = train(tmp_path, "data_split", 4, mpi=True, tag="m")
    assert threads == mpi
    a = (tmp_path / "data_split" "t.4.safetensors").read_bytes()
    b = (tmp_path / "data_split" "m.4.safetensors").read_bytes()
    assert a == b


@pytest.mark.parametrize("ranks", [2, 4])
def test_element_of_a_split_input_read_outside_a_body(tmp_path, ranks):
    """x[0, 0] read by tensor.extract at the top level, x split by the
    batch: the element is the whole batch's (x made whole first, as a
    body's reads are), not each device's first row (was "cannot partition
    'tensor.extract'"). Equal to the loss worked out here."""
    rng = np.random.default_rng(5)
    w = rng.normal(size=(4, 3)).astype(np.float32)
    x = rng.normal(size=(8, 4)).astype(np.float32)
    x[0, 0], x[4, 0] = 2.0, -3.0  # device 1's first row differs
    params, data = tmp_path / "p.safetensors", tmp_path / "d.safetensors"
    safetensors.save(params, {"w": w})
    safetensors.save(data, {"x": x})
    model = pathlib.Path(__file__).parent / "Inputs" / "extract-of-batch.mlir"
    args = [model, "--params", params, "--data", data, "--steps", 2]
    one = losses(epl_run(*args).stdout)
    many = losses(epl_run(*args, ranks=ranks).stdout)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    want = [x64[0, 0] * ((x64 @ w64) ** 2).sum() / 8]
    grad = x64[0, 0] * 2 * x64.T @ (x64 @ w64) / 8
    w64 = w64 - 0.1 * grad
    want.append(x64[0, 0] * ((x64 @ w64) ** 2).sum() / 8)
    np.testing.assert_allclose(one, want, rtol=1e-5)
    np.testing.assert_allclose(many, one, rtol=1e-6)


PER_EXAMPLE_CONSTANT = """
#id = affine_map<(b, f) -> (b, f)>
#none = affine_map<(b, f) -> ()>
module attributes {epl.config = {"optimizer.type" = "sgd", "optimizer.lr" = 0.001 : f64}} {
  func.func @model(%x: tensor<4x3xf32> {epl.arg = "input", epl.name = "x"},
                   %w: tensor<3x2xf32> {epl.arg = "param", epl.name = "w"}) -> tensor<f32> {
    %c = arith.constant {epl.scope = #epl.replicate<devices = 2>}
        dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]> : tensor<4x3xf32>
    %e = tensor.empty() : tensor<4x3xf32>
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %c : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>)
        attrs = {epl.scope = #epl.replicate<devices = 2>} {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      linalg.yield %m : f32
    } -> tensor<4x3xf32>
    %zero = arith.constant 0.0 : f32
    %e2 = tensor.empty() : tensor<4x2xf32>
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %h = linalg.matmul {epl.scope = #epl.replicate<devices = 2>}
        ins(%s, %w : tensor<4x3xf32>, tensor<3x2xf32>) outs(%z2 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %es = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
        ins(%h : tensor<4x2xf32>) outs(%zs : tensor<f32>) attrs = {epl.scope = #epl.replicate<devices = 2>} {
    ^bb0(%v: f32, %acc: f32):
      %q = arith.mulf %v, %v : f32
      %t = arith.addf %acc, %q : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
"""


@pytest.mark.parametrize("mpi", [False, True], ids=["threads", "mpi"])
def test_a_constant_with_one_row_per_example_is_sliced(tmp_path, mpi):
    """A constant of distinct values along the batch (torch-mlir's index
    tables of a GroupNorm, a loss's target of +-1) was "cannot shard a
    non-splat constant" under data parallelism: it stays whole and each
    device reads its rows; 2 ranks equal 1."""
    if mpi and not MPIRUN:
        pytest.skip("no mpirun")
    model = tmp_path / "model.mlir"
    model.write_text(PER_EXAMPLE_CONSTANT)
    data = tmp_path / "data.safetensors"
    epl.safetensors.save(data, {"x": np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)})
    runs = [losses(epl_run(model, "--data", data, "--steps", 3, "--seed", 2, ranks=ranks,
                           mpi=mpi and ranks > 1).stdout) for ranks in (1, 2)]
    np.testing.assert_allclose(runs[1], runs[0], rtol=1e-6)
    assert runs[0][-1] < runs[0][0]
