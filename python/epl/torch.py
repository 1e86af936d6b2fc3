"""PyTorch models through torch-mlir into EPL-MLIR's L0 form.

Runs where torch 2.x and torch-mlir are installed (`scripts/setup-torch.sh`
makes such a venv); `import epl` never imports this module, so the rest of
the package works without them.

    import epl, epl.torch
    exported = epl.torch.export(
        model,                                  # nn.Module; forward returns the scalar loss
        inputs={"x": x}, labels={"y": y},       # forward(x, y), in this order
        strategy={"fc3": epl.split(2), "*": epl.replicate(1)},
        config={"optimizer.type": "sgd", "optimizer.lr": 0.01})
    exported.save("out/mlp")   # out/mlp.mlir, out/mlp.params.safetensors, out/mlp.data.safetensors

How: the model is wrapped so that its parameters are arguments of the
exported function (`torch.func.functional_call`), not frozen constants;
`torch.export` traces it, torch-mlir's FX importer imports it and lowers
it to linalg on tensors. Every FX node's location is made to name the
module it ran in (`node.meta["nn_module_stack"]`), which survives torch-mlir's
decompositions and lowering, so each linalg op is scoped by the strategy of
its module. The function's arguments are then tagged with the L0 contract
(`epl.arg`, `epl.name`) and the module gets `epl.config`.

Command line (see `python -m epl.torch --help`):

    python -m epl.torch examples/torch_mlp.py -o out/mlp --strategy 'fc2=split(2)'
"""

import argparse
import fnmatch
import importlib.util
import inspect
import json
import os
import re
import sys
import traceback

import numpy as np

from . import safetensors, torch_kinks, torch_reshapes
from .config import Config
from .errors import PLAIN_NAME, ConfigError, EPLError, StrategyError, ToolError, plain_name
from .graph import _config_value
from .strategy import Strategy, replicate, split

#: The attribute of the wrapper that holds the user's module; its prefix is
#: stripped from module paths.
_WRAPPED = "model"
_LOC_PREFIX = "epl.module:"
#: An op's module path and FX node in its location.
# Ops of the exporter's wrapper (moving a batch_dims input's batch back).
_OUTSIDE = "epl.wrapper"
_LOC_RE = re.compile(r'"' + re.escape(_LOC_PREFIX) + r'([^:"]*):([^"]*)"')


#: The dialects the EPL tools parse: those epl-opt and epl-run register
#: (registerEPLDialects, lib/InitEPL.cpp), and builtin. An op of any other
#: (torch-mlir's tm_tensor.scan of a cumsum, the ml_program seed of a
#: dropout) would stop epl-run at MLIR's "Dialect not found".
_DIALECTS = frozenset({"builtin", "arith", "bufferization", "cf", "epl", "func", "gpu",
                       "linalg", "llvm", "math", "memref", "nvvm", "scf", "tensor", "ub"})
#: The element types of the arguments runners pass (epl-run's "runners pass
#: statically shaped f32, f64, i32 and i64 tensors").
_RUN_TYPES = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64"}


class ExportError(EPLError):
    """The model cannot be exported to L0 (naming what and why)."""


class Exported:
    """An exported model: the L0 module's text, the parameters and the data
    (numpy arrays by their `epl.name`), and the module path of each
    scoped op (for inspection)."""

    def __init__(self, mlir, params, data, scopes):
        self.mlir = mlir
        self.params = params
        self.data = data
        #: {module path: strategy attribute} of the ops that were scoped.
        self.scopes = scopes

    def save(self, prefix):
        """Writes PREFIX.mlir, PREFIX.params.safetensors and
        PREFIX.data.safetensors; returns the three paths."""
        prefix = os.fspath(prefix)
        os.makedirs(os.path.dirname(prefix) or ".", exist_ok=True)
        paths = (prefix + ".mlir", prefix + ".params.safetensors",
                 prefix + ".data.safetensors")
        with open(paths[0], "w") as f:
            f.write(self.mlir)
        safetensors.save(paths[1], self.params)
        safetensors.save(paths[2], self.data)
        return paths


def parse_strategy(text):
    """'split(2)', 'replicate', 'replicate(device_count=1, name="s")' ->
    a Strategy."""
    m = re.fullmatch(r"\s*(replicate|split)\s*(?:\((.*)\))?\s*", text)
    if not m:
        raise StrategyError(f"not a strategy: {text!r} (expected e.g. 'split(2)' "
                            "or 'replicate(1)')")
    kind = {"replicate": replicate, "split": split}[m.group(1)]
    args, kwargs = [], {}
    for part in filter(None, (p.strip() for p in (m.group(2) or "").split(","))):
        key, eq, value = part.partition("=")
        value = (value if eq else key).strip()
        value = value.strip("'\"") if value[:1] in "'\"" else int(value)
        if eq:
            kwargs[key.strip()] = value
        else:
            args.append(value)
    return kind(*args, **kwargs)


def _strategies(strategy):
    out = []
    for pattern, s in (strategy or {}).items():
        if isinstance(s, str):
            s = parse_strategy(s)
        if not isinstance(s, Strategy):
            raise StrategyError(f"strategy for {pattern!r} must be epl.replicate(...) "
                                f"or epl.split(...), got {s!r}")
        out.append((pattern, s))
    return out


