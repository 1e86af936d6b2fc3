"""epl.Config: EPL's configuration, validated as epl-opt validates epl.config.

The keys, kinds, ranges and defaults come from config_schema.json, which
epl-config-doc generates from the compiler's schema (a test keeps the copy
fresh), so the frontend and the compiler never disagree.

    config = epl.Config({"pipeline.num_micro_batch": 4})

A key may also be set by EPL's environment-variable form, EPL_<SECTION>_<KEY>
(e.g. EPL_PIPELINE_NUM_MICRO_BATCH=4); values in the dictionary win.
"""

import difflib
import math
import json
import os

from .errors import ConfigError

with open(os.path.join(os.path.dirname(__file__), "config_schema.json")) as f:
    SCHEMA = {entry["name"]: entry for entry in json.load(f)}


def env_name(key):
    return "EPL_" + key.replace(".", "_").upper()


def _parse_default(entry):
    text = entry["default"]
    if text.startswith('"'):
        return text.strip('"')
    if entry["kind"] == "boolean":
        return text == "true"
    if entry["kind"] == "integer":
        return int(text)
    return float(text)


def _from_env(key, text):
    entry = SCHEMA[key]
    kind = entry["kind"]
    try:
        if kind == "boolean":
            lowered = text.strip().lower()
            if lowered not in ("true", "false", "1", "0"):
                raise ValueError
            return lowered in ("true", "1")
        if kind == "integer":
            return int(text)
        if kind == "number":
            return text if text in entry["allowed"] else float(text)
    except ValueError:
        raise ConfigError(f"environment variable {env_name(key)}={text!r}: "
                          f"EPL config key \"{key}\" expects {_describe(entry)}") from None
    return text


def _describe(entry):
    kind = entry["kind"]
    if kind == "string" and entry["allowed"]:
        return "one of " + ", ".join(f'"{v}"' for v in entry["allowed"])
    text = {"integer": "an integer", "number": "a number",
            "boolean": "a boolean", "string": "a string"}[kind]
    if kind == "number" and entry["allowed"]:
        text += " or one of " + ", ".join(f'"{v}"' for v in entry["allowed"])
    return text


def _plain(value):
    """A numpy scalar (np.float32(0.1), np.int64(2), np.bool_(True)) as the
    Python number it holds; anything else as it is."""
    if type(value).__module__ == "numpy" and hasattr(value, "item") and \
            getattr(value, "shape", None) == ():
        return value.item()
    return value


def validate(key, value):
    """Checks one key and value; raises ConfigError like the compiler."""
    if not isinstance(key, str):
        raise ConfigError(f'EPL config keys are strings such as "optimizer.lr", '
                          f"got {key!r} ({type(key).__name__})")
    entry = SCHEMA.get(key)
    if entry is None:
        near = difflib.get_close_matches(key, SCHEMA, n=1)
        hint = f'; did you mean "{near[0]}"?' if near else \
            "; valid keys are " + ", ".join(f'"{k}"' for k in SCHEMA)
        raise ConfigError(f'unknown EPL config key "{key}"{hint}')
    kind = entry["kind"]
    ok = {
        "boolean": isinstance(value, bool),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": (isinstance(value, (int, float)) and not isinstance(value, bool))
        or (isinstance(value, str) and value in entry["allowed"]),
        "string": isinstance(value, str),
    }[kind]
    if not ok:
        raise ConfigError(f'EPL config key "{key}" expects {_describe(entry)}, '
                          f"got {value!r} ({type(value).__name__})")
    if kind == "string" and entry["allowed"] and value not in entry["allowed"]:
        raise ConfigError(f'EPL config key "{key}" expects {_describe(entry)}, '
                          f"got {value!r}")
    if kind == "integer" and not -2**63 <= value < 2**63:
        raise ConfigError(f'EPL config key "{key}" must fit in 64 bits, got {value!r}')
    if kind in ("integer", "number") and not isinstance(value, str):
        if kind == "number" and isinstance(value, int):
            try:
                float(value)
            except OverflowError:
                raise ConfigError(f'EPL config key "{key}" must be a finite number, '
                                  f"got {value!r}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f'EPL config key "{key}" must be a finite number, '
                              f"got {value!r}")
        low = entry.get("min")
        if low is not None:
            bad = value <= low if entry.get("min_exclusive") else value < low
            if bad:
                word = "greater than" if entry.get("min_exclusive") else "at least"
                raise ConfigError(f'EPL config key "{key}" must be {word} {low:g}, '
                                  f"got {value!r}")
        high = entry.get("max_exclusive")
        if high is not None and value >= high:
            raise ConfigError(f'EPL config key "{key}" must be less than {high:g}, '
                              f"got {value!r}")
    missing = entry.get("not_implemented")
    if missing and value != _parse_default(entry):
        raise ConfigError(f'EPL config key "{key}" = {value!r} is not implemented yet '
                          f'({missing}); remove it or set it to its default '
                          f'{entry["default"]}')


# EPL's config sections (EPL's epl/config.py) with no key here: a variable
# of one (EPL_IO_SLICING) is EPL's, and ignoring it would change nothing
# without a word.
_EPL_ONLY_SECTIONS = ("io",)


def _check_environment():
    """An EPL_<SECTION>_... variable of one of EPL's config sections that
    names no key here (a misspelling, or a key EPL-MLIR does not have) would
    be ignored: it is an error, as an unknown key in the dictionary is."""
    names = {env_name(key): key for key in SCHEMA}
    sections = {key.split(".")[0] for key in SCHEMA} | set(_EPL_ONLY_SECTIONS)
    prefixes = tuple("EPL_" + section.upper() + "_" for section in sections)
    for name in sorted(os.environ):
        if name.startswith(prefixes) and name not in names:
            near = difflib.get_close_matches(name, names, n=1)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise ConfigError(f"environment variable {name} names no EPL config key{hint}")


class Config:
    """EPL's configuration: a validated dictionary of "section.key" values."""

    def __init__(self, param_dict=None):
        self._values = {}
        _check_environment()
        for key in SCHEMA:
            text = os.environ.get(env_name(key))
            if text is not None:
                value = _from_env(key, text)
                try:
                    validate(key, value)
                except ConfigError as e:
                    message = str(e).removesuffix(f" (at {e.location})")
                    raise ConfigError(f"environment variable {env_name(key)}={text!r}: "
                                      f"{message}", e.location) from None
                self._values[key] = value
        for key, value in (param_dict or {}).items():
            value = _plain(value)
            validate(key, value)
            # A number given as an integer is written as one (f64): past 64
            # bits, an integer was an MLIR error in a temporary file.
            if SCHEMA[key]["kind"] == "number" and isinstance(value, int) and \
                    not isinstance(value, bool):
                value = float(value)
            self._values[key] = value

    def __getitem__(self, key):
        if key not in SCHEMA:
            validate(key, None)  # raises: unknown key, with a suggestion
        return self._values.get(key, _parse_default(SCHEMA[key]))

    def get(self, key, default=None):
        return self[key] if key in self._values or default is None else default

    def items(self):
        """The keys set explicitly (by the dictionary or the environment)."""
        return dict(self._values).items()

    def __repr__(self):
        return f"epl.Config({self._values!r})"
