"""The test harness itself: sample inputs (tests/cases.py:make) must not depend on the process
that draws them, or a case checks different numbers in every run and pytest-xdist worker."""
import os
import subprocess
import sys

DRAW = ("import torch; from tests.cases import make; "
        "print(make((3, 5), torch.float32).tolist(), make((4,), torch.int64, seed=2).tolist(), "
        "make((2, 3), torch.bfloat16, seed=(1, 'x')).float().tolist())")


def _draw(hashseed, test_seed=None):
    env = dict(os.environ, PYTHONHASHSEED=str(hashseed), TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    env.pop("TORCH_OCL_TEST_SEED", None)
    if test_seed is not None:
        env["TORCH_OCL_TEST_SEED"] = str(test_seed)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", DRAW], env=env, cwd=root, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_make_is_the_same_in_every_process():
    # str hashes are salted per process: hash()-based seeds changed with PYTHONHASHSEED.
    # TORCH_OCL_TEST_SEED draws another set on purpose.
    first = _draw(1)
    assert _draw(2) == first
    assert _draw(1, test_seed=7) != first
