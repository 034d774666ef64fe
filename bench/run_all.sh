#!/usr/bin/env bash
# One command for any OpenCL machine: build against the installed torch, check correctness of
# the hot ops, then run every benchmark (ocl next to cuda/cpu where present), print the tables
# and write JSON to $BENCH_OUT (default bench/results/).
#   bash bench/run_all.sh            # everything
#   BENCH_QUICK=1 bash bench/run_all.sh   # skip the slow CPU reference columns
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
export BENCH_OUT="${BENCH_OUT:-bench/results}"
mkdir -p "$BENCH_OUT"
MAX_JOBS="${MAX_JOBS:-$(nproc)}" python -m pip install --no-build-isolation -e . -q
python -m pytest -q -x -p no:cacheprovider tests/test_ops.py \
    -k "gemm or mm or attention or softmax or layer_norm or nll or gelu or adam" 2>&1 | tail -3
python bench/device_smoke.py --json "$BENCH_OUT/smoke.json"
for b in bench_gemm bench_attention bench_ops; do
  [ -f "bench/$b.py" ] && python "bench/$b.py"
done
devs=ocl
python -c "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)" && devs="$devs,cuda"
[ -z "${BENCH_QUICK:-}" ] && devs="$devs,cpu"
python bench/bench_train.py --devices "$devs"
