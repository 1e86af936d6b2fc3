"""Driving epl-opt and epl-run from Python."""

import math
import numbers
import os
import pathlib
import re
import subprocess
import tempfile
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

from .errors import EPLError, EPLWarning, ToolError, user_location

_ROOT = pathlib.Path(__file__).resolve().parents[2]


def tools_dir():
    """Where epl-opt and epl-run are: $EPL_BUILD_DIR/bin, else the
    repository's build/bin."""
    build = os.environ.get("EPL_BUILD_DIR")
    build = pathlib.Path(build) if build else _ROOT / "build"
    if not build.is_absolute():
        build = _ROOT / build
    return build / "bin"


def run_tool(tool, *args, progress=None, names=None):
    """Runs build/bin/<tool> with `args`; returns its stdout, raises
    ToolError with its output when it fails. `progress`, when given, is
    called with each line of stdout as the tool prints it. `names` maps
    file paths to what they are to the user: its errors and warnings say
    that instead (a temporary file is gone when they are read)."""
    try:
        return _run_tool(tool, args, progress, names or {})
    except ToolError as error:
        raise error.renamed(names or {}) from None


def _run_tool(tool, args, progress, names):
    path = tools_dir() / tool
    if not path.exists():
        raise ToolError(tool, -1, f"{path} does not exist: build the project first "
                                  "(scripts/build.sh)")
    if progress is not None:
        with tempfile.TemporaryFile("w+") as err:
            with subprocess.Popen([str(path), *map(str, args)], stdout=subprocess.PIPE,
                                  stderr=err, text=True, stdin=subprocess.DEVNULL) as p:
                lines = []
                for line in p.stdout:
                    lines.append(line)
                    progress(line.rstrip("\n"))
            err.seek(0)
            if p.returncode != 0:
                raise ToolError(tool, p.returncode, err.read() + "".join(lines))
            _forward_warnings(tool, err.read(), names)
            return "".join(lines)
    result = subprocess.run([str(path), *map(str, args)], capture_output=True,
                            text=True, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        raise ToolError(tool, result.returncode, result.stderr + result.stdout)
    _forward_warnings(tool, result.stderr, names)
    return result.stdout


_WARNING = re.compile(r"^(?:epl-[\w-]+: )?(?:\S+:\d+:\d+: )?warning: (.*)$")


def _forward_warnings(tool, stderr, names):
    """A tool that succeeded may still have warned (marks nothing reads, a
    step that updates nothing): each warning once, as a Python warning at
    the user's line, the files in `names` named so. The location in the
    temporary module is dropped."""
    for path, name in names.items():
        stderr = stderr.replace(str(path), name)
    seen = set()
    for line in stderr.splitlines():
        match = _WARNING.match(line)
        if not match or line in seen:
            continue
        seen.add(line)
        filename, lineno = user_location().rsplit(":", 1)
        warnings.warn_explicit(f"{tool}: {match.group(1)}", EPLWarning, filename,
                               int(lineno) if lineno.isdigit() else 0)


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
class Evaluation:
    """epl-run's `eval` line: the mean loss over the evaluated batches, the
    accuracy (None when the evaluation model returns no scores) and how
    many samples were evaluated."""
    loss: float
    accuracy: float
    samples: int


@dataclass
class TrainResult:
    losses: list
    plan: Plan
    output: str
    #: Per epoch over a dataset: (epoch, mean loss, samples per second).
    epochs: list = field(default_factory=list)
    #: Every evaluation, in order (after each epoch with eval_each_epoch,
    #: the last one after the last step).
    evaluations: list = field(default_factory=list)
    #: The trained parameters, model state and optimizer state by name, as
    #: numpy arrays (a Checkpoint: what epl-run --save writes; `params=`
    #: takes it back, and on a dataset goes on where this run stopped).
    params: dict = field(default_factory=dict, repr=False)

    @property
    def evaluation(self):
        """The last evaluation, or None."""
        return self.evaluations[-1] if self.evaluations else None


def _fields(line):
    """`key value` pairs after the first word of an epl-run line."""
    words = line.split()
    return dict(zip(words[1::2], words[2::2]))


def parse_output(output):
    """Losses, epochs and evaluations from epl-run's output."""
    losses, epochs, evaluations = [], [], []
    for line in output.splitlines():
        if line.startswith("step ") and line.split()[2] == "loss":
            losses.append(float(line.split()[3]))
        elif line.startswith("epoch "):
            f = _fields(" ".join(line.split()[1:]))
            mean = float(f["mean_loss"]) if "mean_loss" in f else None
            epochs.append((int(line.split()[1]), mean, float(f["samples_per_s"])))
        elif line.startswith("eval "):
            f = _fields(line)
            evaluations.append(Evaluation(
                float(f["loss"]) if "loss" in f else None,
                float(f["accuracy"]) if "accuracy" in f else None,
                int(f["samples"])))
    return losses, epochs, evaluations


class Checkpoint(dict):
    """Trained tensors by name, and the checkpoint's metadata (where its
    run stopped in a dataset, so that training on with it as `params`
    goes on from there, as epl-run --params does)."""

    def __init__(self, tensors, metadata=None):
        super().__init__(tensors)
        self.metadata = dict(metadata or {})


def _save(path, arrays):
    from . import safetensors
    safetensors.save(path, arrays, getattr(arrays, "metadata", None))


#: What each pipeline.strategy is called in the literature.
SCHEDULES = {
    "PreferForward": "GPipe",
    "PreferBackward": "1F1B",
    "PreferBackwardOptimizer": "1F1B, each stage updating as soon as its backward ends",
    "Interleaved1F1B": "interleaved 1F1B",
    "ZeroBubbleH1": "zero bubble ZB-H1",
}


def pipeline_stages(scopes):
    """The model's pipeline stages as epl-plan finds them: the names of its
    named scopes (replicate or split) in the order the model first uses
    them, when there are at least two; else []."""
    names = []
    for scope in scopes:
        # An empty scope marks no op, so epl-plan never sees it.
        if scope.name and scope.has_ops and scope.name not in names:
            names.append(scope.name)
    return names if len(names) > 1 else []


def default_devices(scopes, config_items):
    """The devices a model asks for: its stage devices (the stages, or the
    stages over pipeline.num_virtual_stages) times its largest scope."""
    largest = max([s.device_count for s in scopes] + [1])
    stages = len(pipeline_stages(scopes))
    chunks = config_items.get("pipeline.num_virtual_stages", 1)
    if stages and stages % chunks == 0:
        stages //= chunks
    return max(stages, 1) * largest


def _compile(model, devices, step, names=None):
    """Builds the training step of `model` for `devices` into the file
    `step` (epl-training-step, what epl-run would build: epl-run then runs
    it as it is, so the model is compiled once); returns its mesh and its
    `epl.pipeline` op as text, None for what it does not have."""
    # With its locations: what the run reports (a failed check) names the
    # user's line, not one of this file.
    run_tool("epl-opt", model, f"--epl-training-step=devices={devices}",
             "--mlir-print-debuginfo", "-o", step, names=names)
    mesh = pipeline = None
    for line in pathlib.Path(step).read_text().splitlines():
        # Without the location the step carries (--mlir-print-debuginfo).
        line = re.sub(r"\s+loc\(.*\)$", "", line.strip())
        if line.startswith("epl.mesh") and mesh is None:
            mesh = line
        elif line.startswith("epl.pipeline") and pipeline is None:
            pipeline = line
    return mesh, pipeline


def _pipeline_note(pipeline, stages, devices):
    """What the compiled `epl.pipeline` op says ran, in words."""
    strategy = re.search(r'strategy "(\w+)"', pipeline).group(1)
    micro = int(re.search(r"micro_batches (\d+)", pipeline).group(1))
    stage_devices = len(re.search(r"stages \[([^]]*)\]", pipeline).group(1).split(","))
    shape = []
    if len(stages) != stage_devices:
        shape.append(f"{len(stages) // stage_devices} per stage device")
    if devices != stage_devices:
        shape.append(f"{stage_devices} stage devices x {devices // stage_devices} "
                     "devices each")
    where = f"on {devices} devices" + (f" ({'; '.join(shape)})" if shape else "")
    return (f"{len(stages)} pipeline stages ({', '.join(stages)}) {where}, "
            f"{micro} micro-batches, schedule {strategy} "
            f"({SCHEDULES.get(strategy, strategy)})")


def _dataset_file(value, path):
    """A dataset given as a path, or as a dict of arrays written to `path`."""
    if isinstance(value, dict):
        from . import data
        data.save(path, value)
        return path
    return pathlib.Path(value)


def _check_count(name, value, low, high=2**63):
    """train's integer arguments, checked where the user's line is known
    (epl-run's own words were about its command line: "for the --steps
    option: '1.5' value invalid for integer argument")."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or \
            not low <= value < high:
        raise EPLError(f"train: {name} must be an integer of at least {low}, "
                       f"got {value!r}")


def _check_tensors(name, value, path=False):
    """train's `params` and `data`: a dict of arrays by tensor name (or,
    with `path`, a checkpoint's path), checked where the user's line is
    known rather than where the safetensors file is written."""
    if value is None or (path and isinstance(value, (str, os.PathLike))):
        return
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        what = " or a checkpoint's path" if path else ""
        raise EPLError(f"train: {name} must be a dict of numpy arrays by tensor name "
                       f"({{name: array}}){what}, got {type(value).__name__}")
    import numpy as np   # as safetensors is: `import epl` needs no numpy
    from .safetensors import storable
    for key, array in value.items():
        dtype = np.asarray(array).dtype
        if not storable(dtype):
            raise EPLError(f"train: {name}[{key!r}] is an array of {dtype}, which "
                           "a safetensors file cannot hold")


def train_module(mlir, steps=None, seed=0, params=None, data=None, devices=None,
                 scopes=(), config=None, dataset=None, epochs=None, shuffle=False,
                 eval_model=None, eval_dataset=None, eval_each_epoch=False,
                 timeout=None, progress=None, save=None):
    """Trains an L0 module with epl-run (`steps` steps, default 10) on
    `devices` CPU ranks (threads); `devices=None` uses what the model asks
    for: its stage devices times its largest scope (a pipeline of two
    replicate(1) stages: 2).

    With `dataset` each step reads the next global batch of it (epl-run
    --dataset) until `epochs` epochs are done, counting those of a `params`
    checkpoint, or `steps` steps when `epochs` is None (the default);
    `eval_model` (an L0 module
    returning the loss then the scores) is evaluated on `eval_dataset`
    after training. `progress` is called with each line epl-run prints,
    as it prints it.

    The trained tensors (parameters, model state, optimizer state, by name:
    what epl-run --save writes) come back as `TrainResult.params`, and are
    written to `save` too when it is given; passing them as `params`
    resumes."""
    if dataset is not None and data is not None:
        raise EPLError("train: `data` and `dataset` both give the inputs and labels; "
                       "give one")
    if steps is not None and epochs is not None:
        raise EPLError("train: epochs and steps both say how long to train; give one")
    if steps is None:
        steps = 10
    _check_count("steps", steps, 0)
    _check_tensors("params", params, path=True)
    _check_tensors("data", data)
    _check_count("seed", seed, 0, 2**64)
    if devices is not None:
        _check_count("devices", devices, 1)
    if epochs is not None:
        _check_count("epochs", epochs, 1)
    # Said, not dropped: without a dataset there are no epochs, nothing to
    # shuffle; without an evaluation set nothing is evaluated.
    if dataset is None:
        given = [name for name, value in (("epochs", epochs), ("shuffle", shuffle),
                                          ("eval_each_epoch", eval_each_epoch))
                 if value not in (None, False)]
        if given:
            raise EPLError(f"train: {', '.join(given)} need `dataset` (training on a "
                           "dataset in epochs)")
    if eval_dataset is None and (eval_model is not None or eval_each_epoch):
        raise EPLError("train: eval_model and eval_each_epoch need `eval_dataset`")
    if timeout is not None and (isinstance(timeout, bool) or
                                not isinstance(timeout, numbers.Real) or
                                not 0 < timeout < math.inf):
        raise EPLError(f"train: timeout must be a positive number of seconds, "
                       f"got {timeout!r}")
    config_items = dict(config.items()) if config else {}
    stages = pipeline_stages(scopes)
    notes = []
    if devices is None:
        devices = default_devices(scopes, config_items)
    micro = config_items.get("pipeline.num_micro_batch", 1)
    if stages and devices == 1:
        notes.append(f"{len(stages)} pipeline stages ({', '.join(stages)}) ran in "
                     f"sequence on one device" + (f"; {micro} micro-batches as gradient "
                                                  "accumulation" if micro > 1 else ""))
    elif micro > 1 and not stages:
        notes.append(f"{micro} micro-batches per device (gradient accumulation)")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        # The files written here, as the user knows them: gone when an error
        # or warning about them is read.
        names = {
            tmp / "params.safetensors": "the `params` given to train",
            tmp / "data.safetensors": "the `data` given to train",
            tmp / "train.safetensors": "the `dataset` given to train",
            tmp / "eval.safetensors": "the `eval_dataset` given to train",
            tmp / "eval.mlir": "the evaluation module",
            tmp / "model.mlir": "the model's module",
            tmp / "step.mlir": "the model's training step",
        }
        model = tmp / "model.mlir"
        model.write_text(mlir)
        mesh = pipeline = None
        if devices > 1:
            step = tmp / "step.mlir"
            mesh, pipeline = _compile(model, devices, step, names)
            model = step
        else:
            run_tool("epl-opt", model, "-o", os.devnull, names=names)   # verify first
        if pipeline:
            notes.append(_pipeline_note(pipeline, stages, devices))
        if mesh:
            notes.append(f"partitioned by epl-parallelize: {mesh}")
        args = [model, "--seed", seed, "--ranks", devices]
        if dataset is not None:
            args += ["--dataset", _dataset_file(dataset, tmp / "train.safetensors")]
            args += ["--epochs", epochs] if epochs is not None else ["--steps", steps]
            if shuffle:
                args.append("--shuffle")
        else:
            args += ["--steps", steps]
        if eval_dataset is not None:
            args += ["--eval-dataset", _dataset_file(eval_dataset, tmp / "eval.safetensors")]
            if eval_model is not None:
                (tmp / "eval.mlir").write_text(eval_model)
                args += ["--eval-model", tmp / "eval.mlir"]
            if eval_each_epoch:
                args.append("--eval-each-epoch")
        if timeout is not None:
            args += ["--timeout", timeout]
        if isinstance(params, (str, os.PathLike)):
            args += ["--params", pathlib.Path(params)]     # a checkpoint file
        elif params:
            _save(tmp / "params.safetensors", params)
            args += ["--params", tmp / "params.safetensors"]
        if data:
            _save(tmp / "data.safetensors", data)
            args += ["--data", tmp / "data.safetensors"]
        trained = pathlib.Path(save) if save is not None else tmp / "trained.safetensors"
        args += ["--save", trained]
        output = run_tool("epl-run", *args, progress=progress, names=names)
        from . import safetensors
        tensors = Checkpoint(*safetensors.load_with_metadata(trained))
    losses, epochs_run, evaluations = parse_output(output)
    return TrainResult(losses, Plan(devices, list(scopes), config_items, notes), output,
                       epochs_run, evaluations, tensors)
