"""Cases for torch.fft on the device (csrc/ops/fft.cpp): _fft_c2c / _fft_r2c / _fft_c2r and their
out= forms through every torch.fft front end (fft/ifft/fft2/fftn, rfft/irfft/rfftn/irfftn,
hfft/ihfft and their n-d forms), all three norms, sizes 1, odd, prime (Bluestein), powers of two
and 2-3-5-7 products up to 2^16 (one launch, four-step), 1-d to 3-d transforms over any dims,
non-contiguous, expanded and conjugated inputs, gradients (through real-valued losses: the
harness differentiates real leaves and real outputs only), stft/istft, unfold_backward and
equal (which istft needs), and the CPU's errors. Empty batches are in tests/test_fft.py: the
CPU's MKL raises for them, so they cannot be compared here.
"""
import torch

from ..cases import COMPLEX, FLOATS, HALFS, INTS, OpCase, Sample, make

_C2C_SIZES = [(1,), (2,), (7,), (8,), (3, 16), (2, 97), (5, 60), (2, 3, 125), (4, 1000), (3, 1009)]


def _unit(outs):
    """Each output over its largest magnitude: float32 transforms of n points carry errors of a
    few ulps of the largest value (the CPU's too), so the default tolerances then bound the
    error relative to the output's scale, not to each element."""
    return [t / t.abs().max().clamp_min(1e-30) if t.numel() else t for t in outs]


def _real_of(dtype):
    return torch.float64 if dtype in (torch.complex128, torch.float64) else torch.float32


def _complex_of(dtype):
    return torch.complex128 if dtype in (torch.complex128, torch.float64) else torch.complex64


# ---- c2c ------------------------------------------------------------------------------------

def _c2c(z):
    outs = [torch.fft.fft(z), torch.fft.ifft(z), torch.fft.fft(z, norm="ortho"), torch.fft.ifft(z, norm="forward")]
    if z.dim() >= 2:
        outs += [torch.fft.fft(z, dim=0), torch.fft.fft2(z), torch.fft.ifft2(z, norm="ortho"),
                 torch.fft.fftn(z, dim=(-1, 0), norm="forward")]
    if z.dim() >= 3:
        outs += [torch.fft.fftn(z), torch.fft.ifftn(z, dim=(0, 2))]
    return _unit(outs)


def _c2c_samples(dtype):
    for i, s in enumerate(_C2C_SIZES):
        yield Sample((make(s, dtype, seed=i),), tag=f"shape{s}")
    yield Sample((make((6, 10), dtype, noncontig=True),), tag="noncontig")
    yield Sample((make((10, 6), dtype, seed=1).t(),), tag="transposed")
    yield Sample((make((1, 9), dtype, seed=2).expand(4, 9),), tag="expanded")
    yield Sample((make((3, 5, 4), dtype, seed=3).permute(2, 0, 1),), tag="permuted 3-d")
    yield Sample((make((), dtype, seed=4),), tag="0-dim")


def _c2c_sizes(z, n):
    """Padding and trimming (the front end's constant_pad_nd / slice) and conjugated inputs."""
    return _unit([torch.fft.fft(z, n=n), torch.fft.ifft(z, n=n - 3, dim=0), torch.fft.fft2(z, s=(n, 4)),
                  torch.fft.fft(z.conj()), torch.fft.ifft(z.conj(), norm="ortho")])


def _c2c_sizes_samples(dtype):
    yield Sample((make((5, 6), dtype), 11), tag="pad to 11")
    yield Sample((make((8, 12), dtype, seed=1), 7), tag="trim to 7")


def _c2c_raw(z, dims, norm, forward):
    return _unit([torch.ops.aten._fft_c2c(z, dims, norm, forward)])


def _c2c_raw_samples(dtype):
    z = make((4, 6, 10), dtype)
    for norm in (0, 1, 2):
        for forward in (True, False):
            yield Sample((z, [2, 0], norm, forward), tag=f"norm {norm} forward {forward}")
    yield Sample((z, [], 1, True), tag="no dims: a copy")
    yield Sample((make((4, 6), _real_of(dtype)), [1], 0, True), tag="real input raises")


