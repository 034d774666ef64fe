"""Scan and min/max-pair throughput in GB/s (bytes each op must read + write, counted once) on
ocl next to cuda/cpu in the same run: cumsum/cummax/logcumsumexp over one long row (the
multi-block reduce-then-scan path), over many short rows (one work-group per row), over dim 0
(one work-item per column), and aminmax full and per row.

python bench/bench_scan.py [--devices ocl,cuda] [--size N]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.common import bench, devices, print_table, write_json  # noqa: E402


def cases(n):
    rows, cols = n // 4096, 4096

    for op, fn, out_bytes in (("cumsum", lambda x, d: torch.cumsum(x, d), 4),
                              ("cummax", lambda x, d: torch.cummax(x, d), 4 + 8),
                              ("logcumsumexp", lambda x, d: torch.logcumsumexp(x, d), 4)):
        for tag, shape, dim in (("1 row", (n,), 0), ("rows", (rows, cols), 1), ("dim 0", (rows, cols), 0)):
            yield f"{op} {tag}", shape, (lambda fn=fn, dim=dim: (lambda x: fn(x, dim)))(), (4 + out_bytes) * n
    yield "aminmax all", (n,), lambda x: torch.aminmax(x), 4 * n
    yield "aminmax rows", (rows, cols), lambda x: torch.aminmax(x, dim=1), 4 * n
    yield "aminmax dim 0", (rows, cols), lambda x: torch.aminmax(x, dim=0), 4 * n


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--devices", default=",".join(d for d in devices() if d != "cpu") or "cpu")
    ap.add_argument("--size", type=int, default=1 << 24)
    args = ap.parse_args()
    devs = args.devices.split(",")
    results = []
    for name, shape, fn, nbytes in cases(args.size):
        row = {"op": name}
        for d in devs:
            x = torch.randn(shape, device=d)
            t = bench(lambda: fn(x), d, warmup=3, iters=10, repeats=3)
            row[f"{d} GB/s"] = nbytes / t / 1e9
            row[f"{d} us"] = t * 1e6
        if "ocl GB/s" in row and "cuda GB/s" in row:
            row["ocl/cuda"] = row["ocl GB/s"] / row["cuda GB/s"]
        results.append(row)
        print(row, flush=True)
    print_table(results, ["op"] + [f"{d} GB/s" for d in devs] + [f"{d} us" for d in devs] + ["ocl/cuda"])
    write_json("scan", results)


if __name__ == "__main__":
    main()
