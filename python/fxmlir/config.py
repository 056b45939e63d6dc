"""Settings of a round trip: from FXMLIR_* environment variables, overridden
by `torch.compile(..., options={...})` or `fxmlir.backend(...)` keywords.

| variable              | accepted values                          | default |
|-----------------------|------------------------------------------|---------|
| FXMLIR_ROUND_TRIP     | 0, 1                                     | 0       |
| FXMLIR_PASSES         | default, none, a,b,... or -a,+b          | default |
| FXMLIR_STAGES         | comma list of before_autodiff, forward,  | all     |
|                       | backward                                 |         |
| FXMLIR_DUMP_DIR       | a directory                              | unset   |
| FXMLIR_LOG_LEVEL      | debug, info, warning, error              | warning |
| FXMLIR_CODEGEN_FUSERS | 0                                        | 0       |
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

STAGES = ("before_autodiff", "forward", "backward")
LOG_LEVELS = ("debug", "info", "warning", "error")


def _choice(variable: str, value: str, accepted: tuple[str, ...]) -> str:
    if value not in accepted:
        raise ValueError(f"{variable}={value!r} is invalid; accepted values: "
                         f"{', '.join(accepted)}")
    return value


def round_trip_enabled(environ: Mapping[str, str] = os.environ) -> bool:
    return _choice("FXMLIR_ROUND_TRIP", environ.get("FXMLIR_ROUND_TRIP", "0"),
                   ("0", "1")) == "1"


def _stages(variable: str, value: str | list[str] | tuple[str, ...]) -> frozenset[str]:
    items = value.split(",") if isinstance(value, str) else list(value)
    items = [s.strip() for s in items if s.strip()]
    for item in items:
        _choice(variable, item, STAGES)
    return frozenset(items)


@dataclass(frozen=True)
class Options:
    passes: tuple[str, ...] | None = None  # None: the default pipeline
    stages: frozenset[str] = field(default_factory=lambda: frozenset(STAGES))
    dump_dir: Path | None = None
    log_level: str = "warning"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> "Options":
        from fxmlir import passes  # imports the core; keep config itself light

        codegen = environ.get("FXMLIR_CODEGEN_FUSERS", "0")
        _choice("FXMLIR_CODEGEN_FUSERS", codegen, ("0",))
        dump = environ.get("FXMLIR_DUMP_DIR")
        return cls(
            passes=passes.parse_selection(environ.get("FXMLIR_PASSES", "default")),
            stages=_stages("FXMLIR_STAGES", environ.get("FXMLIR_STAGES", ",".join(STAGES))),
            dump_dir=Path(dump) if dump else None,
            log_level=_choice("FXMLIR_LOG_LEVEL", environ.get("FXMLIR_LOG_LEVEL", "warning"),
                              LOG_LEVELS),
        )

    def updated(self, overrides: Mapping[str, Any] | None) -> "Options":
        """These options with backend options applied (same names as the
        fields; `passes` takes a spec string or a list of names)."""
        if not overrides:
            return self
        from fxmlir import passes

        changes: dict[str, Any] = {}
        for key, value in overrides.items():
            if key == "passes":
                spec = value if isinstance(value, str) else ",".join(value) or "none"
                changes[key] = passes.parse_selection(spec, "option 'passes'")
            elif key == "stages":
                changes[key] = _stages("option 'stages'", value)
            elif key == "dump_dir":
                changes[key] = Path(value) if value else None
            elif key == "log_level":
                changes[key] = _choice("option 'log_level'", value, LOG_LEVELS)
            else:
                raise ValueError(f"unknown fxmlir option {key!r}; accepted options: "
                                 "passes, stages, dump_dir, log_level")
        return replace(self, **changes)
