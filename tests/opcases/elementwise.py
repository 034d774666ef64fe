"""Cases for csrc/ops/elementwise.cpp: arithmetic, float math, rounding, min/max/clamp,
lerp/addcmul/addcdiv, where/masked_fill, comparisons, logical and bitwise ops.

Every functional form reaches the registered `.out` kernel (structured ops), so one program
per (op, dtype, CPU-scalar operand) is compiled; cases share dtypes to keep that count low.
The *_forms cases exercise out= (wrong shape: resized; other dtype: cast or refused as on the
CPU) and in-place forms of many ops in one call.
"""
import torch

from ..cases import FLOAT, FLOATS, HALFS, INTS, SHAPES, OpCase, Sample, binary_samples, make, unary_samples

I64 = (torch.int64,)
SOME_INTS = (torch.int64, torch.int32, torch.uint8)
SIGNED = (torch.int64, torch.int32, torch.int16, torch.int8)


def _nonzero(t):
    """t with zeros replaced by 1, keeping strides (integer divisors)."""
    if t.dtype.is_floating_point or t.dtype == torch.bool:
        return t
    t = t.clone() if t.stride() and min(t.stride()) == 0 else t
    t[t == 0] = 1
    return t


def _div_samples(dtype, zero=True):
    scalars = (2, 3) if dtype in (torch.uint8, torch.bool) else (2, -3)
    for s in binary_samples(dtype, scalars=scalars):
        a, b = s.args
        yield Sample((a, _nonzero(b) if isinstance(b, torch.Tensor) else b), tag=s.tag)
    if zero:
        # A Python-scalar zero divisor: integer ops raise ZeroDivisionError on the host, like the CPU.
        yield Sample((make((4, 5), dtype), 0), tag="python scalar 0")


def _pos(dtype):
    return dict(low=0.1, high=5.0)


# ---- arithmetic --------------------------------------------------------------------------

def _alpha_samples(dtype):
    alpha = 2 if not dtype.is_floating_point else 0.5
    for s in binary_samples(dtype):
        yield Sample(s.args, {"alpha": alpha}, tag=s.tag)


def _inplace_binary(op):
    def fn(a, b):
        y = a.clone()
        getattr(y, op + "_")(b)
        return y
    return fn


def _binary_forms_samples(dtype):
    yield Sample((make((4, 6), dtype, noncontig=True), make((6,), dtype, low=1, high=4)), tag="noncontig+broadcast")
    yield Sample((make((3, 5), dtype), 3), tag="python scalar")


def _binary_forms(a, b):
    """out= (wrong shape, other dtype) and in-place forms of the binary arithmetic ops."""
    res = []
    for op in (torch.add, torch.sub, torch.mul, torch.div, torch.maximum, torch.minimum, torch.atan2, torch.pow,
               torch.fmod, torch.remainder, torch.copysign, torch.hypot, torch.fmin, torch.fmax):
        bb = b if isinstance(b, torch.Tensor) or op not in (torch.maximum, torch.minimum, torch.fmin, torch.fmax,
                                                            torch.atan2, torch.hypot) else torch.full_like(a, b)
        out = torch.empty(2, 2, dtype=a.dtype, device=a.device)
        op(a, bb, out=out)
        res.append(out)
        out64 = torch.empty(0, dtype=torch.float64, device=a.device)
        op(a, bb, out=out64)
        res.append(out64)
        if hasattr(a, op.__name__ + "_"):
            y = a.clone()
            getattr(y, op.__name__ + "_")(bb)
            res.append(y)
    x = a.clone()
    x.add_(b, alpha=2)
    res.append(x)
    return res


def _sub_bool(a, b):
    return a - b


def _neg_bool(a):
    return -a


def _int_out_float_result(a, b):
    out = torch.empty(0, dtype=torch.int64, device=a.device)
    return torch.div(a, b, out=out)


