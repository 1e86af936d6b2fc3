"""The L0 forward of examples/mlp.mlir, run by epl-run, equals PyTorch.

The PyTorch model is written here with torch.nn from the description of the
example (Linear + ReLU + Linear, softmax cross-entropy with probability
targets), not generated from our IR.
"""

import numpy as np
import pytest
import torch

from conftest import ROOT, epl_run, losses
from epl import initializers, safetensors

MODEL = ROOT / "examples" / "mlp.mlir"
RTOL = 1e-5


class MLP(torch.nn.Module):
    def __init__(self, w1, b1, w2):
        super().__init__()
        self.hidden = torch.nn.Linear(784, 512)
        self.classifier = torch.nn.Linear(512, 10, bias=False)
        with torch.no_grad():
            # Our parameters are (in, out); torch.nn.Linear keeps (out, in).
            self.hidden.weight.copy_(torch.from_numpy(w1).T)
            self.hidden.bias.copy_(torch.from_numpy(b1))
            self.classifier.weight.copy_(torch.from_numpy(w2).T)

    def forward(self, x, y):
        logits = self.classifier(torch.relu(self.hidden(x)))
        return torch.nn.functional.cross_entropy(logits, y)


def torch_loss(params, data):
    model = MLP(params["w1"], params["b1"], params["w2"])
    with torch.no_grad():
        return model(torch.from_numpy(data["x"]), torch.from_numpy(data["y"])).item()


def random_problem(seed):
    rng = np.random.default_rng(seed)
    params = {
        "w1": (rng.standard_normal((784, 512)) / 28).astype(np.float32),
        "b1": (rng.standard_normal(512) * 0.1).astype(np.float32),
        "w2": (rng.standard_normal((512, 10)) / 22.6).astype(np.float32),
    }
    labels = rng.integers(0, 10, 32)
    data = {"x": rng.standard_normal((32, 784)).astype(np.float32),
            "y": np.eye(10, dtype=np.float32)[labels]}
    return params, data


@pytest.mark.parametrize("seed", [0, 1])
def test_forward_loss_equals_pytorch(tmp_path, seed):
    params, data = random_problem(seed)
    safetensors.save(tmp_path / "p.safetensors", params)
    safetensors.save(tmp_path / "d.safetensors", data)
    out = tmp_path / "out.safetensors"
    result = epl_run(MODEL, "--params", tmp_path / "p.safetensors", "--data",
                     tmp_path / "d.safetensors", "--dump-results", out)
    expected = torch_loss(params, data)
    (printed,) = losses(result.stdout)
    dumped = float(safetensors.load(out)["result0"])
    assert dumped == pytest.approx(expected, rel=RTOL)
    # The printed value carries enough digits to be the same number.
    assert printed == pytest.approx(dumped, rel=1e-7)


def test_seeded_run_equals_pytorch_on_the_documented_initialisers():
    """`epl-run examples/mlp.mlir` with no files: parameters and data from
    the seed, reproduced independently by epl.initializers."""
    result = epl_run(MODEL, "--seed", "7")
    params = {
        "w1": initializers.initialize("w1", "param", (784, 512), seed=7),
        "b1": initializers.initialize("b1", "param", (512,), seed=7),
        "w2": initializers.initialize("w2", "param", (512, 10), seed=7),
    }
    data = {"x": initializers.initialize("x", "input", (32, 784), seed=7),
            "y": initializers.initialize("y", "label", (32, 10), seed=7)}
    assert params["b1"].sum() == 0 and (data["y"].sum(axis=1) == 1).all()
    (loss,) = losses(result.stdout)
    assert loss == pytest.approx(torch_loss(params, data), rel=RTOL)


@pytest.mark.parametrize("mpi", [False, True], ids=["threads", "mpi"])
def test_every_rank_computes_the_same_forward(tmp_path, mpi):
    params, data = random_problem(3)
    safetensors.save(tmp_path / "p.safetensors", params)
    safetensors.save(tmp_path / "d.safetensors", data)
    one = tmp_path / "one.safetensors"
    four = tmp_path / "four.safetensors"
    common = ["--params", tmp_path / "p.safetensors", "--data",
              tmp_path / "d.safetensors"]
    epl_run(MODEL, *common, "--dump-results", one)
    epl_run(MODEL, *common, "--dump-results", four, ranks=4, mpi=mpi)
    single = safetensors.load(one)["result0"]
    results = safetensors.load(four)
    # Four ranks split the batch, so the loss is summed in another order:
    # equal to one rank within rounding, and bit-identical on every rank
    # (the runtime reduces in one fixed order for all of them).
    assert results["result0"] == pytest.approx(single, rel=1e-6)
    for rank in (1, 2, 3):
        assert results[f"rank{rank}/result0"].tobytes() == results["result0"].tobytes()
