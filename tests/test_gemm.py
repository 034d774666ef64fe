"""Matrix-product behaviour the op cases cannot see (csrc/ops/gemm.cpp): fused epilogues
(linear and addmm are one kernel launch, the bias added in the GEMM's store) and
transposed operands read in place (no copy kernels)."""
import torch
import torch.nn.functional as F

from .conftest import requires_ocl

pytestmark = requires_ocl


def _launches(fn):
    torch.ocl.synchronize()
    torch.ocl._reset_launch_counts()
    out = fn()
    torch.ocl.synchronize()
    return out, torch.ocl._launch_counts()


# Operand packing that is part of a product's algorithm, not a copy of a view: on CPU devices
# gemm_direct_fwd reads B (and an A that is not k-contiguous) from panels packed per call.
_PACKS = ("gemm_pack_panels_m", "gemm_pack_panels_n")


def _without_packs(counts):
    """counts without the operand packs, after checking there is at most one per operand."""
    counts = dict(counts)
    for name in _PACKS:
        assert counts.pop(name, 0) <= 1, counts
    return counts


def test_linear_with_bias_is_one_launch():
    x, w, b = torch.randn(2, 9, 24), torch.randn(13, 24), torch.randn(13)
    xd, wd, bd = x.to("ocl"), w.to("ocl"), b.to("ocl")
    out, counts = _launches(lambda: F.linear(xd, wd, bd))
    counts = _without_packs(counts)
    gemm = {k: v for k, v in counts.items() if k.startswith(("gemm", "gemv"))}
    assert sum(counts.values()) == 1 and sum(gemm.values()) == 1, counts
    torch.testing.assert_close(out.cpu(), F.linear(x, w, b), atol=1e-5, rtol=1e-5)


def test_transposed_operands_are_not_copied():
    a, b, c = torch.randn(20, 17), torch.randn(23, 20), torch.randn(23, 17)
    ad, bd, cd = a.to("ocl"), b.to("ocl"), c.to("ocl")
    out, counts = _launches(lambda: torch.addmm(cd, bd.t().t(), ad, beta=0.5, alpha=2.0))
    assert sum(_without_packs(counts).values()) == 1, counts
    out, counts = _launches(lambda: torch.addmm(cd.t(), ad.t(), bd.t(), beta=0.5, alpha=2.0))
    assert sum(_without_packs(counts).values()) == 1, counts
    torch.testing.assert_close(out.cpu(), torch.addmm(c.t(), a.t(), b.t(), beta=0.5, alpha=2.0), atol=1e-5, rtol=1e-5)


def test_matrix_vector_products_use_gemv():
    w, x = torch.randn(40, 33), torch.randn(33)
    wd, xd = w.to("ocl"), x.to("ocl")
    out, counts = _launches(lambda: torch.mv(wd, xd))
    assert set(counts) <= {"gemv_rows_fwd", "gemv_cols_fwd"} and sum(counts.values()) == 1, counts
    torch.testing.assert_close(out.cpu(), w @ x, atol=1e-5, rtol=1e-5)
    out, counts = _launches(lambda: xd @ wd.t())  # a row times a transposed matrix (M == 1)
    assert set(counts) <= {"gemv_rows_fwd", "gemv_cols_fwd"}, counts
    torch.testing.assert_close(out.cpu(), x @ w.t(), atol=1e-5, rtol=1e-5)


# ---- gemm_tiled_fwd and the tuning mechanism (csrc/runtime/Tuning.h, torch_ocl/tune.py) ----
# On PoCL the built-in choice is gemm_direct_fwd; the tests force other kernels through
# in-memory tuning entries (what `python -m torch_ocl.tune` does while timing candidates).

import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

from torch_ocl import _C  # noqa: E402

# SLICE_K=1: these tests are about gemm_tiled_fwd itself (NVIDIA's default slices small products).
SMALL_TILED = "KERNEL=tiled TILE_M=32 TILE_N=32 TILE_K=8 WPT_M=4 WPT_N=4 VEC_WIDTH=4 SLICE_K=1"


