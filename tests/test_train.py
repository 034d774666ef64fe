"""End-to-end tests of GPTMini and train.py on each device ("cpu", and "ocl" when the
backend is present): ocl and CPU losses agree, validation loss falls, save -> resume is
exact, checkpoints move between devices, bad input exits 2 with one line, Ctrl-C saves,
and KV-cache generation equals plain generation. Tiny models (d_model 32, 2 layers,
max_len 32) keep the whole file fast on a 2-core CPU; most runs are in-process through
train.run_training, and subprocesses are used only where exit codes and stderr matter.
"""

import io
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import train  # noqa: E402
from models.data import stdlib_docstrings  # noqa: E402
from models.gpt_mini import GPTMini, GPTMiniConfig, KVCache  # noqa: E402
from train import TrainConfig, run_training  # noqa: E402


def ocl_available() -> bool:
    return hasattr(torch, "ocl") and torch.ocl.is_available()


NO_OCL = "torch.ocl is not available (backend not built, or no OpenCL device)"
needs_ocl = pytest.mark.skipif(not ocl_available(), reason=NO_OCL)
DEVICES = ["cpu", pytest.param("ocl", marks=needs_ocl)]

TINY = dict(d_model=32, n_heads=2, n_layers=2, d_ff=64, max_len=32, batch_size=4,
            max_steps=16, warmup_steps=4, lr=3e-3, eval_every=8, eval_windows=16,
            save_every=8, progress=False, sample_tokens=0)


def quiet(*args, **kwargs):
    pass


def tiny(out_dir, **kw) -> TrainConfig:
    return TrainConfig(**{**TINY, "out_dir": str(out_dir), **kw})


def metrics(out_dir):
    return train.read_metrics(os.path.join(out_dir, "metrics.jsonl"))


