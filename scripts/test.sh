#!/usr/bin/env bash
# Sets up (scripts/setup.sh), then runs every test: lit + FileCheck on the
# passes and ops, GoogleTest on the C++ core, pytest on the Python package.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

BUILD_DIR=${FXMLIR_BUILD_DIR:-build}
echo "== lit"
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/mlir/test"
echo "== GoogleTest"
ctest --test-dir "$BUILD_DIR" --output-on-failure
echo "== pytest"
# Run from the tests folder so the installed package, not python/, is tested.
(cd tests/python && python3 -m pytest -q -rs "$@")
