"""Tracing tensor programs into EPL's L0 MLIR.

A `Graph` records operations on `Tensor`s as upstream linalg / tensor / arith
/ math ops and prints a module in the L0 contract: one function whose
arguments are tagged `epl.arg` ("param", "input", "label", "state"),
returning a scalar loss, then the next values of the model's state (batch
norm's running statistics). Element-wise and reduction ops are `linalg.generic`s built
from indexing maps, so every op is one general construct the compiler's
passes (autodiff, sharding) handle uniformly.

    g = Graph()
    x = g.input("x", (32, 784))
    y = g.label("y", (32, 10))
    w = g.param("w", (784, 10))
    g.set_loss(cross_entropy(x @ w, y))
    print(g.to_mlir())

The EPL-style API (`epl.replicate`, `epl.split`, `epl.Config`) builds on this.
"""

import itertools
import math
import numbers
import operator

from . import strategy
from .errors import (PLAIN_NAME, DTypeError, ShapeError, plain_name, user_frame,
                     user_location)

# The element types of the model's inputs, labels and parameters: floats,
# and integers for ids (Embedding, one_hot).
_ARG_TYPES = ("f32", "f64", "i32", "i64")
_DIMS = "ijklmnop"


def _common_shape(a, b):
    """The coarsest shape that both `a` and `b` refine (each of its
    dimensions the product of consecutive dimensions of either), and the
    reassociation groups of `a` and of `b` into it: groups end where the
    running products of both shapes meet. Size-1 dimensions join the group
    before them (the first group if they lead)."""
    ends = set(itertools.accumulate(a, operator.mul)) & \
        set(itertools.accumulate(b, operator.mul))

    def groups(shape):
        out, group, product = [], [], 1
        for i, size in enumerate(shape):
            group.append(i)
            product *= size
            last_of_run = i + 1 == len(shape) or shape[i + 1] != 1
            if product in ends and last_of_run:
                out.append(group)
                group = []
        return out  # the last dimension always ends a group

    groups_a, groups_b = groups(a), groups(b)
    common = tuple(math.prod(a[i] for i in g) for g in groups_a)
    return common, groups_a, groups_b


def _groups(groups):
    return "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"


