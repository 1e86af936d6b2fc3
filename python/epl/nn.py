"""Layers as functions on traced tensors (see epl.graph).

Each returns a Tensor of the same Graph; parameters are created by the
caller (or by the layer classes of the EPL frontend), so these functions are
the single place where a layer's computation is spelled out.
"""

import math
import numbers

from .errors import DTypeError, EPLError, ShapeError
from .graph import Tensor, _user_loc


def _unary(name):
    def apply(x):
        return x.graph.unary(lambda b, a: b.op(name, a), x)
    apply.__name__ = name.split(".")[-1]
    return apply


exp = _unary("math.exp")
log = _unary("math.log")
tanh = _unary("math.tanh")
sqrt = _unary("math.sqrt")
rsqrt = _unary("math.rsqrt")
erf = _unary("math.erf")


def relu(x):
    return x.graph.unary(lambda b, a: b.op("arith.maximumf", a, b.const(0.0)), x)


def gelu(x, approximate="none"):
    """PyTorch's GELU: x Phi(x) with erf, or the tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise EPLError(f"gelu: approximate must be \"none\" or \"tanh\" (as "
                       f"torch.nn.GELU), got {approximate!r}")
    if approximate == "tanh":
        def body(b, a):
            inner = b.op("arith.mulf", b.const(math.sqrt(2 / math.pi)),
                         b.op("arith.addf", a,
                              b.op("arith.mulf", b.const(0.044715),
                                   b.op("arith.mulf", a, b.op("arith.mulf", a, a)))))
            t = b.op("math.tanh", inner)
            return b.op("arith.mulf", b.op("arith.mulf", b.const(0.5), a),
                        b.op("arith.addf", b.const(1.0), t))
    else:
        def body(b, a):
            e = b.op("math.erf", b.op("arith.mulf", a, b.const(1 / math.sqrt(2))))
            return b.op("arith.mulf", b.op("arith.mulf", b.const(0.5), a),
                        b.op("arith.addf", b.const(1.0), e))
    return x.graph.unary(body, x)


def _axis(x, axis, op):
    """`axis` of `x` as a dimension in [0, rank): from -rank to rank - 1,
    as numpy and torch take it. Anything else is an error (wrapped modulo
    the rank, softmax over axis 2 of a [4, 3] tensor ran over the batch)."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise ShapeError(f"{op}: axis must be an integer, got {axis!r}")
    if x.rank == 0:
        raise ShapeError(f"{op}: a scalar has no axis {axis}")
    if not -x.rank <= axis < x.rank:
        raise ShapeError(f"{op}: axis {axis} is out of range for a tensor of "
                         f"shape {x.shape} (rank {x.rank}: axes {-x.rank} to "
                         f"{x.rank - 1})")
    return int(axis) % x.rank


def sum(x, axis, keepdims=False):  # noqa: A001 - mirrors numpy
    return x.graph.reduce(x, _axis(x, axis, "sum"), "sum", keepdims)


def amax(x, axis, keepdims=False):
    return x.graph.reduce(x, _axis(x, axis, "amax"), "max", keepdims)


def mean(x, axis=None, keepdims=False):
    if axis is None:
        # The batch (axis 0) last: under data parallelism the partial sums
        # are then reduced over the devices as one scalar, not a sample's
        # worth of them.
        total = x
        for a in reversed(range(x.rank)):
            total = sum(total, a)
        return total / float(math.prod(x.shape))
    axis = _axis(x, axis, "mean")
    return sum(x, axis, keepdims) / float(x.shape[axis])


def softmax(x, axis=-1):
    """`linalg.softmax` along `axis` (the compiler decomposes it)."""
    g = x.graph
    axis = _axis(x, axis, "softmax")
    init = g.empty(x.shape, x.dtype)
    return g.emit(f"{{r}} = linalg.softmax{g.scope_dict()} dimension({axis}) ins({x.ssa} : {x.type}) "
                  f"outs({init.ssa} : {init.type}) -> {x.type}", x.shape, x.dtype)


def log_softmax(x, axis=-1):
    """x - max - log(sum(exp(x - max))), numerically stable."""
    axis = _axis(x, axis, "log_softmax")
    shifted = x - amax(x, axis, keepdims=True)
    return shifted - log(sum(exp(shifted), axis, keepdims=True))


def cross_entropy(logits, target):
    """Mean over rows of -sum(target * log_softmax(logits)); `target` holds
    probabilities (one-hot rows for class labels), as PyTorch's
    cross_entropy with probability targets."""
    if logits.shape != target.shape:
        raise ShapeError(f"cross-entropy of logits {logits.shape} against labels "
                         f"{target.shape}: shapes differ")
    return -mean(sum(target * log_softmax(logits, -1), -1))


def dense(x, w, b=None):
    y = x @ w
    return y + b if b is not None else y


