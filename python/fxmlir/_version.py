"""fxmlir's version and the torch versions it supports, read by setup.py
too (so this file imports nothing)."""

__version__ = "0.1.0"

# The torch releases this source builds against and is tested with: 2.11 on
# the GPU machine, 2.13 in CI. A built package requires the exact torch it
# was built against, whose C++ ABI its op library uses.
SUPPORTED_TORCH = ">=2.11,<2.14"
