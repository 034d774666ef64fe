"""Training text and batches for GPTMini.

The default corpus is built on the spot from the docstrings of a fixed, sorted list of
standard-library modules, so every machine has it without a download. Batches are random
contiguous windows of token ids drawn from a CPU torch.Generator whose state is the
"data position" saved in checkpoints. Token ids are 1-D int64 CPU tensors throughout.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import warnings
from pathlib import Path

import torch


class DataError(ValueError):
    """Bad training data the user can fix (missing, empty, not UTF-8, too small)."""


BUILTIN_NAME = "<stdlib docstrings>"

# Fixed and sorted so the corpus is the same on every run of one Python version. Only
# modules that are cheap and side-effect free to import; any that a given Python lacks
# are skipped, which is also deterministic for that installation.
STDLIB_MODULES = (
    "abc", "argparse", "array", "ast", "asyncio", "base64", "bisect", "builtins", "bz2",
    "calendar", "cmath", "codecs", "collections", "colorsys", "configparser",
    "contextlib", "copy", "csv", "dataclasses", "datetime", "decimal", "difflib", "dis",
    "email", "enum", "filecmp", "fnmatch", "fractions", "ftplib", "functools", "gc",
    "getopt", "gettext", "glob", "graphlib", "gzip", "hashlib", "heapq", "hmac", "html",
    "http.client", "imaplib", "inspect", "io", "ipaddress", "itertools", "json",
    "keyword", "linecache", "locale", "logging", "lzma", "mailbox", "math", "mimetypes",
    "numbers", "operator", "os", "pathlib", "pickle", "pkgutil", "platform", "plistlib",
    "poplib", "pprint", "queue", "quopri", "random", "re", "reprlib", "sched", "secrets",
    "selectors", "shelve", "shlex", "shutil", "signal", "smtplib", "socket", "sqlite3",
    "statistics", "string", "struct", "subprocess", "symtable", "sys", "tarfile",
    "tempfile", "textwrap", "threading", "time", "timeit", "tokenize", "trace",
    "traceback", "types", "typing", "unicodedata", "unittest", "urllib.parse",
    "urllib.request", "uuid", "warnings", "wave", "weakref", "xml.dom.minidom",
    "zipfile", "zlib",
)


# Process-wide hooks that test runners, debuggers and IDEs replace at run time (pytest installs
# its own sys.unraisablehook, threading.excepthook, warnings.showwarning, ...): whether the
# original is there depends on the process, so the corpus leaves them out.
_REPLACEABLE_HOOKS = frozenset({"excepthook", "displayhook", "breakpointhook", "unraisablehook",
                                "showwarning", "formatwarning", "settrace", "setprofile"})


def _docs_of(mod) -> list[tuple[str, str]]:
    """(qualified name, docstring) of a module, the public classes and functions it
    defines (itself or in its C accelerator "_name"), and their methods, in sorted-name
    order. Objects merely imported there are skipped: which of those a module holds can
    depend on what else the process imported (lazy attributes), and the corpus must not.
    """
    out = [(mod.__name__, inspect.getdoc(mod))]
    home = {mod.__name__, "_" + mod.__name__}
    for name, obj in sorted(vars(mod).items()):
        if name.startswith("_") or not (inspect.isclass(obj) or inspect.isroutine(obj)):
            continue
        if name in _REPLACEABLE_HOOKS:
            continue
        if getattr(obj, "__module__", None) not in home:
            continue
        out.append((f"{mod.__name__}.{name}", inspect.getdoc(obj)))
        if inspect.isclass(obj):
            for mname, member in sorted(vars(obj).items()):
                if mname.startswith("_") or not inspect.isroutine(member):
                    continue
                out.append((f"{mod.__name__}.{name}.{mname}", inspect.getdoc(member)))
    return out


@functools.lru_cache(maxsize=4)
def stdlib_docstrings(max_chars: int = 1_000_000) -> str:
    """The built-in corpus: standard-library docstrings, at most max_chars characters.

    Each entry is "name:\\n<docstring>\\n\\n"; a docstring seen before (inherited or
    re-exported) is skipped; the text stops before the entry that would pass max_chars.
    """
    parts: list[str] = []
    seen: set[str] = set()
    size = 0
    for modname in STDLIB_MODULES:
        # Importing and reading some (deprecated) members warns; the corpus should not.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                docs = _docs_of(importlib.import_module(modname))
            except ImportError:
                continue
        for qualname, doc in docs:
            if not doc or doc in seen:
                continue
            seen.add(doc)
            entry = f"{qualname}:\n{doc}\n\n"
            if size + len(entry) > max_chars:
                return "".join(parts)
            parts.append(entry)
            size += len(entry)
    return "".join(parts)


def read_text(path: str) -> str:
    """Text of a file, or of all *.txt files in a directory (sorted by name) joined with
    newlines. Raises DataError with what to do when there is nothing usable."""
    p = Path(path)
    if not p.exists():
        raise DataError(f"data path {path} does not exist; pass an existing file or "
                        "directory of .txt files to --data, or omit --data for the "
                        "built-in corpus")
    files = sorted(p.glob("*.txt")) if p.is_dir() else [p]
    if not files:
        raise DataError(f"data directory {path} holds no *.txt files; add some or pass "
                        "a file to --data")
    texts = []
    for f in files:
        try:
            # newline="" keeps "\r\n" as it is, so decoding reproduces the file exactly.
            with open(f, encoding="utf-8", newline="") as fh:
                texts.append(fh.read())
        except UnicodeDecodeError as e:
            raise DataError(f"data file {f} is not UTF-8 text ({e.reason} at byte "
                            f"{e.start}); convert it to UTF-8") from None
        except OSError as e:
            raise DataError(f"cannot read data file {f}: {e.strerror}") from None
    # A file that does not end in a newline gets one, so files do not run together.
    text = "".join(t if t.endswith("\n") or i == len(texts) - 1 else t + "\n"
                   for i, t in enumerate(texts))
    if not text.strip():
        raise DataError(f"data {path} is empty; give it some text")
    return text


def load_corpus(path: str | None) -> tuple[str, str]:
    """(text, name): the user's file or directory, or the built-in corpus when path is
    empty or None."""
    if not path:
        return stdlib_docstrings(), BUILTIN_NAME
    return read_text(path), str(path)


def text_digest(text: str) -> str:
    """sha256 of the text, saved in checkpoints to notice a resume on different data."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def split_tokens(tokens: torch.Tensor, val_fraction: float,
                 window: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Split (N,) token ids into train (first part) and validation (last val_fraction);
    each must hold at least one window of `window` tokens."""
    n = tokens.numel()
    n_val = int(round(n * val_fraction))
    n_train = n - n_val
    if n < window:
        raise DataError(f"corpus is too small: {n} tokens, but one training window needs "
                        f"{window} (max_len + 1); add text or lower --max-len")
    if n_train < window or n_val < window:
        raise DataError(f"corpus of {n} tokens is too small to split: train {n_train} "
                        f"and validation {n_val} tokens must each hold one window of "
                        f"{window} (max_len + 1); add text, lower --max-len, or change "
                        "--val-fraction")
    return tokens[:n_train], tokens[n_train:]


def windows(tokens: torch.Tensor, starts: list[int], length: int):
    """Inputs and next-token targets, both (B, length), of windows starting at starts."""
    w = torch.stack([tokens[s:s + length + 1] for s in starts])  # (B, length + 1)
    return w[:, :-1].contiguous(), w[:, 1:].contiguous()


class WindowSampler:
    """Random contiguous windows from the training tokens, reproducible from a seed.

    Its generator lives on the CPU whatever the model's device, so every device sees the
    same batches; state_dict() is the data position saved in checkpoints.
    """

    def __init__(self, tokens: torch.Tensor, length: int, batch_size: int, seed: int):
        self.tokens = tokens
        self.length = length
        self.batch_size = batch_size
        self.generator = torch.Generator().manual_seed(seed)
        self.batches = 0

    def next_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        hi = self.tokens.numel() - self.length  # exclusive bound on a window's start
        starts = torch.randint(0, hi, (self.batch_size,), generator=self.generator)
        self.batches += 1
        return windows(self.tokens, starts.tolist(), self.length)

    def state_dict(self) -> dict:
        return {"generator": self.generator.get_state(), "batches": self.batches}

    def load_state_dict(self, state: dict) -> None:
        self.generator.set_state(state["generator"])
        self.batches = int(state["batches"])


def eval_starts(n_tokens: int, length: int, n_windows: int) -> list[int]:
    """Evenly spaced window starts over the validation tokens: fixed, so validation
    needs no random numbers and never disturbs the training streams."""
    last = n_tokens - length - 1
    n = max(1, min(n_windows, last + 1))
    if n == 1:
        return [0]
    return [round(i * last / (n - 1)) for i in range(n)]
