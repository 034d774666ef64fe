"""Per-device tuning of torch_ocl's hot kernels.

    python -m torch_ocl.tune gemm [--device 0] [--dtypes float32] [--quick]
                                  [--candidates "CFG;CFG;..."] [--no-write]

How it works. A kernel family reads its configuration (build options such as tile sizes and
work-group shape) from three places, first match wins:

1. an environment override (GEMM: ``TORCH_OCL_GEMM_CONFIG="TILE_M=128,TILE_K=8"``; keys not
   given keep their default), for experiments;
2. the device's tuning file, ``<TORCH_OCL_TUNING_DIR>/<device>-<driver>.json`` (default
   folder ``<TORCH_OCL_CACHE_DIR>/tuning``, i.e. ``~/.cache/torch_ocl/tuning``), written by
   this module; the file is read once per process and device, so the hot path does no I/O;
3. built-in defaults by device type and vendor (GEMM: ``default_config`` in
   ``csrc/ops/gemm.cpp``).

The file maps ``"family/key"`` to an option string, e.g. ``"gemm/float32/large":
"KERNEL=tiled TILE_M=128 TILE_N=128 TILE_K=16 WPT_M=8 WPT_N=8 VEC_WIDTH=4 DOUBLE_BUFFER=1"``,
and keeps the timings the choice was based on under ``"results"``. A corrupt file, or one
written for another device or driver version, is ignored with a warning; delete it or tune
again.

``tune gemm`` times every candidate configuration on representative products of each
shape class (``small``: fewer 128x128 output tiles than compute units, e.g. 1024^2 and
GPTMini-small's projections; ``large``: the rest, e.g. 2048^2..4096^2 and GPTMini-large),
in the transpose combinations training uses, checks every result against a float64 CPU
reference, skips candidates that fail to build or compute wrong results, and writes the
winner of each (dtype, class) by geometric-mean TFLOP/s. Other entries in an existing file
are kept.

Tuning a new device: run ``python -m torch_ocl.tune gemm`` once (a few minutes on a GPU;
``--quick`` for CPU devices), then ``python bench/bench_gemm.py`` to see the effect. To try
a configuration by hand first, set ``TORCH_OCL_GEMM_CONFIG``. To make a device's winners the
default for everyone, add them to ``default_config`` in ``csrc/ops/gemm.cpp``.
"""
import argparse
import datetime
import json
import math
import os
import sys
import time
import warnings

import torch

import torch_ocl
from torch_ocl import _C

# Candidate GEMM configurations. gemm_tiled_fwd (float32/float64 with unit-stride operands)
# and the generic gemm_fwd for comparison on GPUs; the barrier-free gemm_direct_fwd on CPUs.
GPU_CANDIDATES = [
    "KERNEL=generic TILE_M=64 TILE_N=64 TILE_K=16 WPT_M=4 WPT_N=4 VEC_WIDTH=4",
    "KERNEL=generic TILE_M=128 TILE_N=128 TILE_K=16 WPT_M=8 WPT_N=8 VEC_WIDTH=4",
    "KERNEL=tiled TILE_M=64 TILE_N=64 TILE_K=16 WPT_M=4 WPT_N=4 DOUBLE_BUFFER=1",
    "KERNEL=tiled TILE_M=64 TILE_N=64 TILE_K=32 WPT_M=4 WPT_N=4 DOUBLE_BUFFER=1",
    "KERNEL=tiled TILE_M=64 TILE_N=64 TILE_K=16 WPT_M=8 WPT_N=4 DOUBLE_BUFFER=1 SLICE_K=1",
    "KERNEL=tiled TILE_M=64 TILE_N=64 TILE_K=16 WPT_M=8 WPT_N=4 DOUBLE_BUFFER=1 SLICE_K=2",
    "KERNEL=tiled TILE_M=128 TILE_N=64 TILE_K=16 WPT_M=8 WPT_N=4 DOUBLE_BUFFER=1",
    "KERNEL=tiled TILE_M=64 TILE_N=128 TILE_K=16 WPT_M=4 WPT_N=8 DOUBLE_BUFFER=1",
    "KERNEL=tiled TILE_M=64 TILE_N=128 TILE_K=16 WPT_M=8 WPT_N=8 DOUBLE_BUFFER=1",
    "KERNEL=tiled TILE_M=128 TILE_N=128 TILE_K=16 WPT_M=8 WPT_N=4 DOUBLE_BUFFER=1",
    "KERNEL=tiled TILE_M=128 TILE_N=128 TILE_K=8 WPT_M=8 WPT_N=8 DOUBLE_BUFFER=1",
    "KERNEL=tiled TILE_M=128 TILE_N=128 TILE_K=16 WPT_M=8 WPT_N=8 DOUBLE_BUFFER=1",
    "KERNEL=tiled TILE_M=128 TILE_N=128 TILE_K=16 WPT_M=8 WPT_N=8 DOUBLE_BUFFER=0",
    "KERNEL=tiled TILE_M=128 TILE_N=128 TILE_K=32 WPT_M=8 WPT_N=8 DOUBLE_BUFFER=0",
    "KERNEL=tiled TILE_M=32 TILE_N=64 TILE_K=16 WPT_M=4 WPT_N=4 DOUBLE_BUFFER=1",
    # cp.async pipelines (NVIDIA sm_80 or later; rejected elsewhere)
    "KERNEL=tiled TILE_M=128 TILE_N=128 TILE_K=8 WPT_M=8 WPT_N=8 ASYNC_STAGES=4",
    "KERNEL=tiled TILE_M=64 TILE_N=128 TILE_K=16 WPT_M=8 WPT_N=8 ASYNC_STAGES=3",
]
CPU_CANDIDATES = [
    "KERNEL=direct TILE_M=16 TILE_N=128 TILE_K=16 WPT_M=2 WPT_N=32 VEC_WIDTH=8",
    "KERNEL=direct TILE_M=32 TILE_N=64 TILE_K=16 WPT_M=4 WPT_N=16 VEC_WIDTH=8",
    "KERNEL=direct TILE_M=16 TILE_N=64 TILE_K=16 WPT_M=4 WPT_N=32 VEC_WIDTH=8",
    "KERNEL=direct TILE_M=32 TILE_N=128 TILE_K=16 WPT_M=4 WPT_N=32 VEC_WIDTH=8",
    "KERNEL=direct TILE_M=32 TILE_N=64 TILE_K=16 WPT_M=4 WPT_N=16 VEC_WIDTH=4",
]