def _matches(pattern, path):
    """Whether `pattern` matches module `path` or one of its enclosing
    modules ("fc3" matches "fc3" and "fc3.act"; "*" matches everything,
    the model itself included)."""
    prefixes = [path]
    while "." in prefixes[-1]:
        prefixes.append(prefixes[-1].rsplit(".", 1)[0])
    return pattern == "*" or any(fnmatch.fnmatchcase(p, pattern) for p in prefixes if p)


def _first_match(path, strategy):
    """The (pattern, strategy) of the first pattern, in order, that matches
    `path`; None if none does."""
    return next(((p, s) for p, s in strategy if _matches(p, path)), None)


def scope_of(path, strategy):
    """The strategy of an op that ran in module `path` ("" for the model
    itself): the first pattern, in order, that matches the path or one of
    its enclosing modules ("fc3" matches "fc3" and "fc3.act"; patterns are
    fnmatch globs, "*" matches everything, the model itself included)."""
    found = _first_match(path, strategy)
    return found[1] if found else None


def _check_patterns_used(strategy, used, paths):
    """Every pattern of `strategy` scoped some op: one that matched none (a
    misspelled module, a glob of another model's names, or one behind an
    earlier pattern that takes all it matches, as "*" before it does) would
    leave the parallelism it asks for silently undone."""
    for pattern, _ in strategy:
        if pattern in used:
            continue
        shadow = next((p for p, _ in strategy if p in used and p != pattern and
                       any(_matches(pattern, path) and _first_match(path, strategy)[0] == p
                           for path in paths)), None)
        if shadow is not None:
            raise ExportError(
                f"the strategy pattern {pattern!r} scopes no op: the earlier pattern "
                f"{shadow!r} takes every op it matches (the first pattern that matches, "
                f"in order, scopes an op); put {pattern!r} before it")
        names = sorted({p.split(".")[0] for p in paths if p})
        raise ExportError(
            f"the strategy pattern {pattern!r} matches no module that computes an op "
            f"(top-level modules: {', '.join(names) or 'none'}; patterns are fnmatch "
            f"globs of module paths as in model.named_modules(), e.g. 'blocks.*.mlp')")


def _module_path(node):
    """The path of the module `node` ran in ("" for the model's own
    forward); None for the exporter's wrapper around the model (the
    batch_dims moves), which belongs to no scope."""
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return ""
    path = list(stack.values())[-1][0]
    # torch versions spell the root differently ("model.fc1", "L['self'].model.fc1").
    path = re.sub(r"^L\['self'\]\.?", "", path)
    if path == "":
        return None
    if path == _WRAPPED:
        return ""
    if path.startswith(_WRAPPED + "."):
        return path[len(_WRAPPED) + 1:]
    return path


def _without_running_statistics(model):
    """A copy of `model` whose batch norms in training mode keep no running
    statistics: their forward (batch statistics) is the same, but torch.export
    would return the running statistics' updates as more results, which an
    L0 model (one loss) has no place for yet. The original is untouched."""
    import copy
    import torch
    norms = [m for m in model.modules()
             if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
             and m.training and m.track_running_stats]
    if not norms:
        return model
    model = copy.deepcopy(model)
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.training:
            m.track_running_stats = False
            m.running_mean = m.running_var = m.num_batches_tracked = None
    return model


def _check_arguments(named, data):
    """The parameters' and the data's element types are ones epl-run
    passes, the data's names ones the module can hold: said here, naming
    the tensor, before torch-mlir runs (a bf16 parameter would end in
    numpy's TypeError, a bool mask in epl-run's refusal of the module)."""
    for kind, tensors in (("parameter", named), ("input or label", data)):
        for name, t in tensors.items():
            if kind != "parameter" and not plain_name(name):
                raise ExportError(f"the input or label name {name!r} must be {PLAIN_NAME}")
            dtype = str(t.dtype).replace("torch.", "")
            if dtype not in _RUN_TYPES:
                fix = ("export a float32 or float64 copy of the model (model.float())"
                       if kind == "parameter" else
                       "convert it (a mask to int64 or float32, ids to int64)")
                raise ExportError(
                    f"the {kind} '{name}' is a {t.dtype} tensor; epl-run passes "
                    f"{', '.join(f'{v} ({k})' for k, v in _RUN_TYPES.items())} "
                    f"tensors: {fix}")


def _trace_hint(error):
    """What to change where torch.export failed in a known place."""
    frames = {f.name for f in traceback.extract_tb(error.__traceback__)}
    if "_detect_is_causal_mask" in frames:
        return ("; nn.Transformer's layers compare a float attention mask with a "
                "causal one to see whether it is causal, which depends on the mask's "
                "values: say so instead, is_causal=True with the mask (nn.TransformerEncoder"
                "(Layer), nn.MultiheadAttention) or tgt_is_causal=True (nn.Transformer"
                "(Decoder(Layer)))")
    if "data-dependent" in str(error):
        return ("; the forward branches on a tensor's values (an if, a .item(), a "
                "shape that depends on the data), which one exported step cannot follow")
    return ""


