"""Training parity: epl-run trains L0 models (epl-autodiff builds the step)
and its per-step losses equal PyTorch's, model written with torch.nn here,
on the same initial parameters and data, with momentum SGD and AdamW.

Also: resuming from a checkpoint is bit-identical to training straight.
"""

import re

import numpy as np
import pytest
import torch

from conftest import ROOT, epl_run, losses
from epl import safetensors

RTOL = 1e-5
STEPS = 20

OPTIMIZERS = {
    "momentum": {"optimizer.type": '"momentum"', "optimizer.lr": "2.0e-03 : f64",
                 "optimizer.momentum": "9.0e-01 : f64",
                 "optimizer.weight_decay": "1.0e-03 : f64"},
    "adamw": {"optimizer.type": '"adamw"', "optimizer.lr": "1.0e-04 : f64",
              "optimizer.beta1": "9.0e-01 : f64", "optimizer.beta2": "9.99e-01 : f64",
              "optimizer.eps": "1.0e-08 : f64", "optimizer.weight_decay": "1.0e-02 : f64"},
}


def torch_optimizer(name, params):
    cfg = {k: float(v.split()[0]) for k, v in OPTIMIZERS[name].items()
           if k != "optimizer.type"}
    if name == "momentum":
        return torch.optim.SGD(params, lr=cfg["optimizer.lr"],
                               momentum=cfg["optimizer.momentum"],
                               weight_decay=cfg["optimizer.weight_decay"])
    return torch.optim.AdamW(params, lr=cfg["optimizer.lr"],
                             betas=(cfg["optimizer.beta1"], cfg["optimizer.beta2"]),
                             eps=cfg["optimizer.eps"],
                             weight_decay=cfg["optimizer.weight_decay"])


def with_config(module_text, optimizer):
    config = ", ".join(f'"{k}" = {v}' for k, v in OPTIMIZERS[optimizer].items())
    return re.sub(r"epl\.config = \{.*?\}\}", "epl.config = {" + config + "}}",
                  module_text, count=1, flags=re.S)


def torch_losses(model, optimizer, inputs):
    losses_ = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = model(*inputs)
        loss.backward()
        optimizer.step()
        losses_.append(loss.item())
    return losses_


# --- the MLP of examples/mlp.mlir --------------------------------------------

class MLP(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        self.hidden = torch.nn.Linear(784, 512)
        self.classifier = torch.nn.Linear(512, 10, bias=False)
        with torch.no_grad():
            self.hidden.weight.copy_(torch.from_numpy(p["w1"]).T)
            self.hidden.bias.copy_(torch.from_numpy(p["b1"]))
            self.classifier.weight.copy_(torch.from_numpy(p["w2"]).T)

    def forward(self, x, y):
        return torch.nn.functional.cross_entropy(
            self.classifier(torch.relu(self.hidden(x))), y)


def mlp_problem():
    rng = np.random.default_rng(11)
    params = {"w1": (rng.standard_normal((784, 512)) / 28).astype(np.float32),
              "b1": (rng.standard_normal(512) * 0.1).astype(np.float32),
              "w2": (rng.standard_normal((512, 10)) / 22.6).astype(np.float32)}
    data = {"x": rng.standard_normal((32, 784)).astype(np.float32),
            "y": np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)]}
    return params, data


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_mlp_trains_like_pytorch(tmp_path, optimizer):
    params, data = mlp_problem()
    model_path = tmp_path / "mlp.mlir"
    model_path.write_text(with_config((ROOT / "examples" / "mlp.mlir").read_text(),
                                      optimizer))
    safetensors.save(tmp_path / "p.safetensors", params)
    safetensors.save(tmp_path / "d.safetensors", data)
    result = epl_run(model_path, "--params", tmp_path / "p.safetensors",
                     "--data", tmp_path / "d.safetensors", "--steps", STEPS)
    ours = losses(result.stdout)

    model = MLP(params)
    theirs = torch_losses(model, torch_optimizer(optimizer, model.parameters()),
                          (torch.from_numpy(data["x"]), torch.from_numpy(data["y"])))
    assert len(ours) == STEPS
    np.testing.assert_allclose(ours, theirs, rtol=RTOL)
    # It learned, and the loss stayed where relative errors are meaningful.
    assert 0.05 < theirs[-1] < theirs[0]


def test_resume_is_bit_identical(tmp_path):
    params, data = mlp_problem()
    model_path = tmp_path / "mlp.mlir"
    model_path.write_text(with_config((ROOT / "examples" / "mlp.mlir").read_text(),
                                      "adamw"))
    safetensors.save(tmp_path / "p.safetensors", params)
    safetensors.save(tmp_path / "d.safetensors", data)
    common = [model_path, "--data", tmp_path / "d.safetensors"]
    straight = epl_run(*common, "--params", tmp_path / "p.safetensors",
                       "--steps", 20, "--save", tmp_path / "straight.safetensors")
    first = epl_run(*common, "--params", tmp_path / "p.safetensors",
                    "--steps", 10, "--save", tmp_path / "half.safetensors")
    second = epl_run(*common, "--params", tmp_path / "half.safetensors",
                     "--steps", 10, "--save", tmp_path / "resumed.safetensors")
    assert losses(first.stdout) + losses(second.stdout) == losses(straight.stdout)
    a = safetensors.load(tmp_path / "straight.safetensors")
    b = safetensors.load(tmp_path / "resumed.safetensors")
    assert sorted(a) == sorted(b) == sorted(
        ["w1", "b1", "w2", "optimizer.step"] +
        [f"{p}.{s}" for p in ("w1", "b1", "w2") for s in ("exp_avg", "exp_avg_sq")])
    for name in a:
        assert a[name].tobytes() == b[name].tobytes(), name
    assert int(a["optimizer.step"]) == 20
