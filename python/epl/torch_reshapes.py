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

Advanced indexing whose indices pick each dimension on its own
(`x[:, :, rows[:, None], cols]`, as torch's bilinear upsampling reads its
four neighbours) is lowered by torch-mlir with an index table for every
dimension, the leading `:` ones (the batch) included. Such an index is
written here as one `index_select` per indexed dimension, which torch-mlir
lowers to a gather along that dimension alone: `nn.Upsample(mode=
"bilinear")` and `F.interpolate` train under micro-batches too.
"""


def native_group_norm(x, weight, bias, n, channels, inner, groups, eps):
    """aten.native_group_norm: (out, mean, rstd), with reshapes."""
    import torch
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


def separable_index(x, indices):
    """x[indices] (aten.index.Tensor's list, None for a `:`) as one
    index_select per indexed dimension where the indices are separable: k
    adjacent ones, the i-th varying along dimension i of their common
    k-dimensional broadcast shape only. Else aten.index.Tensor as before."""
    import torch
    aten = torch.ops.aten
    picked = [i for i, t in enumerate(indices) if t is not None]
    k = len(picked)
    # Broadcast from the right: (rows, 1) and (cols,) are (rows, cols).
    shapes = [(1,) * (k - indices[i].dim()) + tuple(indices[i].shape) for i in picked]
    separable = (
        k > 0 and picked == list(range(picked[0], picked[0] + k))
        # (The broadcast shape has the largest rank of the indices: k.)
        and max(indices[i].dim() for i in picked) == k
        and all(all(n == 1 for j, n in enumerate(shape) if j != i)
                for i, shape in enumerate(shapes))
        and all(indices[i].dtype in (torch.int64, torch.int32) for i in picked))
    if not separable:
        return aten.index.Tensor(x, indices)
    out = x
    for dim in picked:
        index = indices[dim].reshape(-1)
        # Negative positions count from the end, as in indexing.
        index = torch.where(index < 0, index + x.shape[dim], index)
        out = aten.index_select.default(out, dim, index)
    return out


def decompositions():
    """{torch op overload: decomposition} for torch.export's
    run_decompositions, applied before torch-mlir's own."""
    import torch
    aten = torch.ops.aten
    table = {aten.native_group_norm.default: native_group_norm}
    if hasattr(aten, "_unsafe_index"):  # torch 2
        table[aten._unsafe_index.Tensor] = separable_index
    return table
