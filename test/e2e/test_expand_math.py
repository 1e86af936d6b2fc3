"""epl-expand-math's f32 exp, expm1, log, log1p, log2, erf and tanh, run by
epl-run (in a linalg body, vectorized), against the exact value (numpy in
float64, rounded to f32): within a few ulp over the whole f32 range,
subnormal inputs and results included, and the special values (0, inf,
NaN) as libm gives them."""

import numpy as np
import pytest

from conftest import epl_run
from epl import safetensors

FUNCTIONS = {
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p,
    "log2": np.log2, "erf": None, "tanh": np.tanh,
}
# Upstream's approximations: a few ulp (erf's rational one more).
ULPS = {"erf": 16}
DEFAULT_ULPS = 4


def inputs():
    tiny = np.float32(np.finfo(np.float32).tiny)  # 2^-126
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, 1e-3,
              # subnormal inputs (log, log2, log1p)
              1e-45, 3e-45, 1e-40, 1e-39, float(tiny) / 2, float(tiny),
              float(np.nextafter(tiny, np.float32(1))),
              # exp's subnormal results and its ends
              -87.0, -87.3, -87.5, -88.0, -90.0, -95.0, -100.0, -103.0, -103.9, -104.0,
              -110.0, 88.0, 88.7, 88.8, 89.0,
              # large and negative arguments
              1e10, 3.4e38, -0.5, -0.999, 20.0, -20.0, 9.0, -9.0]
    rng = np.random.default_rng(0)
    values += list(np.exp(rng.uniform(-100, 88, 200)))                 # positive, wide
    values += list(rng.uniform(-110, 90, 200))                         # exp's domain
    return np.array(values, np.float32)


def module(n):
    outs = ", ".join(f"%o{i}: f32" for i in range(len(FUNCTIONS)))
    types = ", ".join(["tensor<%dxf32>" % n] * len(FUNCTIONS))
    maps = ", ".join(["#m"] * (len(FUNCTIONS) + 1))
    body = "\n".join(f"    %r{i} = math.{name} %a : f32" for i, name in enumerate(FUNCTIONS))
    yields = ", ".join(f"%r{i}" for i in range(len(FUNCTIONS)))
    inits = ", ".join(["%e"] * len(FUNCTIONS))
    results = ", ".join(f"%y#{i}" for i in range(len(FUNCTIONS)))
    return f"""#m = affine_map<(i) -> (i)>
func.func @main(%x: tensor<{n}xf32> {{epl.arg = "input", epl.name = "x"}}) -> ({types}) {{
  %e = tensor.empty() : tensor<{n}xf32>
  %y:{len(FUNCTIONS)} = linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel"]}}
      ins(%x : tensor<{n}xf32>) outs({inits} : {types}) {{
  ^bb0(%a: f32, {outs}):
{body}
    linalg.yield {yields} : {", ".join(["f32"] * len(FUNCTIONS))}
  }} -> ({types})
  return {results} : {types}
}}
"""


def exact(name, x):
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if name == "erf":
            from math import erf
            return np.array([erf(v) if np.isfinite(v) else np.sign(v) if not np.isnan(v)
                             else np.nan for v in x]).astype(np.float32)
        return FUNCTIONS[name](x).astype(np.float32)


def ulp_distance(a, b):
    """How many f32 values lie between a and b (0 when equal, both NaN, or
    the same infinity)."""
    ia, ib = (v.view(np.int32).astype(np.int64) for v in (a, b))
    # Order the bit patterns as the floats are ordered.
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    d = np.abs(ia - ib)
    both_nan = np.isnan(a) & np.isnan(b)
    return np.where(both_nan, 0, np.where(np.isnan(a) | np.isnan(b), 1 << 40, d))


@pytest.mark.parametrize("emulate_gpu", [False, True], ids=["cpu", "emulated-gpu"])
def test_within_a_few_ulp_of_the_exact_value(tmp_path, emulate_gpu):
    x = inputs()
    model = tmp_path / "math.mlir"
    model.write_text(module(len(x)))
    path = tmp_path / "x.safetensors"
    safetensors.save(path, {"x": x})
    out = tmp_path / "out.safetensors"
    epl_run(model, "--data", path, "--no-train", "--steps", "1", "--dump-results", out,
            *(["--emulate-gpu"] if emulate_gpu else []))
    got = safetensors.load(out)
    bad = []
    for i, name in enumerate(FUNCTIONS):
        want, have = exact(name, x), got[f"result{i}"]
        d = ulp_distance(have, want)
        limit = ULPS.get(name, DEFAULT_ULPS)
        for j in np.nonzero(d > limit)[0]:
            bad.append(f"{name}({x[j]!r}) = {have[j]!r}, exact {want[j]!r} ({d[j]} ulp)")
    assert not bad, "\n".join(bad[:30])