def _div_modes(a, b):
    return (torch.div(a, b), torch.div(a, b, rounding_mode="trunc"), torch.div(a, b, rounding_mode="floor"),
            a // b, torch.remainder(a, b), torch.fmod(a, b))


def _int_div_modes(a, b):
    return (torch.div(a, b, rounding_mode="trunc"), torch.div(a, b, rounding_mode="floor"), a // b,
            torch.remainder(a, b), torch.fmod(a, b))


def _inplace_div(a, b):
    y = a.clone()
    y.floor_divide_(b)
    z = a.clone()
    z.remainder_(b)
    return y, z


def _remainder_scalar_tensor(a, b):
    return torch.remainder(5, b if isinstance(b, torch.Tensor) else torch.full_like(a, b))


def _rsub(a, b):
    return torch.rsub(a, b, alpha=2) if isinstance(b, torch.Tensor) else torch.rsub(a, torch.full_like(a, b))


def _pow_samples(dtype):
    low, high = (0.2, 3.0) if dtype.is_floating_point else (-3, 4)
    for s in binary_samples(dtype, low=low, high=high, rhs_low=0 if not dtype.is_floating_point else -2.0,
                            rhs_high=4 if not dtype.is_floating_point else 2.0, scalars=(2, 3)):
        yield s


def _pow_scalar_samples(dtype):
    low, high = (0.2, 3.0) if dtype.is_floating_point else (-3, 4)
    x = make((5, 7), dtype, low=low, high=high)
    exps = (0, 1, 2, 3, 0.5, -0.5, -1, -2, 1.7, -1.3) if dtype.is_floating_point else (0, 1, 2, 3, 5, -1, 2.5)
    for e in exps:
        yield Sample((x, e), tag=f"exp {e}")
    yield Sample((make((4, 6), dtype, low=low, high=high, noncontig=True), 2), tag="noncontig")
    yield Sample((make((0,), dtype), 2), tag="empty")
    yield Sample((make((), dtype, low=low, high=high), 3), tag="0-dim")


def _pow_scalar_base_samples(dtype):
    e = make((5, 7), dtype, low=-2 if dtype.is_floating_point else 0, high=3)
    for base in (1, 2, 0.5, -3):
        yield Sample((base, e), tag=f"base {base}")


def _pow_base(base, e):
    return torch.pow(base, e)


# ---- float math --------------------------------------------------------------------------

UNARY_FLOAT = {
    # name: (torch fn, sample domain)
    "exp": (torch.exp, {}), "exp2": (torch.exp2, {}), "expm1": (torch.expm1, {}),
    "log": (torch.log, dict(low=0.05, high=5.0)), "log2": (torch.log2, dict(low=0.05, high=5.0)),
    "log10": (torch.log10, dict(low=0.05, high=5.0)), "log1p": (torch.log1p, dict(low=-0.9, high=5.0)),
    "sqrt": (torch.sqrt, dict(low=0.05, high=5.0)), "rsqrt": (torch.rsqrt, dict(low=0.05, high=5.0)),
    "reciprocal": (torch.reciprocal, dict(low=0.2, high=3.0)),
    "sin": (torch.sin, {}), "cos": (torch.cos, {}), "tan": (torch.tan, dict(low=-1.4, high=1.4)),
    "asin": (torch.asin, dict(low=-0.95, high=0.95)), "acos": (torch.acos, dict(low=-0.95, high=0.95)),
    "atan": (torch.atan, {}), "asinh": (torch.asinh, dict(low=-5.0, high=5.0)),
    "acosh": (torch.acosh, dict(low=1.05, high=6.0)), "atanh": (torch.atanh, dict(low=-0.95, high=0.95)),
    "sinh": (torch.sinh, {}), "cosh": (torch.cosh, {}), "tanh": (torch.tanh, {}),
    "sigmoid": (torch.sigmoid, {}), "erf": (torch.erf, {}), "erfc": (torch.erfc, {}),
    "erfinv": (torch.erfinv, dict(low=-0.98, high=0.98)),
    "lgamma": (torch.lgamma, dict(low=0.05, high=8.0)), "sinc": (torch.sinc, {}),
}


def _unary_case(name, fn, dom, dtypes=FLOAT, grad=True):
    return OpCase(name, [f"aten::{name}.out"], fn, lambda dt, dom=dom: unary_samples(dt, **dom), dtypes=dtypes,
                  grad=grad)


def _special_values(dtype):
    yield Sample((torch.tensor([0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"), 0.5, -2.5, 2.5,
                                1e-30, 100.0], dtype=dtype),), tag="special values")


def _unary_float_specials(x):
    return [f(x) for f in (torch.exp, torch.log, torch.sqrt, torch.rsqrt, torch.reciprocal, torch.sigmoid,
                           torch.tanh, torch.erf, torch.erfinv, torch.atan, torch.expm1, torch.log1p, torch.sign,
                           torch.abs, torch.floor, torch.ceil, torch.round, torch.trunc, torch.frac, torch.isnan,
                           torch.isposinf, torch.isneginf, torch.isinf, torch.isfinite, torch.nan_to_num,
                           torch.relu, torch.logit, torch.neg, torch.asinh, torch.acosh, torch.atanh)]


def _gamma_specials(dtype):
    # Poles (0, -0, negative integers), their neighbours, half-integers, the recurrence's end (10),
    # infinities and NaN, and x log x's domain edge.
    yield Sample((torch.tensor([0.0, -0.0, 1.0, 2.0, -1.0, -2.0, -0.5, -1.5, -2.25, 0.5, 1e-8, -1e-8, 9.999, 10.0,
                                10.001, 171.5, 1e18, float("inf"), float("-inf"), float("nan")], dtype=dtype),),
                 tag="special values")
    yield Sample((make((300,), dtype, low=-20, high=40),), tag="wide range")


def _gamma_family(x):
    return torch.lgamma(x), torch.digamma(x), torch.sinc(x), torch.special.entr(x)


def _binary_tensor(fn):
    """fn(a, b) where a scalar b becomes a tensor like a (these ops take no Scalar operand)."""
    return lambda a, b: fn(a, b if isinstance(b, torch.Tensor) else torch.full_like(a, b))


def _unary_float_forms_samples(dtype):
    lo, hi = (0.1, 0.9) if dtype.is_floating_point else (0, 2)
    yield Sample((make((4, 6), dtype, low=lo, high=hi, noncontig=True),), tag="noncontig")
    yield Sample((make((5,), dtype, low=lo, high=hi),), tag="contig")


def _unary_float_forms(x):
    """out= (wrong shape: resized; float64: cast) and in-place forms of the float math ops."""
    res = []
    for name, (f, _) in UNARY_FLOAT.items():
        out = torch.empty(3, dtype=x.dtype if x.dtype.is_floating_point else torch.float32, device=x.device)
        f(x, out=out)
        res.append(out)
        if x.dtype.is_floating_point:
            o64 = torch.empty(0, dtype=torch.float64, device=x.device)
            f(x, out=o64)
            res.append(o64)
            y = x.clone()
            getattr(y, name + "_")()
            res.append(y)
    return res


def _int_promotion(x):
    """Integer inputs of float math ops promote to the default float dtype."""
    return (torch.exp(x), torch.sqrt(x), torch.sin(x), torch.sigmoid(x), torch.div(x, 3), torch.atan2(x, x),
            torch.logit(x), torch.erfinv(x))


def _logit_samples(dtype):
    for s in unary_samples(dtype, low=0.02, high=0.98):
        yield s
    x = make((5, 6), dtype, low=-0.2, high=1.2)
    yield Sample((x,), {"eps": 0.1}, tag="eps 0.1")
    yield Sample((x,), {"eps": -1.0}, tag="eps negative")
    yield Sample((x,), tag="outside [0,1]")


def _logit_forms(x):
    y = x.clone()
    y.logit_(eps=0.05)
    out = torch.empty(2, dtype=x.dtype, device=x.device)
    torch.logit(x, eps=0.05, out=out)
    return y, out


# ---- rounding ----------------------------------------------------------------------------

def _round_samples(dtype):
    for s in unary_samples(dtype, low=-50, high=50):
        yield s
    yield Sample((torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999, -2.5001], dtype=dtype),), tag="ties")


def _rounding(x):
    return torch.floor(x), torch.ceil(x), torch.trunc(x), torch.round(x)


def _round_decimals(x):
    return torch.round(x, decimals=2), torch.round(x, decimals=-1), torch.round(x, decimals=0)


# ---- min / max / clamp -------------------------------------------------------------------

def _nan_binary_samples(dtype):
    for s in binary_samples(dtype):
        yield s
    if dtype.is_floating_point:
        nan = float("nan")
        yield Sample((torch.tensor([nan, 1.0, nan, -0.0, 2.0], dtype=dtype),
                      torch.tensor([1.0, nan, nan, 0.0, 3.0], dtype=dtype)), tag="nans")


