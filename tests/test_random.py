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


# ---- Gamma, Dirichlet, Poisson and Binomial samplers ------------------------------------------
# Means and variances against theory: the sample mean of n draws has standard error
# sqrt(var / n), the sample variance sqrt((mu4 - var^2) / n) (mu4 the fourth central moment);
# each check allows 5 standard errors (a false failure about once in 1.7 million checks; the
# seeds are fixed anyway, so a passing draw keeps passing).
SAMPLERS = {
    "_standard_gamma": lambda g=None: torch._standard_gamma(torch.full((999,), 2.5, device=D), generator=g),
    "_sample_dirichlet": lambda g=None: torch._sample_dirichlet(torch.full((333, 3), 0.7, device=D), generator=g),
    "poisson": lambda g=None: torch.poisson(torch.linspace(0, 40, 999, device=D), generator=g),
    "binomial": lambda g=None: torch.binomial(torch.full((999,), 60.0, device=D), torch.linspace(0, 1, 999, device=D),
                                              generator=g),
}


def _check_moments(x, mean, var, mu4, what):
    n = x.numel()
    x = x.double()
    assert abs(x.mean().item() - mean) <= 5 * math.sqrt(var / n), f"{what}: mean {x.mean().item()} vs {mean}"
    assert abs(x.var().item() - var) <= 5 * math.sqrt((mu4 - var * var) / n), f"{what}: var {x.var().item()} vs {var}"


def _no_fallback(f):
    before = torch.ocl.fallback_counts()
    out = f()
    after = torch.ocl.fallback_counts()
    assert after == before, f"fell back to the CPU: {sorted(set(after) - set(before))}"
    return out


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_sampler_seeded_and_independent(name):
    torch.manual_seed(11)
    cpu_state = torch.get_rng_state()
    a = _no_fallback(SAMPLERS[name]).cpu()
    assert torch.equal(cpu_state, torch.get_rng_state()), "the device sampler used the CPU generator"
    b = SAMPLERS[name]().cpu()
    torch.manual_seed(11)
    assert torch.equal(a, SAMPLERS[name]().cpu())
    assert not torch.equal(a, b), "consecutive draws repeated"
    g = torch.Generator(device=D).manual_seed(5)
    c = SAMPLERS[name](g).cpu()
    g.manual_seed(5)
    torch.manual_seed(99)
    assert torch.equal(c, SAMPLERS[name](g).cpu())
    # Elements are independent streams: a prefix of a longer draw is not another element's draw.
    assert not torch.equal(a.flatten()[:100], a.flatten()[100:200])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("alpha", [0.05, 0.3, 1.0, 4.5, 60.0])
