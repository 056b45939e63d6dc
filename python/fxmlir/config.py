"""Settings of a round trip: from FXMLIR_* environment variables, overridden
by `torch.compile(..., options={...})` or `fxmlir.backend(...)` keywords.

| variable              | option     | accepted values                              | default |
|-----------------------|------------|----------------------------------------------|---------|
| FXMLIR_ROUND_TRIP     |            | 0, 1 (read at each torch.compile call)       | 0       |
| FXMLIR_PASSES         | passes     | default, none, a,b,... (only these), -a,+b   | default |
|                       |            | (edits of each stage's default pipeline), or |         |
|                       |            | default,a,-b,+c; each pass at most once      |         |
| FXMLIR_STAGES         | stages     | comma list of before_autodiff, forward,      | all     |
|                       |            | backward, each at most once                  |         |
| FXMLIR_DUMP_DIR       | dump_dir   | a directory (created if missing)             | unset   |
| FXMLIR_LOG_LEVEL      | log_level  | removed: TORCH_LOGS=fxmlir or +fxmlir        |         |
| FXMLIR_CUDA_GRAPHS    | cudagraphs | 0, 1 (option: False, True)                   | 0       |
| FXMLIR_CODEGEN_FUSERS | codegen    | 0, 1 (option: False, True): JIT regions      | 0       |
|                       |            | after autodiff                               |         |
| FXMLIR_STRICT         | strict     | 0, 1 (option: False, True): a fallback       | 0       |
|                       |            | raises FallbackError instead of warning      |         |
| FXMLIR_CACHE_DIR      |            | a directory (created if missing)             | $XDG_CACHE_HOME/fxmlir or ~/.cache/fxmlir |

FXMLIR_ROUND_TRIP is read at each torch.compile call; the others each time
a graph is compiled. fxmlir logs through torch._logging (fxmlir/logs.py).

Every value is checked where it is given (when the environment is read, or
when `fxmlir.backend(...)` is called); a bad one is an error quoting the
variable or option as given and saying what it accepts. A directory that
cannot be written is no error: dumps, and the JIT's disk cache, warn once and
the compile goes on without them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from fxmlir.passes import Selection

STAGES = ("before_autodiff", "forward", "backward")
OPTIONS = ("passes", "stages", "dump_dir", "codegen", "cudagraphs", "strict")
# Settings that were removed, and what replaced them.
REMOVED = {
    "FXMLIR_LOG_LEVEL": "fxmlir logs through torch._logging: TORCH_LOGS=fxmlir for info, "
                        "TORCH_LOGS=+fxmlir for debug",
    "log_level": "fxmlir logs through torch._logging: TORCH_LOGS=fxmlir for info, "
                 "TORCH_LOGS=+fxmlir for debug, or torch._logging.set_logs(fxmlir=...)",
}


def _removed(what: str) -> ValueError:
    return ValueError(f"{what} was removed: {REMOVED[what]}")


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
    return _choice("FXMLIR_ROUND_TRIP", environ.get("FXMLIR_ROUND_TRIP", "0"),
                   ("0", "1")) == "1"


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
    """A switch: a bool option, or "0"/"1" from the environment."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _choice(what, value, ("0", "1")) == "1"
    raise TypeError(f"{what} must be True or False, got {type(value).__name__} {value!r}")


def _default_selection() -> Selection:
    from fxmlir.passes import Selection

    return Selection()


def parse_codegen(what: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be True or False, got {type(value).__name__} {value!r}")
    return value


_PARSERS = {"passes": parse_passes, "stages": parse_stages, "dump_dir": parse_dump_dir,
            "codegen": parse_codegen, "cudagraphs": parse_flag, "strict": parse_flag}


@dataclass(frozen=True)
class Options:
    passes: Selection = field(default_factory=_default_selection)
    stages: frozenset[str] = field(default_factory=lambda: frozenset(STAGES))
    dump_dir: Path | None = None
    codegen: bool = False
    cudagraphs: bool = False
    # A fallback raises (CI): fxmlir.roundtrip.FallbackError.
    strict: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> "Options":
        # FXMLIR_CACHE_DIR is the JIT's, in the core: a cache it cannot
        # write keeps compiled code in memory, with one warning.
        if "FXMLIR_LOG_LEVEL" in environ:
            raise _removed("FXMLIR_LOG_LEVEL")
        return cls(
            passes=parse_passes("FXMLIR_PASSES", environ.get("FXMLIR_PASSES", "default")),
            stages=parse_stages("FXMLIR_STAGES", environ.get("FXMLIR_STAGES", ",".join(STAGES))),
            dump_dir=parse_dump_dir("FXMLIR_DUMP_DIR", environ.get("FXMLIR_DUMP_DIR")),
            codegen=_choice("FXMLIR_CODEGEN_FUSERS",
                            environ.get("FXMLIR_CODEGEN_FUSERS", "0"), ("0", "1")) == "1",
            cudagraphs=parse_flag("FXMLIR_CUDA_GRAPHS", environ.get("FXMLIR_CUDA_GRAPHS", "0")),
            strict=parse_flag("FXMLIR_STRICT", environ.get("FXMLIR_STRICT", "0")),
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
                raise _removed(key)
            if key not in _PARSERS:
                raise ValueError(f"unknown fxmlir option {key!r}; accepted options: "
                                 f"{', '.join(OPTIONS)}")
            changes[key] = _PARSERS[key](f"option '{key}'", value)
        return replace(self, **changes)