def _minmax(a, b):
    if not isinstance(b, torch.Tensor):
        b = torch.full_like(a, b)
    return torch.minimum(a, b), torch.maximum(a, b), torch.fmin(a, b), torch.fmax(a, b)


def _clamp_samples(dtype):
    for i, s in enumerate(SHAPES):
        yield Sample((make(s, dtype, seed=i),), tag=f"shape{s}")
    yield Sample((make((4, 6), dtype, noncontig=True),), tag="noncontig")
    if dtype.is_floating_point:
        yield Sample((torch.tensor([float("nan"), -5.0, 5.0, 0.5], dtype=dtype),), tag="nan")


def _clamp(x):
    lo, hi = (-1.5, 2) if x.dtype.is_floating_point else (-2, 3)
    return (torch.clamp(x, lo, hi), torch.clamp(x, min=lo), torch.clamp(x, max=hi), torch.clamp_min(x, lo),
            torch.clamp_max(x, hi), torch.clamp(x, hi, lo))


def _clamp_promote(x):
    return torch.clamp(x, min=0.5), torch.clamp(x, 0.5, 2.5)


def _clamp_tensor_samples(dtype):
    yield Sample((make((3, 4), dtype), make((3, 4), dtype, low=-2, high=0), make((4,), dtype, low=0, high=2)))
    yield Sample((make((4, 6), dtype, noncontig=True), make((6,), dtype, low=-2, high=0),
                  make((4, 1), dtype, low=0, high=2)), tag="noncontig+broadcast")
    if dtype.is_floating_point:
        nan = float("nan")
        yield Sample((torch.tensor([nan, 1.0, 1.0, 5.0], dtype=dtype), torch.tensor([0.0, nan, 0.0, 0.0], dtype=dtype),
                      torch.tensor([2.0, 2.0, nan, 2.0], dtype=dtype)), tag="nans")


def _clamp_tensor(x, lo, hi):
    return (torch.clamp(x, lo, hi), torch.clamp(x, min=lo), torch.clamp(x, max=hi), torch.clamp_min(x, lo),
            torch.clamp_max(x, hi))


def _clamp_inplace(x):
    y = x.clone()
    y.clamp_(-1, 1)
    z = x.clone()
    z.clamp_min_(0)
    out = torch.empty(1, dtype=x.dtype, device=x.device)
    torch.clamp(x, -1, 1, out=out)
    return y, z, out


# ---- lerp / addcmul / addcdiv ------------------------------------------------------------

def _ternary_samples(dtype):
    lo, hi = (0.1, 1.5) if dtype.is_floating_point else (1, 4)
    for i, s in enumerate(SHAPES):
        yield Sample((make(s, dtype, seed=i), make(s, dtype, seed=50 + i), make(s, dtype, low=lo, high=hi,
                                                                              seed=90 + i)), tag=f"shape{s}")
    yield Sample((make((4, 6), dtype, noncontig=True), make((6,), dtype), make((4, 1), dtype, low=lo, high=hi)),
                 tag="noncontig+broadcast")


def _lerp(a, b, w):
    return torch.lerp(a, b, 0.3), torch.lerp(a, b, 0.8), torch.lerp(a, b, w)


def _addc(a, b, c):
    return torch.addcmul(a, b, c, value=0.5), torch.addcdiv(a, b, c, value=-2), torch.addcmul(a, b, c)


def _addcmul_int(a, b, c):
    return torch.addcmul(a, b, c, value=2)


def _ternary_forms(a, b, c):
    x = a.clone()
    x.addcmul_(b, c, value=2)
    y = a.clone()
    y.addcdiv_(b, c)
    z = a.clone()
    z.lerp_(b, 0.25)
    out = torch.empty(1, dtype=a.dtype, device=a.device)
    torch.lerp(a, b, c, out=out)
    return x, y, z, out


# ---- where / masked_fill -----------------------------------------------------------------

def _where_samples(dtype):
    for i, s in enumerate(SHAPES):
        yield Sample((make(s, torch.bool, seed=i), make(s, dtype, seed=10 + i), make(s, dtype, seed=20 + i)),
                     tag=f"shape{s}")
    yield Sample((make((4, 1), torch.bool), make((4, 6), dtype, noncontig=True), make((6,), dtype)), tag="broadcast")
    yield Sample((make((3, 4), torch.bool), make((3, 4), dtype), 0.0), tag="python scalar other")
    yield Sample((make((3, 4), torch.bool), 2, make((3, 4), dtype)), tag="python scalar self")
    yield Sample((make((3, 4), torch.bool), make((3, 4), dtype), make((3, 4), torch.float64)), tag="promotion")


def _where(c, a, b):
    return torch.where(c, a, b)


def _where_out(c, a, b):
    rt = torch.result_type(a, b)
    out = torch.empty(1, dtype=rt, device=c.device)
    torch.where(c, a, b, out=out)
    return out


def _masked_fill_samples(dtype):
    for i, s in enumerate(SHAPES):
        yield Sample((make(s, dtype, seed=i), make(s, torch.bool, seed=40 + i)), tag=f"shape{s}")
    yield Sample((make((4, 6), dtype, noncontig=True), make((6,), torch.bool)), tag="noncontig+broadcast mask")


def _masked_fill(x, m):
    return (x.masked_fill(m, 3), x.masked_fill(m, torch.tensor(5)), x.masked_fill(m, torch.tensor(7).to(x.device)),
            x.clone().masked_fill_(m, 1))


# ---- comparisons / logical / bitwise -----------------------------------------------------

def _cmp(a, b):
    return a == b, a != b, a < b, a <= b, a > b, a >= b


def _cmp_samples(dtype):
    for s in binary_samples(dtype, low=-3, high=3, scalars=(1, 0.5)):
        yield s
    yield Sample((make((4, 5), dtype, low=-2, high=2), make((4, 5), dtype, low=-2, high=2)), tag="many ties")


def _cmp_forms(a, b):
    out = torch.empty(3, dtype=torch.float32, device=a.device)
    torch.lt(a, b, out=out)
    outb = torch.empty(0, dtype=torch.bool, device=a.device)
    torch.eq(a, b, out=outb)
    y = a.clone()
    y.ge_(b)
    return out, outb, y


def _logical(a, b):
    return (torch.logical_and(a, b), torch.logical_or(a, b), torch.logical_xor(a, b), torch.logical_not(a))


