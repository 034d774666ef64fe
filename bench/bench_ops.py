"""Memory-bound op throughput in GB/s (bytes each op must read + write, counted once) on ocl
next to cuda/cpu in the same run: copy, elementwise, reductions, softmax and LayerNorm (forward
and backward), cross-entropy and fused AdamW over the large GPTMini's parameter count.

python bench/bench_ops.py [--devices ocl,cuda] [--size N] [--ops softmax,layer_norm,...]
                          [--rows "ROWRED=local" "ROWRED=ptx" ...]

--ops keeps the cases whose names are listed (copy always runs first and again last: "% of copy"
is against the better of the two, since the copy's own rate moves by up to ~15% between runs).
Each timing is the median of 5 repeats of ~25 ms of back-to-back calls.
--rows times the softmax, LayerNorm and cross-entropy rows on ocl once per row-kernel configuration
(the tuning entries "softmax/rows", "norm/rows" and "cross_entropy/rows", see csrc/ops/rows.h: ROWRED=local|ptx|khr|emu,
VEC=0|1, ITEMS=4..64, MAXRREG=0|16..255 (NVIDIA); for LayerNorm only BWD_ITEMS, BWD_MAXRREG, GROUPS_PER_CU,
FAN_IN, PREFETCH=0|1; for cross-entropy only FWD_TEAM); "" or
"default" is the device default. Also settable through the environment:
BENCH_ROWS="ROWRED=local;ROWRED=ptx".
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.common import bench, devices, ocl_is_cpu, print_table, sync, write_json  # noqa: E402


ROW_OPS = ("softmax", "softmax_bwd", "layer_norm", "layer_norm_bwd", "layer_norm_bwd_8k", "cross_entropy",
           "cross_entropy_bwd")  # the row kernels --rows configures


def cases(n):
    rows, cols = n // 4096, 4096
    big = lambda d: torch.randn(n, device=d)  # noqa: E731
    mat = lambda d, r=rows, c=cols: torch.randn(r, c, device=d)  # noqa: E731

    def softmax_bwd(d):
        y, g = torch.softmax(mat(d), -1), mat(d)
        # read grad and output, write grad_input
        return (lambda: torch.ops.aten._softmax_backward_data(g, y, -1, torch.float32)), 3 * 4 * n

    def layer_norm_bwd(d, c=512, r=None):
        r = r or n // c
        x, dy = mat(d, r, c), mat(d, r, c)
        w, b = torch.randn(c, device=d), torch.randn(c, device=d)
        _, mean, rstd = torch.ops.aten.native_layer_norm(x, [c], w, b, 1e-5)
        # read dy, x, mean, rstd, w; write dx, dw, db
        nbytes = 3 * 4 * r * c + 2 * 4 * r + 3 * 4 * c
        return (lambda: torch.ops.aten.native_layer_norm_backward(dy, x, [c], mean, rstd, w, b,
                                                                  [True, True, True])), nbytes

    def cross_entropy_bwd(d, c=8192):
        if d == "cuda":
            return None  # torch 2.11's CUDA autograd asserts in a process that loaded torch_ocl
        a = mat(d, n // c, c).requires_grad_()
        loss = F.cross_entropy(a, torch.randint(0, c, (n // c,), device=d))
        # read the logits, write their gradient
        return (lambda: torch.autograd.grad(loss, a, retain_graph=True)), 2 * 4 * n

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
    yield "softmax_bwd", softmax_bwd, None
    yield "layer_norm", lambda d: (lambda a=mat(d, n // 512, 512), w=torch.ones(512, device=d), b=torch.zeros(512, device=d):
                                   (lambda: F.layer_norm(a, (512,), w, b)))(), 2 * 4 * n
    yield "layer_norm_bwd", layer_norm_bwd, None
    # GPTMini large's shape (8192 tokens x 512): 16 MiB per tensor, so launch and tail weigh in
    yield "layer_norm_bwd_8k", lambda d: layer_norm_bwd(d, 512, 8192), None
    yield "cross_entropy", lambda d: (lambda a=mat(d, n // 8192, 8192), t=torch.randint(0, 8192, (n // 8192,), device=d):
                                      (lambda: F.cross_entropy(a, t)))(), 4 * n
    yield "cross_entropy_bwd", cross_entropy_bwd, None
    yield "adamw_fused", adamw, None


def iters_for(fn, device, target_s=0.025):
    """Calls per timed repeat: enough for ~25 ms, so one repeat is not a handful of launches."""
    fn()
    sync(device)
    t0 = time.perf_counter()
    fn()
    sync(device)
    return int(min(1000, max(10, target_s / max(time.perf_counter() - t0, 1e-6))))


def time_case(make, nbytes, device):
    """(GB/s, us) of a case of cases() on device, or None where it does not run."""
    built = make(device)
    if built is None:
        return None
    fn, nb = built if isinstance(built, tuple) else (built, nbytes)
    t = bench(fn, device, warmup=3, iters=iters_for(fn, device), repeats=5)
    return nb / t / 1e9, t * 1e6


NORM_ONLY_KEYS = ("BWD_ITEMS", "BWD_MAXRREG", "GROUPS_PER_CU", "FAN_IN", "PREFETCH")  # LayerNorm backward (csrc/ops/rows.h)
CE_ONLY_KEYS = ("FWD_TEAM",)  # cross-entropy forward


def set_rows_config(text):
    """Points the softmax, norm and cross-entropy row kernels of ocl:0 at configuration `text`
    ("" = default); each family gets it without the keys only another family takes."""
    import torch_ocl._C as C

    def without(keys):
        return " ".join(i for i in text.split() if i.split("=")[0] not in keys)

    C._tuning_set(0, "softmax/rows", without(NORM_ONLY_KEYS + CE_ONLY_KEYS))
    C._tuning_set(0, "cross_entropy/rows", without(NORM_ONLY_KEYS))
    C._tuning_set(0, "norm/rows", without(CE_ONLY_KEYS))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--devices", default=",".join(d for d in devices() if d != "cpu") or "cpu")
    ap.add_argument("--size", type=int, default=None, help="elements (default 2^26; 2^22 on a CPU OpenCL device)")
    ap.add_argument("--ops", default=None, help="comma-separated case names to run (copy always runs)")
    ap.add_argument("--rows", nargs="*", default=None,
                    help='row-kernel configurations to compare on ocl, e.g. "ROWRED=local" "ROWRED=ptx"')
    args = ap.parse_args()
    if args.size is None:
        args.size = 1 << 22 if ocl_is_cpu() else 1 << 26
    if args.rows is None:
        args.rows = os.environ["BENCH_ROWS"].split(";") if os.environ.get("BENCH_ROWS") else [""]
    args.rows = ["" if r in ("", "default") else r for r in args.rows]
    wanted = None if args.ops is None else {"copy", *args.ops.split(",")}
    all_cases = list(cases(args.size))
    if wanted is not None:
        unknown = wanted - {c[0] for c in all_cases}
        if unknown:
            ap.error(f"unknown --ops {sorted(unknown)}; cases: {', '.join(c[0] for c in all_cases)}")
    rows = []
    for name, make, nbytes in all_cases:
        if wanted is not None and name not in wanted:
            continue
        configs = args.rows if name in ROW_OPS else [""]
        done = {}  # device -> (GB/s, us) of the devices --rows does not change
        for cfg in configs:
            row = {"op": name + (f" [{cfg}]" if cfg else "")}
            for d in args.devices.split(","):
                if d != "ocl" and d in done:
                    row[f"{d} GB/s"], row[f"{d} us"] = done[d]
                    continue
                if d == "ocl":
                    set_rows_config(cfg)
                res = time_case(make, nbytes, d)
                if res is None:  # the case does not run on d
                    continue
                row[f"{d} GB/s"], row[f"{d} us"] = done[d] = res
            if "ocl GB/s" in row and "cuda GB/s" in row:
                row["ocl/cuda"] = row["ocl GB/s"] / row["cuda GB/s"]
            rows.append(row)
            print(row, flush=True)
    if "ocl" in args.devices.split(","):
        set_rows_config("")
        # The copy again at the end: its rate moves between runs by up to ~15% on the same card
        # (bench/RESULTS.md, session 5), so the reference is the better of the two copies.
        _, make, nbytes = next(c for c in all_cases if c[0] == "copy")
        gbs, us = time_case(make, nbytes, "ocl")
        rows.append({"op": "copy (end)", "ocl GB/s": gbs, "ocl us": us})
        copy = max(r["ocl GB/s"] for r in rows if r["op"] in ("copy", "copy (end)"))
        for row in rows:
            if "ocl GB/s" in row:
                row["ocl % of copy"] = 100 * row["ocl GB/s"] / copy
    cols = ["op"] + [f"{d} GB/s" for d in args.devices.split(",")] + ["ocl/cuda", "ocl % of copy"]
    print_table(rows, cols)
    write_json("ops", rows)


if __name__ == "__main__":
    main()