def train_losses(out_dir):
    return [r["loss"] for r in metrics(out_dir)[0].values()]


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # Tiny matrices are faster on one thread, and OpenMP threads spinning against the
    # rest of a busy 2-core machine can be ~100x slower. Restored for other test files.
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def small_text(tmp_path_factory):
    """A 60 kB text file (a slice of the built-in corpus) for fast subprocess runs."""
    path = tmp_path_factory.mktemp("data") / "small.txt"
    path.write_text(stdlib_docstrings()[:60_000], encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A short CPU run on the built-in corpus; its directory holds last.pt and best.pt."""
    out = tmp_path_factory.mktemp("trained") / "run"
    run_training(tiny(out, max_steps=8, eval_every=4, save_every=4), log=quiet)
    return out


def run_cli(*args, cwd, timeout=180, env=None):
    """python train.py args... in a subprocess; returns CompletedProcess (text)."""
    full_env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
                **(env or {})}
    return subprocess.run([sys.executable, str(REPO / "train.py"), *map(str, args)],
                          cwd=cwd, env=full_env, capture_output=True, text=True,
                          timeout=timeout)


def assert_one_line_error(proc, *fragments):
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], proc.stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


# ------------------------------------------------------------------------ training

@needs_ocl
def test_ocl_matches_cpu_without_fallback(tmp_path):
    """(a) 30 steps from one seed: ocl and CPU losses agree to 1e-4 (relative), with any
    CPU fallback on ocl turned into an error."""
    cfg = dict(max_steps=30, dropout=0.0, eval_every=15, save_every=30, sample_tokens=8)
    cpu = run_training(tiny(tmp_path / "cpu", **cfg), log=quiet)
    args = [f"--{k.replace('_', '-')}={v}" for k, v in {**TINY, **cfg}.items()
            if not isinstance(v, bool)]
    proc = run_cli("--device", "ocl", "--no-progress", "--out-dir", tmp_path / "ocl", *args,
                   cwd=tmp_path, env={"TORCH_OCL_FALLBACK": "error"}, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ocl = train_losses(tmp_path / "ocl")
    assert len(ocl) == len(cpu) == 30
    for step, (a, b) in enumerate(zip(ocl, cpu), 1):
        assert abs(a - b) <= 1e-4 * abs(b), f"step {step}: ocl {a} vs cpu {b}"
    val_ocl, val_cpu = metrics(tmp_path / "ocl")[1], metrics(tmp_path / "cpu")[1]
    for step in val_cpu:
        assert val_ocl[step]["val_loss"] == pytest.approx(val_cpu[step]["val_loss"], rel=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_validation_loss_falls_on_builtin_corpus(tmp_path, device):
    """(b) The built-in corpus trains: validation loss drops well below its start
    (about ln(vocab) for a fresh model); metrics, checkpoints and the curve exist."""
    out = tmp_path / "run"
    losses = run_training(tiny(out, device=device, max_steps=60, eval_every=30,
                               save_every=30, dropout=0.0), log=quiet)
    assert len(losses) == 60 and all(math.isfinite(x) for x in losses)
    train_rec, val = metrics(out)
    assert list(val) == [0, 30, 60]
    first, last = val[0]["val_loss"], val[60]["val_loss"]
    vocab = torch.load(out / "last.pt", weights_only=True)["model_config"]["vocab_size"]
    assert first == pytest.approx(math.log(vocab), abs=0.3)  # a fresh model is near uniform
    assert last < first - 0.8, (first, last)
    assert val[60]["val_ppl"] == pytest.approx(math.exp(last))
    assert set(train_rec[1]) >= {"loss", "lr", "tokens_per_s", "grad_norm"}
    for name in ("last.pt", "best.pt", "loss_curve.png", "metrics.jsonl"):
        assert (out / name).stat().st_size > 0


@pytest.mark.parametrize("device", DEVICES)
def test_resume_is_exact(tmp_path, device):
    """(c) Stop after 7 of 16 steps, resume: the losses (read from metrics.jsonl) equal
    those of an uninterrupted run, bit for bit, with dropout and gradient accumulation
    on, so data position, dropout RNG, optimizer and scheduler all come back."""
    kw = dict(device=device, dropout=0.1, grad_accum=2, eval_every=5, save_every=100)
    whole = run_training(tiny(tmp_path / "whole", **kw), log=quiet)
    first = run_training(tiny(tmp_path / "split", stop_after=7, **kw), log=quiet)
    ckpt = torch.load(tmp_path / "split" / "last.pt", weights_only=True)
    assert ckpt["step"] == 7
    rest = run_training(tiny(tmp_path / "split", resume=str(tmp_path / "split" / "last.pt"),
                             **kw), log=quiet)
    assert first + rest == whole
    assert train_losses(tmp_path / "split") == train_losses(tmp_path / "whole")
    assert metrics(tmp_path / "split")[1] == metrics(tmp_path / "whole")[1]
    a = torch.load(tmp_path / "split" / "last.pt", weights_only=True)
    b = torch.load(tmp_path / "whole" / "last.pt", weights_only=True)
    for k in b["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k


def test_resume_from_cli_keeps_checkpoint_options(tmp_path):
    """`train.py --resume PATH` alone continues with the options the run was started
    with (non-default model shape here) and writes into the checkpoint's directory."""
    out = tmp_path / "run"
    kw = dict(d_model=48, n_heads=3, max_steps=6, save_every=3, eval_every=3)
    whole = run_training(tiny(tmp_path / "whole", **kw), log=quiet)
    run_training(tiny(out, stop_after=3, **kw), log=quiet)
    assert train.main(["--resume", str(out / "last.pt"), "--no-progress",
                       "--sample-tokens", "0"]) == 0
    assert train_losses(out) == whole
    assert torch.load(out / "last.pt", weights_only=True)["step"] == 6


def test_checkpoint_contents(trained):
    """Plain dict, loads with weights_only=True, every tensor on the CPU."""
    ckpt = torch.load(trained / "last.pt", map_location="cpu", weights_only=True)
    for key in ("format_version", "train_config", "model_config", "model", "optimizer",
                "scheduler", "step", "epoch", "best_val_loss", "tokenizer", "rng", "data"):
        assert key in ckpt, key
    assert ckpt["step"] == 8 and ckpt["epoch"] > 0
    assert ckpt["tokenizer"]["kind"] == "char" and isinstance(ckpt["tokenizer"]["chars"], str)
    assert isinstance(ckpt["rng"]["cpu"], torch.Tensor)
    assert isinstance(ckpt["data"]["sampler"]["generator"], torch.Tensor)
    assert ckpt["train_config"]["d_model"] == 32 and ckpt["model_config"]["d_model"] == 32
    best = torch.load(trained / "best.pt", weights_only=True)
    assert best["best_val_loss"] is not None and best["step"] in (4, 8)
    assert not list(trained.glob(".*.tmp"))  # atomic saves leave no temp files


@pytest.mark.parametrize("impl", ["fused", "foreach", "single"])
def test_optimizer_impls_agree(tmp_path, impl):
    base = run_training(tiny(tmp_path / "auto", max_steps=5, dropout=0.0), log=quiet)
    other = run_training(tiny(tmp_path / impl, max_steps=5, dropout=0.0,
                              optimizer_impl=impl), log=quiet)
    assert other == pytest.approx(base, rel=1e-5)


def test_manual_attention_matches_sdpa(tmp_path):
    sdpa = run_training(tiny(tmp_path / "sdpa", max_steps=5, dropout=0.0), log=quiet)
    manual = run_training(tiny(tmp_path / "manual", max_steps=5, dropout=0.0,
                               attn_impl="manual"), log=quiet)
    assert manual == pytest.approx(sdpa, rel=1e-5)


def test_bpe_run_and_generate(tmp_path):
    out = tmp_path / "bpe"
    run_training(tiny(out, tokenizer="bpe", vocab_size=300, max_steps=4, eval_every=4),
                 log=quiet)
    ckpt = torch.load(out / "last.pt", weights_only=True)
    assert ckpt["tokenizer"]["kind"] == "bpe" and ckpt["model_config"]["vocab_size"] == 300
    buf = io.StringIO()
    text = train.run_generate(train.GenerateConfig(checkpoint=str(out / "last.pt"),
                                                   prompt="Return ü", max_new_tokens=10),
                              out=buf)
    assert text.startswith("Return ü") and buf.getvalue().rstrip("\n") == text


# --------------------------------------------------------------------- portability

@needs_ocl
@pytest.mark.parametrize("first,second", [("ocl", "cpu"), ("cpu", "ocl")])
def test_checkpoint_moves_between_devices(tmp_path, first, second):
    """(d) Train on one device, resume on the other: training goes on as it would have
    (losses agree to 1e-4 with dropout off), and the checkpoint generates on both."""
    kw = dict(dropout=0.0, max_steps=12, eval_every=6, save_every=100)
    whole = run_training(tiny(tmp_path / "whole", **kw), log=quiet)
    out = tmp_path / "moved"
    run_training(tiny(out, device=first, stop_after=6, **kw), log=quiet)
    rest = run_training(tiny(out, device=second, resume=str(out / "last.pt"), **kw),
                        log=quiet)
    assert rest == pytest.approx(whole[6:], rel=1e-4)
    texts = [train.run_generate(train.GenerateConfig(checkpoint=str(out / "last.pt"),
                                                     prompt="Return ", temperature=0,
                                                     max_new_tokens=20, device=d),
                                out=io.StringIO())
             for d in (first, second)]
    assert texts[0] == texts[1]


# ---------------------------------------------------------------------- bad input

def test_missing_data_file(tmp_path):
    proc = run_cli("--data", tmp_path / "nope.txt", cwd=tmp_path)
    assert_one_line_error(proc, "nope.txt does not exist")
    assert not (tmp_path / "runs").exists()


def test_empty_data_file(tmp_path):
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "dir").mkdir()
    assert_one_line_error(run_cli("--data", tmp_path / "empty.txt", cwd=tmp_path),
                          "is empty")
    assert_one_line_error(run_cli("--data", tmp_path / "dir", cwd=tmp_path),
                          "no *.txt files")


