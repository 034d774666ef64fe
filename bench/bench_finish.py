"""Ops whose partial results are finished by their last work-group (one launch each): split
reductions (bias gradients, full sums) and LayerNorm backward at GPTMini's shapes, time per
call on ocl next to cuda/cpu in the same run, with ocl's kernel launches per call, its error
against the CPU and whether 50 back-to-back calls give identical bits.

python bench/bench_finish.py [--devices ocl,cuda]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.common import bench, devices, print_table, sync, write_json  # noqa: E402


def cases():
    def rnd(*shape):
        return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))

    def bias_grad(rows, cols):
        a = rnd(rows, cols)
        return lambda d: (lambda x=a.to(d): (lambda: x.sum(0)))()

    def full_sum(n):
        a = rnd(n)
        return lambda d: (lambda x=a.to(d): (lambda: x.sum()))()

    def ln_bwd(rows, cols):
        x, dy, w, b = rnd(rows, cols), rnd(rows, cols) * 0.5, rnd(cols), rnd(cols + 1)[:cols]

        def make(d):
            xd, dyd, wd, bd = x.to(d), dy.to(d), w.to(d), b.to(d)
            _, mean, rstd = torch.ops.aten.native_layer_norm(xd, [cols], wd, bd, 1e-5)
            return lambda: torch.ops.aten.native_layer_norm_backward(dyd, xd, [cols], mean, rstd, wd, bd,
                                                                     [True, True, True])
        return make

    # GPTMini small (batch 32: 4096 tokens x 128 / 512 features) and large (8192 x 512 / 2048).
    yield "sum(0) 4096x128", bias_grad(4096, 128)
    yield "sum(0) 4096x512", bias_grad(4096, 512)
    yield "sum(0) 8192x2048", bias_grad(8192, 2048)
    yield "sum() 2^20", full_sum(1 << 20)
    yield "sum() 2^24", full_sum(1 << 24)
    yield "layer_norm_bwd 4096x128", ln_bwd(4096, 128)
    yield "layer_norm_bwd 8192x512", ln_bwd(8192, 512)
    yield "layer_norm_bwd 2048x8192", ln_bwd(2048, 8192)


def launches_per_call(fn):
    fn()
    sync("ocl")
    torch.ocl._reset_launch_counts()
    fn()
    sync("ocl")
    return sum(torch.ocl._launch_counts().values())


def flat(out):
    return [t.cpu() for t in (out if isinstance(out, (tuple, list)) else [out])]


def check(fn, ref, repeats=50):
    """Max error against the CPU and whether `repeats` back-to-back calls give identical bits
    (a race in the last-group finish would show as drift between calls or a wrong value)."""
    first = flat(fn())
    outs = [fn() for _ in range(repeats)]
    same = all(torch.equal(a, b) for o in outs for a, b in zip(flat(o), first))
    err = max(((a.double() - r.double()).abs().max() / r.double().abs().max().clamp_min(1e-30)).item()
              for a, r in zip(first, flat(ref())))
    return err, same


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--devices", default=",".join(d for d in devices() if d != "cpu") or "cpu")
    args = ap.parse_args()
    devs = args.devices.split(",")
    rows = []
    for name, make in cases():
        row = {"op": name}
        for d in devs:
            fn = make(d)
            row[f"{d} us"] = bench(fn, d, warmup=5, iters=50, repeats=3) * 1e6
            if d.startswith("ocl"):
                row["ocl launches"] = launches_per_call(fn)
                row["rel err"], row["deterministic"] = check(fn, make("cpu"))
        if "ocl us" in row and "cuda us" in row:
            row["cuda/ocl time"] = row["cuda us"] / row["ocl us"]
        rows.append(row)
        print(row, flush=True)
    print_table(rows, ["op"] + [f"{d} us" for d in devs] + ["ocl launches", "rel err", "deterministic", "cuda/ocl time"])
    write_json("finish", rows)


if __name__ == "__main__":
    main()
