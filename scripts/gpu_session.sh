#!/usr/bin/env bash
# The CUDA half of fxmlir on a GPU machine that has torch 2.11+cu130, nvcc,
# cmake and ninja but no MLIR: builds the torch parts against a prebuilt
# core, then runs the CUDA tests, the benchmark suite and a profile.
#
#   bash scripts/gpu_session.sh PHASE...      (from the repository root)
#
# PHASE: build | test | bench-kernels | bench-steps | profile | all
#   build          pip-installs fxmlir into /tmp/fxmlir-site (CUDA kernels for
#                  sm_90); the core comes from build/package/fxmlir, built
#                  where MLIR is (bash scripts/setup.sh) and carried along
#   test           the pytest suite's op, fusion, backend and settings tests,
#                  CUDA variants included (lit tests need no GPU: CI runs them)
#   bench-kernels  python -m benchmarks --device cuda --only ops,linear,roundtrip
#   bench-steps    python -m benchmarks --device cuda --only mlp,gpt2
#   profile        torch.profiler tables of the MLP block's bf16 step
# Each phase builds first if this machine has no build yet. Logs and the
# files to commit (docs/benchmarks.md, docs/benchmarks-cuda.*) go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fxmlir-out}
SITE=/tmp/fxmlir-site
mkdir -p "$OUT"
export PYTHONPATH=$SITE PYTHONUNBUFFERED=1

build() {
  [ -f "$SITE/fxmlir/libfxmlir_ops.so" ] && return 0
  [ -f build/package/fxmlir/libFxmlirCore.so ] || {
    echo "no build/package/fxmlir/libFxmlirCore.so: carry the core built by scripts/setup.sh"
    return 1
  }
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
  python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)" |
    tee -a "$OUT/gpu.txt"
  FXMLIR_BUILD_DIR=/tmp/fxmlir-build \
  FXMLIR_CMAKE_ARGS="-DFXMLIR_BUILD_CORE=OFF -DFXMLIR_PREBUILT_CORE=$PWD/build/package/fxmlir -DFXMLIR_BUILD_TESTS=OFF" \
  CMAKE_BUILD_PARALLEL_LEVEL=16 \
    python3 -m pip install --no-build-isolation --no-deps --no-compile --target "$SITE" . \
    >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; return 1; }
  rm -rf python/fxmlir.egg-info
  python3 -c "import torch, fxmlir.ops; assert torch.cuda.is_available(); print('fxmlir ops loaded')"
}

run_tests() {
  build || return 1
  (cd tests/python && python3 -m pytest -q -p no:cacheprovider -rs \
    test_fused_ops.py test_backend.py test_fusion.py test_config.py 2>&1) |
    tee "$OUT/pytest.log" | tail -15
}

bench() {
  build || return 1
  python3 -m benchmarks --device cuda --only "$1" 2>&1 | tee "$OUT/bench-$2.log" | tail -60
  cp docs/benchmarks.md docs/benchmarks-cuda.json "$OUT"/
  [ -f docs/benchmarks-cuda.png ] && cp docs/benchmarks-cuda.png "$OUT"/
  return 0
}

profile() {
  build || return 1
  python3 - <<'PY' 2>&1 | tee "$OUT/profile.txt" | tail -40
import torch, fxmlir
from torch.profiler import ProfilerActivity, profile
from benchmarks.suites import mlp_block
torch.manual_seed(0)
model = mlp_block("none").cuda().bfloat16()
x = torch.randn(16, 512, 1024, device="cuda", dtype=torch.bfloat16)
for name, fn in (("eager", model), ("fxmlir", torch.compile(model, backend="fxmlir")),
                 ("fxmlir cudagraphs", torch.compile(model, backend=fxmlir.backend(cudagraphs=True)))):
    for _ in range(5):
        fn(x).sum().backward()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            fn(x).sum().backward()
        torch.cuda.synchronize()
    print(f"=== {name}: 5 bf16 steps")
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25))
PY
}

[ $# -gt 0 ] || set -- all
for phase in "$@"; do
  case $phase in
    build) build ;;
    test) run_tests ;;
    bench-kernels) bench ops,linear,roundtrip kernels ;;
    bench-steps) bench mlp,gpt2 steps ;;
    profile) profile ;;
    all) run_tests; bench ops,linear,roundtrip kernels; bench mlp,gpt2 steps; profile ;;
    *) echo "unknown phase $phase"; exit 2 ;;
  esac
done
