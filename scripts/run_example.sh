#!/usr/bin/env bash
# Sets up (scripts/setup.sh), then trains the example MLP block through
# fxmlir and prints where the IR dumps are.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 examples/train_mlp.py --dump-dir fxmlir-dumps "$@"