def _math_bits(z):
    """Lazily conjugated / negated inputs: read as their values."""
    n = z.conj().imag  # a real tensor with the negative bit
    return _unit([torch.fft.rfft(n), torch.fft.fft(n), torch.fft.fft(z.conj()), torch.fft.irfft(z.conj()),
                  torch.fft.ihfft(n), torch.fft.fftn(torch._neg_view(z))])


# Large transforms: four-step (n > 2048 for complex64, > 1024 for complex128), smooth and
# prime (Bluestein) sizes; "ortho" keeps the values O(1) so the default tolerances apply.
def _large(z):
    return (torch.fft.fft(z, norm="ortho"), torch.fft.ifft(z, norm="ortho"))


def _large_samples(dtype):
    for i, s in enumerate([(2, 4096), (1, 65536), (3, 3000), (2, 2310), (1, 4099), (2, 7919), (1, 1 << 15)]):
        yield Sample((make(s, dtype, seed=i),), tag=f"shape{s}")
    yield Sample((make((3000, 3), dtype, seed=9),), tag="long inner dim")


def _large_dim0(z):
    return (torch.fft.fft(z, dim=0, norm="ortho"), torch.fft.fft2(z, norm="ortho"))


def _large_dim0_samples(dtype):
    yield Sample((make((2500, 3), dtype),), tag="(2500, 3)")


# ---- r2c ------------------------------------------------------------------------------------

def _r2c(x):
    outs = [torch.fft.rfft(x), torch.fft.rfft(x, norm="ortho"), torch.fft.ihfft(x), torch.fft.fft(x),
            torch.fft.ifft(x, norm="forward")]
    if x.dim() >= 2:
        outs += [torch.fft.rfft(x, dim=0), torch.fft.rfft2(x), torch.fft.rfftn(x, dim=(0, -1), norm="forward"),
                 torch.fft.ihfft2(x), torch.fft.fft2(x)]
    if x.dim() >= 3:
        outs += [torch.fft.rfftn(x), torch.fft.ihfftn(x, dim=(2, 0))]
    return _unit(outs)


def _r2c_samples(dtype):
    for i, s in enumerate(_C2C_SIZES + [(2, 4096), (2, 3001)]):
        yield Sample((make(s, dtype, seed=i),), tag=f"shape{s}")
    yield Sample((make((6, 10), dtype, noncontig=True),), tag="noncontig")
    yield Sample((make((9, 6), dtype, seed=1).t(),), tag="transposed")
    yield Sample((make((1, 9), dtype, seed=2).expand(4, 9),), tag="expanded")


def _r2c_raw(x, dims, norm, onesided):
    return _unit([torch.ops.aten._fft_r2c(x, dims, norm, onesided)])


def _r2c_raw_samples(dtype):
    x = make((4, 6, 10), dtype)
    for norm in (0, 1, 2):
        for onesided in (True, False):
            yield Sample((x, [0, 2], norm, onesided), tag=f"norm {norm} onesided {onesided}")
    yield Sample((make((5, 2500), dtype), [1], 1, False), tag="large, twosided")
    yield Sample((make((4, 6), _complex_of(dtype)), [1], 0, True), tag="complex input raises")


def _r2c_error(x):
    return torch.ops.aten._fft_r2c(x, [0], 0, True)


def _r2c_front_error(x):
    return torch.fft.rfft(x)


# ---- c2r ------------------------------------------------------------------------------------

def _c2r(z):
    # Any complex input: the imaginary parts of the DC and Nyquist terms must be ignored as
    # the CPU ignores them, and a multi-dim c2r is a c2c then a 1-d c2r, as on the CPU.
    n = z.size(-1)
    outs = [torch.fft.irfft(z), torch.fft.irfft(z, n=2 * n - 1), torch.fft.irfft(z, norm="ortho"),
            torch.fft.hfft(z), torch.fft.hfft(z, n=2 * n + 1, norm="forward")]
    if z.dim() >= 2:
        outs += [torch.fft.irfft(z, dim=0), torch.fft.irfft2(z), torch.fft.irfftn(z, s=(5, 2 * n - 1), dim=(0, -1)),
                 torch.fft.hfft2(z, norm="ortho")]
    if z.dim() >= 3:
        outs += [torch.fft.irfftn(z), torch.fft.hfftn(z, dim=(2, 0))]
    return _unit(outs)


