"""The runtime's GPU side, run where there is no GPU (docs/gpu.md): a
`--target cuda` artifact whose host code is exactly the GPU program's
(launches, device buffers, copies, cuBLAS GEMMs, collectives on device
buffers) runs under the fake CUDA driver, cuBLAS and NCCL of
test/Runtime/FakeCuda, with its kernels compiled for the host
(`epl-compile --gpu-host-kernels`). The fake refuses what a GPU would:
host code touching device memory, a launch beyond the grid limits, a GEMM
or collective on host buffers, a stream of another GPU, a cubin for the
wrong architecture. Losses must equal the CPU path's and PyTorch's, on one
rank, on several ranks sharing a GPU (collectives staged through the host)
and on a GPU each (NCCL), on threads and under mpirun."""

import json
import os
import re

import numpy as np
import pytest

from conftest import BUILD, EPL_RUN, MPIRUN, ROOT, epl_run, losses, run
from epl import safetensors
from test_torch_mlir import INPUTS, RTOL, record, train, with_config

EPL_COMPILE = BUILD / "bin" / "epl-compile"
EPL_EXEC = BUILD / "bin" / "epl-exec"
FAKE = BUILD / "lib" / "fake-cuda"
EXAMPLES = ROOT / "examples"

pytestmark = pytest.mark.skipif(
    not (FAKE / "libcuda.so.1").exists() or not EPL_EXEC.exists(),
    reason="the fake CUDA libraries are built where CUDA's headers are")


def fake_env(gpus=1, sm=None, report=False):
    env = dict(os.environ)
    # The fake's GPUs are its own: a GPU machine's selection is not theirs.
    env.pop("CUDA_VISIBLE_DEVICES", None)
    if report:
        env["EPL_FAKE_CUDA_REPORT"] = "1"
    env["LD_LIBRARY_PATH"] = f"{FAKE}:{env.get('LD_LIBRARY_PATH', '')}"
    env["EPL_FAKE_CUDA_DEVICES"] = str(gpus)
    if sm:
        env["EPL_FAKE_CUDA_SM"] = str(sm)
    return env


def compile_cuda(tmp_path, model, devices=1, host_kernels=True, extra=()):
    artifact = tmp_path / f"{model.stem}-{devices}.so"
    run([EPL_COMPILE, model, "--target", "cuda", "--devices", devices,
         *(["--gpu-host-kernels"] if host_kernels else []), *extra,
         "-o", artifact])
    return artifact


def exec_cuda(artifact, *args, ranks=1, gpus=1, collectives="auto",
              mpi=False, sm=None, expect_ok=True, report=False):
    tail = [artifact, "--gpu-collectives", collectives, *args]
    if mpi:
        # -x: Open MPI passes the fake's folder on to the ranks.
        cmd = [MPIRUN, "--oversubscribe", "--allow-run-as-root", "-np", ranks,
               "-x", "LD_LIBRARY_PATH", "-x", "EPL_FAKE_CUDA_DEVICES",
               EPL_EXEC, *tail]
    else:
        cmd = [EPL_EXEC, "--ranks", ranks, *tail]
    return run(cmd, expect_ok=expect_ok, env=fake_env(gpus, sm, report))


def torch_model(tmp_path, name, variant="", optimizer="momentum"):
    rec = record(name)
    model = tmp_path / f"{name}{variant}.mlir"
    model.write_text(with_config((INPUTS / f"{name}{variant}.mlir").read_text(),
                                 rec["optimizers"][optimizer]["config"]))
    return model


def data_args(name):
    return ["--params", INPUTS / f"{name}.params.safetensors",
            "--data", INPUTS / f"{name}.data.safetensors",
            "--steps", record(name)["steps"]]


@pytest.mark.parametrize("name,optimizer", [
    ("mlp", "momentum"),          # integer labels: a gather with a bounds check
    ("transformer", "adamw"),     # attention, LayerNorm, GELU, AdamW
    ("conv", "momentum"),         # im2col GEMMs, batch norm, max pool
    ("gather", "sgd"),            # a scatter-add gradient on one thread
])
def test_cuda_artifact_trains_like_pytorch_and_the_cpu(tmp_path, name, optimizer):
    model = torch_model(tmp_path, name, optimizer=optimizer)
    artifact = compile_cuda(tmp_path, model)
    gpu = losses(exec_cuda(artifact, *data_args(name)).stdout)
    expected = record(name)["optimizers"][optimizer]["losses"]
    cpu = train(tmp_path, name, optimizer=optimizer)
    assert len(gpu) == len(expected)
    np.testing.assert_allclose(gpu, expected, rtol=RTOL)
    # The same kernels in the same order; cuBLAS's sums (the fake's: in
    # order of k) are another order than the CPU's GEMMs.
    np.testing.assert_allclose(gpu, cpu, rtol=RTOL)


@pytest.mark.parametrize("name,variant,ranks,gpus,collectives", [
    ("transformer", "", 2, 1, "host"),        # two ranks share a GPU
    ("transformer", "", 2, 2, "nccl"),        # data parallel over NCCL
    ("transformer", "-split", 2, 2, "nccl"),  # Megatron: activations reduced
    ("mlp", "-split", 4, 4, "auto"),          # a GPU each: NCCL chosen
    ("mlp", "-split", 4, 2, "auto"),          # fewer GPUs: staged
])
def test_cuda_ranks_equal_one(tmp_path, name, variant, ranks, gpus, collectives):
    one = train(tmp_path, name, optimizer="momentum")
    model = torch_model(tmp_path, name, variant)
    artifact = compile_cuda(tmp_path, model, devices=ranks)
    many = losses(exec_cuda(artifact, *data_args(name), ranks=ranks, gpus=gpus,
                            collectives=collectives).stdout)
    assert len(many) == len(one)
    np.testing.assert_allclose(many, one, rtol=RTOL)


