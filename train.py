#!/usr/bin/env python3
"""Train GPTMini on text and sample from it, on any torch device (cpu, ocl, cuda).

    python train.py [train] [--device ocl] [options]   train (built-in corpus by default)
    python train.py train --resume runs/gpt-mini/last.pt  continue a run bit for bit
    python train.py generate --prompt "Return the"       stream text from a checkpoint

Device choices go through torch.device(...).type and torch.get_device_module(type), never
string tests. Checkpoints are plain dicts that load with weights_only=True on any device.
Bad input ends with one "error: ..." line on stderr and exit code 2; Ctrl-C saves last.pt
and exits 130.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field, fields

import torch

from models.data import (DataError, WindowSampler, eval_starts, load_corpus,
                         split_tokens, text_digest, windows)
from models.gpt_mini import GPTMini, GPTMiniConfig
from models.tokenizer import (StreamDecoder, UnknownCharactersError, tokenizer_from_dict,
                              train_tokenizer)

FORMAT_VERSION = 1
CHECKPOINT_KIND = "gpt_mini"
# Device types whose AdamW we always run fused; others get it when torch lists them.
FUSED_DEVICE_TYPES = {"cuda", "ocl"}
# Model fields that fix parameter shapes: a checkpoint only resumes with the same ones.
SHAPE_FIELDS = ("vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "max_len", "bias",
                "tie_weights")


def opt(default, help, **kw):
    """A dataclass field carrying its --help line (and argparse extras such as choices)."""
    return field(default=default, metadata={"help": help, **kw})


@dataclass
class TrainConfig:
    # data
    data: str = opt("", "text file, or directory of *.txt files (sorted); empty: the "
                        "built-in corpus of Python standard-library docstrings")
    tokenizer: str = opt("char", "char: one token per character; bpe: byte-level BPE "
                                 "trained on the data", choices=("char", "bpe"))
    vocab_size: int = opt(512, "BPE vocabulary size (bpe tokenizer only)")
    val_fraction: float = opt(0.1, "fraction of the tokens (at the end) held out for "
                                   "validation")
    # model
    d_model: int = opt(128, "width of the residual stream")
    n_heads: int = opt(4, "attention heads (must divide --d-model)")
    n_layers: int = opt(4, "transformer blocks")
    d_ff: int = opt(512, "hidden width of each MLP")
    max_len: int = opt(128, "context length in tokens (training window)")
    dropout: float = opt(0.0, "dropout probability (embeddings, attention, residuals); "
                              "try 0.1 for small data or long runs")
    bias: bool = opt(True, "use biases in Linear and LayerNorm layers")
    tie_weights: bool = opt(True, "tie the output head to the token embedding")
    attn_impl: str = opt("sdpa", "attention: sdpa (F.scaled_dot_product_attention) or "
                                 "manual (explicit softmax(QK^T))",
                         choices=("sdpa", "manual"))
    # optimisation
    batch_size: int = opt(8, "sequences per micro-batch")
    grad_accum: int = opt(1, "micro-batches accumulated per optimizer step")
    max_steps: int = opt(200, "total optimizer steps of the run (sets the LR schedule)")
    lr: float = opt(5e-3, "peak learning rate")
    min_lr_ratio: float = opt(0.1, "final learning rate as a fraction of --lr")
    warmup_steps: int = opt(20, "steps of linear warmup before cosine decay")
    weight_decay: float = opt(0.1, "AdamW weight decay (matrices and embeddings only)")
    beta1: float = opt(0.9, "AdamW beta1")
    beta2: float = opt(0.99, "AdamW beta2")
    grad_clip: float = opt(1.0, "clip the global gradient norm to this; 0 disables")
    optimizer_impl: str = opt("auto", "AdamW kernel: auto (fused where the device "
                                      "supports it, else foreach), fused, foreach, single",
                              choices=("auto", "fused", "foreach", "single"))
    seed: int = opt(1337, "seed for initialisation, dropout and batch sampling")
    # evaluation, logging, checkpoints
    eval_every: int = opt(50, "validate every N steps (and at the start and end); 0: "
                              "only at the end")
    eval_windows: int = opt(64, "validation windows (evenly spaced over the held-out "
                                "tokens)")
    save_every: int = opt(100, "write last.pt every N steps (and at the end)")
    out_dir: str = opt("runs/gpt-mini", "directory for checkpoints, metrics.jsonl and "
                                        "loss_curve.png", per_run=True)
    device: str = opt("cpu", "device: cpu, ocl, ocl:N, cuda, cuda:N")
    resume: str = opt("", "checkpoint to continue from (its options apply unless given "
                          "again)", per_run=True)
    stop_after: int = opt(0, "stop (saving last.pt) after this many steps of this "
                             "invocation, e.g. to fit a job time limit; 0: run to "
                             "--max-steps", per_run=True)
    overwrite: bool = opt(False, "allow a new run to replace checkpoints already in "
                                 "--out-dir", per_run=True)
    threads: int = opt(0, "CPU threads torch may use (torch.set_num_threads); 0: torch's "
                          "default", per_run=True)
    progress: bool = opt(True, "show a progress bar", per_run=True)
    sample_tokens: int = opt(200, "tokens of text to generate at the end; 0: none",
                             per_run=True)
    sample_prompt: str = opt("Return the ", "prompt for the sample at the end",
                             per_run=True)


@dataclass
class GenerateConfig:
    checkpoint: str = opt("", "checkpoint to sample from; empty: runs/gpt-mini/best.pt, "
                              "else runs/gpt-mini/last.pt")
    prompt: str = opt("", "text to continue; empty: start from a newline")
    max_new_tokens: int = opt(200, "tokens to generate")
    # Plain sampling by default: on a small char model, lower temperatures and top-p
    # cuts fall into loops (long runs of spaces) for many seeds.
    temperature: float = opt(1.0, "sampling temperature; below 1 is more conservative, "
                                  "0: greedy")
    top_k: int = opt(0, "sample only among the k most likely tokens; 0: all")
    top_p: float = opt(1.0, "sample only among the most likely tokens holding this "
                             "much probability; 1: all")
    seed: int = opt(1337, "seed for sampling")
    device: str = opt("cpu", "device: cpu, ocl, ocl:N, cuda, cuda:N")
    cache: bool = opt(True, "use the KV cache (--no-cache re-encodes the context each "
                            "token)")


class UserError(Exception):
    """Input the user can fix; main() prints it as one line and exits with code 2."""


class TrainingInterrupted(Exception):
    """Ctrl-C during training, after last.pt was saved; main() exits with code 130."""


# ---------------------------------------------------------------------------- CLI

def build_parser(cls, prog: str, description: str) -> argparse.ArgumentParser:
    """An argparse parser with one --option per dataclass field. Defaults are SUPPRESSed
    so the parsed namespace holds exactly the options given on the command line."""
    parser = argparse.ArgumentParser(prog=prog, usage="%(prog)s [options]",
                                     description=description)
    for f in fields(cls):
        flag = "--" + f.name.replace("_", "-")
        kw = dict(dest=f.name, default=argparse.SUPPRESS,
                  help=f"{f.metadata['help']} (default: {f.default!r})")
        if isinstance(f.default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, **kw)
        else:
            choices = f.metadata.get("choices")
            parser.add_argument(flag, type=type(f.default), choices=choices,
                                metavar=None if choices else f.name.upper(), **kw)
    return parser


def parse_train_args(argv: list[str]) -> TrainConfig:
    """TrainConfig from the command line. With --resume, the checkpoint's options are the
    defaults, except per-run ones (output, progress, ...); --out-dir defaults to the
    checkpoint's directory."""
    parser = build_parser(TrainConfig, "train.py [train]",
                          "Train GPTMini. `python train.py generate --help` for sampling.")
    given = vars(parser.parse_args(argv))
    if not given.get("resume"):
        return TrainConfig(**given)
    ckpt = load_checkpoint(given["resume"])
    names = {f.name for f in fields(TrainConfig) if not f.metadata.get("per_run")}
    saved = ckpt["train_config"] if isinstance(ckpt["train_config"], dict) else {}
    merged = {k: v for k, v in saved.items() if k in names}
    merged["out_dir"] = os.path.dirname(os.path.abspath(given["resume"]))
    merged.update(given)
    return TrainConfig(**merged)