class _forced:
    """Uses `cfg` for every float32/float64 product on ocl:0 inside the block."""

    def __init__(self, cfg):
        self.keys = [f"gemm/{d}/{c}" for d in ("float32", "float64") for c in ("small", "large")]
        self.cfg = cfg

    def __enter__(self):
        for k in self.keys:
            _C._tuning_set(0, k, self.cfg)

    def __exit__(self, *exc):
        for k in self.keys:
            _C._tuning_set(0, k, "")


def _mat(r, c, layout, dtype, offset=0):
    """r x c matrix: 'n' row-major, 't' column-major; `offset` elements into its storage."""
    shape = (r, c) if layout == "n" else (c, r)
    x = torch.randn(shape[0] * shape[1] + offset, dtype=dtype)[offset:].view(shape)
    return x if layout == "n" else x.t()


def _all_layouts(problems, dtype):
    """(problem, a, b, tiled) for each (M, K, N) in every transpose ('n'/'t') of a and b; `tiled`:
    the layout is unit-stride and 4-aligned, so it qualifies for the tiled kernels (tiled_flags)."""
    for M, K, N in problems:
        for la in "nt":
            for lb in "nt":
                tiled = K > 0 and K % 4 == 0 and (la == "n" or M % 4 == 0) and (lb == "t" or N % 4 == 0)
                yield (M, K, N, la, lb), _mat(M, K, la, dtype), _mat(K, N, lb, dtype), tiled


# ASYNC_STAGES (cp.async) needs NVIDIA sm_80+; elsewhere the device refuses it (warned and
# ignored) and the tests taking it skip. float64 keeps register staging under it.
ASYNC = [SMALL_TILED + " ASYNC_STAGES=2", SMALL_TILED + " ASYNC_STAGES=3"]


def _skip_unless_taken(cfg):
    chosen = _C._gemm_config(0, torch.float32, 1, 64, 64).split()
    if any(f not in chosen for f in cfg.split() if f.startswith("ASYNC_STAGES")):
        pytest.skip("cp.async needs an NVIDIA GPU of sm_80 or later")


# A micro-tile taller than wide (8x4 per work-item, as NVIDIA's small-class default).
TALL_MICRO_TILE = "KERNEL=tiled TILE_M=32 TILE_N=32 TILE_K=8 WPT_M=8 WPT_N=4 VEC_WIDTH=4 SLICE_K=1"


@pytest.mark.parametrize("cfg", [SMALL_TILED + " DOUBLE_BUFFER=1", SMALL_TILED + " DOUBLE_BUFFER=0",
                                 SMALL_TILED + " PACK_B=1", TALL_MICRO_TILE] + ASYNC)
def test_tiled_kernel_all_layouts_and_edges(cfg):
    # Edges in M, N and K (a partial last K-tile, rows past M/N), more K steps (K = 36: five of
    # TILE_K = 8) than cp.async stages, K = 0.
    problems = [(64, 32, 64), (37, 20, 45), (8, 4, 12), (100, 36, 68), (33, 0, 8)]
    with _forced(cfg):
        _skip_unless_taken(cfg)
        for dtype in (torch.float32, torch.float64):
            for problem, a, b, tiled in _all_layouts(problems, dtype):
                out, counts = _launches(lambda: torch.mm(a.to("ocl"), b.to("ocl")))
                torch.testing.assert_close(out.cpu(), a @ b)
                if tiled:  # aligned unit-stride layouts run gemm_tiled_fwd
                    assert "gemm_tiled_fwd" in counts, (problem, counts)
            # Layouts that qualify run gemm_tiled_fwd; misaligned ones fall back to gemm_fwd.
            a, b = _mat(40, 24, "n", dtype), _mat(24, 36, "t", dtype)
            _, counts = _launches(lambda: torch.mm(a.to("ocl"), b.to("ocl")))
            assert "gemm_tiled_fwd" in counts, counts
            ad, bd = torch.randn(40 * 24 + 1, dtype=dtype, device="ocl")[1:].view(40, 24), b.to("ocl")
            out, counts = _launches(lambda: torch.mm(ad, bd))
            assert "gemm_fwd" in counts and "gemm_tiled_fwd" not in counts, counts
            torch.testing.assert_close(out.cpu(), ad.cpu() @ b)


