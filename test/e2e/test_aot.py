"""Ahead-of-time artifacts (docs/aot.md): a step compiled by epl-compile and
run by epl-exec equals the same module run by epl-run, bit for bit (the
printed losses, the checkpoint, the results and the report's communication),
for data and tensor parallel models written with the Python frontend, on
threads and under mpirun."""

import json

import numpy as np
import pytest

from conftest import BUILD, MPIRUN, losses, run
from epl import safetensors
from test_parallel import mlp, problem

EPL_COMPILE = BUILD / "bin" / "epl-compile"
EPL_EXEC = BUILD / "bin" / "epl-exec"
EPL_RUN = BUILD / "bin" / "epl-run"
STEPS = 5

pytestmark = pytest.mark.skipif(not EPL_EXEC.exists(),
                                reason="epl-exec is not built")


def launch(tool, args, ranks, mpi):
    if mpi:
        return run([MPIRUN, "--oversubscribe", "--allow-run-as-root", "-np",
                    ranks, tool, *args])
    return run([tool, "--ranks", ranks, *args])


def outputs(tmp_path, tag, tool, first, ranks, mpi, data):
    save = tmp_path / f"{tag}.safetensors"
    dump = tmp_path / f"{tag}.results.safetensors"
    report = tmp_path / f"{tag}.json"
    out = launch(tool, [first, "--data", data, "--steps", STEPS, "--seed", 3,
                        "--save", save, "--dump-results", dump,
                        "--report", report], ranks, mpi)
    return (losses(out.stdout), save.read_bytes(), dump.read_bytes(),
            json.loads(report.read_text()))


@pytest.mark.parametrize("mpi", [False, True], ids=["threads", "mpi"])
@pytest.mark.parametrize("kind,ranks", [("data", 2), ("split", 4),
                                        ("data_split", 4)])
def test_artifact_equals_jit(tmp_path, kind, ranks, mpi):
    if mpi and not MPIRUN:
        pytest.skip("mpirun is not installed")
    model = tmp_path / f"{kind}.mlir"
    model.write_text(mlp(kind))
    data = tmp_path / "d.safetensors"
    safetensors.save(data, problem())
    artifact = tmp_path / f"{kind}.so"
    run([EPL_COMPILE, model, "--devices", ranks, "-o", artifact])

    jit = outputs(tmp_path, "jit", EPL_RUN, model, ranks, mpi, data)
    aot = outputs(tmp_path, "aot", EPL_EXEC, artifact, ranks, mpi, data)
    assert aot[0] == jit[0] and len(aot[0]) == STEPS
    assert aot[0][-1] < aot[0][0]
    assert aot[1] == jit[1], "checkpoints differ"
    assert aot[2] == jit[2], "results differ"
    for key in ("ranks", "backend", "gemm", "peak_bytes", "collectives"):
        assert aot[3][key] == jit[3][key], key
    assert jit[3]["gemm"] in ("openblas+dnnl", "openblas", "blis", "dnnl")
    assert aot[3]["collectives"], "the step communicates"


def test_manifest_describes_the_step(tmp_path):
    model = tmp_path / "split.mlir"
    model.write_text(mlp("split"))
    artifact = tmp_path / "split.so"
    run([EPL_COMPILE, model, "--devices", 4, "-o", artifact])
    manifest = json.loads(run([EPL_EXEC, artifact, "--print-manifest"]).stdout)
    assert manifest["format"] == 3 and manifest["target"] == "cpu"
    assert manifest["devices"] == 4
    program = manifest["program"]
    args = {a["name"]: a for a in program["args"]}
    # The Megatron block's first weight is split by columns over the
    # tensor axis: its global and per-device shapes say so.
    w = args["mlp_in/kernel"]
    assert w["kind"] == "param" and w["dtype"] == "F32"
    assert w["shape"] == [16, 32] and w["local_shape"] == [16, 8]
    assert w["shard"] == [[], [0]]
    assert [m["sizes"] for m in program["meshes"]] == [[4]]
    assert program["direct_messages"] is False
    (stage,) = program["stages"]
    assert stage["symbol"] == "__epl_stage_0"
    assert any(r["kind"] == "loss" for r in stage["results"])


def test_resume_across_runners(tmp_path):
    """A checkpoint epl-exec saves resumes under epl-run and back."""
    model = tmp_path / "data.mlir"
    model.write_text(mlp("data"))
    artifact = tmp_path / "data.so"
    run([EPL_COMPILE, model, "--devices", 2, "-o", artifact])
    first = tmp_path / "first.safetensors"
    run([EPL_EXEC, artifact, "--steps", 2, "--save", first])
    a = losses(run([EPL_RUN, model, "--ranks", 2, "--steps", 2,
                    "--params", first]).stdout)
    b = losses(run([EPL_EXEC, artifact, "--steps", 2,
                    "--params", first]).stdout)
    assert a == b
    np.testing.assert_array_less(b[-1], b[0] + 1e-3)
