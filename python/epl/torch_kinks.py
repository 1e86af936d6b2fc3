"""Decompositions that give piecewise ops PyTorch's gradient at their kinks
(and std its gradient where it is 0).

torch-mlir lowers leaky_relu to max(0, x) + slope * min(0, x), an ELU to
max(0, x) + min(0, elu), hardtanh and clamp to a max then a min, each a
compare and a select. epl-autodiff differentiates a select by the branch
it takes, so at a kink (x exactly 0: a zero input and a zero bias, common
in a CNN's padded border) the gradient was another one-sided derivative
than PyTorch's, or the sum of both: leaky_relu'(0) was 1.1 where PyTorch
says the slope, ELU'(0) was 2 where it says 1. A bias's gradient sums
those positions, so it was silently wrong.

These decompositions, applied by `epl.torch.export` before torch-mlir's
own, write each op as selects whose branch at every kink is the one
PyTorch differentiates. PyTorch's choice is not the same in every version
(torch 1.13's clamp passes the gradient at its bounds, 2.x's does not), so
it is measured once on the installed torch (`_conventions`) rather than
assumed. Each decomposition computes its value as PyTorch's CPU kernel
does, so the forward is unchanged (to the last bit but for a tie of
`maximum` between odd subnormals, whose halves round).
"""

import functools


#: Copies of each probed point: PyTorch's vectorized kernels and their
#: scalar tail have differed at a bound (torch 1.13's hardswish'(3) is 1.0
#: in the vector body, 1.5 in the tail), so a probe of one element read the
#: tail's convention, not the one most elements get.
_PROBE = 64


def _gradient(torch, f, x):
    """d f / dx at the float32 point `x`, by PyTorch's autograd: the value
    every copy of the point gets, else NaN (no one convention)."""
    t = torch.full((_PROBE,), x, requires_grad=True)
    f(t).sum().backward()
    values = set(t.grad.tolist())
    return values.pop() if len(values) == 1 else float("nan")


def _which(value, first, second):
    """True where PyTorch's value is `first`, False where `second`, None
    where neither (a torch whose convention this module does not know)."""
    return True if value == first else False if value == second else None


@functools.lru_cache(maxsize=None)
def _conventions():
    """Which piece's derivative PyTorch takes at each kink (True: the one
    the name says; None: neither of the two this module can write), and how
    maximum and minimum split a tie."""
    import torch
    with torch.enable_grad(), torch.inference_mode(False):
        return _measure(torch)


def _measure(torch):
    """_conventions, measured with autograd on (the export may be called
    under torch.no_grad())."""
    import torch.nn.functional as F
    g = functools.partial(_gradient, torch)
    small = torch.tensor([-1e-7])

    def constant(f, x):  # 0: the bound's constant piece; 1: the identity
        return _which(g(f, x), 0.0, 1.0)

    def tie(f):
        a = torch.ones(_PROBE, requires_grad=True)
        b = torch.ones(_PROBE, requires_grad=True)
        f(a, b).sum().backward()
        if len(set(a.grad.tolist())) != 1 or len(set(b.grad.tolist())) != 1:
            return None
        split = float(a.grad[0]), float(b.grad[0])
        return split if sum(split) == 1.0 else None  # a tie's value is a * wa + b * wb

    return {
        # Slopes of 0.5 and 2 tell the negative piece's derivative from 1.
        "leaky_relu_0_negative": _which(g(lambda t: F.leaky_relu(t, 0.5), 0.0), 0.5, 1.0),
        "elu_0_negative": _which(g(lambda t: F.elu(t, 2.0), 0.0), 2.0, 1.0),
        "prelu_0_negative": _which(g(lambda t: F.prelu(t, torch.tensor([0.5])), 0.0),
                                   0.5, 1.0),
        "hardtanh_low_constant": constant(F.hardtanh, -1.0),
        "hardtanh_high_constant": constant(F.hardtanh, 1.0),
        "clamp_low_constant": constant(lambda t: torch.clamp(t, -1.0, 1.0), -1.0),
        "clamp_high_constant": constant(lambda t: torch.clamp(t, -1.0, 1.0), 1.0),
        "clamp_min_constant": constant(lambda t: torch.clamp(t, min=0.0), 0.0),
        "clamp_max_constant": constant(lambda t: torch.clamp(t, max=0.0), 0.0),
        "clamp_min_op_constant": constant(lambda t: torch.clamp_min(t, 0.0), 0.0),
        "clamp_max_op_constant": constant(lambda t: torch.clamp_max(t, 0.0), 0.0),
        "hardsigmoid_low_constant": constant(F.hardsigmoid, -3.0),
        "hardsigmoid_high_constant": constant(F.hardsigmoid, 3.0),
        # The middle piece x(x+3)/6 has derivative -0.5 at -3 and 1.5 at 3.
        "hardswish_low_constant": _which(g(F.hardswish, -3.0), 0.0, -0.5),
        "hardswish_high_identity": _which(g(F.hardswish, 3.0), 1.0, 1.5),
        "maximum_tie": tie(torch.maximum),
        "minimum_tie": tie(torch.minimum),
        # Tensor bounds: as maximum/minimum on torch 2 (halves), the input
        # alone on torch 1.13.
        "clamp_tensor_min_tie": tie(lambda a, b: torch.clamp(a, min=b)),
        "clamp_tensor_max_tie": tie(lambda a, b: torch.clamp(a, max=b)),
        "clamp_min_tensor_tie": tie(torch.clamp_min),
        "clamp_max_tensor_tie": tie(torch.clamp_max),
        # ELU's negative piece as expm1 (torch 2) or exp - 1 (torch 1.13).
        "elu_expm1": bool(F.elu(small) == torch.expm1(small)),
    }


