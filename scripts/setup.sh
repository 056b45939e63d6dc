#!/usr/bin/env bash
# Installs what fxmlir needs on a fresh Debian 12 machine, then builds and
# installs fxmlir itself. Idempotent: steps already done are skipped.
set -euo pipefail
export PIP_ROOT_USER_ACTION=ignore
cd "$(dirname "$0")/.."

APT_PACKAGES=(libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
              libgtest-dev graphviz zlib1g-dev libzstd-dev ninja-build cmake g++ chromium)
# A torch already installed that fxmlir supports (a CUDA build, say) is kept;
# only without one is torch pinned (scripts/torch_requirement.py: 2.13.0, a
# CPU build on local disk; an unpinned torch would download a CUDA build).
# transformers (the model zoo of tests/python/test_models.py) is resolved
# together with that torch, so it cannot pull another one. setuptools 77+
# writes License-Expression.
TORCH=$(python3 scripts/torch_requirement.py)
echo "setup: $TORCH"
PIP_PACKAGES=("$TORCH" pybind11==3.1.0 pytest==9.0.3 lit numpy "setuptools>=77" packaging
              transformers==5.23.0)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

python3 -m pip install -q "${PIP_PACKAGES[@]}"
# The build runs in build/ (kept between runs), so a rebuild is incremental;
# from scratch it takes about 4 minutes on 2 cores.
echo "setup: building and installing fxmlir"
python3 -m pip install -q --no-build-isolation --no-deps .
echo "setup: fxmlir installed ($(python3 -c 'import fxmlir, os; print(os.path.dirname(fxmlir.__file__))'))"
