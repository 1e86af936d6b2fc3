"""The cuda target's kernels compute the right numbers, checked without a
GPU: `epl-run --emulate-gpu` compiles every linalg op into the kernel
epl-linalg-to-gpu makes for the GPU (one thread per parallel point, the
reduction loops inside it), outlines it as the GPU lowering does, and runs
it on the CPU block by block and thread by thread. Its losses must equal
PyTorch's (recorded when the models were exported) and the CPU path's, on
one rank and on several."""

import json
import os

import numpy as np
import pytest

import epl
import epl.safetensors

from conftest import ROOT, epl_run, losses, run
from test_torch_mlir import EPL_OPT, INPUTS, RTOL, record, train

EXAMPLES = ROOT / "examples"


@pytest.mark.parametrize("name,optimizer", [
    ("mlp", "momentum"),          # integer-label cross-entropy: a gather
    ("transformer", "adamw"),     # attention, LayerNorm, GELU, AdamW
    ("conv", "momentum"),         # conv, batch norm, max pool (im2col GEMMs)
    ("gather", "sgd"),            # a scatter-add gradient: one thread
])
def test_gpu_kernels_train_like_pytorch(tmp_path, name, optimizer):
    expected = record(name)["optimizers"][optimizer]["losses"]
    cpu = train(tmp_path, name, optimizer=optimizer)
    gpu = train(tmp_path, name, optimizer=optimizer, extra=["--emulate-gpu"])
    np.testing.assert_allclose(gpu, expected, rtol=RTOL)
    # Each thread runs its point's operations in the CPU loop nest's order.
    np.testing.assert_allclose(gpu, cpu, rtol=1e-6)


@pytest.mark.parametrize("name,variant,ranks", [
    ("transformer", "", 2),       # data parallel: gradients all-reduced
    ("transformer", "-split", 2),  # Megatron split: activations all-reduced
    ("mlp", "-split", 4),         # a split classifier
    ("gather", "", 2),            # one id per rank: a scalar scatter-add
])
def test_gpu_kernels_on_several_ranks_equal_one(tmp_path, name, variant, ranks):
    one = train(tmp_path, name, optimizer="momentum")
    many = train(tmp_path, name, variant, optimizer="momentum", ranks=ranks,
                 extra=["--emulate-gpu"])
    np.testing.assert_allclose(many, one, rtol=RTOL)


def test_gpu_kernels_run_pipeline_stages(tmp_path):
    """Two pipeline stages, each a program of its own kernels."""
    model = EXAMPLES / "pipeline.mlir"
    cpu = losses(epl_run(model, "--steps", 3, ranks=2).stdout)
    gpu = losses(epl_run(model, "--steps", 3, "--emulate-gpu", ranks=2).stdout)
    assert len(gpu) == 3
    np.testing.assert_allclose(gpu, cpu, rtol=1e-6)


def test_long_reductions_split_over_threads_train_like_the_cpu(tmp_path):
    """A batch of 4096 through narrow layers: the loss's sum over the batch
    and each bias's gradient are long reductions with few results, which
    the GPU lowering splits over many threads (epl-split-reductions), the
    partial sums combined by further split reductions. Added in another
    order than the CPU's (which splits them too, into fewer parts), they
    must train to the CPU's losses and parameters within float rounding."""
    from test_memory_estimate import mlp
    model = tmp_path / "wide-batch.mlir"
    model.write_text(mlp(4096, (32, 16, 10), **{"optimizer.lr": 0.1}))
    lowered = run([EPL_OPT, model, "--epl-training-step",
                   "--epl-lower-to-cpu=emulate-gpu=1",
                   "--mlir-print-ir-after=epl-split-reductions",
                   "-o", os.devnull]).stderr
    # The loss and three bias gradients at least, each split into parts.
    assert lowered.count("tensor.expand_shape") >= 4, lowered[-2000:]
    runs = {}
    for tag, extra in (("cpu", ()), ("gpu", ("--emulate-gpu",))):
        save = tmp_path / f"{tag}.safetensors"
        out = epl_run(model, "--steps", 3, "--save", save, *extra)
        runs[tag] = (losses(out.stdout), epl.safetensors.load(save))
    (cpu, cpu_params), (gpu, gpu_params) = runs["cpu"], runs["gpu"]
    assert len(gpu) == 3 and gpu[-1] < gpu[0]
    np.testing.assert_allclose(gpu, cpu, rtol=1e-5)
    for name, value in cpu_params.items():
        np.testing.assert_allclose(gpu_params[name], value, rtol=1e-4, atol=1e-6,
                                   err_msg=name)


def test_emulate_gpu_needs_the_runtime_gemm():
    out = epl_run(EXAMPLES / "mlp.mlir", "--emulate-gpu", "--blas=false",
                  expect_ok=False)
    assert out.returncode == 1
    assert "--emulate-gpu runs contractions through the runtime's GEMM" in out.stderr