def layer_norm(x, gamma, beta, eps=1e-5):
    """Over the last dimension, with the biased variance, as torch.nn.LayerNorm."""
    mu = mean(x, -1, keepdims=True)
    centered = x - mu
    var = mean(centered * centered, -1, keepdims=True)
    return centered * rsqrt(var + eps) * gamma + beta


def checked_ids(ids, classes, what="an id"):
    """`ids` as they are, with a check when the step runs that each is in
    [0, classes): a one-hot row of an id outside it would be all zeros, and
    a model would train on nothing where PyTorch raises an IndexError. The
    check is its own small kernel over the ids, so the one-hot kernel it
    feeds stays free of effects (split over threads, placed anywhere)."""
    g = ids.graph
    loops = list("ijklmnop"[:ids.rank])
    index_type = ids.dtype
    message = (f"{what} is out of range: an id or class must be in "
               f"[0, {classes})")

    def body(b, i, _):
        bound = b.raw(f"{{r}} = arith.constant {classes} : {index_type}")
        # One unsigned compare: a negative id is a large unsigned one.
        ok = b.raw(f"{{r}} = arith.cmpi ult, {i}, {bound} : {index_type}")
        # At the user's line: the failed check says where it is.
        b.lines.append(f'cf.assert {ok}, "{message}"' + _user_loc())
        return i

    return g.generic([ids], list(ids.shape), [loops], loops,
                     ["parallel"] * ids.rank, body, out_dtype=index_type)


def one_hot(ids, classes, dtype=None, what="an id"):
    """ids [..] of integers -> [.., classes] of 0/1; an id outside
    [0, classes) ends the step with an error naming `what`."""
    g = ids.graph
    dtype = dtype or g.dtype
    if ids.dtype not in ("i32", "i64"):
        raise DTypeError(f"one_hot takes integer ids (i32 or i64), got {ids.type}")
    ids = checked_ids(ids, classes, what)
    loops = "ijklmnop"[:ids.rank + 1]
    index_type = ids.dtype

    def body(b, i, _):
        col = b.raw("{r} = linalg.index " + str(ids.rank) + " : index")
        as_int = b.raw("{r} = arith.index_cast " + col + " : index to " + index_type)
        eq = b.raw("{r} = arith.cmpi eq, " + i + ", " + as_int + " : " + index_type)
        return b.raw("{r} = arith.select " + eq + ", " + b.const(1.0) + ", "
                     + b.const(0.0) + " : " + dtype)

    return g.generic([ids], list(ids.shape) + [classes], [list(loops[:-1])],
                     list(loops), ["parallel"] * (ids.rank + 1), body, out_dtype=dtype,
                     integer_inputs=True)


def embedding(ids, table, what="an id of an embedding"):
    """Rows of `table` [vocab, dim] picked by integer `ids`: a one-hot matmul,
    so that its gradient is a matmul too."""
    return one_hot(ids, table.shape[0], table.dtype, what) @ table


def attention(x, wq, wk, wv, wo, heads, bq=None, bk=None, bv=None, bo=None):
    """Multi-head self-attention on x [batch, seq, dim], as
    torch.nn.MultiheadAttention: softmax(q k^T / sqrt(dim / heads)) v."""
    g = x.graph
    batch, seq, dim = x.shape
    if dim % heads:
        raise ShapeError(f"{heads} attention heads do not divide the model dimension {dim}")
    hd = dim // heads

    def split_heads(t):  # [b, s, d] -> [b, h, s, hd]
        return g.transpose(g.reshape(t, (batch, seq, heads, hd)), (0, 2, 1, 3))

    q = split_heads(dense(x, wq, bq))
    k = split_heads(dense(x, wk, bk))
    v = split_heads(dense(x, wv, bv))
    scores = (q @ g.transpose(k, (0, 1, 3, 2))) * (1.0 / math.sqrt(hd))
    context = softmax(scores, -1) @ v                          # [b, h, s, hd]
    merged = g.reshape(g.transpose(context, (0, 2, 1, 3)), (batch, seq, dim))
    return dense(merged, wo, bo)


__all__ = ["Tensor", "exp", "log", "tanh", "sqrt", "rsqrt", "erf", "relu", "gelu",
           "sum", "amax", "mean", "softmax", "log_softmax", "cross_entropy", "dense",
           "layer_norm", "one_hot", "embedding", "attention"]


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _positive_pair(what, name, v):
    """`v` (an int or a pair of ints, each at least 1) as a pair; else a
    ShapeError naming `what`'s argument `name`."""
    def positive(d):
        return isinstance(d, numbers.Integral) and not isinstance(d, bool) and d >= 1
    pair = (v, v) if isinstance(v, numbers.Integral) else v
    if not isinstance(pair, (tuple, list)) or len(pair) != 2 or not all(map(positive, pair)):
        raise ShapeError(f"{what}: {name} must be a positive int or a pair of positive "
                         f"ints, got {v!r}")
    return tuple(int(d) for d in pair)