def _c2r_samples(dtype):
    for i, s in enumerate([(1,), (2,), (5,), (3, 9), (2, 49), (4, 31), (2, 3, 64), (2, 501), (2, 2049), (2, 1501)]):
        yield Sample((make(s, dtype, seed=i),), tag=f"shape{s}")
    yield Sample((make((6, 10), dtype, noncontig=True),), tag="noncontig")
    yield Sample((make((9, 6), dtype, seed=1).t(),), tag="transposed")
    yield Sample((make((1, 9), dtype, seed=2).expand(4, 9),), tag="expanded")
    yield Sample((make((4, 7), dtype, seed=3).conj(),), tag="conjugated")


def _c2r_raw(z, dims, norm, n):
    return _unit([torch.ops.aten._fft_c2r(z, dims, norm, n)])


def _c2r_raw_samples(dtype):
    z = make((4, 6, 10), dtype)
    for norm in (0, 1, 2):
        yield Sample((z, [0, 2], norm, 18), tag=f"norm {norm} even")
        yield Sample((z, [1, 2], norm, 19), tag=f"norm {norm} odd")
    yield Sample((make((2, 1), dtype), [1], 0, 1), tag="n = 1")
    yield Sample((make((2, 2), dtype), [1], 0, 8), tag="too few frequencies raises")
    yield Sample((make((4, 6), _real_of(dtype)), [1], 0, 10), tag="real input raises")


# ---- out= -----------------------------------------------------------------------------------

def _outs(z, x):
    """out= forms: empty and wrongly shaped outs are resized; a real out of a complex result
    and a complex128 out of a complex64 one take a converting copy, as on the CPU."""
    def e(*shape, dtype=z.dtype):
        return torch.empty(*shape, dtype=dtype, device=z.device)

    o1, o2, o3, o4, o5, o6, o7, o8 = e(0), e(3, 2), e(0, dtype=z.dtype), e(2), e(5), e(0), e(1, dtype=x.dtype), e(4)
    torch.fft.fft(z, out=o1)
    torch.fft.ifft2(z, norm="ortho", out=o2)
    torch.fft.rfft(x, out=o3)
    torch.fft.fft(x, out=o4)  # a twosided r2c
    torch.fft.ifft(x, out=o5)  # r2c, then conj_physical_ in the out
    torch.fft.ihfft(x, out=o6)
    torch.fft.irfft(z, out=o7)
    torch.fft.hfft(z, n=9, out=o8)
    o9 = e(z.shape, dtype=torch.complex128)
    torch.ops.aten._fft_c2c.out(z, [1], 2, True, out=o9)
    o10 = e(z.shape, dtype=torch.complex128)
    torch.ops.aten._fft_r2c.out(x, [0, 1], 1, False, out=o10)
    o11 = e(0, dtype=x.dtype)
    torch.ops.aten._fft_c2r.out(z, [0, 1], 2, 11, out=o11)
    o12 = e(z.shape[1], z.shape[0]).t()  # a strided out of the right shape: written in place
    torch.fft.fft(z, out=o12)
    return _unit([o1, o2, o3, o4, o5, o6, o7, o8, o9, o10, o11, o12])


def _outs_samples(dtype):
    real = _real_of(dtype)
    yield Sample((make((3, 6), dtype), make((3, 6), real, seed=1)), tag="contiguous")
    yield Sample((make((4, 6), dtype, noncontig=True), make((6, 3), real, seed=2).t()), tag="noncontig")


# ---- gradients (real leaves; complex values through view_as_complex) -----------------------

def _grads(x, w):
    # "ortho" where the values would grow with n (float32 gradients are compared at 10x the
    # default tolerances, absolute ones included).
    z = torch.view_as_complex(w)  # (..., n) complex from (..., n, 2) real
    return (torch.fft.rfft(x, norm="ortho").abs(), torch.view_as_real(torch.fft.rfft2(x, norm="ortho")),
            torch.fft.fft(x, norm="ortho").abs(), torch.fft.ihfft(x).imag,
            torch.view_as_real(torch.fft.fft(z, norm="ortho")), torch.fft.ifft2(z).abs(), torch.fft.irfft(z),
            torch.fft.irfft(z, n=2 * z.size(-1) - 1, norm="ortho"), torch.fft.hfft(z, norm="ortho"),
            torch.fft.irfft2(z), torch.fft.fftn(z * x[..., : z.size(-1)], norm="ortho").real)