@pytest.mark.parametrize("ranks,collectives", [(1, "auto"), (2, "nccl")])
def test_gpu_without_memory_pools(tmp_path, ranks, collectives):
    """A GPU without stream-ordered memory pools (some virtualized ones):
    plain allocations, each freed once the stream is done with it; the
    same losses. Before, cuDeviceGetDefaultMemPool failed the run."""
    model = torch_model(tmp_path, "transformer")
    artifact = compile_cuda(tmp_path, model, devices=ranks)
    env = fake_env(gpus=ranks)
    env["EPL_FAKE_CUDA_NO_POOLS"] = "1"
    out = run([EPL_EXEC, "--ranks", ranks, artifact, "--gpu-collectives", collectives,
               *data_args("transformer")], env=env)
    np.testing.assert_allclose(losses(out.stdout), train(tmp_path, "transformer",
                                                         optimizer="momentum"), rtol=RTOL)


@pytest.mark.parametrize("collectives", ["host", "nccl"])
def test_cuda_ranks_under_mpirun(tmp_path, collectives):
    """One rank per process: collectives staged through MPI, or NCCL's
    (its communicator's id bootstrapped through MPI; the fake's members
    meet in shared memory)."""
    if not MPIRUN:
        pytest.skip("mpirun is not installed")
    one = train(tmp_path, "transformer", optimizer="momentum")
    model = torch_model(tmp_path, "transformer")
    artifact = compile_cuda(tmp_path, model, devices=2)
    many = losses(exec_cuda(artifact, *data_args("transformer"), ranks=2,
                            gpus=2, collectives=collectives, mpi=True).stdout)
    np.testing.assert_allclose(many, one, rtol=RTOL)


def test_cuda_pipeline_stages_and_checkpoint(tmp_path):
    """Two pipeline stages: activations and gradients sent between GPUs
    through the host; the checkpoint holds the device's parameters."""
    model = EXAMPLES / "pipeline.mlir"
    cpu_save = tmp_path / "cpu.safetensors"
    cpu = losses(epl_run(model, "--steps", 3, "--save", cpu_save,
                         ranks=2).stdout)
    artifact = compile_cuda(tmp_path, model, devices=2)
    gpu_save = tmp_path / "gpu.safetensors"
    report = tmp_path / "gpu.json"
    gpu = losses(exec_cuda(artifact, "--steps", 3, "--save", gpu_save,
                           "--report", report, ranks=2, gpus=2).stdout)
    np.testing.assert_allclose(gpu, cpu, rtol=1e-5)
    ours, theirs = safetensors.load(gpu_save), safetensors.load(cpu_save)
    assert ours.keys() == theirs.keys()
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-4,
                                   atol=1e-6, err_msg=key)
    # Device buffers are counted per rank, like host buffers on the CPU.
    ranks = json.loads(report.read_text())["per_rank"]
    assert len(ranks) == 2 and all(r["peak_bytes"] > 0 for r in ranks)


def nccl_equals_cpu(tmp_path, path, args, ranks, mpi=False, rtol=RTOL, atol=1e-6):
    """Trains `path` 4 steps with `args` on `ranks` CPU ranks and on as many
    GPUs over NCCL: the same losses and saved parameters (optimizer state
    included; parameters within max(1e-4, rtol) and atol), and every rank
    destroys the NCCL communicators it made (in an order all members take,
    or the fake's would wait for each other). Returns the GPU run's
    output."""
    cpu = losses(epl_run(path, *args, "--save", tmp_path / "cpu.safetensors",
                         ranks=ranks).stdout)
    artifact = compile_cuda(tmp_path, path, devices=ranks)
    out = exec_cuda(artifact, *args, "--save", tmp_path / "gpu.safetensors",
                    ranks=ranks, gpus=ranks, collectives="nccl", mpi=mpi,
                    report=True)
    gpu = losses(out.stdout)
    assert len(gpu) == 4
    np.testing.assert_allclose(gpu, cpu, rtol=rtol)
    assert "point-to-point messages sent" in out.stderr, out.stderr
    assert "never destroyed" not in out.stderr, out.stderr
    ours, theirs = (safetensors.load(tmp_path / f"{t}.safetensors") for t in ("gpu", "cpu"))
    assert ours.keys() == theirs.keys()
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=max(1e-4, rtol), atol=atol,
                                   err_msg=key)
    return out


def train_pipeline(tmp_path, text, ranks, mpi=False):
    """nccl_equals_cpu for a test_pipeline model; how many messages the
    fake NCCL sent."""
    from test_pipeline import problem
    path = tmp_path / "model.mlir"
    path.write_text(text)
    data = tmp_path / "data.safetensors"
    safetensors.save(data, problem())
    out = nccl_equals_cpu(tmp_path, path, ["--data", data, "--steps", 4, "--seed", 3],
                          ranks, mpi=mpi)
    counts = re.findall(r"fake NCCL: (\d+) point-to-point messages sent", out.stderr)
    return sum(int(c) for c in counts)


@pytest.mark.parametrize("strategy", ["PreferForward", "PreferBackward", "ZeroBubbleH1",
                                      "Interleaved1F1B"])
