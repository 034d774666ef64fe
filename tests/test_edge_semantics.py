"""Edge semantics found by differential audits against the CPU (session 16): int32 indices
for gather/scatter, binary_cross_entropy's range and dtype errors, mixed-device arguments,
an attention backward reached by no gradient, NaN clamp bounds, logit's eps order, erfinv's
tails, topk of a 0-dim tensor; and (session 17) where with CPU scalars, out-of-range
replacement values, lerp's branch, the CPU's dtype errors, unique_consecutive along a dim; and
(session 20) narrowing float -> int8/int16/uint8 conversions."""
import pytest
import torch
import torch.nn.functional as F

from .conftest import requires_ocl
from .test_autoload import ok, run_py

pytestmark = requires_ocl


@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
def test_gather_scatter_take_int32_indices(index_dtype):
    x = torch.arange(10.0)
    i = torch.tensor([1, 0, 1, 0], dtype=index_dtype)
    xd, idd = x.to("ocl"), i.to("ocl")
    torch.testing.assert_close(xd.gather(0, idd).cpu(), x.gather(0, i))
    z, ones = torch.zeros(5), torch.ones(4)
    torch.testing.assert_close(z.to("ocl").scatter_add(0, idd, ones.to("ocl")).cpu(), z.scatter_add(0, i, ones))
    torch.testing.assert_close(z.to("ocl").scatter(0, idd, 7.0).cpu(), z.scatter(0, i, 7.0))
    m = torch.arange(12.0).reshape(3, 4)
    j = torch.tensor([[2, 0], [1, 3], [0, 0]], dtype=index_dtype)
    torch.testing.assert_close(m.to("ocl").gather(1, j.to("ocl")).cpu(), m.gather(1, j))


@pytest.mark.parametrize("x, t, message", [
    ([0.5, 1.5], [1.0, 0.0], "all elements of input should be between 0 and 1"),
    ([0.5, -0.1], [1.0, 0.0], "all elements of input should be between 0 and 1"),
    ([0.5, float("nan")], [1.0, 0.0], "all elements of input should be between 0 and 1"),
    ([0.5, 0.2], [1.5, 0.0], "all elements of target should be between 0 and 1"),
])
def test_binary_cross_entropy_range_errors_like_cpu(x, t, message):
    x, t = torch.tensor(x), torch.tensor(t)
    with pytest.raises(RuntimeError, match=message):
        F.binary_cross_entropy(x, t)
    with pytest.raises(RuntimeError, match=message):  # at the next synchronization point
        F.binary_cross_entropy(x.to("ocl"), t.to("ocl"), reduction="none").cpu()
    ok = torch.tensor([0.25, 0.75])  # the device stays usable, the error is cleared
    torch.testing.assert_close(F.binary_cross_entropy(ok.to("ocl"), ok.to("ocl")).cpu(), F.binary_cross_entropy(ok, ok))


def test_binary_cross_entropy_dtype_rule_like_cpu():
    x, t = torch.tensor([0.5, 0.2]), torch.tensor([1.0, 0.0], dtype=torch.float64)
    for dev in ("cpu", "ocl"):
        with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
            F.binary_cross_entropy(x.to(dev), t.to(dev))
        with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
            torch.ops.aten.binary_cross_entropy_backward(torch.ones(2, device=dev), x.to(dev), t.to(dev))
    w = torch.ones(2, dtype=torch.float64)  # a weight may differ, as on the CPU
    torch.testing.assert_close(F.binary_cross_entropy(x.to("ocl"), t.float().to("ocl"), weight=w.to("ocl")).cpu(),
                               F.binary_cross_entropy(x, t.float(), weight=w))


@pytest.mark.parametrize("call", [
    lambda: F.cross_entropy(torch.randn(3, 4, device="ocl"), torch.tensor([0, 1, 2])),
    lambda: F.nll_loss(torch.randn(3, 4, device="ocl"), torch.tensor([0, 1, 2])),
    lambda: F.layer_norm(torch.randn(3, 4, device="ocl"), (4,), torch.ones(4)),
    lambda: F.rms_norm(torch.randn(3, 4, device="ocl"), (4,), torch.ones(4)),
], ids=["cross_entropy target", "nll_loss target", "layer_norm weight", "rms_norm weight"])
def test_cpu_argument_is_the_mixed_device_error(call):
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        call()
    assert (torch.ones(2, device="ocl") * 2).cpu().tolist() == [2.0, 2.0]


class _DropGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return None


def test_attention_backward_without_output_gradient():
    # No gradient reaches the attention output: q, k, v get none from it (CPU and CUDA alike).
    grads = {}
    for dev in ("cpu", "ocl"):
        g = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(1, 2, 3, 8, generator=g).to(dev).requires_grad_() for _ in range(3))
        out = F.scaled_dot_product_attention(q, k, v)
        (_DropGrad.apply(out).sum() + q.sum()).backward()
        grads[dev] = (q.grad.cpu(), k.grad, v.grad)
    torch.testing.assert_close(grads["ocl"][0], grads["cpu"][0])
    assert grads["ocl"][1] is None and grads["ocl"][2] is None
    assert grads["cpu"][1] is None and grads["cpu"][2] is None


def test_nan_scalar_bounds_propagate():
    # A NaN bound gives NaN everywhere: torch 2.13's CPU for every form; torch 2.11 (CPU and
    # CUDA) already for two bounds and hardtanh, not yet for a single clamp bound.
    x, nan = torch.tensor([1.0, 2.0, float("nan")]), float("nan")
    xd = x.to("ocl")
    for got in (torch.clamp(xd, min=nan), torch.clamp(xd, max=nan), torch.clamp(xd, min=0.0, max=nan),
                torch.clamp(xd, min=nan, max=1.0), torch.clamp_min(xd, nan), torch.clamp_max(xd, nan),
                F.hardtanh(xd, nan, 1.0)):
        assert got.cpu().isnan().all(), got
    torch.testing.assert_close(torch.clamp(xd, min=0.0, max=nan).cpu(), torch.clamp(x, min=0.0, max=nan), equal_nan=True)
    torch.testing.assert_close(torch.clamp(xd, min=1.5).cpu(), torch.clamp(x, min=1.5), equal_nan=True)


@pytest.mark.parametrize("eps", [0.7, 0.5, 0.2, 1e-6])
def test_logit_eps_clamps_in_cpu_order(eps):
    # eps > 0.5 makes the bounds cross: the CPU tests x < eps first.
    p = torch.tensor([0.1, 0.5, 0.9, 0.0, 1.0])
    torch.testing.assert_close(torch.logit(p.to("ocl"), eps=eps).cpu(), torch.logit(p, eps=eps))


