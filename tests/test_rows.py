"""The row kernels (softmax / log_softmax, LayerNorm / RMSNorm: csrc/kernels/softmax.cl, norm.cl)
in each team-reduction mode, chosen in-process through the tuning entries "softmax/rows" and
"norm/rows" (csrc/ops/softmax.cpp, norm.cpp). The default mode runs in test_ops.py; here every
softmax and norm case runs again with the warp shuffles emulated through local memory (the code
path NVIDIA's PTX shuffles take), and shapes aimed at the 4-element vector path, its scalar
fallback (C % 4 != 0, misaligned views), teams wider than a warp and long rows run in both."""
import pytest
import torch
import torch.nn.functional as F

from .cases import FLOATS, HALFS, OpCase, Sample, make
from .opcases import norm as norm_cases
from .opcases import softmax as softmax_cases
from . import test_ops  # its test_op, not imported by name (pytest would collect it here)

pytestmark = pytest.mark.skipif(not (hasattr(torch, "ocl") and torch.ocl.is_available()),
                                reason="no OpenCL device")

@pytest.fixture
def rows_mode():
    """Sets both families' row configuration for one test, restores the default after. A team
    mode (text) runs the norm family's team kernels (SERIAL=0), which CPU devices otherwise
    replace by their serial ones; norm_extra adds norm-only keys."""
    import torch_ocl._C as C

    def set_mode(text, norm_extra=""):
        C._tuning_set(0, "softmax/rows", text)
        C._tuning_set(0, "norm/rows", f"{text} {'SERIAL=0' if text else ''} {norm_extra}".strip())

    yield set_mode
    set_mode("")


def _aligned_offset(shape, dtype, offset):
    # A contiguous view whose first element sits `offset` elements into its storage.
    n = 1
    for s in shape:
        n *= s
    return make((n + offset,), dtype)[offset:].view(shape)


def _softmax_samples(dtype):
    yield Sample((make((6, 1000), dtype), -1), tag="team of 64, in registers")
    yield Sample((make((3, 4096), dtype, low=-20, high=20), -1), tag="team of 256, in registers")
    yield Sample((make((2, 4100), dtype), -1), tag="long rows, C % 4 != 0")
    yield Sample((make((3, 4104), dtype, low=-20, high=20), -1), tag="long rows, vector tail")
    yield Sample((make((5, 1028), dtype)[:, 4:], -1), tag="view, aligned rows (vector)")
    yield Sample((make((5, 1025), dtype)[:, 1:], -1), tag="x[:, 1:] (scalar)")
    yield Sample((_aligned_offset((4, 256), dtype, 2), -1), tag="misaligned start (scalar)")
    yield Sample((_aligned_offset((4, 256), dtype, 4), -1), tag="offset start, aligned (vector)")
    yield Sample((make((40, 12), dtype), -1), tag="short rows, several per warp")
    yield Sample((make((3, 70, 5), dtype), 1), tag="strided dim (local tree)")


def _norm_samples(dtype):
    for shape, ns in (((6, 1000), (1000,)), ((3, 4096), (4096,)), ((2, 4100), (4100,)), ((3, 4104), (4104,)),
                      ((40, 12), (12,)), ((9, 512), (512,)), ((333, 512), (512,))):
        if shape[0] > 100 and dtype in HALFS:
            continue  # the CPU sums 16-bit weight grads over many rows off by several ulps
        yield Sample((make(shape, dtype), ns, make(ns, dtype, seed=1), make(ns, dtype, seed=2)), tag=f"{shape}")
    yield Sample((make((5, 1028), dtype)[:, 4:], (1024,), make((1024,), dtype), None), tag="x[:, 4:] (copied)")
    yield Sample((_aligned_offset((4, 256), dtype, 2), (256,), make((256,), dtype), make((256,), dtype)),
                 tag="misaligned start (scalar)")
    yield Sample((_aligned_offset((4, 256), dtype, 4), (256,), make((256,), dtype), make((256,), dtype)),
                 tag="offset start, aligned (vector)")