def test_pipeline_messages_go_between_gpus(tmp_path, strategy):
    """4 stages on 4 GPUs: activations and gradients go from GPU to GPU in
    NCCL groups (no tags; a send waits for its receive), which the compiler
    checked finish for GPipe, 1F1B and ZB-H1: the CPU run's losses and
    parameters. Interleaved 1F1B's would not (its sends must not hold up
    the next computation): they go over channels, a send on a stream of its
    own, in the order the compiler checked each direction receives them."""
    from test_pipeline import model
    virtual = 2 if strategy == "Interleaved1F1B" else 1
    sent = train_pipeline(tmp_path, model(4 * virtual, 8, strategy, virtual),
                          ranks=4)
    # Per step, 8 micro-batches' activations and gradients between each of
    # the 3 pairs of neighbours (of 4 * 2 - 1 pairs of stages when
    # interleaved, and a first message each way when a channel opens, on
    # each of the 4 pairs of devices in the ring).
    channels = 4 if virtual > 1 else 0
    assert sent == 4 * 8 * 2 * (4 * virtual - 1) + 2 * channels


@pytest.mark.parametrize("kind", ["data", "split"])
def test_pipeline_messages_between_gpus_compose(tmp_path, kind):
    """2 stages x 2 replicas (or x split(2)) on 4 GPUs: messages in NCCL
    groups between the stages, gradients (or activations) all-reduced over
    NCCL within them."""
    from test_pipeline import model
    assert train_pipeline(tmp_path, model(2, 4, kind=kind), ranks=4) > 0


def test_interleaved_skip_goes_between_gpus(tmp_path):
    """Interleaved 1F1B on 2 stage devices, stage 3 adding stage 0's
    output: the skip's gradient comes back from stage 3 before those of
    the stages between, so device 0 receives it before it needs it, in the
    order device 1 sends (a channel has no tags). Every message goes over
    a channel (before, the order did not hold and all were staged through
    host memory, with nothing said), and the run equals the CPU's."""
    from test_pipeline import model
    sent = train_pipeline(tmp_path, model(4, 4, "Interleaved1F1B", 2, skip=(0, 3)),
                          ranks=2)
    # Per step and micro-batch, 3 activations between neighbouring stages
    # (stage 0's goes to device 1 once, for stages 1 and 3) and 4 gradients
    # back (the skip's too); a first message each way when the channel
    # opens.
    assert sent == 4 * 4 * (3 + 4) + 2


def test_interleaved_channels_compose_with_data_parallelism(tmp_path):
    """Interleaved 1F1B on 2 stage devices x 2 replicas: each replica's
    stage devices open their channels (both directions: the last stage's
    activations wrap around to the first device), beside the NCCL
    communicators the replicas all-reduce over; the CPU run's numbers."""
    from test_pipeline import model
    sent = train_pipeline(tmp_path, model(4, 4, "Interleaved1F1B", 2, kind="data"),
                          ranks=4)
    # Per step and replica, 4 micro-batches' activations and gradients
    # between the 3 pairs of neighbouring stages; a first message each way
    # when a replica's channel opens.
    assert sent == 4 * 2 * 4 * 2 * 3 + 2 * 2


def test_nccl_ranks_on_other_machines_have_their_own_gpus(tmp_path):
    """Under mpirun, the GPUs a rank may take are its machine's: with the
    launcher saying each process is alone on its machine (as on two nodes
    of one GPU each), NCCL is not refused, and each binds the GPU of its
    index there; two processes on one machine of one GPU are refused,
    naming the GPU they share."""
    if not MPIRUN:
        pytest.skip("mpirun is not installed")
    artifact = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir", devices=2)
    one = losses(epl_run(EXAMPLES / "mlp.mlir", "--steps", 2, ranks=2).stdout)
    env = fake_env(1)
    alone = [MPIRUN, "--oversubscribe", "--allow-run-as-root", "-np", 2,
             "-x", "LD_LIBRARY_PATH", "-x", "EPL_FAKE_CUDA_DEVICES", "sh", "-c",
             "EPL_FAKE_CUDA_MACHINE=$OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_LOCAL_SIZE=1 "
             f"OMPI_COMM_WORLD_LOCAL_RANK=0 exec {EPL_EXEC} "
             f"{artifact} --gpu-collectives nccl --steps 2"]
    np.testing.assert_allclose(losses(run(alone, env=env).stdout), one, rtol=RTOL)
    out = exec_cuda(artifact, "--steps", 1, ranks=2, gpus=1, collectives="nccl",
                    mpi=True, expect_ok=False)
    assert out.returncode != 0
    assert re.search(r"--gpu-collectives nccl: ranks 0 and 1 of .* share GPU-[0-9a-f-]{36}; "
                     r"NCCL needs a GPU per rank", out.stderr), out.stderr


@pytest.mark.parametrize("visible, said", [
    ("$OMPI_COMM_WORLD_LOCAL_RANK", "NCCL"),   # a GPU each, each sees one
    ("0", "staged through the host"),          # both given the same GPU
])
def test_one_visible_gpu_per_process(tmp_path, visible, said):
    """As SLURM and Kubernetes run ranks, each process seeing its own GPU
    alone (CUDA_VISIBLE_DEVICES): GPUs are told apart by UUID, so `auto`
    takes NCCL (before, two processes and one GPU in sight each looked
    like a shared GPU and were staged through the host, and `nccl` was
    refused); two processes given one GPU are staged."""
    if not MPIRUN:
        pytest.skip("mpirun is not installed")
    artifact = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir", devices=2)
    one = losses(epl_run(EXAMPLES / "mlp.mlir", "--steps", 2, ranks=2).stdout)
    report = tmp_path / "report.json"
    cmd = [MPIRUN, "--oversubscribe", "--allow-run-as-root", "-np", 2,
           "-x", "LD_LIBRARY_PATH", "-x", "EPL_FAKE_CUDA_DEVICES", "sh", "-c",
           f"CUDA_VISIBLE_DEVICES={visible} exec {EPL_EXEC} {artifact} "
           f"--gpu-collectives auto --steps 2 --report {report}"]
    out = run(cmd, env=fake_env(2))
    np.testing.assert_allclose(losses(out.stdout), one, rtol=RTOL)
    assert json.loads(report.read_text())["gpu_collectives"] == said


