"""Where a GPTMini training step's time goes on ocl: host enqueue time per step (no sync),
device-bound time per step (with sync), the enqueue and wall time of a single step started on
an idle device, kernel launches and device time per step by kernel name, the device span of
a step (first kernel start to last kernel end: kernel time plus idle gaps), and the per-op
host cost from torch.profiler's CPU view.

python bench/step_profile.py [--config small32] [--device ocl] [--top 25]
(re-runs itself with TORCH_OCL_PROFILE=1 for the per-kernel device times)
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.bench_train import CONFIGS, make_step  # noqa: E402
from bench.common import sync, write_json  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", default="small32")
    ap.add_argument("--device", default="ocl")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--cpu-profile", action="store_true", help="also print torch.profiler's per-op host cost")
    args = ap.parse_args()
    dev = args.device
    profiling = os.environ.get("TORCH_OCL_PROFILE") == "1"
    step, tokens = make_step(CONFIGS[args.config], dev, True)
    for _ in range(5):
        step()
    sync(dev)
    if not profiling:
        n = 20
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        host = (time.perf_counter() - t0) / n
        sync(dev)
        total = (time.perf_counter() - t0) / n
        # One step from an idle device: its enqueue time alone cannot be stretched by a full
        # driver queue, so it separates "the host is slow" from "the device runs behind".
        one_host, one_wall = [], []
        for _ in range(10):
            sync(dev)
            t0 = time.perf_counter()
            step()
            one_host.append(time.perf_counter() - t0)
            sync(dev)
            one_wall.append(time.perf_counter() - t0)
        out = {"config": args.config, "device": dev, "host_ms_per_step": host * 1e3, "ms_per_step": total * 1e3,
               "tokens/s": tokens / total, "one_step_host_ms": sorted(one_host)[5] * 1e3,
               "one_step_wall_ms": sorted(one_wall)[5] * 1e3}
        print(out, flush=True)
        if torch.device(dev).type == "ocl":
            # Kernel timing is switched on per process: a child measures the per-kernel
            # device times (its step times include the per-launch event cost).
            import subprocess
            subprocess.run([sys.executable, __file__, "--config", args.config, "--device", dev, "--top",
                            str(args.top)], env={**os.environ, "TORCH_OCL_PROFILE": "1"}, check=True)
    else:
        torch.ocl._reset_launch_counts()
        step()
        times = torch.ocl._kernel_times()  # finishes the queue
        out = {"config": args.config, "device": dev,
               "launches_per_step": sum(n for n, _ in times.values()),
               "kernel_ms_per_step": sum(ms for _, ms in times.values()),
               "device_span_ms": torch.ocl._kernel_span_ms(),
               "kernels": {k: {"launches": n, "ms": ms} for k, (n, ms) in
                           sorted(times.items(), key=lambda kv: (-kv[1][1], -kv[1][0]))}}
        print({k: v for k, v in out.items() if k != "kernels"})
        print(f"  {'launches':>8s} {'device ms':>9s}  kernel")
        for k, v in list(out["kernels"].items())[:args.top]:
            print(f"  {v['launches']:8d} {v['ms']:9.3f}  {k}")
        write_json(f"step_kernels_{args.config}_{dev.replace(':', '')}", out)
        return
    if args.cpu_profile:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(3):
                step()
            sync(dev)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.top))
    write_json(f"step_profile_{args.config}_{dev.replace(':', '')}", out)


if __name__ == "__main__":
    main()
