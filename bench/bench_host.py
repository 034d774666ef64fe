"""Host cost per op: microseconds the calling thread spends per call of an op with small
operands (the device work is tiny, so back-to-back calls measure dispatch + argument setup +
enqueue), on ocl next to cuda where present, in the same process. This is what bounds a
launch-bound step such as GPTMini small's.

python bench/bench_host.py [--devices ocl,cuda] [--iters 2000]
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.common import devices, print_table, sync, write_json  # noqa: E402


def cases(d):
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g).to(d)  # noqa: E731
    x, w, b = r(256, 128), r(384, 128), r(384)
    h, wt = r(256, 384), r(128)
    idx = torch.randint(0, 256, (256,), generator=g).to(d)
    lg = r(256, 256)
    q = r(2, 4, 32, 32)
    ps = [r(128, 128) for _ in range(8)]
    return {
        "empty": lambda: torch.empty(256, 128, device=d),
        "view": lambda: x.view(128, 256),
        "fill_": lambda: h.fill_(1.0),
        "add": lambda: x + x,
        "add_": lambda: x.add_(x),
        "mul scalar": lambda: x * 0.5,
        "gelu": lambda: F.gelu(x),
        "linear (addmm)": lambda: F.linear(x, w, b),
        "mm": lambda: torch.mm(x, w.t()),
        "mm.t() grad": lambda: torch.mm(h.t(), x),
        "sum(0)": lambda: h.sum(0),
        "sum()": lambda: h.sum(),
        "layer_norm": lambda: F.layer_norm(x, (128,), wt, wt),
        "softmax": lambda: torch.softmax(lg, -1),
        "cross_entropy": lambda: F.cross_entropy(lg, idx),
        "embedding": lambda: F.embedding(idx, x),
        "cat": lambda: torch.cat([x, x], 1),
        "sdpa causal": lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True),
        "_foreach_mul_ (8)": lambda: torch._foreach_mul_(ps, 1.0),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--devices", default=",".join(devices(include_cpu=False)) or "cpu")
    ap.add_argument("--iters", type=int, default=2000)
    args = ap.parse_args()
    devs = args.devices.split(",")
    table = {}
    for d in devs:
        for name, fn in cases(d).items():
            for _ in range(50):
                fn()
            sync(d)
            t0 = time.perf_counter()
            for _ in range(args.iters):
                fn()
            t = (time.perf_counter() - t0) / args.iters
            sync(d)
            table.setdefault(name, {"op": name})[f"{d} us"] = t * 1e6
    rows = list(table.values())
    if "ocl" in devs and "cuda" in devs:
        for r in rows:
            r["ocl/cuda"] = r["ocl us"] / r["cuda us"]
    print_table(rows, ["op"] + [f"{d} us" for d in devs] + (["ocl/cuda"] if "ocl/cuda" in rows[0] else []))
    write_json("host", rows)


if __name__ == "__main__":
    main()
