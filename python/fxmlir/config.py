"""Settings of a round trip: from FXMLIR_* environment variables, overridden
by `torch.compile(..., options={...})` or `fxmlir.backend(...)` keywords.

| variable              | option     | accepted values                              | default |
|-----------------------|------------|----------------------------------------------|---------|
| FXMLIR_ROUND_TRIP     |            | a switch (read at each torch.compile call)   | 0       |
| FXMLIR_PASSES         | passes     | default, none, a,b,... (only these), -a,+b   | default |
|                       |            | (edits of each stage's default pipeline), or |         |
|                       |            | default,a,-b,+c; each pass at most once      |         |
| FXMLIR_STAGES         | stages     | comma list of before_autodiff, forward,      | all     |
|                       |            | backward, each at most once                  |         |
| FXMLIR_DUMP_DIR       | dump_dir   | a directory (created if missing)             | unset   |
| FXMLIR_CUDA_GRAPHS    | cudagraphs | a switch                                     | 0       |
| FXMLIR_CODEGEN_FUSERS | codegen    | a switch: JIT regions after autodiff, on     | unset   |
|                       |            | CPU and CUDA tensors; unset: with the        |         |
|                       |            | default pipelines (not with an explicit      |         |
|                       |            | list of passes)                              |         |
| FXMLIR_STRICT         | strict     | a switch: a fallback raises FallbackError    | 0       |
|                       |            | instead of warning                           |         |
| FXMLIR_EAGER_RANDOM   | eager_random | a switch: fused dropouts draw eager's masks | 0       |
|                       |            | (seeded runs match eager; a mask-drawing     |         |
|                       |            | pass more per dropout)                       |         |
| FXMLIR_GRAPH_PROGRAMS | graph_programs | a switch: compiled graphs' bodies run as | 1       |
|                       |            | C++ op calls (fxmlir/graph_program.py); off: |         |
|                       |            | as their generated Python                    |         |
| FXMLIR_CACHE_DIR      |            | a directory (created if missing)             | $XDG_CACHE_HOME/fxmlir or ~/.cache/fxmlir |

Warm restarts keep each compiled step in torch's AOTAutograd cache
(fxmlir/stage_cache.py; torch's TORCHINDUCTOR_AUTOGRAD_CACHE=0 turns it off).

Removed: FXMLIR_LOG_LEVEL (option log_level), ignored with a warning; use
TORCH_LOGS=fxmlir or +fxmlir (REMOVED).

A switch is True or False as an option; in the environment (or as a string
option) 0, 1, true, false, yes, no, on or off, in any case.

FXMLIR_ROUND_TRIP is read at each torch.compile call; the others each time
a graph is compiled. fxmlir logs through torch._logging (fxmlir/logs.py).

Every value is checked where it is given (when the environment is read, or
when `fxmlir.backend(...)` or `torch.compile(..., backend="fxmlir",
options=...)` is called: the startup hook checks the latter, fxmlir/_autoload.py);
a bad one is an error quoting the variable or option as given and saying what
it accepts, an unknown option name one that suggests the closest. A removed
setting warns once per process and is ignored. A directory that
cannot be written is no error: dumps, and the JIT's disk cache, warn once and
the compile goes on without them.
"""

from __future__ import annotations

import difflib
import os
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence, TypedDict

if TYPE_CHECKING:
    from fxmlir.passes import Selection

STAGES = ("before_autodiff", "forward", "backward")


class BackendOptions(TypedDict, total=False):
    """The options of `fxmlir.backend(...)` and `torch.compile(...,
    backend="fxmlir", options={...})`; the table above says what each
    accepts. A switch is a bool or one of TRUE / FALSE."""

    passes: str | Sequence[str]
    stages: str | Sequence[str]
    dump_dir: str | os.PathLike[str]
    codegen: bool | str
    cudagraphs: bool | str
    strict: bool | str
    eager_random: bool | str
    graph_programs: bool | str


OPTIONS = tuple(BackendOptions.__annotations__)
# Settings that were removed, and what replaced them.
REMOVED = {
    "FXMLIR_LOG_LEVEL": "fxmlir logs through torch._logging: TORCH_LOGS=fxmlir for info, "
                        "TORCH_LOGS=+fxmlir for debug",
    "log_level": "fxmlir logs through torch._logging: TORCH_LOGS=fxmlir for info, "
                 "TORCH_LOGS=+fxmlir for debug, or torch._logging.set_logs(fxmlir=...)",
}
# Spellings of a switch's values (case-insensitive).
TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


class RemovedSettingWarning(UserWarning):
    """A removed setting was given: it is ignored."""


# The removed settings already warned of: once each per process.
_warned_removed: set[str] = set()


def _warn_removed(what: str) -> None:
    if what not in _warned_removed:
        _warned_removed.add(what)
        warnings.warn(f"fxmlir: {what} was removed and is ignored: {REMOVED[what]}",
                      RemovedSettingWarning, stacklevel=3)


def _choice(what: str, value: str, accepted: tuple[str, ...]) -> str:
    if value not in accepted:
        raise ValueError(f"{what}={value!r} is invalid; accepted values: "
                         f"{', '.join(accepted)}")
    return value


def _text(what: str, value: Any, accepted: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be {accepted}, got {type(value).__name__} {value!r}")
    return value


def _names(what: str, value: Any, accepted: str) -> list[str]:
    """A comma-separated string or a list/tuple of strings, as a list."""
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value]
    return [v.strip() for v in _text(what, value, accepted).split(",")]


