"""Ops that once ran on the CPU through the fallback and now have device kernels: microseconds
per call on ocl next to cuda (and the CPU) in the same run, each device in its own process
(bench/common.py's worker_rows). No target covers these;
the table shows where a native op stands against CUDA's. A row whose ops fell back to the CPU
on ocl says so in its last column (it should never happen: tests/test_ops.py checks it).

python bench/bench_native_ops.py [--devices ocl,cuda] [--ops ctc,grid_sample,...] [--small]

--small (the default where the OpenCL device is a CPU) divides the problem sizes for PoCL.
"""
import argparse
import copy
import json
import os
import sys
import warnings

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.common import bench, card, devices, ocl_is_cpu, print_table, worker_rows, write_json  # noqa: E402


def _randn(*shape, dev, seed=0, grad=False):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dev).requires_grad_(grad)


def _fwd_bwd(fn, *leaves):
    """A callable running fn() and a backward of its sum into `leaves`."""
    def run():
        out = fn()
        (out if out.dim() == 0 else out.sum()).backward()
        for t in leaves:
            t.grad = None
    return run


def cases(dev, s):
    """name -> callable on device `dev`; s scales the sizes down (1 on GPUs)."""
    c = {}
    a, b = _randn(4096 // s, 64, dev=dev), _randn(4096 // s, 64, dev=dev, seed=1)
    c["cdist p=1, 4096x4096x64"] = lambda: torch.cdist(a, b, p=1)
    c["pdist p=2, 4096x64"] = lambda: torch.pdist(a)
    x = _randn(4096 // s, 1024, dev=dev)
    c["median along dim, 4096x1024"] = lambda: torch.median(x, 1)
    c["kthvalue k=10, 4096x1024"] = lambda: torch.kthvalue(x, 10, 1)
    w = _randn(100000 // s, 256, dev=dev, grad=True)
    gen = torch.Generator().manual_seed(0)
    idx = torch.randint(0, w.shape[0], (4096 // s * 32,), generator=gen).to(dev)
    off = torch.arange(0, idx.numel(), 32).to(dev)
    c["embedding_bag mean, 4096 bags of 32, dim 256, fwd+bwd"] = _fwd_bwd(
        lambda: F.embedding_bag(idx, w, off, mode="mean"), w)
    img = _randn(32 // s, 64, 128, 128, dev=dev, grad=True)
    grid = (torch.rand(img.shape[0], 128, 128, 2, generator=gen) * 2.2 - 1.1).to(dev).requires_grad_()
    c["grid_sample bilinear, 32x64x128², fwd+bwd"] = _fwd_bwd(lambda: F.grid_sample(img, grid, align_corners=False),
                                                             img, grid)
    # CTC at a speech model's shapes: 32 utterances of up to 500 frames, 30 classes, 100 labels.
    T, N, C, L = 500, 32 // s, 30, 100
    logits = _randn(T, N, C, dev=dev, seed=3, grad=True)
    targets = torch.randint(1, C, (N, L), generator=gen).to(dev)
    il = torch.randint(T - 100, T + 1, (N,), generator=gen)
    tl = torch.randint(L // 2, L + 1, (N,), generator=gen)
    c["ctc_loss, T=500, N=32, C=30, S=100, fwd"] = lambda: F.ctc_loss(logits.detach().log_softmax(2), targets, il, tl)
    c["ctc_loss, fwd+bwd"] = _fwd_bwd(lambda: F.ctc_loss(logits.log_softmax(2), targets, il, tl), logits)
    # Pooling, padding and resampling at image-model shapes (fwd+bwd).
    fm = _randn(32 // s, 256, 56, 56, dev=dev, seed=4, grad=True)
    c["adaptive_avg_pool2d 32x256x56² -> 7², fwd+bwd"] = _fwd_bwd(lambda: F.adaptive_avg_pool2d(fm, 7), fm)
    vol = _randn(8 // s or 1, 64, 32, 32, 32, dev=dev, seed=5, grad=True)
    c["max_pool3d k=2, 8x64x32³, fwd+bwd"] = _fwd_bwd(lambda: F.max_pool3d(vol, 2), vol)
    c["avg_pool3d k=3 s=2 p=1, 8x64x32³, fwd+bwd"] = _fwd_bwd(lambda: F.avg_pool3d(vol, 3, 2, 1), vol)
    c["reflection pad 3, 32x64x128², fwd+bwd"] = _fwd_bwd(lambda: F.pad(img, (3, 3, 3, 3), mode="reflect"), img)
    c["replication pad 2, 8x64x32³, fwd+bwd"] = _fwd_bwd(lambda: F.pad(vol, (2,) * 6, mode="replicate"), vol)
    small_img = _randn(32 // s, 64, 64, 64, dev=dev, seed=6, grad=True)
    c["bilinear x2, 32x64x64², fwd+bwd"] = _fwd_bwd(
        lambda: F.interpolate(small_img, scale_factor=2, mode="bilinear"), small_img)
    c["bicubic x2, 32x64x64², fwd+bwd"] = _fwd_bwd(
        lambda: F.interpolate(small_img, scale_factor=2, mode="bicubic"), small_img)
    c["trilinear x2, 8x64x32³, fwd+bwd"] = _fwd_bwd(lambda: F.interpolate(vol, scale_factor=2, mode="trilinear"), vol)
    photo = _randn(32 // s, 3, 512, 512, dev=dev, seed=7)
    c["bilinear antialiased 512² -> 224², 32x3"] = lambda: F.interpolate(photo, size=224, mode="bilinear",
                                                                         antialias=True)
    prelu_w = _randn(256, dev=dev, seed=8, grad=True)
    c["prelu, 32x256x56², fwd+bwd"] = _fwd_bwd(lambda: F.prelu(fm, prelu_w), fm, prelu_w)
    scores = _randn(4096 // s, 1000, dev=dev, seed=9, grad=True)
    labels = torch.randint(0, 1000, (scores.shape[0],), generator=gen).to(dev)
    c["multi_margin_loss 4096x1000, fwd+bwd"] = _fwd_bwd(lambda: F.multi_margin_loss(scores, labels), scores)
    # Dense linear algebra (cuSOLVER on CUDA).
    n = 1024 // s
    spd = _randn(n, n, dev=dev, seed=10)
    spd = spd @ spd.mT / n + torch.eye(n, device=dev)
    rhs = _randn(n, 64, dev=dev, seed=11)
    c["linalg.solve 1024x1024, 64 right-hand sides"] = lambda: torch.linalg.solve(spd, rhs)
    c["linalg.inv 1024x1024"] = lambda: torch.linalg.inv(spd)
    c["linalg.cholesky 1024x1024"] = lambda: torch.linalg.cholesky(spd)
    tiny = _randn(4096 // s, 8, 8, dev=dev, seed=12)
    c["linalg.det, 4096 matrices of 8x8"] = lambda: torch.linalg.det(tiny)
    # Householder QR and what is built on it.
    sq = _randn(n, n, dev=dev, seed=13)
    c["linalg.qr 1024x1024"] = lambda: torch.linalg.qr(sq)
    small_sq = _randn(4096 // s, 16, 16, dev=dev, seed=14)
    c["linalg.qr, 4096 matrices of 16x16"] = lambda: torch.linalg.qr(small_sq)
    tall = _randn(8192 // s, 256, dev=dev, seed=15)
    tall_rhs = _randn(8192 // s, 16, dev=dev, seed=16)
    c["linalg.lstsq 8192x256, 16 right-hand sides"] = lambda: torch.linalg.lstsq(tall, tall_rhs).solution
    gen_mat = _randn(256 // s, 32, 32, dev=dev, seed=17) / 8
    c["linalg.matrix_exp, 256 matrices of 32x32"] = lambda: torch.linalg.matrix_exp(gen_mat)
    # Symmetric eigendecomposition and SVD (one-sided Jacobi).
    sym = _randn(512 // s, 512 // s, dev=dev, seed=22)
    sym = sym + sym.mT
    c["linalg.eigh 512x512"] = lambda: torch.linalg.eigh(sym)
    c["linalg.svd 512x512"] = lambda: torch.linalg.svd(sym)
    small_sym = _randn(4096 // s, 16, 16, dev=dev, seed=23)
    small_sym = small_sym + small_sym.mT
    c["linalg.eigh, 4096 matrices of 16x16"] = lambda: torch.linalg.eigh(small_sym)
    c["linalg.svdvals, 4096 matrices of 16x16"] = lambda: torch.linalg.svdvals(small_sym)
    # Special functions and samplers, 2^22 elements.
    pos = _randn((1 << 22) // s, dev=dev, seed=24).abs() + 0.5
    c["special.bessel_j0, 2^22"] = lambda: torch.special.bessel_j0(pos)
    c["igamma, 2^22"] = lambda: torch.igamma(pos, pos * 1.5)
    c["poisson, 2^22 rates"] = lambda: torch.poisson(pos * 20)
    c["_standard_gamma, 2^22"] = lambda: torch._standard_gamma(pos)
    # Complex pointwise ops (complex64, 2^22 elements).
    z1 = torch.complex(_randn((1 << 22) // s, dev=dev, seed=18), _randn((1 << 22) // s, dev=dev, seed=19))
    z2 = torch.complex(_randn((1 << 22) // s, dev=dev, seed=20), _randn((1 << 22) // s, dev=dev, seed=21))
    c["complex64 mul, 2^22"] = lambda: z1 * z2
    c["complex64 exp, 2^22"] = lambda: z1.exp()
    c["complex64 abs, 2^22"] = lambda: z1.abs()
    za = z1[: (1 << 20) // s].view(1024 // s, 1024)
    zb = z2[: (1 << 20) // s].view(1024, 1024 // s)
    c["complex64 mm 1024x1024x1024"] = lambda: za @ zb
    # FFTs (complex64), batched rows.
    rows = z1.view(1024 // s, 4096)
    c["fft, 1024 rows of 4096 (complex64)"] = lambda: torch.fft.fft(rows)
    c["rfft, 1024 rows of 4096 (float32)"] = lambda: torch.fft.rfft(rows.real)
    c["fft2 1024x4096 (complex64)"] = lambda: torch.fft.fft2(rows)
    prime_rows = torch.complex(_randn(1024 // s, 4099, dev=dev, seed=25), _randn(1024 // s, 4099, dev=dev, seed=26))
    c["fft, 1024 rows of 4099 (prime)"] = lambda: torch.fft.fft(prime_rows)
    # Convolutions (CUDA: cuDNN in float32, TF32 off in run_worker), the window adjoint
    # (F.fold, average-pooling backward) and the recurrent layers' fused cells.
    torch.manual_seed(0)
    fmap = _randn(32 // s, 64, 56, 56, dev=dev, seed=30, grad=True)
    conv = torch.nn.Conv2d(64, 64, 3, padding=1).to(dev)
    c["conv2d 3x3 64->64, 32x64x56², fwd"] = lambda: conv(fmap.detach())
    c["conv2d 3x3 64->64, 32x64x56², fwd+bwd"] = _fwd_bwd(lambda: conv(fmap), fmap, *conv.parameters())
    conv_s2 = torch.nn.Conv2d(64, 128, 3, stride=2, padding=1).to(dev)
    c["conv2d 3x3 s2 64->128, 32x64x56², fwd+bwd"] = _fwd_bwd(lambda: conv_s2(fmap), fmap, *conv_s2.parameters())
    c["avg_pool2d k=3 s=1 p=1, 32x64x56², fwd+bwd"] = _fwd_bwd(lambda: F.avg_pool2d(fmap, 3, 1, 1), fmap)
    c["max_pool2d k=3 s=2 p=1, 32x64x56², fwd+bwd"] = _fwd_bwd(lambda: F.max_pool2d(fmap, 3, 2, 1), fmap)
    cols = _randn(32 // s, 64 * 9, 56 * 56, dev=dev, seed=31)
    c["F.fold 3x3 p=1 into 32x64x56²"] = lambda: F.fold(cols, (56, 56), 3, padding=1)
    lstm = torch.nn.LSTM(512, 512, num_layers=2).to(dev)
    seq = _randn(64, 32 // s, 512, dev=dev, seed=32, grad=True)
    c["LSTM 2x512, seq 64, batch 32, fwd+bwd"] = _fwd_bwd(lambda: lstm(seq)[0], seq, *lstm.parameters())
    gru = torch.nn.GRU(512, 512).to(dev)
    c["GRU 512, seq 64, batch 32, fwd+bwd"] = _fwd_bwd(lambda: gru(seq)[0], seq, *gru.parameters())
    rnn = torch.nn.RNN(512, 512, num_layers=2).to(dev)
    c["RNN tanh 2x512, seq 64, batch 32, fwd+bwd"] = _fwd_bwd(lambda: rnn(seq)[0], seq, *rnn.parameters())

    lengths = torch.linspace(64, 16, 32 // s).round().long()  # a packed batch shrinking from 64 to 16 steps

    def lstm_packed():
        return lstm(torch.nn.utils.rnn.pack_padded_sequence(seq, lengths))[0].data
    c["LSTM 2x512, packed, lengths 64..16, batch 32, fwd+bwd"] = _fwd_bwd(lstm_packed, seq, *lstm.parameters())

    def lstm_inference():
        with torch.inference_mode():
            return lstm(seq)[0]
    c["LSTM 2x512, seq 64, batch 32, inference"] = lstm_inference
    # Inference fast paths (eval, no grad): the fused encoder layer, and with a padding mask
    # its nested-tensor path; GroupNorm's backward.
    enc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True), 6,
                                      enable_nested_tensor=True).to(dev).eval()
    tokens = _randn(32 // s, 128, 512, dev=dev, seed=34)
    pad = torch.zeros(32 // s, 128, dtype=torch.bool, device=dev)
    pad[:, 96:] = True

    def encode(mask=None):
        with torch.no_grad():
            return enc(tokens, src_key_padding_mask=mask)
    c["TransformerEncoder 6x512 h8, 32x128 tokens, inference"] = encode
    c["TransformerEncoder 6x512 h8, 32x128 tokens, padding mask, inference"] = lambda: encode(pad)
    gn = torch.nn.GroupNorm(32, 64).to(dev)
    c["GroupNorm 32 groups, 32x64x56², fwd+bwd"] = _fwd_bwd(lambda: gn(fmap), fmap, *gn.parameters())
    bn = torch.nn.BatchNorm2d(64).to(dev)
    c["BatchNorm2d training, 32x64x56², fwd+bwd"] = _fwd_bwd(lambda: bn(fmap), fmap, *bn.parameters())
    # A ResNet basic block: (conv3x3, BatchNorm, ReLU), conv3x3, BatchNorm, the skip, ReLU.
    block = torch.nn.Sequential(torch.nn.Conv2d(64, 64, 3, padding=1, bias=False), torch.nn.BatchNorm2d(64),
                                torch.nn.ReLU(), torch.nn.Conv2d(64, 64, 3, padding=1, bias=False),
                                torch.nn.BatchNorm2d(64)).to(dev)
    c["ResNet basic block 64ch, 32x64x56², training fwd+bwd"] = _fwd_bwd(lambda: F.relu(block(fmap) + fmap), fmap,
                                                                          *block.parameters())
    # The same block in channels_last, as torchvision's training recipes run it.
    cl = torch.channels_last
    block_cl = copy.deepcopy(block).to(memory_format=cl)
    fmap_cl = fmap.detach().contiguous(memory_format=cl).requires_grad_()
    c["ResNet basic block 64ch channels_last, training fwd+bwd"] = _fwd_bwd(
        lambda: F.relu(block_cl(fmap_cl) + fmap_cl), fmap_cl, *block_cl.parameters())
    # A deep ResNet basic block (3x3 stride-1 layers: Winograd on GPUs).
    deep = torch.nn.Sequential(torch.nn.Conv2d(256, 256, 3, padding=1, bias=False), torch.nn.BatchNorm2d(256),
                               torch.nn.ReLU(), torch.nn.Conv2d(256, 256, 3, padding=1, bias=False),
                               torch.nn.BatchNorm2d(256)).to(dev)
    deep_in = _randn(32 // s, 256, 14, 14, dev=dev, seed=35, grad=True)
    c["ResNet basic block 256ch, 32x256x14², training fwd+bwd"] = _fwd_bwd(lambda: F.relu(deep(deep_in) + deep_in),
                                                                           deep_in, *deep.parameters())
    # A MobileNetV2 inverted residual: 1x1 expansion to 144, depthwise 3x3, 1x1 projection to 24.
    inv = torch.nn.Sequential(torch.nn.Conv2d(24, 144, 1, bias=False), torch.nn.BatchNorm2d(144), torch.nn.ReLU6(),
                              torch.nn.Conv2d(144, 144, 3, padding=1, groups=144, bias=False),
                              torch.nn.BatchNorm2d(144), torch.nn.ReLU6(), torch.nn.Conv2d(144, 24, 1, bias=False),
                              torch.nn.BatchNorm2d(24)).to(dev)
    inv_in = _randn(32 // s, 24, 56, 56, dev=dev, seed=36, grad=True)
    c["MobileNetV2 inverted residual 24-144-24, 32x24x56², training fwd+bwd"] = _fwd_bwd(
        lambda: inv(inv_in) + inv_in, inv_in, *inv.parameters())
    bilstm = torch.nn.LSTM(256, 256, bidirectional=True, batch_first=True).to(dev)
    bseq = _randn(32 // s, 128, 256, dev=dev, seed=33, grad=True)
    c["LSTM 256 bidirectional batch_first, seq 128, batch 32, fwd+bwd"] = _fwd_bwd(
        lambda: bilstm(bseq)[0], bseq, *bilstm.parameters())
    return c


def run_worker(device, names, small):
    warnings.simplefilter("ignore")
    torch.backends.cudnn.allow_tf32 = False  # float32 convolutions, as ocl computes them
    rows = []
    for name, fn in cases(device, 8 if small else 1).items():
        if names and not any(n in name for n in names):
            continue
        before = dict(torch.ocl.fallback_counts()) if device == "ocl" else {}
        t = bench(fn, device, warmup=2, iters=10, repeats=3)
        fell = sorted(k for k, v in torch.ocl.fallback_counts().items() if before.get(k) != v) \
            if device == "ocl" else []
        rows.append({"op": name, "device": device, "card": card(device), "us": t * 1e6,
                     "fell back": ",".join(fell)})
        print(rows[-1], file=sys.stderr, flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--devices", default=",".join(d for d in devices() if d != "cpu"))
    ap.add_argument("--ops", default="", help="comma-separated substrings of the case names to keep")
    ap.add_argument("--small", action="store_true", default=None)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    small = ocl_is_cpu() if args.small is None else args.small
    names = [n for n in args.ops.split(",") if n]
    if args.worker:
        print(json.dumps(run_worker(args.worker, names, small)))
        return
    rows = []
    for device in args.devices.split(","):
        rows.extend(worker_rows(__file__, device, ["--ops", args.ops] + (["--small"] if small else [])))
    by = {(r["op"], r["device"]): r for r in rows}
    for r in rows:
        if r["device"] == "ocl" and (r["op"], "cuda") in by:
            r["ocl/cuda"] = r["us"] / by[(r["op"], "cuda")]["us"]
    print_table(rows, ["op", "device", "us", "ocl/cuda", "fell back"])
    write_json("native_ops", rows)


if __name__ == "__main__":
    main()