def _pool_padding(what, window, padding):
    """A pool's explicit padding is at most half its window, as torch's:
    a window wholly in the padding would have nothing to pool (-inf for a
    max)."""
    if isinstance(padding, str):
        return
    for pad, size in zip(_pair(padding), window):
        if isinstance(pad, int) and pad > size // 2:
            raise ShapeError(f"{what}: padding {padding!r} is more than half the "
                             f"{window[0]}x{window[1]} window (torch: pad should be at "
                             f"most half of kernel size)")


def _padding(x, kernel, strides, dilations, padding, value=0.0):
    """`padding`: "valid", "same" (TensorFlow's: output = ceil(input /
    stride), extra padding at the end) or an int/pair of symmetric pads."""
    if isinstance(padding, str):
        # TensorFlow spells them "VALID" and "SAME".
        if padding.lower() not in ("valid", "same"):
            raise ShapeError(f"padding must be \"valid\", \"same\" or an int or pair "
                             f"of ints, got {padding!r}")
        padding = padding.lower()
    elif not all(isinstance(p, int) and p >= 0 for p in _pair(padding)):
        raise ShapeError(f"padding must be \"valid\", \"same\" or an int or pair of "
                         f"non-negative ints, got {padding!r}")
    if padding == "valid":
        return x
    if padding == "same":
        low, high = [0, 0, 0, 0], [0, 0, 0, 0]
        for d in range(2):
            size = x.shape[1 + d]
            out = -(-size // strides[d])
            total = max((out - 1) * strides[d] + dilations[d] * (kernel[d] - 1) + 1 - size, 0)
            low[1 + d], high[1 + d] = total // 2, total - total // 2
        return x.graph.pad(x, low, high, value)
    ph, pw = _pair(padding)
    return x.graph.pad(x, [0, ph, pw, 0], [0, ph, pw, 0], value)


def conv2d(x, w, strides=1, padding="valid", dilations=1):
    """NHWC input, HWCF filter, as torch.nn.functional.conv2d on NCHW/FCHW."""
    strides = _positive_pair("conv2d", "strides", strides)
    dilations = _positive_pair("conv2d", "dilations", dilations)
    x = _padding(x, w.shape[:2], strides, dilations, padding)
    return x.graph.conv2d(x, w, strides, dilations)


def max_pool2d(x, window, strides=None, padding="valid"):
    window = _positive_pair("max_pool2d", "the window", window)
    strides = window if strides is None else _positive_pair("max_pool2d", "strides",
                                                            strides)
    _pool_padding("max_pool2d", window, padding)
    x = _padding(x, window, strides, (1, 1), padding, -math.inf)
    return x.graph.pool2d(x, window, strides, "max")


def avg_pool2d(x, window, strides=None, padding="valid"):
    """Padding counts as zeros in the average (count_include_pad)."""
    window = _positive_pair("avg_pool2d", "the window", window)
    strides = window if strides is None else _positive_pair("avg_pool2d", "strides",
                                                            strides)
    _pool_padding("avg_pool2d", window, padding)
    x = _padding(x, window, strides, (1, 1), padding)
    return x.graph.pool2d(x, window, strides, "sum") * (1.0 / (window[0] * window[1]))


def global_avg_pool(x):
    """[n, h, w, c] -> [n, c]."""
    return mean(mean(x, 1), 1)


def batch_norm(x, gamma, beta, eps=1e-5, running=None, momentum=0.1,
               training=True):
    """Batch normalization over every dimension but the last (channels), as
    torch.nn.BatchNorm2d.

    Training mode normalizes with the batch's statistics (biased variance);
    under data parallelism they cover the whole global batch (synchronized).
    `running` = (mean, var), state tensors (Graph.state), then get their
    next values as torch does: `(1 - momentum) * r + momentum * s`, with the
    unbiased variance. Inference mode (`training=False`) normalizes with
    `running` instead."""
    if not training:
        if running is None:
            raise ShapeError("batch_norm in inference mode normalizes with the running "
                             "statistics: pass running=(mean, var)")
        mean_, var_ = running
        return (x - mean_) * rsqrt(var_ + eps) * gamma + beta
    # Over each dimension but the channels, the batch (0) last: under data
    # parallelism the statistics are then reduced over the devices as C
    # values (synchronized), not H x W x C partial sums.
    mu = x
    for a in reversed(range(x.rank - 1)):
        mu = mean(mu, a)
    centered = x - mu
    var = centered * centered
    for a in reversed(range(x.rank - 1)):
        var = mean(var, a)
    if running is not None:
        n = math.prod(x.shape[:-1])
        if n < 2:
            raise ShapeError(f"batch_norm over {n} value per channel: its running "
                             "variance (unbiased) needs at least 2")
        mean_, var_ = running
        g = x.graph
        g.update_state(mean_, mean_ * (1.0 - momentum) + mu * momentum)
        g.update_state(var_, var_ * (1.0 - momentum) + var * (momentum * n / (n - 1)))
    return centered * rsqrt(var + eps) * gamma + beta

