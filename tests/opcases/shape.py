"""Cases for the shape ops (csrc/ops/shape.cpp): cat (and the composite stack / repeat),
flip, roll, tril/triu, channel_shuffle, and the factories arange, linspace, eye."""
import torch

from ..cases import ALL, FLOAT, FLOATS, HALFS, INTS, SHAPES, OpCase, Sample, make

CPU = torch.device("cpu")  # the harness swaps it for the device under test


def _cat_samples(dtype):
    yield Sample(([make((2, 3), dtype), make((4, 3), dtype, seed=1)], 0), tag="dim0")
    yield Sample(([make((2, 3), dtype), make((2, 5), dtype, seed=1), make((2, 0), dtype)], 1), tag="dim1 empty")
    yield Sample(([make((2, 3, 4), dtype, noncontig=True), make((2, 3, 4), dtype, seed=1).transpose(0, 1)
                   .contiguous().transpose(0, 1)], -1), tag="noncontig")
    yield Sample(([make((i % 3 + 1, 5), dtype, seed=i) for i in range(19)], 0), tag="19 inputs (chunked)")
    yield Sample(([make((0,), dtype), make((3, 2), dtype), make((0,), dtype)], 1), tag="legacy empty 1-D")
    yield Sample(([make((3, 2), dtype), make((3, 2), torch.int32, seed=2)], 0), tag="promotion")
    yield Sample(([make((65, 129), dtype), make((65, 7), dtype, seed=1)], 1), tag="large")
    yield Sample(([make((0,), dtype)], 0), tag="only empty")
    # 16-byte words (float32: spans of whole 4-element groups), as the qkv-gradient cat
    yield Sample(([make((2, 3, 8), dtype), make((2, 3, 4), dtype, seed=1), make((2, 3, 16), dtype, seed=2)], -1),
                 tag="word spans last dim")
    yield Sample(([make((3, 4, 2), dtype), make((5, 4, 2), dtype, seed=1)], 0), tag="word spans dim0")
    yield Sample(([make((4, 9), dtype)[:, 1:], make((4, 8), dtype, seed=1)], 1), tag="word spans misaligned view")


def _cat(ts, d):
    out = torch.empty(1, dtype=torch.result_type(ts[0], ts[-1]) if len(ts) > 1 else ts[0].dtype, device=ts[0].device)
    return torch.cat(ts, d), torch.cat(ts, d, out=out)


def _stack_samples(dtype):
    yield Sample(([make((2, 3), dtype), make((2, 3), dtype, seed=1)], 0))
    yield Sample(([make((2, 3), dtype, seed=i) for i in range(10)], 2), tag="10 inputs last dim")
    yield Sample(([make((), dtype), make((), dtype, seed=1)], 0), tag="0-dim")


def _repeat_samples(dtype):
    yield Sample((make((2, 3), dtype), (2, 2)))
    yield Sample((make((3,), dtype), (2, 1, 3)), tag="more dims")
    yield Sample((make((2, 3), dtype, noncontig=True), (1, 0)), tag="noncontig zero")


def _flip_samples(dtype):
    yield Sample((make((5, 7), dtype), [0]))
    yield Sample((make((2, 3, 4), dtype, noncontig=True), [0, -1]), tag="noncontig")
    yield Sample((make((65, 129), dtype), [1]), tag="large")
    yield Sample((make((), dtype), []), tag="0-dim")
    yield Sample((make((3, 0), dtype), [0, 1]), tag="empty")


def _roll_samples(dtype):
    yield Sample((make((5, 7), dtype), 2, 1))
    yield Sample((make((5, 7), dtype), (-3, 9), (0, 1)), tag="two dims negative")
    yield Sample((make((5, 7), dtype), 4), tag="flattened")
    yield Sample((make((2, 3, 4), dtype, noncontig=True), (1, 1), (2, 2)), tag="noncontig repeated dim")
    yield Sample((make((3, 0), dtype), 1, 0), tag="empty")


def _roll(x, s, d=None):
    return torch.roll(x, s) if d is None else torch.roll(x, s, d)


def _tri_samples(dtype):
    yield Sample((make((5, 7), dtype), 0))
    yield Sample((make((5, 7), dtype), -2), tag="below")
    yield Sample((make((5, 7), dtype), 3), tag="above")
    yield Sample((make((2, 3, 4, 6), dtype, noncontig=True), 1), tag="batched noncontig")
    yield Sample((make((65, 129), dtype), 5), tag="large")
    yield Sample((make((0, 3), dtype), 0), tag="empty")


