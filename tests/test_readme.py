"""README's generated native-op table matches what is registered."""
import os
import subprocess
import sys

import pytest
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.skipif(not hasattr(torch, "ocl"), reason="backend not loaded")
def test_op_table_is_current():
    proc = subprocess.run([sys.executable, "scripts/gen_op_table.py", "--check"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