def _below(x, bound, inclusive):
    return x <= bound if inclusive else x < bound


def _above(x, bound, inclusive):
    return x >= bound if inclusive else x > bound


def _floating(*tensors):
    return all(t.dtype.is_floating_point for t in tensors)


def decompositions(error):
    """{aten op: decomposition} for torch.export's run_decompositions, to be
    applied over torch-mlir's table. A decomposition returns NotImplemented
    where it does not apply (integers, tensor bounds), which keeps the op;
    one whose convention the installed torch does not follow raises
    `error`, naming the op."""
    import torch
    aten = torch.ops.aten
    known = _conventions()

    class Conventions:
        def __getitem__(self, key):
            if known[key] is None:
                op = key.rsplit("_", 2)[0]
                raise error(f"this torch ({torch.__version__}) differentiates {op} at a "
                            f"kink in a way epl.torch does not reproduce ({key}); "
                            "its gradient there would differ from PyTorch's")
            return known[key]

    c = Conventions()

    def leaky_relu(x, negative_slope=0.01):
        if not _floating(x):
            return NotImplemented
        return torch.where(_above(x, 0, not c["leaky_relu_0_negative"]), x,
                           x * negative_slope)

    def rrelu(x, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
        if training:
            return NotImplemented  # random slopes: the exporter refuses them
        return leaky_relu(x, (lower + upper) / 2)

    def prelu(x, weight):
        if not _floating(x, weight):
            return NotImplemented
        if weight.numel() != 1 and x.dim() >= 2:
            # One slope per channel, the dimension 1 (PyTorch's broadcast).
            weight = weight.reshape([1, -1] + [1] * (x.dim() - 2))
        return torch.where(_above(x, 0, not c["prelu_0_negative"]), x, weight * x)

    def elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
        if not _floating(x):
            return NotImplemented
        # PyTorch: x <= 0 ? expm1(x * input_scale) * alpha * scale : x * scale
        # (exp - 1 before torch 2). The exponent is x only where that branch
        # is taken: exp(100) is inf, and 0 * inf would make the other
        # branch's gradient NaN.
        positive = _above(x, 0, not c["elu_0_negative"])
        negative = torch.where(positive, 0.0, x) * input_scale
        negative = torch.expm1(negative) if c["elu_expm1"] else torch.exp(negative) - 1
        return torch.where(positive, x * scale, negative * (alpha * scale))

    def selu(x):
        return elu(x, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946)

    def celu(x, alpha=1.0):
        return elu(x, alpha, 1.0, 1.0 / alpha)

    def clamp_between(x, low, high, low_constant, high_constant):
        """min(max(x, low), high) as PyTorch orders them (low > high gives
        high), each bound's constant taken where its convention says."""
        if low is not None:
            x = torch.where(_below(x, low, low_constant), low, x)
        if high is not None:
            x = torch.where(_above(x, high, high_constant), high, x)
        return x

    def hardtanh(x, min_val=-1.0, max_val=1.0):
        if not _floating(x):
            return NotImplemented
        return clamp_between(x, min_val, max_val, c["hardtanh_low_constant"],
                             c["hardtanh_high_constant"])

    def relu6(x):
        return hardtanh(x, 0.0, 6.0)

    def clamp(x, min=None, max=None):
        if not _floating(x):
            return NotImplemented
        if min is not None and max is not None:
            low, high = c["clamp_low_constant"], c["clamp_high_constant"]
        else:
            low, high = c["clamp_min_constant"], c["clamp_max_constant"]
        return clamp_between(x, min, max, low, high)

    def clamp_min(x, min):
        if not _floating(x):
            return NotImplemented
        return clamp_between(x, min, None, c["clamp_min_op_constant"], False)

    def clamp_max(x, max):
        if not _floating(x):
            return NotImplemented
        return clamp_between(x, None, max, False, c["clamp_max_op_constant"])

    def hardsigmoid(x):
        if not _floating(x):
            return NotImplemented
        # PyTorch: min(max(x + 3, 0), 6) / 6.
        return torch.where(_below(x, -3.0, c["hardsigmoid_low_constant"]), 0.0,
                           torch.where(_above(x, 3.0, c["hardsigmoid_high_constant"]), 1.0,
                                       (x + 3) / 6))

    def hardswish(x):
        if not _floating(x):
            return NotImplemented
        # PyTorch: x * min(max(x + 3, 0), 6) / 6, in that order.
        return torch.where(_below(x, -3.0, c["hardswish_low_constant"]), 0.0,
                           torch.where(_above(x, 3.0, c["hardswish_high_identity"]),
                                       x * 6.0 / 6.0, x * (x + 3) / 6.0))

    def extremum(first_wins, second_wins, tie_key):
        def decomposition(a, b):
            # A float tensor against an integer one (maximum(h, tensor(0)))
            # is a float op: both are promoted, as PyTorch does.
            dtype = torch.result_type(a, b)
            if not dtype.is_floating_point:
                return NotImplemented
            a, b = a.to(dtype), b.to(dtype)
            tie = c[tie_key]
            # A NaN compares false both ways and reaches the tie's value,
            # as PyTorch propagates it; a * 0.5 + b * 0.5 keeps a tie of
            # infinities (a + b would overflow).
            at_tie = a * tie[0] + b * tie[1]
            return torch.where(first_wins(a, b), a,
                               torch.where(second_wins(a, b), b, at_tie))
        return decomposition

    def std(x, dim=None, *, correction=None, keepdim=False):
        if not _floating(x):
            return NotImplemented
        # PyTorch's std backward is 0 where the std is (a constant row: a
        # padded sequence), not sqrt's 1 / (2 * 0): the gradient was NaN.
        # The square root reads 1 there, so no branch holds an infinity.
        variance = torch.var(x, dim, correction=correction, keepdim=keepdim)
        zero = variance == 0
        return torch.where(zero, 0.0, torch.sqrt(torch.where(zero, 1.0, variance)))

    def std_mean(x, dim=None, *, correction=None, keepdim=False):
        if not _floating(x):
            return NotImplemented
        return (std(x, dim, correction=correction, keepdim=keepdim),
                torch.mean(x, dim, keepdim=keepdim))

    def clamp_tensor(x, min=None, max=None):
        # min(max(x, min), max) as PyTorch orders them, a tie with a bound
        # split as the installed torch splits it.
        if min is not None:
            x = extremum(torch.gt, torch.lt, "clamp_tensor_min_tie")(x, min)
            if x is NotImplemented:
                return x
        if max is not None:
            x = extremum(torch.lt, torch.gt, "clamp_tensor_max_tie")(x, max)
        return x

    maximum = extremum(torch.gt, torch.lt, "maximum_tie")
    minimum = extremum(torch.lt, torch.gt, "minimum_tie")
    return {
        aten.leaky_relu.default: leaky_relu,
        aten.rrelu.default: rrelu,
        aten.prelu.default: prelu,
        aten.elu.default: elu,
        aten.selu.default: selu,
        aten.celu.default: celu,
        aten.hardtanh.default: hardtanh,
        aten.relu6.default: relu6,
        aten.clamp.default: clamp,
        aten.clamp_min.default: clamp_min,
        aten.clamp_max.default: clamp_max,
        aten.clamp.Tensor: clamp_tensor,
        aten.clamp_min.Tensor: extremum(torch.gt, torch.lt, "clamp_min_tensor_tie"),
        aten.clamp_max.Tensor: extremum(torch.lt, torch.gt, "clamp_max_tensor_tie"),
        aten.hardsigmoid.default: hardsigmoid,
        aten.hardswish.default: hardswish,
        aten.maximum.default: maximum,
        aten.max.other: maximum,
        aten.minimum.default: minimum,
        aten.std.correction: std,
        aten.std_mean.correction: std_mean,
        aten.min.other: minimum,
    }