def _tri(x, k):
    out = torch.empty(2, dtype=x.dtype, device=x.device)
    y = x.clone()
    z = x.clone()
    return (torch.tril(x, k), torch.triu(x, k), torch.tril(x, k, out=out), y.tril_(k), z.triu_(k))


def _arange_samples(dtype):
    # (0, 11, 3), (0, 10, 4), (10, -5, -3): steps that do not divide the range (int64 counted one too many)
    for args in [(10,), (3, 10), (3, 10, 2), (10, 3, -3), (0,), (5, 5), (0, 11, 3), (0, 10, 4), (10, -5, -3)]:
        yield Sample(args, {"dtype": dtype, "device": CPU}, tag=str(args))
    if dtype.is_floating_point:
        yield Sample((-1.5, 2.25, 0.25), {"dtype": dtype, "device": CPU}, tag="fractional")
        yield Sample((0, 1, 0.001), {"dtype": dtype, "device": CPU}, tag="many")


def _arange(*a, dtype, device):
    out = torch.empty(3, 2, dtype=dtype, device=device)
    return torch.arange(*a, dtype=dtype, device=device), torch.arange(*a, out=out)


def _linspace_samples(dtype):
    for args in [(0, 10, 5), (-3, 7, 11), (5, -5, 4), (2, 9, 1), (0, 1, 0), (0, 100, 1001)]:
        yield Sample(args, {"dtype": dtype, "device": CPU}, tag=str(args))


def _linspace(a, b, n, dtype, device):
    out = torch.empty(1, dtype=dtype, device=device)
    return torch.linspace(a, b, n, dtype=dtype, device=device), torch.linspace(a, b, n, out=out)


def _linspace_reduced_samples(dtype):
    # ATen rounds a float16/bfloat16 linspace at each step: (0, 1, 7)'s fifth element is a
    # float16 rounding tie, (0.1, 0.2, 5000) a step near float16's resolution, and 150001
    # points overflow the float16 index (0 * inf: NaN in the middle, as on the CPU).
    for args in [(0, 1, 7), (-3, 5.5, 101), (0.1, 0.2, 5000), (10, -10, 2049), (-2, 3, 150001)]:
        yield Sample(args, {"dtype": dtype, "device": CPU}, tag=str(args))


def _eye_samples(dtype):
    for args in [(3,), (2, 5), (6, 2), (0,), (1, 0), (70, 65)]:
        yield Sample(args, {"dtype": dtype, "device": CPU}, tag=str(args))


def _eye(*a, dtype, device):
    out = torch.empty(0, dtype=dtype, device=device)
    return torch.eye(*a, dtype=dtype, device=device), torch.eye(*a, out=out)


DATA = ALL + HALFS

CASES = [
    OpCase("cat", ["aten::cat.out"], _cat, _cat_samples, dtypes=DATA, grad=True),
    OpCase("stack", [], torch.stack, _stack_samples, dtypes=FLOAT + INTS[:1] + (torch.bool,), grad=True),
    OpCase("repeat", [], lambda x, r: x.repeat(r), _repeat_samples, dtypes=FLOAT + INTS[:1], grad=True),
    OpCase("flip", ["aten::flip"], torch.flip, _flip_samples, dtypes=DATA, grad=True),
    OpCase("roll", ["aten::roll"], _roll, _roll_samples, dtypes=DATA, grad=True),
    OpCase("tril_triu", ["aten::tril.out", "aten::triu.out"], _tri, _tri_samples, dtypes=DATA),
    OpCase("tril_grad", [], lambda x, k: torch.tril(x, k), _tri_samples, dtypes=FLOAT,
           grad=True),
    OpCase("arange", ["aten::arange.start_out"], _arange, _arange_samples,
           dtypes=FLOATS + INTS + HALFS),
    OpCase("linspace", ["aten::linspace.out"], _linspace, _linspace_samples, dtypes=FLOATS + INTS + HALFS),
    OpCase("linspace_reduced_exact", ["aten::linspace.out"], _linspace, _linspace_reduced_samples, dtypes=HALFS,
           atol=0, rtol=0),
    OpCase("eye", ["aten::eye.out", "aten::eye.m_out"], _eye, _eye_samples, dtypes=DATA),
]


# ---- tril_indices / triu_indices ------------------------------------------------------------
def _tri_indices(fn_name, row, col, offset, dtype, device):
    fn = getattr(torch, fn_name)
    return fn(row, col, offset, dtype=dtype, device=device)


