"""Decompositions written with reshapes where torch's own gather through
index tables.

torch's decomposition of `native_group_norm` (the one torch-mlir applies)
computes the CPU kernel's `x * w + b` with `w` and `b` made by
`as_strided([N, C], [C, 1])` of the per-group scale, which torch-mlir
lowers to a gather at constant index tables, one row per example. A
micro-batch then read the whole batch's rows ("this op does not keep
dimension 0 ... as a dimension"), and data parallelism had to keep the
tables whole. Here the same values come from reshapes of the
(N, groups, C / groups, H * W) view, so the batch stays a dimension of
every op: GroupNorm trains under micro-batches and pipeline stages too,
with the same forward (the CPU kernel's order of operations).
"""


def decompositions():
    """{torch op overload: decomposition} for torch.export's
    run_decompositions, applied before torch-mlir's own."""
    import torch
    aten = torch.ops.aten

    def native_group_norm(x, weight, bias, n, channels, inner, groups, eps):
        per_group = channels // groups
        grouped = x.reshape(n, groups, per_group, inner)
        var, mean = torch.var_mean(grouped, dim=[2, 3], unbiased=False, keepdim=True)
        rstd = torch.rsqrt(var + eps)
        if weight is not None:
            # The CPU kernel's x * (rstd * weight) + (bias - mean * rstd * weight).
            scale = rstd * weight.reshape(1, groups, per_group, 1)
            shift = -mean * scale
            if bias is not None:
                shift = shift + bias.reshape(1, groups, per_group, 1)
            out = (grouped * scale + shift).reshape(x.shape)
        else:
            out = ((grouped - mean) * rstd).reshape(x.shape)
            if bias is not None:
                out = out + bias.reshape([1, channels] + [1] * (x.dim() - 2))
        return out, mean.reshape(n, groups), rstd.reshape(n, groups)

    return {aten.native_group_norm.default: native_group_norm}
