"""The disk cache of program binaries (csrc/runtime/Programs.cpp) under the conditions of a test
run with pytest-xdist: processes building the same programs into one cold cache at the same
time, and later processes loading them. Each entry is written to a unique temporary file and
renamed into place, so a reader never sees half a file; a binary is built with the options its
source build had, so a warm cache gives the program a cold one gives."""
import os
import re
import subprocess
import sys
import textwrap

from .conftest import requires_ocl
from .test_autoload import ROOT, ok, run_py

# Waits until every sibling is ready, so the cold builds overlap, then builds a few programs.
_PROBE = """
    import os, sys, time, torch
    import torch.nn.functional as F
    if len(sys.argv) > 1:
        me, n, sync = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
        open(os.path.join(sync, f"ready{me}"), "w").close()
        t0 = time.time()
        while len([f for f in os.listdir(sync) if f.startswith("ready")]) < n and time.time() - t0 < 60:
            time.sleep(0.01)
    g = torch.Generator().manual_seed(0)
    x, t = torch.randn(9, 70, generator=g), torch.randint(0, 70, (9,), generator=g)
    good = [torch.allclose(torch.softmax(x.to("ocl"), -1).cpu(), torch.softmax(x, -1), atol=1e-6),
            torch.allclose(x.to("ocl").sum(0).cpu(), x.sum(0), atol=1e-5),
            torch.allclose(F.cross_entropy(x.to("ocl"), t.to("ocl")).cpu(), F.cross_entropy(x, t), atol=1e-5),
            torch.allclose(F.nll_loss(x.to("ocl"), t.to("ocl")).cpu(), F.nll_loss(x, t), atol=1e-5)]
    print("result", all(good))
    print("stats", torch.ocl._program_cache_stats())
"""
_LOG = re.compile(r"torch_ocl: (built|loaded) (\S+) on ocl:\d+ (?:from the disk cache )?with options '([^']*)'")


def _stats(out):
    line = [line for line in out.splitlines() if line.startswith("stats ")][-1]
    return eval(line[6:], {})  # noqa: S307 - a dict printed by the child


def _programs(stderr, how):
    return sorted((label, opts) for kind, label, opts in _LOG.findall(stderr) if kind == how)


@requires_ocl
def test_concurrent_cold_builds_then_warm_load(tmp_path):
    cache, sync = tmp_path / "cache", tmp_path / "sync"
    sync.mkdir()
    env = dict(os.environ, TORCH_OCL_CACHE_DIR=str(cache), TORCH_OCL_BUILD_LOG="1",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(_PROBE), str(i), "2", str(sync)], cwd=ROOT,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    cold = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{out}\nstderr:\n{err}"
        cold.append((out, err))
    files = sorted(f.name for f in cache.iterdir())
    assert all(f.endswith(".bin") for f in files), f"left behind: {files}"  # no temporary files
    for out, _ in cold:
        s = _stats(out)
        assert "result True" in out
        assert s["disk_rejected"] == 0, s  # never half a file
        assert s["built_from_source"] + s["loaded_from_disk"] == len(files), (s, files)

    r = run_py(_PROBE, env={"TORCH_OCL_CACHE_DIR": str(cache), "TORCH_OCL_BUILD_LOG": "1"})
    out = ok(r)
    assert "result True" in out
    s = _stats(out)
    assert s["built_from_source"] == 0 and s["loaded_from_disk"] == len(files) and s["disk_rejected"] == 0, s
    # Every binary was built with the options of its source build (NVIDIA's ptxas options,
    # e.g. -cl-nv-maxrregcount, take effect in a binary's build).
    built = sorted(set(_programs(cold[0][1], "built") + _programs(cold[1][1], "built")))
    assert built and _programs(r.stderr, "loaded") == built