def test_pipeline_stage_with_nothing_on_it_over_nccl(tmp_path):
    """A stage device with nothing to run or send: the others' messages go
    over channels between their two GPUs (it opens none, and nobody makes
    the stage group's NCCL communicator, which it would never join) and the
    run equals the CPU's."""
    out = nccl_equals_cpu(tmp_path, ROOT / "test/e2e/Inputs/pipeline-stage-gap.mlir",
                          ["--steps", 4, "--seed", 3], ranks=3)
    counts = re.findall(r"fake NCCL: (\d+) point-to-point messages sent", out.stderr)
    # Per step and micro-batch, two activations one way, two gradients back;
    # a first message each way when the channel opens.
    assert sum(int(c) for c in counts) == 4 * 2 * 4 + 2


def test_processes_given_other_gpu_options_are_refused(tmp_path):
    """Under mpirun each process has its own command line: one in TF32
    would train its replica apart (one with other --gpu-collectives would
    meet the others in other collectives)."""
    if not MPIRUN:
        pytest.skip("mpirun is not installed")
    artifact = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir", devices=2)
    cmd = [MPIRUN, "--oversubscribe", "--allow-run-as-root", "-np", 2,
           "-x", "LD_LIBRARY_PATH", "-x", "EPL_FAKE_CUDA_DEVICES", "sh", "-c",
           'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then tf32=--gpu-tf32; fi; '
           f"exec {EPL_EXEC} {artifact} --steps 1 $tf32"]
    out = run(cmd, env=fake_env(2), expect_ok=False)
    assert out.returncode != 0
    assert ("rank 1 runs its GPU with other options than rank 0 (--gpu-collectives, "
            "--gpu-tf32)") in out.stderr, out.stderr


def test_channels_need_memory_pools_over_nccl(tmp_path):
    """On a GPU without stream-ordered memory pools, buffers are allocated
    and freed with cuMemAlloc and cuMemFree mid-step, which synchronize
    the GPU: with a channel's send in flight, for good (the fake driver
    ended such a run). Channels over NCCL are refused there, saying what
    runs instead; staged through the host, the pipeline equals the CPU."""
    path = ROOT / "test/e2e/Inputs/pipeline-stage-gap.mlir"
    args = ["--steps", 2, "--seed", 3]
    artifact = compile_cuda(tmp_path, path, devices=3)
    env = fake_env(gpus=3)
    env["EPL_FAKE_CUDA_NO_POOLS"] = "1"
    out = run([EPL_EXEC, "--ranks", 3, artifact, "--gpu-collectives", "nccl", *args],
              env=env, expect_ok=False)
    assert out.returncode == 1, out.stderr
    assert re.search(r"opening a channel to rank \d: this GPU has no stream-ordered memory "
                     r"pools .* run with --gpu-collectives host", out.stderr), out.stderr
    host = run([EPL_EXEC, "--ranks", 3, artifact, "--gpu-collectives", "host", *args], env=env)
    cpu = losses(epl_run(path, *args, ranks=3).stdout)
    np.testing.assert_allclose(losses(host.stdout), cpu, rtol=RTOL)


def test_channels_load_every_kernel_before_the_first_step(tmp_path):
    """A channel's send waits for its receive in a stream of its own, and
    CUDA's lazy loading (its default) loads a kernel at its first launch,
    which may synchronize the context: wait for the send, while the peer
    waits for this rank. The fake cuBLAS ended these runs at the first
    GEMM after a send (`fake cuBLAS: the kernel of a 8x2x8 GEMM is loaded
    at its first use ...`, before the runtime had the driver load every
    kernel as it starts, CUDA_MODULE_LOADING=EAGER, for programs with
    channels). A user's LAZY is refused for them, naming what runs
    instead (one line, exit 1, by epl-exec and by epl-run after
    compiling); programs without channels run under it."""
    path = ROOT / "test/e2e/Inputs/pipeline-stage-gap.mlir"
    args = ["--steps", 2, "--seed", 3]
    artifact = compile_cuda(tmp_path, path, devices=3)
    manifest = json.loads(run([EPL_EXEC, artifact, "--print-manifest"]).stdout)
    assert manifest["program"]["direct_messages"] is True
    env = fake_env(gpus=3)
    env["CUDA_MODULE_LOADING"] = "LAZY"
    said = ("CUDA_MODULE_LOADING=LAZY: this pipeline's messages go from GPU to GPU "
            "over channels (an NCCL send waiting for its receive in a stream of its "
            "own), and a kernel loaded at its first launch (a cuBLAS GEMM's) may wait "
            "for such a send for good; unset it (the run then loads every kernel when "
            "it starts) or run with --gpu-collectives host\n")
    out = run([EPL_EXEC, "--ranks", 3, artifact, *args], env=env, expect_ok=False)
    assert out.returncode == 1
    assert out.stderr == f"epl-exec: error: {artifact} targets cuda, but {said}", out.stderr
    if os.path.exists("/usr/local/cuda/bin/ptxas"):
        jit = run([EPL_RUN, path, "--target", "cuda", "--ranks", 3, *args], env=env,
                  expect_ok=False)
        assert jit.returncode == 1
        assert jit.stderr == f"epl-run: error: --target cuda: {said}", jit.stderr
    cpu = losses(epl_run(path, *args, ranks=3).stdout)
    host = run([EPL_EXEC, "--ranks", 3, artifact, "--gpu-collectives", "host", *args],
               env=env)
    np.testing.assert_allclose(losses(host.stdout), cpu, rtol=RTOL)
    mlp = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir", devices=2)
    two = run([EPL_EXEC, "--ranks", 2, mlp, "--steps", 2], env=fake_env(gpus=2) | {
        "CUDA_MODULE_LOADING": "LAZY"})
    np.testing.assert_allclose(
        losses(two.stdout), losses(epl_run(EXAMPLES / "mlp.mlir", "--steps", 2,
                                           ranks=2).stdout), rtol=RTOL)


