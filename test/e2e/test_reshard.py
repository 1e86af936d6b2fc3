"""Every reshard between two shardings of a 2-D tensor on a 2x4 mesh (each
dimension split over none, one or both axes, in either order) executes
correctly: one generated module holds all 121 pairs; each result is
assembled from the 8 ranks' shards and compared with the original."""

import itertools

import numpy as np
import pytest

from conftest import BUILD, MPIRUN, epl_run, run
from epl import safetensors

ROWS, COLS = 8, 16
DIM_OPTIONS = [[], ["a"], ["b"], ["a", "b"], ["b", "a"]]


def layouts():
    for d0, d1 in itertools.product(DIM_OPTIONS, repeat=2):
        if not set(d0) & set(d1):
            yield (d0, d1)


def sharding(layout):
    dims = ", ".join("[" + ", ".join(f'"{a}"' for a in d) + "]" for d in layout)
    return f"<@mesh, [{dims}]>"


def module(pairs):
    t = f"tensor<{ROWS}x{COLS}xf32>"
    lines = ['epl.mesh @mesh ["a" = 2, "b" = 4]',
             "func.func @main() -> (" + ", ".join(
                 f"{t} {{epl.sharding = #epl.sharding{sharding(dst)}}}"
                 for _, dst in pairs) + ") {",
             f"  %x = tensor.generate {{",
             "  ^bb0(%i: index, %j: index):",
             f"    %c = arith.constant {COLS} : index",
             "    %r = arith.muli %i, %c : index",
             "    %v = arith.addi %r, %j : index",
             "    %n = arith.index_cast %v : index to i64",
             "    %f = arith.sitofp %n : i64 to f32",
             "    tensor.yield %f : f32",
             f"  }} : {t}"]
    results = []
    for k, (src, dst) in enumerate(pairs):
        lines.append(f"  %s{k} = epl.sharding_constraint %x {sharding(src)} : {t}")
        lines.append(f"  %d{k} = epl.sharding_constraint %s{k} {sharding(dst)} : {t}")
        results.append(f"%d{k}")
    lines.append(f"  return {', '.join(results)} : {', '.join([t] * len(pairs))}")
    lines.append("}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("mpi", [False, True], ids=["threads", "mpi"])
def test_every_reshard_on_a_2x4_mesh(tmp_path, mpi):
    if mpi and not MPIRUN:
        pytest.skip("mpirun is not installed")
    pairs = list(itertools.product(list(layouts()), repeat=2))
    assert len(pairs) == 121
    source = tmp_path / "reshard.mlir"
    source.write_text(module(pairs))
    program = tmp_path / "reshard.per-device.mlir"
    run([BUILD / "bin" / "epl-opt", source, "--epl-sharding-propagation",
         "--epl-insert-collectives", "-o", program])
    text = program.read_text()
    for kind in ("epl.all_gather", "epl.all_to_all", "epl.group_index"):
        assert kind in text
    out = tmp_path / "out.safetensors"
    epl_run(program, "--dump-results", out, ranks=8, mpi=mpi)
    results = safetensors.load(out)
    expected = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    wrong = [f"{src} -> {dst}" for k, (src, dst) in enumerate(pairs)
             if not np.array_equal(results[f"result{k}"], expected)]
    assert not wrong, wrong