@pytest.mark.parametrize("cfg", [SMALL_TILED] + ASYNC)
def test_tiled_kernel_epilogue_and_batches(cfg):
    with _forced(cfg):
        _skip_unless_taken(cfg)
        bias, a, b = torch.randn(44), torch.randn(3, 40, 24), torch.randn(3, 24, 44)
        bd, ad, bbd = bias.to("ocl"), a.to("ocl"), b.to("ocl")
        torch.testing.assert_close(torch.baddbmm(bd, ad, bbd, beta=0.5, alpha=2.0).cpu(),
                                   torch.baddbmm(bias, a, b, beta=0.5, alpha=2.0))
        x, w = torch.randn(2, 9, 24), torch.randn(44, 24)  # linear: B = W^T is k-contiguous
        out, counts = _launches(lambda: torch.nn.functional.linear(x.to("ocl"), w.to("ocl"), bd))
        assert counts.get("gemm_tiled_fwd") == 1, counts
        torch.testing.assert_close(out.cpu(), torch.nn.functional.linear(x, w, bias))
        c = torch.randn(44, 40)  # a transposed out (scalar stores) and a strided C
        outd = torch.empty(44, 40, device="ocl").t()
        torch.addmm(c.to("ocl").t(), a[0].to("ocl"), b[0].to("ocl"), out=outd)
        torch.testing.assert_close(outd.cpu(), torch.addmm(c.t(), a[0], b[0]))
        ab = torch.randn(1, 40, 24).expand(3, 40, 24)  # a broadcast (stride-0) batch
        torch.testing.assert_close(torch.bmm(ab.to("ocl"), bbd).cpu(), torch.bmm(ab, b))


# gemm_tiled_sliced_fwd: SLICE_K groups of work-items share a work-group's K steps. It runs for
# products of at most one work-group per compute unit (PoCL: one per core) with at least two
# K steps per slice, so the problems are one or two 64x64 tiles.
SLICED = ["KERNEL=tiled TILE_M=64 TILE_N=64 TILE_K=16 WPT_M=8 WPT_N=4 VEC_WIDTH=4 SLICE_K=2",
          "KERNEL=tiled TILE_M=64 TILE_N=64 TILE_K=16 WPT_M=8 WPT_N=4 VEC_WIDTH=4 SLICE_K=3",
          "KERNEL=tiled TILE_M=32 TILE_N=32 TILE_K=8 WPT_M=4 WPT_N=4 VEC_WIDTH=4 SLICE_K=4"]