def test_offload_v0_keeps_parameters_and_state_on_the_device_only_around_use(tmp_path):
    """EPL's offload.level = "v0" on the cuda target: each parameter and
    optimizer state buffer is on the device from its first use to its last,
    not for the whole step (Adam: its two moments only around the update,
    and with num_apply_group the updates are spread out). Checked through
    the emulated kernels, whose device buffers the runtime counts: the
    same losses and parameters, and a lower peak. On the CPU target the key
    is an error naming it."""
    from test_memory_estimate import mlp
    runs = {}
    for level in ("", "v0"):
        model = tmp_path / f"offload-{level or 'none'}.mlir"
        model.write_text(mlp(16, (512, 512, 512, 512, 10), **{
            "optimizer.type": "adam", "optimizer.num_apply_group": 4,
            "offload.level": level}))
        report, saved = tmp_path / f"{level}.json", tmp_path / f"{level}.safetensors"
        out = epl_run(model, "--steps", 3, "--emulate-gpu", "--report", report,
                      "--save", saved)
        runs[level] = (losses(out.stdout), json.loads(report.read_text()),
                       epl.safetensors.load(saved))
    (plain, plain_report, plain_params), (off, off_report, off_params) = runs[""], runs["v0"]
    assert off == plain
    for name, value in plain_params.items():
        np.testing.assert_array_equal(off_params[name], value)
    peak = lambda r: r["per_rank"][0]["peak_bytes"]
    # Three 512x512 layers with Adam: 12 MiB of parameters and moments.
    assert peak(off_report) < 0.7 * peak(plain_report), (peak(off_report), peak(plain_report))
    # The estimate follows: with offload it counts each argument's device
    # copy around its uses (before, only the step's own buffers: 0.2 of
    # the measured peak).
    for report in (plain_report, off_report):
        rank = report["per_rank"][0]
        assert rank["estimated_peak_bytes"] == pytest.approx(rank["peak_bytes"], rel=0.01), rank
    cpu = epl_run(tmp_path / "offload-v0.mlir", expect_ok=False)
    assert cpu.returncode == 1
    assert 'EPL config key "offload.level" = "v0" moves parameters and optimizer state ' \
        'between host and GPU memory: it needs the cuda target' in cpu.stderr


def test_parameters_resident_on_the_device_reach_the_host_when_read(tmp_path):
    """On the cuda target a parameter and its optimizer state stay on the
    device from step to step (epl-copy-arguments-to-device's resident
    buffers; under --emulate-gpu a host buffer stands for the device's). The
    runner reads them only after copying them back: every evaluation (after
    each epoch and at the end) and the checkpoint must see the trained
    values, equal to the CPU path's, not the ones the host last held."""
    from epl import data
    rng = np.random.default_rng(3)
    n, features, classes = 96, 12, 4
    w = rng.normal(size=(features, classes))
    x = rng.normal(size=(n, features)).astype(np.float32)
    arrays = {"x": x, "y": np.eye(classes, dtype=np.float32)[np.argmax(x @ w, 1)]}
    data.save(tmp_path / "train.safetensors", arrays)

    def model(batch):
        epl.init(epl.Config({"optimizer.type": "adam", "optimizer.lr": 0.05}))
        h = epl.layers.Dense(16, activation="relu", name="fc")(
            epl.input("x", (batch, features)))
        logits = epl.layers.Dense(classes, name="head")(h)
        return epl.layers.softmax_cross_entropy(logits, epl.label("y", (batch, classes))), logits
    (tmp_path / "train.mlir").write_text(epl.to_mlir(model(16)[0]))
    loss, logits = model(32)
    (tmp_path / "eval.mlir").write_text(epl.to_mlir(loss, outputs=[logits]))
    runs = {}
    for tag, extra in (("cpu", []), ("gpu", ["--emulate-gpu"])):
        save = tmp_path / f"{tag}.safetensors"
        out = epl_run(tmp_path / "train.mlir", "--dataset", tmp_path / "train.safetensors",
                      "--epochs", 3, "--eval-model", tmp_path / "eval.mlir",
                      "--eval-dataset", tmp_path / "train.safetensors", "--eval-each-epoch",
                      "--save", save, *extra).stdout
        evals = [line for line in out.splitlines() if line.startswith("eval ")]
        runs[tag] = ([float(line.split()[2]) for line in evals], epl.safetensors.load(save))
    cpu, gpu = runs["cpu"], runs["gpu"]
    assert len(gpu[0]) == 3 and gpu[0][-1] < gpu[0][0]
    np.testing.assert_allclose(gpu[0], cpu[0], rtol=1e-5)
    assert gpu[1].keys() == cpu[1].keys() and any("adam" in k or "moment" in k or "exp_avg" in k
                                                  for k in gpu[1]), sorted(gpu[1])
    for key in cpu[1]:
        np.testing.assert_allclose(gpu[1][key], cpu[1][key], rtol=1e-5, atol=1e-7, err_msg=key)