def check_config(cfg: TrainConfig) -> None:
    positive = ("batch_size", "grad_accum", "max_steps", "max_len", "d_model", "n_heads",
                "n_layers", "d_ff", "eval_windows", "save_every")
    for name in positive:
        if getattr(cfg, name) < 1:
            raise UserError(f"--{name.replace('_', '-')} must be at least 1, got "
                            f"{getattr(cfg, name)}")
    if not 0.0 < cfg.val_fraction < 1.0:
        raise UserError(f"--val-fraction must be between 0 and 1, got {cfg.val_fraction}")
    if cfg.lr <= 0:
        raise UserError(f"--lr must be positive, got {cfg.lr}")
    for name in ("eval_every", "stop_after", "warmup_steps", "sample_tokens", "threads"):
        if getattr(cfg, name) < 0:
            raise UserError(f"--{name.replace('_', '-')} must not be negative")


# ------------------------------------------------------------------------- devices

def resolve_device(name: str) -> torch.device:
    """torch.device for name, with an index, or UserError when it does not exist here."""
    type_name = name.split(":", 1)[0]
    why = ""
    if type_name.isidentifier() and not hasattr(torch, type_name):
        # A backend that did not autoload (e.g. TORCH_DEVICE_BACKEND_AUTOLOAD=0) may still
        # be importable as torch_<type>.
        try:
            __import__(f"torch_{type_name}")
        except ImportError:
            why = f" (no torch_{type_name} package is installed)"
        except Exception as e:  # a backend that is installed but fails to load
            why = f" (importing torch_{type_name} failed: {str(e).splitlines()[0][:160]})"
    try:
        dev = torch.device(name)
    except (RuntimeError, ValueError):
        raise UserError(f"unknown device {name!r}{why}; use cpu, or a device type torch "
                        "knows here (ocl, ocl:N once torch_ocl is installed)") from None
    if dev.type == "cpu":
        return dev
    mod = device_module(dev)
    if mod is None or not (hasattr(mod, "is_available") and mod.is_available()):
        raise UserError(f"device {name!r} is not available on this machine (no driver or "
                        f"no {dev.type} device found); use --device cpu")
    count = mod.device_count() if hasattr(mod, "device_count") else 1
    index = dev.index if dev.index is not None else 0
    if index >= count:
        raise UserError(f"device {name!r} does not exist: {count} {dev.type} device(s) "
                        f"found ({dev.type}:0 to {dev.type}:{count - 1})")
    return torch.device(dev.type, index)


