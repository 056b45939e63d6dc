"""The text of one function of a printed module: all that an mlir_jit call of
a region needs. Torch-free, for the `fxmlir` command too."""

from __future__ import annotations


def function_text(module_text: str, name: str) -> str | None:
    """`func.func private @name` of a module laid out as the core prints it
    (functions indented 2 spaces, so the first `  }` line ends it); None
    when it has no such function there."""
    start = module_text.find(f"\n  func.func private @{name}(")
    end = module_text.find("\n  }\n", start)
    if start < 0 or end < 0:
        return None
    return module_text[start + len("\n  "):end + len("\n  }\n")]
