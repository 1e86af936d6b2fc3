"""A PyTorch model for EPL-MLIR's torch-mlir importer (docs/torch.md): an
MLP regressor whose forward returns the loss, its last layer split over 2
devices, the rest data parallel.

    scripts/setup-torch.sh
    PYTHONPATH=python .venv-torch/bin/python -m epl.torch examples/torch_mlp.py \\
        -o out/mlp --torch-losses 5
    build/bin/epl-run out/mlp.mlir --params out/mlp.params.safetensors \\
        --data out/mlp.data.safetensors --ranks 4 --steps 5

The squared error is written out: F.mse_loss (math.fpowi) and
nn.CrossEntropyLoss with integer labels (a gather) export too, but do not
train correctly yet (see docs/torch.md).
"""

import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, features=32, hidden=64, out=8):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, out)

    def forward(self, x, y):
        d = self.head(torch.relu(self.fc2(torch.relu(self.fc1(x))))) - y
        return (d * d).mean()


def epl_model():
    """What `python -m epl.torch` exports: epl.torch.export's arguments."""
    torch.manual_seed(0)
    return {
        "model": MLP(),
        "inputs": {"x": torch.randn(64, 32)},
        "labels": {"y": torch.randn(64, 8)},
        "strategy": {"head": "split(2)", "*": "replicate(1)"},
        "config": {"optimizer.type": "momentum", "optimizer.lr": 0.05},
    }
