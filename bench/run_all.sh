#!/usr/bin/env bash
# One command for any OpenCL machine: build against the installed torch, check correctness of
# the hot ops on this device, tune the GEMM for it, then run every benchmark (ocl next to
# cuda/cpu where present), print the tables and write JSON to $BENCH_OUT (default bench/results/).
#   bash bench/run_all.sh                 # everything
#   BENCH_QUICK=1 bash bench/run_all.sh   # skip the slow CPU reference columns
#   BENCH_SKIP_TESTS=1 / BENCH_SKIP_TUNE=1 skip those steps
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
export BENCH_OUT="${BENCH_OUT:-bench/results}"
mkdir -p "$BENCH_OUT"
step() { echo; echo "=== $* ($(date +%H:%M:%S))"; }
step build
TORCH_DEVICE_BACKEND_AUTOLOAD=0 MAX_JOBS="${MAX_JOBS:-$(nproc)}" \
  python -m pip install --no-build-isolation -e . -q 2>&1 | grep -v "Running pip as the 'root'" || true
if [ -z "${BENCH_SKIP_TESTS:-}" ]; then
  step "correctness of the hot kernels on this device"
  python -m pytest -q -x -p no:cacheprovider tests/test_attention.py tests/test_gemm.py tests/test_gemm_split_k.py \
      tests/test_optim.py 2>&1 | tail -3
  python -m pytest -q -x -p no:cacheprovider tests/test_ops.py \
      -k "mm or matmul or linear or attention or softmax or layer_norm or nll or gelu or adam or sum or cat" 2>&1 | tail -3
fi
if [ -z "${BENCH_SKIP_TUNE:-}" ] && python -c "import torch_ocl.tune" 2>/dev/null; then
  step "GEMM tuning for this device"
  python -m torch_ocl.tune gemm 2>&1 | tail -60
fi
step smoke
python bench/device_smoke.py --json "$BENCH_OUT/smoke.json"
for b in bench_gemm bench_attention bench_ops bench_host init_profile; do
  step "$b"
  [ -f "bench/$b.py" ] && python "bench/$b.py"
done
devs=ocl
python -c "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)" && devs="$devs,cuda"
[ -z "${BENCH_QUICK:-}" ] && devs="$devs,cpu"
step "bench_train ($devs)"
python bench/bench_train.py --devices "$devs"
step "step profiles"
profiles="small32 large32"
python -c "import sys; sys.path.insert(0, '.'); from bench.common import ocl_is_cpu; sys.exit(0 if ocl_is_cpu() else 1)" \
  && profiles="small8"  # minutes per large step on a CPU OpenCL device
for c in $profiles; do python bench/step_profile.py --config "$c" --top 12; done
step "matrix products of a step (wall and device time)"
for c in $profiles; do python bench/bench_step_gemms.py --config "$c"; done