def _logical_forms(a, b):
    y = a.clone()
    y.logical_and_(b)
    out = torch.empty(0, dtype=torch.float32, device=a.device)
    torch.logical_not(a, out=out)
    return y, out


def _bitwise(a, b):
    return a & b, a | b, a ^ b, ~a


def _shift_samples(dtype):
    yield Sample((make((5, 7), dtype, low=-20, high=20), make((5, 7), dtype, low=0, high=6)))
    yield Sample((make((4, 6), dtype, noncontig=True), make((6,), dtype, low=0, high=3)), tag="broadcast")
    yield Sample((make((3, 4), dtype), 2), tag="python scalar")
    vals = [3, 254, 5, 7] if dtype == torch.uint8 else [3, -2, 5, 7]
    yield Sample((torch.tensor(vals, dtype=dtype), torch.tensor([1, 70, 0, 63], dtype=dtype)), tag="out of range counts")


def _shifts(a, b):
    y = a.clone()
    y <<= b
    z = a.clone()
    z >>= b
    return (a << b, a >> b, torch.bitwise_left_shift(a, b), torch.bitwise_right_shift(a, b), y, z)


def _nan_to_num_samples(dtype):
    if dtype.is_floating_point:
        inf, nan = float("inf"), float("nan")
        yield Sample((torch.tensor([[nan, inf, -inf, 1.5], [0.0, -2.0, inf, nan]], dtype=dtype),))
        yield Sample((torch.tensor([[nan, inf, -inf, 1.5], [0.0, -2.0, inf, nan]], dtype=dtype).t(),), tag="t")
    else:
        yield Sample((make((3, 4), dtype),))


def _nan_to_num(x):
    return (torch.nan_to_num(x), torch.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0),
            torch.nan_to_num(x.clone(), posinf=9.0).nan_to_num_(), torch.isposinf(x), torch.isneginf(x))


def _isnan_samples(dtype):
    for s in unary_samples(dtype):
        yield s
    if dtype.is_floating_point:
        yield from _special_values(dtype)


def _predicates(x):
    return torch.isnan(x), torch.isposinf(x), torch.isneginf(x), torch.isinf(x), torch.isfinite(x)


def _signbit(x):
    return torch.signbit(x), torch.signbit(x, out=torch.empty(x.shape, dtype=torch.bool, device=x.device))


def _signbit_wrong_out(x):
    return torch.signbit(x, out=torch.empty(x.shape, device=x.device))


def _sign_forms(x):
    if x.dtype == torch.bool:
        return torch.sign(x), torch.sgn(x)
    return torch.sign(x), torch.sgn(x), torch.abs(x), -x