def test_corpus_smaller_than_a_window(tmp_path):
    (tmp_path / "tiny.txt").write_text("hello world\n" * 3)
    proc = run_cli("--data", tmp_path / "tiny.txt", "--max-len", "64", cwd=tmp_path)
    assert_one_line_error(proc, "too small", "--max-len")


@pytest.mark.parametrize("damage,command", [("garbage", "train"), ("truncated", "generate")])
def test_corrupt_checkpoint(tmp_path, trained, damage, command):
    """A damaged checkpoint fails resume and generate with one line, and a failed
    resume leaves the run's other checkpoints as they were."""
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    data = (run / "last.pt").read_bytes()
    (run / "last.pt").write_bytes(os.urandom(4096) if damage == "garbage"
                                  else data[:len(data) // 2])
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    flag = "--resume" if command == "train" else "--checkpoint"
    proc = run_cli(command, flag, run / "last.pt", cwd=tmp_path)
    assert_one_line_error(proc, "cannot read checkpoint", "corrupt")
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before


def test_resume_with_other_model_shape(tmp_path, trained):
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in run.iterdir()}
    proc = run_cli("--resume", run / "last.pt", "--d-model", "64", cwd=tmp_path)
    assert_one_line_error(proc, "d_model=32", "64", "resume without")
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in run.iterdir()} == before


def test_new_run_does_not_clobber_old_checkpoints(tmp_path, trained):
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    proc = run_cli("--out-dir", run, "--max-steps", "2", cwd=tmp_path)
    assert_one_line_error(proc, "already holds checkpoints", "--resume", "--overwrite")
    # Resuming from best.pt into its own directory would overwrite the newer last.pt.
    proc = run_cli("--resume", run / "best.pt", "--max-steps", "12", cwd=tmp_path)
    assert_one_line_error(proc, "would overwrite", "--out-dir")
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before


def test_prompt_with_unknown_characters(tmp_path, trained):
    proc = run_cli("generate", "--checkpoint", trained / "last.pt", "--prompt", "naïve €",
                   cwd=tmp_path)
    assert_one_line_error(proc, "prompt", "'€' (U+20AC)", "'ï' (U+00EF)")