def _check_batch_dims(batch_dims, data):
    """`batch_dims` as {name: non-negative dimension}, each naming an input
    or label and one of its dimensions."""
    result = {}
    for name, dim in (batch_dims or {}).items():
        if name not in data:
            raise ExportError(f"batch_dims names {name!r}, which is no input or label "
                              f"(they are: {', '.join(data) or 'none'})")
        rank = len(data[name].shape)
        if isinstance(dim, bool) or not isinstance(dim, int) or not -rank <= dim < rank:
            raise ExportError(f"batch_dims[{name!r}] is {dim!r}: the batch must be one of "
                              f"the {rank} dimensions of {name!r} (shape "
                              f"{tuple(data[name].shape)})")
        result[name] = dim % rank
    return result


def _where(path, modules):
    """Module `path` of the model, as the user knows it."""
    if not path:
        return "the model's own forward"
    module = modules.get(path)
    return f"module '{path}'" + (f" ({type(module).__name__})" if module is not None else "")


def _check_program(program, modules, trainable, changed=()):
    """Ops of the traced program whose training the exported forward cannot
    carry: an embedding's padding_idx (PyTorch never updates that row),
    scale_grad_by_freq, sparse gradients and max_norm (which renormalizes
    the table in place), dropout in training mode (random numbers, which
    torch-mlir keeps in ml_program globals), and a stop-gradient (.detach(),
    torch.no_grad()) of a value computed from a trained parameter, which
    torch-mlir drops: epl-autodiff would differentiate through it. Found on
    the FX nodes, F.embedding and F.dropout calls included; named by module.
    `trainable`: per user input of the program, whether it is a trained
    parameter; `changed`: the parameters and inputs the forward wrote in
    place, said after the ops' own errors (max_norm's write) and before a
    stop-gradient (a weight clamped under torch.no_grad())."""
    import torch
    inputs = [node for node in program.graph.nodes if node.op == "placeholder"]
    user = [spec.arg.name for spec in program.graph_signature.input_specs
            if spec.kind == torch.export.graph_signature.InputKind.USER_INPUT]
    # The nodes whose value depends on a trained parameter.
    trained = {node.name for node in inputs
               if node.name in user and trainable[user.index(node.name)]}
    # (Said after the ops' own errors: max_norm's renormalization detaches.)
    stop = None
    for node in program.graph.nodes:
        if node.op != "call_function":
            continue
        target = str(node.target)
        where = _where(_module_path(node), modules)
        uses_trained = any(isinstance(a, torch.fx.Node) and a.name in trained
                           for a in node.all_input_nodes)
        if uses_trained:
            trained.add(node.name)
        what = uses_trained and not stop and _gradient_stop(program.graph_module, node)
        if what:
            stop = (f"{where} stops the gradient ({what}) of a value computed from a "
                    "trained parameter; torch-mlir drops the stop, so epl-run would "
                    "train through it (a silent wrong gradient): compute that value "
                    "from parameters with requires_grad=False, which the export keeps "
                    "as state, or outside the model")
        value = node.meta.get("val")
        shape = getattr(value, "shape", ())
        if any(not isinstance(d, int) for d in shape):
            if target == "<built-in function getitem>":  # a result of a tuple (torch.unique)
                target = str(node.args[0].target)
            # torch-mlir lowers such a shape into an unbounded loop of its
            # own (a boolean mask's o[o > 0] ran out of 24 GB).
            raise ExportError(
                f"{where} makes a tensor whose shape depends on the data "
                f"({target}, shape {tuple(str(d) for d in shape)}: a boolean mask's "
                "indexing, nonzero, masked_select); the EPL tools run static shapes: "
                "multiply by the mask, or use torch.where, instead")
        if target.startswith("aten.embedding_renorm"):
            raise ExportError(f"the embedding of {where} has max_norm={node.args[2]}: "
                              "it renormalizes the table's rows in place, which the "
                              "exported forward does not carry; export it without "
                              "max_norm")
        if target.startswith("aten.embedding."):
            args = list(node.args) + [None] * 5
            padding_idx = node.kwargs.get("padding_idx", args[2])
            scale = node.kwargs.get("scale_grad_by_freq", args[3])
            sparse = node.kwargs.get("sparse", args[4])
            if padding_idx not in (None, -1):
                raise ExportError(
                    f"the embedding of {where} has padding_idx={padding_idx}: PyTorch "
                    "never updates that row, but the exported forward carries no "
                    "such rule, so epl-run would train it; export it without "
                    "padding_idx")
            if scale or sparse:
                raise ExportError(
                    f"the embedding of {where} has "
                    f"{'scale_grad_by_freq=True' if scale else 'sparse=True'}: the "
                    "exported forward carries only the dense gradient; export it "
                    "with scale_grad_by_freq=False and sparse=False")
        if target.startswith(("aten.dropout", "aten.native_dropout",
                              "aten.feature_dropout", "aten.alpha_dropout")):
            p, train = (list(node.args) + [None, None])[1:3]
            if train and p:
                raise ExportError(
                    f"the dropout of {where} (p={p}) is in training mode, which "
                    "draws random numbers the EPL tools do not: export the model "
                    "in eval mode (model.eval()) or with p=0")
    if changed:
        raise ExportError(
            f"the model's forward changes {list(changed)} in place (a parameter or "
            "input); the exported step carries no such write: compute a new tensor "
            "instead")
    if stop:
        raise ExportError(stop)


