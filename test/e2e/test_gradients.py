"""Gradient checks: for every family of ops epl-autodiff differentiates, the
gradients it builds equal float64 central finite differences of the forward
program, along random directions of all parameters at once.

The gradients come from `epl-opt --epl-autodiff` (the step's gradients are
its results) run by epl-run; the finite differences from the untouched L0 model run by
`epl-run --no-train` on perturbed parameters.
"""

import math
import re
import zlib

import numpy as np
import pytest

from conftest import BUILD, ROOT, epl_run, run
from epl import nn, safetensors
from epl.graph import Graph

EPS = 1e-6
RTOL = 1e-6


def gradients_of(tmp_path, text, params, data=None):
    """epl-autodiff's gradients of the L0 model `text` (written to
    tmp_path/model.mlir) at `params` and `data`, in the order of `params`."""
    (tmp_path / "model.mlir").write_text(text)
    step = tmp_path / "step.mlir"
    run([BUILD / "bin" / "epl-opt", tmp_path / "model.mlir", "--epl-autodiff", "-o", step])
    safetensors.save(tmp_path / "p.safetensors", params)
    feed = ()
    if data is not None:
        safetensors.save(tmp_path / "d.safetensors", data)
        feed = ("--data", tmp_path / "d.safetensors")
    out = tmp_path / "grads.safetensors"
    epl_run(step, "--params", tmp_path / "p.safetensors", *feed, "--dump-results", out)
    results = safetensors.load(out)
    return [results[f"result{i + 1}"] for i in range(len(params))]


def check_gradients(tmp_path, graph, params, data, directions=2, seed=0):
    model = tmp_path / "model.mlir"
    names = list(params)
    grads = dict(zip(names, gradients_of(
        tmp_path, graph if isinstance(graph, str) else graph.to_mlir(), params, data)))
    assert all(np.isfinite(g).all() for g in grads.values())

    def loss_at(shifted):
        safetensors.save(tmp_path / "shifted.safetensors", shifted)
        dump = tmp_path / "loss.safetensors"
        epl_run(model, "--no-train", "--params", tmp_path / "shifted.safetensors",
                "--data", tmp_path / "d.safetensors", "--dump-results", dump)
        return float(safetensors.load(dump)["result0"])

    rng = np.random.default_rng(seed)
    for _ in range(directions):
        v = {n: rng.standard_normal(p.shape) for n, p in params.items()}
        plus = {n: params[n] + EPS * v[n] for n in names}
        minus = {n: params[n] - EPS * v[n] for n in names}
        numeric = (loss_at(plus) - loss_at(minus)) / (2 * EPS)
        analytic = sum(float((grads[n] * v[n]).sum()) for n in names)
        assert analytic == pytest.approx(numeric, rel=RTOL, abs=1e-9), (
            f"directional derivative {analytic} vs finite differences {numeric}")
    return grads


def rand(rng, *shape, scale=1.0):
    return rng.standard_normal(shape) * scale


# Each family: (build(graph, params) -> loss, parameter shapes, inputs).
def fam_matmul(g, p):
    x = g.input("x", (3, 4))
    return nn.sum(nn.sum(nn.tanh(x @ p["w"]) * 1.5, 1), 0)


def fam_transposed_matmul(g, p):
    x = g.input("x", (3, 4))
    wt = g.transpose(p["w"], (1, 0))            # w is (5, 4): x @ w^T
    return nn.sum(nn.sum(nn.tanh(x @ wt), 1), 0)


def fam_batched_matmul(g, p):
    a = g.input("x", (2, 3, 4))
    return nn.mean(nn.tanh(a @ p["w"]))         # w is (2, 4, 5)


def fam_elementwise(g, p):
    a, b = p["a"], p["b"]
    y = nn.exp(a * 0.3) + nn.log(b * b + 1.0) - a / (b * b + 2.0)
    y = y + nn.sqrt(b * b + 0.5) * nn.rsqrt(a * a + 1.0) + nn.erf(a) - (-b)
    return nn.mean(nn.relu(y) + nn.tanh(y) * 0.5)


