"""The matrix products of one GPTMini training step, replayed one by one on ocl and cuda:
which products (shape, transposes, count per step) hold the step's GEMM time, and how far each
is from cuBLAS. The products are recorded from a real step (forward, backward, clipping,
optimizer) on the first device with a dispatch mode, so the list always matches the model.

python bench/bench_step_gemms.py [--config large32] [--devices ocl,cuda] [--precision high]

Each distinct (op, sizes, strides) is timed alone (inputs with the recorded strides, random
values); the table gives per-call times, the per-step total (count x time) and ocl/cuda, twice:
- wall: host time of 10 back-to-back calls and a synchronize, divided by 10. It includes the
  latency from the first enqueue to the first kernel's start, which a training step (hundreds
  of queued kernels) hides, and which is larger through OpenCL than through CUDA.
- gpu: device time of 50 back-to-back calls queued behind a few milliseconds of other work (so
  the host's enqueue rate cannot leave the device idle between them), divided by 50: host time
  from before the busy work to a synchronize after the calls, less the same without the calls
  (median of 7 of each), on both devices alike. It counts every kernel of a call and the gaps
  between kernels. This is the kernels' speed; for host-bound products (GPTMini small) it is
  not the wall time. (Kernel profiling events are not used: NVIDIA's OpenCL driver with
  profiling on spaces back-to-back kernels ~12 us apart, against 1.5 us without, on an H200;
  bench/RESULTS.md, session 12.) On a CPU device (PoCL) it is the wall time.
--precision sets torch.set_float32_matmul_precision for every device: "high" lets float32
products round their operands to TF32 (cuBLAS's and ocl's tensor-core kernels).
Writes bench/results/step_gemms_<config>[_<precision>].json.
"""
import argparse
import collections
import os
import sys
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.bench_train import CONFIGS, make_step  # noqa: E402
from bench.common import bench, card, devices, print_table, sync, write_json  # noqa: E402

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


def products(config, device):
    """The step's distinct products, heaviest (count x FLOP) first: [(key, op, spec, kwargs, count)]."""
    calls = record(config, device)
    order = sorted(calls.items(), key=lambda kv: -flops(kv[0][0], kv[0][1]) * kv[1])
    return [(repr(k), k[0], k[1], k[2], n) for k, n in order]


BUSY_ELEMS = 1 << 26  # float32 elements the device multiplies (16 passes) before a timed batch


def gpu_us(func, inputs, kw, device, n=50, reps=7):
    """Device time per call of n back-to-back calls (see the module docstring). The calls are
    queued behind a few milliseconds of other work (16 passes over 256 MiB), so the device
    never waits for the host between them: a host-bound product (GPTMini small's) is timed by
    its kernels, not by its enqueue rate."""
    for _ in range(3):
        func(*inputs, **kw)
    block = torch.ones(BUSY_ELEMS, device=device)

    def run(count):
        sync(device)
        t0 = time.perf_counter()
        for _ in range(16):
            block.mul_(1.0)
        for _ in range(count):
            func(*inputs, **kw)
        sync(device)
        return time.perf_counter() - t0

    with_calls = sorted(run(n) for _ in range(reps))[reps // 2]
    busy_only = sorted(run(0) for _ in range(reps))[reps // 2]
    return (with_calls - busy_only) * 1e6 / n


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", default="large32")
    ap.add_argument("--devices", default=None)
    ap.add_argument("--tag", default="", help="suffix of the JSON name (e.g. the TORCH_OCL_GEMM_* settings of this run)")
    ap.add_argument("--precision", default="highest", choices=["highest", "high", "medium"],
                    help="torch.set_float32_matmul_precision for the run")
    args = ap.parse_args()
    torch.set_float32_matmul_precision(args.precision)
    if args.precision != "highest":
        args.tag = f"_{args.precision}{args.tag}"
    devs = args.devices.split(",") if args.devices else [d for d in devices(include_cpu=False)]
    # Recorded on ocl where it is one of the devices: a CUDA backward fails in a process with
    # torch_ocl loaded (pytorch/pytorch#161129, see the README), forward products do not.
    prods = products(args.config, "ocl" if "ocl" in devs else devs[0])
    cpu_device = {d: d == "cpu" or (torch.device(d).type == "ocl" and torch.ocl.get_device_properties(d).type == "cpu")
                  for d in devs}
    rows = []
    for key, op, spec, kw, count in prods:
        row = {"product": describe(op, spec), "per step": count, "GFLOP": flops(op, spec) / 1e9}
        func = eval("torch.ops." + op)  # noqa: S307 (a recorded aten op name)
        for dev in devs:
            inputs = materialize(spec, dev)
            t = bench(lambda: func(*inputs, **dict(kw)), dev, iters=10)
            row[f"{dev} us"] = t * 1e6
            row[f"{dev} gpu us"] = row[f"{dev} us"] if cpu_device[dev] else gpu_us(func, inputs, dict(kw), dev)
        if "ocl" in devs and "cuda" in devs:
            row["ocl/cuda"] = row["cuda us"] / row["ocl us"]
            row["gpu ocl/cuda"] = row["cuda gpu us"] / row["ocl gpu us"]
        rows.append(row)
    total = {f"{dev}{kind}": sum(r[f"{dev}{kind} us"] * r["per step"] for r in rows) / 1e3
             for dev in devs for kind in ("", " gpu")}
    cols = ["product", "per step", "GFLOP"] + [f"{dev}{kind} us" for kind in ("", " gpu") for dev in devs]
    cols += ["ocl/cuda", "gpu ocl/cuda"] if "ocl/cuda" in rows[0] else []
    print(f"GPTMini {args.config}: matrix products of one step, float32 matmul precision {args.precision}, "
          + ", ".join(f"{d}: {card(d)}" for d in devs))
    print_table(rows, cols)
    print("per-step GEMM ms (wall): " + ", ".join(f"{d} {total[d]:.2f}" for d in devs))
    print("per-step GEMM ms (gpu): " + ", ".join(f"{d} {total[d + ' gpu']:.2f}" for d in devs))
    write_json(f"step_gemms_{args.config}{args.tag}", {
        "config": args.config, "precision": args.precision, "cards": {d: card(d) for d in devs}, "rows": rows,
        "total_ms": total,
        "env": {k: v for k, v in os.environ.items() if k.startswith("TORCH_OCL_GEMM")}})


if __name__ == "__main__":
    main()