def round_trip_enabled(environ: Mapping[str, str] = os.environ) -> bool:
    return parse_flag("FXMLIR_ROUND_TRIP", environ.get("FXMLIR_ROUND_TRIP", "0"))


def parse_stages(what: str, value: Any) -> frozenset[str]:
    accepted = f"a comma-separated string or a list of {', '.join(STAGES)}, each at most once"
    items = _names(what, value, accepted)
    if not any(items):
        raise ValueError(f"{what}={value!r} selects no stage; accepted values: {accepted} "
                         "(to turn fxmlir off, do not route torch.compile to it)")
    for index, item in enumerate(items):
        if item not in STAGES:
            problem = "an empty stage name" if not item else f"{item!r}, not a stage"
            raise ValueError(f"{what}={value!r} is invalid: it has {problem}; accepted "
                             f"values: {accepted}")
        if item in items[:index]:
            raise ValueError(f"{what}={value!r} is invalid: it names {item!r} twice; "
                             f"accepted values: {accepted}")
    return frozenset(items)


def parse_passes(what: str, value: Any) -> Selection:
    from fxmlir import passes  # imports the core; keep config itself light

    accepted = ("'default', 'none', or a comma-separated string or list of pass names "
                "(or of -name/+name edits to the default pipeline)")
    return passes.parse_selection(_names(what, value, accepted), what, value)


def parse_dump_dir(what: str, value: Any) -> Path | None:
    """The directory dumps go to (created at the first dump), or None for
    none. Only its type is checked: whether it can be written is the state
    of the disk, which may change, and a dump that cannot be written warns
    and costs nothing else (fxmlir/dump.py)."""
    if value is None or value == "":
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{what} must be a directory path (str or os.PathLike), got "
                        f"{type(value).__name__} {value!r}")
    return Path(value)


def parse_flag(what: str, value: Any) -> bool:
    """A switch: a bool, or a string from TRUE or FALSE in any case."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        if value.lower() not in TRUE + FALSE:
            raise ValueError(f"{what}={value!r} is invalid; accepted values: "
                             f"{', '.join(TRUE + FALSE)} (any case)")
        return value.lower() in TRUE
    raise TypeError(f"{what} must be True or False, got {type(value).__name__} {value!r}")


def _default_selection() -> Selection:
    from fxmlir.passes import Selection

    return Selection()


_PARSERS = {"passes": parse_passes, "stages": parse_stages, "dump_dir": parse_dump_dir,
            "codegen": parse_flag, "cudagraphs": parse_flag, "strict": parse_flag,
            "eager_random": parse_flag, "graph_programs": parse_flag}


@dataclass(frozen=True)
class Options:
    passes: Selection = field(default_factory=_default_selection)
    stages: frozenset[str] = field(default_factory=lambda: frozenset(STAGES))
    dump_dir: Path | None = None
    # JIT regions after autodiff on CPU and CUDA tensors, where the cost
    # model says they pay: True always, None (the default) with the default
    # pipelines, False never.
    codegen: bool | None = None
    cudagraphs: bool = False
    # A fallback raises (CI): fxmlir.fallback.FallbackError.
    strict: bool = False
    # Fused random ops draw eager's dropout masks from torch's generator
    # (fxmlir-eager-random), so seeded runs give eager's losses.
    eager_random: bool = False
    # Compiled graphs' bodies run as C++ op calls where they can
    # (fxmlir/graph_program.py); False: as their generated Python.
    graph_programs: bool = True

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> "Options":
        # FXMLIR_CACHE_DIR is the JIT's, in the core: a cache it cannot
        # write keeps compiled code in memory, with one warning.
        if "FXMLIR_LOG_LEVEL" in environ:
            _warn_removed("FXMLIR_LOG_LEVEL")
        return cls(
            passes=parse_passes("FXMLIR_PASSES", environ.get("FXMLIR_PASSES", "default")),
            stages=parse_stages("FXMLIR_STAGES", environ.get("FXMLIR_STAGES", ",".join(STAGES))),
            dump_dir=parse_dump_dir("FXMLIR_DUMP_DIR", environ.get("FXMLIR_DUMP_DIR")),
            codegen=(parse_flag("FXMLIR_CODEGEN_FUSERS", environ["FXMLIR_CODEGEN_FUSERS"])
                     if "FXMLIR_CODEGEN_FUSERS" in environ else None),
            cudagraphs=parse_flag("FXMLIR_CUDA_GRAPHS", environ.get("FXMLIR_CUDA_GRAPHS", "0")),
            strict=parse_flag("FXMLIR_STRICT", environ.get("FXMLIR_STRICT", "0")),
            eager_random=parse_flag("FXMLIR_EAGER_RANDOM",
                                    environ.get("FXMLIR_EAGER_RANDOM", "0")),
            graph_programs=parse_flag("FXMLIR_GRAPH_PROGRAMS",
                                      environ.get("FXMLIR_GRAPH_PROGRAMS", "1")),
        )

    def updated(self, overrides: Mapping[str, Any] | None) -> "Options":
        """These options with backend options applied (same names as the
        fields)."""
        if not overrides:
            return self
        if not isinstance(overrides, Mapping):
            raise TypeError(f"fxmlir options must be a dict, got {type(overrides).__name__}")
        changes: dict[str, Any] = {}
        for key, value in overrides.items():
            if key in REMOVED:
                _warn_removed(key)
                continue
            if key not in _PARSERS:
                close = difflib.get_close_matches(str(key), OPTIONS, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(f"unknown fxmlir option {key!r}{hint}; accepted options: "
                                 f"{', '.join(OPTIONS)}")
            changes[key] = _PARSERS[key](f"option '{key}'", value)
        return replace(self, **changes)
