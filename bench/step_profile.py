"""Where a GPTMini training step's time goes on ocl: host enqueue time per step (no sync),
device-bound time per step (with sync), kernel launches per step by kernel name, and the
per-op host cost from torch.profiler's CPU view.

python bench/step_profile.py [--config small32] [--device ocl] [--top 25]
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
    args = ap.parse_args()
    dev = args.device
    step, tokens = make_step(CONFIGS[args.config], dev, True)
    for _ in range(5):
        step()
    sync(dev)
    n = 20
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    host = (time.perf_counter() - t0) / n
    sync(dev)
    total = (time.perf_counter() - t0) / n
    out = {"config": args.config, "device": dev, "host_ms_per_step": host * 1e3, "ms_per_step": total * 1e3,
           "tokens/s": tokens / total}
    if torch.device(dev).type == "ocl":
        torch.ocl._reset_launch_counts()
        step()
        sync(dev)
        counts = torch.ocl._launch_counts()
        out["launches_per_step"] = sum(counts.values())
        out["launches"] = dict(sorted(counts.items(), key=lambda kv: -kv[1]))
    print({k: v for k, v in out.items() if k != "launches"})
    if "launches" in out:
        for k, v in list(out["launches"].items())[:args.top]:
            print(f"  {v:5d}  {k}")
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            step()
        sync(dev)
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.top))
    write_json(f"step_profile_{args.config}_{dev.replace(':', '')}", out)


if __name__ == "__main__":
    main()