# (label, M, K, N) products; each runs in the transposes of a linear layer's forward (nt)
# and its two backward products (nn, tn).
GEMM_SHAPES = [
    ("square 1024", 1024, 1024, 1024), ("square 2048", 2048, 2048, 2048), ("square 4096", 4096, 4096, 4096),
    ("small qkv", 4096, 128, 384), ("small mlp up", 4096, 128, 512), ("small mlp down", 4096, 512, 128),
    ("large qkv", 2048, 512, 1536), ("large proj", 2048, 512, 512), ("large mlp up", 2048, 512, 2048),
    ("large mlp down", 2048, 2048, 512), ("large lm head", 2048, 512, 8192),
]
# --quick (CPU devices): small enough for PoCL, still both shape classes on a few cores.
QUICK_SHAPES = [("64^3", 64, 64, 64), ("odd", 72, 40, 100), ("wide", 128, 32, 256), ("tall", 256, 32, 128)]
SQUARE_TRANS = ("nn",)
TRAIN_TRANS = ("nt", "nn", "tn")


def _operands(M, K, N, trans, dtype, device):
    g = torch.Generator().manual_seed(M * 7 + K * 3 + N)
    ta, tb = trans
    a = torch.randn(K, M, generator=g, dtype=dtype).t() if ta == "t" else torch.randn(M, K, generator=g, dtype=dtype)
    b = torch.randn(N, K, generator=g, dtype=dtype).t() if tb == "t" else torch.randn(K, N, generator=g, dtype=dtype)
    ref = a.double() @ b.double()
    # .to() keeps the transposed strides (torch.Tensor.to preserves a dense layout).
    return a.to(device), b.to(device), ref


def _time(fn, budget):
    """Best of two runs of back-to-back calls filling about `budget` seconds each."""
    torch.ocl.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.ocl.synchronize()
    one = max(time.perf_counter() - t0, 1e-6)
    iters = max(1, min(100, int(budget / one)))
    best = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        torch.ocl.synchronize()
        best = min(best, (time.perf_counter() - t0) / iters)
    return best


def _fields(cfg):
    return dict(item.split("=", 1) for item in cfg.replace(",", " ").split() if "=" in item)


def _covers(used, cand):
    """True when the resolved configuration `used` has every field `cand` sets."""
    u = _fields(used)
    return all(u.get(k) == v for k, v in _fields(cand).items())


def _shape_class(idx, dtype, M, N):
    return _C._gemm_config(idx, dtype, 1, M, N).split(":")[0]