@pytest.mark.parametrize("device,fragment", [
    ("nosuchdevice", "unknown device"),
    ("ocl:99", "ocl"),
    pytest.param("cuda", "not available",
                 marks=pytest.mark.skipif(torch.cuda.is_available(), reason="has CUDA")),
])
def test_bad_device(tmp_path, small_text, device, fragment):
    proc = run_cli("--device", device, "--data", small_text, cwd=tmp_path)
    assert_one_line_error(proc, fragment)


def test_ctrl_c_saves_and_exits_130(tmp_path, small_text):
    """SIGINT mid-run: last.pt is written at a step boundary, one line, exit 130, and
    the checkpoint resumes."""
    out = tmp_path / "run"
    args = [f"--{k.replace('_', '-')}={v}" for k, v in TINY.items() if not isinstance(v, bool)]
    cmd = [sys.executable, str(REPO / "train.py"), *args, "--max-steps=100000",
           "--eval-every=0", "--save-every=100000", "--no-progress", "--data", str(small_text),
           "--out-dir", str(out)]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        deadline = time.monotonic() + 120
        log = out / "metrics.jsonl"
        while time.monotonic() < deadline and proc.poll() is None:
            if log.exists() and log.read_text().count('"type": "train"') >= 3:
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted: saved"), err
    step = torch.load(out / "last.pt", weights_only=True)["step"]
    assert step >= 3
    assert max(metrics(out)[0]) == step  # saved at the step boundary it stopped on


# ---------------------------------------------------------------------- generation

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("attn_impl", ["sdpa", "manual"])
def test_kv_cache_greedy_equals_no_cache(device, attn_impl):
    """(f) Greedy generation with the KV cache gives the same tokens as re-encoding the
    whole context each step, also past max_len where the window slides; cached logits
    match a full forward."""
    torch.manual_seed(0)
    cfg = GPTMiniConfig(vocab_size=40, d_model=32, n_heads=2, n_layers=2, d_ff=64,
                        max_len=32, attn_impl=attn_impl)
    model = GPTMini(cfg).to(device).eval()
    prompt = torch.randint(0, 40, (2, 7)).to(device)
    cached = model.generate(prompt, 40, temperature=0, use_cache=True)
    plain = model.generate(prompt, 40, temperature=0, use_cache=False)
    assert cached.shape == (2, 47)
    assert torch.equal(cached, plain)

    idx = cached[:, :20].to(device)
    with torch.no_grad():
        full, _ = model(idx)                                   # (B, 20, V)
        cache = KVCache(cfg.n_layers)
        parts = [model(idx[:, a:b], kv_cache=cache)[0] for a, b in ((0, 5), (5, 12),
                                                                     (12, 13), (13, 20))]
    torch.testing.assert_close(torch.cat(parts, 1).cpu(), full.cpu(), rtol=1e-4, atol=1e-5)


def test_sampling_is_seeded_and_respects_top_k():
    torch.manual_seed(0)
    model = GPTMini(GPTMiniConfig(vocab_size=40, d_model=32, n_heads=2, n_layers=2, d_ff=64,
                                  max_len=32)).eval()
    prompt = torch.tensor([[1, 2, 3]])
    runs = [model.generate(prompt, 20, temperature=1.0, top_k=5, top_p=0.9,
                           generator=torch.Generator().manual_seed(7)) for _ in range(2)]
    assert torch.equal(runs[0], runs[1])
    from models.gpt_mini import sample_next
    logits = torch.randn(3, 40)
    top = set(torch.topk(logits, 3).indices.flatten().tolist())
    g = torch.Generator().manual_seed(0)
    picks = {int(t) for _ in range(50) for t in sample_next(logits, 1.0, 3, 1.0, g)}
    assert picks <= top
    assert torch.equal(sample_next(logits, 0.0), logits.argmax(-1))
    assert torch.equal(sample_next(logits, 1.0, top_p=1e-6, generator=g), logits.argmax(-1))


def test_generate_cli_streams(tmp_path, trained):
    proc = run_cli("generate", "--checkpoint", trained / "last.pt", "--prompt", "Return the",
                   "--max-new-tokens", "30", "--temperature", "0", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Return the") and len(proc.stdout) >= len("Return the") + 30
    again = train.run_generate(train.GenerateConfig(
        checkpoint=str(trained / "last.pt"), prompt="Return the", max_new_tokens=30,
        temperature=0, cache=False), out=io.StringIO())
    assert proc.stdout.rstrip("\n") == again


def test_every_option_has_help(capsys):
    assert train.main(["--help"]) == 0
    text = capsys.readouterr().out
    for f in train.fields(TrainConfig):
        assert "--" + f.name.replace("_", "-") in text
        assert f.metadata["help"]
    assert train.main(["generate", "--help"]) == 0
    text = capsys.readouterr().out
    for f in train.fields(train.GenerateConfig):
        assert "--" + f.name.replace("_", "-") in text