CASES = [
    # arithmetic
    OpCase("add", ["aten::add.out"], lambda a, b: a + b, binary_samples,
           dtypes=FLOATS + SOME_INTS + (torch.bool,) + HALFS, grad=True),
    OpCase("add_alpha", ["aten::add.out", "aten::sub.out"], lambda a, b, alpha: (torch.add(a, b, alpha=alpha),
                                                                                torch.sub(a, b, alpha=alpha)),
           _alpha_samples, dtypes=FLOAT + I64, grad=True),
    OpCase("sub", ["aten::sub.out"], lambda a, b: a - b, binary_samples, dtypes=FLOAT + I64 + HALFS, grad=True),
    OpCase("sub_bool", ["aten::sub.out", "aten::neg.out"], lambda a, b: (_sub_bool(a, b)), binary_samples,
           dtypes=(torch.bool,)),
    OpCase("rsub", ["aten::rsub.Tensor"], _rsub, binary_samples, dtypes=FLOAT + I64, grad=True),
    OpCase("mul", ["aten::mul.out"], lambda a, b: a * b, binary_samples,
           dtypes=FLOATS + SOME_INTS + (torch.bool,) + HALFS, grad=True),
    OpCase("div", ["aten::div.out"], lambda a, b: a / b, _div_samples, dtypes=FLOAT + HALFS, grad=True),
    OpCase("div_int", ["aten::div.out"], lambda a, b: a / b, _div_samples, dtypes=I64 + (torch.bool,)),
    OpCase("div_int_out", ["aten::div.out"], _int_out_float_result, binary_samples, dtypes=FLOAT),
    OpCase("div_modes", ["aten::div.out_mode", "aten::floor_divide", "aten::remainder.Tensor_out",
                         "aten::fmod.Tensor_out"], _div_modes, _div_samples, dtypes=FLOATS),
    OpCase("div_modes_int", ["aten::div.out_mode", "aten::floor_divide", "aten::remainder.Tensor_out",
                             "aten::fmod.Tensor_out"], _int_div_modes, _div_samples, dtypes=SIGNED + (torch.uint8,)),
    OpCase("div_modes_inplace", ["aten::floor_divide_.Tensor", "aten::remainder.Tensor_out"], _inplace_div,
           _div_samples, dtypes=FLOAT + I64),
    OpCase("remainder_scalar_tensor", ["aten::remainder.Scalar_Tensor"], _remainder_scalar_tensor,
           lambda dt: _div_samples(dt, zero=False),
           dtypes=FLOAT + I64),
    OpCase("floor_divide_out", ["aten::floor_divide.out"],
           lambda a, b: torch.floor_divide(a, b, out=torch.empty(1, dtype=a.dtype, device=a.device)), _div_samples,
           dtypes=FLOAT + I64),
    OpCase("pow", ["aten::pow.Tensor_Tensor_out"], torch.pow, _pow_samples, dtypes=FLOAT + I64, grad=True),
    OpCase("pow_scalar", ["aten::pow.Tensor_Scalar_out"], torch.pow, _pow_scalar_samples,
           dtypes=FLOATS + I64, grad=True),
    OpCase("pow_scalar_base", ["aten::pow.Scalar_out"], _pow_base, _pow_scalar_base_samples, dtypes=FLOAT + I64,
           grad=True),
    OpCase("binary_forms", ["aten::add.out", "aten::pow.Tensor_Tensor_out"], _binary_forms, _binary_forms_samples,
           dtypes=FLOAT),
    OpCase("neg_bool", ["aten::neg.out"], _neg_bool, unary_samples, dtypes=(torch.bool,)),
    OpCase("sign_abs_neg", ["aten::sign.out", "aten::sgn.out", "aten::abs.out", "aten::neg.out"], _sign_forms,
           unary_samples, dtypes=FLOAT + SOME_INTS + (torch.bool,), grad=True),
    # float math
    *[_unary_case(n, f, d) for n, (f, d) in UNARY_FLOAT.items()],
    OpCase("unary_float64", [f"aten::{n}.out" for n in ("exp", "sin", "erfinv", "sigmoid", "log1p")],
           lambda x: (torch.exp(x), torch.sin(x), torch.erfinv(x / 4), torch.sigmoid(x), torch.log1p(x.abs())),
           unary_samples, dtypes=(torch.float64,) + HALFS, grad=True),
    OpCase("unary_float_specials", ["aten::exp.out", "aten::isnan"], _unary_float_specials, _special_values,
           dtypes=FLOAT),
    OpCase("unary_float_forms", [f"aten::{n}.out" for n in UNARY_FLOAT], _unary_float_forms,
           _unary_float_forms_samples, dtypes=FLOAT + I64, atol=1e-5, rtol=1.3e-5),
    OpCase("int_promotion", ["aten::exp.out", "aten::div.out", "aten::atan2.out", "aten::logit"], _int_promotion,
           unary_samples, dtypes=(torch.int32, torch.bool), atol=1e-5, rtol=1.3e-5),
    OpCase("digamma", ["aten::digamma.out"], torch.digamma,
           lambda dt: unary_samples(dt, low=-6.0, high=8.0), dtypes=FLOAT + HALFS),
    # digamma's gradient is polygamma(1, x).
    OpCase("digamma_grad", ["aten::digamma.out", "aten::polygamma.out"], torch.digamma,
           lambda dt: unary_samples(dt, low=0.2, high=8.0), dtypes=FLOATS, grad=True, atol=1e-4, rtol=1e-4),
    OpCase("special_entr", ["aten::special_entr.out"], torch.special.entr, lambda dt: unary_samples(dt, low=0.0),
           dtypes=FLOAT + HALFS, grad=True),
    OpCase("gamma_family_specials", ["aten::lgamma.out", "aten::digamma.out", "aten::sinc.out",
                                     "aten::special_entr.out"], _gamma_family, _gamma_specials,
           dtypes=(torch.float32, torch.float64), atol=1e-5, rtol=1e-5),
    OpCase("xlogy", ["aten::xlogy.OutTensor"], torch.xlogy, lambda dt: binary_samples(dt, rhs_low=0.05, rhs_high=5.0),
           dtypes=FLOAT, grad=True),
    OpCase("xlog1py", ["aten::special_xlog1py.out"], torch.special.xlog1py,
           lambda dt: binary_samples(dt, rhs_low=-0.9, rhs_high=5.0), dtypes=FLOAT, grad=True),
    OpCase("xlogy_int", ["aten::xlogy.OutTensor", "aten::special_xlog1py.out"],
           lambda a, b: (torch.xlogy(a, b), torch.special.xlog1py(a, b)),
           lambda dt: binary_samples(dt, low=0, high=4, rhs_low=1, rhs_high=6), dtypes=I64 + (torch.bool,)),
    OpCase("xlogy_specials", ["aten::xlogy.OutTensor", "aten::special_xlog1py.out"],
           lambda a, b: (torch.xlogy(a, b), torch.special.xlog1py(a, b)),
           lambda dt: [Sample((torch.tensor([0.0, 0.0, 0.0, 1.0, 2.0, -1.0, float("nan"), 0.0], dtype=dt),
                               torch.tensor([0.0, float("inf"), float("nan"), 0.0, -1.0, 3.0, 1.0, -2.0], dtype=dt)),
                              tag="zeros, NaN, infinities")], dtypes=FLOATS),
    OpCase("logaddexp", ["aten::logaddexp.out", "aten::logaddexp2.out"],
           _binary_tensor(lambda a, b: (torch.logaddexp(a, b), torch.logaddexp2(a, b))), binary_samples,
           dtypes=FLOATS + HALFS, grad=True),
    OpCase("logaddexp_specials", ["aten::logaddexp.out", "aten::logaddexp2.out"],
           lambda a, b: (torch.logaddexp(a, b), torch.logaddexp2(a, b)),
           lambda dt: [Sample((torch.tensor([float("inf"), float("-inf"), float("inf"), float("nan"), 1e30, -1e30],
                                            dtype=dt),
                               torch.tensor([float("inf"), float("-inf"), float("-inf"), 1.0, 1e30, 5.0], dtype=dt)),
                              tag="infinities, NaN, large")], dtypes=FLOATS),
    OpCase("heaviside", ["aten::heaviside.out"], _binary_tensor(torch.heaviside),
           lambda dt: binary_samples(dt, low=-2, high=3), dtypes=FLOAT + I64 + (torch.bool,)),
    OpCase("atan2", ["aten::atan2.out"], torch.atan2, binary_samples, dtypes=FLOAT, grad=True),
    OpCase("copysign", ["aten::copysign.out"], torch.copysign, binary_samples, dtypes=FLOAT + I64, grad=True),
    OpCase("hypot", ["aten::hypot.out"], lambda a, b: torch.hypot(a, b if isinstance(b, torch.Tensor)
                                                                  else torch.full_like(a, b)),
           binary_samples, dtypes=FLOAT + I64, grad=True),
    OpCase("logit", ["aten::logit"], lambda x, **kw: torch.logit(x, **kw), _logit_samples, dtypes=FLOAT, grad=True),
    OpCase("logit_forms", ["aten::logit_", "aten::logit.out"], _logit_forms, _logit_samples, dtypes=FLOAT),
    # rounding
    OpCase("rounding", ["aten::floor.out", "aten::ceil.out", "aten::trunc.out", "aten::round.out"], _rounding,
           _round_samples, dtypes=FLOATS + I64 + (torch.bool,), grad=True),
    OpCase("round_decimals", ["aten::round.decimals_out"], _round_decimals, _round_samples, dtypes=FLOAT + I64,
           grad=True),
    OpCase("frac", ["aten::frac.out"], torch.frac, _round_samples, dtypes=FLOAT + I64, grad=True),
    # min / max / clamp
    OpCase("minmax", ["aten::minimum.out", "aten::maximum.out", "aten::fmin.out", "aten::fmax.out"], _minmax,
           _nan_binary_samples, dtypes=FLOAT + I64 + (torch.bool,), grad=True),
    OpCase("clamp", ["aten::clamp.out", "aten::clamp_min.out", "aten::clamp_max.out"], _clamp, _clamp_samples,
           dtypes=FLOATS + I64, grad=True),
    OpCase("clamp_promote", ["aten::clamp.out"], _clamp_promote, _clamp_samples, dtypes=I64),
    OpCase("clamp_tensor", ["aten::clamp.Tensor_out", "aten::clamp_min.Tensor_out", "aten::clamp_max.Tensor_out"],
           _clamp_tensor, _clamp_tensor_samples, dtypes=FLOAT + I64, grad=True),
    OpCase("clamp_inplace", ["aten::clamp.out"], _clamp_inplace, _clamp_samples, dtypes=FLOAT + I64),
    # lerp / addcmul / addcdiv
    OpCase("lerp", ["aten::lerp.Scalar_out", "aten::lerp.Tensor_out"], _lerp, _ternary_samples, dtypes=FLOAT + HALFS,
           grad=True),
    OpCase("addcmul_addcdiv", ["aten::addcmul.out", "aten::addcdiv.out"], _addc, _ternary_samples, dtypes=FLOATS,
           grad=True),
    OpCase("addcmul_int", ["aten::addcmul.out", "aten::addcdiv.out"],
           lambda a, b, c: (_addcmul_int(a, b, c), torch.addcdiv(a, b, c)), _ternary_samples, dtypes=I64),
    OpCase("ternary_forms", ["aten::addcmul.out", "aten::lerp.Tensor_out"], _ternary_forms, _ternary_samples,
           dtypes=FLOAT),
    # selection
    OpCase("where", ["aten::where.self"], _where, _where_samples, dtypes=FLOAT + I64 + (torch.bool,), grad=True),
    OpCase("where_out", ["aten::where.self_out"], _where_out, _where_samples, dtypes=FLOAT),
    OpCase("masked_fill", ["aten::masked_fill_.Scalar", "aten::masked_fill_.Tensor"], _masked_fill,
           _masked_fill_samples, dtypes=FLOAT + I64 + (torch.bool,), grad=True),
    # comparisons, logical, bitwise
    OpCase("compare", [f"aten::{o}.{v}" for o in ("eq", "ne", "lt", "le", "gt", "ge")
                       for v in ("Tensor_out", "Scalar_out")],
           lambda a, b: _cmp(a, b) if isinstance(b, torch.Tensor) else _cmp(a, b) + (
               torch.eq(a, b), torch.ne(a, b), torch.lt(a, b), torch.le(a, b), torch.gt(a, b), torch.ge(a, b)),
           _cmp_samples, dtypes=FLOAT + I64 + (torch.uint8, torch.bool)),
    OpCase("compare_forms", ["aten::lt.Tensor_out", "aten::eq.Tensor_out"], _cmp_forms, binary_samples,
           dtypes=FLOAT),
    OpCase("logical", ["aten::logical_and.out", "aten::logical_or.out", "aten::logical_xor.out",
                       "aten::logical_not.out"], _logical, binary_samples, dtypes=FLOAT + I64 + (torch.bool,)),
    OpCase("logical_forms", ["aten::logical_and.out", "aten::logical_not.out"], _logical_forms, binary_samples,
           dtypes=(torch.bool,)),
    OpCase("bitwise", ["aten::bitwise_and.Tensor_out", "aten::bitwise_or.Tensor_out", "aten::bitwise_xor.Tensor_out",
                       "aten::bitwise_not.out"], _bitwise, binary_samples, dtypes=SOME_INTS + (torch.bool,)),
    OpCase("bitwise_float", ["aten::bitwise_and.Tensor_out"], _bitwise, binary_samples, dtypes=FLOAT),
    OpCase("shifts", ["aten::bitwise_left_shift.Tensor_out", "aten::bitwise_right_shift.Tensor_out",
                      "aten::__lshift__.Tensor", "aten::__lshift__.Scalar", "aten::__rshift__.Tensor",
                      "aten::__rshift__.Scalar", "aten::__ilshift__.Tensor", "aten::__ilshift__.Scalar",
                      "aten::__irshift__.Tensor", "aten::__irshift__.Scalar"], _shifts, _shift_samples,
           dtypes=(torch.int64, torch.int32, torch.uint8, torch.int8)),
    OpCase("nan_to_num", ["aten::nan_to_num.out", "aten::isposinf.out", "aten::isneginf.out"], _nan_to_num,
           _nan_to_num_samples, dtypes=FLOAT + I64 + HALFS),
    OpCase("predicates", ["aten::isnan", "aten::isposinf.out", "aten::isneginf.out"], _predicates, _isnan_samples,
           dtypes=FLOAT + I64),
    # -0.0 and negative NaNs have the sign bit; unsigned and bool values never.
    OpCase("signbit", ["aten::signbit.out"], _signbit, _isnan_samples,
           dtypes=FLOATS + HALFS + (torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool)),
    OpCase("signbit_wrong_out", [], _signbit_wrong_out, lambda dt: [Sample((make((3,), dt),))], dtypes=FLOAT),
]


