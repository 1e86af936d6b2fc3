"""The PyTorch models of test/e2e/test_torch_mlir.py, as a user writes them
(each forward returns the scalar loss). scripts/export-torch-inputs.py
exports them through torch-mlir (python/epl/torch.py) into the files next
to this one; it needs torch 2.x and torch-mlir (scripts/setup-torch.sh).

Each entry of MODELS builds {"model", "inputs", "labels"} from a fixed
seed; VARIANTS says which strategies each is exported with and CONFIGS
which optimizers its PyTorch losses are recorded for."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    """A classifier with integer-label cross-entropy."""

    def __init__(self, features=12, hidden=16, classes=8):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, classes)   # the classifier
        self.loss = nn.CrossEntropyLoss()

    def forward(self, x, y):
        h = torch.tanh(self.fc2(torch.tanh(self.fc1(x))))
        return self.loss(self.fc3(h), y)


class Regression(nn.Module):
    """The MLP with a hand-written mean squared error (no gather, no
    math.fpowi: what the compiler trains today)."""

    def __init__(self, features=12, hidden=16, out=8):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, out)

    def forward(self, x, y):
        d = self.fc3(torch.tanh(self.fc2(torch.tanh(self.fc1(x))))) - y
        return (d * d).mean()


class Attention(nn.Module):
    """Multi-head self-attention, by hand or through
    F.scaled_dot_product_attention."""

    def __init__(self, dim, heads, sdpa):
        super().__init__()
        self.heads, self.sdpa = heads, sdpa
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in (q, k, v))
        if self.sdpa:
            o = F.scaled_dot_product_attention(q, k, v)
        else:
            s = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
            o = torch.softmax(s, dim=-1) @ v
        return self.proj(o.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    """A pre-LN transformer block."""

    def __init__(self, dim, heads, hidden, sdpa):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, sdpa)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Transformer(nn.Module):
    """One pre-LN block, a final LayerNorm and a linear head, with a
    mean-squared-error loss."""

    def __init__(self, dim=16, heads=2, hidden=32, out=8, sdpa=False):
        super().__init__()
        self.block = Block(dim, heads, hidden, sdpa)
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, out)

    def forward(self, x, y):
        return F.mse_loss(self.head(self.ln(self.block(x))), y)


class Gather(nn.Module):
    """loss = sum_k w[i[k]]: w = [1, 2, 3, 4], i = [1, 3] gives 6, then
    5.98 after one SGD step at lr 0.01 (d loss / d w = [0, 1, 0, 1])."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([1.0, 2.0, 3.0, 4.0]))

    def forward(self, i):
        return self.w[i].sum()


class ConvNet(nn.Module):
    """A small conv net (NCHW, as torch writes it): convolutions with
    stride and padding, batch norm in training mode, max pooling, a
    residual add, global average pooling, a linear classifier and
    integer-label cross-entropy."""

    def __init__(self, channels=3, width=4, classes=5):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, width, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(width)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, 2 * width, 3, stride=2, padding=1)
        self.fc = nn.Linear(2 * width, classes)

    def forward(self, x, y):
        h = self.pool(F.relu(self.bn1(self.conv1(x))))
        h = F.relu(h + self.bn2(self.conv2(h)))
        h = F.relu(self.conv3(h))
        return F.cross_entropy(self.fc(h.mean(dim=(2, 3))), y)


class SeqFirst(nn.Module):
    """PyTorch's own layers in their default seq-first layout (L, B, E):
    nn.TransformerEncoderLayer (nn.MultiheadAttention inside) and nn.GRU,
    whose linear layers merge the batch below the sequence ((L * B, E)),
    then a mean over the sequence, a linear classifier and cross-entropy."""

    def __init__(self, dim=16, heads=2, hidden=32, classes=3):
        super().__init__()
        self.enc = nn.TransformerEncoderLayer(dim, heads, hidden, dropout=0.0)
        self.gru = nn.GRU(dim, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x, y):
        h, _ = self.gru(self.enc(x))
        return F.cross_entropy(self.head(h.mean(0)), y)