def fam_broadcast(g, p):
    x = g.input("x", (3, 4))
    return nn.mean(nn.tanh(x * p["row"] + p["col"]))   # (4,) and (3, 1)


def fam_gelu(g, p):
    return nn.mean(nn.gelu(p["a"]) * nn.gelu(p["a"] * 0.7, approximate="tanh"))


def fam_reductions(g, p):
    a = p["a"]
    return nn.sum(nn.amax(a, 1), 0) + nn.mean(g.reduce(a, 0, "min")) + nn.mean(a * a)


def fam_softmax_cross_entropy(g, p):
    x = g.input("x", (4, 6))
    y = g.label("y", (4, 3))
    logits = x @ p["w"]
    probs = nn.softmax(logits, -1)
    return nn.cross_entropy(logits, y) + nn.mean(probs * probs)


def fam_layer_norm(g, p):
    x = g.input("x", (3, 8))
    return nn.mean(nn.tanh(nn.layer_norm(x * p["scale"], p["g"], p["b"])))


def fam_shapes(g, p):
    a = p["a"]                                              # (2, 6)
    flat = g.reshape(a, (12,))
    square = g.reshape(flat, (3, 4))
    part = g.slice(square, (1, 0), (2, 3))
    both = g.concat([part, g.transpose(g.slice(square, (0, 1), (3, 2)), (1, 0))], 0)
    placed = g.insert(nn.tanh(both), g.full((6, 5), 0.5, "f64"), (1, 1))
    return nn.mean(placed * placed)


def fam_embedding_attention(g, p):
    ids = g.input("ids", (2, 5), dtype="i64")
    x = nn.embedding(ids, p["table"])                      # (2, 5, 8)
    h = nn.attention(x, p["wq"], p["wk"], p["wv"], p["wo"], 2, bq=p["bq"])
    return nn.mean(nn.tanh(h))


