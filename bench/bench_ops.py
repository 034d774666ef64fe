"""Memory-bound op throughput in GB/s (bytes each op must read + write, counted once) on ocl
next to cuda/cpu in the same run: copy, elementwise, reductions, softmax, LayerNorm,
cross-entropy and fused AdamW over the large GPTMini's parameter count.

python bench/bench_ops.py [--devices ocl,cuda] [--size N]
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.common import bench, devices, ocl_is_cpu, print_table, write_json  # noqa: E402


def cases(n):
    rows, cols = n // 4096, 4096
    big = lambda d: torch.randn(n, device=d)  # noqa: E731
    mat = lambda d, r=rows, c=cols: torch.randn(r, c, device=d)  # noqa: E731

    def adamw(d):
        # ~25M parameters in 8-layer-like shapes, as in GPTMini large
        shapes = [(8192, 512)] + [(1536, 512), (512, 512), (2048, 512), (512, 2048)] * 8
        ps = [torch.randn(s, device=d, requires_grad=True) for s in shapes]
        for p in ps:
            p.grad = torch.randn_like(p)
        opt = torch.optim.AdamW(ps, lr=1e-3, fused=True)
        opt.step()
        nparam = sum(p.numel() for p in ps)
        # read p, g, m, v; write p, m, v
        return (lambda: opt.step()), 7 * 4 * nparam

    yield "copy", lambda d: (lambda a=big(d), b=big(d): (lambda: b.copy_(a)))(), 2 * 4 * n
    yield "add", lambda d: (lambda a=big(d), b=big(d), c=big(d): (lambda: torch.add(a, b, out=c)))(), 3 * 4 * n
    yield "mul_scalar_", lambda d: (lambda a=big(d): (lambda: a.mul_(1.0001)))(), 2 * 4 * n
    yield "gelu", lambda d: (lambda a=big(d): (lambda: F.gelu(a)))(), 2 * 4 * n
    yield "sum", lambda d: (lambda a=big(d): (lambda: a.sum()))(), 4 * n
    yield "sum_dim0", lambda d: (lambda a=mat(d): (lambda: a.sum(0)))(), 4 * n
    yield "softmax", lambda d: (lambda a=mat(d): (lambda: torch.softmax(a, -1)))(), 2 * 4 * n
    yield "layer_norm", lambda d: (lambda a=mat(d, n // 512, 512), w=torch.ones(512, device=d), b=torch.zeros(512, device=d):
                                   (lambda: F.layer_norm(a, (512,), w, b)))(), 2 * 4 * n
    yield "cross_entropy", lambda d: (lambda a=mat(d, n // 8192, 8192), t=torch.randint(0, 8192, (n // 8192,), device=d):
                                      (lambda: F.cross_entropy(a, t)))(), 4 * n
    yield "adamw_fused", adamw, None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--devices", default=",".join(d for d in devices() if d != "cpu") or "cpu")
    ap.add_argument("--size", type=int, default=None, help="elements (default 2^26; 2^22 on a CPU OpenCL device)")
    args = ap.parse_args()
    if args.size is None:
        args.size = 1 << 22 if ocl_is_cpu() else 1 << 26
    rows = []
    for name, make, nbytes in cases(args.size):
        row = {"op": name}
        for d in args.devices.split(","):
            built = make(d)
            fn, nb = built if isinstance(built, tuple) else (built, nbytes)
            t = bench(fn, d, warmup=3, iters=10, repeats=3)
            row[f"{d} GB/s"] = nb / t / 1e9
            row[f"{d} us"] = t * 1e6
        if "ocl GB/s" in row and "cuda GB/s" in row:
            row["ocl/cuda"] = row["ocl GB/s"] / row["cuda GB/s"]
        if "ocl GB/s" in row:
            copy = rows[0]["ocl GB/s"] if rows else row["ocl GB/s"]
            row["ocl % of copy"] = 100 * row["ocl GB/s"] / copy
        rows.append(row)
        print(row, flush=True)
    cols = ["op"] + [f"{d} GB/s" for d in args.devices.split(",")] + ["ocl/cuda", "ocl % of copy"]
    print_table(rows, cols)
    write_json("ops", rows)


if __name__ == "__main__":
    main()
