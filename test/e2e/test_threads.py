"""Threads inside a rank (epl-thread-kernels, epl-run --threads-per-rank):
large loop kernels are split over the rank's threads by their outermost
parallel loop, each output element computed by one thread in the same
order, so any number of threads gives bit-identical losses and parameters.
Matmuls run as loops here (--blas=false): BLAS rounds differently on more
threads, so with BLAS the comparison would not be exact."""

import json
import subprocess

import numpy as np
import pytest

from conftest import BUILD, ROOT, epl_run, losses, run
from epl import safetensors
import epl

MLP = ROOT / "examples" / "mlp.mlir"


def lowered(model):
    return subprocess.run([str(BUILD / "bin" / "epl-opt"), str(model), "--epl-training-step",
                           "--epl-lower-to-cpu"], capture_output=True, text=True,
                          check=True).stdout


def train(tmp_path, model, threads, *extra, ranks=1):
    save = tmp_path / f"t{threads}-r{ranks}.safetensors"
    report = tmp_path / f"t{threads}-r{ranks}.json"
    out = epl_run(model, "--blas=false", "--threads-per-rank", threads, "--save", save,
                  "--report", report, *extra, ranks=ranks).stdout
    # The ranks ran on that many threads each.
    assert [r["threads"] for r in json.loads(report.read_text())["per_rank"]] == \
        [threads] * ranks
    return losses(out), safetensors.load(save)


@pytest.mark.parametrize("ranks", [1, 2])
def test_mlp_on_more_threads_is_bit_identical(tmp_path, ranks):
    assert "epl_rt_parallel_for" in lowered(MLP)
    one = train(tmp_path, MLP, 1, "--steps", 4, ranks=ranks)
    for threads in (2, 3):
        many = train(tmp_path, MLP, threads, "--steps", 4, ranks=ranks)
        assert many[0] == one[0]
        for name, value in one[1].items():
            assert np.array_equal(many[1][name], value), name


def test_resnet_on_two_threads_is_bit_identical(tmp_path):
    """Convolutions (im2col patches, pooling), batch norm and its running
    statistics, at a size whose kernels are split (bench/resnet_train.py's
    model)."""
    epl.init(epl.Config({"optimizer.type": "momentum", "optimizer.lr": 0.05,
                         "optimizer.momentum": 0.9}))
    x = epl.input("x", (32, 28, 28, 1))
    y = epl.label("y", (32, 10))
    logits = epl.layers.resnet(x, 10, widths=(16, 32), blocks_per_stage=1)
    path = tmp_path / "resnet.mlir"
    path.write_text(epl.to_mlir(epl.layers.softmax_cross_entropy(logits, y)))
    assert lowered(path).count("call @epl_rt_parallel_for") >= 20
    one = train(tmp_path, path, 1, "--steps", 2)
    two = train(tmp_path, path, 2, "--steps", 2)
    assert two[0] == one[0]
    assert "resnet/stem_bn/running_var" in one[1]
    for name, value in one[1].items():
        assert np.array_equal(two[1][name], value), name


def test_default_threads_follow_the_ranks(tmp_path):
    """One rank: the cores it may run on (pinned to one core: one thread);
    several ranks: one each."""
    report = tmp_path / "r.json"
    run(["taskset", "-c", "0", BUILD / "bin" / "epl-run", MLP, "--report", report])
    assert json.loads(report.read_text())["per_rank"][0]["threads"] == 1
    epl_run(MLP, "--report", report, ranks=2)
    assert [r["threads"] for r in json.loads(report.read_text())["per_rank"]] == [1, 1]


def test_threads_per_rank_must_be_positive():
    result = run([BUILD / "bin" / "epl-run", MLP, "--threads-per-rank", 0],
                 expect_ok=False)
    assert result.returncode == 1
    assert "--threads-per-rank must be between 1 and 1024" in result.stderr


def test_split_gemms_agree_on_threads_and_mpi(tmp_path):
    """With BLAS and 2 threads per rank, a rank cuts each large GEMM into
    blocks over its threads (lib/Runtime/Gemm.cpp): 2 thread ranks and 2 MPI
    processes of 2 threads each cut them alike and print the same losses to
    the last digit and save the same bytes; and the run trains."""
    from test_memory_estimate import mlp
    model = tmp_path / "mlp.mlir"
    # Per rank 128 x 784 x 256 and 128 x 256 x 256: over 2^22 multiply-adds.
    model.write_text(mlp(batch=256))
    runs = {}
    for mpi in (False, True):
        save = tmp_path / f"mpi{mpi}.safetensors"
        report = tmp_path / f"mpi{mpi}.json"
        out = epl_run(model, "--threads-per-rank", 2, "--steps", 4, "--save", save,
                      "--report", report, ranks=2, mpi=mpi).stdout
        assert [r["threads"] for r in json.loads(report.read_text())["per_rank"]] == [2, 2]
        runs[mpi] = (losses(out), save.read_bytes())
    assert runs[False][0] == runs[True][0]
    assert runs[False][0][-1] < runs[False][0][0]
    assert runs[False][1] == runs[True][1]