@pytest.mark.parametrize("strategy", ["PreferBackward", "Interleaved1F1B"])
def test_pipeline_messages_between_gpus_under_mpirun(tmp_path, strategy):
    """A stage per process: the groups' members meet across processes (and
    so do the channels' ends, their ids handed over through MPI)."""
    if not MPIRUN:
        pytest.skip("mpirun is not installed")
    from test_pipeline import model
    virtual = 2 if strategy == "Interleaved1F1B" else 1
    sent = train_pipeline(tmp_path, model(2 * virtual, 4, strategy, virtual),
                          ranks=2, mpi=True)
    # And a first message each way when a channel opens.
    assert sent == 4 * 4 * 2 * (2 * virtual - 1) + (2 if virtual > 1 else 0)


def test_offload_v0_lowers_the_device_peak(tmp_path):
    """offload.level = "v0": parameters and optimizer state on the device
    only around their use; the same losses, a lower device peak."""
    from test_memory_estimate import mlp
    runs = {}
    for level in ("", "v0"):
        model = tmp_path / f"offload-{level or 'none'}.mlir"
        model.write_text(mlp(16, (256, 256, 256, 256, 10), **{
            "optimizer.type": "adam", "optimizer.num_apply_group": 4,
            **({"offload.level": level} if level else {})}))
        artifact = compile_cuda(tmp_path, model)
        report = tmp_path / f"{model.stem}.json"
        out = exec_cuda(artifact, "--steps", 3, "--report", report, report=True)
        runs[level] = (losses(out.stdout),
                       json.loads(report.read_text())["per_rank"][0]["peak_bytes"],
                       pinned(out.stderr))
    assert runs["v0"][0] == runs[""][0]
    assert runs["v0"][1] < 0.7 * runs[""][1], runs
    # The host buffers the steps copy (the offloaded parameters and Adam's
    # two moments among them) are pinned while the run lasts, then released.
    params = 256 * 256 * 3 + 256 * 10
    assert runs["v0"][2][0] > 3 * 4 * params, runs
    assert runs["v0"][2][1] == 0, runs
    # Without offload they stay on the device: only the batch and the
    # results are pinned.
    assert runs[""][2][0] < 4 * params, runs


@pytest.mark.parametrize("name,steps", [
    ("offload-transposed-operand", 3),  # the input's last read: a GEMM operand, transposed
    ("offload-select-alias", 1),        # read through arith.select of two arguments
])
def test_offload_v0_keeps_a_copy_while_an_alias_is_read(tmp_path, name, steps):
    """Under offload v0 an argument's device copy lives until the last read
    of anything that may alias it: the memref.transpose a GEMM reads it
    through (no view to MLIR), the buffer arith.select picks. Before, the
    copy was freed after the transpose or the select: the fake driver's
    cuBLAS refused the freed pointer (a real one reads freed memory), and
    the select's reader saw the fill that reused the block. Equal to the
    CPU run without offload (its loss summed in another order on the
    GPU: split over threads)."""
    model = ROOT / "test" / "e2e" / "Inputs" / f"{name}.mlir"
    plain = tmp_path / "plain.mlir"
    plain.write_text(model.read_text().replace(', "offload.level" = "v0"', "")
                     .replace('"offload.level" = "v0"', ""))
    cpu_out = tmp_path / "cpu.safetensors"
    epl_run(plain, "--steps", steps, "--dump-results", cpu_out)
    gpu_out = tmp_path / "gpu.safetensors"
    exec_cuda(compile_cuda(tmp_path, model), "--steps", steps,
              "--dump-results", gpu_out)
    cpu, gpu = safetensors.load(cpu_out), safetensors.load(gpu_out)
    assert cpu.keys() == gpu.keys()
    for key, value in cpu.items():
        np.testing.assert_allclose(gpu[key], value, rtol=1e-6, err_msg=key)


def pinned(stderr):
    """(most, at exit) bytes of host memory the fake driver saw pinned."""
    match = re.search(r"at most (\d+) bytes of host memory pinned, (\d+) still", stderr)
    assert match, stderr
    return int(match.group(1)), int(match.group(2))


# -- what a GPU refuses, the fake refuses ---------------------------------


def test_cubin_for_another_gpu_is_one_error(tmp_path):
    """A real cubin (sm_90, made by ptxas) on a GPU of another architecture:
    one line naming the GPU's, exit 1."""
    if not os.path.exists("/usr/local/cuda/bin/ptxas"):
        pytest.skip("CUDA's ptxas is not installed")
    artifact = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir", host_kernels=False)
    out = exec_cuda(artifact, "--steps", 1, sm=80, expect_ok=False)
    # (An sm_100 cubin is named so too.)
    other = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir", devices=1, host_kernels=False,
                         extra=("--gpu-chip", "sm_100"))
    newer = exec_cuda(other, "--steps", 1, sm=80, expect_ok=False)
    assert "compiled for sm_100 and this GPU is sm_80" in newer.stderr, newer.stderr
    assert out.returncode == 1, out.stderr
    # What the kernels are and what the GPU is (read off the cubin's ELF).
    assert ("the program's kernels were compiled for sm_90 and this GPU is "
            "sm_80; compile with --gpu-chip=sm_80") in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    # On the chip it was compiled for, another chip is not the advice (the
    # fake runs no GPU code, as a driver too old for the cubin would not).
    same = exec_cuda(other, "--steps", 1, sm=100, expect_ok=False)
    assert ("CUDA: the driver refused the program's kernels, compiled for sm_100, "
            "on this GPU (sm_100): operation not supported; the driver's log "
            "says: the fake driver runs no GPU code") in same.stderr, same.stderr