def conv():
    torch.manual_seed(4)
    model = ConvNet()
    x = torch.randn(4, 3, 8, 8)
    y = torch.randint(0, 5, (4,))
    return {"model": model, "inputs": {"x": x}, "labels": {"y": y}}


def mlp():
    torch.manual_seed(0)
    model = MLP()
    x = torch.randn(8, 12)
    y = torch.randint(0, 8, (8,))
    return {"model": model, "inputs": {"x": x}, "labels": {"y": y}}


def regression():
    torch.manual_seed(3)
    model = Regression()
    x = torch.randn(8, 12)
    y = torch.randn(8, 8)
    return {"model": model, "inputs": {"x": x}, "labels": {"y": y}}


def transformer(sdpa=False):
    torch.manual_seed(1)
    model = Transformer(sdpa=sdpa)
    x = torch.randn(4, 8, 16)
    y = torch.randn(4, 8, 8)
    return {"model": model, "inputs": {"x": x}, "labels": {"y": y}}


def seqfirst():
    torch.manual_seed(5)
    model = SeqFirst().eval()   # no dropout; nothing else differs
    x = torch.randn(6, 4, 16)   # (L, B, E): the batch is dimension 1
    y = torch.randint(0, 3, (4,))
    return {"model": model, "inputs": {"x": x}, "labels": {"y": y},
            "batch_dims": {"x": 1}}


def gather():
    return {"model": Gather(), "inputs": {"i": torch.tensor([1, 3])}, "labels": {}}


MODELS = {
    "mlp": mlp,
    "regression": regression,
    "transformer": lambda: transformer(sdpa=False),
    "transformer-sdpa": lambda: transformer(sdpa=True),
    "gather": gather,
    "conv": conv,
    "seqfirst": seqfirst,
}

#: Strategies each model is exported with: NAME.mlir is data parallel
#: (every op replicate(1)); NAME-split.mlir splits the classifier.
VARIANTS = {
    "mlp": {"": {"*": "replicate(1)"},
            "-split": {"fc3": "split(2)", "*": "replicate(1)"}},
    "regression": {"": {"*": "replicate(1)"},
                   "-split": {"fc3": "split(2)", "*": "replicate(1)"}},
    "transformer": {"": {"*": "replicate(1)"},
                    "-split": {"head": "split(2)", "*": "replicate(1)"},
                    "-mlp-split": {"block.mlp*": "split(2)", "*": "replicate(1)"}},
    "transformer-sdpa": {"": {"*": "replicate(1)"}},
    "gather": {"": {"*": "replicate(1)"}},
    "conv": {"": {"*": "replicate(1)"}},
    "seqfirst": {"": {"*": "replicate(1)"},
                 "-pipeline": {"enc": 'replicate(1, name="s0")',
                               "*": 'replicate(1, name="s1")'}},
}

#: The optimizers each model's PyTorch losses are recorded for; the first
#: is the .mlir's epl.config.
CONFIGS = {
    "sgd": {"optimizer.type": "sgd", "optimizer.lr": 0.1},
    "momentum": {"optimizer.type": "momentum", "optimizer.lr": 0.05,
                 "optimizer.momentum": 0.9, "optimizer.weight_decay": 0.001},
    "adamw": {"optimizer.type": "adamw", "optimizer.lr": 0.01,
              "optimizer.weight_decay": 0.01},
}
GATHER_CONFIGS = {
    "sgd": {"optimizer.type": "sgd", "optimizer.lr": 0.01},
    "momentum": {"optimizer.type": "momentum", "optimizer.lr": 0.01,
                 "optimizer.momentum": 0.9},
}
STEPS = 8


def configs(name):
    return GATHER_CONFIGS if name == "gather" else CONFIGS
