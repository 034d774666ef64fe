"""The matrix products of one GPTMini training step, replayed one by one on ocl and cuda:
which products (shape, transposes, count per step) hold the step's GEMM time, and how far each
is from cuBLAS. The products are recorded from a real step (forward, backward, clipping,
optimizer) on the first device with a dispatch mode, so the list always matches the model.

python bench/bench_step_gemms.py [--config large32] [--devices ocl,cuda]

Each distinct (op, sizes, strides) is timed alone (inputs with the recorded strides, random
values); the table gives per-call times, the per-step total (count x time) and ocl/cuda.
Writes bench/results/step_gemms_<config>.json.
"""
import argparse
import collections
import os
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.bench_train import CONFIGS, make_step  # noqa: E402
from bench.common import bench, card, devices, print_table, write_json  # noqa: E402

GEMM_OPS = ("aten.mm.default", "aten.addmm.default", "aten.bmm.default", "aten.baddbmm.default")


class Recorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if str(func) in GEMM_OPS:
            spec = tuple((tuple(a.shape), tuple(a.stride())) if isinstance(a, torch.Tensor) else a for a in args)
            self.calls[(str(func), spec, tuple(sorted(kwargs.items())))] += 1
        return func(*args, **kwargs)


def record(config, device):
    step, _ = make_step(CONFIGS[config], device, True)
    step()
    rec = Recorder()
    with rec:
        step()
    return rec.calls


def materialize(spec, device):
    out = []
    for a in spec:
        if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], tuple):
            shape, stride = a
            size = 1 + sum((s - 1) * st for s, st in zip(shape, stride)) if all(shape) else 0
            out.append(torch.randn(size, device=device).as_strided(shape, stride))
        else:
            out.append(a)
    return out


def flops(op, spec):
    shapes = [a[0] for a in spec if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], tuple)]
    a, b = shapes[-2], shapes[-1]
    batch = a[0] if len(a) == 3 else 1
    return 2.0 * batch * a[-2] * a[-1] * b[-1]


def describe(op, spec):
    shapes = [a for a in spec if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], tuple)]
    (sa, ta), (sb, tb) = shapes[-2], shapes[-1]
    trans = lambda shape, stride: "t" if stride[-2] == 1 and shape[-2] > 1 else "n"  # noqa: E731
    name = op.split(".")[1]
    return f"{name} {'x'.join(map(str, sa))}{trans(sa, ta)} @ {'x'.join(map(str, sb))}{trans(sb, tb)}"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", default="large32")
    ap.add_argument("--devices", default=None)
    ap.add_argument("--tag", default="", help="suffix of the JSON name (e.g. the TORCH_OCL_GEMM_* settings of this run)")
    args = ap.parse_args()
    devs = args.devices.split(",") if args.devices else [d for d in devices(include_cpu=False)]
    calls = record(args.config, devs[0])
    rows = []
    for (op, spec, kw), count in sorted(calls.items(), key=lambda kv: -flops(kv[0][0], kv[0][1]) * kv[1]):
        row = {"product": describe(op, spec), "per step": count, "GFLOP": flops(op, spec) / 1e9}
        func = eval("torch.ops." + op)  # noqa: S307 (a recorded aten op name)
        for dev in devs:
            inputs = materialize(spec, dev)
            t = bench(lambda: func(*inputs, **dict(kw)), dev, iters=10)
            row[f"{dev} us"] = t * 1e6
            row[f"{dev} TFLOP/s"] = flops(op, spec) / t / 1e12
        if "ocl" in devs and "cuda" in devs:
            row["ocl/cuda"] = row["cuda us"] / row["ocl us"]
        rows.append(row)
    total = {dev: sum(r[f"{dev} us"] * r["per step"] for r in rows) / 1e3 for dev in devs}
    cols = ["product", "per step", "GFLOP"] + [c for dev in devs for c in (f"{dev} us", f"{dev} TFLOP/s")]
    cols += ["ocl/cuda"] if "ocl/cuda" in rows[0] else []
    print(f"GPTMini {args.config}: matrix products of one step, " + ", ".join(f"{d}: {card(d)}" for d in devs))
    print_table(rows, cols)
    print("per-step GEMM ms: " + ", ".join(f"{d} {t:.2f}" for d, t in total.items()))
    write_json(f"step_gemms_{args.config}{args.tag}", {
        "config": args.config, "cards": {d: card(d) for d in devs}, "rows": rows, "total_ms": total,
        "env": {k: v for k, v in os.environ.items() if k.startswith("TORCH_OCL_GEMM")}})


if __name__ == "__main__":
    main()