def _same(a, b):
    """Tensors equal element for element, NaN equal to NaN."""
    import torch
    if a.is_floating_point() or a.is_complex():
        return a.shape == b.shape and torch.allclose(a, b, rtol=0, atol=0, equal_nan=True)
    return torch.equal(a, b)


def _gradient_stop(graph_module, node):
    """How FX `node` of `graph_module` stops the gradient of its inputs, in
    the user's words, or None: a .detach(), a torch.no_grad() block, or
    either inside another wrapper's subgraph (torch.autocast(...,
    enabled=False) around float32 attention), at any depth."""
    import torch
    if node.op != "call_function":
        return None
    target = str(node.target)
    if target.startswith("aten.detach"):
        return ".detach()"
    if target.endswith("wrap_with_set_grad_enabled") and node.args and node.args[0] is False:
        return "torch.no_grad()"
    if not target.startswith("wrap_with"):
        return None
    for arg in node.args:
        sub = getattr(graph_module, str(arg.target), None) \
            if isinstance(arg, torch.fx.Node) and arg.op == "get_attr" else None
        if isinstance(sub, torch.fx.GraphModule) and \
                any(_gradient_stop(sub, inner) for inner in sub.graph.nodes):
            return "a .detach() or torch.no_grad() inside a torch.autocast block"
    return None


def _check_autograd_functions(functional, args, names, named):
    """A custom torch.autograd.Function on the path from a trained parameter
    to the loss: the export traces its forward only, so epl-autodiff would
    differentiate that instead of calling its backward (a gradient reversal,
    a straight-through estimator: silently other gradients). Found in the
    autograd graph of one forward, where its backward is a node."""
    import torch
    with torch.enable_grad():
        tracked = tuple(
            a.detach().requires_grad_(named[names[i]].requires_grad)
            if i < len(names) else a for i, a in enumerate(args))
        loss = functional(*tracked)
    seen, todo = set(), [getattr(loss, "grad_fn", None)]
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        if isinstance(fn, torch.autograd.function.BackwardCFunction):
            name = getattr(getattr(fn, "_forward_cls", None), "__name__", type(fn).__name__)
            if name == "CheckpointFunction":
                raise ExportError(
                    "the model checkpoints activations with torch.utils.checkpoint("
                    "use_reentrant=True), a custom torch.autograd.Function the export "
                    "cannot carry; pass use_reentrant=False (or leave checkpointing to "
                    "EPL: gradient_checkpoint.type = \"auto\")")
            raise ExportError(
                f"the model calls the custom torch.autograd.Function {name} on a "
                "value computed from a trained parameter: the export traces its "
                "forward only, so epl-run would differentiate that instead of its "
                "backward (a silent wrong gradient); write the op the backward "
                "means as ordinary torch code, or keep its input free of trained "
                "parameters")
        todo.extend(next_fn for next_fn, _ in fn.next_functions)


#: sqrt(2/pi) as torch-mlir (20261001) writes it in gelu(approximate="tanh"),
#: 2e-4 off: a transformer trained on it drifted 1e-4 from PyTorch in 40
#: steps, its first loss within the export check's rtol.
_GELU_TANH_SQRT_2_OVER_PI = 0.7977240352174656


def _fix_gelu_tanh(module, ir):
    """Puts torch-mlir's sqrt(2/pi) right where the module holds it beside
    the tanh approximation's 0.044715 (constants carry no location to tell
    the gelu's apart)."""
    import math
    constants = [op for op in _operations(module.operation) if op.name == "arith.constant"]

    def value(op):
        try:
            return ir.FloatAttr(op.attributes["value"]).value
        except ValueError:  # not a float scalar
            return None

    values = [value(op) for op in constants]
    if not any(v is not None and abs(v - 0.044715) < 1e-7 for v in values):
        return
    wrong = {_GELU_TANH_SQRT_2_OVER_PI, float(np.float32(_GELU_TANH_SQRT_2_OVER_PI))}
    for op, v in zip(constants, values):
        if v in wrong:
            op.attributes["value"] = ir.FloatAttr.get(op.attributes["value"].type,
                                                      math.sqrt(2 / math.pi))


def _operations(op):
    """The ops nested in `op`, in order, at any depth."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation
                yield from _operations(inner.operation)


def _check_dialects(module, modules):
    """Each op of the lowered module is of a dialect the EPL tools take
    (_DIALECTS); else the first that is not is named, with the torch op and
    module it came from (its location; a module-level op, such as the
    ml_program.global of a random seed, has none), rather than left to
    epl-run's parse error."""
    bad = [op for op in _operations(module.operation)
           if op.name.partition(".")[0] not in _DIALECTS]
    if not bad:
        return
    located = [(op, _LOC_RE.findall(str(op.location))) for op in bad]
    op, locs = next(((op, locs) for op, locs in located if locs), located[0])
    dialect = op.name.partition(".")[0]
    what = f"'{locs[0][1]}' of {_where(locs[0][0], modules)}" if locs else "the model"
    hint = ("; it draws random numbers, which the EPL tools do not (dropout: export "
            "the model in eval mode, model.eval(), or with p=0)"
            if dialect == "ml_program" else "")
    raise ExportError(
        f"torch-mlir lowered {what} to '{op.name}', of the {dialect} dialect, which "
        f"the EPL tools do not take (they take "
        f"{', '.join(sorted(_DIALECTS - {'builtin'}))}){hint}")


