"""Exceptions of the EPL frontend. Every error raised while a model is being
described names the thing at fault and the user's line that caused it."""

import os
import sys
import traceback

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def user_frame():
    """The innermost frame outside this package (a traceback.FrameSummary),
    or None. Called for every op the frontend emits: it walks the frames
    without reading any source line."""
    for frame, lineno in traceback.walk_stack(sys._getframe(1)):
        if not os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
            return traceback.StackSummary.extract([(frame, lineno)],
                                                  lookup_lines=False)[0]
    return None


def user_location():
    """'file.py:12' of the innermost frame outside this package."""
    frame = user_frame()
    return f"{frame.filename}:{frame.lineno}" if frame else "<unknown>"


def plain_name(name):
    """Whether `name` is a non-empty string of printable characters without
    quotes or backslashes: what the frontend prints into the module's
    strings as it is (a tensor's `epl.name`, a scope's name)."""
    return isinstance(name, str) and bool(name) and name.isprintable() and \
        not any(c in name for c in '"\\')


#: What a name that is not `plain_name` is told.
PLAIN_NAME = "a non-empty string of printable characters without quotes or backslashes"


class EPLError(Exception):
    """A mistake in how EPL is used; the message ends with the user's line."""

    def __init__(self, message, location=None):
        self.location = location or user_location()
        super().__init__(f"{message} (at {self.location})")


class ConfigError(EPLError):
    """An unknown epl.Config key, or a value of the wrong type or range."""


class StrategyError(EPLError):
    """A strategy scope used against EPL's rules (e.g. nested in a split)."""


class DTypeError(EPLError):
    """Tensors of different float types meet in one op."""


class ShapeError(EPLError):
    """Tensors whose shapes do not fit the layer or op they are given to."""


class ToolError(Exception):
    """epl-opt or epl-run failed; carries the tool's own message."""

    def __init__(self, tool, returncode, output):
        self.tool, self.returncode, self.output = tool, returncode, output
        lines = [l for l in output.strip().splitlines() if l.strip()]
        detail = "\n".join(lines[-20:]) if lines else "(no output)"
        super().__init__(f"{tool} failed with exit code {returncode}:\n{detail}")

    def renamed(self, names):
        """This error with each file path in `names` replaced by what it
        is to the user (a temporary file the frontend wrote means nothing
        once it is gone)."""
        output = self.output
        for path, name in names.items():
            output = output.replace(str(path), name)
        return ToolError(self.tool, self.returncode, output)


class EPLWarning(UserWarning):
    """A tool succeeded but warned (e.g. epl.checkpoint marks that the
    config's gradient_checkpoint.type does not read)."""
