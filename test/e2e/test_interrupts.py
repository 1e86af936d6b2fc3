"""A run interrupted while it writes its checkpoint (--save) leaves the old
one whole and no temporary file; an interrupt the run was started with
ignored (`nohup`'s SIGHUP, a script's background job's SIGINT and SIGQUIT)
stays ignored and the checkpoint is written.

The interrupt is sent once the temporary file next to the checkpoint
appears: a checkpoint of ~64 MiB (parameters and momentum) takes long
enough to write that it is seen (the test retries a few times where the
write was quicker than the polling)."""

import os
import signal
import subprocess
import time

import pytest

from conftest import EPL_RUN
import epl
from epl import safetensors

OLD = b"OLD"


def model(tmp_path):
    epl.init(epl.Config({"optimizer.type": "momentum", "optimizer.lr": 0.01,
                         "optimizer.momentum": 0.9}))
    h = epl.input("x", (8, 2048))
    for i in range(2):
        h = epl.layers.Dense(2048, name=f"fc{i}")(h)
    path = tmp_path / "model.mlir"
    path.write_text(epl.to_mlir(epl.nn.mean(h)))
    return path


def save_interrupted(tmp_path, sig, ignored):
    """epl-run saving over an old checkpoint, sent `sig` while the
    temporary file is there; its exit code, or None where the write ended
    before the signal could be sent."""
    directory = tmp_path / "out"
    directory.mkdir(exist_ok=True)
    for f in directory.iterdir():
        f.unlink()
    checkpoint = directory / "ck.safetensors"
    checkpoint.write_bytes(OLD)
    disposition = signal.SIG_IGN if ignored else signal.SIG_DFL
    proc = subprocess.Popen(
        [str(EPL_RUN), str(tmp_path / "model.mlir"), "--steps", "0", "--save", str(checkpoint)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(sig, disposition))
    sent = False
    while proc.poll() is None:
        if any(".tmp-" in f.name for f in directory.iterdir()):
            proc.send_signal(sig)
            sent = True
            break
        time.sleep(0.0005)
    _, err = proc.communicate(timeout=120)
    return (proc.returncode if sent else None), err.decode(), directory


def interrupted(tmp_path, sig, ignored):
    """save_interrupted, tried until the signal came while the temporary
    file was there."""
    model(tmp_path)
    for _ in range(5):
        code, err, directory = save_interrupted(tmp_path, sig, ignored)
        if code is not None:
            return code, err, directory
    pytest.skip("the checkpoint was written before the signal could be sent")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_an_interrupt_keeps_the_old_checkpoint(tmp_path, sig):
    code, err, directory = interrupted(tmp_path, sig, ignored=False)
    assert code == -sig, err
    assert sorted(f.name for f in directory.iterdir()) == ["ck.safetensors"]
    assert (directory / "ck.safetensors").read_bytes() == OLD


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP, signal.SIGQUIT])
def test_an_ignored_interrupt_stays_ignored(tmp_path, sig):
    """Before, LLVM's handler (which InitLLVM installs over the ignored
    disposition) removed the temporary file and let the run go on, to fail
    at the rename: "cannot write .../ck.safetensors: No such file or
    directory"."""
    code, err, directory = interrupted(tmp_path, sig, ignored=True)
    assert code == 0, err
    assert sorted(f.name for f in directory.iterdir()) == ["ck.safetensors"]
    saved = safetensors.load(directory / "ck.safetensors")
    assert saved["fc1/kernel"].shape == (2048, 2048)
    assert "fc1/kernel.momentum_buffer" in saved