def export(model, inputs, labels=None, *, strategy=None, config=None,
           func_name="model", check_rtol=2e-6, batch_dims=None):
    """Exports `model` (an nn.Module whose forward takes the inputs then the
    labels, positionally in dict order, and returns the scalar loss) to an
    L0 module. Parameters are `model.named_parameters()` under those names
    (frozen ones, requires_grad=False, as model state: carried, not
    trained); buffers are frozen into the module as constants. `strategy`
    maps module name patterns to epl.replicate/epl.split (or strings such
    as "split(2)"); `config` holds epl.config keys (validated by
    epl.Config). What the module could not train as PyTorch does (an
    embedding's padding_idx, dropout in training mode, an op of a dialect
    the EPL tools do not take, a tensor type epl-run does not pass) is an
    ExportError naming it. The exported forward is then run by epl-run on
    the same parameters and data: a loss further than `check_rtol` from
    PyTorch's (an op torch-mlir lowered otherwise than PyTorch computes
    it) is an ExportError too (None: not checked). `batch_dims` names the
    inputs and labels whose batch is not their dimension 0 (a seq-first
    layout's (L, B, E): {"x": 1}): they are exported, and saved, with the
    batch moved to dimension 0, where the EPL tools cut every input and
    label into devices' and micro-batches' shares; the exported forward
    moves it back."""
    import torch
    labels = labels or {}
    clash = set(inputs) & set(labels)
    if clash:
        raise ExportError(f"{sorted(clash)} are both inputs and labels")
    config_items = dict(Config(config or {}).items())
    strategy = _strategies(strategy)
    named = dict(model.named_parameters())
    overlap = set(named) & (set(inputs) | set(labels))
    if overlap:
        raise ExportError(f"{sorted(overlap)} name both a parameter and an input")
    names = list(named)
    data = {**inputs, **labels}
    _check_arguments(named, {n: torch.as_tensor(v) for n, v in data.items()})
    batch_dims = _check_batch_dims(batch_dims, data)
    moved = [batch_dims.get(n, 0) for n in data]
    try:
        from torch_mlir import fx, ir
        from torch_mlir.dialects import torch as torch_d
        from torch_mlir.extras.fx_decomp_util import get_decomposition_table
        from torch_mlir.extras.fx_importer import ContextCache, FxImporter
    except ImportError as e:
        raise ExportError(f"torch-mlir is not importable in this Python ({sys.executable}: "
                          f"{e}); scripts/setup-torch.sh makes a venv with it "
                          f"(.venv-torch)") from None
    model = _without_running_statistics(model)
    modules = dict(model.named_modules())

    class Functional(torch.nn.Module):
        """The model with its parameters as explicit arguments."""

        def __init__(self):
            super().__init__()
            setattr(self, _WRAPPED, model)

        def forward(self, *args):
            params = dict(zip(names, args[:len(names)]))
            data = tuple(a.movedim(0, d) if d else a
                         for a, d in zip(args[len(names):], moved))
            return torch.func.functional_call(getattr(self, _WRAPPED), params, data)

    # Copies: a forward that changes its arguments in place changes neither
    # the model's parameters nor the caller's data.
    args = tuple(p.detach().clone() for p in named.values()) + tuple(
        torch.as_tensor(v).movedim(d, 0).clone() for v, d in zip(data.values(), moved))
    arg_names = names + list(data)
    originals = [a.clone() for a in args]
    # The checks' forwards leave the model's buffers as they found them.
    buffers = dict(model.named_buffers())
    before = {n: b.detach().clone() for n, b in buffers.items()}
    try:
        try:  # the data fits forward's arguments (a label left out)
            inspect.signature(model.forward).bind(*data.values())
        except TypeError as e:
            raise ExportError(f"the model's forward cannot be called with the "
                              f"{len(data)} inputs and labels given "
                              f"({', '.join(data) or 'none'}), in that order: {e}") from e
        with torch.no_grad():
            loss = Functional()(*args)
        if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
            raise ExportError("the model's forward must return the scalar loss, got "
                              f"{type(loss).__name__} of shape "
                              f"{tuple(getattr(loss, 'shape', ()))}")
        _check_autograd_functions(Functional(), args, names, named)
        updated = [n for n, b in buffers.items()
                   if model.get_buffer(n) is not b or not _same(b, before[n])]
        changed = [n for n, a, o in zip(arg_names, args, originals) if not _same(a, o)]
    finally:
        with torch.no_grad():
            for n, b in buffers.items():
                b.copy_(before[n])
                owner, _, attr = n.rpartition(".")
                setattr(model.get_submodule(owner), attr, b)  # one reassigned
    if updated:
        raise ExportError(
            f"the model's forward updates its buffer(s) {updated} in place (a statistic "
            "the model keeps itself); the exported step carries no such update, so "
            "epl-run would train on their first values: keep them constant in forward, "
            "or make them parameters")
    # Buffers registered with persistent=False (LLaMA's rotary caches) are
    # no state torch-mlir finds ("Could not find state mapping for
    # buffer"); every buffer is frozen into the module as a constant, so
    # persistence makes no difference to the step.
    non_persistent = {m: set(m._non_persistent_buffers_set) for m in modules.values()
                      if m._non_persistent_buffers_set}
    for m in non_persistent:
        m._non_persistent_buffers_set.clear()
    try:
        try:
            program = torch.export.export(Functional(), args, strict=False)
        except Exception as e:  # torch's own, with a page of internals
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ExportError(f"torch.export cannot trace the model: {first}"
                              f"{_trace_hint(e)}") from e
        _check_program(program, modules,
                       [named[n].requires_grad for n in names] + [False] * len(data), changed)

        class ModuleLocations(ContextCache):
            """Names each op after the module it ran in (the FX node's
            nn_module_stack); torch-mlir's passes keep the location."""

            def get_node_location(self, node):
                loc = super().get_node_location(node) or ir.Location.unknown(context=self._c)
                path = _module_path(node)
                prefix = _OUTSIDE if path is None else f"{_LOC_PREFIX}{path}"
                return ir.Location.name(f"{prefix}:{node.name}", childLoc=loc, context=self._c)

        context = ir.Context()
        torch_d.register_dialect(context)
        importer = FxImporter(context=context)
        importer._cc = ModuleLocations(importer._c, py_attr_tracker=importer._py_attr_tracker)
        # torch-mlir's errors, kept for the ExportError rather than printed.
        errors = []

        def keep(diagnostic):
            if diagnostic.severity != ir.DiagnosticSeverity.ERROR:
                return False  # warnings and remarks print as they did
            errors.append((str(diagnostic.location), diagnostic.message))
            return True

        table = {**get_decomposition_table(), **torch_kinks.decompositions(ExportError),
                 **torch_reshapes.decompositions()}
        handler = context.attach_diagnostic_handler(keep)
        try:
            module = fx.export_and_import(program, output_type="linalg-on-tensors",
                                          fx_importer=importer, func_name=func_name,
                                          decomposition_table=table)
        except ExportError:
            raise
        except Exception as e:  # torch-mlir's pass pipeline failed
            if not errors:
                text = str(e).strip()
                raise ExportError("torch-mlir cannot lower the model: "
                                  f"{text.splitlines()[0] if text else type(e).__name__}") from e
            location, message = errors[0]
            locs = _LOC_RE.findall(location)
            what = f"'{locs[0][1]}' of {_where(locs[0][0], modules)}" if locs else "the model"
            raise ExportError(f"torch-mlir cannot lower {what}: {message}") from e
        finally:
            handler.detach()
    finally:
        for m, kept in non_persistent.items():
            m._non_persistent_buffers_set.update(kept)

    context.allow_unregistered_dialects = True  # #epl.* attributes, opaque here
    scopes = {}
    with context, ir.Location.unknown():
        _check_dialects(module, modules)
        _fix_gelu_tanh(module, ir)
        funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
        if len(funcs) != 1:
            raise ExportError(f"torch-mlir produced {len(funcs)} functions, expected 1")
        func = funcs[0].operation
        # A frozen parameter (requires_grad=False) is model state: an
        # epl.arg = "state" the step reads and returns no next value of is
        # carried unchanged (no gradient, no optimizer state) and saved with
        # the parameters, as epl-run does with it (checked: losses as
        # PyTorch's, the tensor unchanged in --save). A constant, as buffers
        # are, would drop it from the parameters file and the checkpoints.
        kinds = ([("param" if named[n].requires_grad else "state") for n in names]
                 + ["input"] * len(inputs) + ["label"] * len(labels))
        arg_names = names + list(data)
        if len(func.regions[0].blocks[0].arguments) != len(kinds):
            raise ExportError(
                f"@{func_name} takes {len(func.regions[0].blocks[0].arguments)} "
                f"arguments, expected {len(kinds)} (parameters, inputs, labels); "
                "an unused one may have been dropped")
        func.attributes["arg_attrs"] = ir.ArrayAttr.get([
            ir.Attribute.parse(f'{{epl.arg = "{k}", epl.name = "{n}"}}')
            for k, n in zip(kinds, arg_names)])
        _set_config(module, config_items, ir)
        _mark_sources(func, ir)
        if strategy:
            moves, used, paths = [], set(), set()
            for op in func.regions[0].blocks[0].operations:
                op = op.operation
                dialect, _, name = op.name.partition(".")
                if dialect not in ("linalg", "tensor") or op.name == "tensor.empty":
                    continue
                location = str(op.location)
                if f'"{_OUTSIDE}:' in location:
                    moves.append(op)
                    continue
                found = _LOC_RE.findall(location)
                path = found[0][0] if found else ""
                paths.add(path)
                match = _first_match(path, strategy)
                if match is not None:
                    used.add(match[0])
                    op.attributes["epl.scope"] = ir.Attribute.parse(match[1].attribute)
                    scopes.setdefault(path, match[1].attribute)
            _check_patterns_used(strategy, used, paths)
            # The wrapper's moves of a batch back to its dimension (batch_dims)
            # run where the model first reads the input: in its first
            # user's scope (a pipeline's stage).
            block = func.regions[0].blocks[0]
            for op in reversed(moves):
                users = [u.owner for r in op.results for u in r.uses]
                # (A use list runs newest first: the first user in the block.)
                first = next((o.operation for o in block.operations
                              if "epl.scope" in o.operation.attributes and
                              any(o.operation == u for u in users)), None)
                if first is not None:
                    op.attributes["epl.scope"] = first.attributes["epl.scope"]

        text = module.operation.get_asm()
        # The forward is checked on the CPU, where keys that move memory
        # to and from a GPU (offload) are refused; they do not change it.
        on_cpu = {k: v for k, v in config_items.items() if not k.startswith("offload.")}
        if on_cpu != config_items:
            _set_config(module, on_cpu, ir)
        checked_text = module.operation.get_asm()

    params = {n: p.detach().cpu().numpy() for n, p in named.items()}
    data_np = {n: torch.as_tensor(v).detach().movedim(d, 0).contiguous().cpu().numpy()
               for (n, v), d in zip(data.items(), moved)}
    if check_rtol is not None:
        _check_forward(Exported(checked_text, params, data_np, scopes), float(loss),
                       check_rtol)
    return Exported(text, params, data_np, scopes)


