#!/usr/bin/env bash
# fxmlir's CUDA half on a GPU machine lent for 15 minutes in all (torch
# 2.11+cu130, Python 3.12, nvcc, cmake, ninja, no MLIR, nothing to download).
# Everything that can be built elsewhere is built here, beforehand:
#
#   bash scripts/gpu_session.sh pack    (here, where MLIR is: about 6 minutes
#                                        the first time, a 4.7 GB venv)
#     builds the core and, against the GPU machine's torch (installed in
#     $FXMLIR_DEVICE_VENV, default /tmp/fxmlir-device-venv: its C++ libraries
#     are Python's version's alone), the torch op libraries with their CUDA
#     kernels for sm_90, and the graph program extension for its Python,
#     into build/gpu/fxmlir-prebuilt.tar.xz (about 20 MB);
#   then, on the GPU machine, with build/gpu carried along, one command:
#   bash scripts/gpu_session.sh run
#     build     pip-installs fxmlir into /tmp/fxmlir-site: only fxmlir._C is
#               compiled there (it needs that Python); without a usable
#               prebuilt torch op library, all of csrc is built there;
#     test      the tests a machine without CUDA skips (pytest --cuda-only);
#     steps     the training steps in bf16 autocast, with a torch.profiler
#               table per step (FXMLIR_BENCH_ONLY=gpt2: that step's rows alone);
#     then the f32 steps, the tiny step's overhead (bf16) and the
#     fused-kernel table; the fused LM loss's peak memory (bf16 autocast,
#     eager and fxmlir with and without it, benchmarks/memory.py) is the
#     phase `memory`, not in `run` (whose limits add up to the 10 minutes a
#     command may take);
# every phase with its own time limit, in that order of value, each log
# written to $OUT as it goes (8 files at most come back): a run cut short
# returns what it finished.
# Phases can also be run alone: bash scripts/gpu_session.sh build test ...
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fxmlir-out}
SITE=/tmp/fxmlir-site
PREBUILT=/tmp/fxmlir-prebuilt
ARCHIVE=build/gpu/fxmlir-prebuilt.tar.xz
DEVICE_TORCH=2.11.0
DEVICE_VENV=${FXMLIR_DEVICE_VENV:-/tmp/fxmlir-device-venv}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PIP_ROOT_USER_ACTION=ignore
START=$SECONDS

say() { echo "[gpu_session +$((SECONDS - START))s] $*" | tee -a "$OUT/session.log"; }

pack() {
  [ -f build/package/fxmlir/libFxmlirCore.so ] || bash scripts/setup.sh || return 1
  if [ ! -x "$DEVICE_VENV/bin/python" ]; then
    python3 -m venv "$DEVICE_VENV" &&
      "$DEVICE_VENV/bin/pip" install -q "torch==$DEVICE_TORCH" pybind11==3.1.0 numpy ||
      return 1
  fi
  local ops=build/device-ops
  cmake -S . -B "$ops" -G Ninja -DPython3_EXECUTABLE="$DEVICE_VENV/bin/python" \
    -DFXMLIR_BUILD_CORE=OFF -DFXMLIR_PREBUILT_CORE="$PWD/build/package/fxmlir" \
    -DFXMLIR_BUILD_TESTS=OFF >/dev/null &&
    cmake --build "$ops" --target fxmlir_ops fxmlir_jit_ops _graph_program || return 1
  mkdir -p build/gpu
  "$DEVICE_VENV/bin/python" -c "import torch; print(torch.__version__)" >build/gpu/torch.txt
  # The device's copy of .git is not this one's: its package records ours.
  git describe --always --dirty >build/gpu/commit.txt
  python3 - "$ARCHIVE" "$ops/package/fxmlir" build/gpu/torch.txt build/gpu/commit.txt <<'PY' || return 1
import glob, os, sys, tarfile
archive, ops, torch_version, commit = sys.argv[1:]
with tarfile.open(archive, "w:xz") as out:
    for name in ("libFxmlirCore.so", "fxmlir-opt"):
        out.add("build/package/fxmlir/" + name, name)
    for name in ("libfxmlir_ops.so", "libfxmlir_jit_ops.so"):
        out.add(f"{ops}/{name}", name)
    for path in glob.glob(f"{ops}/_graph_program.cpython-*.so"):  # for Python 3.12
        out.add(path, os.path.basename(path))
    out.add(torch_version, "torch.txt")
    out.add(commit, "commit.txt")
PY
  ls -l "$ARCHIVE"
  echo "carry build/gpu; run: bash scripts/gpu_session.sh run"
}

# Installs fxmlir into $SITE with the build options given and checks that
# its libraries load (a mismatch with this torch fails here).
install() {
  rm -rf "$SITE" /tmp/fxmlir-build
  FXMLIR_BUILD_DIR=/tmp/fxmlir-build FXMLIR_CMAKE_ARGS="$1" CMAKE_BUILD_PARALLEL_LEVEL=16 \
    FXMLIR_BUILD_COMMIT="$(cat "$PREBUILT/commit.txt" 2>/dev/null)" \
    python3 -m pip install --no-build-isolation --no-deps --no-compile --target "$SITE" . \
    >>/tmp/fxmlir-build.log 2>&1 || { tail -30 /tmp/fxmlir-build.log | tee -a "$OUT/session.log"; return 1; }
  rm -rf python/fxmlir.egg-info
  # $SITE as a site directory of this Python, so that its .pth (fxmlir's
  # startup hook: FXMLIR_ROUND_TRIP, torch.ops.fxmlir loading on first use)
  # runs as in an installed package; PYTHONPATH alone skips .pth files.
  local packages
  packages=$(python3 -c "import site; print(site.getsitepackages()[0])")
  echo "import site; site.addsitedir('$SITE')" >"$packages/fxmlir-site.pth" ||
    say "build: $packages is read-only: fxmlir's startup hook is off"
  PYTHONPATH=$SITE python3 -c "import torch, fxmlir.ops, fxmlir.jit_ops" 2>&1 |
    tee -a "$OUT/session.log"
}

