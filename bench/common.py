"""Shared helpers for the benchmarks: device lists, timing with device synchronization,
table printing and JSON output. Every benchmark runs on any machine: the ocl column needs an
OpenCL device, the cuda column appears only where torch.cuda.is_available()."""
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import torch


def devices(include_cpu=True):
    devs = []
    if hasattr(torch, "ocl") and torch.ocl.is_available():
        devs.append("ocl")
    if torch.cuda.is_available():
        devs.append("cuda")
    if include_cpu:
        devs.append("cpu")
    return devs


def worker_rows(script, device, args):
    """Runs `script --worker device *args` in a fresh process and returns the JSON list it prints
    on its last line ([] with a message on failure). Each device gets its own process: with the
    ocl backend registered, torch 2.11's autograd engine asserts on a CUDA backward (so the other
    devices run with TORCH_DEVICE_BACKEND_AUTOLOAD=0), and one device's caches and threads do not
    skew another's numbers."""
    env = dict(os.environ)
    if torch.device(device).type != "ocl":
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    out = subprocess.run([sys.executable, os.path.abspath(script), "--worker", device] + list(args), env=env,
                         stdout=subprocess.PIPE, text=True)
    if out.returncode != 0:
        print(f"[{os.path.basename(script)}] {device} failed with exit code {out.returncode}", file=sys.stderr)
        return []
    return json.loads(out.stdout.strip().splitlines()[-1])


def ocl_is_cpu():
    """True when the ocl device is a CPU (PoCL and the like): benchmarks then use smaller
    problems and skip the configurations that take minutes per step there."""
    return hasattr(torch, "ocl") and torch.ocl.is_available() and torch.ocl.get_device_properties(0).type == "cpu"


def sync(device):
    kind = torch.device(device).type
    if kind == "ocl":
        torch.ocl.synchronize()
    elif kind == "cuda":
        torch.cuda.synchronize()


def bench(fn, device, *, warmup=3, iters=20, repeats=3):
    """Median over `repeats` of the mean time of `iters` back-to-back calls (seconds)."""
    for _ in range(warmup):
        fn()
    sync(device)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync(device)
        times.append((time.perf_counter() - t0) / iters)
    return statistics.median(times)


def card(device):
    kind = torch.device(device).type
    if kind == "ocl":
        p = torch.ocl.get_device_properties(0)
        return f"{p.name} (OpenCL, driver {p.driver_version})"
    if kind == "cuda":
        return f"{torch.cuda.get_device_name(0)} (CUDA {torch.version.cuda})"
    return f"CPU {platform.processor() or platform.machine()} x{os.cpu_count()}"


def print_table(rows, columns):
    widths = [max(len(str(c)), *(len(_fmt(r.get(c))) for r in rows)) for c in columns]
    print("  ".join(str(c).ljust(w) for c, w in zip(columns, widths)))
    for r in rows:
        print("  ".join(_fmt(r.get(c)).ljust(w) for c, w in zip(columns, widths)))


def _fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    return str(v)


def write_json(name, payload):
    os.makedirs(os.path.join(os.path.dirname(__file__), "results"), exist_ok=True)
    path = os.environ.get("BENCH_OUT") or os.path.join(os.path.dirname(__file__), "results")
    os.makedirs(path, exist_ok=True)
    meta = {"torch": torch.__version__, "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "cards": {d: card(d) for d in devices()}}
    with open(os.path.join(path, name + ".json"), "w") as f:
        json.dump({"meta": meta, "results": payload}, f, indent=2)
