"""FXMLIR_ROUND_TRIP=1: route torch.compile through fxmlir with no code change.

Imported at interpreter startup by the fxmlir-autoload.pth file installed
with the package. When the variable is unset this imports nothing else.
"""

import os


def _route_torch_compile() -> None:
    import functools
    import logging

    import torch

    original = torch.compile
    log = logging.getLogger("fxmlir")

    @functools.wraps(original)
    def compile(*args, **kwargs):
        from fxmlir.config import round_trip_enabled

        round_trip_enabled()  # a bad value is an error naming the variable
        backend = kwargs.get("backend", "inductor")
        if isinstance(backend, str):
            kwargs["backend"] = "fxmlir"
            if backend not in ("inductor", "fxmlir"):
                log.warning("FXMLIR_ROUND_TRIP=1: backend %r replaced by fxmlir", backend)
            # Options and modes meant for another backend don't apply.
            if backend != "fxmlir":
                kwargs.pop("options", None)
                kwargs.pop("mode", None)
        else:
            log.warning("FXMLIR_ROUND_TRIP=1: custom backend %r left in place", backend)
        return original(*args, **kwargs)

    torch.compile = compile


if os.environ.get("FXMLIR_ROUND_TRIP", "0") != "0":
    _route_torch_compile()