FAMILIES = {
    "matmul": (fam_matmul, {"w": (4, 5)}, {"x": (3, 4)}),
    "transposed_matmul": (fam_transposed_matmul, {"w": (5, 4)}, {"x": (3, 4)}),
    "batched_matmul": (fam_batched_matmul, {"w": (2, 4, 5)}, {"x": (2, 3, 4)}),
    "elementwise": (fam_elementwise, {"a": (3, 4), "b": (3, 4)}, {}),
    "broadcast": (fam_broadcast, {"row": (4,), "col": (3, 1)}, {"x": (3, 4)}),
    "gelu": (fam_gelu, {"a": (3, 5)}, {}),
    "reductions": (fam_reductions, {"a": (4, 5)}, {}),
    "softmax_cross_entropy": (fam_softmax_cross_entropy, {"w": (6, 3)},
                              {"x": (4, 6), "y": None}),
    "layer_norm": (fam_layer_norm, {"scale": (8,), "g": (8,), "b": (8,)}, {"x": (3, 8)}),
    "reshape_slice_concat_insert": (fam_shapes, {"a": (2, 6)}, {}),
    "embedding_attention": (fam_embedding_attention,
                            {"table": (7, 8), "wq": (8, 8), "wk": (8, 8), "wv": (8, 8),
                             "wo": (8, 8), "bq": (8,)}, {"ids": None}),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_gradient_equals_finite_differences(tmp_path, family):
    build, param_shapes, input_shapes = FAMILIES[family]
    # A stable seed per family (hash() of a str changes per process).
    rng = np.random.default_rng(zlib.crc32(family.encode()))
    g = Graph(family, dtype="f64")
    params = {n: rand(rng, *s, scale=0.7) for n, s in param_shapes.items()}
    p = {n: g.param(n, s) for n, s in param_shapes.items()}
    g.set_loss(build(g, p))
    data = {}
    for arg in g.args:
        if arg["kind"] == "param":
            continue
        if arg["dtype"] == "i64":
            data[arg["name"]] = rng.integers(0, 7, arg["shape"]).astype(np.int64)
        elif arg["kind"] == "label":
            rows, classes = arg["shape"]
            data[arg["name"]] = np.eye(classes)[rng.integers(0, classes, rows)]
        else:
            data[arg["name"]] = rand(rng, *arg["shape"])
    check_gradients(tmp_path, g, params, data)


def test_named_linalg_ops(tmp_path):
    """examples/mlp.mlir as written (linalg.matmul, add, broadcast, max,
    fill, generic reductions), in f64."""
    text = (ROOT / "examples" / "mlp.mlir").read_text()
    text = text.replace("0xFF800000 : f32", "0xFFF0000000000000 : f64")
    text = text.replace("f32", "f64")
    text = text.replace("tensor<32x784x", "tensor<4x784x").replace("tensor<32x", "tensor<4x")
    text = text.replace("tensor<32xf64>", "tensor<4xf64>").replace("32.0 : f64", "4.0 : f64")
    rng = np.random.default_rng(1)
    params = {"w1": rand(rng, 784, 512, scale=0.04), "b1": rand(rng, 512, scale=0.1),
              "w2": rand(rng, 512, 10, scale=0.05)}
    data = {"x": rand(rng, 4, 784), "y": np.eye(10)[rng.integers(0, 10, 4)]}
    check_gradients(tmp_path, text, params, data)


@pytest.mark.parametrize("combine", [
    "%c = arith.cmpf ogt, %h, %acc : f64\n      %r = arith.select %c, %h, %acc : f64",
    "%c = arith.cmpf olt, %acc, %h : f64\n      %r = arith.select %c, %h, %acc : f64",
    "%c = arith.cmpf ugt, %acc, %h : f64\n      %r = arith.select %c, %acc, %h : f64",
    "%c = arith.cmpf olt, %h, %acc : f64\n      %r = arith.select %c, %h, %acc : f64",
])
def test_max_and_min_reductions_written_as_selects(tmp_path, combine):
    """A row max (or min) written as a compare and a select, as PyTorch's
    argmax body is, differentiates as arith.maximumf's (it was "its body
    must combine the accumulator with one value")."""
    init = "0xFFF0000000000000" if "olt, %h" not in combine else "0x7FF0000000000000"
    text = f"""
func.func @model(%x: tensor<4x5xf64> {{epl.arg = "input", epl.name = "x"}},
                 %w: tensor<5xf64> {{epl.arg = "param", epl.name = "w"}}) -> tensor<f64> {{
  %inf = arith.constant {init} : f64
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4xf64>
  %f = linalg.fill ins(%inf : f64) outs(%e : tensor<4xf64>) -> tensor<4xf64>
  %m = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                                       affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}}
      ins(%x, %w : tensor<4x5xf64>, tensor<5xf64>) outs(%f : tensor<4xf64>) {{
    ^bb0(%a: f64, %b: f64, %acc: f64):
      %h = arith.mulf %a, %b : f64
      {combine}
      linalg.yield %r : f64
  }} -> tensor<4xf64>
  %es = tensor.empty() : tensor<f64>
  %z = linalg.fill ins(%zero : f64) outs(%es : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                       iterator_types = ["reduction"]}}
      ins(%m : tensor<4xf64>) outs(%z : tensor<f64>) {{
    ^bb0(%v: f64, %acc: f64):
      %sq = arith.mulf %v, %v : f64
      %s = arith.addf %acc, %sq : f64
      linalg.yield %s : f64
  }} -> tensor<f64>
  return %l : tensor<f64>
}}
"""
    rng = np.random.default_rng(3)
    check_gradients(tmp_path, text, {"w": rand(rng, 5)}, {"x": rand(rng, 4, 5)})


@pytest.mark.parametrize("unused", [False, True])
def test_a_generic_of_two_independent_results(tmp_path, unused):
    """A layer norm whose sum and sum of squares are one generic of two
    results (what --linalg-fuse-elementwise-ops makes of two reductions
    over one input) is differentiated as the two reductions it fuses (it
    was "cannot differentiate a linalg.generic with 2 results"), also
    beside a third result nobody reads (dropped, then split)."""
    text = """
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @model(%x: tensor<4x6xf64> {epl.arg = "input", epl.name = "x"},
                 %w: tensor<6x6xf64> {epl.arg = "param", epl.name = "w"}) -> tensor<f64> {
  %zero = arith.constant 0.0 : f64
  %n = arith.constant 6.0 : f64
  %eps = arith.constant 1.0e-5 : f64
  %e = tensor.empty() : tensor<4x6xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<4x6xf64>) -> tensor<4x6xf64>
  %h = linalg.matmul ins(%x, %w : tensor<4x6xf64>, tensor<6x6xf64>) outs(%f : tensor<4x6xf64>) -> tensor<4x6xf64>
  %er = tensor.empty() : tensor<4xf64>
  %fr = linalg.fill ins(%zero : f64) outs(%er : tensor<4xf64>) -> tensor<4xf64>
  %st:2 = linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x6xf64>) outs(%fr, %fr : tensor<4xf64>, tensor<4xf64>) {
  ^bb0(%a: f64, %s1: f64, %s2: f64):
    %n1 = arith.addf %s1, %a : f64
    %a2 = arith.mulf %a, %a : f64
    %n2 = arith.addf %s2, %a2 : f64
    linalg.yield %n1, %n2 : f64, f64
  } -> (tensor<4xf64>, tensor<4xf64>)
  %y = linalg.generic {indexing_maps = [#id2, #row, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h, %st#0, %st#1 : tensor<4x6xf64>, tensor<4xf64>, tensor<4xf64>) outs(%e : tensor<4x6xf64>) {
  ^bb0(%a: f64, %s1: f64, %s2: f64, %o: f64):
    %mu = arith.divf %s1, %n : f64
    %m2 = arith.divf %s2, %n : f64
    %mu2 = arith.mulf %mu, %mu : f64
    %var = arith.subf %m2, %mu2 : f64
    %ve = arith.addf %var, %eps : f64
    %rs = math.rsqrt %ve : f64
    %d = arith.subf %a, %mu : f64
    %r = arith.mulf %d, %rs : f64
    %t = math.tanh %r : f64
    linalg.yield %t : f64
  } -> tensor<4x6xf64>
  %es = tensor.empty() : tensor<f64>
  %z = linalg.fill ins(%zero : f64) outs(%es : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [#id2, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<4x6xf64>) outs(%z : tensor<f64>) {
  ^bb0(%v: f64, %acc: f64):
    %q = arith.mulf %v, %v : f64
    %s = arith.addf %acc, %q : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
"""
    if unused:
        two = text[text.index("  %st:2"):text.index("  %y = ")]
        text = text.replace(two, """  %st:3 = linalg.generic {indexing_maps = [#id2, #row, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x6xf64>) outs(%fr, %fr, %fr : tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) {
  ^bb0(%a: f64, %s1: f64, %s2: f64, %s3: f64):
    %n1 = arith.addf %s1, %a : f64
    %a2 = arith.mulf %a, %a : f64
    %n2 = arith.addf %s2, %a2 : f64
    %n3 = arith.addf %s3, %a2 : f64
    linalg.yield %n1, %n2, %n3 : f64, f64, f64
  } -> (tensor<4xf64>, tensor<4xf64>, tensor<4xf64>)
""")
    rng = np.random.default_rng(8)
    check_gradients(tmp_path, text, {"w": rand(rng, 6, 6, scale=0.5)}, {"x": rand(rng, 4, 6)})


@pytest.mark.parametrize("model,shapes", [
    ("conv-pool-f64.mlir", {"x": (2, 7, 7, 3), "w": (3, 3, 3, 4), "w2": (2, 2, 4, 5)}),
    ("depthwise-bn-f64.mlir", {"x": (2, 6, 6, 2), "w": (1, 1, 2, 3), "gamma": (3,),
                               "beta": (3,), "dw": (3, 3, 3)}),
])
def test_convolution_and_pooling(tmp_path, model, shapes):
    """Convolutions (stride 1 and 2, padding, dilation 2, depthwise), max,
    sum and global average pooling and batch normalization with batch
    statistics: the input gradients are transposed windows (docs/training.md)."""
    rng = np.random.default_rng(zlib.crc32(model.encode()))
    params = {n: rand(rng, *s, scale=0.7) for n, s in shapes.items()}
    check_gradients(tmp_path, (ROOT / "test" / "e2e" / "Inputs" / model).read_text(),
                    params, {}, directions=3)



def gradient_of_sum(tmp_path, body, b):
    """epl-autodiff's gradient, at `b`, of the sum over the elements x of
    the parameter `b` of the scalar %f that `body` computes from %x (the
    constants %zero, %one and %twenty at hand; T stands for the element
    type)."""
    t = {"float32": "f32", "float64": "f64"}[str(b.dtype)]
    n = b.size
    return gradients_of(tmp_path, f"""
func.func @model(%b: tensor<{n}x{t}> {{epl.arg = "param", epl.name = "b"}}) -> tensor<{t}> {{
  %zero = arith.constant 0.0 : {t}
  %one = arith.constant 1.0 : {t}
  %twenty = arith.constant 20.0 : {t}
  %init = tensor.empty() : tensor<{t}>
  %acc = linalg.fill ins(%zero : {t}) outs(%init : tensor<{t}>) -> tensor<{t}>
  %l = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                       iterator_types = ["reduction"]}}
      ins(%b : tensor<{n}x{t}>) outs(%acc : tensor<{t}>) {{
  ^bb0(%x: {t}, %a: {t}):
{body.replace(": T", ": " + t)}
    %sum = arith.addf %a, %f : {t}
    linalg.yield %sum : {t}
  }} -> tensor<{t}>
  return %l : tensor<{t}>
}}
""", {"b": b})[0]


def test_abs_has_sign_gradient_zero_at_zero(tmp_path):
    """|x|'s gradient is sign(x) with sign(0) = 0, as PyTorch's: an L1
    penalty on a zero-initialized bias got +1 there (the gradient of the
    bias lambda off after one step; finite differences cannot tell)."""
    got = gradient_of_sum(tmp_path, "    %f = math.absf %x : T",
                          np.array([0.0, 1.5, -2.0, -0.0]))
    np.testing.assert_array_equal(got, [0.0, 1.0, -1.0, 0.0])


def test_max_and_min_ties_are_pytorchs(tmp_path):
    """At a tie with a constant, max and min are relu's kink in either
    operand order (0 at 0); at a tie of two values that vary each takes
    half, as torch.maximum's. max(0, x) gave x the whole gradient at 0 (the
    second operand always won a tie), so a relu written with the constant
    first trained otherwise than PyTorch, and max(x, -x) had -1 at 0."""
    x = np.array([0.0, 1.5, -2.0], np.float32)
    got = gradient_of_sum(tmp_path, """
    %nx = arith.negf %x : T
    %m1 = arith.maximumf %zero, %x : T
    %m2 = arith.maxnumf %x, %zero : T
    %m3 = arith.minimumf %zero, %x : T
    %m4 = arith.minnumf %x, %zero : T
    %m5 = arith.maximumf %x, %nx : T
    %s1 = arith.addf %m1, %m2 : T
    %s2 = arith.addf %s1, %m3 : T
    %s3 = arith.addf %s2, %m4 : T
    %f = arith.addf %s3, %m5 : T""", x)
    # relu' twice + min(x, 0)' twice + |x|' (0.5 - 0.5 at 0).
    np.testing.assert_array_equal(got, [0.0, 1 + 1 + 0 + 0 + 1, 0 + 0 + 1 + 1 - 1])


def test_relu_on_tensors_and_fmax_are_pytorchs(tmp_path):
    """A relu written on tensors, max(b, dense<0.0>), is relu at 0 too (the
    zeros become an input of the generic, still a constant); maxnumf is
    torch.fmax: a tie goes to its first operand, and the value beside a NaN
    (its result) takes the gradient (neither did: NaN lost it)."""
    relu = """
func.func @model(%b: tensor<3xf32> {epl.arg = "param", epl.name = "b"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %zt = arith.constant dense<0.0> : tensor<3xf32>
  %m = arith.maximumf %b, %zt : tensor<3xf32>
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%m : tensor<3xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %a: f32):
    %s = arith.addf %a, %x : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}"""
    (got,) = gradients_of(tmp_path, relu, {"b": np.array([0.0, 1.5, -2.0], np.float32)})
    np.testing.assert_array_equal(got, [0.0, 1.0, 0.0])
    fmax = """
func.func @model(%a: tensor<3xf32> {epl.arg = "param", epl.name = "a"},
                 %b: tensor<3xf32> {epl.arg = "param", epl.name = "b"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                        affine_map<(d0) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%a, %b : tensor<3xf32>, tensor<3xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %s: f32):
    %m = arith.maxnumf %x, %y : f32
    %sum = arith.addf %s, %m : f32
    linalg.yield %sum : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}"""
    da, db = gradients_of(tmp_path, fmax, {"a": np.array([np.nan, 2.0, 1.0], np.float32),
                                           "b": np.array([1.0, np.nan, 1.0], np.float32)})
    np.testing.assert_array_equal(da, [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(db, [1.0, 0.0, 0.0])


#: sigmoid + softplus (threshold 20) + ELU + a guarded log, written as
#: torch-mlir writes them (a select over both branches).
OVERFLOWING = """
    %nx = arith.negf %x : T
    %enx = math.exp %nx : T
    %den = arith.addf %enx, %one : T
    %sigmoid = arith.divf %one, %den : T
    %ex = math.exp %x : T
    %lp = math.log1p %ex : T
    %big = arith.cmpf ogt, %x, %twenty : T
    %softplus = arith.select %big, %x, %lp : T
    %pos = arith.cmpf ogt, %x, %zero : T
    %em1 = arith.subf %ex, %one : T
    %elu = arith.select %pos, %x, %em1 : T
    %log = math.log %x : T
    %guarded = arith.select %pos, %log, %zero : T
    %s1 = arith.addf %sigmoid, %softplus : T
    %s2 = arith.addf %s1, %elu : T
    %f = arith.addf %s2, %guarded : T"""


def test_overflowed_partials_of_branches_not_taken_are_no_nan(tmp_path):
    """sigmoid's exp(-x) at x = -100 and softplus's and ELU's exp(x) at
    x = 100 overflow to inf; the select (softplus, ELU) or the division
    (sigmoid) gives them a zero adjoint, and 0 * inf made every gradient
    NaN after one step. The gradients are PyTorch's formulas: s(1 - s),
    sigmoid(x) below the threshold and 1 above, exp(x) or 1, 1/x or 0."""
    x = np.array([-100.0, 100.0, -0.5, 0.5, 30.0, 0.0], np.float32)
    got = gradient_of_sum(tmp_path, OVERFLOWING, x)
    x64 = x.astype(np.float64)
    s = 1 / (1 + np.exp(-x64))
    with np.errstate(divide="ignore"):
        expected = (s * (1 - s) + np.where(x64 > 20, 1, s) + np.where(x64 > 0, 1, np.exp(x64))
                    + np.where(x64 > 0, 1 / x64, 0))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-30)


def test_sigmoid_derivative_is_taken_from_its_value(tmp_path):
    """d/dx -log(1 - sigmoid(x)) = sigmoid(x). Through exp(-x) the chain
    rule gave 0.944 at x = 16: the log divides by the rounded 1 - s, which
    the exact exp(-x) / (1 + exp(-x))^2 does not cancel. Taken as s (1 - s)
    of the forward's s, as PyTorch's backward does, it is s."""
    x = np.array([16.0, 12.0, 10.0, -3.0], np.float32)
    # -log(1 - sigmoid(x)), sigmoid as torch-mlir writes it.
    got = gradient_of_sum(tmp_path, """
    %nx = arith.negf %x : T
    %e = math.exp %nx : T
    %den = arith.addf %e, %one : T
    %s = arith.divf %one, %den : T
    %q = arith.subf %one, %s : T
    %log = math.log %q : T
    %f = arith.negf %log : T""", x)
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-6)

