#!/usr/bin/env bash
# Sets up (scripts/setup.sh), then runs the example through fxmlir.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
FXMLIR_OPT=$(python3 -c 'import fxmlir, os; print(os.path.join(os.path.dirname(fxmlir.__file__), "fxmlir-opt"))')
"$FXMLIR_OPT" examples/bias_gelu.mlir --canonicalize