def _mark_sources(func, ir):
    """Each linalg and tensor op gets `epl.source`, the module path and the
    torch op it was made of: printed on the op's line, it names them in
    any error the EPL tools report at the op."""
    for op in func.regions[0].blocks[0].operations:
        op = op.operation
        if op.name.partition(".")[0] not in ("linalg", "tensor") or op.name == "tensor.empty":
            continue
        found = _LOC_RE.findall(str(op.location))
        if found:
            path, node = found[0]
            op.attributes["epl.source"] = ir.StringAttr.get(f"{path or '<forward>'}: {node}")


def _set_config(module, items, ir):
    """`items` as the module's epl.config (none if empty)."""
    attributes = module.operation.attributes
    if items:
        text = ", ".join(f'"{k}" = {_config_value(v)}' for k, v in items.items())
        attributes["epl.config"] = ir.Attribute.parse(f"{{{text}}}")
    elif "epl.config" in attributes:
        del attributes["epl.config"]


def _check_forward(exported, expected, rtol):
    """epl-run's loss of the exported forward (--no-train, one step, on the
    export's parameters and data) is PyTorch's `expected` within `rtol`:
    torch-mlir's lowering of an op can differ from PyTorch's (its
    gelu(approximate="tanh") once rounded sqrt(2/pi) to 0.797724, 1e-5 of
    a loss off), which training would carry on silently."""
    import tempfile
    import warnings
    from .errors import EPLWarning
    from .runner import run_tool, tools_dir
    if not (tools_dir() / "epl-run").exists():
        warnings.warn(EPLWarning(
            f"the exported forward is not checked against PyTorch's: "
            f"{tools_dir() / 'epl-run'} does not exist (build the project, or "
            f"set EPL_BUILD_DIR)"), stacklevel=3)
        return
    with tempfile.TemporaryDirectory() as tmp:
        mlir, params, data = exported.save(os.path.join(tmp, "model"))
        out = run_tool("epl-run", mlir, "--no-train", "--steps", "1", "--params", params,
                       "--data", data, names={mlir: "the exported module"})
    found = re.search(r"^step 1 loss (\S+)", out, re.M)
    if not found:
        raise ExportError(f"epl-run printed no loss for the exported forward:\n{out}")
    loss = float(found.group(1))
    if not abs(loss - expected) <= rtol * abs(expected):
        raise ExportError(
            f"the exported forward's loss is {loss!r} where PyTorch's is {expected!r} "
            f"(relative difference {abs(loss - expected) / abs(expected or 1):.1e}, over "
            f"check_rtol={rtol:g}): torch-mlir lowered an op otherwise than PyTorch "
            "computes it; find it by exporting parts of the model, or pass a larger "
            "check_rtol to accept the difference")