# ---- linalg.cross ----------------------------------------------------------------------------
def _cross_samples(dtype):
    yield Sample((make((3,), dtype), make((3,), dtype, seed=1)), tag="vectors")
    yield Sample((make((5, 3), dtype), make((5, 3), dtype, seed=1)), tag="rows")
    yield Sample((make((2, 3, 4), dtype), make((2, 3, 4), dtype, seed=1)), {"dim": 1}, tag="dim 1")
    yield Sample((make((3, 2, 5), dtype), make((3, 2, 5), dtype, seed=1)), {"dim": -3}, tag="dim -3")
    yield Sample((make((2, 1, 3), dtype), make((1, 4, 3), dtype, seed=1)), tag="broadcast")
    yield Sample((make((4, 6), dtype, noncontig=True)[:, :3], make((3, 4), dtype, seed=1).t()), tag="noncontig")
    yield Sample((make((1, 3), dtype).expand(5, 3), make((5, 3), dtype, seed=1)), tag="expanded")
    yield Sample((make((0, 3), dtype), make((0, 3), dtype, seed=1)), tag="empty")
    yield Sample((make((65, 3, 33), dtype), make((65, 3, 33), dtype, seed=1)), {"dim": 1}, tag="large")


def _cross_error_samples(dtype):
    yield Sample((make((4,), dtype), make((4,), dtype)), tag="length 4 raises")
    yield Sample((make((2, 3), dtype), make((3,), dtype)), tag="rank mismatch raises")
    yield Sample((make((3, 2), dtype), make((3, 2), dtype)), {"dim": 2}, tag="dim out of range raises")
    yield Sample((make((3,), dtype), make((3,), torch.float64)), tag="dtype mismatch raises")
    yield Sample((make((3,), torch.bool), make((3,), torch.bool)), tag="bool raises")
    yield Sample((make((3, 1), dtype), make((1, 2), dtype)), {"dim": 0}, tag="broadcast dim raises")


