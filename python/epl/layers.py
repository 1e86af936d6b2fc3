"""Layers with parameters, in the style of EPL's (TensorFlow's) layers.

A layer creates its parameters in the model of its first input, named
`<layer name>/<parameter>` and initialised by name ("normal", "zeros",
"ones": see docs/epl-run.md), then checks every later input against them:

    h = epl.layers.Dense(512, activation="relu", name="fc1")(x)

Shape mistakes raise epl.ShapeError naming the layer and the user's line,
before any tool runs.
"""

import itertools
import math
import numbers

from . import nn
from .errors import ShapeError

_ACTIVATIONS = {None: lambda x: x, "linear": lambda x: x, "relu": nn.relu,
                "gelu": nn.gelu, "tanh": nn.tanh}
_counters = {}


def _unique(prefix):
    counter = _counters.setdefault(prefix, itertools.count())
    n = next(counter)
    return prefix if n == 0 else f"{prefix}_{n}"


def reset_names():
    _counters.clear()


def _number(layer, what, value, low, high=math.inf):
    """`value`, a number argument of `layer`, as a float: checked when the
    layer is made, at the user's line (a string or None would otherwise
    fail, or be read, deep in the op it becomes a constant of)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
            not low <= value <= high or math.isinf(value):
        limits = f"in [{low}, {high}]" if high < math.inf else f"of at least {low}"
        raise ShapeError(f"{type(layer).__name__} '{layer.name}': {what} must be a "
                         f"finite number {limits}, got {value!r}")
    return float(value)


class Layer:
    prefix = "layer"

    def __init__(self, name=None):
        self.name = name or _unique(self.prefix)
        self.graph = None
        self.params = {}

    def param(self, graph, key, shape, init, kind="param"):
        """The layer's tensor `key` (made on first use): a trained
        parameter, or with kind="state" model state (Graph.state)."""
        if self.graph is None:
            self.graph = graph
        elif graph is not self.graph:
            raise ShapeError(f"layer '{self.name}' is used in two different models")
        if key not in self.params:
            make = graph.state if kind == "state" else graph.param
            self.params[key] = make(f"{self.name}/{key}", shape, init=init)
        elif self.params[key].shape != tuple(shape):
            raise ShapeError(f"layer '{self.name}' was built for {key} of shape "
                             f"{self.params[key].shape}, now needs {tuple(shape)}")
        return self.params[key]


class Dense(Layer):
    """y = activation(x @ kernel + bias) over the last dimension."""
    prefix = "dense"

    def __init__(self, units, activation=None, use_bias=True, name=None,
                 kernel_initializer="normal", bias_initializer="zeros"):
        super().__init__(name)
        if activation not in _ACTIVATIONS:
            raise ShapeError(f"Dense '{self.name}': unknown activation {activation!r}; "
                             f"use one of {sorted(k for k in _ACTIVATIONS if k)}")
        self.units, self.activation, self.use_bias = units, activation, use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.in_features = None

    def __call__(self, x):
        if self.in_features is not None and x.shape[-1] != self.in_features:
            raise ShapeError(f"Dense '{self.name}' takes inputs with {self.in_features} "
                             f"features, got a tensor of shape {x.shape}")
        self.in_features = x.shape[-1]
        g = x.graph
        kernel = self.param(g, "kernel", (x.shape[-1], self.units), self.kernel_initializer)
        bias = self.param(g, "bias", (self.units,), self.bias_initializer) \
            if self.use_bias else None
        return _ACTIVATIONS[self.activation](nn.dense(x, kernel, bias))


class LayerNorm(Layer):
    """Normalizes over the last dimension, then scales and shifts."""
    prefix = "layer_norm"

    def __init__(self, epsilon=1e-5, name=None):
        super().__init__(name)
        self.epsilon = _number(self, "epsilon", epsilon, 0)

    def __call__(self, x):
        g = x.graph
        gamma = self.param(g, "gamma", (x.shape[-1],), "ones")
        beta = self.param(g, "beta", (x.shape[-1],), "zeros")
        return nn.layer_norm(x, gamma, beta, self.epsilon)


class Embedding(Layer):
    """Rows of a [vocab, dim] table picked by integer ids."""
    prefix = "embedding"

    def __init__(self, vocab_size, dim, name=None):
        super().__init__(name)
        self.vocab_size, self.dim = vocab_size, dim

    def __call__(self, ids):
        if ids.dtype not in ("i32", "i64"):
            raise ShapeError(f"Embedding '{self.name}' takes integer ids, got {ids.type}")
        table = self.param(ids.graph, "table", (self.vocab_size, self.dim), "normal")
        return nn.embedding(ids, table, f"an id of Embedding '{self.name}'")


class MultiHeadAttention(Layer):
    """Self-attention over x [batch, seq, dim], as torch.nn.MultiheadAttention."""
    prefix = "attention"

    def __init__(self, num_heads, name=None):
        super().__init__(name)
        if not isinstance(num_heads, int) or isinstance(num_heads, bool) or num_heads < 1:
            raise ShapeError(f"MultiHeadAttention '{self.name}': num_heads must be a "
                             f"positive int, got {num_heads!r}")
        self.num_heads = num_heads

    def __call__(self, x):
        if x.rank != 3:
            raise ShapeError(f"MultiHeadAttention '{self.name}' takes [batch, seq, dim], "
                             f"got a tensor of shape {x.shape}")
        dim = x.shape[-1]
        if dim % self.num_heads:
            raise ShapeError(f"MultiHeadAttention '{self.name}': {self.num_heads} heads "
                             f"do not divide the model dimension {dim}")
        g = x.graph
        w = {k: self.param(g, f"w{k}", (dim, dim), "normal") for k in "qkvo"}
        b = {k: self.param(g, f"b{k}", (dim,), "zeros") for k in "qkvo"}
        return nn.attention(x, w["q"], w["k"], w["v"], w["o"], self.num_heads,
                            b["q"], b["k"], b["v"], b["o"])


class Conv2D(Layer):
    """y = activation(conv2d(x, kernel) + bias) on NHWC inputs; the kernel
    is [kh, kw, in, out] (TensorFlow's layout; torch's [out, in, kh, kw]
    transposed by (2, 3, 1, 0)). `padding`: "valid", "same" or an int."""
    prefix = "conv2d"

    def __init__(self, filters, kernel_size, strides=1, padding="valid", dilation_rate=1,
                 activation=None, use_bias=True, name=None):
        super().__init__(name)
        if activation not in _ACTIVATIONS:
            raise ShapeError(f"Conv2D '{self.name}': unknown activation {activation!r}")
        self.filters, self.kernel_size = filters, nn._pair(kernel_size)
        self.strides, self.padding = strides, padding
        self.dilation_rate, self.activation, self.use_bias = dilation_rate, activation, use_bias

    def __call__(self, x):
        if x.rank != 4:
            raise ShapeError(f"Conv2D '{self.name}' takes NHWC inputs, got a tensor of "
                             f"shape {x.shape}")
        g = x.graph
        kernel = self.param(g, "kernel", (*self.kernel_size, x.shape[3], self.filters),
                            "normal")
        y = nn.conv2d(x, kernel, self.strides, self.padding, self.dilation_rate)
        if self.use_bias:
            y = y + self.param(g, "bias", (self.filters,), "zeros")
        return _ACTIVATIONS[self.activation](y)


class BatchNorm(Layer):
    """Batch normalization over every dimension but the last (channels), as
    torch.nn.BatchNorm2d. Training mode (the default) normalizes with the
    batch's statistics, synchronized across data-parallel replicas
    (docs/training.md), and updates the running statistics
    (`<name>/running_mean`, `<name>/running_var`: model state, carried from
    step to step and saved with the parameters); inference mode
    (`training=False`, an evaluation model) normalizes with them."""
    prefix = "batch_norm"

    def __init__(self, epsilon=1e-5, momentum=0.1, name=None):
        super().__init__(name)
        self.epsilon = _number(self, "epsilon", epsilon, 0)
        self.momentum = _number(self, "momentum", momentum, 0, 1)

    def __call__(self, x, training=True):
        g = x.graph
        channels = (x.shape[-1],)
        gamma = self.param(g, "gamma", channels, "ones")
        beta = self.param(g, "beta", channels, "zeros")
        running = (self.param(g, "running_mean", channels, "zeros", kind="state"),
                   self.param(g, "running_var", channels, "ones", kind="state"))
        return nn.batch_norm(x, gamma, beta, self.epsilon, running, self.momentum,
                             training)


class MaxPool2D:
    """Max over windows of NHWC inputs."""

    def __init__(self, pool_size=2, strides=None, padding="valid"):
        self.pool_size, self.strides, self.padding = pool_size, strides, padding

    def __call__(self, x):
        return nn.max_pool2d(x, self.pool_size, self.strides, self.padding)


class GlobalAvgPool:
    """[n, h, w, c] -> [n, c]."""

    def __call__(self, x):
        return nn.global_avg_pool(x)


def resnet(x, classes, widths=(16, 32), blocks_per_stage=1, stem_kernel=3,
           classifier=None, name="resnet", training=True):
    """A small ResNet (basic blocks, ResNet-18's layout with configurable
    width and depth, torch's padding) on NHWC images: a stem convolution,
    then per stage
    `blocks_per_stage` basic blocks (two 3x3 convolutions with batch norm,
    a 1x1 projection where the shape changes; stages after the first
    halve the resolution), global average pooling and a Dense classifier.
    `classifier` is a callable `(features) -> logits` to put the classifier
    in another scope (EPL's split example); by default a Dense layer.
    `training=False` builds the evaluation model: batch norms in inference
    mode (running statistics)."""
    h = Conv2D(widths[0], stem_kernel, padding=stem_kernel // 2, use_bias=False,
               name=f"{name}/stem")(x)
    h = relu(BatchNorm(name=f"{name}/stem_bn")(h, training))
    for stage, width in enumerate(widths):
        for block in range(blocks_per_stage):
            stride = 2 if stage > 0 and block == 0 else 1
            prefix = f"{name}/stage{stage}/block{block}"
            y = Conv2D(width, 3, strides=stride, padding=1, use_bias=False,
                       name=f"{prefix}/conv1")(h)
            y = relu(BatchNorm(name=f"{prefix}/bn1")(y, training))
            y = Conv2D(width, 3, padding=1, use_bias=False, name=f"{prefix}/conv2")(y)
            y = BatchNorm(name=f"{prefix}/bn2")(y, training)
            if stride != 1 or h.shape[-1] != width:
                h = Conv2D(width, 1, strides=stride, use_bias=False,
                           name=f"{prefix}/shortcut")(h)
                h = BatchNorm(name=f"{prefix}/shortcut_bn")(h, training)
            h = relu(add(h, y))
    features = GlobalAvgPool()(h)
    if classifier is None:
        return Dense(classes, name=f"{name}/classifier")(features)
    return classifier(features)


def relu(x):
    return nn.relu(x)


def gelu(x, approximate="none"):
    return nn.gelu(x, approximate)


def tanh(x):
    return nn.tanh(x)


def softmax_cross_entropy(logits, labels):
    """Mean cross-entropy of `logits` against probability (one-hot) labels."""
    return nn.cross_entropy(logits, labels)


def add(x, y):
    """Residual connection."""
    if x.shape != y.shape:
        raise ShapeError(f"residual add of shapes {x.shape} and {y.shape}")
    return x + y


def reshape(x, shape):
    return x.graph.reshape(x, shape)


def transpose(x, perm):
    if sorted(perm) != list(range(x.rank)):
        raise ShapeError(f"transpose of a rank-{x.rank} tensor by {perm}: not a permutation")
    return x.graph.transpose(x, perm)
