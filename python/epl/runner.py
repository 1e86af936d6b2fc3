"""Driving epl-opt and epl-run from Python."""

import os
import pathlib
import subprocess
import tempfile
from dataclasses import dataclass, field

from .errors import ToolError

_ROOT = pathlib.Path(__file__).resolve().parents[2]


def tools_dir():
    """Where epl-opt and epl-run are: $EPL_BUILD_DIR/bin, else the
    repository's build/bin."""
    build = os.environ.get("EPL_BUILD_DIR")
    build = pathlib.Path(build) if build else _ROOT / "build"
    if not build.is_absolute():
        build = _ROOT / build
    return build / "bin"


def run_tool(tool, *args):
    """Runs build/bin/<tool> with `args`; returns its stdout, raises
    ToolError with its output when it fails."""
    path = tools_dir() / tool
    if not path.exists():
        raise ToolError(tool, -1, f"{path} does not exist: build the project first "
                                  "(scripts/build.sh)")
    result = subprocess.run([str(path), *map(str, args)], capture_output=True,
                            text=True, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        raise ToolError(tool, result.returncode, result.stderr + result.stdout)
    return result.stdout


@dataclass
class Plan:
    """What actually ran, and what the model asked for."""
    devices: int
    scopes: list
    config: dict
    notes: list = field(default_factory=list)

    def __str__(self):
        lines = [f"plan: ran on {self.devices} device(s) (CPU ranks, epl-run)"]
        if self.scopes:
            lines.append("  scopes in the model: " + ", ".join(map(repr, self.scopes)))
        else:
            lines.append("  scopes in the model: none (default replicate(1))")
        if self.config:
            lines.append("  config: " + ", ".join(f"{k}={v!r}" for k, v in self.config.items()))
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


@dataclass
class TrainResult:
    losses: list
    plan: Plan
    output: str


def _save(path, arrays):
    from . import safetensors
    safetensors.save(path, arrays)


def _mesh_of(model, devices):
    """The mesh epl-plan makes for `devices`, as text, or None."""
    planned = run_tool("epl-opt", model, f"--epl-plan=devices={devices}")
    for line in planned.splitlines():
        if line.strip().startswith("epl.mesh"):
            return line.strip()
    return None


def train_module(mlir, steps=10, seed=0, params=None, data=None, devices=None,
                 scopes=(), config=None):
    """Trains an L0 module with epl-run on `devices` CPU ranks (threads);
    `devices=None` uses as many as the largest scope asks for, or one
    when the model cannot be partitioned (pipeline stages)."""
    config_items = dict(config.items()) if config else {}
    asked = max([s.device_count for s in scopes] + [1])
    stages = [s.name for s in scopes if s.kind == "replicate" and s.name]
    notes = []
    if devices is None:
        devices = asked
    micro = config_items.get("pipeline.num_micro_batch", 1)
    if len(set(stages)) > 1 and devices > 1:
        notes.append(f"{len(set(stages))} pipeline stages ({', '.join(stages)}) are not "
                     f"partitioned yet (pipeline parallelism): ran on 1 device")
        devices = 1
    elif len(set(stages)) > 1:
        notes.append(f"{len(set(stages))} pipeline stages ({', '.join(stages)}) ran in "
                     f"sequence on one device" + (f"; {micro} micro-batches as gradient "
                                                  "accumulation" if micro > 1 else ""))
    elif micro > 1:
        notes.append(f"{micro} micro-batches per device (gradient accumulation)")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        model = tmp / "model.mlir"
        model.write_text(mlir)
        run_tool("epl-opt", model, "-o", os.devnull)   # verify before running
        mesh = _mesh_of(model, devices) if devices > 1 else None
        if mesh:
            notes.append(f"partitioned by epl-parallelize: {mesh}")
        args = [model, "--steps", steps, "--seed", seed, "--ranks", devices]
        if params:
            _save(tmp / "params.safetensors", params)
            args += ["--params", tmp / "params.safetensors"]
        if data:
            _save(tmp / "data.safetensors", data)
            args += ["--data", tmp / "data.safetensors"]
        output = run_tool("epl-run", *args)
    losses = [float(line.split()[3]) for line in output.splitlines()
              if line.startswith("step ") and line.split()[2] == "loss"]
    return TrainResult(losses, Plan(devices, list(scopes), config_items, notes), output)
