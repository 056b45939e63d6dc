"""`python -m fxmlir`: the fxmlir command (fxmlir/cli.py)."""

import sys

from fxmlir.cli import main

sys.exit(main())
