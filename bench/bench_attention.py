"""Scaled-dot-product attention, forward and forward+backward, on ocl (our fused kernels)
next to torch on cuda (its flash/efficient kernels) where it exists: B=8, H=8, d=64,
T = 512..4096, causal and not. Reports ms and effective TFLOP/s (4*B*H*T*T*d for the forward,
3.5x that for forward+backward; halved when causal).

python bench/bench_attention.py [--quick] [--devices ocl,cuda] [--dtype float32] [--configs CFG ...]

--configs runs the ocl column once per TORCH_OCL_ATTN_CONFIG value (each in its own process;
"" is the built-in defaults, shown as ocl[default]), e.g. the backward modes side by side (BWD=split: a dQ kernel, deterministic; BWD=fused: dQ by
float atomics from the dK/dV kernel; ATOMIC=ptx|ptx4|cas picks the atomic instruction):
  python bench/bench_attention.py --devices ocl,cuda --configs BWD=split BWD=fused BWD=fused,ATOMIC=ptx4

--quick (the default when the OpenCL device is a CPU, e.g. PoCL) uses B=1, H=2, T<=512, plus
GPTMini small's attention (B=8, H=4, T=128, d=32, causal).

Kernel tilings to compare on a GPU (one process each; TORCH_OCL_ATTN_CONFIG in README.md; a
tiling that does not fit the device warns and says what ran instead):
  (defaults)  BLOCK_M=64,BLOCK_N=32,WPT_M=4,WPT_N=4,BWD_BLOCK_M=32,BWD_BLOCK_N=32,BWD_WPT_M=4,BWD_WPT_N=2
  (bigger micro-tiles, 64 work-items)  BLOCK_M=32,BLOCK_N=64,WPT_M=4,WPT_N=8,BWD_WPT_M=4,BWD_WPT_N=4
  (smaller micro-tiles, 256 work-items)  WPT_M=4,WPT_N=2,BWD_WPT_M=2,BWD_WPT_N=2
  (no register prefetch: fewer registers, more work-groups per SM)  PREFETCH=0
  (K and V share a local tile: 9 KiB less local memory, one more barrier per key block)  SPLIT_KV=0
  (backward mode: split / fused (default on GPUs))  BWD=split  BWD=fused
  (fused mode's atomic add: NVIDIA PTX red (default there), its float4 form (sm_90), CAS loop)
      ATOMIC=ptx  ATOMIC=ptx4  ATOMIC=cas
e.g. TORCH_OCL_ATTN_CONFIG=WPT_M=4,WPT_N=2,BWD_WPT_M=2,BWD_WPT_N=2 python bench/bench_attention.py --devices ocl

Kernel variants (off by default until measured; tests/test_attention.py::test_variants_match_math):
  EXP=exp2      base-2 softmax: log2(e) folded into the score scale, exp2() instead of exp()
                (NVIDIA's accurate exp() is several instructions, exp2 one MUFU.EX2); fwd and bwd
  EXP=native    the same with native_exp2() (ex2.approx.ftz: ~2 ulp)
  ROWRED=ptx    forward row max/sum by warp shuffles (shfl.sync.bfly inline PTX, NVIDIA) instead
                of local memory: one barrier per key block less, no Red tile (2.3 KiB), so one
                more work-group per SM fits under NVIDIA's 227 KiB; ROWRED=khr: the same through
                cl_khr_subgroup_shuffle; ROWRED=emu: through local memory (tests only)
  PPAD=8        P/dS tile rows padded by 8 instead of 4 floats: the scalar P/dS stores of 4 rows x
                8 lanes of a warp hit 32 distinct banks (2-way conflicts with 4); fwd and bwd
  SPLIT_KV=0    with ROWRED=ptx: 8.7 KiB less local memory per forward work-group (occupancy)
  ATOMIC=ptx4   fused backward's dQ as 16-byte red.global.v4.f32.add with float4 K reads
                (3 instead of 5 local wavefronts per 16 multiply-adds in the dQ product)
  DQVEC=1       the float4 K reads of ATOMIC=ptx4 with scalar atomics (4 per float4, 16-byte
                strided across a warp instead of coalesced)
  DQROWS=8      fused dQ product: 8 query rows per work-item (each K read feeds 8 rows: 6 local
                reads per 32 multiply-adds instead of 5 per 16), on half the work-items
  BWD_PREFETCH=1  the backward's next Q/dO tile loaded into registers during the current one
                (PREFETCH=0, the NVIDIA default, was measured with the split backward only)
  BWD_WPT_N=4   4x4 backward micro-tiles (64 work-items): 8 instead of 6 local loads per 64
                instead of 32 multiply-adds in the backward's S and dP products
  WPT_M=8       8x4 forward micro-tiles (64 work-items): 12 instead of 8 local loads per 128
                instead of 64 multiply-adds in S = QK^T; best with ROWRED=ptx,SPLIT_KV=0 (35 KiB
                of local memory per work-group instead of 46: more of them per SM)
Tensor-core kernels (NVIDIA's default for float32, head dimension <= 64; kernels/mma.clh):
  MMA=off       the FMA kernels above instead
  MMA_N=16      forward keys per step (32 by default; 64 does not fit 48 KiB at d=64)
  MMA_BQ=32     backward query rows per step (16; 32 fits at d=32 only)
  MMA_FETCH=0   forward K/V loads after the barrier instead of before it (1: 20-30% faster fwd)
  MMA_BWD_FETCH=0  backward Q/dO loads at the start of their step instead of during the one before
                (1: 8-12% faster fwd+bwd)
  MMA_WARPS=2   warps per work-group (4)
  MMA_MAXRREG=168  NVIDIA register cap for the tensor-core program
The integrator's comparison on a GPU:
  python bench/bench_attention.py --devices ocl,cuda --configs "" EXP=exp2 EXP=native ROWRED=ptx \
      EXP=native,ROWRED=ptx,PPAD=8 EXP=native,ROWRED=ptx,PPAD=8,SPLIT_KV=0 ATOMIC=ptx4 DQVEC=1 \
      DQROWS=8 ATOMIC=ptx4,DQROWS=8 BWD_PREFETCH=1 BWD_WPT_N=4 EXP=native,ROWRED=ptx,PPAD=8,ATOMIC=ptx4,DQROWS=8 \
      WPT_M=8,EXP=native,ROWRED=ptx,SPLIT_KV=0
Writes bench/results/attention.json (or $BENCH_OUT/attention.json).
"""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.bench_gemm import run_worker, time_call  # noqa: E402
from bench.common import devices, ocl_is_cpu, print_table, write_json  # noqa: E402