ROW_CASES = [
    OpCase("rows_softmax", [], lambda x, d: (torch.softmax(x, d), torch.log_softmax(x, d)), _softmax_samples,
           dtypes=FLOATS, grad=True),
    OpCase("rows_softmax_half", [], lambda x, d: (torch.softmax(x, d), torch.log_softmax(x, d)), _softmax_samples,
           dtypes=HALFS, grad=True, atol=2e-2, rtol=2e-2),
    OpCase("rows_layer_norm", [], lambda x, ns, w, b: F.layer_norm(x, ns, w, b, eps=1e-5), _norm_samples,
           dtypes=FLOATS, grad=True, atol=1e-4, rtol=1e-4),
    OpCase("rows_layer_norm_half", [], lambda x, ns, w, b: F.layer_norm(x, ns, w, b, eps=1e-5), _norm_samples,
           dtypes=HALFS, grad=True, atol=3e-2, rtol=3e-2),
    OpCase("rows_rms_norm", [], lambda x, ns, w, b: F.rms_norm(x, ns, w, eps=1e-6), _norm_samples,
           dtypes=(torch.float32,), grad=True, atol=1e-4, rtol=1e-4),
]

# The device default (the local-memory tree on CPU devices) and the emulated shuffles; each
# sees vector (aligned, C % 4 == 0) and scalar samples, teams of 64 and 256 work-items (the
# multi-warp step) and long rows (the merged partials).
MODES = ["", "ROWRED=emu"]


def _params(cases, modes):
    for mode in modes:
        for case in cases:
            for dtype in case.dtypes:
                # The emulated shuffles reduce in float whatever the 16-bit storage, so they
                # take float16 alone where bfloat16's loads and stores in the team kernels run
                # in another mode: softmax's default, LayerNorm/RMSNorm's SERIAL=0
                # (test_norm_kernels). GroupNorm's team kernels have no other such mode on PoCL
                # and keep both. Each bfloat16 case cost about 20 s on PoCL.
                if ("ROWRED=emu" in mode and dtype == torch.bfloat16 and torch.float16 in case.dtypes
                        and "group_norm" not in case.name):
                    continue
                yield pytest.param(mode, case, dtype,
                                   id=f"{mode.replace(' ', '_') or 'default'}-{case.name}-{str(dtype).replace('torch.', '')}")


@pytest.mark.parametrize("mode,case,dtype", list(_params(ROW_CASES, MODES)))
def test_rows_modes(rows_mode, mode, case, dtype):
    rows_mode(mode)
    test_ops.test_op(case, dtype)


# The norm family's team kernels with the device's own reduction (the local-memory tree on CPU
# devices, as AMD and Intel GPUs run them), and its serial kernels (CPU devices' default) on
# any device.
NORM_ROW_CASES = [c for c in ROW_CASES if "norm" in c.name]


@pytest.mark.parametrize("mode,case,dtype", list(_params(NORM_ROW_CASES, ["SERIAL=0", "SERIAL=1"])))
def test_norm_kernels(rows_mode, mode, case, dtype):
    rows_mode("", mode)
    test_ops.test_op(case, dtype)


# LayerNorm backward's options: the next rows prefetched, and a fan-in of 4 with few groups per
# compute unit, so the weight/bias partials of (333, 512) take a two-level fan-in tree; and the
# backward's own register elements per work-item (BWD_ITEMS: other team widths than the forward).
@pytest.mark.parametrize("extra", ["PREFETCH=1 FAN_IN=4 GROUPS_PER_CU=1", "BWD_ITEMS=32", "BWD_ITEMS=4"])
@pytest.mark.parametrize("case", [c for c in ROW_CASES if c.name in ("rows_layer_norm", "rows_rms_norm")],
                         ids=lambda c: c.name)
def test_norm_backward_options(rows_mode, case, extra):
    rows_mode("ROWRED=emu", extra)
    test_ops.test_op(case, torch.float32)


# Every softmax and norm case of the op table with the shuffles emulated.
@pytest.mark.parametrize("mode,case,dtype", list(_params(softmax_cases.CASES + norm_cases.CASES, ["ROWRED=emu"])))
def test_family_cases_emulated(rows_mode, mode, case, dtype):
    rows_mode(mode)
    test_ops.test_op(case, dtype)


@pytest.mark.parametrize("bad", ["ROWRED=bogus", "MAXRREG=8"])
def test_bad_config_warns(rows_mode, bad):
    rows_mode(bad)
    x = torch.randn(4, 8)
    with pytest.warns(UserWarning, match="softmax/rows"):
        y = torch.softmax(x.to("ocl"), -1)
    torch.testing.assert_close(y.cpu(), torch.softmax(x, -1))
