"""Device random ops: reproducible under torch.manual_seed, independent of the CPU generator,
explicit generators, RNG state round trips, and distribution checks with fixed seeds."""
import math

import pytest
import torch

from .conftest import requires_ocl

pytestmark = requires_ocl
D = "ocl"

DRAWS = {
    "randn": lambda g=None: torch.randn(1000, device=D, generator=g),
    "rand": lambda g=None: torch.rand(1000, device=D, generator=g),
    "randint": lambda g=None: torch.randint(0, 100, (1000,), device=D, generator=g),
    "normal_": lambda g=None: torch.empty(999, device=D).normal_(1, 2, generator=g),
    "uniform_": lambda g=None: torch.empty(999, device=D, dtype=torch.float64).uniform_(-1, 1, generator=g),
    "random_": lambda g=None: torch.empty(999, device=D, dtype=torch.int64).random_(generator=g),
    "random_to": lambda g=None: torch.empty(999, device=D, dtype=torch.int32).random_(7, generator=g),
    "random_from_to": lambda g=None: torch.empty(999, device=D).random_(-3, 9, generator=g),
    "bernoulli_": lambda g=None: torch.empty(999, device=D).bernoulli_(0.3, generator=g),
    "bernoulli": lambda g=None: torch.bernoulli(torch.full((999,), 0.3, device=D), generator=g),
    "exponential_": lambda g=None: torch.empty(999, device=D).exponential_(2, generator=g),
    "randperm": lambda g=None: torch.randperm(1000, device=D, generator=g),
    "multinomial": lambda g=None: torch.multinomial(torch.linspace(0.1, 1, 50, device=D).repeat(4, 1), 10, generator=g),
    "multinomial_repl": lambda g=None: torch.multinomial(torch.linspace(0.1, 1, 50, device=D).repeat(4, 1), 100, True, generator=g),
    "dropout": lambda g=None: torch.nn.functional.dropout(torch.ones(999, device=D), 0.4),
    "randn_f16": lambda g=None: torch.randn(999, device=D, dtype=torch.float16, generator=g),
    "normal_tensor": lambda g=None: torch.normal(torch.zeros(99, device=D), 2.0, generator=g),
    "normal_float_float": lambda g=None: torch.normal(2.0, 3.0, size=(99,), device=D, generator=g),
    "randint_low": lambda g=None: torch.randint(-5, 5, (99,), device=D, generator=g),
    "randn_like": lambda g=None: torch.randn_like(torch.empty(99, device=D)),
    "rand_like": lambda g=None: torch.rand_like(torch.empty(99, device=D, dtype=torch.float64)),
    "randint_like": lambda g=None: torch.randint_like(torch.empty(99, device=D), 10),
}
LIKE = ("dropout", "randn_like", "rand_like", "randint_like")


@pytest.mark.parametrize("name", list(DRAWS))
def test_manual_seed_reproducible_and_cpu_untouched(name):
    torch.manual_seed(123)
    cpu_state = torch.get_rng_state()
    a = DRAWS[name]().cpu()
    assert torch.equal(cpu_state, torch.get_rng_state()), "the device op used the CPU generator"
    b = DRAWS[name]().cpu()
    torch.manual_seed(123)
    c = DRAWS[name]().cpu()
    assert torch.equal(a, c)
    if a.numel() > 50 and name not in ("bernoulli_", "bernoulli", "dropout"):
        assert not torch.equal(a, b), "consecutive draws repeated"


@pytest.mark.parametrize("name", [n for n in DRAWS if n not in LIKE])
def test_explicit_generator(name):
    g = torch.Generator(device=D)
    g.manual_seed(7)
    a = DRAWS[name](g).cpu()
    g.manual_seed(7)
    torch.manual_seed(99)  # the default generator must not matter
    b = DRAWS[name](g).cpu()
    assert torch.equal(a, b)


def test_rng_state_round_trip():
    torch.manual_seed(5)
    state = torch.ocl.get_rng_state()
    a = torch.randn(100, device=D).cpu()
    torch.ocl.set_rng_state(state)
    b = torch.randn(100, device=D).cpu()
    assert torch.equal(a, b)
    with torch.random.fork_rng(device_type="ocl"):
        torch.randn(10, device=D)
    c = torch.randn(100, device=D).cpu()
    assert not torch.equal(b, c)