def measure(dev, quick, dtype):
    B, H, d = (1, 2, 64) if quick else (8, 8, 64)
    Ts = (256, 512) if quick else (512, 1024, 2048, 4096)
    shapes = [(B, H, T, d, causal) for T in Ts for causal in (False, True)]
    if quick:
        shapes.insert(0, (8, 4, 128, 32, True))  # GPTMini small's attention
    rows = []
    for B, H, T, d, causal in shapes:
        flops = 4 * B * H * T * T * d * (0.5 if causal else 1.0)
        q, k, v, go = (torch.randn(B, H, T, d, device=dev, dtype=dtype) for _ in range(4))
        q.requires_grad_(True), k.requires_grad_(True), v.requires_grad_(True)

        def fwd():
            with torch.no_grad():
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        def fwd_bwd():
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            torch.autograd.grad(out, (q, k, v), go)

        tf, tb = time_call(fwd, dev), time_call(fwd_bwd, dev)
        rows.append(dict(B=B, H=H, T=T, d=d, causal=causal, fwd_ms=tf * 1e3, fwd_tflops=flops / tf / 1e12,
                         fwd_bwd_ms=tb * 1e3, fwd_bwd_tflops=3.5 * flops / tb / 1e12))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", default=None)
    ap.add_argument("--devices", default=",".join(d for d in devices(include_cpu=False)))
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--configs", nargs="*", default=[],
                    help="TORCH_OCL_ATTN_CONFIG values; the ocl column runs once per value")
    ap.add_argument("--worker-device", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick is None:
        args.quick = ocl_is_cpu()
    if args.worker_device:
        print("ROWS " + json.dumps(measure(args.worker_device, args.quick, getattr(torch, args.dtype))))
        return
    # One column per (device, config): the ocl device once per --configs value.
    columns = []
    for dev in (x for x in args.devices.split(",") if x):
        if dev == "ocl" and args.configs:
            columns += [(f"ocl[{c or 'default'}]", dev, {"TORCH_OCL_ATTN_CONFIG": c}) for c in args.configs]
        else:
            columns.append((dev, dev, {}))
    devs = [name for name, _, _ in columns]
    table = {}
    for name, dev, env in columns:
        print(f"# measuring {name} ...", flush=True)
        extra = ["--dtype", args.dtype] + (["--quick"] if args.quick else [])
        for r in run_worker(__file__, name, dev, extra, env):
            key = (r["B"], r["H"], r["T"], r["d"], r["causal"])
            row = table.setdefault(key, dict(B=r["B"], H=r["H"], T=r["T"], d=r["d"], causal=r["causal"]))
            row[f"{name} fwd ms"], row[f"{name} fwd TFLOP/s"] = r["fwd_ms"], r["fwd_tflops"]
            row[f"{name} fwd+bwd ms"], row[f"{name} fwd+bwd TFLOP/s"] = r["fwd_bwd_ms"], r["fwd_bwd_tflops"]
    rows = list(table.values())
    if not rows:
        print("no results (every column failed; see the messages above)")
        return
    cols = ["B", "H", "T", "d", "causal"]
    for dev in devs:
        cols += [f"{dev} fwd ms", f"{dev} fwd+bwd ms", f"{dev} fwd+bwd TFLOP/s"]
    print(f"\nSDPA {args.dtype}")
    print_table(rows, cols)
    write_json("attention", dict(dtype=args.dtype, quick=args.quick, devices=devs, configs=args.configs, rows=rows))


if __name__ == "__main__":
    main()
