#!/usr/bin/env bash
# The CUDA half of fxmlir on a GPU machine that has torch 2.11+cu130, nvcc,
# cmake and ninja but no MLIR: builds the torch parts against a prebuilt
# core, then runs the CUDA tests, the benchmark suite and a profile.
#
#   bash scripts/gpu_session.sh PHASE...      (from the repository root)
#
# PHASE: pack | build | test | bench-kernels | bench-steps | profile | all
#   pack           (here, where MLIR is) compresses the core into
#                  build/fxmlir-core.tar.xz (about 16 MB): the core itself
#                  (about 69 MB) is over the device tool's 64 MiB carry limit;
#                  carry build/fxmlir-core.tar.xz, build unpacks it
#   build          pip-installs fxmlir into /tmp/fxmlir-site (CUDA kernels for
#                  sm_90); the core comes from build/package/fxmlir, built
#                  where MLIR is (bash scripts/setup.sh) and carried along
#   test           the whole pytest suite, CUDA variants included (lit and
#                  GoogleTest need no GPU: CI runs them)
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

CORE_ARCHIVE=build/fxmlir-core.tar.xz

pack() {
  [ -f build/package/fxmlir/libFxmlirCore.so ] || bash scripts/setup.sh || return 1
  python3 -c "import sys, tarfile
with tarfile.open(sys.argv[1], 'w:xz') as archive:
    for name in ('libFxmlirCore.so', 'fxmlir-opt'):
        archive.add('build/package/fxmlir/' + name)" "$CORE_ARCHIVE" && ls -l "$CORE_ARCHIVE"
}

build() {
  [ -f "$SITE/fxmlir/libfxmlir_ops.so" ] && return 0
  if [ ! -f build/package/fxmlir/libFxmlirCore.so ] && [ -f "$CORE_ARCHIVE" ]; then
    python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(filter='data')" \
      "$CORE_ARCHIVE" || return 1
  fi
  [ -f build/package/fxmlir/libFxmlirCore.so ] || {
    echo "no build/package/fxmlir/libFxmlirCore.so: carry $CORE_ARCHIVE (scripts/gpu_session.sh pack)"
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
  (cd tests/python && python3 -m pytest -q -p no:cacheprovider -rs 2>&1) |
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
    pack) pack ;;
    build) build ;;
    test) run_tests ;;
    bench-kernels) bench ops,linear,roundtrip kernels ;;
    bench-steps) bench mlp,gpt2 steps ;;
    profile) profile ;;
    all) run_tests; bench ops,linear,roundtrip kernels; bench mlp,gpt2 steps; profile ;;
    *) echo "unknown phase $phase"; exit 2 ;;
  esac
done