def device_module(dev: torch.device):
    """torch.<type> for a non-CPU device (torch.cuda, torch.ocl, ...), or None."""
    if dev.type == "cpu":
        return None
    try:
        return torch.get_device_module(dev.type)
    except (RuntimeError, AttributeError):
        return None


def get_device_rng_state(dev: torch.device):
    mod = device_module(dev)
    if mod is None or not hasattr(mod, "get_rng_state"):
        return None
    try:
        return mod.get_rng_state(dev)
    except TypeError:
        return mod.get_rng_state()


def set_device_rng_state(dev: torch.device, state) -> None:
    mod = device_module(dev)
    if state is None or mod is None or not hasattr(mod, "set_rng_state"):
        return
    try:
        mod.set_rng_state(state, dev)
    except TypeError:
        mod.set_rng_state(state)


def seed_everything(seed: int, dev: torch.device) -> None:
    torch.manual_seed(seed)  # CPU and every registered device type
    mod = device_module(dev)
    if mod is not None and hasattr(mod, "manual_seed"):
        mod.manual_seed(seed)


# ------------------------------------------------------------------------- training

def make_optimizer(model: GPTMini, cfg: TrainConfig, dev: torch.device):
    """AdamW with weight decay on matrices/embeddings only. auto picks the fused kernel on
    devices that have one (torch's list, plus cuda and ocl), else foreach."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    impl = cfg.optimizer_impl
    if impl == "auto":
        try:
            from torch.optim.optimizer import _get_fused_kernels_supported_devices
            fused_ok = dev.type in _get_fused_kernels_supported_devices()
        except ImportError:
            fused_ok = False
        impl = "fused" if dev.type in FUSED_DEVICE_TYPES or fused_ok else "foreach"
    kw = {"fused": True} if impl == "fused" else {"foreach": impl == "foreach"}
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), **kw), impl


def make_scheduler(optimizer, cfg: TrainConfig):
    """Linear warmup to --lr, then cosine decay to min_lr_ratio * --lr at max_steps.
    A plain function (not a callable object) so LambdaLR saves none of its settings and
    a resumed run follows the current --max-steps."""
    warmup, total, floor = cfg.warmup_steps, cfg.max_steps, cfg.min_lr_ratio

    def lr_factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, total - warmup))
        return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)


@torch.no_grad()
def evaluate(model, tokens, starts, cfg: TrainConfig, dev: torch.device) -> float:
    """Mean next-token loss over fixed validation windows. Eval mode turns dropout off,
    so no random numbers are drawn and the training streams stay as they were."""
    was_training = model.training
    model.eval()
    total = 0.0
    for i in range(0, len(starts), cfg.batch_size):
        chunk = starts[i:i + cfg.batch_size]
        x, y = windows(tokens, chunk, cfg.max_len)
        _, loss = model(x.to(dev), y.to(dev))
        total += loss.item() * len(chunk)
    model.train(was_training)
    return total / len(starts)


def to_cpu(obj):
    """A copy of nested dicts/lists of tensors with every tensor on the CPU, so a
    checkpoint does not depend on the device (or backend) that wrote it."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_cpu(v) for v in obj)
    return obj