def _cross_out(a, b, dim=-1):
    out = torch.empty(2, dtype=a.dtype, device=a.device)
    torch.linalg.cross(a, b, dim=dim, out=out)
    return out


def _cross_forms(a, b):
    """torch.cross with a dim and Tensor.cross."""
    return torch.cross(a, b, dim=-1), a.cross(b, dim=0 if a.dim() == 1 else -1)


def _cross_aliased_out(a, b):
    """An out= sharing memory with an input raises, as on the CPU."""
    c = a.clone()
    return torch.linalg.cross(c, b, out=c)


CASES += [
    OpCase("linalg_cross", ["aten::linalg_cross.out"], torch.linalg.cross, _cross_samples, dtypes=FLOATS + HALFS,
           grad=True),
    OpCase("linalg_cross_int", ["aten::linalg_cross.out"], torch.linalg.cross, _cross_samples,
           dtypes=INTS),
    OpCase("linalg_cross_out", ["aten::linalg_cross.out"], _cross_out, _cross_samples, dtypes=FLOATS + (torch.int64,)),
    OpCase("linalg_cross_forms", ["aten::linalg_cross.out"], _cross_forms,
           lambda dt: (s for s in _cross_samples(dt) if s.tag in ("vectors", "rows", "empty")), dtypes=FLOAT),
    OpCase("linalg_cross_errors", ["aten::linalg_cross.out"], torch.linalg.cross, _cross_error_samples, dtypes=FLOAT),
    OpCase("linalg_cross_aliased_out", ["aten::linalg_cross.out"], _cross_aliased_out,
           lambda dt: (s for s in _cross_samples(dt) if s.tag in ("vectors", "rows")), dtypes=FLOAT),
]


# ---- gcd, nextafter, frexp, polygamma, modified Bessel functions -----------------------------
def _gcd_samples(dtype):
    yield from binary_samples(dtype, low=-30 if dtype != torch.uint8 else 0, high=60, scalars=(6,))
    info = torch.iinfo(dtype)
    vals = [0, 0, 1, info.max, info.max, 12, 7]
    other = [0, 5, 0, info.max, 6, 18, 7]
    if info.min < 0:
        vals += [-12, -7, info.min + 1]
        other += [18, -21, 3]
    yield Sample((torch.tensor(vals, dtype=dtype), torch.tensor(other, dtype=dtype)), tag="special values")


def _gcd_forms(a, b):
    c, o = a.clone(), torch.empty(1, dtype=a.dtype, device=a.device)
    c.gcd_(b)
    torch.gcd(a, b, out=o)
    return torch.gcd(a, b), c, o


def _lcm_samples(dtype):
    # Products that fit the dtype (the CPU's overflow is C++'s undefined behaviour).
    yield from binary_samples(dtype, low=-30 if dtype != torch.uint8 else 0, high=60, scalars=(6,))
    vals, other = [0, 0, 1, 12, 7, 10, 9], [0, 5, 0, 18, 7, 4, 1]
    if dtype != torch.uint8:
        vals += [-12, -7, -4]
        other += [18, -21, -6]
    yield Sample((torch.tensor(vals, dtype=dtype), torch.tensor(other, dtype=dtype)), tag="special values")


def _nextafter_samples(dtype):
    yield from binary_samples(dtype, scalars=())
    tiny = torch.finfo(dtype).tiny
    big = torch.finfo(dtype).max
    a = [0.0, 0.0, -0.0, 1.0, 1.0, -1.0, -1.0, 2.0, 2.0, tiny, -tiny, big, -big, big, 1.0, float("nan"), 1.0,
         float("inf"), float("inf"), 0.0, 3.5]
    b = [1.0, -1.0, 0.0, 2.0, 0.0, -2.0, 0.0, 3.0, 1.0, 0.0, 0.0, float("inf"), float("-inf"), 0.0, float("nan"), 1.0,
         1.0, 0.0, float("inf"), -0.0, 3.5]
    yield Sample((torch.tensor(a, dtype=dtype), torch.tensor(b, dtype=dtype)), tag="special values")


def _nextafter_forms(a, b):
    c, o = a.clone(), torch.empty(0, dtype=a.dtype, device=a.device)
    c.nextafter_(b)
    torch.nextafter(a, b, out=o)
    return torch.nextafter(a, b), c, o


def _frexp_samples(dtype):
    yield from unary_samples(dtype, low=-100.0, high=100.0)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, 0.75, 3.0, 1e-3, -1e4, torch.finfo(dtype).tiny, torch.finfo(dtype).max,
            float("nan"), float("inf"), float("-inf")]
    yield Sample((torch.tensor(vals, dtype=dtype),), tag="special values")


def _frexp(x):
    m, e = torch.frexp(x)
    m2, e2 = torch.empty(2, dtype=x.dtype, device=x.device), torch.empty(0, dtype=torch.int32, device=x.device)
    torch.frexp(x, out=(m2, e2))
    return m, e, m2, e2


def _frexp_error_samples(dtype):
    yield Sample((make((3,), torch.int64),), tag="int64 raises")
    yield Sample((make((3,), torch.bool),), tag="bool raises")


def _frexp_bad_out(x):
    m, e = torch.empty(3, dtype=torch.float64, device=x.device), torch.empty(3, dtype=torch.int64, device=x.device)
    return torch.frexp(x, out=(m, e))


def _polygamma(n):
    return lambda x: torch.polygamma(n, x)


def _polygamma_opmath(n):
    """16-bit inputs against the float computation rounded once (the CPU's float16 zeta rounds
    its intermediate result to the 16-bit type)."""
    def fn(x):
        if x.device.type == "cpu" and x.dtype in (torch.float16, torch.bfloat16):
            return torch.polygamma(n, x.float()).to(x.dtype)
        return torch.polygamma(n, x)
    return fn


