"""Quick device check: properties, a correctness smoke test, launch overhead and copy bandwidth.

python bench/device_smoke.py [--json OUT]
"""
import argparse
import json
import time

import torch


def timeit(fn, sync, iters=50, warmup=5):
    for _ in range(warmup):
        fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - t0) / iters


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    out = {"torch": torch.__version__, "device": repr(torch.ocl.get_device_properties(0))}
    print(out["device"])
    x = torch.randn(1000, 37)
    d = x.to("ocl")
    assert torch.equal(d.cpu(), x)
    assert torch.equal(d.t().contiguous().cpu(), x.t().contiguous())
    assert torch.equal(d.to(torch.float16).cpu(), x.to(torch.float16))
    sync = torch.ocl.synchronize
    small = torch.empty(16, device="ocl")
    out["fill_small_us"] = timeit(lambda: small.fill_(1.0), sync, 2000) * 1e6
    n = 1 << 28  # 1 GiB of float32
    a = torch.empty(n, device="ocl").fill_(1.0)
    b = torch.empty(n, device="ocl")
    t = timeit(lambda: b.copy_(a), sync, 20)
    out["copy_buffer_GBps"] = 2 * 4 * n / t / 1e9
    a2 = a.view(1 << 14, 1 << 14)
    b2 = b.view(1 << 14, 1 << 14)
    t = timeit(lambda: b2.copy_(a2.t()), sync, 10)
    out["copy_transpose_GBps"] = 2 * 4 * n / t / 1e9
    t = timeit(lambda: b.fill_(2.0), sync, 20)
    out["fill_GBps"] = 4 * n / t / 1e9
    h = torch.empty(n, dtype=torch.float32).pin_memory() if False else torch.empty(1 << 24)
    t = timeit(lambda: h.copy_(a[: 1 << 24]), sync, 10)
    out["d2h_GBps"] = 4 * (1 << 24) / t / 1e9
    if torch.cuda.is_available():
        ca = torch.ones(n, device="cuda")
        cb = torch.empty(n, device="cuda")
        t = timeit(lambda: cb.copy_(ca), torch.cuda.synchronize, 20)
        out["cuda_copy_GBps"] = 2 * 4 * n / t / 1e9
        cs = torch.empty(16, device="cuda")
        out["cuda_fill_small_us"] = timeit(lambda: cs.fill_(1.0), torch.cuda.synchronize, 2000) * 1e6
    for k, v in out.items():
        print(f"{k:24s} {v:.2f}" if isinstance(v, float) else f"{k:24s} {v}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