@pytest.mark.parametrize("form, holds, refused", [
    # Forward compatible: GPUs newer than sm_90 compile the PTX.
    ("fatbin", b"\x50\xed\x55\xba",
     "compiled for sm_90 (a cubin, and PTX that GPUs from sm_90 on compile) "
     "and this GPU is sm_80; compile with --gpu-chip=sm_80: no kernel image "
     "is available for execution on the device"),
    # The driver compiles it when it loads it; its compiler's log is said.
    ("ptx", b".target sm_90",
     "compiled to PTX for sm_90 and this GPU is sm_80; compile with "
     "--gpu-chip=sm_80: a PTX JIT compilation failed; the driver's log "
     "says: ptxas application ptx input, line 6; error   : SM "
     "version specified by .target is higher than default SM version "
     "assumed"),
])
def test_gpu_format_names_what_the_kernels_are(tmp_path, form, holds, refused):
    """epl-compile --gpu-format fatbin|ptx: the artifact holds a fatbin (a
    cubin and its PTX) or PTX; a GPU that refuses it says what it holds,
    what the GPU is, and (PTX) what the driver's compiler said."""
    if form == "fatbin" and not os.path.exists("/usr/local/cuda/bin/ptxas"):
        pytest.skip("CUDA's ptxas is not installed")
    artifact = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir", host_kernels=False,
                            extra=("--gpu-format", form))
    assert holds in artifact.read_bytes()
    # The manifest says which GPUs it is for (it could not tell them apart).
    manifest = json.loads(run([EPL_EXEC, artifact, "--print-manifest"]).stdout)
    assert manifest["gpu_kernels"] == {
        "fatbin": "fatbin for sm_90 and newer (its PTX)", "ptx": "PTX for sm_90"}[form]
    out = exec_cuda(artifact, "--steps", 1, sm=80, expect_ok=False)
    assert out.returncode == 1, out.stderr
    assert f"epl-exec: rank 0: CUDA: the program's kernels were {refused}\n" == out.stderr


def test_ptx_newer_than_the_driver_is_one_error(tmp_path):
    """PTX 8.0 (sm_90's) on a driver of CUDA 11.8, which compiles PTX 7.8
    at most: the fix is a newer driver or a cubin."""
    artifact = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir", host_kernels=False,
                            extra=("--gpu-format", "ptx"))
    env = fake_env()
    env["EPL_FAKE_CUDA_DRIVER_VERSION"] = "11080"
    out = run([EPL_EXEC, artifact, "--steps", 1], expect_ok=False, env=env)
    assert out.returncode == 1, out.stderr
    assert out.stderr == (
        "epl-exec: rank 0: CUDA: the program's PTX (ISA 8.0) is newer "
        "than this driver (CUDA 11.8) compiles; update the driver, or compile "
        "a cubin for this GPU (--gpu-format=cubin --gpu-chip=sm_90): the "
        "provided PTX was compiled with an unsupported toolchain; the "
        "driver's log says: ptxas application ptx input, line 5; "
        "fatal   : Unsupported .version 8.0; current version is '7.8'\n")


def test_epl_run_target_cuda_hands_the_runtime_its_kernels(tmp_path):
    """epl-run --target cuda runs the JIT's constructors, which hand the
    runtime the kernel images before the first launch (without them the
    launch looked a kernel up in no module and crashed). The fake refuses a
    real cubin as a GPU of another architecture does: one line, exit 1."""
    if not os.path.exists("/usr/local/cuda/bin/ptxas"):
        pytest.skip("CUDA's ptxas is not installed")
    out = run([EPL_RUN, EXAMPLES / "mlp.mlir", "--target", "cuda", "--steps", 1],
              expect_ok=False, env=fake_env(sm=80))
    assert out.returncode == 1, out.stderr
    assert ("epl-run: rank 0: CUDA: the program's kernels were compiled for sm_90 and "
            "this GPU is sm_80; compile with --gpu-chip=sm_80") in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_no_gpu_is_one_error(tmp_path):
    artifact = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir")
    out = exec_cuda(artifact, "--steps", 1, gpus=0, expect_ok=False)
    assert out.returncode == 1
    assert "the CUDA driver sees no GPU" in out.stderr


def test_no_gpu_under_mpirun_names_the_rank_and_machine(tmp_path):
    """On a cluster, which node lacks the driver or a GPU."""
    if not MPIRUN:
        pytest.skip("mpirun is not installed")
    artifact = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir", devices=2)
    out = exec_cuda(artifact, "--steps", 1, ranks=2, gpus=0, mpi=True,
                    expect_ok=False)
    assert out.returncode != 0
    assert re.search(r"the CUDA driver sees no GPU \(rank [01], on \S+\)", out.stderr), out.stderr


def test_nccl_needs_a_gpu_per_rank(tmp_path):
    artifact = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir", devices=2)
    out = exec_cuda(artifact, "--steps", 1, ranks=2, gpus=1,
                    collectives="nccl", expect_ok=False)
    assert out.returncode == 1
    assert "--gpu-collectives nccl: 2 ranks in this process share 1 GPU(s)" in out.stderr