def make_optimizer(parameters, config):
    """The torch.optim optimizer with the semantics of EPL's `optimizer.*`
    keys (docs/training.md): single-tensor (foreach=False) updates, weight
    decay as EPL reads it (L2 in sgd/momentum/adam, decoupled in adamw)."""
    import torch

    c = Config(config or {})
    kind, lr, wd = c["optimizer.type"], c["optimizer.lr"], c["optimizer.weight_decay"]
    if kind == "sgd":
        return torch.optim.SGD(parameters, lr=lr, weight_decay=wd, foreach=False)
    if kind == "momentum":
        return torch.optim.SGD(parameters, lr=lr, momentum=c["optimizer.momentum"],
                               weight_decay=wd, foreach=False)
    betas = (c["optimizer.beta1"], c["optimizer.beta2"])
    cls = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[kind]
    return cls(parameters, lr=lr, betas=betas, eps=c["optimizer.eps"],
               weight_decay=wd, foreach=False)


def torch_losses(model, inputs, labels=None, config=None, steps=5):
    """Trains a deep copy of `model` for `steps` steps on the same batch,
    as epl-run does (its optimizer.* keys, the learning rate's schedule
    included), and returns the loss before each step's update."""
    import copy
    import math

    import torch

    model = copy.deepcopy(model)
    optimizer = make_optimizer(model.parameters(), config)
    c = Config(config or {})
    schedule, decay = c["optimizer.lr_schedule"], c["optimizer.decay_steps"]
    if schedule not in ("constant", "cosine"):
        raise ConfigError(f"torch_losses does not know optimizer.lr_schedule={schedule!r}")
    if (schedule == "cosine") != (decay > 0):
        raise ConfigError("optimizer.decay_steps (a positive number of steps) goes with "
                          "optimizer.lr_schedule = \"cosine\", and only with it")
    base = [group["lr"] for group in optimizer.param_groups]
    args = [torch.as_tensor(v) for v in {**inputs, **(labels or {})}.values()]
    losses = []
    for t in range(steps):
        if schedule == "cosine":
            # lr * (1 + cos(pi * min(t, T) / T)) / 2 at step t (docs/training.md).
            for group, lr in zip(optimizer.param_groups, base):
                group["lr"] = lr * (1 + math.cos(math.pi * min(t, decay) / decay)) / 2
        optimizer.zero_grad()
        loss = model(*args)
        losses.append(float(loss.detach()))
        loss.backward()
        optimizer.step()
    return losses


