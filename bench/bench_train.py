"""GPTMini training throughput (tokens/s) and peak memory on ocl next to torch's own cpu/cuda,
measured in the same run, plus the time a fresh process needs to reach its first step.

python bench/bench_train.py [--configs small8,small32,large32] [--steps N] [--devices ocl,cuda,cpu]
    [--precision high]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.common import bench, card, devices, ocl_is_cpu, print_table, sync, worker_rows, write_json  # noqa: E402
from bench.init_profile import bytecode_cached_env  # noqa: E402
from models.gpt_mini import GPTMini, GPTMiniConfig  # noqa: E402

CONFIGS = {
    "small8": dict(model=dict(vocab_size=256, d_model=128, n_heads=4, n_layers=4, d_ff=512, max_len=128), batch=8),
    "small32": dict(model=dict(vocab_size=256, d_model=128, n_heads=4, n_layers=4, d_ff=512, max_len=128), batch=32),
    "large32": dict(model=dict(vocab_size=8192, d_model=512, n_heads=8, n_layers=8, d_ff=2048, max_len=256), batch=32),
}


def make_step(cfg, device, fused):
    torch.manual_seed(0)
    model = GPTMini(GPTMiniConfig(**cfg["model"])).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=fused)
    B, T, V = cfg["batch"], cfg["model"]["max_len"], cfg["model"]["vocab_size"]
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, V, (B, T), generator=g).to(device)
    y = torch.randint(0, V, (B, T), generator=g).to(device)

    def step():
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    return step, B * T


def peak_memory(device, fn):
    kind = torch.device(device).type
    if kind == "cpu":
        return None
    mod = getattr(torch, kind)
    sync(device)
    mod.reset_peak_memory_stats()
    fn()
    sync(device)
    return mod.max_memory_allocated() / 2**20


def first_step_seconds(env=None):
    """Wall time from process start to the end of the first ocl training step (disk cache warm),
    with the import time and the program cache counters of that process (environment `env`)."""
    code = ("import time; t0=time.time(); import torch, sys, json; t_import=time.time()-t0; sys.path.insert(0, '.');"
            "from bench.bench_train import make_step, CONFIGS; s,_=make_step(CONFIGS['small8'],'ocl',True);"
            "t_model=time.time()-t0; s().item(); t=time.time()-t0;"
            "print(json.dumps(dict(total=t, import_torch=t_import, model_ready=t_model, "
            "programs=torch.ocl._program_cache_stats())))")
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_worker(configs, device, steps):
    rows = []
    for name in configs:
        if device == "cpu" and name.startswith("large"):
            continue  # minutes per step on a small CPU; not informative
        fused = torch.device(device).type in ("ocl", "cuda")
        step, tokens = make_step(CONFIGS[name], device, fused)
        t = bench(step, device, warmup=3, iters=steps, repeats=3)
        rows.append({"config": name, "device": device, "card": card(device), "ms/step": t * 1e3,
                     "tokens/s": tokens / t, "peak MiB": peak_memory(device, step)})
        print(rows[-1], file=sys.stderr, flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--configs", default=None,
                    help="default: small8,small32,large32 (small8,small32 when the OpenCL device is a CPU)")
    ap.add_argument("--devices", default=",".join(devices()))
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--precision", default="highest", choices=["highest", "high", "medium"],
                    help="torch.set_float32_matmul_precision in every device's process ('high': TF32 products)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    torch.set_float32_matmul_precision(args.precision)
    if args.configs is None:
        args.configs = "small8,small32" if ocl_is_cpu() else "small8,small32,large32"
    if args.worker:
        print(json.dumps(run_worker(args.configs.split(","), args.worker, args.steps)))
        return
    rows = []
    for device in args.devices.split(","):  # each in its own process (worker_rows says why)
        rows.extend(worker_rows(__file__, device, ["--configs", args.configs, "--steps", str(args.steps),
                                                   "--precision", args.precision]))
    by = {(r["config"], r["device"]): r for r in rows}
    for r in rows:
        if r["device"] == "ocl":
            for ref in ("cuda", "cpu"):
                if (r["config"], ref) in by:
                    r[f"ocl/{ref}"] = r["tokens/s"] / by[(r["config"], ref)]["tokens/s"]
    extra = {}
    if "ocl" in args.devices.split(","):
        first_step_seconds()  # populate the disk cache
        first = first_step_seconds()
        extra["first_step_s_warm_cache"] = first.pop("total")
        extra["first_step_detail"] = first
        # The same with Python's bytecode cache where this environment turns it off (init_profile.py)
        with bytecode_cached_env(dict(os.environ)) as cached:
            if cached is not None:
                first_step_seconds(cached)  # populate the bytecode cache
                first = first_step_seconds(cached)
                extra["first_step_s_warm_cache_pyc"] = first.pop("total")
                extra["first_step_detail_pyc"] = first
    if rows:
        print(f"float32 matmul precision: {args.precision}")
        print_table(rows, ["config", "device", "ms/step", "tokens/s", "peak MiB", "ocl/cuda", "ocl/cpu"])
    for k, v in extra.items():
        print(f"{k}: {v:.2f}" if isinstance(v, float) else f"{k}: {v}")
    write_json("train" if args.precision == "highest" else f"train_{args.precision}",
               {"precision": args.precision, "rows": rows, **extra})


if __name__ == "__main__":
    main()