@pytest.mark.parametrize("cfg", SLICED)
def test_sliced_kernel_all_layouts_edges_and_epilogue(cfg):
    # K steps that do not divide among the slices (200 = 12.5 steps of 16), a partial last
    # K-tile, rows and columns past the matrix, fewer steps than 2 per slice (no slicing).
    problems = [(64, 200, 64), (37, 100, 60), (64, 36, 64), (20, 8, 12)]
    cu = torch.ocl.get_device_properties(0).multi_processor_count
    with _forced(cfg):
        for dtype in (torch.float32, torch.float64):
            # The configuration taken (a device with 48 KiB of local memory refuses the float64
            # tiles of SLICE_K=2 and 3 with a warning and keeps its default).
            chosen = _C._gemm_config(0, dtype, 1, 64, 64).split(": ", 1)[1]
            fields = dict(f.split("=") for f in chosen.split())
            tm, tn, tk, slices = (int(fields[k]) for k in ("TILE_M", "TILE_N", "TILE_K", "SLICE_K"))
            for (M, K, N, _, _), a, b, tiled in _all_layouts(problems, dtype):
                out, counts = _launches(lambda: torch.mm(a.to("ocl"), b.to("ocl")))
                torch.testing.assert_close(out.cpu(), a @ b, atol=1e-4, rtol=1e-5)
                if tiled:
                    sliced = slices > 1 and -(-K // tk) >= 2 * slices and -(-M // tm) * -(-N // tn) <= cu
                    name = "gemm_tiled_sliced_fwd" if sliced else "gemm_tiled_fwd"
                    assert counts.get(name) == 1, ((M, K, N), counts)
            # the epilogue (bias, alpha, beta) and batches
            bias, a, b = torch.randn(36, dtype=dtype), torch.randn(2, 20, 96, dtype=dtype), torch.randn(2, 96, 36, dtype=dtype)
            out, counts = _launches(lambda: torch.baddbmm(bias.to("ocl"), a.to("ocl"), b.to("ocl"), beta=0.5, alpha=2.0))
            torch.testing.assert_close(out.cpu(), torch.baddbmm(bias, a, b, beta=0.5, alpha=2.0), atol=1e-4, rtol=1e-5)
            if slices > 1 and 2 * -(-20 // tm) * -(-36 // tn) <= cu:
                assert counts.get("gemm_tiled_sliced_fwd") == 1, counts


def test_sliced_kernel_only_for_few_work_groups():
    """More work-groups than compute units keep gemm_tiled_fwd; SLICE_K=1 never slices."""
    cu = torch.ocl.get_device_properties(0).multi_processor_count
    a, b = torch.randn(64 * (cu + 1), 64), torch.randn(64, 64)
    with _forced(SLICED[0]):
        out, counts = _launches(lambda: a.to("ocl") @ b.to("ocl"))
        assert counts.get("gemm_tiled_fwd") == 1 and "gemm_tiled_sliced_fwd" not in counts, counts
        torch.testing.assert_close(out.cpu(), a @ b, atol=1e-4, rtol=1e-5)
    with _forced(SLICED[0].replace("SLICE_K=2", "SLICE_K=1")):
        _, counts = _launches(lambda: a[:64].to("ocl") @ b.to("ocl"))
        assert counts.get("gemm_tiled_fwd") == 1, counts


@pytest.mark.parametrize("cfg", ["SLICE_K=9", "SLICE_K=0",
                                 "KERNEL=tiled TILE_M=64 TILE_N=64 TILE_K=8 WPT_M=8 WPT_N=4 VEC_WIDTH=4 SLICE_K=4"])
def test_bad_slice_k_is_refused_with_a_warning(cfg):
    default = _C._gemm_config(0, torch.float32, 1, 64, 64)
    with _forced(cfg):
        a, b = torch.randn(64, 64), torch.randn(64, 64)
        with pytest.warns(UserWarning, match="SLICE_K"):
            out = torch.mm(a.to("ocl"), b.to("ocl"))
        torch.testing.assert_close(out.cpu(), a @ b, atol=1e-4, rtol=1e-5)
        assert _C._gemm_config(0, torch.float32, 1, 64, 64) == default


# gemm_direct_fwd (CPU devices; forced here on any device): PoCL's AVX2 and AVX-512 defaults,
# and micro-tiles whose panel rows have no vector type (scalar copies).
DIRECT = ["KERNEL=direct TILE_M=32 TILE_N=64 TILE_K=16 WPT_M=4 WPT_N=16 VEC_WIDTH=8",
          "KERNEL=direct TILE_M=16 TILE_N=128 TILE_K=16 WPT_M=2 WPT_N=32 VEC_WIDTH=8",
          "KERNEL=direct TILE_M=12 TILE_N=24 TILE_K=8 WPT_M=3 WPT_N=6 VEC_WIDTH=2"]


@pytest.mark.parametrize("cfg", DIRECT)
def test_direct_kernel_packed_operands_layouts_edges_and_epilogue(cfg):
    """B is packed into WPT_N-column panels when M > WPT_M, A into WPT_M-row panels when it is
    not k-contiguous and N > WPT_N; panels past the edge are zero-filled; whole unit-stride
    output rows are stored as vectors, everything else element by element."""
    fields = dict(f.split("=") for f in cfg.split())
    wm, wn = int(fields["WPT_M"]), int(fields["WPT_N"])
    problems = [(64, 32, 64), (37, 20, 45), (8, 4, 12), (3, 5, 7), (100, 36, 68), (33, 0, 8)]
    with _forced(cfg):
        for dtype in (torch.float32, torch.float64):
            for (M, K, N, la, lb), a, b, _ in _all_layouts(problems, dtype):
                out, counts = _launches(lambda: torch.mm(a.to("ocl"), b.to("ocl")))
                torch.testing.assert_close(out.cpu(), a @ b)
                if M > 1 and N > 1:  # M or N == 1 are matrix-vector products
                    packs = {"gemm_pack_panels_n": int(K > 0 and M > wm),
                             "gemm_pack_panels_m": int(K > 0 and la == "t" and N > wn)}
                    assert counts.get("gemm_direct_fwd") == 1, ((M, K, N, la, lb), counts)
                    assert {k: counts.get(k, 0) for k in packs} == packs, ((M, K, N, la, lb), counts)
            # Operands strided in both dimensions, the epilogue with a bias (row stride 0),
            # alpha and beta, a transposed C and a transposed out (element stores), batches with
            # a broadcast (stride-0) batch of a transposed A.
            a, b = torch.randn(70, 60, dtype=dtype)[::2, ::3], torch.randn(40, 90, dtype=dtype)[::2, ::2]
            torch.testing.assert_close(torch.mm(a.to("ocl"), b.to("ocl")).cpu(), a @ b)
            bias, a, b = torch.randn(45, dtype=dtype), torch.randn(37, 20, dtype=dtype), torch.randn(20, 45, dtype=dtype)
            out = torch.addmm(bias.to("ocl"), a.to("ocl"), b.to("ocl"), beta=0.5, alpha=2.0)
            torch.testing.assert_close(out.cpu(), torch.addmm(bias, a, b, beta=0.5, alpha=2.0))
            c = torch.randn(45, 37, dtype=dtype)
            outd = torch.empty(45, 37, dtype=dtype, device="ocl").t()
            torch.addmm(c.to("ocl").t(), a.to("ocl"), b.to("ocl"), out=outd)
            torch.testing.assert_close(outd.cpu(), torch.addmm(c.t(), a, b))
            ab = torch.randn(1, 20, 37, dtype=dtype).expand(3, 20, 37).transpose(1, 2)
            bb = torch.randn(3, 45, 20, dtype=dtype).transpose(1, 2)
            torch.testing.assert_close(torch.bmm(ab.to("ocl"), bb.to("ocl")).cpu(), torch.bmm(ab, bb))
            # A broadcast operand is packed once, not once per batch: the call's peak memory
            # stays below its output plus half of what per-batch panels of B would take.
            a3, b1 = torch.randn(256, 40, 64, dtype=dtype), torch.randn(1, 64, 48, dtype=dtype)
            a3d, b3d = a3.to("ocl"), b1.to("ocl").expand(256, 64, 48)
            b3 = b1.expand(256, 64, 48)
            torch.ocl.synchronize()
            torch.ocl.reset_peak_memory_stats()
            base = torch.ocl.memory_allocated()
            out = torch.bmm(a3d, b3d)
            torch.ocl.synchronize()
            per_batch_panels = 256 * 64 * (-(-48 // wn) * wn) * a3.element_size()
            assert torch.ocl.max_memory_allocated() - base < out.nbytes + per_batch_panels // 2
            torch.testing.assert_close(out.cpu(), torch.bmm(a3, b3))


def test_direct_kernel_other_dtypes():
    """The device's own configuration (gemm_direct_fwd on CPU devices) for the dtypes with and
    without panels: bfloat16 and integers are packed, float16 is not (no half loads there)."""
    for dtype in (torch.bfloat16, torch.float16, torch.int32, torch.int64, torch.int8):
        for la in "nt":
            for lb in "nt":
                a, b = _mat(37, 20, la, torch.float32), _mat(20, 45, lb, torch.float32)
                if dtype.is_floating_point:
                    a, b = a.to(dtype), b.to(dtype)
                    ref = (a.float() @ b.float()).to(dtype)
                    tol = dict(atol=0.05, rtol=0.02)
                else:
                    a, b = (a * 3).round().to(dtype), (b * 3).round().to(dtype)
                    ref, tol = a @ b, {}
                torch.testing.assert_close(torch.mm(a.to("ocl"), b.to("ocl")).cpu(), ref, **tol)


def test_operands_without_a_tiled_layout_are_copied_for_large_products():
    """An operand strided along both rows and depth (an expanded gradient, a stepped view) has
    no tiled path, nor does a contiguous one misaligned by its offset. Products of at least 2^26
    multiply-adds copy it into a new buffer first (a batch-broadcast operand once) and run the
    tiled kernel; smaller ones read it in place through gemm_fwd's strides."""
    big, dense, batch = torch.randn(512, 1024), torch.randn(512, 512), torch.randn(3, 512, 200)
    views = [  # (a, b) of each product, as views of tensors on the device; launches besides the product
        (lambda t: t["one"].expand(256, 512), lambda t: t["dense"], 1),  # sum()'s gradient
        (lambda t: t["big"][::2, ::2], lambda t: t["dense"], 1),  # stepped rows and depth
        (lambda t: t["dense"][:256], lambda t: t["big"][:, ::2], 1),  # stepped B
        (lambda t: t["big"][::2, ::2].unsqueeze(0).expand(3, 256, 512), lambda t: t["batch"], 1),  # broadcast batch
        # contiguous but misaligned by its offset: copied by a buffer copy, not a kernel
        (lambda t: t["flat"][1:].view(256, 512), lambda t: t["dense"], 0),
    ]
    cpu = {"one": torch.ones(()), "big": big, "dense": dense, "batch": batch, "flat": torch.randn(1 + 256 * 512)}
    dev = {k: v.to("ocl") for k, v in cpu.items()}
    with _forced(SMALL_TILED):
        for va, vb, copies in views:
            out, counts = _launches(lambda: torch.matmul(va(dev), vb(dev)))
            assert "gemm_fwd" not in counts and counts.get("gemm_tiled_fwd") == 1, counts
            assert sum(counts.values()) == 1 + copies, counts
            torch.testing.assert_close(out.cpu(), torch.matmul(va(cpu), vb(cpu)), atol=1e-4, rtol=1e-4)
        out, counts = _launches(lambda: dev["big"][:64:2, :128:2] @ dev["dense"][:64, :64])  # 32x64x64
        assert counts == {"gemm_fwd": 1}, counts
        torch.testing.assert_close(out.cpu(), big[:64:2, :128:2] @ dense[:64, :64])


def test_pack_b_transposes_k_contiguous_b_first():
    """PACK_B=1: a k-contiguous B (x @ W^T, a transposed batch) is packed n-contiguous by
    gemm_pack_kn, then the NN product runs; other layouts and N % 4 != 0 are left alone."""
    with _forced(SMALL_TILED + " PACK_B=1"):
        for dtype in (torch.float32, torch.float64):
            x, w, bias = torch.randn(2, 37, 24, dtype=dtype), torch.randn(68, 24, dtype=dtype), torch.randn(68, dtype=dtype)
            out, counts = _launches(lambda: torch.nn.functional.linear(x.to("ocl"), w.to("ocl"), bias.to("ocl")))
            assert counts.get("gemm_pack_kn") == 1 and counts.get("gemm_tiled_fwd") == 1, counts
            torch.testing.assert_close(out.cpu(), torch.nn.functional.linear(x, w, bias))
            # batched, B a transposed view with a batch stride; K not a multiple of the tile
            a, b = torch.randn(3, 45, 36, dtype=dtype), torch.randn(3, 40, 36, dtype=dtype)
            out, counts = _launches(lambda: torch.bmm(a.to("ocl"), b.to("ocl").transpose(1, 2)))
            assert counts.get("gemm_pack_kn") == 1, counts
            torch.testing.assert_close(out.cpu(), torch.bmm(a, b.transpose(1, 2)))
            # N % 4 != 0: no packed workspace could take the vector path; NN needs no packing
            w2 = torch.randn(30, 24, dtype=dtype)
            out, counts = _launches(lambda: x.to("ocl") @ w2.to("ocl").t())
            assert "gemm_pack_kn" not in counts, counts
            torch.testing.assert_close(out.cpu(), x @ w2.t())
            w3 = torch.randn(24, 68, dtype=dtype)
            out, counts = _launches(lambda: x.to("ocl") @ w3.to("ocl"))
            assert "gemm_pack_kn" not in counts, counts
            torch.testing.assert_close(out.cpu(), x @ w3)


def test_pack_b_2_packs_only_long_products():
    """PACK_B=2 (the NVIDIA default for large tiles): the pack launch is only paid for products
    of at least 2^32 multiply-adds, where the faster NN kernel repays it."""
    with _forced(SMALL_TILED + " PACK_B=2"):
        x, w = torch.randn(64, 32), torch.randn(48, 32)
        out, counts = _launches(lambda: x.to("ocl") @ w.to("ocl").t())
        assert "gemm_pack_kn" not in counts and counts.get("gemm_tiled_fwd") == 1, counts
        torch.testing.assert_close(out.cpu(), x @ w.t())
        if torch.ocl.get_device_properties(0).type == "cpu":
            return  # 2^32 multiply-adds take ~20 s through the tiled kernel on PoCL
        a, b = torch.randn(2048, 1024), torch.randn(2048, 1024)  # 2048 * 2048 * 1024 = 2^32
        out, counts = _launches(lambda: a.to("ocl") @ b.to("ocl").t())
        assert counts.get("gemm_pack_kn") == 1 and counts.get("gemm_tiled_fwd") == 1, counts
        torch.testing.assert_close(out.cpu(), a @ b.t(), atol=1e-3, rtol=1e-4)


def _write_tuning(path, entries, **fields):
    p = torch.ocl.get_device_properties(0)
    doc = dict(format=1, device=p.name, driver=p.driver_version, entries=entries)
    doc.update(fields)
    path.write_text(json.dumps(doc))


@pytest.fixture
def tuning_dir(tmp_path):
    _C._set_tuning_dir(str(tmp_path))
    try:
        yield tmp_path
    finally:
        _C._set_tuning_dir("")


def _file(tuning_dir):
    return tuning_dir / os.path.basename(_C._tuning_file(0))


def test_tuning_file_changes_the_configuration(tuning_dir):
    assert _C._tuning_file(0).startswith(str(tuning_dir))
    default = _C._gemm_config(0, torch.float32, 1, 40, 36)
    _write_tuning(_file(tuning_dir), {"gemm/float32/small": SMALL_TILED, "other/key": "X=1"},
                  results={"gemm/float32/small": [{"config": SMALL_TILED, "score": 1.0}]})
    _C._tuning_reload()
    chosen = _C._gemm_config(0, torch.float32, 1, 40, 36)
    assert chosen != default and chosen.startswith("small: KERNEL=tiled TILE_M=32 TILE_N=32 TILE_K=8"), chosen
    assert _C._tuning_lookup(0, "other/key") == "X=1"
    a, b = torch.randn(40, 24), torch.randn(24, 36)
    out, counts = _launches(lambda: torch.mm(a.to("ocl"), b.to("ocl")))
    assert "gemm_tiled_fwd" in counts, counts
    torch.testing.assert_close(out.cpu(), a @ b)


@pytest.mark.parametrize("content", ["{not json", '{"format": 2, "entries": {}}', "FOREIGN", "BADCFG"])
def test_bad_tuning_file_is_ignored_with_a_warning(tuning_dir, content):
    default = _C._gemm_config(0, torch.float32, 1, 40, 36)
    if content == "FOREIGN":
        _write_tuning(_file(tuning_dir), {"gemm/float32/small": SMALL_TILED}, device="Some Other Device")
    elif content == "BADCFG":
        _write_tuning(_file(tuning_dir), {"gemm/float32/small": "TILE_M=7 WPT_M=4"})
    else:
        _file(tuning_dir).write_text(content)
    _C._tuning_reload()
    a, b = torch.randn(40, 24), torch.randn(24, 36)
    with pytest.warns(UserWarning, match="tuning file|GEMM configuration"):
        out = torch.mm(a.to("ocl"), b.to("ocl"))
    torch.testing.assert_close(out.cpu(), a @ b)
    assert _C._gemm_config(0, torch.float32, 1, 40, 36) == default


def test_tuner_writes_winners_and_they_are_used(tmp_path):
    cands = ";".join([SMALL_TILED, "KERNEL=tiled TILE_M=7", "KERNEL=direct TILE_M=32 TILE_N=32 WPT_M=4 WPT_N=4"])
    env = dict(os.environ, TORCH_OCL_TUNING_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "torch_ocl.tune", "gemm", "--quick", "--budget", "0.002",
                           "--candidates", cands], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "failed: rejected" in proc.stdout and "gemm/float32/small" in proc.stdout, proc.stdout
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1, files
    doc = json.loads(files[0].read_text())
    assert doc["device"] == torch.ocl.get_device_properties(0).name and doc["format"] == 1
    assert set(doc["entries"]) >= {"gemm/float32/small"}, doc["entries"]
    assert all("TILE_M=7" not in v for v in doc["entries"].values())
    _C._set_tuning_dir(str(tmp_path))
    try:
        chosen = _C._gemm_config(0, torch.float32, 1, 64, 64).split(": ", 1)[1]
        want = doc["entries"]["gemm/float32/" + _C._gemm_config(0, torch.float32, 1, 64, 64).split(":")[0]]
        assert all(f in chosen.split() for f in want.split()), (chosen, want)
    finally:
        _C._set_tuning_dir("")


def test_tiled_kernel_that_fails_to_build_falls_back(tmp_path):
    # A driver that rejects gemm_tiled_fwd: products still run (gemm_fwd, same tiles), warned once.
    _run_with_broken_kernel(tmp_path, "void TILED_KERNEL(", "void TILED_KERNEL(not_a_type x, ", SMALL_TILED, "gemm_fwd")


def test_sliced_kernel_that_fails_to_build_falls_back(tmp_path):
    # Only the sliced program broken: gemm_tiled_fwd takes its products, warned once.
    _run_with_broken_kernel(tmp_path, "#define TILED_KERNEL gemm_tiled_sliced_fwd",
                            "#define TILED_KERNEL gemm_tiled_sliced_fwd not_a_type", SLICED[0], "gemm_tiled_fwd")


def _run_with_broken_kernel(tmp_path, find, replace, cfg, fallback):
    src = os.path.join(os.path.dirname(__file__), "..", "csrc", "kernels")
    kdir = tmp_path / "kernels"
    kdir.mkdir()
    for f in os.listdir(src):
        text = open(os.path.join(src, f)).read()
        if f == "gemm.cl":
            assert find in text
            text = text.replace(find, replace)
        (kdir / f).write_text(text)
    code = ("import torch, warnings\n"
            "warnings.simplefilter('always')\n"
            "a, b = torch.randn(40, 64), torch.randn(64, 36)\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    for _ in range(2): out = torch.mm(a.to('ocl'), b.to('ocl')).cpu()\n"
            "assert sum('failed to build' in str(x.message) for x in w) == 1, [str(x.message)[:200] for x in w]\n"
            "torch.testing.assert_close(out, a @ b, atol=1e-4, rtol=1e-5)\n"
            f"assert '{fallback}' in torch.ocl._launch_counts(), torch.ocl._launch_counts()\n")
    env = dict(os.environ, TORCH_OCL_KERNEL_DIR=str(kdir), TORCH_OCL_GEMM_CONFIG=cfg)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
