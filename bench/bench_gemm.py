"""GEMM throughput (TFLOP/s) on ocl with our tiled kernel ("own") and CLBlast side by side,
next to torch on cuda (where it exists) and the CPU: square products 1024..4096 and the
matrix products of GPTMini small and large (QKV, attention projection, MLP up/down, LM head,
tokens x features), each in all four transpose combinations (as views, no copies).

python bench/bench_gemm.py [--quick] [--devices ocl,cuda,cpu] [--impls own,clblast] [--dtype float32]
                           [--configs "KERNEL=generic;KERNEL=tiled TILE_K=8"]

"ocl own" is the configuration torch_ocl picks on this device (tuning file, else defaults;
see `python -m torch_ocl.tune`); each --configs entry adds an "ocl own" column run with
TORCH_OCL_GEMM_CONFIG set to it (fields not given keep the picked values), to compare
configurations without writing a tuning file. The summary line gives each column's
geometric mean and its ratio to cuda where that column exists.
Each ocl column runs in its own subprocess (TORCH_OCL_GEMM* are read once per process).
--quick (the default when the OpenCL device is a CPU, e.g. PoCL) uses small sizes only.
Writes bench/results/gemm.json (or $BENCH_OUT/gemm.json).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.common import devices, ocl_is_cpu, print_table, sync, write_json  # noqa: E402

# GPTMini configurations (tokens = batch x sequence).
MODELS = {
    "small": dict(d=128, tokens=32 * 128, vocab=256, d_ff=512),
    "large": dict(d=512, tokens=8 * 256, vocab=8192, d_ff=2048),
}


def problems(quick):
    """(label, M, K, N) triples."""
    out = [(f"square {n}", n, n, n) for n in ((256, 512) if quick else (1024, 2048, 4096))]
    for name, c in MODELS.items():
        if quick and name == "large":
            continue
        t, d = c["tokens"], c["d"]
        out += [(f"{name} qkv", t, d, 3 * d), (f"{name} proj", t, d, d), (f"{name} mlp up", t, d, c["d_ff"]),
                (f"{name} mlp down", t, c["d_ff"], d), (f"{name} lm head", t, d, c["vocab"])]
    return out


def operands(M, K, N, trans, device, dtype):
    """A (M x K) and B (K x N), each stored transposed when its flag is 't'."""
    ta, tb = trans
    a = torch.randn(K, M, device=device, dtype=dtype).t() if ta == "t" else torch.randn(M, K, device=device, dtype=dtype)
    b = torch.randn(N, K, device=device, dtype=dtype).t() if tb == "t" else torch.randn(K, N, device=device, dtype=dtype)
    return a, b


def time_call(fn, device, budget=0.25, max_iters=50):
    fn()
    sync(device)
    t0 = time.perf_counter()
    fn()
    sync(device)
    one = max(time.perf_counter() - t0, 1e-6)
    iters = max(1, min(max_iters, int(budget / one)))
    best = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync(device)
        best = min(best, (time.perf_counter() - t0) / iters)
    return best


def measure(device, quick, dtype, cpu_limit):
    rows = []
    for label, M, K, N in problems(quick):
        for trans in ("nn", "nt", "tn", "tt"):
            if device == "cpu" and M * K * N > cpu_limit:
                continue
            a, b = operands(M, K, N, trans, device, dtype)
            out = torch.empty(M, N, device=device, dtype=dtype)
            t = time_call(lambda: torch.mm(a, b, out=out), device)
            rows.append(dict(problem=label, M=M, K=K, N=N, trans=trans, ms=t * 1e3, tflops=2 * M * K * N / t / 1e12))
    return rows


def worker(args):
    dtype = getattr(torch, args.dtype)
    rows = measure(args.worker_device, args.quick, dtype, args.cpu_limit)
    print("ROWS " + json.dumps(rows))


def run_worker(script, name, device, extra_args, env_extra):
    """Runs `script --worker-device device extra_args` in a fresh process and returns the rows
    it prints. Each device gets its own process: TORCH_OCL_GEMM is read once per process, and
    the non-ocl columns run without the ocl backend loaded (TORCH_DEVICE_BACKEND_AUTOLOAD=0),
    since torch 2.11's autograd engine asserts on a CUDA backward in a process where the
    PrivateUse1 backend is registered."""
    env = dict(os.environ, **env_extra)
    if device != "ocl":
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    cmd = [sys.executable, os.path.abspath(script), "--worker-device", device] + extra_args
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    line = [x for x in proc.stdout.splitlines() if x.startswith("ROWS ")]
    if proc.returncode != 0 or not line:
        print(f"# {name} failed:\n{proc.stderr[-2000:]}", flush=True)
        return []
    return json.loads(line[0][5:])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", default=None)
    ap.add_argument("--devices", default=",".join(devices()))
    ap.add_argument("--impls", default="own,clblast")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--configs", default="", help="';'-separated TORCH_OCL_GEMM_CONFIG values, one column each")
    ap.add_argument("--cpu-limit", type=float, default=2.2e10, help="skip CPU problems above this M*K*N")
    ap.add_argument("--worker-device", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick is None:
        args.quick = ocl_is_cpu()
    if args.worker_device:
        return worker(args)

    columns = []  # (column name, device, extra environment)
    configs = [c.strip() for c in args.configs.split(";") if c.strip()]
    for dev in args.devices.split(","):
        if dev == "ocl":
            columns += [(f"ocl {impl}", "ocl", {"TORCH_OCL_GEMM": impl}) for impl in args.impls.split(",")]
            for i, cfg in enumerate(configs):
                print(f"# column 'ocl cfg{i}': TORCH_OCL_GEMM_CONFIG='{cfg}'")
                columns.append((f"ocl cfg{i}", "ocl", {"TORCH_OCL_GEMM": "own", "TORCH_OCL_GEMM_CONFIG": cfg}))
        elif dev:
            columns.append((dev, dev, {}))
    results = {}
    for name, dev, env_extra in columns:
        extra = ["--dtype", args.dtype, "--cpu-limit", str(args.cpu_limit)] + (["--quick"] if args.quick else [])
        print(f"# measuring {name} ...", flush=True)
        for r in run_worker(__file__, name, dev, extra, env_extra):
            key = (r["problem"], r["trans"])
            results.setdefault(key, dict(problem=r["problem"], M=r["M"], K=r["K"], N=r["N"], trans=r["trans"]))
            results[key][f"{name} TFLOP/s"] = r["tflops"]
            results[key][f"{name} ms"] = r["ms"]
    rows = list(results.values())
    if not rows:
        print("no results (every column failed; see the messages above)")
        return
    names = [c[0] for c in columns]
    print(f"\nGEMM {args.dtype}, TFLOP/s (2*M*N*K / time); transposes as views")
    print_table(rows, ["problem", "M", "K", "N", "trans"] + [f"{n} TFLOP/s" for n in names])
    summary = []
    for n in names:
        vals = [r[f"{n} TFLOP/s"] for r in rows if r.get(f"{n} TFLOP/s")]
        if not vals:
            continue
        gm = math.exp(sum(math.log(v) for v in vals) / len(vals))
        line = f"{n}: geomean {gm:.3g} TFLOP/s over {len(vals)} problems"
        if n != "cuda" and "cuda" in names:
            ratios = [r[f"{n} TFLOP/s"] / r["cuda TFLOP/s"] for r in rows
                      if r.get(f"{n} TFLOP/s") and r.get("cuda TFLOP/s")]
            if ratios:
                line += f", {math.exp(sum(math.log(x) for x in ratios) / len(ratios)):.2f}x cuda (min {min(ratios):.2f}x)"
        summary.append(line)
    print("\n" + "\n".join(summary))
    write_json("gemm", dict(dtype=args.dtype, quick=args.quick, columns=names, rows=rows))


if __name__ == "__main__":
    main()
