"""Statistics of the data over the whole batch (a batch norm over the
inputs) under micro-batches: each micro-batch normalizes by the whole
batch's mean and variance, so accumulating micro-batches (on 1 or more
ranks) trains exactly like the whole batch, and like PyTorch. Before,
micro-batching refused the model."""

import re

import numpy as np
import pytest
import torch

from conftest import BUILD, ROOT, epl_run, losses, save_inputs
from conftest import run as run_tool

MODEL = ROOT / "test" / "e2e" / "Inputs" / "input-norm.mlir"
STEPS = 8
RTOL = 1e-5


def problem(tmp_path):
    rng = np.random.default_rng(11)
    params = {"w": rng.standard_normal((4, 2)).astype(np.float32),
              "b": rng.standard_normal(2).astype(np.float32)}
    # Features on different scales and offsets: normalizing matters.
    data = {"x": (rng.standard_normal((8, 4)) * [1, 3, 0.5, 2] + [0, 5, -2, 1])
                 .astype(np.float32),
            "y": rng.standard_normal((8, 2)).astype(np.float32)}
    return (params, data, *save_inputs(tmp_path, params, data))


def torch_losses(params, data):
    norm = torch.nn.BatchNorm1d(4, eps=1e-5, affine=False,
                                track_running_stats=False)
    head = torch.nn.Linear(4, 2)
    with torch.no_grad():
        head.weight.copy_(torch.from_numpy(params["w"]).T)
        head.bias.copy_(torch.from_numpy(params["b"]))
    opt = torch.optim.SGD(head.parameters(), lr=0.05)
    x, y = torch.from_numpy(data["x"]), torch.from_numpy(data["y"])
    out = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(head(norm(x)), y)
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


def two_stages(text):
    """The statistics and the normalization on stage s0, the head and the
    loss on s1."""
    lines, stage = [], 0
    for line in text.split("\n"):
        stage |= "%p = linalg.matmul" in line
        scope = f'epl.scope = #epl.replicate<devices = 1, name = "s{stage}">'
        line = line.replace("linalg.generic {", f"linalg.generic {{{scope}, ")
        lines.append(line.replace("linalg.matmul ins", f"linalg.matmul {{{scope}}} ins"))
    return "\n".join(lines)


def run(tmp_path, ranks=1, micro_batches=1, pipeline=False):
    text = MODEL.read_text().replace(
        '"optimizer.type" = "sgd",',
        f'"optimizer.type" = "sgd", "pipeline.num_micro_batch" = {micro_batches},')
    if pipeline:
        text = two_stages(text)
    model = tmp_path / f"m{micro_batches}.mlir"
    model.write_text(text)
    _, _, p, d = problem(tmp_path)
    out = epl_run(model, "--params", p, "--data", d, "--steps", STEPS,
                  ranks=ranks)
    return losses(out.stdout)


def test_one_rank_equals_pytorch(tmp_path):
    params, data, _, _ = problem(tmp_path)
    got = run(tmp_path)
    assert got[-1] < 0.8 * got[0], "the loss must fall"
    np.testing.assert_allclose(got, torch_losses(params, data), rtol=RTOL)


@pytest.mark.parametrize("ranks,micro_batches,pipeline",
                         [(1, 2, False), (1, 4, False), (2, 2, False), (2, 2, True)])
def test_micro_batches_equal_the_whole_batch(tmp_path, ranks, micro_batches, pipeline):
    """Gradient accumulation, with data parallelism, and as a 2-stage
    pipeline whose first stage normalizes."""
    params, data, _, _ = problem(tmp_path)
    got = run(tmp_path, ranks=ranks, micro_batches=micro_batches, pipeline=pipeline)
    np.testing.assert_allclose(got, run(tmp_path), rtol=RTOL)
    np.testing.assert_allclose(got, torch_losses(params, data), rtol=RTOL)


@pytest.mark.parametrize("cse", [False, True])
def test_a_fill_shared_by_a_statistic_and_the_batch(tmp_path, cse):
    """One zero-filled tensor starts both a mean over the features and a
    score per example (batch 4 = 4 features, as after CSE): the mean is
    still found to be a whole-batch statistic, and 2 micro-batches equal
    the whole batch. Before, micro-batching refused the model ("combines
    each example with a statistic over the whole batch")."""
    rng = np.random.default_rng(3)
    p, d = save_inputs(tmp_path, {"w": rng.standard_normal(4).astype(np.float32)},
                       {"x": rng.standard_normal((4, 4)).astype(np.float32)})
    text = (ROOT / "test" / "e2e" / "Inputs" / "shared-fill-statistic.mlir").read_text()
    if cse:
        text = run_tool([BUILD / "bin" / "epl-opt", "-", "--cse", "--canonicalize"],
                        input=text).stdout
    got = {}
    for micro_batches in (1, 2):
        model = tmp_path / f"m{micro_batches}.mlir"
        model.write_text(text.replace('"pipeline.num_micro_batch" = 1',
                                      f'"pipeline.num_micro_batch" = {micro_batches}'))
        got[micro_batches] = losses(epl_run(model, "--params", p, "--data", d,
                                            "--steps", STEPS).stdout)
    assert got[1][-1] < got[1][0], "the loss must fall"
    np.testing.assert_allclose(got[2], got[1], rtol=RTOL)


def test_synchronized_statistics_send_a_value_per_channel(tmp_path):
    """A data-parallel batch norm over NHWC activations (and a mean loss)
    reduces over the batch last: the devices all-reduce a value per channel
    (a scalar for the loss), not H x W x C partial sums (64 KiB per
    statistic here, where 16 channels are 64 bytes)."""
    import sys
    sys.path.insert(0, str(ROOT / "python"))
    import epl
    epl.init(epl.Config({"optimizer.type": "sgd"}))
    x, y = epl.input("x", (8, 32, 32, 3)), epl.label("y", (8, 10))
    with epl.replicate(device_count=2):
        h = epl.layers.Conv2D(16, 3, padding=1, use_bias=False, name="conv")(x)
        h = epl.layers.relu(epl.layers.BatchNorm(name="bn")(h))
        logits = epl.layers.Dense(10, name="fc")(epl.layers.GlobalAvgPool()(h))
        loss = epl.nn.mean(epl.layers.softmax_cross_entropy(logits, y) + epl.nn.mean(h))
    model = tmp_path / "bn.mlir"
    model.write_text(epl.to_mlir(loss))
    step = run_tool([BUILD / "bin" / "epl-opt", model, "--epl-training-step=devices=2"]).stdout
    # The weight gradients' buckets aside (conv 3x3x3x16 = 432, bn 2 x 16,
    # fc 16x10 + 10), the statistics and the loss.
    reduced = re.findall(r"epl\.all_reduce .*epl\.phase<(forward|backward_input)>\} : "
                         r"tensor<([0-9x]*)x?f32>", step)
    assert reduced, step
    sizes = sorted(int(np.prod([int(d) for d in s.split("x") if d] or [1]))
                   for _, s in reduced)
    assert sizes == [1, 16, 16, 16, 16], sizes
