"""Reductions over 2^24+ elements agree with a float64 CPU reference to float32 rounding.

These sizes take the split path (partials + finish kernel) for full reductions and long
serial per-item slices for row/column reductions, which is where a naive float32 running sum
drifts (a sequential float32 sum of 2^24 values in [0.5, 1.5) is off by ~1e-3 relative). The
engine keeps float accumulators accurate with compensated per-item sums, Welford/Chan for
the variance and a tree across items and chunks."""
import pytest
import torch

from .conftest import requires_ocl

pytestmark = requires_ocl

N = (1 << 24) + 12345  # not a multiple of any work-group or chunk size


def rel_err(actual, expected):
    a = actual.detach().cpu().double()
    return ((a - expected).abs() / expected.abs().clamp_min(1e-300)).max().item()


@pytest.fixture(scope="module")
def data():
    g = torch.Generator().manual_seed(0)
    pos = torch.rand(N, generator=g) + 0.5  # well conditioned: relative error is meaningful
    sym = torch.randn(N, generator=g)        # cancelling signs
    return pos, sym, pos.to("ocl"), sym.to("ocl")


def test_sum_mean_large(data):
    pos, sym, dpos, dsym = data
    ref = pos.double()
    assert rel_err(dpos.sum(), ref.sum()) < 1e-6
    assert rel_err(dpos.mean(), ref.mean()) < 1e-6
    # Cancelling sum: the error bound scales with sum(|x|), not with the (small) result.
    err = (dsym.sum().cpu().double() - sym.double().sum()).abs().item()
    assert err < 1e-6 * sym.double().abs().sum().item()


def test_var_std_large(data):
    pos, _, dpos, _ = data
    ref = pos.double()
    assert rel_err(dpos.var(), ref.var()) < 2e-6
    assert rel_err(dpos.std(correction=0), ref.std(correction=0)) < 1e-6
    v, m = torch.var_mean(dpos)
    assert rel_err(v, ref.var()) < 2e-6 and rel_err(m, ref.mean()) < 1e-6


def test_norm_large(data):
    pos, sym, dpos, dsym = data
    assert rel_err(torch.linalg.vector_norm(dsym), sym.double().norm()) < 1e-6
    assert rel_err(torch.linalg.vector_norm(dpos, 1), pos.double().norm(1)) < 1e-6
    assert rel_err(dsym.norm(float("inf")), sym.double().abs().max()) == 0


def test_rows_and_columns_large(data):
    pos, _, dpos, _ = data
    n = 4097
    x, dx = pos[: n * n].view(n, n), dpos[: n * n].view(n, n)
    assert rel_err(dx.sum(1), x.double().sum(1)) < 1e-6  # one work-group per row
    assert rel_err(dx.sum(0), x.double().sum(0)) < 1e-6  # column kernel, no transpose
    # The bias gradient of a linear layer: (B*T, C) summed over dim 0, with few outputs.
    b = pos[: 16384 * 771].view(16384, 771)
    db = dpos[: 16384 * 771].view(16384, 771)
    assert rel_err(db.sum(0), b.double().sum(0)) < 1e-6
    assert rel_err(db.var(0), b.double().var(0)) < 2e-6


def test_half_input_large(data):
    pos, _, dpos, _ = data
    h, dh = pos.half(), dpos.half()
    # float32 accumulation of half inputs; the result is exact to float32 before the cast.
    assert rel_err(dh.sum(dtype=torch.float32), h.double().sum()) < 1e-6
    assert rel_err(dh.float().mean(), h.double().mean()) < 1e-6