def tune_gemm(idx, dtypes, candidates, quick, budget, log=print):
    """Times `candidates` for each (dtype, shape class); returns {key: (winner, results)}."""
    device = torch.device("ocl", idx)
    key_of = {"float32": torch.float32, "float64": torch.float64}
    shapes = QUICK_SHAPES if quick else GEMM_SHAPES
    winners = {}
    for dname in dtypes:
        dtype = key_of[dname]
        tol = 1e-4 if dtype == torch.float32 else 1e-10
        by_class = {}
        for label, M, K, N in shapes:
            for trans in (SQUARE_TRANS if label.startswith("square") else TRAIN_TRANS):
                by_class.setdefault(_shape_class(idx, dtype, M, N), []).append((f"{label} {trans}", M, K, N, trans))
        for cls, problems in sorted(by_class.items()):
            key = f"gemm/{dname}/{cls}"
            _C._tuning_set(idx, key, "")
            default = _C._gemm_config(idx, dtype, 1, problems[0][1], problems[0][3]).split(": ", 1)[1]
            cands = [default] + [c for c in dict.fromkeys(candidates) if not _covers(default, c)]
            data = [(p, *_operands(p[1], p[2], p[3], p[4], dtype, device)) for p in problems]
            results = []
            for cand in cands:
                row = dict(config=cand, default=cand is default, tflops={})
                _C._tuning_set(idx, key, cand)
                try:
                    used = _C._gemm_config(idx, dtype, 1, problems[0][1], problems[0][3]).split(": ", 1)[1]
                    if not _covers(used, cand):
                        raise ValueError("rejected as invalid for this device (see the warning above)")
                    for (name, M, K, N, _), a, b, ref in data:
                        with warnings.catch_warnings(record=True) as caught:
                            warnings.simplefilter("always")
                            out = torch.mm(a, b)
                        broken = [str(w.message) for w in caught if "failed to build" in str(w.message)]
                        if broken:
                            raise RuntimeError(broken[0])
                        err = ((out.cpu().double() - ref).abs().max() / ref.abs().max().clamp_min(1)).item()
                        if not err <= tol:
                            raise ValueError(f"wrong result on {name} (relative error {err:.2g})")
                        t = _time(lambda: torch.mm(a, b, out=out), budget)
                        row["tflops"][name] = 2 * M * K * N / t / 1e12
                    row["score"] = math.exp(sum(math.log(v) for v in row["tflops"].values()) / len(row["tflops"]))
                except Exception as e:  # noqa: BLE001 - a failing candidate is reported and skipped
                    row["error"] = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
                finally:
                    _C._tuning_set(idx, key, "")
                results.append(row)
            ok = [r for r in results if "score" in r]
            best = max(ok, key=lambda r: r["score"]) if ok else None
            _print_results(key, problems, results, best, log)
            if best is not None:
                winners[key] = (best["config"], results)
    return winners


def _print_results(key, problems, results, best, log):
    names = [p[0] for p in problems]
    log(f"\n{key}: TFLOP/s per problem, score = geometric mean ('*' = chosen, 'd' = built-in default)")
    log("  " + "  ".join(f"{n:>15}" for n in names) + f"  {'score':>8}  config")
    for r in results:
        mark = ("*" if r is best else " ") + ("d" if r["default"] else " ")
        if "error" in r:
            log(f"{mark} failed: {r['error']}  [{r['config']}]")
            continue
        cells = "  ".join(f"{r['tflops'][n]:15.4g}" for n in names)
        log(f"{mark}{cells}  {r['score']:8.4g}  {r['config']}")


def write_tuning_file(idx, entries, results):
    """Merges `entries` ({key: config}) into the device's tuning file; returns its path."""
    path = _C._tuning_file(idx)
    props = torch.ocl.get_device_properties(idx)
    doc = {}
    try:
        with open(path) as f:
            old = json.load(f)
        if old.get("format") == 1 and old.get("device") == props.name and old.get("driver") == props.driver_version:
            doc = old
    except (OSError, ValueError):
        pass
    doc.update(format=1, device=props.name, driver=props.driver_version)
    doc.setdefault("entries", {}).update(entries)
    doc.setdefault("results", {}).update(results)
    doc["updated"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
    _C._tuning_reload()
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m torch_ocl.tune", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("family", choices=["gemm"], help="kernel family to tune")
    ap.add_argument("--device", type=int, default=0, help="ocl device index")
    ap.add_argument("--dtypes", default="float32", help="comma-separated: float32, float64")
    ap.add_argument("--quick", action="store_true", default=None,
                    help="small problems only (the default on CPU devices)")
    ap.add_argument("--candidates", help="';'-separated configurations to try instead of the built-in list")
    ap.add_argument("--budget", type=float, default=0.1, help="seconds of timing per problem and candidate")
    ap.add_argument("--no-write", action="store_true", help="print the table, leave the tuning file alone")
    args = ap.parse_args(argv)
    if not torch.ocl.is_available():
        sys.exit("no OpenCL device: " + _C._unavailable_reason())
    props = torch.ocl.get_device_properties(args.device)
    cpu = props.type == "cpu"
    quick = cpu if args.quick is None else args.quick
    cands = [c.strip() for c in args.candidates.split(";") if c.strip()] if args.candidates else (
        CPU_CANDIDATES if cpu else GPU_CANDIDATES)
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    for d in dtypes:
        if d not in ("float32", "float64"):
            ap.error(f"unsupported dtype {d!r} (float32, float64)")
    print(f"tuning gemm on ocl:{args.device} = {props.name} (driver {props.driver_version}), "
          f"{len(cands)} candidates, {'quick' if quick else 'full'} problem set")
    winners = tune_gemm(args.device, dtypes, cands, quick, args.budget)
    if not winners:
        sys.exit("no candidate worked; nothing written")
    print("\nchosen (geometric-mean TFLOP/s of the winner vs the built-in default):")
    for key, (cfg, results) in winners.items():
        best = max(r.get("score", 0) for r in results)
        dflt = next((r.get("score") for r in results if r["default"]), None)
        vs = f"{dflt:.4g}" if dflt else "failed"
        print(f"  {key}: {best:.4g} vs {vs}  {cfg}")
    if args.no_write:
        return
    path = write_tuning_file(args.device, {k: v[0] for k, v in winners.items()},
                             {k: v[1] for k, v in winners.items()})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