build() {
  [ -f "$SITE/.built" ] && return 0
  say "build"
  { nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
    python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch',
torch.__version__, 'cuda', torch.version.cuda)"; nproc; } 2>&1 | tee -a "$OUT/session.log"
  local core="-DFXMLIR_BUILD_CORE=OFF -DFXMLIR_PREBUILT_CORE=$PREBUILT -DFXMLIR_BUILD_TESTS=OFF"
  [ -f "$ARCHIVE" ] || { say "no $ARCHIVE: run pack here and carry build/gpu"; return 1; }
  rm -rf "$PREBUILT" && mkdir -p "$PREBUILT" &&
    python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter='data')" \
      "$ARCHIVE" "$PREBUILT" || return 1
  local torch_here
  torch_here=$(python3 -c "import torch; print(torch.__version__)")
  if [ "$(cat "$PREBUILT/torch.txt")" = "$torch_here" ] &&
     install "$core -DFXMLIR_PREBUILT_TORCH_OPS=$PREBUILT"; then
    say "build: done (prebuilt torch op libraries)"
  else
    say "build: the prebuilt op libraries (torch $(cat "$PREBUILT/torch.txt")) do not load" \
        "with torch $torch_here: building csrc here"
    install "$core" || return 1
    say "build: done (csrc built here)"
  fi
  touch "$SITE/.built"
  # One fused CUDA kernel against eager before anything else.
  PYTHONPATH=$SITE python3 -c "
import torch, fxmlir.ops
x = torch.randn(64, 32, device='cuda'); b = torch.randn(32, device='cuda')
torch.testing.assert_close(torch.ops.fxmlir.fused_bias_act(x, b, -1, 'gelu'),
                           torch.nn.functional.gelu(x + b), rtol=1e-5, atol=1e-5)
print('fused_bias_act runs on', torch.cuda.get_device_name())" 2>&1 | tee -a "$OUT/session.log"
  return 0
}

run_tests() {
  build || return 1
  say "test: pytest --cuda-only"
  (cd tests/python && PYTHONPATH=$SITE timeout -k 10 "${1:-240}" python3 -m pytest --cuda-only \
    -q -p no:cacheprovider -rfEs -n 8 --timeout 170 2>&1) | tee "$OUT/pytest.log" | tail -25
  say "test: done"
}

# python -m benchmarks on CUDA, time-limited; docs/benchmarks.md and the raw
# numbers are copied to $OUT after it, whether or not it finished.
bench() {
  build || return 1
  local limit=$1; shift
  say "bench: $*"
  PYTHONPATH=$SITE:. timeout -k 10 "$limit" python3 -m benchmarks --device cuda "$@" 2>&1 |
    tee -a "$OUT/bench.log" | grep -v "^|" | tail -5
  cp docs/benchmarks.md docs/benchmarks-cuda.json docs/benchmarks-cuda.png "$OUT"/ 2>/dev/null
  say "bench: stopped ($*)"
}

# FXMLIR_BENCH_ONLY=gpt2 (say) measures those training steps alone, to
# re-measure what a fix changed.
steps() {
  local sections=${FXMLIR_BENCH_ONLY:-mlp,gpt2,llama}
  case $1 in
    bf16) bench "${2:-240}" --only "$sections" --dtypes bf16 --profile "$OUT/profile.txt" ;;
    ops) [ -n "${FXMLIR_BENCH_ONLY:-}" ] || bench "${2:-60}" --only ops ;;
    f32) bench "${2:-180}" --only "$sections" --dtypes f32 ;;
    overhead) [ -n "${FXMLIR_BENCH_ONLY:-}" ] ||
      bench "${2:-60}" --only overhead --dtypes bf16 ;;
  esac
}

# The fused LM loss's peak memory on the allocator, bf16 autocast, a process
# per implementation (benchmarks/memory.py; no Inductor: its compiles would
# take the budget).
memory() {
  build || return 1
  say "memory: benchmarks.memory --device cuda --dtypes bf16"
  PYTHONPATH=$SITE:. timeout -k 10 "${1:-100}" python3 -m benchmarks.memory --device cuda \
    --dtypes bf16 --impls "eager,fxmlir,fxmlir unfused loss" 2>&1 | tee "$OUT/memory.md" | tail -8
  say "memory: stopped"
}

[ $# -gt 0 ] || set -- run
for phase in "$@"; do
  case $phase in
    pack) pack ;;
    build) build ;;
    test) run_tests ;;
    steps) steps bf16; steps ops; steps f32 ;;
    bf16) steps bf16 ;;
    memory) memory ;;
    # Measured on the H200 (2026-11-28, evening): build 45 s, tests 40 s,
    # bf16 steps 153 s, kernels 25 s, f32 steps 110 s; the tiny step did not
    # finish in 70 s (six compiles, Inductor's among them): 150 s here.
    run) run_tests 90; steps bf16 180; steps f32 130; steps overhead 150; steps ops 40 ;;
    *) echo "unknown phase $phase (pack, build, test, steps, bf16, memory, run)"; exit 2 ;;
  esac
done
