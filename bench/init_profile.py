"""Where a fresh process's time to its first training step goes, on ocl (kernel disk cache
warm) and on cuda where present: torch import, device initialization, the first copy, model
and optimizer set-up (AdamW's constructor imports torch._dynamo: seconds, on any device) and
the first GPTMini small step. Issue 6 asks the first step within 2 s of a warm start; the
parts torch_ocl owns are the device init and the first step.

Python's own disk cache counts as much as ours: a process that may not write bytecode
(PYTHONDONTWRITEBYTECODE, as on the lent GPU machines, whose torch has no .pyc files) compiles
every torch module it imports from source, every time. Where that is so, each device is also
measured with Python's bytecode cache in a scratch directory (PYTHONPYCACHEPREFIX, warmed by
one process first): the state of an ordinary pip install, which writes .pyc files.

python bench/init_profile.py
"""
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

CODE = r"""
import time, json, sys
dev = sys.argv[1]
t = {}
t0 = time.perf_counter()
import torch
t["import torch"] = time.perf_counter() - t0
mod = getattr(torch, dev)
s = time.perf_counter(); torch.empty(1, device=dev); mod.synchronize()
t["device init"] = time.perf_counter() - s
s = time.perf_counter(); torch.ones(1000).to(dev); mod.synchronize()
t["first copy"] = time.perf_counter() - s
s = time.perf_counter(); import torch._dynamo
t["import torch._dynamo (AdamW's constructor does)"] = time.perf_counter() - s
sys.path.insert(0, ".")
from bench.bench_train import make_step, CONFIGS
s = time.perf_counter(); step, _ = make_step(CONFIGS["small8"], dev, True); mod.synchronize()
t["model + optimizer on the device"] = time.perf_counter() - s
s = time.perf_counter(); step().item()
t["first step"] = time.perf_counter() - s
t["total"] = time.perf_counter() - t0
if dev == "ocl":
    t["programs"] = torch.ocl._program_cache_stats()
print(json.dumps(t))
"""


def run(dev, env):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    out = subprocess.run([sys.executable, "-c", CODE, dev], cwd=root, env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def bytecode_cached_env(base):
    """base with Python's bytecode cache on, in a scratch PYTHONPYCACHEPREFIX removed on exit;
    None where base has the cache on already."""
    if not (base.get("PYTHONDONTWRITEBYTECODE") or sys.flags.dont_write_bytecode):
        yield None
        return
    pycache = tempfile.mkdtemp(prefix="torch_ocl_pycache_")
    try:
        env = {k: v for k, v in base.items() if k != "PYTHONDONTWRITEBYTECODE"}
        yield {**env, "PYTHONPYCACHEPREFIX": pycache}
    finally:
        shutil.rmtree(pycache, ignore_errors=True)


def main():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from bench.common import write_json
    import torch
    base = dict(os.environ)
    results = {}
    with bytecode_cached_env(base) as cached:
        for suffix, env in [("", base)] + ([(" +pyc", cached)] if cached is not None else []):
            run("ocl", env)  # warm the kernel disk cache (and the bytecode cache, where on)
            results["ocl" + suffix] = run("ocl", env)
            if torch.cuda.is_available():
                cuda_env = {**env, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
                if suffix:
                    run("cuda", cuda_env)
                results["cuda" + suffix] = run("cuda", cuda_env)
    if cached is not None:
        print("+pyc: with Python's bytecode cache (this environment sets PYTHONDONTWRITEBYTECODE)")
    keys = [k for k in results["ocl"] if k != "programs"]
    print(f"{'seconds':48s}" + "".join(f"{d:>10s}" for d in results))
    for k in keys:
        print(f"{k:48s}" + "".join(f"{r.get(k, float('nan')):10.3f}" for r in results.values()))
    print("ocl programs:", results["ocl"].get("programs"))
    write_json("init", results)


if __name__ == "__main__":
    main()