def save_checkpoint(obj: dict, path: str) -> None:
    """torch.save to a temporary file beside path, fsync, then rename over path: a crash
    or a full disk leaves the old checkpoint whole."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                               dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def load_checkpoint(path: str) -> dict:
    """The checkpoint dict at path (tensors on the CPU), checked to be a GPTMini
    checkpoint of a format this code reads; UserError otherwise."""
    if not os.path.isfile(path):
        raise UserError(f"checkpoint {path} does not exist; check the path (training "
                        "writes <out-dir>/last.pt and best.pt; train first with "
                        "`python train.py`)")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()] or [type(e).__name__]
        first = next((ln for ln in lines if "WeightsUnpickler error" in ln), lines[0])[:160]
        raise UserError(f"cannot read checkpoint {path}: it is corrupt, truncated or not "
                        f"a torch checkpoint ({first}); use another one, e.g. best.pt or "
                        "last.pt of the run") from None
    if not isinstance(ckpt, dict) or ckpt.get("kind") != CHECKPOINT_KIND:
        raise UserError(f"{path} is not a GPTMini checkpoint written by train.py")
    if ckpt.get("format_version") != FORMAT_VERSION:
        raise UserError(f"{path} has checkpoint format {ckpt.get('format_version')}, this "
                        f"train.py reads format {FORMAT_VERSION}; use a matching train.py")
    missing = [k for k in ("train_config", "model_config", "model", "optimizer",
                           "scheduler", "step", "tokenizer", "rng", "data") if k not in ckpt]
    if missing:
        raise UserError(f"checkpoint {path} lacks {', '.join(missing)}; it is damaged, "
                        "use another one")
    return ckpt


def model_from_checkpoint(ckpt: dict, path: str) -> GPTMini:
    try:
        model = GPTMini(GPTMiniConfig(**ckpt["model_config"]))
        model.load_state_dict(ckpt["model"])
    except (TypeError, ValueError, RuntimeError, KeyError) as e:
        raise UserError(f"checkpoint {path} does not hold a loadable GPTMini "
                        f"({str(e).splitlines()[0][:160]}); use another checkpoint") from None
    return model


class MetricsLog:
    """metrics.jsonl in the output directory: one JSON object per line, appended and
    flushed as it happens so a crash loses nothing written before it."""

    def __init__(self, path: str, truncate: bool):
        self.path = path
        self.f = open(path, "w" if truncate else "a", encoding="utf-8")

    def write(self, **record) -> None:
        self.f.write(json.dumps(record) + "\n")
        self.f.flush()

    def close(self) -> None:
        self.f.close()


def read_metrics(path: str) -> tuple[dict, dict]:
    """(train, val) records of metrics.jsonl keyed by step; after a resume the later
    line for a step wins."""
    train, val = {}, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("type") == "train":
                train[rec["step"]] = rec
            elif rec.get("type") == "val":
                val[rec["step"]] = rec
    return dict(sorted(train.items())), dict(sorted(val.items()))


def plot_losses(metrics_path: str, png_path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    train, val = read_metrics(metrics_path)
    fig, ax = plt.subplots(figsize=(7, 4))
    if train:
        steps = list(train)
        losses = [train[s]["loss"] for s in steps]
        ax.plot(steps, losses, color="tab:blue", alpha=0.3, linewidth=1, label="train")
        smooth, ema = [], losses[0]
        for v in losses:
            ema = 0.9 * ema + 0.1 * v
            smooth.append(ema)
        ax.plot(steps, smooth, color="tab:blue", linewidth=1.5, label="train (EMA)")
    if val:
        ax.plot(list(val), [r["val_loss"] for r in val.values()], "o-", color="tab:orange",
                label="validation")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats / token)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    tmp = png_path + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, png_path)


class _StopFlag:
    """SIGINT sets a flag that the loop reads between steps, so Ctrl-C never lands in
    the middle of an optimizer step; a second Ctrl-C raises KeyboardInterrupt at once."""

    def __init__(self):
        self.requested = False
        self._old = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        self.requested = True
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def __exit__(self, *exc):
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)


def _fmt_path(path: str) -> str:
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else path


def run_training(cfg: TrainConfig, log=print) -> list[float]:
    """Train as cfg says; return the training loss of each step this call ran.

    Everything that can fail on bad input (device, data, tokenizer, checkpoint, model
    options) is checked before anything is written, so a failed start or resume leaves
    the output directory as it was. Raises UserError or TrainingInterrupted.
    """
    check_config(cfg)
    dev = resolve_device(cfg.device)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    ckpt = load_checkpoint(cfg.resume) if cfg.resume else None
    out_dir = cfg.out_dir
    last_path, best_path = os.path.join(out_dir, "last.pt"), os.path.join(out_dir, "best.pt")
    # Never replace another run's checkpoints, nor a newer last.pt of this run (as
    # resuming from best.pt into its own directory would), unless told to.
    existing = [p for p in (last_path, best_path) if os.path.exists(p)]
    if existing and not cfg.overwrite and ckpt is None and out_dir == TrainConfig().out_dir:
        # A fresh run with the default --out-dir (e.g. the quickstart run twice): keep the
        # earlier run and write this one next to it instead of refusing.
        n = 2
        while any(os.path.exists(os.path.join(f"{out_dir}-{n}", f)) for f in ("last.pt", "best.pt")):
            n += 1
        out_dir = cfg.out_dir = f"{out_dir}-{n}"
        last_path, best_path = os.path.join(out_dir, "last.pt"), os.path.join(out_dir, "best.pt")
        existing = []
        log(f"{TrainConfig().out_dir} holds an earlier run; writing this one to {out_dir}")
    if existing and not cfg.overwrite:
        if ckpt is None or not os.path.samefile(os.path.dirname(os.path.abspath(cfg.resume)),
                                                out_dir):
            raise UserError(f"{out_dir} already holds checkpoints of another run; continue "
                            f"it with --resume {_fmt_path(last_path)}, pick a new --out-dir, "
                            "or pass --overwrite")
        if os.path.exists(last_path) and not os.path.samefile(cfg.resume, last_path):
            raise UserError(f"resuming from {cfg.resume} would overwrite the newer "
                            f"{_fmt_path(last_path)}; pass a new --out-dir to branch off, "
                            "or --overwrite")

    # Data and tokenizer: a resumed run keeps the checkpoint's tokenizer.
    text, source = load_corpus(cfg.data)
    digest = text_digest(text)
    if ckpt is None:
        if cfg.tokenizer == "bpe" and cfg.vocab_size < 257:
            raise UserError(f"--vocab-size must be at least 257 for the bpe tokenizer, got "
                            f"{cfg.vocab_size}")
        tokenizer = train_tokenizer(cfg.tokenizer, text, cfg.vocab_size)
    else:
        try:
            tokenizer = tokenizer_from_dict(ckpt["tokenizer"])
        except ValueError as e:
            raise UserError(f"checkpoint {cfg.resume} has a damaged tokenizer ({e}); use "
                            "another one") from None
        if tokenizer.kind != cfg.tokenizer:
            raise UserError(f"checkpoint {cfg.resume} uses the {tokenizer.kind} tokenizer, "
                            f"not {cfg.tokenizer}; resume without --tokenizer")
        if not isinstance(ckpt["data"], dict) or ckpt["data"].get("sha256") != digest:
            print(f"warning: the training text ({source}) differs from the one checkpoint "
                  f"{cfg.resume} was trained on; losses will not match an uninterrupted run",
                  file=sys.stderr)
    try:
        tokens = torch.tensor(tokenizer.encode(text), dtype=torch.long)  # (N,)
    except UnknownCharactersError as e:
        raise UserError(f"the training text has characters the checkpoint's tokenizer does "
                        f"not know ({e}); resume on the original data") from None
    train_tokens, val_tokens = split_tokens(tokens, cfg.val_fraction, cfg.max_len + 1)

    try:
        mcfg = GPTMiniConfig(vocab_size=tokenizer.vocab_size, d_model=cfg.d_model,
                             n_heads=cfg.n_heads, n_layers=cfg.n_layers, d_ff=cfg.d_ff,
                             max_len=cfg.max_len, dropout=cfg.dropout, bias=cfg.bias,
                             tie_weights=cfg.tie_weights, attn_impl=cfg.attn_impl)
    except ValueError as e:
        raise UserError(f"bad model options: {e}") from None
    if ckpt is not None:
        old = ckpt["model_config"]
        diff = [f"{k}={old.get(k)!r} (asked {getattr(mcfg, k)!r})"
                for k in SHAPE_FIELDS if old.get(k) != getattr(mcfg, k)]
        if diff:
            raise UserError(f"checkpoint {cfg.resume} has another model shape: "
                            f"{', '.join(diff)}; resume without those options, or start a "
                            "new run with a new --out-dir")

    # Model on the CPU first, so initial weights are the same on every device.
    seed_everything(cfg.seed, dev)
    model = GPTMini(mcfg)
    if ckpt is not None:
        try:
            model.load_state_dict(ckpt["model"])
        except RuntimeError as e:
            raise UserError(f"checkpoint {cfg.resume} has unusable weights "
                            f"({str(e).splitlines()[0][:160]}); use another one") from None
    model.to(dev)
    optimizer, impl = make_optimizer(model, cfg, dev)
    scheduler = make_scheduler(optimizer, cfg)
    sampler = WindowSampler(train_tokens, cfg.max_len, cfg.batch_size, seed=cfg.seed + 1)
    step, best_val = 0, math.inf
    if ckpt is not None:
        try:
            # After the model is on the device: load_state_dict moves the state to the
            # parameters' device.
            optimizer.load_state_dict(ckpt["optimizer"])
            scheduler.load_state_dict(ckpt["scheduler"])
            sampler.load_state_dict(ckpt["data"]["sampler"])
            step = int(ckpt["step"])
            best_val = ckpt["best_val_loss"] if ckpt.get("best_val_loss") is not None else math.inf
            rng = ckpt["rng"]
            torch.set_rng_state(rng["cpu"])
            if rng.get("device_type") == dev.type:
                set_device_rng_state(dev, rng.get("device"))
        except (KeyError, ValueError, RuntimeError, TypeError) as e:
            raise UserError(f"checkpoint {cfg.resume} has unusable training state "
                            f"({str(e).splitlines()[0][:160]}); use another one") from None
        # An explicit new --lr applies from here on (the schedule's shape is kept).
        scheduler.base_lrs = [cfg.lr for _ in scheduler.base_lrs]

    if step >= cfg.max_steps:
        log(f"checkpoint is at step {step}, already at --max-steps {cfg.max_steps}; "
            "nothing to do (raise --max-steps to train longer)")
        return []

    # From here on files are written.
    os.makedirs(out_dir, exist_ok=True)
    if ckpt is None and cfg.overwrite:
        with contextlib.suppress(FileNotFoundError):
            os.remove(best_path)
    metrics = MetricsLog(os.path.join(out_dir, "metrics.jsonl"), truncate=ckpt is None)
    if ckpt is not None:
        metrics.write(type="resume", step=step, checkpoint=cfg.resume)

    tokens_per_step = cfg.batch_size * cfg.grad_accum * cfg.max_len
    starts = eval_starts(val_tokens.numel(), cfg.max_len, cfg.eval_windows)
    log(f"data: {source}: {len(text):,} chars, {tokens.numel():,} tokens "
        f"({tokenizer.kind} tokenizer, vocab {tokenizer.vocab_size}); train "
        f"{train_tokens.numel():,} / val {val_tokens.numel():,}")
    log(f"model: {model.num_parameters():,} parameters; device {dev}; AdamW {impl}; "
        f"{'resuming at' if ckpt else 'starting at'} step {step} of {cfg.max_steps}")

    def state(step: int) -> dict:
        return {
            "format_version": FORMAT_VERSION,
            "kind": CHECKPOINT_KIND,
            "torch_version": str(torch.__version__),  # TorchVersion is not weights_only-safe
            "train_config": asdict(cfg),
            "model_config": asdict(mcfg),
            "model": to_cpu(model.state_dict()),
            "optimizer": to_cpu(optimizer.state_dict()),
            "scheduler": scheduler.state_dict(),
            "step": step,
            "epoch": sampler.batches * cfg.batch_size * cfg.max_len / train_tokens.numel(),
            "best_val_loss": best_val if math.isfinite(best_val) else None,
            "tokenizer": tokenizer.to_dict(),
            "rng": {"cpu": torch.get_rng_state(), "device_type": dev.type,
                    "device": to_cpu(get_device_rng_state(dev))},
            "data": {"sampler": sampler.state_dict(), "sha256": digest, "source": source},
        }

    def validate(step: int) -> float:
        val = evaluate(model, val_tokens, starts, cfg, dev)
        metrics.write(type="val", step=step, val_loss=val, val_ppl=math.exp(min(val, 50.0)))
        return val

    from tqdm import tqdm

    losses: list[float] = []
    bar = tqdm(total=cfg.max_steps, initial=step, disable=not cfg.progress, unit="step",
               dynamic_ncols=True, file=sys.stderr)
    say = bar.write if cfg.progress else log
    start_step = step
    try:
        with _StopFlag() as stop:
            if ckpt is None and cfg.eval_every:
                val = validate(step)
                say(f"step {step}: val loss {val:.4f}, ppl {math.exp(val):.1f}")
            model.train()
            t_last = time.perf_counter()
            while step < cfg.max_steps:
                lr = optimizer.param_groups[0]["lr"]
                loss_sum = torch.zeros((), device=dev)
                for _ in range(cfg.grad_accum):
                    x, y = sampler.next_batch()                        # (B, T) each
                    # Blocking copies: x and y are temporaries, and a non_blocking copy
                    # from pageable memory would rely on each backend to stage it.
                    _, loss = model(x.to(dev), y.to(dev))
                    (loss / cfg.grad_accum).backward()
                    loss_sum += loss.detach()
                grad_norm = None
                if cfg.grad_clip > 0:
                    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                scheduler.step()
                step += 1
                loss_val = loss_sum.item() / cfg.grad_accum  # waits for the device
                now = time.perf_counter()
                tok_s = tokens_per_step / max(now - t_last, 1e-9)
                t_last = now
                if not math.isfinite(loss_val):
                    raise UserError(f"training diverged: loss is {loss_val} at step {step}; "
                                    "lower --lr or raise --warmup-steps (checkpoints kept "
                                    "as they were)")
                losses.append(loss_val)
                metrics.write(type="train", step=step, loss=loss_val, lr=lr,
                              grad_norm=None if grad_norm is None else float(grad_norm),
                              tokens_per_s=round(tok_s, 1))
                bar.set_postfix(loss=f"{loss_val:.4f}", lr=f"{lr:.2e}",
                                tok_s=f"{tok_s:,.0f}", refresh=False)
                bar.update(1)

                done = step >= cfg.max_steps
                paused = cfg.stop_after and step - start_step >= cfg.stop_after
                if done or (cfg.eval_every and step % cfg.eval_every == 0):
                    val = validate(step)
                    say(f"step {step}: train loss {loss_val:.4f}, val loss {val:.4f}, "
                        f"ppl {math.exp(val):.1f}")
                    if val < best_val:
                        best_val = val
                        save_checkpoint(state(step), best_path)
                if done or paused or stop.requested or step % cfg.save_every == 0:
                    save_checkpoint(state(step), last_path)
                if stop.requested:
                    raise TrainingInterrupted(
                        f"interrupted: saved {_fmt_path(last_path)} at step {step}; continue "
                        f"with: python train.py --resume {_fmt_path(last_path)}")
                if paused:
                    break
                t_last = time.perf_counter()
    finally:
        bar.close()
        metrics.close()

    plot_losses(metrics.path, os.path.join(out_dir, "loss_curve.png"))
    log(f"saved {_fmt_path(last_path)} (step {step}); best val loss {best_val:.4f} in "
        f"{_fmt_path(best_path)}; curve in {_fmt_path(os.path.join(out_dir, 'loss_curve.png'))}")
    if cfg.sample_tokens:
        log("sample:")
        g = GenerateConfig()
        write_sample(model, tokenizer, cfg.sample_prompt, cfg.sample_tokens, dev,
                     g.temperature, g.top_k, g.top_p, seed=cfg.seed)
    return losses


# ----------------------------------------------------------------------- generation

def write_sample(model, tokenizer, prompt: str, max_new_tokens: int, dev: torch.device,
                 temperature: float, top_k: int, top_p: float, seed: int,
                 use_cache: bool = True, out=None) -> str:
    """Stream a continuation of prompt to out (stdout), flushing after every token;
    return the whole text (prompt included)."""
    out = out or sys.stdout
    try:
        ids = tokenizer.encode(prompt)
    except UnknownCharactersError as e:
        raise UserError(f"the prompt has characters this checkpoint's char tokenizer does "
                        f"not know: {e.args[0].split(': ', 1)[1]}; remove or replace "
                        "them") from None
    shown = prompt
    if not ids:  # an empty prompt starts after a newline, or at token 0
        try:
            ids = tokenizer.encode("\n") or [0]
        except UnknownCharactersError:
            ids = [0]
        shown = ""
    out.write(shown)
    out.flush()
    decoder = StreamDecoder(tokenizer, ids)
    generator = torch.Generator().manual_seed(seed)
    idx = torch.tensor([ids], dtype=torch.long, device=dev)  # (1, T)
    for nxt in model.stream(idx, max_new_tokens, temperature, top_k, top_p, generator,
                            use_cache):
        piece = decoder.push(int(nxt))
        if piece:
            out.write(piece)
            out.flush()
    out.write(decoder.flush() + "\n")
    out.flush()
    return shown + tokenizer.decode(decoder.ids[len(ids):])


def run_generate(gcfg: GenerateConfig, out=None) -> str:
    dev = resolve_device(gcfg.device)
    path = gcfg.checkpoint
    if not path:
        default_dir = TrainConfig().out_dir
        best = os.path.join(default_dir, "best.pt")
        path = best if os.path.exists(best) else os.path.join(default_dir, "last.pt")
    if gcfg.max_new_tokens < 0:
        raise UserError("--max-new-tokens must not be negative")
    if not 0.0 < gcfg.top_p <= 1.0:
        raise UserError(f"--top-p must be in (0, 1], got {gcfg.top_p}")
    ckpt = load_checkpoint(path)
    try:
        tokenizer = tokenizer_from_dict(ckpt["tokenizer"])
    except ValueError as e:
        raise UserError(f"checkpoint {path} has a damaged tokenizer ({e})") from None
    model = model_from_checkpoint(ckpt, path).to(dev).eval()
    return write_sample(model, tokenizer, gcfg.prompt, gcfg.max_new_tokens, dev,
                        gcfg.temperature, gcfg.top_k, gcfg.top_p, gcfg.seed,
                        use_cache=gcfg.cache, out=out)


# ----------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code (0 ok, 2 bad input, 130 Ctrl-C)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv.pop(0) if argv and argv[0] in ("train", "generate") else "train"
    try:
        if command == "generate":
            parser = build_parser(GenerateConfig, "train.py generate",
                                  "Stream text from a GPTMini checkpoint.")
            run_generate(GenerateConfig(**vars(parser.parse_args(argv))))
        else:
            run_training(parse_train_args(argv))
        return 0
    except SystemExit as e:  # argparse: --help, or a bad option (already reported)
        return e.code if isinstance(e.code, int) else 2
    except (UserError, DataError, UnknownCharactersError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except TrainingInterrupted as e:
        print(e, file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("interrupted; nothing new was saved", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `python train.py generate | head`
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")
        return 0


if __name__ == "__main__":
    sys.exit(main())
