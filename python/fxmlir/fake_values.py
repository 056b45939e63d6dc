"""The value FX recorded for a node: one rule for every module that reads it."""

from __future__ import annotations

from typing import Any


def fake_value(node: Any) -> Any:
    """A node's fake value: meta["val"] (AOTAutograd's and make_fx's graphs)
    or meta["example_value"] (Dynamo's); None when it has neither."""
    meta = getattr(node, "meta", {})
    return meta["val"] if "val" in meta else meta.get("example_value")