def test_gpu_work_that_never_finishes_is_an_error(tmp_path):
    """A kernel that never ends (on a GPU: an NCCL collective whose peer
    died) ends the run after --timeout with one line, instead of a rank
    blocked for good in the wait for its stream."""
    import time
    artifact = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir")
    env = fake_env()
    env["EPL_FAKE_CUDA_HANG_AFTER_LAUNCHES"] = "3"
    start = time.monotonic()
    out = run([EPL_EXEC, artifact, "--steps", 2, "--timeout", 2],
              expect_ok=False, env=env)
    assert out.returncode == 1, out.stderr
    assert ("CUDA: the GPU's work of step 1 has not finished after 2 s (a "
            "collective whose other ranks never joined it, a message nobody "
            "receives, or a kernel that does not end); see --timeout") in out.stderr
    assert time.monotonic() - start < 60


def test_out_of_device_memory_says_what_needs_less(tmp_path):
    """A GPU too small for the step (here 2 MiB for a 2.7 MiB MLP): the
    step, the allocation, the GPU's size and what needs less, not the
    driver's bare "cuMemAllocAsync failed: out of memory"."""
    artifact = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir")
    env = fake_env()
    env["EPL_FAKE_CUDA_MEMORY_MB"] = "2"
    out = run([EPL_EXEC, artifact, "--steps", 1], expect_ok=False, env=env)
    assert out.returncode == 1, out.stderr
    assert re.search(r"epl-exec: rank 0: CUDA: out of device memory( in step 1)?: "
                     r"\d+\.\d\d MiB more does not fit on this GPU \(2\.00 MiB\); "
                     r'offload.level = "v0" \(parameters and optimizer state in host '
                     r"memory\), zero.level, gradient checkpointing", out.stderr), out.stderr


@pytest.mark.parametrize("fault, waiting, rest", [
    # Rank 1 never joins: rank 0 waits in the communicator's creation.
    ("1:nccl:sleep=30", "rank 0: NCCL: joining the communicator of @mesh "
     "[\"tensor\"] (2 devices) (ncclCommInitRank)", "rank 1"),
    # Rank 0 stops before its second collective: rank 1 waits in it (the
    # fake NCCL on the host, as the real one does where it connects).
    ("0:nccl@3:sleep=30", "rank 1: NCCL: all_reduce over @mesh "
     "[\"tensor\"] (2 devices)", "rank 0"),
])
def test_nccl_call_that_never_returns_is_an_error(tmp_path, fault, waiting, rest):
    """NCCL waits on the host for the other members (creating a
    communicator, connecting two members in their first collective) with no
    deadline of its own: a rank that died or stopped left the others
    blocked for good. Each NCCL call has the run's --timeout."""
    import time
    artifact = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir", devices=2)
    env = fake_env(gpus=2)
    env["EPL_RT_FAULT"] = fault
    start = time.monotonic()
    out = run([EPL_EXEC, artifact, "--ranks", 2, "--gpu-collectives", "nccl",
               "--steps", 2, "--timeout", 2], expect_ok=False, env=env)
    assert out.returncode == 1, out.stderr
    assert (f"epl-exec: {waiting}: timed out after 2 s waiting for the rest "
            f"of the group ({rest}); a rank may have failed, stopped or "
            "left (see --timeout)") in out.stderr
    assert time.monotonic() - start < 20


def test_nccl_join_under_mpirun_has_a_deadline(tmp_path):
    """Under mpirun: a rank stopped (SIGSTOP) before joining; the others'
    deadline ends them, and the launcher the stopped one."""
    import time
    if not MPIRUN:
        pytest.skip("mpirun is not installed")
    artifact = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir", devices=2)
    env = fake_env(gpus=2)
    env["EPL_RT_FAULT"] = "1:nccl:stop"
    start = time.monotonic()
    out = run([MPIRUN, "--oversubscribe", "--allow-run-as-root", "-np", 2,
               "-x", "LD_LIBRARY_PATH", "-x", "EPL_FAKE_CUDA_DEVICES",
               "-x", "EPL_RT_FAULT", EPL_EXEC, artifact, "--gpu-collectives",
               "nccl", "--steps", 2, "--timeout", 2], expect_ok=False, env=env)
    assert out.returncode != 0
    assert ("rank 0: NCCL: joining the communicator of @mesh [\"tensor\"] "
            "(2 devices) (ncclCommInitRank): timed out after 2 s") in out.stderr
    assert time.monotonic() - start < 20


def test_fp16_gradients_on_four_gpus(tmp_path):
    """Gradients sent in fp16 over NCCL train like the CPU run with fp16
    gradients: close, not equal, as NCCL adds half-precision values in half
    precision and the CPU backends in f32 (a half-precision step of the
    scaled gradients is about 5e-5 here)."""
    from test_parallel import _data_parallel_module
    fp16, data = _data_parallel_module(tmp_path, {"communication.fp16": True})
    nccl_equals_cpu(tmp_path, fp16, ["--data", data, "--steps", 4, "--seed", 5], ranks=4,
                    rtol=2e-3, atol=2e-4)


def test_fp16_gradients_beyond_fp16_are_an_error_on_gpus(tmp_path):
    """On GPUs the check is the kernel's own assertion, which the runtime
    reports at the rank's next CUDA call."""
    from test_parallel import FP16_OVERFLOW, _data_parallel_module
    fp16, data = _data_parallel_module(
        tmp_path, {"communication.fp16": True, "communication.fp16_scale": 1e9})
    artifact = compile_cuda(tmp_path, fp16, devices=2)
    out = exec_cuda(artifact, "--data", data, "--steps", 2, ranks=2, gpus=2,
                    collectives="nccl", expect_ok=False)
    assert out.returncode == 1, out.stderr
    # The kernel's assertion, printed as a GPU prints it, fails the rank's
    # next CUDA call.
    # (Its own message: a kernel's check says where it is as a GPU does.)
    message = FP16_OVERFLOW.split(': "', 1)[1].removesuffix(" at ")
    assert f"Assertion `{message}` failed." in out.stdout
    assert re.search(r"epl-exec: rank \d: CUDA: \w+ failed: device-side assert triggered "
                     r"\(a kernel's check failed, such as a gather's index out of range, "
                     r"in step 1 or before;", out.stderr), out.stderr


