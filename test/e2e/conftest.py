"""Shared helpers of the end-to-end tests: where the tools are, and how to
run them."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("EPL_BUILD_DIR", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
sys.path.insert(0, str(ROOT / "python"))

EPL_RUN = BUILD / "bin" / "epl-run"
MPIRUN = shutil.which("mpirun")


def sanitizers():
    """The sanitizers the build was configured with (LLVM_USE_SANITIZER in
    its CMake cache: "Address", "Undefined", ...), empty for a plain build."""
    cache = BUILD / "CMakeCache.txt"
    if not cache.exists():
        return set()
    for line in cache.read_text().splitlines():
        if line.startswith("LLVM_USE_SANITIZER:"):
            return {s for s in line.split("=", 1)[1].split(";") if s}
    return set()


def run(args, expect_ok=True, **kwargs):
    result = subprocess.run([str(a) for a in args], capture_output=True,
                            text=True, timeout=300, **kwargs)
    if expect_ok and result.returncode != 0:
        raise AssertionError(f"{args[0]} failed ({result.returncode}):\n"
                             f"{result.stdout}\n{result.stderr}")
    return result


def epl_run(*args, ranks=1, mpi=False, expect_ok=True):
    if mpi:
        if not MPIRUN:
            pytest.skip("mpirun is not installed")
        cmd = [MPIRUN, "--oversubscribe", "--allow-run-as-root", "-np",
               str(ranks), EPL_RUN, *args]
    else:
        cmd = [EPL_RUN, "--ranks", str(ranks), *args]
    return run(cmd, expect_ok=expect_ok)


def losses(stdout):
    """The per-step losses epl-run printed."""
    return [float(line.split()[3]) for line in stdout.splitlines()
            if line.startswith("step ") and line.split()[2] == "loss"]


def save_inputs(tmp_path, params, data):
    """Writes params and data as the safetensors files epl-run reads and
    returns their paths."""
    from epl import safetensors
    p, d = tmp_path / "p.safetensors", tmp_path / "d.safetensors"
    safetensors.save(p, params)
    safetensors.save(d, data)
    return p, d