def test_erfinv_tails():
    # float64 arguments within 2^-24 of +-1 (NaN before: the first guess was taken in float32).
    y = torch.tensor([0.99999999, -0.9999999999, 1 - 2.0**-52, 0.999, -0.95, 0.9, 1.0, -1.0], dtype=torch.float64)
    torch.testing.assert_close(torch.erfinv(y.to("ocl")).cpu(), torch.erfinv(y), rtol=1e-9, atol=0)
    y32 = torch.tensor([0.9999999, -0.99999, 0.999, 0.95, 1.0, -1.0])
    torch.testing.assert_close(torch.erfinv(y32.to("ocl")).cpu(), torch.erfinv(y32), rtol=2e-6, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_tanh_saturates_and_tanh_gelu_tail(dtype):
    # PoCL's float tanh stopped one ulp short of +-1, so tanh-GELU of -1000 was -3e-5, not -0.
    inf = float("inf")
    x = torch.tensor([inf, -inf, 20.0, 9.2, -19.2, 0.5, float("nan")], dtype=dtype)
    torch.testing.assert_close(torch.tanh(x.to("ocl")).cpu(), torch.tanh(x), equal_nan=True, rtol=0, atol=1e-7)
    assert torch.tanh(x.to("ocl"))[[0, 1, 2, 4]].abs().cpu().eq(1).all()  # |x| past tanh's last float64 below 1
    g = torch.tensor([-1e30, -1000.0, -inf, -5.1, 3.0], dtype=dtype)
    torch.testing.assert_close(F.gelu(g.to("ocl"), approximate="tanh").cpu(), F.gelu(g, approximate="tanh"),
                               equal_nan=True)


@pytest.mark.parametrize("k", [0, 1])
def test_topk_of_a_0dim_tensor(k):
    x = torch.tensor(3.0)
    for largest in (True, False):
        v, i = torch.topk(x.to("ocl"), k, largest=largest)
        rv, ri = torch.topk(x, k, largest=largest)
        assert v.shape == rv.shape and i.shape == ri.shape
        assert v.item() == rv.item() and i.item() == ri.item()


def test_where_with_two_cpu_scalars():
    cond = torch.tensor([True, False, True])
    a, b = torch.tensor(1.5), torch.tensor(-2, dtype=torch.int64)
    got = torch.where(cond.to("ocl"), a, b)
    assert got.device.type == "ocl"
    torch.testing.assert_close(got.cpu(), torch.where(cond, a, b))
    # the condition too may be a CPU scalar
    x = torch.tensor([3.0, 4.0, 5.0])
    torch.testing.assert_close(torch.where(torch.tensor(False), a, x.to("ocl")).cpu(), torch.where(torch.tensor(False), a, x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_out_of_range_replacements_and_round_decimals(dtype):
    x = torch.tensor([float("inf"), float("nan"), -float("inf"), 1.25], dtype=dtype)
    for kw in (dict(posinf=1e300), dict(neginf=-1e300), dict(nan=1e300, posinf=-1e300)):
        torch.testing.assert_close(torch.nan_to_num(x.to("ocl"), **kw).cpu(), torch.nan_to_num(x, **kw), equal_nan=True)
    y = torch.tensor([1.5, 2.25, -3.75], dtype=dtype)
    for decimals in (39, -39, 400, -400):  # 10^decimals past the compute type: NaN, as on the CPU
        torch.testing.assert_close(torch.round(y.to("ocl"), decimals=decimals).cpu(), torch.round(y, decimals=decimals),
                                   equal_nan=True)


def test_lerp_branches_on_the_weight_magnitude():
    # The CPU computes from `end` once |w| >= 0.5, negative weights included; the two forms
    # round differently, so the branch is visible in the last bits.
    a, b = torch.tensor([1.0, 2.0, 3.0, 1e30]), torch.tensor([3.0, 5.0, 7.0, -4.0])
    w = torch.tensor([-float("inf"), -0.7, -0.5, -0.3])
    torch.testing.assert_close(torch.lerp(a.to("ocl"), b.to("ocl"), w.to("ocl")).cpu(), torch.lerp(a, b, w),
                               rtol=0, atol=0)
    torch.testing.assert_close(torch.lerp(a.to("ocl"), b.to("ocl"), -0.7).cpu(), torch.lerp(a, b, -0.7), rtol=0, atol=0)


def _same_error(call):
    try:
        call("cpu")
    except Exception as e:  # noqa: BLE001 - the CPU's exception is the reference
        expected = type(e)
    else:
        pytest.fail("the CPU accepts this call")
    with pytest.raises(expected):
        call("ocl")
    torch.ones(2, device="ocl").add_(1).cpu()  # the device stays usable


@pytest.mark.parametrize("call", [
    lambda d: torch.addcmul(torch.tensor([True], device=d), torch.tensor([True], device=d),
                            torch.tensor([False], device=d)),
    lambda d: torch.isposinf(torch.tensor([1.0], device=d), out=torch.empty(1, device=d)),
    lambda d: torch.isneginf(torch.tensor([1.0], device=d), out=torch.empty(1, dtype=torch.int32, device=d)),
    lambda d: torch.clamp(torch.tensor([1, 5], device=d), 0, 3, out=torch.empty(2, device=d)),
    lambda d: torch.clamp(torch.tensor([1.0, 5.0], device=d), 0, 3, out=torch.empty(2, dtype=torch.float64, device=d)),
    lambda d: torch.mean(torch.tensor([1.0, 2.0], device=d), 0, out=torch.empty((), dtype=torch.int64, device=d)),
    lambda d: torch.mean(torch.tensor([1.0, 2.0], device=d), 0, out=torch.empty((), dtype=torch.bool, device=d)),
    lambda d: torch.tensor([True, True], device=d).cumsum_(0),
    lambda d: torch.cumprod(torch.tensor([True, True], device=d), 0, out=torch.empty(2, dtype=torch.bool, device=d)),
    lambda d: torch.bincount(torch.tensor([1.0, 2.0], device=d)),
    lambda d: torch.bincount(torch.tensor([True], device=d)),
    lambda d: torch.bincount(torch.tensor([[1, 2]], device=d)),
], ids=["addcmul-bool", "isposinf-float-out", "isneginf-int-out", "clamp-int-float-out", "clamp-float-double-out",
        "mean-int-out", "mean-bool-out", "cumsum_-bool", "cumprod-bool-out", "bincount-float", "bincount-bool",
        "bincount-2d"])
def test_error_type_like_cpu(call):
    _same_error(call)


def test_bool_cumsum_promotes():
    x = torch.tensor([True, False, True])
    torch.testing.assert_close(torch.cumsum(x.to("ocl"), 0).cpu(), torch.cumsum(x, 0))


@pytest.mark.parametrize("shape, dim", [((3, 2), 0), ((3, 2), 1), ((2, 5, 3), 1), ((4,), 0), ((4,), -1),
                                        ((6, 0), 1), ((0, 3), 0), ((1, 1, 1), 2)])
def test_unique_consecutive_along_a_dim(shape, dim):
    g = torch.Generator().manual_seed(sum(shape) + dim)
    x = torch.randint(0, 2, shape, generator=g).float()
    if x.numel():  # repeat slices so that there are runs to merge, and one NaN slice
        x = torch.repeat_interleave(x, 2, dim=dim)
        x.select(dim, x.size(dim) - 1).fill_(float("nan"))
        x.select(dim, x.size(dim) - 2).fill_(float("nan"))
    want = torch.unique_consecutive(x, return_inverse=True, return_counts=True, dim=dim)
    got = torch.unique_consecutive(x.to("ocl"), return_inverse=True, return_counts=True, dim=dim)
    for w, o in zip(want, got):
        assert o.device.type == "ocl"
        torch.testing.assert_close(o.cpu(), w, equal_nan=True)
    values = torch.unique_consecutive(x.to("ocl"), dim=dim)
    torch.testing.assert_close(values.cpu(), want[0], equal_nan=True)


@pytest.mark.parametrize("x, dim", [(torch.tensor(3.0), 0), (torch.empty(3, 0), 0), (torch.empty(0, 0), 0),
                                    (torch.ones(2, 3), 2)])
def test_unique_consecutive_dim_errors_like_cpu(x, dim):
    _same_error(lambda d: torch.unique_consecutive(x.to(d), dim=dim))


@pytest.mark.parametrize("call", [
    lambda d: torch.zeros(3, 4, device=d).index_copy_(0, torch.tensor([1], dtype=torch.int32, device=d),
                                                      torch.ones(1, 4, device=d)),
    lambda d: torch.zeros(3, 4, device=d).index_copy_(0, torch.tensor([1], device=d),
                                                      torch.ones(1, 4, dtype=torch.float64, device=d)),
    lambda d: torch.zeros(3, 4, device=d).index_copy_(0, torch.tensor([1, 2], device=d), torch.ones(1, 4, device=d)),
    lambda d: torch.zeros(3, 4, device=d).index_copy_(0, torch.tensor([1], device=d), torch.ones(1, 3, device=d)),
    lambda d: torch.zeros(3, 4, device=d).index_fill_(0, torch.tensor([1], dtype=torch.int32, device=d), 1.0),
    lambda d: torch.zeros(3, 4, device=d).index_fill_(0, torch.tensor([[1]], device=d), 1.0),
    lambda d: torch.zeros(3, 4, device=d).index_fill_(0, torch.tensor([1], device=d), torch.ones(1, device=d)),
    lambda d: torch.zeros(3, device=d).take(torch.tensor([1], dtype=torch.int32, device=d)),
    lambda d: torch.zeros(0, device=d).take(torch.tensor([0], device=d)),
    lambda d: torch.zeros(3, device=d).put_(torch.tensor([1], dtype=torch.int32, device=d), torch.ones(1, device=d)),
    lambda d: torch.zeros(3, device=d).put_(torch.tensor([1], device=d), torch.ones(1, dtype=torch.float64, device=d)),
    lambda d: torch.zeros(3, device=d).put_(torch.tensor([1], device=d), torch.ones(2, device=d)),
    lambda d: torch.zeros(0, device=d).put_(torch.tensor([0], device=d), torch.ones(1, device=d)),
    lambda d: torch.zeros(1, 4, device=d).expand(3, 4).put_(torch.tensor([1], device=d), torch.ones(1, device=d)),
], ids=["index_copy-int32", "index_copy-dtype", "index_copy-count", "index_copy-shape", "index_fill-int32",
        "index_fill-2d-index", "index_fill-1d-value", "take-int32", "take-empty",
        "put-int32", "put-dtype", "put-count", "put-empty", "put-expanded"])
def test_index_copy_fill_take_put_argument_errors_like_cpu(call):
    _same_error(call)


@pytest.mark.parametrize("call", [
    lambda d: torch.zeros(3, 4, device=d).index_copy_(0, torch.tensor([-1], device=d), torch.ones(1, 4, device=d)),
    lambda d: torch.zeros(3, 4, device=d).index_copy_(0, torch.tensor([3], device=d), torch.ones(1, 4, device=d)),
    lambda d: torch.zeros(3, 4, device=d).index_fill_(1, torch.tensor([-5], device=d), 1.0),
    lambda d: torch.zeros(3, 4, device=d).take(torch.tensor([12], device=d)),
    lambda d: torch.zeros(3, 4, device=d).take(torch.tensor([-13], device=d)),
    lambda d: torch.zeros(3, 4, device=d).put_(torch.tensor([12], device=d), torch.ones(1, device=d)),
    lambda d: torch.zeros(3, 4, device=d).put_(torch.tensor([-13], device=d), torch.ones(1, device=d), accumulate=True),
], ids=["index_copy-negative", "index_copy-past-end", "index_fill-negative", "take-past-end", "take-negative",
        "put-past-end", "put-accumulate-negative"])
def test_index_copy_fill_take_put_out_of_range_like_cpu(call):
    # Found by the device: raised at the next synchronization point with the CPU's type.
    def synced(d):
        call(d)
        if d == "ocl":
            torch.ocl.synchronize()
    _same_error(synced)


@pytest.mark.parametrize("call", [
    lambda d: F.conv2d(torch.randn(1, 3, 4, 4, device=d), torch.randn(2, 4, 3, 3, device=d)),
    lambda d: F.conv2d(torch.randn(1, 3, 2, 2, device=d), torch.randn(2, 3, 3, 3, device=d)),
    lambda d: F.conv2d(torch.randn(1, 3, 4, 4, device=d), torch.randn(2, 3, 3, 3, dtype=torch.float64, device=d)),
    lambda d: F.conv2d(torch.ones(1, 3, 4, 4, dtype=torch.bool, device=d), torch.ones(2, 3, 3, 3, dtype=torch.bool, device=d)),
    lambda d: F.conv2d(torch.randn(1, 4, 4, 4, device=d), torch.randn(3, 2, 3, 3, device=d), groups=2),
    lambda d: F.conv_transpose2d(torch.randn(1, 3, 4, 4, device=d), torch.randn(3, 2, 3, 3, device=d), stride=2,
                                 output_padding=2),
], ids=["channels", "too-small", "dtype", "bool", "groups", "output-padding"])
def test_convolution_errors_like_cpu(call):
    _same_error(call)


@pytest.mark.parametrize("call", [
    lambda d: F.max_pool2d(torch.randn(1, 2, 4, 4, device=d), 5),
    lambda d: F.max_pool2d(torch.randn(1, 2, 4, 4, device=d), 2, padding=2),
    lambda d: F.max_pool2d(torch.ones(1, 2, 4, 4, dtype=torch.bool, device=d), 2),
    lambda d: F.avg_pool2d(torch.randn(1, 2, 4, 4, device=d), 2, divisor_override=0),
    lambda d: F.avg_pool2d(torch.randn(2, 4, 4, 4, 4, device=d), 2),
], ids=["kernel-too-big", "padding-too-big", "bool", "divisor-zero", "5-d"])
def test_pooling_errors_like_cpu(call):
    _same_error(call)


# ---- found by the session-17 differential audit (exp/s17/audit) --------------------------------

@pytest.mark.parametrize("n", [1, 5, 1024, 100003])
def test_float64_bounded_random_writes_every_element(n):
    # Each Philox block yields two draws for float64; the launch assumed four for narrow
    # ranges, so the second half of the tensor kept stale memory.
    x = torch.full((n,), -7.0, dtype=torch.float64, device="ocl").random_(1, 10).cpu()
    assert ((x >= 1) & (x < 10) & (x == x.floor())).all()
    junk = torch.full((n,), 1e6, dtype=torch.float64, device="ocl")
    del junk
    y = torch.randint(0, 10, (n,), dtype=torch.float64, device="ocl").cpu()
    assert ((y >= 0) & (y < 10)).all()
    if n >= 1024:
        assert len(torch.unique(y)) == 10


@pytest.mark.parametrize("out_dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_var_std_into_another_float_dtype(out_dtype):
    x = torch.tensor([[1.0, 2.0, 4.0], [0.0, 3.0, 3.0]])
    for f in (torch.var, torch.std):
        want = f(x, 1, out=torch.empty(2, dtype=out_dtype))
        got = f(x.to("ocl"), 1, out=torch.empty(2, dtype=out_dtype, device="ocl"))
        torch.testing.assert_close(got.cpu(), want)


def test_bernoulli_probability_range_is_checked():
    for bad in (1.5, -0.5, float("nan")):
        with pytest.raises(RuntimeError, match="p_in >= 0"):
            torch.bernoulli(torch.full((5,), bad, device="ocl"))
            torch.ocl.synchronize()
    p = torch.tensor([0.0, 1.0, 1.0, 0.0], device="ocl")
    assert torch.bernoulli(p).cpu().tolist() == [0.0, 1.0, 1.0, 0.0]  # the device stays usable


@pytest.mark.parametrize("call", [
    lambda d: torch.topk(torch.tensor([[1.0, 5.0, 3.0]], device=d), 2,
                         out=(torch.empty(1, 2, dtype=torch.int32, device=d), torch.empty(1, 2, dtype=torch.long, device=d))),
    lambda d: torch.topk(torch.tensor([[1.0, 5.0, 3.0]], device=d), 2,
                         out=(torch.empty(1, 2, device=d), torch.empty(1, 2, dtype=torch.int32, device=d))),
    lambda d: torch._C._nn.mse_loss(torch.ones(2, 3, device=d), torch.zeros(2, 3, device=d), 0,
                                    out=torch.empty(0, dtype=torch.long, device=d)),
    lambda d: torch._C._nn.mse_loss(torch.ones(2, 3, device=d), torch.zeros(2, 3, device=d), 1,
                                    out=torch.empty(0, dtype=torch.long, device=d)),
    lambda d: torch._C._nn.binary_cross_entropy(torch.full((2, 3), 0.5, device=d), torch.ones(2, 3, device=d), None, 0,
                                                out=torch.empty(0, dtype=torch.float64, device=d)),
    lambda d: torch.ops.aten.nll_loss_forward.output(torch.randn(2, 3, device=d).log_softmax(1),
                                                     torch.tensor([0, 2], device=d), None, 1, -100,
                                                     output=torch.empty(0, dtype=torch.int32, device=d),
                                                     total_weight=torch.empty((), device=d)),
    lambda d: torch.mm(torch.ones(2, 3, device=d), torch.eye(3, device=d), out=torch.zeros(1, 3, device=d).expand(2, 3)),
    lambda d: torch.addmm(torch.ones(2, 3, device=d), torch.ones(2, 3, device=d), torch.eye(3, device=d),
                          out=torch.zeros(1, 3, device=d).expand(2, 3)),
    lambda d: torch.var(torch.ones(2, 3, device=d), 1, out=torch.empty(2, dtype=torch.long, device=d)),
    lambda d: torch.arange(3, out=torch.empty(0, dtype=torch.bool, device=d)),
    lambda d: torch.linspace(0, 1, 3, out=torch.empty(0, dtype=torch.bool, device=d)),
    lambda d: torch.randperm(2, dtype=torch.bool, device=d),
    lambda d: torch.nansum(torch.ones(2, 3, device=d), 1, out=torch.empty(0, dtype=torch.long, device=d)),
    lambda d: torch.bernoulli(torch.zeros(3, dtype=torch.long, device=d)),
    lambda d: torch.cat([torch.ones(2, device=d)], out=torch.empty(2, dtype=torch.long, device=d)),
    lambda d: torch.stack([torch.ones(2, device=d)], out=torch.empty(1, 2, dtype=torch.bool, device=d)),
    lambda d: F.dropout(torch.ones(3, dtype=torch.long, device=d), 0.5),
], ids=["topk-values-dtype", "topk-indices-dtype", "mse-none-int-out", "mse-mean-int-out", "bce-double-out",
        "nll-int-out", "mm-expanded-out", "addmm-expanded-out", "var-int-out", "arange-bool", "linspace-bool", "randperm-bool", "nansum-int-out", "bernoulli-int-p", "cat-out-dtype",
        "stack-out-dtype", "dropout-int"])
def test_out_dtype_and_argument_errors_like_cpu(call):
    _same_error(call)


def test_arange_integer_out_with_a_step_truncating_to_zero():
    # torch 2.13's CPU raises ValueError; 2.11's divides by zero (the process dies), so the
    # reference is not run here.
    with pytest.raises(ValueError, match="step must be nonzero"):
        torch.arange(0, 2, 0.5, out=torch.empty(0, dtype=torch.long, device="ocl"))
    got = torch.arange(0, 5, 1.5, out=torch.empty(0, dtype=torch.int32, device="ocl"))
    assert got.cpu().tolist() == [0, 1, 2, 3]  # the step truncated to 1, the size from 5 / 1.5


def test_topk_wrong_out_dtype_leaves_memory_alone():
    big = torch.full((8,), -1, dtype=torch.int32, device="ocl")
    with pytest.raises(RuntimeError):
        torch.topk(torch.tensor([[1.0, 5.0, 3.0, 4.0]], device="ocl"), 2,
                   out=(torch.empty(1, 2, device="ocl"), big[:2].view(1, 2)))
    assert big.cpu().tolist() == [-1] * 8


@pytest.mark.parametrize("call", [
    lambda d: F.batch_norm(torch.ones(2, 3, dtype=torch.long, device=d), None, None, training=True),
    lambda d: F.batch_norm(torch.ones(2, 3, device=d), None, None, torch.ones(4, device=d), training=True),
    lambda d: F.batch_norm(torch.ones(1, 3, device=d), None, None, training=True),
    lambda d: torch.native_batch_norm(torch.ones(0, 3, device=d), None, None, None, None, True, 0.1, 1e-5),
], ids=["int", "weight-size", "one-value-per-channel", "empty"])
def test_batch_norm_errors_like_cpu(call):
    _same_error(call)


def test_batch_norm_evaluation_without_running_statistics():
    # torch 2.13's CPU kernel segfaults here, so it is not the reference.
    with pytest.raises(RuntimeError, match="must be defined in evaluation mode"):
        torch.native_batch_norm(torch.ones(2, 3, device="ocl"), None, None, None, None, False, 0.1, 1e-5)


@pytest.mark.parametrize("call", [
    lambda d: F.unfold(torch.randn(2, 3, 4, 4, device=d), kernel_size=0),
    lambda d: F.unfold(torch.randn(2, 3, 4, 4, device=d), kernel_size=5),
    lambda d: F.fold(torch.randn(2, 12, 10, device=d), output_size=(4, 4), kernel_size=2),
    lambda d: F.fold(torch.randn(2, 13, 9, device=d), output_size=(4, 4), kernel_size=2, stride=1),
], ids=["unfold-kernel-0", "unfold-kernel-too-big", "fold-block-count", "fold-channels"])
def test_unfold_fold_errors_like_cpu(call):
    _same_error(call)


@pytest.mark.parametrize("call", [
    lambda d: F.interpolate(torch.arange(12, device=d).view(1, 1, 3, 4), scale_factor=2),
    lambda d: torch._C._nn.upsample_nearest2d(torch.ones(1, 1, 3, 4, device=d), [0, 2]),
], ids=["nearest-int64", "size-0"])
def test_upsample_errors_like_cpu(call):
    _same_error(call)


def test_bilinear_uint8_matches_cpu_exactly():
    # The CPU blends uint8 in fixed point; ocl follows it bit for bit (tests/opcases/upsample.py
    # covers the modes and layouts).
    x = torch.arange(12, dtype=torch.uint8).view(1, 1, 3, 4) * 20
    expected = F.interpolate(x, scale_factor=2, mode="bilinear")
    assert torch.equal(F.interpolate(x.to("ocl"), scale_factor=2, mode="bilinear").cpu(), expected)



NARROWING_CHECK = """
import torch
for src in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64):
    x = torch.tensor([300.0, -200.0, 70000.5, -70000.5, 255.9, -0.9, 128.0, -129.5, 32768.0, 65535.7, 65536.2, 6e4])
    x = x.to(src) if src != torch.float16 else x.clamp(-6e4, 6e4).to(src)
    for dst in (torch.int8, torch.int16, torch.uint8):
        for n in (x.numel(), 3 * x.numel()):  # one row, and enough elements for the vector paths
            xs = x.repeat(3)[:n]
            assert torch.equal(xs.to("ocl").to(dst).cpu(), xs.to(dst)), (src, dst, n)
print("ok")
"""


@pytest.mark.parametrize("options", [None, ""], ids=["suite-options", "optimized"])
def test_narrowing_conversions_wrap_like_cpu(options):
    # Beyond the narrow type's range but within int32's, a conversion wraps on the CPU (300.0
    # to int8 is 44); PoCL's optimizer vectorized float -> int16 into a saturating pack, so the
    # check also runs optimized (the suite builds PoCL programs unoptimized: conftest). NaN,
    # inf and values past int32 are undefined in C++ and differ between the CPU and CUDA.
    env = None if options is None else {"TORCH_OCL_BUILD_OPTIONS": options}
    out = ok(run_py(NARROWING_CHECK, env=env, timeout=600))
    assert out.strip().endswith("ok"), out


@pytest.mark.parametrize("call", [
    lambda d: torch.cdist(torch.ones(3, 4, device=d), torch.ones(5, 4, dtype=torch.float64, device=d), p=1),
    lambda d: torch.cdist(torch.ones(3, 4, device=d).half(), torch.ones(5, 4, device=d).half(), p=1),
    lambda d: torch.cdist(torch.ones(3, 4, device=d).long(), torch.ones(5, 4, device=d).long(), p=1),
    lambda d: torch.cdist(torch.ones(3, 4, device=d), torch.ones(5, 4, device=d), p=-1),
    lambda d: torch.cdist(torch.ones(3, 4, device=d), torch.ones(5, 3, device=d), p=1),
    lambda d: torch.cdist(torch.ones(4, device=d), torch.ones(5, 4, device=d), p=1),
    lambda d: torch.cdist(torch.ones(2, 3, 4, device=d), torch.ones(3, 5, 4, device=d), p=1),
    lambda d: torch.ops.aten._cdist_forward(torch.ones(3, 4, device=d), torch.ones(5, 4, device=d), 1.0, 5),
    lambda d: torch.pdist(torch.ones(4, 3, device=d).half()),
    lambda d: torch.pdist(torch.ones(4, 3, device=d), p=-1),
    lambda d: torch.pdist(torch.ones(4, 3, 2, device=d)),
    lambda d: torch.ops.aten._pdist_forward(torch.ones(3, 4, device=d).t(), 2.0),
], ids=["cdist-mixed-dtypes", "cdist-half", "cdist-long", "cdist-negative-p", "cdist-columns", "cdist-1d",
        "cdist-batches", "cdist-mode", "pdist-half", "pdist-negative-p", "pdist-3d", "pdist-strided"])
def test_distance_errors_like_cpu(call):
    _same_error(call)


def test_embedding_bag_scale_grad_by_freq_divides_by_each_index_count():
    # As documented (and as CUDA computes it): the gradient of every row divided by how often
    # its index occurs. ATen's CPU kernel divides a once-occurring index sorted after a repeated
    # one by the repeated one's count (pytorch/pytorch#190063), so the reference is embedding's.
    idx, w = torch.tensor([1, 1, 3, 0, 3, 3, 2]), torch.randn(5, 4)
    for mode, reduce in (("sum", torch.sum), ("mean", torch.mean)):
        wo = w.to("ocl").requires_grad_()
        g = torch.randn(2, 4)
        F.embedding_bag(idx.to("ocl"), wo, torch.tensor([0, 3], device="ocl"), mode=mode,
                        scale_grad_by_freq=True).backward(g.to("ocl"))
        wc = w.clone().requires_grad_()
        e = F.embedding(idx, wc, scale_grad_by_freq=True)
        torch.stack([reduce(e[:3], 0), reduce(e[3:], 0)]).backward(g)
        torch.testing.assert_close(wo.grad.cpu(), wc.grad)


def _bag(d, idx, offsets, **kw):
    w = torch.randn(10, 3, device=d)
    return F.embedding_bag(torch.tensor(idx, device=d), w, torch.tensor(offsets, device=d), **kw).cpu()


@pytest.mark.parametrize("call", [
    lambda d: _bag(d, [2, 1, 40], [0]),
    lambda d: _bag(d, [2, 1, -1], [0]),
    lambda d: torch.ops.aten._embedding_bag(torch.ones(10, 3, device=d), torch.tensor([1, 2], device=d),
                                            torch.tensor([1], device=d), False, 0, False, None, False, -1)[0].cpu(),
    lambda d: torch.ops.aten._embedding_bag(torch.ones(10, 3, device=d), torch.tensor([1, 2], device=d),
                                            torch.tensor([0, 3], device=d), False, 0, False, None, False, -1)[0].cpu(),
    lambda d: torch.ops.aten._embedding_bag(torch.ones(10, 3, device=d), torch.tensor([1, 2], device=d),
                                            torch.tensor([0], device=d), False, 1, False, torch.ones(2, device=d),
                                            False, -1),
    lambda d: torch.ops.aten._embedding_bag(torch.ones(10, 3, device=d).long(), torch.tensor([1, 2], device=d),
                                            torch.tensor([0], device=d), False, 0, False, None, False, -1),
    lambda d: torch.ops.aten._embedding_bag(torch.ones(10, device=d), torch.tensor([1, 2], device=d),
                                            torch.tensor([0], device=d), False, 0, False, None, False, -1),
    lambda d: torch.ops.aten._embedding_bag(torch.ones(10, 3, device=d), torch.tensor([1.0, 2.0], device=d),
                                            torch.tensor([0], device=d), False, 0, False, None, False, -1),
    lambda d: torch.ops.aten._embedding_bag(torch.ones(10, 3, device=d), torch.tensor([1, 2], device=d),
                                            torch.tensor([], dtype=torch.long, device=d), False, 0, False, None, True,
                                            -1),
    lambda d: torch.ops.aten._embedding_bag(torch.ones(10, 3, device=d), torch.tensor([1, 2], device=d),
                                            torch.tensor([0], device=d), False, 0, False,
                                            torch.ones(2, dtype=torch.float64, device=d), False, -1),
], ids=["index-past-end", "negative-index", "offsets-start", "offsets-past-end", "psw-mean", "long-weight",
        "1d-weight", "float-indices", "include-last-offset-no-offsets", "psw-dtype"])
def test_embedding_bag_errors_like_cpu(call):
    _same_error(call)


def test_embedding_bag_unknown_mode_raises():
    # Not compared with the CPU: torch 2.11's CPU kernel crashes on mode 3 (2.13 raises).
    with pytest.raises(RuntimeError, match="mode"):
        torch.ops.aten._embedding_bag(torch.ones(10, 3, device="ocl"), torch.tensor([1, 2], device="ocl"),
                                      torch.tensor([0], device="ocl"), False, 3, False, None, False, -1)


@pytest.mark.parametrize("mode, padding", [(3, 0), (-1, 0), (0, 3), (2, -1)])
@pytest.mark.parametrize("dims", [2, 3])
def test_grid_sampler_unknown_mode_integers_raise(mode, padding, dims):
    # The CPU does not check these integers (its output is then uninitialized memory); F.grid_sample
    # only passes valid ones, so only a direct aten call can reach this.
    if dims == 3 and mode == 2:
        mode = 4  # 2 is bicubic, which the 3-D check rejects with its own message
    spatial = (3,) * dims
    x, g = torch.randn(1, 2, *spatial, device="ocl"), torch.zeros(1, *(2,) * dims, dims, device="ocl")
    forward = getattr(torch.ops.aten, f"grid_sampler_{dims}d")
    backward = getattr(torch.ops.aten, f"grid_sampler_{dims}d_backward")
    with pytest.raises(RuntimeError, match="unknown (interpolation|padding) mode"):
        forward(x, g, mode, padding, False)
    with pytest.raises(RuntimeError, match="unknown (interpolation|padding) mode"):
        backward(torch.ones(1, 2, *(2,) * dims, device="ocl"), x, g, mode, padding, False, [True, True])


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_grid_sampler_backward_deterministic_mode(mode):
    # Under torch.use_deterministic_algorithms the input gradient comes from a sorted scatter-add
    # of the taps (no atomics): bitwise the same on every run, and close to the CPU's.
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 8, 4, 5, generator=g)
    grid = (torch.rand(2, 40, 50, 2, generator=g) - 0.5) * 0.8  # ~1000 points per pixel
    gy = torch.randn(2, 8, 40, 50, generator=g)
    expected = torch.ops.aten.grid_sampler_2d_backward(gy, x, grid, 0 if mode == "bilinear" else 2, 0, False,
                                                       [True, True])[0]
    xd, gd, gyd = x.to("ocl"), grid.to("ocl"), gy.to("ocl")
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        torch.ocl._reset_launch_counts()
        runs = [torch.ops.aten.grid_sampler_2d_backward(gyd, xd, gd, 0 if mode == "bilinear" else 2, 0, False,
                                                        [True, True])[0].cpu() for _ in range(3)]
        assert torch.ocl._launch_counts().get("grid_sampler_2d_bwd_taps", 0) == 3
    finally:
        torch.use_deterministic_algorithms(before)
    assert all(torch.equal(r, runs[0]) for r in runs[1:])
    torch.testing.assert_close(runs[0], expected, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("special", [0.0, float("inf"), float("nan")])
@pytest.mark.parametrize("p", [3.0, -1.5, 0.5])
def test_float64_p_norms_with_special_entries_in_some_columns(special, p):
    # PoCL 3.1's double vector pow (AVX-512 host) spoiled every lane of a vector holding a 0,
    # inf or NaN lane: the columns next to one with such an entry came out wrong.
    x = torch.randn(64, 480, generator=torch.Generator().manual_seed(5), dtype=torch.float64) * 3
    x[::5, ::7] = special
    for dim in (0, 1):
        torch.testing.assert_close(torch.linalg.vector_norm(x.to("ocl"), p, dim=dim).cpu(),
                                   torch.linalg.vector_norm(x, p, dim=dim), rtol=1e-10, atol=0, equal_nan=True)


def _ctc_reference(lp, target):
    """-log p(target | lp) for one unbatched [T, C] log_probs, as a plain autograd graph."""
    ext = [0]
    for c in target:
        ext += [c, 0]
    floor = torch.tensor(-1e30, dtype=lp.dtype)  # -inf would put NaN into logsumexp's gradient
    alpha = [lp[0, 0], lp[0, ext[1]]] + [floor] * (len(ext) - 2)
    for t in range(1, lp.shape[0]):
        alpha = [torch.logsumexp(torch.stack([alpha[s]] + ([alpha[s - 1]] if s > 0 else []) +
                                             ([alpha[s - 2]] if s > 1 and ext[s] != ext[s - 2] else [])), 0)
                 + lp[t, ext[s]] for s in range(len(ext))]
    return -torch.logsumexp(torch.stack(alpha[-2:]), 0)


@requires_ocl
@pytest.mark.parametrize("target", [[0], [2, 0], [0, 2, 0], [2, 3]])
def test_ctc_gradient_with_a_blank_label_matches_autograd(target):
    # ATen's CPU backward drops one end state of the last frame when the last label is the
    # blank (it assigns where it should add); the device's gradient is that of the loss.
    x = torch.randn(9, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    ref = x.clone().requires_grad_()
    _ctc_reference(ref.log_softmax(1), target).backward()
    dev = x.to("ocl").requires_grad_()
    loss = F.ctc_loss(dev.log_softmax(1), torch.tensor(target, device="ocl"), (9,), (len(target),), reduction="sum")
    loss.backward()
    torch.testing.assert_close(dev.grad.cpu(), ref.grad, atol=1e-10, rtol=1e-10)


@requires_ocl
def test_ctc_target_label_out_of_range_raises():
    lp = torch.randn(6, 2, 4).log_softmax(2).to("ocl")
    with pytest.raises(RuntimeError, match="target label is not in the valid range"):
        F.ctc_loss(lp, torch.tensor([[1, 4], [2, 3]], device="ocl"), (6, 6), (2, 2)).item()
    ok = F.ctc_loss(lp, torch.tensor([[1, 3], [2, 3]], device="ocl"), (6, 6), (2, 2))  # the device stays usable
    assert torch.isfinite(ok).item()


@requires_ocl
@pytest.mark.parametrize("call,message", [
    (lambda d: F.max_unpool2d(torch.randn(1, 1, 2, 2, device=d), torch.tensor([[[[0, 1], [2, 99]]]], device=d), 2),
     "Found an invalid max index"),
    (lambda d: torch.lu_unpack(torch.randn(3, 3, device=d), torch.tensor([1, 5, 3], dtype=torch.int32, device=d)),
     "pivots passed to lu_unpack must be between 1 and LU.size"),
])
def test_kernel_checked_indices_raise_the_cpus_error(call, message):
    # The CPU checks these on the host; the device finds them in a kernel and raises the same
    # RuntimeError at the next synchronization, and stays usable afterwards.
    with pytest.raises(RuntimeError, match=message):
        call("cpu")
    with pytest.raises(RuntimeError, match=message):
        call("ocl")
        torch.ocl.synchronize()
    assert torch.ones(2, device="ocl").sum().item() == 2


@pytest.mark.parametrize("case", ["channels_last", "channels_last_3d", "(N, L, C)"])
def test_batch_norm_keeps_the_cpus_memory_format(case):
    # Channels-innermost inputs are normalized in place (batch_norm.cl's _cl kernels); the output
    # and the input gradient take the CPU's memory format (contiguous for a transposed (N, L, C)).
    g = torch.Generator().manual_seed(0)
    if case == "(N, L, C)":
        x = torch.randn(4, 9, 70, generator=g).transpose(1, 2)
    else:
        mf = torch.channels_last if case == "channels_last" else torch.channels_last_3d
        x = torch.randn(*((4, 70, 5, 6) if case == "channels_last" else (2, 5, 3, 4, 6)), generator=g)
        x = x.contiguous(memory_format=mf)
    c = x.shape[1]
    w, b = torch.rand(c, generator=g) + 0.5, torch.randn(c, generator=g)
    res = {}
    for dev in ("cpu", "ocl"):
        xd, wd, bd = x.to(dev), w.to(dev), b.to(dev)
        y, mean, invstd = torch.ops.aten.native_batch_norm(xd, wd, bd, None, None, True, 0.1, 1e-5)
        gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(1)).to(dev)
        gy = gy.contiguous(memory_format=torch.channels_last) if y.dim() == 4 else gy
        gi, gw, gb = torch.ops.aten.native_batch_norm_backward(gy, xd, wd, None, None, mean, invstd, True, 1e-5,
                                                                [True, True, True])
        res[dev] = (y, gi, gw, gb)
    for name, r, o in zip(("output", "grad_input", "grad_weight", "grad_bias"), res["cpu"], res["ocl"]):
        if r is None:
            assert o is None, name
            continue
        assert o.stride() == r.stride(), f"{name}: strides {o.stride()} on ocl, {r.stride()} on the CPU"
        torch.testing.assert_close(o.cpu(), r, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("case", ["channels_last", "channels_last_3d", "contiguous grad", "no affine", "(N, L, C)"])
def test_group_norm_keeps_the_cpus_memory_format(case):
    # Channels-innermost inputs are normalized in place (norm.cl's group_norm_cl_* kernels, which
    # must run, the NCHW kernels not); the output and the input gradient take the CPU's strides
    # (channels_last(_3d) kept), mean, rstd and the parameter grads its values. The CPU's
    # native_group_norm refuses a transposed (N, L, C) input, which ocl reads in place: compared
    # with the CPU's answer for the same values, contiguous.
    g = torch.Generator().manual_seed(0)
    shape, mf, groups = ((2, 12, 3, 4, 5), torch.channels_last_3d, 4) if case == "channels_last_3d" \
        else ((4, 70, 5, 6), torch.channels_last, 7)
    if case == "(N, L, C)":
        x, groups = torch.randn(4, 9, 70, generator=g).transpose(1, 2), 7
    else:
        x = torch.randn(*shape, generator=g).contiguous(memory_format=mf)
    N, C, HW = x.shape[0], x.shape[1], x[0, 0].numel()
    w, b = (None, None) if case == "no affine" else (torch.rand(C, generator=g) + 0.5, torch.randn(C, generator=g))
    gy = torch.randn(x.shape, generator=torch.Generator().manual_seed(1))
    if case != "contiguous grad":
        gy = gy.movedim(1, -1).contiguous().movedim(-1, 1)  # x's layout
    res = {}
    for dev in ("cpu", "ocl"):
        xd = x.contiguous() if dev == "cpu" and case == "(N, L, C)" else x
        # The CPU's backward reads grad_out as if it had x's layout (a contiguous one gives wrong
        # values, torch 2.13; autograd always passes it so): it gets the same values in x's layout.
        gyd = gy.contiguous(memory_format=torch.contiguous_format if case == "(N, L, C)" else mf) if dev == "cpu" else gy
        xd, wd, bd, gyd = (t if t is None else t.to(dev) for t in (xd, w, b, gyd))
        if dev == "ocl":
            torch.ocl._reset_launch_counts()
        y, mean, rstd = torch.ops.aten.native_group_norm(xd, wd, bd, N, C, HW, groups, 1e-5)
        gi, gw, gb = torch.ops.aten.native_group_norm_backward(gyd, xd, mean, rstd, wd, N, C, HW, groups,
                                                               [True, w is not None, b is not None])
        res[dev] = (y, mean, rstd, gi, gw, gb)
    ran = set(torch.ocl._launch_counts())
    assert {"group_norm_cl_part", "group_norm_cl_stats", "group_norm_cl_affine", "group_norm_cl_bwd_part",
            "group_norm_cl_bwd_coef", "group_norm_cl_bwd_dx"} <= ran, ran
    assert ("group_norm_bwd_wb" in ran) == (w is not None), ran
    assert not {"group_norm_fwd", "group_norm_bwd_sums", "group_norm_bwd_dx"} & ran, ran
    if case != "(N, L, C)":
        assert res["cpu"][0].is_contiguous(memory_format=mf) and not res["cpu"][0].is_contiguous()
    names = ("output", "mean", "rstd", "grad_input", "grad_weight", "grad_bias")
    for name, r, o in zip(names, res["cpu"], res["ocl"]):
        if r is None:
            assert o is None, name
            continue
        assert o.stride() == r.stride(), f"{name}: strides {o.stride()} on ocl, {r.stride()} on the CPU"
        assert o.dtype == r.dtype, name
        torch.testing.assert_close(o.cpu(), r, atol=1e-4, rtol=1e-4)


def test_group_norm_channels_last_far_from_zero_is_accurate():
    # group_norm_cl_affine centres x on the group mean before scaling, as the NCHW kernel: with a
    # mean of 100 the float32 result stays within 1e-4 of a float64 reference (torch 2.13's CPU
    # channels-last kernel computes x * scale + shift and is off by about 3e-3 here).
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(2, 8, 7, 5, generator=g) + 100).contiguous(memory_format=torch.channels_last)
    w, b = torch.rand(8, generator=g) + 0.5, torch.randn(8, generator=g)
    ref = F.group_norm(x.double().contiguous(), 4, w.double(), b.double(), eps=1e-5)
    torch.ocl._reset_launch_counts()
    y = F.group_norm(x.to("ocl"), 4, w.to("ocl"), b.to("ocl"), eps=1e-5)
    assert "group_norm_cl_affine" in torch.ocl._launch_counts()
    assert y.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(y.cpu().double(), ref, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("params", ["weight and bias", "frozen weight", "weight only", "input only"])
def test_group_norm_autograd_reads_channels_last_in_place(params):
    # F.group_norm's AutogradPrivateUse1 node (norm.cpp: GroupNormFunction) hands the backward the
    # input and a gradient in its layout as they are: the backward launches only the
    # channels-innermost kernels (ATen's formula would copy both to NCHW first). "frozen weight":
    # a weight that needs no gradient before a bias that does (needs_input_grad's indices).
    # Gradients and their strides are the CPU's; create_graph goes through ATen's composite and
    # matches the CPU's second derivative. (A bias without a weight fails the backward on the CPU
    # in torch 2.13, "tensor does not have a device", and on ocl alike.)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 12, 5, 7, generator=g).contiguous(memory_format=torch.channels_last)
    w = torch.rand(12, generator=g) + 0.5 if params != "input only" else None
    b = torch.randn(12, generator=g) if params in ("weight and bias", "frozen weight") else None
    gy = torch.randn(3, 5, 7, 12, generator=g)  # y.movedim(1, -1)'s gradient: x's layout
    res = {}
    for dev in ("cpu", "ocl"):
        xd = x.to(dev).requires_grad_()
        wd = None if w is None else w.to(dev).requires_grad_(params != "frozen weight")
        bd = None if b is None else b.to(dev).requires_grad_()
        leaves = [t for t in (xd, wd, bd) if t is not None and t.requires_grad]
        y = F.group_norm(xd, 4, wd, bd).movedim(1, -1)
        if dev == "ocl":
            torch.ocl.synchronize()
            torch.ocl._reset_launch_counts()
        grads = torch.autograd.grad(y, leaves, gy.to(dev))
        if dev == "ocl":
            ran = set(torch.ocl._launch_counts())
            expected = {"group_norm_cl_bwd_part", "group_norm_cl_bwd_coef", "group_norm_cl_bwd_dx"}
            assert expected <= ran <= expected | {"group_norm_bwd_wb"}, ran
            assert ("group_norm_bwd_wb" in ran) == (len(leaves) > 1), ran
        y = F.group_norm(xd, 4, wd, bd)
        (gx,) = torch.autograd.grad((y * y * y).sum(), xd, create_graph=True)
        (ggx,) = torch.autograd.grad(gx.square().sum(), xd)
        res[dev] = list(grads) + [gx, ggx]
    for i, (r, o) in enumerate(zip(res["cpu"], res["ocl"])):
        assert o.stride() == r.stride(), f"output {i}: strides {o.stride()} on ocl, {r.stride()} on the CPU"
        torch.testing.assert_close(o.detach().cpu(), r.detach(), atol=1e-4, rtol=1e-4)