def load_model_file(path, entry="epl_model"):
    """Runs a Python file and calls its `entry()`, which returns export()'s
    keyword arguments: {"model", "inputs", "labels", "strategy", "config"}."""
    spec = importlib.util.spec_from_file_location("_epl_torch_model", path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.pop(0)
    if not hasattr(mod, entry):
        raise ExportError(f"{path} defines no function {entry}() returning "
                          "{'model': ..., 'inputs': {...}, 'labels': {...}}")
    return getattr(mod, entry)()


def _key_value(text):
    key, eq, value = text.partition("=")
    if not eq:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


def _config_from_text(value):
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m epl.torch",
        description="Exports a PyTorch model to EPL-MLIR's L0 form through "
                    "torch-mlir: PREFIX.mlir, PREFIX.params.safetensors, "
                    "PREFIX.data.safetensors.")
    parser.add_argument("file", help="a Python file whose epl_model() returns "
                        "{'model': nn.Module, 'inputs': {...}, 'labels': {...}, "
                        "'strategy': {...}, 'config': {...}, 'batch_dims': {...}} "
                        "(FILE:FUNC names "
                        "another function)")
    parser.add_argument("-o", "--output", required=True, help="output prefix")
    parser.add_argument("--strategy", action="append", type=_key_value, default=[],
                        metavar="PATTERN=STRATEGY",
                        help="e.g. 'fc3=split(2)', '*=replicate(1)' (repeatable; "
                             "replaces the file's strategy)")
    parser.add_argument("--config", action="append", type=_key_value, default=[],
                        metavar="KEY=VALUE",
                        help="an epl.config key, e.g. optimizer.lr=0.1 (repeatable; "
                             "added to the file's config)")
    parser.add_argument("--torch-losses", type=int, default=0, metavar="STEPS",
                        help="also train the model in PyTorch for STEPS steps with "
                             "the config's optimizer and write PREFIX.losses.json")
    args = parser.parse_args(argv)

    path, _, entry = args.file.partition(":")
    try:
        spec = dict(load_model_file(path, entry or "epl_model"))
        if args.strategy:
            spec["strategy"] = {k: parse_strategy(v) for k, v in args.strategy}
        if args.config:
            spec["config"] = {**(spec.get("config") or {}),
                              **{k: _config_from_text(v) for k, v in args.config}}
        exported = export(spec["model"], spec["inputs"], spec.get("labels"),
                          strategy=spec.get("strategy"), config=spec.get("config"),
                          batch_dims=spec.get("batch_dims"))
        for p in exported.save(args.output):
            print(p)
        if args.torch_losses:
            losses = torch_losses(spec["model"], spec["inputs"], spec.get("labels"),
                                  spec.get("config"), args.torch_losses)
            with open(args.output + ".losses.json", "w") as f:
                json.dump({"config": spec.get("config") or {}, "losses": losses}, f,
                          indent=1)
            print(args.output + ".losses.json")
    except ToolError as e:  # epl-run refused the exported module (its config)
        parser.exit(1, f"epl.torch: error: {e}\n")
    except EPLError as e:
        message = str(e)
        # Raised below this command's own call: the model's file is the
        # user's line, not runpy's (frozen from Python 3.11).
        suffix = f" (at {e.location})"
        if (e.location.startswith("<") or "runpy" in e.location) and \
                message.endswith(suffix):
            message = message[:-len(suffix)] + f" (in {path}, {entry or 'epl_model'}())"
        parser.exit(1, f"epl.torch: error: {message}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
