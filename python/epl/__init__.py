"""EPL-MLIR's Python frontend, with EPL's API.

    import epl
    epl.init(epl.Config({"pipeline.num_micro_batch": 4}))
    x = epl.input("x", (32, 784))
    y = epl.label("y", (32, 10))
    with epl.replicate(device_count=1):
        h = epl.layers.Dense(512, activation="relu")(x)
    with epl.split(device_count=2):
        loss = epl.layers.softmax_cross_entropy(epl.layers.Dense(10)(h), y)
    result = epl.train(loss, steps=10)
    print(result.losses)

The model is traced into EPL's L0 MLIR (`epl.to_mlir`); `epl.train` drives
epl-opt and epl-run. Mistakes raise EPLError subclasses naming the thing at
fault and the user's line, before any tool runs; a failing tool raises
ToolError with the tool's message.
"""

from . import layers, nn
from .config import Config
from .errors import (ConfigError, DTypeError, EPLError, EPLWarning, ShapeError,
                     StrategyError, ToolError, user_location)
from .graph import Graph, Tensor
from .runner import Plan, TrainResult, run_tool, tools_dir
from .strategy import replicate, split
from . import strategy as _strategy

_state = {"graph": None, "config": None,
          # The strategy set_default_strategy was last given, where, and
          # how much of the model was traced then.
          "default_set": None}


def init(config=None, dtype="f32"):
    """Starts a model description: a fresh default model, no scopes, and
    `config` (an epl.Config, or a dict of its keys). `dtype` ("f32" or
    "f64") is the float type the model computes in: of its ops, and of the
    parameters, inputs and labels not given another."""
    if dtype not in ("f32", "f64"):
        raise DTypeError(f"epl.init(dtype={dtype!r}): a model computes in \"f32\" or "
                         "\"f64\"")
    if config is not None and not isinstance(config, Config):
        if isinstance(config, dict):
            config = Config(config)
        else:
            raise ConfigError(f"epl.init expects an epl.Config, got {config!r}")
    # init starts the model afresh, its default strategy too: one set for
    # a model nothing was traced in since (set before epl.init) would be
    # dropped without a word.
    if _state["default_set"] is not None:
        strategy, where, traced = _state["default_set"]
        _state["default_set"] = None   # said once
        if _traced() == traced:
            raise StrategyError(
                f"epl.set_default_strategy({strategy!r}) at {where} is called before "
                "epl.init(), which starts a new model with the default strategy "
                "replicate(1): call set_default_strategy after epl.init")
    _strategy.reset()
    layers.reset_names()
    _state["config"] = config or Config()
    if _state["graph"] is not None:
        _state["graph"].closed = True
    _state["graph"] = Graph("model", dtype)


def _traced():
    """How much of the current model has been traced (arguments and ops)."""
    g = _state["graph"]
    return len(g.args) + len(g.lines)


def set_default_strategy(strategy):
    """The strategy of the current model's ops outside every scope (EPL's
    default: replicate(1)); call it after epl.init, which starts a model
    with the default."""
    _graph()  # the model it is for: started now if it is not yet
    _strategy.set_default_strategy(strategy)
    _state["default_set"] = (strategy, user_location(), _traced())


def _graph():
    if _state["graph"] is None:
        init()
    return _state["graph"]


def get_config():
    if _state["config"] is None:
        init()
    return _state["config"]


def input(name, shape, dtype=None):  # noqa: A001 - EPL-style name
    """A tensor fed from the data (a batch of inputs)."""
    return _graph().input(name, shape, dtype)


def label(name, shape, dtype=None):
    """A tensor fed from the data (labels: probability/one-hot rows)."""
    return _graph().label(name, shape, dtype)


def param(name, shape, init="normal", dtype=None, trainable=True):
    """A parameter of the default model (layers create their own), of
    element type `dtype` (default: the model's, epl.init's). `trainable=False`: model state the step reads and
    does not train (class weights, a frozen embedding), carried unchanged
    and saved with the parameters, as PyTorch's requires_grad=False; a
    tensor shared by every example, which micro-batches do not cut as
    they cut inputs."""
    if trainable:
        return _graph().param(name, shape, init=init, dtype=dtype)
    return _graph().state(name, shape, init=init, dtype=dtype)


def checkpoint(tensor):
    """Keeps `tensor` for the backward when gradient_checkpoint.type is
    "collection" (EPL's collection of tensors to keep): everything else the
    backward reads is recomputed from the nearest kept tensors. Returns
    `tensor`, so it can wrap a layer's output."""
    if not isinstance(tensor, Tensor) or tensor.graph is not _graph():
        raise ShapeError("epl.checkpoint takes a tensor of the current model")
    return _graph().checkpoint(tensor)


def to_mlir(loss, outputs=()):
    """The L0 module of the default model with `loss`, and the config.
    `outputs` are returned after the loss: an evaluation model
    (`epl.train(eval_model=...)`) returns its scores (logits) this way."""
    g = _graph()
    if not isinstance(loss, Tensor) or loss.graph is not g:
        raise ShapeError("the loss must be a tensor of the current model (epl.init "
                         "starts a new one)")
    g.set_loss(loss)
    g.config = dict(get_config().items())
    if g.config.get("gradient_checkpoint.type") == "collection" and g.marked_args \
            and not g.marks_ops:
        marked = ", ".join(f"{a['kind']} '{a['name']}'" for a, _ in g.marked_args)
        raise ShapeError(
            f"gradient_checkpoint.type = \"collection\" keeps what epl.checkpoint "
            f"marks, and it marked only the model's {marked}, which the backward "
            "keeps anyway: mark tensors computed from them", g.marked_args[0][1])
    return g.to_mlir(outputs)


def train(loss, steps=None, seed=0, params=None, data=None, devices=None, **dataset):
    """Compiles the default model and trains it `steps` steps (default 10)
    with epl-run on `devices` CPU ranks (default: what the model asks for,
    its pipeline's stage devices times its largest scope), planned and
    partitioned by epl-parallelize; returns a TrainResult (per-step
    losses, the plan that ran, the output). `params` and `data` are
    optional dicts of numpy arrays by name (`params` also a checkpoint's
    path, or an earlier result's `params`, to train on from it).

    Training on a dataset (docs/python.md): `dataset` (a safetensors path
    or a dict of [N, ...] arrays by input and label name), `epochs` (the
    epochs done in all, a checkpoint's included; or `steps`), `shuffle`;
    then evaluation with `eval_model` (the module of
    `epl.to_mlir(loss, outputs=[logits])`, traced at the evaluation batch),
    `eval_dataset` and `eval_each_epoch`. The trained tensors come back as
    `TrainResult.params` (and are written to `save=PATH` when given)."""
    from .runner import train_module
    return train_module(to_mlir(loss), steps=steps, seed=seed, params=params,
                        data=data, devices=devices, scopes=list(_strategy.used),
                        config=get_config(), **dataset)


__all__ = ["init", "Config", "replicate", "split", "set_default_strategy", "input",
           "checkpoint",
           "label", "param", "to_mlir", "train", "get_config", "layers", "nn", "Graph", "Tensor",
           "EPLError", "ConfigError", "StrategyError", "ShapeError", "DTypeError", "ToolError",
           "EPLWarning", "Plan", "TrainResult", "run_tool", "tools_dir"]
