"""Tokenizers for GPTMini: character-level, and byte-level BPE trained with the
`tokenizers` library. Both decode back to the exact text (whitespace included) and turn
into plain data (str/dict/list) with to_dict(), so checkpoints load with weights_only=True.
"""

from __future__ import annotations


class UnknownCharactersError(ValueError):
    """Text holds characters a char tokenizer never saw; .chars lists them, sorted."""

    def __init__(self, chars: list[str]):
        self.chars = chars
        shown = ", ".join(f"{c!r} (U+{ord(c):04X})" for c in chars[:10])
        more = f" and {len(chars) - 10} more" if len(chars) > 10 else ""
        super().__init__(f"{len(chars)} character(s) unknown to the char tokenizer: "
                         f"{shown}{more}")


class CharTokenizer:
    """One token per Unicode character of the training text (ids in sorted order)."""

    kind = "char"

    def __init__(self, chars: str):
        self.chars = "".join(sorted(set(chars)))
        self.stoi = {c: i for i, c in enumerate(self.chars)}

    @classmethod
    def train(cls, text: str) -> "CharTokenizer":
        return cls(text)

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> list[int]:
        stoi = self.stoi
        try:
            return [stoi[c] for c in text]
        except KeyError:
            raise UnknownCharactersError(sorted(set(text) - stoi.keys())) from None

    def decode(self, ids) -> str:
        chars = self.chars
        return "".join(chars[i] for i in ids)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "chars": self.chars}


class BPETokenizer:
    """Byte-level BPE (GPT-2 style): any text encodes, with no unknown tokens."""

    kind = "bpe"

    def __init__(self, tok):
        self._tok = tok

    @classmethod
    def train(cls, text: str, vocab_size: int = 512) -> "BPETokenizer":
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

        if vocab_size < 257:
            raise ValueError(f"BPE vocab_size must be at least 257 (256 bytes + merges), "
                             f"got {vocab_size}")
        tok = Tokenizer(models.BPE())
        # No prefix space and no normalizer: decode(encode(s)) == s, byte for byte.
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, min_frequency=2, show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
        tok.train_from_iterator(text.splitlines(keepends=True) or [text], trainer)
        return cls(tok)

    @property
    def vocab_size(self) -> int:
        return self._tok.get_vocab_size()

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text).ids

    def decode(self, ids) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=False)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "json": self._tok.to_str()}

    @classmethod
    def from_json(cls, text: str) -> "BPETokenizer":
        from tokenizers import Tokenizer

        return cls(Tokenizer.from_str(text))


def train_tokenizer(kind: str, text: str, vocab_size: int = 512):
    """A new tokenizer of the given kind ("char" or "bpe") fitted to text."""
    if kind == "char":
        return CharTokenizer.train(text)
    if kind == "bpe":
        return BPETokenizer.train(text, vocab_size)
    raise ValueError(f"unknown tokenizer kind {kind!r}; use 'char' or 'bpe'")


def tokenizer_from_dict(d: dict):
    """Inverse of to_dict(); raises ValueError on data that is not a tokenizer."""
    kind = d.get("kind") if isinstance(d, dict) else None
    if kind == "char" and isinstance(d.get("chars"), str):
        return CharTokenizer(d["chars"])
    if kind == "bpe" and isinstance(d.get("json"), str):
        try:
            return BPETokenizer.from_json(d["json"])
        except Exception as e:  # the Rust side raises its own exception type
            raise ValueError(f"bad BPE tokenizer data: {e}") from None
    raise ValueError(f"not tokenizer data (kind={kind!r})")


class StreamDecoder:
    """Turns ids arriving one at a time into text pieces to print as they come.

    Byte-level BPE may split one character over several tokens; a piece is held back
    while the decoded text ends in an incomplete UTF-8 sequence (shown as U+FFFD).
    """

    def __init__(self, tokenizer, ids=()):
        self.tokenizer = tokenizer
        self.ids = list(ids)
        self.done = len(tokenizer.decode(self.ids))

    def push(self, token_id: int) -> str:
        self.ids.append(int(token_id))
        text = self.tokenizer.decode(self.ids)
        if text.endswith("\ufffd"):
            return ""
        piece, self.done = text[self.done:], len(text)
        return piece

    def flush(self) -> str:
        text = self.tokenizer.decode(self.ids)
        piece, self.done = text[self.done:], len(text)
        return piece