def test_results_do_not_depend_on_size_split():
    # Element i comes from Philox block i / 4 of the op's range: a prefix of a longer draw.
    torch.manual_seed(3)
    a = torch.rand(4096, device=D).cpu()
    torch.manual_seed(3)
    b = torch.rand(100, device=D).cpu()
    assert torch.equal(a[:100], b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_normal_uniform_moments(dtype):
    torch.manual_seed(0)
    n = 200_000
    x = torch.empty(n, device=D, dtype=dtype).normal_(1.5, 2.0).cpu().double()
    tol = 6 / math.sqrt(n)
    assert abs(x.mean() - 1.5) < 2.0 * tol
    assert abs(x.std() - 2.0) < 2.0 * tol * 2 + (0.02 if dtype == torch.bfloat16 else 0)
    u = torch.empty(n, device=D, dtype=dtype).uniform_(-1, 3).cpu().double()
    assert u.min() >= -1 and u.max() < 3
    assert abs(u.mean() - 1.0) < 4 * tol * 1.2
    assert abs(u.var() - 16 / 12) < 0.02 + (0.02 if dtype == torch.bfloat16 else 0)


def test_exponential_and_random_ranges():
    torch.manual_seed(0)
    e = torch.empty(100_000, device=D).exponential_(4.0).cpu()
    assert e.min() > 0 and abs(e.mean() - 0.25) < 0.005
    r = torch.empty(100_000, device=D, dtype=torch.int64).random_(-5, 5).cpu()
    assert r.min() == -5 and r.max() == 4
    counts = torch.bincount(r + 5).double()
    assert (counts / counts.sum() - 0.1).abs().max() < 0.01
    f = torch.empty(10_000, device=D).random_().cpu()
    assert f.min() >= 0 and f.max() <= 2 ** 24 and torch.equal(f, f.floor())
    b = torch.empty(1000, device=D, dtype=torch.bool).random_().cpu()
    assert 300 < b.sum() < 700


def test_bernoulli_and_dropout_rates():
    torch.manual_seed(0)
    n = 100_000
    b = torch.empty(n, device=D).bernoulli_(0.3).cpu()
    assert abs(b.mean() - 0.3) < 6 * math.sqrt(0.21 / n)
    p = torch.linspace(0, 1, 11, device=D).repeat(10_000)
    bt = torch.bernoulli(p).cpu().view(10_000, 11).mean(0)
    assert (bt - torch.linspace(0, 1, 11)).abs().max() < 0.02
    x = torch.ones(n, device=D)
    out, mask = torch.ops.aten.native_dropout(x, 0.25, True)
    keep = mask.cpu().float().mean()
    assert abs(keep - 0.75) < 6 * math.sqrt(0.1875 / n)
    assert torch.equal(out.cpu(), mask.cpu().float() / 0.75)
    y = torch.nn.functional.dropout(torch.ones(n, device=D, requires_grad=True), 0.5)
    y.sum().backward()


def test_multinomial_frequencies():
    torch.manual_seed(0)
    probs = torch.tensor([0.1, 0.0, 0.6, 0.3], device=D)
    s = torch.multinomial(probs, 50_000, replacement=True).cpu()
    freq = torch.bincount(s, minlength=4).double() / s.numel()
    assert freq[1] == 0
    assert (freq - probs.cpu().double()).abs().max() < 0.01
    # Without replacement: the first draw follows probs; draws in a row are distinct.
    rows = torch.multinomial(probs.repeat(20_000, 1), 3).cpu()
    assert (rows.sort(1).values[:, 1:] != rows.sort(1).values[:, :-1]).all()
    assert not (rows == 1).any()
    first = torch.bincount(rows[:, 0], minlength=4).double() / rows.shape[0]
    assert (first - probs.cpu().double()).abs().max() < 0.015
    with pytest.raises(RuntimeError, match="sum of probabilities"):
        torch.multinomial(torch.zeros(2, 3, device=D), 1)


@pytest.mark.parametrize("n", [1, 5, 512, 1000, 70_000])
def test_randperm_is_permutation(n):
    p = torch.randperm(n, device=D).cpu()
    assert p.dtype == torch.int64
    assert torch.equal(p.sort().values, torch.arange(n))
    if n >= 512:
        assert not torch.equal(p, torch.arange(n))
