set -x
nvidia-smi --query-gpu=name,driver_version --format=csv
TORCH_DEVICE_BACKEND_AUTOLOAD=0 MAX_JOBS=16 python -m pip install --no-build-isolation -e . -q 2>&1 | grep -v WARNING | tail -3
mkdir -p $OUT
export TORCH_OCL_CACHE_DIR=/tmp/ptxcache
timeout -s INT 240 env TORCH_OCL_BUILD_LOG=1 TORCH_OCL_BUILD_OPTIONS=-cl-nv-verbose python exp/ptxinfo.py > $OUT/ptx.log 2>&1
echo ptx rc $?
grep -E "^===|built|ptxas info *: (Used|Function prop|Compiling entry)|spill" $OUT/ptx.log | grep -v "0 bytes spill stores, 0 bytes spill loads" | head -150
unset TORCH_OCL_CACHE_DIR
timeout -s INT 270 python -m pytest -q -x -n 8 -p no:benchmark tests/test_rows.py tests/test_cross_entropy.py 2>&1 | tail -8
echo tests rc $?