def _grads_samples(dtype):
    for i, (b, n) in enumerate([(3, 8), (2, 7), (4, 13), (2, 97), (2, 2500)]):
        yield Sample((make((b, n), dtype, seed=i), make((b, n, 2), dtype, seed=10 + i)), tag=f"({b}, {n})")


# ---- stft / istft ---------------------------------------------------------------------------

def _stft(x, w):
    return (torch.stft(x, 64, 16, window=w, return_complex=True),
            torch.stft(x, 64, 16, window=w, center=False, normalized=True, onesided=False, return_complex=True),
            torch.stft(x, 50, 12, win_length=40, window=w[:40], return_complex=True),
            torch.stft(x, 32, return_complex=True, pad_mode="constant"))


def _stft_samples(dtype):
    yield Sample((make((2, 600), dtype), torch.hann_window(64, dtype=dtype)), tag="batched")
    yield Sample((make((700,), dtype, seed=1), torch.hann_window(64, dtype=dtype)), tag="1-d")
    yield Sample((make((2, 1200), dtype, noncontig=True, seed=2), torch.hann_window(64, periodic=False, dtype=dtype)),
                 tag="noncontig")


def _stft_complex(z, w):
    return (torch.stft(z, 64, 16, window=w, center=False, return_complex=True),
            torch.stft(z, 48, 20, window=w[:48], center=False, normalized=True, return_complex=True))


def _stft_complex_samples(dtype):
    real = _real_of(dtype)
    yield Sample((make((2, 500), dtype), torch.hann_window(64, dtype=real)), tag="complex signal")


def _stft_grad(x, w):
    return (torch.stft(x, 64, 16, window=w, return_complex=True).abs(),
            torch.view_as_real(torch.stft(x, 32, 8, return_complex=True, center=False)))


def _istft(s, w, length):
    spec = torch.view_as_complex(s)
    return (torch.istft(spec, 64, 16, window=w, length=length), torch.istft(spec, 64, 16, window=w),
            torch.istft(spec, 64, 32, window=w, normalized=True, center=True))


def _istft_samples(dtype):
    w = torch.hann_window(64, dtype=dtype)
    for i, (shape, length) in enumerate([((700,), 700), ((2, 600), 590)]):
        spec = torch.stft(make(shape, dtype, seed=i), 64, 16, window=w, return_complex=True)
        yield Sample((torch.view_as_real(spec).contiguous(), w, length), tag=f"signal {shape}")
    noisy = make((2, 33, 20, 2), dtype, seed=5)  # not any signal's stft
    yield Sample((noisy, w, None), tag="arbitrary spectrum")


def _istft_complex(s, w):
    spec = torch.view_as_complex(s)
    return (torch.istft(spec, 32, 8, window=w, onesided=False, return_complex=True),
            torch.istft(spec, 32, 8, window=w, onesided=False, return_complex=False, length=100))


def _istft_complex_samples(dtype):
    w = torch.hann_window(32, dtype=dtype)
    spec = torch.stft(make((2, 120), _complex_of(dtype)), 32, 8, window=w, return_complex=True)
    yield Sample((torch.view_as_real(spec).contiguous(), w), tag="twosided")


# ---- unfold_backward, equal -----------------------------------------------------------------

def _unfold(x, dim, size, step):
    return x.unfold(dim, size, step) * 2


def _unfold_samples(dtype):
    yield Sample((make((10, 5), dtype), 0, 4, 2), tag="overlapping")
    yield Sample((make((3, 17), dtype, seed=1), 1, 5, 1), tag="step 1")
    yield Sample((make((3, 17), dtype, seed=2), -1, 3, 5), tag="gaps")
    yield Sample((make((2, 9, 4), dtype, noncontig=True, seed=3), 1, 9, 4), tag="one window, noncontig")
    yield Sample((make((), dtype, seed=4), 0, 1, 1), tag="0-dim")
    yield Sample((make((0, 6), dtype, seed=5), 1, 2, 2), tag="empty")