def _polygamma_specials(dtype):
    yield Sample((torch.tensor([0.0, -0.0, 1.0, 2.0, -1.0, -2.0, -0.5, -1.5, -2.25, 0.5, 0.25, 1e-3, 9.0, 10.0, 30.5,
                                1e4, float("inf"), float("-inf"), float("nan")], dtype=dtype),), tag="special values")
    yield Sample((make((300,), dtype, low=-8, high=20),), tag="wide range")


def _polygamma_forms(x):
    c, o = x.clone(), torch.empty(1, dtype=x.dtype, device=x.device)
    c.polygamma_(2)
    torch.polygamma(3, x, out=o)
    return c, o, torch.special.polygamma(1, x), x.polygamma(4)


def _bessels(x):
    return torch.i0(x), torch.special.i0e(x), torch.special.i1(x), torch.special.i1e(x)


def _bessel_forms(x):
    outs = []
    for name in ("i0", "special_i0e", "special_i1", "special_i1e"):
        o = torch.empty(1, dtype=x.dtype, device=x.device)
        getattr(torch.ops.aten, name).out(x, out=o)
        outs.append(o)
    y = x.clone()
    y.i0_()
    return outs + [y]


def _bessel_specials(dtype):
    yield Sample((torch.tensor([0.0, -0.0, 1.0, -1.0, 7.99, 8.0, 8.01, -8.0, 20.0, -30.0, 80.0, 100.0, 700.0, 1e-20,
                                float("inf"), float("-inf"), float("nan")], dtype=dtype),), tag="special values")
    yield Sample((make((300,), dtype, low=-40, high=40),), tag="wide range")


def _bessel_opmath(x):
    if x.device.type == "cpu" and x.dtype in (torch.float16, torch.bfloat16):
        return tuple(t.to(x.dtype) for t in _bessels(x.float()))
    return _bessels(x)


BESSELS = ["aten::i0.out", "aten::special_i0e.out", "aten::special_i1.out", "aten::special_i1e.out"]

CASES += [
    OpCase("gcd", ["aten::gcd.out"], torch.gcd, _gcd_samples, dtypes=INTS),
    OpCase("gcd_forms", ["aten::gcd.out"], _gcd_forms, _gcd_samples, dtypes=(torch.int64,)),
    OpCase("gcd_float_raises", ["aten::gcd.out"], torch.gcd, lambda dt: binary_samples(dt, scalars=()),
           dtypes=(torch.float32, torch.bool)),
    OpCase("lcm", ["aten::lcm.out"], torch.lcm, _lcm_samples, dtypes=INTS),
    OpCase("lcm_float_raises", ["aten::lcm.out"], torch.lcm, lambda dt: binary_samples(dt, scalars=()),
           dtypes=(torch.float32, torch.bool)),
    OpCase("nextafter", ["aten::nextafter.out"], torch.nextafter, _nextafter_samples, dtypes=FLOATS + HALFS,
           atol=0, rtol=0),
    OpCase("nextafter_forms", ["aten::nextafter.out"], _nextafter_forms, _nextafter_samples, dtypes=FLOAT,
           atol=0, rtol=0),
    OpCase("nextafter_int_raises", ["aten::nextafter.out"], torch.nextafter,
           lambda dt: binary_samples(dt, scalars=()), dtypes=(torch.int64,)),
    OpCase("frexp", ["aten::frexp.Tensor_out"], _frexp, _frexp_samples, dtypes=FLOATS + HALFS, atol=0, rtol=0),
    OpCase("frexp_errors", ["aten::frexp.Tensor_out"], torch.frexp, _frexp_error_samples, dtypes=FLOAT),
    OpCase("frexp_bad_out", ["aten::frexp.Tensor_out"], _frexp_bad_out, lambda dt: [Sample((make((3,), dt),))],
           dtypes=FLOAT),
    *[OpCase(f"polygamma_{n}", ["aten::polygamma.out"], _polygamma(n),
             lambda dt: unary_samples(dt, low=-6.0, high=8.0), dtypes=FLOATS, grad=True, atol=1e-4, rtol=1e-4)
      for n in (0, 1, 2, 3, 5)],
    *[OpCase(f"polygamma_{n}_half", ["aten::polygamma.out"], _polygamma_opmath(n),
             lambda dt: unary_samples(dt, low=0.2, high=8.0), dtypes=HALFS) for n in (1, 2, 3)],
    OpCase("polygamma_int", ["aten::polygamma.out"], _polygamma(2), lambda dt: unary_samples(dt, low=1, high=9),
           dtypes=(torch.int64, torch.bool), atol=1e-5, rtol=1e-5),
    *[OpCase(f"polygamma_{n}_specials", ["aten::polygamma.out"], _polygamma(n), _polygamma_specials,
             dtypes=FLOATS, atol=1e-4, rtol=1e-4) for n in (1, 2, 4)],
    OpCase("polygamma_forms", ["aten::polygamma.out"], _polygamma_forms,
           lambda dt: unary_samples(dt, low=0.3, high=6.0), dtypes=FLOAT, atol=1e-4, rtol=1e-4),
    OpCase("polygamma_negative_n", ["aten::polygamma.out"], _polygamma(-1), lambda dt: [Sample((make((3,), dt),))],
           dtypes=FLOAT),
    OpCase("bessel_i", BESSELS, _bessels, lambda dt: unary_samples(dt, low=-12.0, high=12.0), dtypes=FLOATS,
           grad=True, atol=1e-5, rtol=3e-5),
    OpCase("bessel_i_half", BESSELS, _bessel_opmath, lambda dt: unary_samples(dt, low=-6.0, high=6.0),
           dtypes=HALFS),
    OpCase("bessel_i_specials", BESSELS, _bessels, _bessel_specials, dtypes=FLOATS, atol=1e-5, rtol=3e-5),
    OpCase("bessel_i_int", BESSELS, _bessels, unary_samples, dtypes=(torch.int64, torch.uint8, torch.bool),
           atol=1e-5, rtol=3e-5),
    OpCase("bessel_i_forms", BESSELS, _bessel_forms, lambda dt: unary_samples(dt, low=-5.0, high=5.0),
           dtypes=FLOATS, atol=1e-5, rtol=3e-5),
]