def _tri_indices_samples(dtype):
    cpu = torch.device("cpu")
    for name in ("tril_indices", "triu_indices"):
        for row, col in ((3, 4), (4, 3), (5, 5), (1, 1), (1, 7), (7, 1), (0, 3), (3, 0), (0, 0), (37, 61)):
            for offset in (0, 1, -1, 2, -3, col, -row, col + 5, -row - 5, 100):
                yield Sample((name, row, col, offset, dtype, cpu), tag=f"{name} {row}x{col} offset {offset}")
        yield Sample((name, 1000, 999, -7, dtype, cpu), tag=f"{name} large")
        yield Sample((name, -1, 3, 0, dtype, cpu), tag=f"{name} negative row raises")
        yield Sample((name, 3, -2, 0, dtype, cpu), tag=f"{name} negative col raises")


def _tri_indices_bad_dtype(dtype):
    cpu = torch.device("cpu")
    for name in ("tril_indices", "triu_indices"):
        for dt in (torch.float32, torch.int16):
            yield Sample((name, 3, 4, 0, dt, cpu), tag=f"{name} {dt} raises")


def _tri_indices_default(row, col, device):
    return (torch.tril_indices(row, col, device=device), torch.triu_indices(row, col, device=device),
            torch.tril_indices(row, col, -1, device=device), torch.triu_indices(row, col, 1, device=device))


def _tri_indices_out(row, col, offset, device):
    a = torch.empty(5, dtype=torch.int32, device=device)
    b = torch.empty(0, dtype=torch.int64, device=device)
    torch.ops.aten.tril_indices.out(row, col, offset, out=a)
    torch.ops.aten.triu_indices.out(row, col, offset, out=b)
    return a, b


CASES += [
    OpCase("tri_indices", ["aten::tril_indices", "aten::triu_indices"], _tri_indices, _tri_indices_samples,
           dtypes=(torch.int64, torch.int32)),
    OpCase("tri_indices_bad_dtype", ["aten::tril_indices", "aten::triu_indices"], _tri_indices,
           _tri_indices_bad_dtype, dtypes=(torch.int64,)),
    OpCase("tri_indices_default", ["aten::tril_indices", "aten::triu_indices"], _tri_indices_default,
           lambda dt: [Sample((4, 6, torch.device("cpu"))), Sample((6, 2, torch.device("cpu")))],
           dtypes=(torch.int64,)),
    OpCase("tri_indices_out", ["aten::tril_indices", "aten::triu_indices"], _tri_indices_out,
           lambda dt: [Sample((4, 6, 1, torch.device("cpu"))), Sample((6, 2, -2, torch.device("cpu")))],
           dtypes=(torch.int64,)),
]


def _channel_shuffle_samples(dtype):
    yield Sample((make((2, 6, 3, 4), dtype), 3), tag="4-D")
    yield Sample((make((2, 6, 5), dtype), 2), tag="3-D")
    yield Sample((make((1, 12, 2, 3, 2), dtype), 4), tag="5-D")
    yield Sample((make((2, 6, 3, 4), dtype).contiguous(memory_format=torch.channels_last), 2), tag="channels_last")
    yield Sample((make((2, 6, 3, 8), dtype, noncontig=True), 3), tag="noncontig")
    yield Sample((make((3, 4, 2), dtype), 1), tag="one group")
    yield Sample((make((3, 4, 2), dtype), 4), tag="a group per channel")
    yield Sample((make((0, 6, 2), dtype), 3), tag="empty batch")
    yield Sample((make((2, 6, 3), dtype), 4), tag="channels not divisible raises")
    yield Sample((make((2, 6, 3), dtype), 0), tag="zero groups raises")
    yield Sample((make((2, 6), dtype), 2), tag="2-D raises")


def _channel_shuffle_layout(x, groups):
    # The output's memory format is the input's suggested one, as on the CPU.
    y = torch.nn.functional.channel_shuffle(x, groups)
    return y, torch.tensor(y.stride())


CASES += [
    OpCase("channel_shuffle", ["aten::channel_shuffle"], torch.nn.functional.channel_shuffle,
           _channel_shuffle_samples, dtypes=DATA),
    OpCase("channel_shuffle_grad", [], torch.nn.functional.channel_shuffle, _channel_shuffle_samples, dtypes=FLOATS,
           grad=True),
    OpCase("channel_shuffle_layout", [], _channel_shuffle_layout, _channel_shuffle_samples, dtypes=FLOAT),
]