def _unfold_backward(g, sizes, dim, size, step):
    return torch.ops.aten.unfold_backward(g, sizes, dim, size, step)


def _unfold_backward_samples(dtype):
    yield Sample((make((4, 5, 3), dtype), [5, 11], 0, 3, 2), tag="overlapping")
    yield Sample((make((2, 3, 6), dtype, seed=1).transpose(0, 1), [3, 8], 1, 6, 1), tag="step 1, noncontig")
    yield Sample((make((3, 2, 2), dtype, seed=2), [3, 9], 1, 2, 4), tag="gaps")


def _equal(a, b):
    nan = torch.full_like(a, float("nan")) if a.dtype.is_floating_point or a.dtype.is_complex else a
    return (torch.equal(a, a.clone()), torch.equal(a, b), torch.equal(a, a[:1]), torch.equal(a[:0], b[:0]),
            torch.equal(nan, nan), torch.equal(a, a.to(torch.float64)), torch.equal(a.t(), a.t().contiguous()))


def _equal_samples(dtype):
    yield Sample((make((3, 4), dtype), make((3, 4), dtype, seed=1)), tag="random")
    a = make((3, 4), dtype, seed=2)
    b = a.clone()
    b[1, 2] = b[1, 3]
    yield Sample((a, b), tag="one element differs")


CASES = [
    OpCase("fft_c2c", ["aten::_fft_c2c"], _c2c, _c2c_samples, dtypes=COMPLEX),
    OpCase("fft_c2c_sizes", [], _c2c_sizes, _c2c_sizes_samples, dtypes=COMPLEX),
    OpCase("fft_c2c_raw", [], _c2c_raw, _c2c_raw_samples, dtypes=COMPLEX),
    OpCase("fft_math_bits", [], _math_bits, lambda dt: [Sample((make((3, 10), dt),))], dtypes=COMPLEX),
    OpCase("fft_large", [], _large, _large_samples, dtypes=COMPLEX),
    OpCase("fft_large_dim0", [], _large_dim0, _large_dim0_samples, dtypes=COMPLEX),
    OpCase("fft_r2c", ["aten::_fft_r2c"], _r2c, _r2c_samples, dtypes=FLOATS),
    OpCase("fft_r2c_raw", [], _r2c_raw, _r2c_raw_samples, dtypes=FLOATS),
    OpCase("fft_r2c_errors", [], _r2c_error, lambda dt: [Sample((make((8,), dt),))], dtypes=HALFS + INTS[:2]),
    OpCase("fft_front_errors", [], _r2c_front_error, lambda dt: [Sample((make((8,), dt),))],
           dtypes=HALFS + COMPLEX),
    OpCase("fft_c2r", ["aten::_fft_c2r"], _c2r, _c2r_samples, dtypes=COMPLEX),
    OpCase("fft_c2r_raw", [], _c2r_raw, _c2r_raw_samples, dtypes=COMPLEX),
    OpCase("fft_out", ["aten::_fft_c2c.out", "aten::_fft_r2c.out", "aten::_fft_c2r.out"], _outs, _outs_samples,
           dtypes=COMPLEX),
    OpCase("fft_grad", [], _grads, _grads_samples, dtypes=FLOATS, grad=True),
    OpCase("stft", [], _stft, _stft_samples, dtypes=FLOATS),
    OpCase("stft_complex", [], _stft_complex, _stft_complex_samples, dtypes=COMPLEX),
    OpCase("stft_grad", [], _stft_grad, lambda dt: _stft_samples(dt), dtypes=FLOATS, grad=True),
    OpCase("istft", ["aten::equal"], _istft, _istft_samples, dtypes=FLOATS, grad=True),
    OpCase("istft_complex", [], _istft_complex, _istft_complex_samples, dtypes=FLOATS),
    OpCase("unfold_grad", ["aten::unfold_backward"], _unfold, _unfold_samples, dtypes=FLOATS + HALFS, grad=True),
    OpCase("unfold_backward", [], _unfold_backward, _unfold_backward_samples,
           dtypes=FLOATS + HALFS + COMPLEX + INTS[:2] + (torch.bool,)),
    OpCase("equal", [], _equal, _equal_samples, dtypes=FLOATS + COMPLEX + INTS[:2] + (torch.bool,)),
]