def test_standard_gamma_moments(alpha, dtype):
    torch.manual_seed(0)
    x = torch._standard_gamma(torch.full((200_000,), alpha, device=D, dtype=dtype)).cpu()
    assert x.dtype == dtype and (x > 0).all()
    # Gamma(a): mean a, variance a, fourth central moment 3a^2 + 6a.
    _check_moments(x, alpha, alpha, 3 * alpha ** 2 + 6 * alpha, f"Gamma({alpha})")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dirichlet_moments(dtype):
    torch.manual_seed(0)
    alpha = torch.tensor([0.5, 1.0, 3.0, 0.02], dtype=dtype)
    n = 100_000
    x = torch._sample_dirichlet(alpha.to(D).expand(n, 4).contiguous()).cpu().double()
    assert x.dtype == torch.float64 and (x > 0).all() and (x < 1).all()
    assert (x.sum(1) - 1).abs().max() < (1e-5 if dtype == torch.float32 else 1e-12)
    a0 = alpha.sum().item()
    for i, a in enumerate(alpha.tolist()):
        # Component i is Beta(a, a0 - a).
        b = a0 - a
        mean, var = a / a0, a * b / (a0 * a0 * (a0 + 1))
        # The Beta's fourth central moment.
        mu4 = 3 * a * b * (a * b * (a0 - 6) + 2 * a0 * a0) / (a0 ** 4 * (a0 + 1) * (a0 + 2) * (a0 + 3))
        _check_moments(x[:, i], mean, var, mu4, f"Dirichlet component {i}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("rate", [0.5, 4.0, 9.99, 10.0, 37.5, 3000.0])
def test_poisson_moments(rate, dtype):
    if dtype in (torch.float16, torch.bfloat16) and rate > 100:
        pytest.skip("draws above 256 are not integers in bfloat16")
    torch.manual_seed(0)
    x = torch.poisson(torch.full((200_000,), rate, device=D, dtype=dtype)).cpu()
    assert x.dtype == dtype and (x >= 0).all() and torch.equal(x, x.floor())
    # Poisson(l): mean l, variance l, fourth central moment l (1 + 3 l).
    _check_moments(x, rate, rate, rate * (1 + 3 * rate), f"Poisson({rate})")


def test_poisson_invalid_rate_raises():
    with pytest.raises(RuntimeError, match="invalid Poisson rate"):
        torch.poisson(torch.tensor([1.0, -2.0], device=D)).cpu()
    assert torch.poisson(torch.ones(3, device=D)).cpu().shape == (3,)  # the device stays usable


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("count,prob", [(10, 0.3), (100, 0.05), (100, 0.5), (1000, 0.9), (50, 0.97),
                                        (20_000, 0.4)])
def test_binomial_moments(count, prob, dtype):
    torch.manual_seed(0)
    n = 200_000
    x = torch.binomial(torch.full((n,), float(count), device=D, dtype=dtype),
                       torch.full((n,), prob, device=D, dtype=dtype)).cpu()
    assert x.dtype == dtype and (x >= 0).all() and (x <= count).all() and torch.equal(x, x.floor())
    var = count * prob * (1 - prob)
    # Binomial: fourth central moment n p q (1 + 3 (n - 2) p q).
    _check_moments(x, count * prob, var, var * (1 + 3 * (count - 2) * prob * (1 - prob)), f"Binomial({count}, {prob})")


def test_distributions_sample_natively():
    """torch.distributions' Gamma, Beta, Dirichlet, Poisson and Binomial sample (and Gamma, Beta,
    Dirichlet reparameterize) on the device without the CPU fallback, with the right moments."""
    dist = torch.distributions
    torch.manual_seed(0)
    n = 100_000

    def run():
        g = dist.Gamma(torch.tensor(3.0, device=D), torch.tensor(2.0, device=D)).sample((n,))
        b = dist.Beta(torch.tensor(2.0, device=D), torch.tensor(5.0, device=D)).sample((n,))
        d = dist.Dirichlet(torch.tensor([1.0, 2.0, 3.0], device=D)).sample((n,))
        p = dist.Poisson(torch.tensor(7.0, device=D)).sample((n,))
        k = dist.Binomial(30, torch.tensor(0.25, device=D)).sample((n,))
        return g.cpu(), b.cpu(), d.cpu(), p.cpu(), k.cpu()

    g, b, d, p, k = _no_fallback(run)
    _check_moments(g, 1.5, 0.75, (3 * 9 + 6 * 3) / 16, "Gamma(3, 2)")
    _check_moments(b, 2 / 7, 10 / (49 * 8), 3 * 10 * (10 * 1 + 2 * 49) / (7 ** 4 * 8 * 9 * 10), "Beta(2, 5)")
    assert (d.sum(1) - 1).abs().max() < 1e-5 and abs(d[:, 2].mean() - 0.5) < 0.005
    _check_moments(p, 7.0, 7.0, 7 * 22, "Poisson(7)")
    _check_moments(k, 7.5, 5.625, 5.625 * (1 + 3 * 28 * 0.1875), "Binomial(30, 0.25)")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rsample_gradients_match_the_cpu(dtype):
    """Reparameterized gradients (_standard_gamma_grad, _dirichlet_grad) are deterministic given
    the draws: the device's backward against the CPU's formula on the same draws."""
    dist = torch.distributions
    torch.manual_seed(0)
    conc = torch.tensor([0.4, 1.0, 3.0, 12.0], dtype=dtype)
    rate = torch.tensor([1.0, 2.0, 0.5, 3.0], dtype=dtype)
    tol = dict(atol=1e-5, rtol=1e-4) if dtype == torch.float32 else dict(atol=1e-10, rtol=1e-9)

    def gamma_grad(device):
        c = conc.to(device).requires_grad_()
        x = dist.Gamma(c, rate.to(device)).rsample((5000,))
        x.sum().backward()
        return x.detach().cpu(), c.grad.cpu()

    x_dev, g_dev = _no_fallback(lambda: gamma_grad(D))
    # The CPU's gradient of the same draws: d(x)/d(alpha) = _standard_gamma_grad(alpha, x * rate) / rate.
    std = x_dev * rate
    expect = (torch._standard_gamma_grad(conc.expand_as(std).contiguous(), std) / rate).sum(0)
    torch.testing.assert_close(g_dev, expect, **tol)

    def dirichlet_grad(device):
        c = conc.to(device).requires_grad_()
        x = dist.Dirichlet(c).rsample((3000,))
        w = torch.arange(1.0, 5.0, dtype=dtype, device=device)
        (x * w).sum().backward()
        return x.detach().cpu(), c.grad.cpu()

    x_dev, g_dev = _no_fallback(lambda: dirichlet_grad(D))
    # The same backward on the CPU, fed the device's draws.
    c = conc.clone().requires_grad_()
    total = c.sum(-1, keepdim=True).expand_as(x_dev)
    grad_x = torch.arange(1.0, 5.0, dtype=dtype).expand_as(x_dev)
    g = torch._dirichlet_grad(x_dev, c.expand_as(x_dev), total)
    expect = (grad_x * g - (grad_x * x_dev).sum(-1, keepdim=True) * g).sum(0)  # torch's _Dirichlet.backward
    torch.testing.assert_close(g_dev, expect.detach(), atol=1e-4 if dtype == torch.float32 else 1e-9,
                               rtol=1e-3 if dtype == torch.float32 else 1e-8)