def test_host_kernels_are_for_the_cuda_target(tmp_path):
    out = run([EPL_COMPILE, EXAMPLES / "mlp.mlir", "--gpu-host-kernels", "-o",
               tmp_path / "x.so"], expect_ok=False)
    assert out.returncode == 1
    assert "--gpu-host-kernels is for --target cuda" in out.stderr


def test_bench_gpu_sh_dry_run(tmp_path):
    """The GPU check a session with a GPU runs (bench/gpu.sh) works end to
    end here, under the fake driver: its artifacts compile, run, and match
    the CPU's losses; its measurements print."""
    out = run([ROOT / "bench" / "gpu.sh", "dry-run", tmp_path / "gpu"])
    assert out.stdout.count(" ok  steps 8/8") == 4, out.stdout
    for math in ("fp32", "tf32"):
        section = out.stdout.split(f"{math} math\n", 1)[1]
        assert section.startswith("epl-exec: one GEMM"), out.stdout
    assert "transformer training step" in out.stdout, out.stdout


@pytest.mark.parametrize("name,offload", [("mlp", False), ("transformer", False),
                                          ("conv", False), ("transformer", True)])
def test_device_peak_matches_the_estimate(tmp_path, name, offload):
    """The report's device peak (every device buffer, the parameters and
    optimizer state that stay there included) is what epl-estimate-memory
    plus the step's arguments and results predict; with offload v0, each
    argument's device copy counted from its first use to its last."""
    model = torch_model(tmp_path, name, optimizer="momentum")
    if offload:
        config = record(name)["optimizers"]["momentum"]["config"]
        model.write_text(with_config(model.read_text(),
                                     {**config, "offload.level": "v0"}))
    artifact = compile_cuda(tmp_path, model)
    report = tmp_path / "report.json"
    exec_cuda(artifact, *data_args(name), "--report", report)
    rank = json.loads(report.read_text())["per_rank"][0]
    assert rank["estimated_peak_bytes"] == pytest.approx(rank["peak_bytes"], rel=0.1), rank


def test_tf32_rounds_the_gemm_inputs(tmp_path):
    """--gpu-tf32: cuBLAS's TF32 tensor-op math for fp32 GEMMs (the fake
    rounds their inputs to 10 bits of mantissa, as the tensor cores do).
    The losses move off the fp32 ones, by about TF32's precision, not
    more; without it they are fp32's. On the CPU it is an error."""
    model = torch_model(tmp_path, "transformer", optimizer="adamw")
    artifact = compile_cuda(tmp_path, model)
    fp32 = losses(exec_cuda(artifact, *data_args("transformer")).stdout)
    tf32 = losses(exec_cuda(artifact, *data_args("transformer"), "--gpu-tf32").stdout)
    assert tf32 != fp32
    np.testing.assert_allclose(tf32, fp32, rtol=1e-3)
    np.testing.assert_allclose(fp32, record("transformer")["optimizers"]["adamw"]["losses"],
                               rtol=RTOL)
    out = epl_run(EXAMPLES / "mlp.mlir", "--gpu-tf32", expect_ok=False)
    assert out.returncode == 1
    assert "--gpu-tf32 is for GPU ranks; give --target cuda" in out.stderr


@pytest.mark.parametrize("kind,config", [
    ("data", {"zero.level": "v1"}),                    # optimizer state sharded
    ("data", {"zero.level": "v2"}),                    # and gradients
    ("data_split", {"zero.level": "v1"}),              # 2 x 2: Megatron inside
    ("data", {"micro_batches": 2}),                    # gradient accumulation
    ("data", {"gradient_checkpoint.type": "auto"}),    # recomputation
], ids=["zero-v1", "zero-v2", "data-split-zero-v1", "accumulation", "checkpointing"])
def test_strategies_on_four_gpus_equal_the_cpu(tmp_path, kind, config):
    """Each strategy on 4 GPUs (NCCL: reduce-scatter, all-gather and
    all-reduce on device buffers) gives the CPU run's losses and
    checkpoint, Adam's state included."""
    from test_zero import model
    rng = np.random.default_rng(2)
    data = tmp_path / "d.safetensors"
    safetensors.save(data, {"x": rng.standard_normal((16, 12)).astype(np.float32),
                            "y": np.eye(8, dtype=np.float32)[rng.integers(0, 8, 16)]})
    path = tmp_path / "model.mlir"
    path.write_text(model(kind, optimizer="adam", **config))
    nccl_equals_cpu(tmp_path, path, ["--data", data, "--steps", 4, "--seed", 5], ranks=4)


@pytest.mark.parametrize("collectives, said", [("nccl", "over NCCL"),
                                               ("host", "staged through the host")])
def test_summary_and_report_say_gpus_and_collectives(tmp_path, collectives, said):
    """Where the ranks ran: on GPUs, and how their collectives went
    (`auto` picks per group; nothing said so, and the report named the
    CPU's GEMM library)."""
    artifact = compile_cuda(tmp_path, EXAMPLES / "mlp.mlir", devices=2)
    report = tmp_path / "report.json"
    out = exec_cuda(artifact, "--steps", 1, "--report", report, ranks=2, gpus=2,
                    collectives=collectives)
    assert f"on 2 ranks (threads, on GPUs, collectives {said})" in out.stdout
    r = json.loads(report.read_text())
    assert (r["backend"], r["gpu"], r["gemm"]) == ("threads", True, "cublas")
    assert r["gpu_collectives"] == said.removeprefix("over ")
