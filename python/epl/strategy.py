"""EPL's strategy scopes: `replicate` and `split`, with EPL's rules.

    with epl.replicate(device_count=1, name="stage_0"):
        ...   # ops traced here carry epl.scope = #epl.replicate<...>
    with epl.split(device_count=8):
        ...   # ... #epl.split<devices = 8>

Rules, as in EPL: nothing may be nested inside a split; a split may not be
nested inside a replicate; a scope may not be nested inside one of its own
type. Ops outside every scope take the default strategy
(`set_default_strategy`), itself `replicate(1)` unless changed.
"""

from .errors import PLAIN_NAME, StrategyError, plain_name


class Strategy:
    kind = None

    def __init__(self, device_count=None, name=None):
        if device_count is not None and (not isinstance(device_count, int)
                                         or isinstance(device_count, bool)
                                         or device_count < 1):
            raise StrategyError(f"{self.kind}(device_count={device_count!r}): "
                                "device_count must be a positive integer")
        # Checked here, at the user's line, as tensor names are: the name
        # is printed into the module's `epl.scope` as it is.
        if name is not None and not plain_name(name):
            raise StrategyError(f"{self.kind}(name={name!r}): name must be {PLAIN_NAME}")
        self.device_count = 1 if device_count is None else device_count
        self.name = name
        #: Whether an op was traced in the scope: one without is no stage.
        self.has_ops = False

    @property
    def attribute(self):
        """The MLIR attribute of this scope."""
        name = f', name = "{self.name}"' if self.name else ""
        return f"#epl.{self.kind}<devices = {self.device_count}{name}>"

    def __repr__(self):
        name = f", name={self.name!r}" if self.name else ""
        return f"epl.{self.kind}(device_count={self.device_count}{name})"

    def __enter__(self):
        for outer in _stack:
            if outer.kind == "split":
                raise StrategyError(f"{self!r} is nested inside {outer!r}: nothing "
                                    "may be nested inside a split")
            if outer.kind == self.kind:
                raise StrategyError(f"{self!r} is nested inside {outer!r}: a scope "
                                    "may not be nested inside one of its own type")
            if self.kind == "split" and outer.kind == "replicate":
                raise StrategyError(f"{self!r} is nested inside {outer!r}: a split "
                                    "may not be nested inside a replicate")
        _stack.append(self)
        used.append(self)
        return self

    def __exit__(self, *exc):
        _stack.pop()
        return False


class replicate(Strategy):  # noqa: N801 - EPL's name
    """Data parallelism: each replica of the enclosed part uses
    `device_count` devices; named replicates are pipeline stages."""
    kind = "replicate"


class split(Strategy):  # noqa: N801 - EPL's name
    """Tensor parallelism: the enclosed part is split across
    `device_count` devices; a named split is a pipeline stage too."""
    kind = "split"


_stack = []
#: Every scope entered since `epl.init`, in order (for reporting the plan).
used = []
_default = None


def current():
    """The innermost active scope, else the default strategy (or None)."""
    return _stack[-1] if _stack else _default


def set_default_strategy(strategy):
    """The strategy of ops outside every scope (EPL's default:
    replicate(1))."""
    global _default
    if not isinstance(strategy, Strategy):
        raise StrategyError(f"set_default_strategy expects epl.replicate(...) or "
                            f"epl.split(...), got {strategy!r}")
    _default = strategy
    # A scope of the model like any other: the devices it asks for and the
    # plan's report count it.
    if strategy not in used:
        used.append(strategy)


def reset():
    global _default
    _stack.clear()
    used.clear()
    _default = None
