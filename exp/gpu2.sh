TORCH_DEVICE_BACKEND_AUTOLOAD=0 MAX_JOBS=16 python -m pip install --no-build-isolation -e . -q 2>&1 | grep -v WARNING | tail -3
mkdir -p $OUT
export TORCH_OCL_BUILD_LOG=1
for r in 0 64 48; do
  o="-cl-nv-verbose"; [ $r != 0 ] && o="-cl-nv-maxrregcount=$r -cl-nv-verbose"
  echo "##### rows maxrreg=$r"
  TORCH_OCL_BUILD_OPTIONS="$o" BENCH_OUT=$OUT/ops$r timeout -s INT 100 python bench/bench_ops.py --devices ocl --ops layer_norm,layer_norm_bwd,cross_entropy,cross_entropy_bwd,softmax,softmax_bwd,adamw_fused 2>$OUT/ops$r.log | grep -v "^$"
  grep -E "Compiling entry|Used" $OUT/ops$r.log | grep -A1 -E "'(layer_norm_fwd|layer_norm_bwd|ce_fwd|ce_bwd|softmax_fwd|fused_adam)'" | grep Used | tr '\n' ' '; echo
done
for r in 0 128 96; do
  o="-cl-nv-verbose"; [ $r != 0 ] && o="-cl-nv-maxrregcount=$r -cl-nv-verbose"
  devs=ocl; [ $r = 0 ] && devs=ocl,cuda
  echo "##### attention maxrreg=$r"
  TORCH_OCL_BUILD_OPTIONS="$o" BENCH_OUT=$OUT/att$r timeout -s INT 150 python bench/bench_attention.py --devices $devs 2>$OUT/att$r.log | grep -v "^$"
  grep -E "Compiling entry|Used|spill" $OUT/att$r.log | grep -A2 -E "'(attention_fwd|attention_bwd_dkdv_dq)'" | grep -E "Used|spill" | tr '\n' ' '; echo
done