def _tensor_type(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def _map(dims, results):
    return f"affine_map<({', '.join(dims)}) -> ({', '.join(results)})>"


def _float(value, dtype="f32"):
    value = float(value)
    if math.isinf(value) or math.isnan(value):
        # MLIR spells special values as bit patterns.
        bits = {("f32", True): "0x7F800000", ("f32", False): "0xFF800000",
                ("f64", True): "0x7FF0000000000000",
                ("f64", False): "0xFFF0000000000000"}
        if math.isnan(value):
            return "0x7FC00000" if dtype == "f32" else "0x7FF8000000000000"
        return bits[(dtype, value > 0)]
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:  # MLIR wants a fraction: 1.0e-05, 2.0
        mantissa += ".0"
    text = mantissa + ("e" + exponent if exponent else "")
    return text


class Tensor:
    """A value of the traced program."""

    def __init__(self, graph, ssa, shape, dtype):
        self.graph, self.ssa, self.shape, self.dtype = graph, ssa, tuple(shape), dtype

    # numpy's operators give way to the tensor's: `array + x` is
    # x.__radd__(array), which says what to do with the array, instead of
    # an object array of one op per element.
    __array_ufunc__ = None

    @property
    def type(self):
        return _tensor_type(self.shape, self.dtype)

    @property
    def rank(self):
        return len(self.shape)

    def __repr__(self):
        return f"Tensor({self.ssa}: {self.type})"

    # Arithmetic, with numpy-style broadcasting of trailing dimensions.
    def __add__(self, other):
        return self.graph.binary("arith.addf", self, other)

    def __radd__(self, other):
        return self.graph.binary("arith.addf", other, self)

    def __sub__(self, other):
        return self.graph.binary("arith.subf", self, other)

    def __rsub__(self, other):
        return self.graph.binary("arith.subf", other, self)

    def __mul__(self, other):
        return self.graph.binary("arith.mulf", self, other)

    def __rmul__(self, other):
        return self.graph.binary("arith.mulf", other, self)

    def __truediv__(self, other):
        return self.graph.binary("arith.divf", self, other)

    def __rtruediv__(self, other):
        return self.graph.binary("arith.divf", other, self)

    def __neg__(self):
        return self.graph.unary(lambda b, x: b.op("arith.negf", x), self)

    def __matmul__(self, other):
        return self.graph.matmul(self, other)


class _Body:
    """Builds the scalar body of a linalg.generic."""

    def __init__(self, dtype):
        self.dtype, self.lines, self.count = dtype, [], 0

    def _fresh(self):
        self.count += 1
        return f"%s{self.count}"

    def op(self, name, *operands):
        result = self._fresh()
        self.lines.append(f"{result} = {name} {', '.join(operands)} : {self.dtype}")
        return result

    def const(self, value):
        result = self._fresh()
        self.lines.append(
            f"{result} = arith.constant {_float(value, self.dtype)} : {self.dtype}")
        return result

    def raw(self, text):
        """`text` uses {r} for the result name; returns the result."""
        result = self._fresh()
        self.lines.append(text.replace("{r}", result))
        return result


class Graph:
    """Records a program; `to_mlir` prints it as an L0 module."""

    def __init__(self, name="model", dtype="f32"):
        self.name, self.dtype = name, dtype
        self.args, self.lines = [], []
        self._ids = itertools.count()
        self.loss = None
        # (state argument, its next value), in the order they were set.
        self.state_updates = []
        self.config = {}
        self._param_names = set()
        # The line defining each SSA value the graph emitted.
        self._defs = {}
        # Set by epl.init, which starts the next model: this one takes no
        # more ops (its tensors in the next model's ops printed names that
        # model does not define: an MLIR parse error in a temporary file).
        self.closed = False
        # Arguments epl.checkpoint marked (always kept anyway), with where;
        # whether it marked an op.
        self.marked_args = []
        self.marks_ops = False

    def _own(self, *values):
        """Checks that the tensors among `values` are this model's, and
        that this model is still being described."""
        if self.closed or any(isinstance(v, Tensor) and v.graph is not self
                              for v in values):
            raise ShapeError(
                "a tensor of an earlier model (described before the last "
                "epl.init()) is used in this one: describe the model again "
                "after epl.init()")

    # -- arguments -----------------------------------------------------------

    def _arg(self, kind, name, shape, dtype, init=None):
        # Checked here, where the user's line is known: the printed module
        # would otherwise fail to parse in a temporary file of epl-opt's.
        if not plain_name(name):
            raise ShapeError(f"the {kind} name {name!r} must be {PLAIN_NAME}")
        if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__") or any(
                isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1
                for d in shape):
            raise ShapeError(f"the shape of {kind} '{name}' must be a sequence of "
                             f"positive integers, not {shape!r}")
        shape = tuple(int(d) for d in shape)
        if dtype not in _ARG_TYPES:
            raise DTypeError(f"the {kind} '{name}' has the element type {dtype!r}; "
                             f"the model's take {', '.join(map(repr, _ARG_TYPES))}")
        if any(a["name"] == name for a in self.args):
            raise ShapeError(f"two tensors of the model are called '{name}'")
        ssa = f"%arg{len(self.args)}"
        attrs = f'epl.arg = "{kind}", epl.name = "{name}"'
        if init:
            attrs += f', epl.init = "{init}"'
        self.args.append({"name": name, "ssa": ssa, "shape": tuple(shape),
                          "dtype": dtype, "attrs": attrs, "kind": kind,
                          "loc": _user_loc()})
        return Tensor(self, ssa, shape, dtype)

    def param(self, name, shape, init=None, dtype=None):
        return self._arg("param", name, shape, dtype or self.dtype, init)

    def input(self, name, shape, dtype=None):
        return self._arg("input", name, shape, dtype or self.dtype)

    def label(self, name, shape, dtype=None):
        return self._arg("label", name, shape, dtype or self.dtype)

    def state(self, name, shape, init=None, dtype=None):
        """Model state that is not trained (batch norm's running
        statistics): read by the step, given its next value with
        `update_state`, carried from step to step and saved like a
        parameter."""
        return self._arg("state", name, shape, dtype or self.dtype, init)

    def update_state(self, state, value):
        """`value` is `state`'s value in the next step (the step returns
        it as an `epl.result = "state"`)."""
        arg = next((a for a in self.args if a["ssa"] == state.ssa), None)
        if state.graph is not self or arg is None or arg["kind"] != "state":
            raise ShapeError("update_state takes a state argument of this model "
                             "(Graph.state)")
        if value.graph is not self or value.shape != state.shape or \
                value.dtype != state.dtype:
            raise ShapeError(f"state '{arg['name']}' is {state.type}; its next value "
                             f"cannot be {value.type}")
        if any(s.ssa == state.ssa for s, _ in self.state_updates):
            raise ShapeError(f"state '{arg['name']}' is updated twice in one step")
        self.state_updates.append((state, value))

    # -- emission ------------------------------------------------------------

    def _fresh(self):
        return f"%v{next(self._ids)}"

    def _scope_attr(self):
        scope = strategy.current()
        if scope:
            scope.has_ops = True
        return f"epl.scope = {scope.attribute}" if scope else None

    def scope_dict(self):
        """` {epl.scope = ...}` for ops printed with a trailing attribute
        dictionary (reshapes, slices, concatenations, softmax), so that
        they stay in the user's scope and pipeline stage; "" outside."""
        attr = self._scope_attr()
        return f" {{{attr}}}" if attr else ""

    def emit(self, text, shape, dtype=None):
        """Appends `text` (with {r} for the result) and returns its value.
        The op (the last in `text`) is located at the user's line, so that
        the tools' errors name it rather than a line of the module."""
        self._own()
        ssa = self._fresh()
        self._defs[ssa] = len(self.lines)
        self.lines.append(text.replace("{r}", ssa) + _user_loc())
        return Tensor(self, ssa, shape, dtype or self.dtype)

    def checkpoint(self, x):
        """Marks the op making `x` with `epl.checkpoint`: with
        gradient_checkpoint.type = "collection" the backward keeps it and
        recomputes what else it reads. Arguments are always kept: marking
        one does nothing (a block boundary that is the model's input), but
        is remembered, so that a model marking only arguments is told so
        (to_mlir) rather than refused as marking nothing."""
        arg = next((a for a in self.args if a["ssa"] == x.ssa), None)
        if arg is not None:
            if all(a is not arg for a, _ in self.marked_args):
                self.marked_args.append((arg, user_location()))
            return x
        index = self._defs.get(x.ssa)
        if index is None:
            return x
        line = self.lines[index]
        head, _, rest = line.partition("\n")
        if "epl.checkpoint" in head:
            return x
        if " = linalg.generic " in head:
            if " attrs = {" in head:
                head = head.replace(" attrs = {", " attrs = {epl.checkpoint, ", 1)
            else:
                head = head[:-len(" {")] + " attrs = {epl.checkpoint} {"
        elif " = linalg.fill" in head or " = linalg.softmax" in head:
            # Attributes right after the op's name.
            op = "linalg.fill" if " = linalg.fill" in head else "linalg.softmax"
            head = (head.replace(op + " {", op + " {epl.checkpoint, ", 1)
                    if op + " {" in head else
                    head.replace(op, op + " {epl.checkpoint}", 1))
        elif "{epl.scope" in head:
            head = head.replace("{epl.scope", "{epl.checkpoint, epl.scope", 1)
        else:
            # Reshapes, slices and concatenations print attributes before
            # their first type.
            head = head.replace(" : ", " {epl.checkpoint} : ", 1)
        self.lines[index] = head + ("\n" + rest if rest else "")
        self.marks_ops = True
        return x

    def empty(self, shape, dtype=None):
        dtype = dtype or self.dtype
        return self.emit(f"{{r}} = tensor.empty() : {_tensor_type(shape, dtype)}",
                         shape, dtype)

    def full(self, shape, value, dtype=None):
        dtype = dtype or self.dtype
        init = self.empty(shape, dtype)
        c = self.emit(f"{{r}} = arith.constant {_float(value, dtype)} : {dtype}",
                      (), dtype)
        attrs = f" {{{self._scope_attr()}}}" if self._scope_attr() else ""
        return self.emit(f"{{r}} = linalg.fill{attrs} ins({c.ssa} : {dtype}) "
                         f"outs({init.ssa} : {init.type}) -> {init.type}", shape, dtype)

    def constant(self, value, dtype=None):
        """A rank-0 tensor constant."""
        dtype = dtype or self.dtype
        return self.emit(f"{{r}} = arith.constant dense<{_float(value, dtype)}> : "
                         f"tensor<{dtype}>", (), dtype)

    def generic(self, inputs, out_shape, in_maps, out_map, iterators, body,
                init=None, out_dtype=None, integer_inputs=False):
        """A linalg.generic over loops named by `iterators` (a list of
        "parallel"/"reduction"); maps are lists of loop names per operand.
        `body(b, *scalars)` returns the scalar to yield; with reductions the
        last scalar is the accumulator. A float body reads integer inputs
        only where it says so (`integer_inputs`: one_hot compares ids)."""
        dtype = out_dtype or self.dtype
        self._own(*inputs, init)
        for t in inputs:
            if t.dtype.startswith("i") and dtype.startswith(("f", "bf")) \
                    and not integer_inputs:
                raise DTypeError(
                    f"an op computing in {dtype} is given an integer tensor "
                    f"({t.type}): arithmetic, matmul and Dense take float tensors; "
                    f"integer tensors are ids, for Embedding and one_hot")
        # The body computes in the result's type: a float operand of another
        # width would be an ill-typed body (the frontend has no casts).
        for t in inputs:
            if t.dtype.startswith(("f", "bf")) and dtype.startswith(("f", "bf")) \
                    and t.dtype != dtype:
                raise DTypeError(
                    f"an op mixes {t.dtype} and {dtype} tensors (the frontend "
                    f"converts no float type to another): give every float "
                    f"tensor the model's float type, {self.dtype} "
                    f"(epl.init(dtype=...) sets it)")
        if init is None:
            init = self.empty(out_shape, dtype)
        loops = [_DIMS[i] for i in range(len(iterators))]
        maps = [_map(loops, m) for m in in_maps] + [_map(loops, out_map)]
        b = _Body(dtype)
        args = [f"%a{i}" for i in range(len(inputs) + 1)]
        result = body(b, *args)
        block_args = ", ".join(f"{a}: {t.dtype}" for a, t in zip(args, inputs))
        block_args += (", " if inputs else "") + f"{args[-1]}: {dtype}"
        attrs = [f"indexing_maps = [{', '.join(maps)}]",
                 "iterator_types = [" + ", ".join(f'"{it}"' for it in iterators) + "]"]
        scope = f" attrs = {{{self._scope_attr()}}}" if self._scope_attr() else ""
        ins = ""
        if inputs:
            ins = (f" ins({', '.join(t.ssa for t in inputs)} : "
                   f"{', '.join(t.type for t in inputs)})")
        text = (f"{{r}} = linalg.generic {{{', '.join(attrs)}}}{ins} "
                f"outs({init.ssa} : {init.type}){scope} {{\n"
                f"    ^bb0({block_args}):\n"
                + "".join(f"      {line}\n" for line in b.lines)
                + f"      linalg.yield {result} : {dtype}\n"
                f"    }} -> {init.type}")
        return self.emit(text, out_shape, dtype)

    # -- element-wise --------------------------------------------------------

    def _as_tensor(self, value, dtype):
        if isinstance(value, Tensor):
            return value
        # A number (a numpy scalar or 0-d array too) becomes a scalar
        # constant; the graph holds no tensor constants.
        if not isinstance(value, numbers.Real) and getattr(value, "shape", None) != ():
            what = (f"a {type(value).__module__}.{type(value).__name__} of shape "
                    f"{tuple(value.shape)}" if hasattr(value, "shape") else
                    f"{value!r} (a {type(value).__name__})")
            raise ShapeError(f"{what} is neither a tensor of the model nor a number "
                             "(the model's only constants): give an array as "
                             "epl.input(...) (its values in train's `data`) or as "
                             "a parameter")
        return self.constant(value, dtype)

    def binary(self, op, lhs, rhs):
        dtype = (lhs if isinstance(lhs, Tensor) else rhs).dtype
        self._own(lhs, rhs)
        lhs, rhs = self._as_tensor(lhs, dtype), self._as_tensor(rhs, dtype)
        shape = broadcast_shapes(lhs.shape, rhs.shape)
        rank = len(shape)
        loops = [_DIMS[i] for i in range(rank)]

        def operand(t):
            # Trailing alignment; a broadcast dimension (size 1, or absent)
            # is dropped, so that every indexing map stays a projection.
            offset = rank - t.rank
            kept = [d for d in range(t.rank) if t.shape[d] == shape[offset + d]]
            if len(kept) != t.rank:
                t = self.reshape(t, [t.shape[d] for d in kept])
            return t, [loops[offset + d] for d in kept]

        (a, a_map), (b, b_map) = operand(lhs), operand(rhs)
        return self.generic([a, b], shape, [a_map, b_map], loops,
                            ["parallel"] * rank,
                            lambda bb, x, y, _: bb.op(op, x, y))

    def unary(self, fn, x):
        loops = [_DIMS[i] for i in range(x.rank)]
        return self.generic([x], x.shape, [loops], loops, ["parallel"] * x.rank,
                            lambda b, a, _: fn(b, a))

    # -- reductions ----------------------------------------------------------

    def reduce(self, x, axis, kind="sum", keepdims=False):
        axis = axis % x.rank
        loops = [_DIMS[i] for i in range(x.rank)]
        out_loops = [l for i, l in enumerate(loops) if i != axis]
        out_shape = [s for i, s in enumerate(x.shape) if i != axis]
        start = {"sum": 0.0, "max": -math.inf, "min": math.inf}[kind]
        init = self.full(out_shape, start, x.dtype)
        combine = {"sum": "arith.addf", "max": "arith.maximumf",
                   "min": "arith.minimumf"}[kind]
        iterators = ["reduction" if i == axis else "parallel" for i in range(x.rank)]
        r = self.generic([x], out_shape, [loops], out_loops, iterators,
                         lambda b, a, acc: b.op(combine, a, acc), init=init)
        return self.expand_dims(r, axis) if keepdims else r

    # -- shapes --------------------------------------------------------------

    def reshape(self, x, shape):
        shape = tuple(shape)
        if math.prod(shape) != math.prod(x.shape):
            raise ShapeError(f"cannot reshape a tensor of shape {x.shape} to {shape}: "
                             f"{math.prod(x.shape)} and {math.prod(shape)} elements")
        if shape == x.shape:
            return x
        # As one collapse and one expand through the coarsest shape both
        # refine, so that the dimensions they share stay dimensions (the
        # heads of [b, s, h*d] -> [b, s, h, d]) for sharding to follow.
        if not shape or not x.shape:  # to or from a scalar: no groups
            op = "collapse_shape" if not shape else "expand_shape"
            out = "" if not shape else f" output_shape [{', '.join(map(str, shape))}]"
            return self.emit(f"{{r}} = tensor.{op} {x.ssa} []{out}{self.scope_dict()} : {x.type} into "
                             f"{_tensor_type(shape, x.dtype)}", shape, x.dtype)
        common, src_groups, dst_groups = _common_shape(x.shape, shape)
        y = x
        if common != x.shape:
            y = self.emit(f"{{r}} = tensor.collapse_shape {y.ssa} {_groups(src_groups)}"
                          f"{self.scope_dict()} : "
                          f"{y.type} into {_tensor_type(common, x.dtype)}",
                          common, x.dtype)
        if common != shape:
            y = self.emit(f"{{r}} = tensor.expand_shape {y.ssa} {_groups(dst_groups)} "
                          f"output_shape [{', '.join(map(str, shape))}]{self.scope_dict()} : "
                          f"{y.type} into {_tensor_type(shape, x.dtype)}",
                          shape, x.dtype)
        return y

    def slice(self, x, offsets, sizes):
        """x[offsets[d] : offsets[d] + sizes[d]] along every dimension."""
        return self.emit(f"{{r}} = tensor.extract_slice {x.ssa}[{', '.join(map(str, offsets))}] "
                         f"[{', '.join(map(str, sizes))}] [{', '.join('1' for _ in sizes)}]"
                         f"{self.scope_dict()} : "
                         f"{x.type} to {_tensor_type(sizes, x.dtype)}", sizes, x.dtype)

    def insert(self, source, dest, offsets):
        """dest with `source` written at `offsets`."""
        sizes = ", ".join(map(str, source.shape))
        return self.emit(f"{{r}} = tensor.insert_slice {source.ssa} into {dest.ssa}"
                         f"[{', '.join(map(str, offsets))}] [{sizes}] "
                         f"[{', '.join('1' for _ in source.shape)}]{self.scope_dict()} : "
                         f"{source.type} into {dest.type}", dest.shape, dest.dtype)

    def concat(self, tensors, axis):
        axis = axis % tensors[0].rank
        shape = list(tensors[0].shape)
        shape[axis] = sum(t.shape[axis] for t in tensors)
        return self.emit(f"{{r}} = tensor.concat dim({axis}) "
                         f"{', '.join(t.ssa for t in tensors)}{self.scope_dict()} : "
                         f"({', '.join(t.type for t in tensors)}) -> "
                         f"{_tensor_type(shape, tensors[0].dtype)}", shape, tensors[0].dtype)

    def expand_dims(self, x, axis):
        shape = list(x.shape)
        shape.insert(axis, 1)
        return self.reshape(x, shape)

    def transpose(self, x, perm):
        loops = [_DIMS[i] for i in range(x.rank)]
        shape = [x.shape[p] for p in perm]
        return self.generic([x], shape, [loops], [loops[p] for p in perm],
                            ["parallel"] * x.rank, lambda b, a, _: a)

    # -- contractions --------------------------------------------------------

    def matmul(self, a, b):
        """a[..., m, k] @ b[k, n] or b[..., k, n] (same leading dims)."""
        self._own(a, b)
        if a.rank < 2 or b.rank < 2:
            raise ShapeError(f"cannot multiply tensors of shapes {a.shape} and "
                             f"{b.shape}: matmul takes matrices (rank 2 or more); "
                             f"reshape a vector to [1, n] or [n, 1]")
        if a.shape[-1] != b.shape[-2]:
            raise ShapeError(f"cannot multiply matrices of shapes {a.shape} and "
                             f"{b.shape}: inner sizes differ")
        batch = a.rank - 2
        if b.rank not in (2, a.rank) or (b.rank == a.rank and a.shape[:-2] != b.shape[:-2]):
            raise ShapeError(f"cannot multiply matrices of shapes {a.shape} and "
                             f"{b.shape}: batch dimensions differ")
        loops = [_DIMS[i] for i in range(batch + 3)]
        bl, m, n, k = loops[:batch], loops[batch], loops[batch + 1], loops[batch + 2]
        b_map = ([] if b.rank == 2 else bl) + [k, n]
        out_shape = list(a.shape[:-1]) + [b.shape[-1]]
        init = self.full(out_shape, 0.0, a.dtype)
        iterators = ["parallel"] * (batch + 2) + ["reduction"]
        return self.generic([a, b], out_shape, [bl + [m, k], b_map], bl + [m, n],
                            iterators,
                            lambda bb, x, y, acc: bb.op("arith.addf", acc,
                                                        bb.op("arith.mulf", x, y)),
                            init=init)

    # -- convolutions and pooling (NHWC) -------------------------------------

    def pad(self, x, low, high, value=0.0):
        """x padded by low[d] and high[d] elements of `value` per dimension."""
        shape = [s + lo + hi for s, lo, hi in zip(x.shape, low, high)]
        if shape == list(x.shape):
            return x
        c = self.emit(f"{{r}} = arith.constant {_float(value, x.dtype)} : {x.dtype}",
                      (), x.dtype)
        indices = ", ".join(f"%i{d}: index" for d in range(x.rank))
        return self.emit(
            f"{{r}} = tensor.pad {x.ssa} low[{', '.join(map(str, low))}] "
            f"high[{', '.join(map(str, high))}] {{\n"
            f"    ^bb0({indices}):\n"
            f"      tensor.yield {c.ssa} : {x.dtype}\n"
            f"    }}{self.scope_dict()} : {x.type} to {_tensor_type(shape, x.dtype)}",
            shape, x.dtype)

    def _window(self, x, window, strides, dilations, what):
        n, h, w, c = x.shape
        kh, kw = window
        oh = (h - dilations[0] * (kh - 1) - 1) // strides[0] + 1
        ow = (w - dilations[1] * (kw - 1) - 1) // strides[1] + 1
        if oh < 1 or ow < 1:
            raise ShapeError(f"{what}: a {kh}x{kw} window (dilation {dilations}) does not "
                             f"fit an input of {h}x{w}")
        return oh, ow

    @staticmethod
    def _window_attrs(strides, dilations):
        return (f"{{dilations = dense<[{dilations[0]}, {dilations[1]}]> : tensor<2xi64>, "
                f"strides = dense<[{strides[0]}, {strides[1]}]> : tensor<2xi64>}}")

    def conv2d(self, x, w, strides=(1, 1), dilations=(1, 1)):
        """linalg.conv_2d_nhwc_hwcf: x [n, h, w, c], w [kh, kw, c, f]."""
        self._own(x, w)
        if x.rank != 4 or w.rank != 4 or x.shape[3] != w.shape[2]:
            raise ShapeError(f"conv2d takes an NHWC input and an HWCF filter with the same "
                             f"channels, got {x.shape} and {w.shape}")
        oh, ow = self._window(x, w.shape[:2], strides, dilations, "conv2d")
        shape = (x.shape[0], oh, ow, w.shape[3])
        init = self.full(shape, 0.0, x.dtype)
        attrs = self._window_attrs(strides, dilations)
        scope = self._scope_attr()
        if scope:
            attrs = attrs[:-1] + f", {scope}}}"
        return self.emit(f"{{r}} = linalg.conv_2d_nhwc_hwcf {attrs} "
                         f"ins({x.ssa}, {w.ssa} : {x.type}, {w.type}) "
                         f"outs({init.ssa} : {init.type}) -> {init.type}", shape, x.dtype)

    def pool2d(self, x, window, strides, kind):
        """linalg.pooling_nhwc_max / _sum over `window`."""
        oh, ow = self._window(x, window, strides, (1, 1), f"{kind} pool")
        shape = (x.shape[0], oh, ow, x.shape[3])
        init = self.full(shape, -math.inf if kind == "max" else 0.0, x.dtype)
        win = self.empty(window, x.dtype)
        attrs = self._window_attrs(strides, (1, 1))
        scope = self._scope_attr()
        if scope:
            attrs = attrs[:-1] + f", {scope}}}"
        return self.emit(f"{{r}} = linalg.pooling_nhwc_{kind} {attrs} "
                         f"ins({x.ssa}, {win.ssa} : {x.type}, {win.type}) "
                         f"outs({init.ssa} : {init.type}) -> {init.type}", shape, x.dtype)

    # -- printing ------------------------------------------------------------

    def set_loss(self, loss):
        if loss.shape != ():
            raise ShapeError(f"the loss must be a scalar, not a tensor of shape {loss.shape}")
        self.loss = loss

    def to_mlir(self, outputs=()):
        """The L0 module: a function returning the loss, then the next
        values of the state it updates, then `outputs` (tensors of the
        model, e.g. the logits an evaluation scores)."""
        if self.loss is None:
            raise ShapeError("the model has no loss yet: call set_loss(loss)")
        for t in outputs:
            if not isinstance(t, Tensor) or t.graph is not self:
                raise ShapeError("an output must be a tensor of the current model")
        lines = []
        if self.config:
            items = ", ".join(f'"{k}" = {_config_value(v)}'
                              for k, v in self.config.items())
            lines.append(f"module attributes {{epl.config = {{{items}}}}} {{")
        else:
            lines.append("module {")
        # What a tool says of the module, its function, an argument or the
        # return is said at the user's line that made it (to_mlir's caller:
        # the line calling epl.train, epl.to_mlir, ...), not in the module
        # written to a temporary file.
        here = _user_loc()
        args = ",\n      ".join(f"{a['ssa']}: {_tensor_type(a['shape'], a['dtype'])} "
                                f"{{{a['attrs']}}}{a['loc']}" for a in self.args)
        results = [self.loss, *(v for _, v in self.state_updates), *outputs]
        types = ", ".join(t.type for t in results)
        names = {a["ssa"]: a["name"] for a in self.args}
        tagged = [self.loss.type] + [
            f'{v.type} {{epl.result = "state", epl.name = "{names[s.ssa]}"}}'
            for s, v in self.state_updates] + [t.type for t in outputs]
        signature = types if len(results) == 1 else f"({', '.join(tagged)})"
        lines.append(f"  func.func @{self.name}({args}) -> {signature} {{")
        for line in self.lines:
            lines.append("    " + line)
        lines.append(f"    return {', '.join(t.ssa for t in results)} : {types}{here}")
        lines.append("  }" + here)
        lines.append("}" + here)
        return "\n".join(lines) + "\n"


def _user_loc():
    """` loc("file.py":12:5)`: the user's line as an MLIR location."""
    frame = user_frame()
    if frame is None:
        return ""
    column = (getattr(frame, "colno", None) or 0) + 1
    return f" loc({_mlir_string(frame.filename)}:{frame.lineno}:{column})"


def _mlir_string(text):
    """`text` as an MLIR string literal: other characters as they are (a
    path under /home/josé), `"`, the backslash and control characters as
    two-hex-digit escapes, the kind MLIR's lexer reads; so is a byte of an
    undecodable file name (Python's surrogate escape)."""
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            code -= 0xDC00
        elif ch not in '"\\' and code >= 0x20 and code != 0x7F:
            out.append(ch)
            continue
        out.append(f"\\{code:02X}")
    return '"' + "".join(out) + '"'


def _config_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v} : i64"
    if isinstance(v, float):
        return f"{_float(v, 'f64')} : f64"  # 1e-08 is not MLIR: 1.0e-08
    return '"' + str(v) + '"'


def broadcast_shapes(a, b):
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ShapeError(f"shapes {a} and {b} do not broadcast")
        out.append(max(x, y))
    return tuple(out)
