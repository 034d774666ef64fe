"""Tokenizers of models/tokenizer.py: exact round trips (whitespace, newlines, Unicode),
plain-data serialisation that survives torch.save/torch.load(weights_only=True), and the
char tokenizer's error on unknown characters. CPU only; no device involved."""

import io
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.data import stdlib_docstrings  # noqa: E402
from models.tokenizer import (BPETokenizer, CharTokenizer, StreamDecoder,  # noqa: E402
                              UnknownCharactersError, tokenizer_from_dict, train_tokenizer)

SAMPLES = [
    "",
    "\n",
    "plain words",
    "  leading and trailing spaces  ",
    "tabs\tand\t\tdouble tabs\n\n\nblank lines\r\nCRLF\rCR",
    "unicode: héllo wörld, naïve café, 你好世界, Ελληνικά, emoji 🙂👍🏽, nbsp\u00a0here",
    "\u200bzero width, combining e\u0301, \U0001f600 astral",
]


@pytest.fixture(scope="module")
def corpus():
    # Plenty of text, plus every sample so the char tokenizer knows their characters.
    return stdlib_docstrings(200_000) + "".join(SAMPLES)


@pytest.fixture(scope="module")
def bpe(corpus):
    return BPETokenizer.train(corpus, vocab_size=400)


@pytest.mark.parametrize("text", SAMPLES)
def test_char_round_trip(corpus, text):
    tok = CharTokenizer.train(corpus)
    ids = tok.encode(text)
    assert len(ids) == len(text)
    assert tok.decode(ids) == text


@pytest.mark.parametrize("text", SAMPLES + ["text the BPE never saw: ∮ E⋅da = Q, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"])
def test_bpe_round_trip(bpe, text):
    ids = bpe.encode(text)
    assert all(0 <= i < bpe.vocab_size for i in ids)
    assert bpe.decode(ids) == text


def test_bpe_compresses_and_round_trips_corpus(bpe, corpus):
    ids = bpe.encode(corpus)
    assert bpe.vocab_size == 400
    assert len(ids) < 0.7 * len(corpus)  # merges were learned
    assert bpe.decode(ids) == corpus


@pytest.mark.parametrize("kind", ["char", "bpe"])
def test_serialises_as_plain_data(corpus, kind):
    tok = train_tokenizer(kind, corpus, 300)
    data = tok.to_dict()

    def plain(x):
        if isinstance(x, dict):
            return all(isinstance(k, str) and plain(v) for k, v in x.items())
        if isinstance(x, (list, tuple)):
            return all(plain(v) for v in x)
        return isinstance(x, (str, int, float, bool, type(None)))

    assert plain(data)
    buf = io.BytesIO()
    torch.save({"tokenizer": data}, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=True)["tokenizer"]
    again = tokenizer_from_dict(loaded)
    assert again.kind == kind and again.vocab_size == tok.vocab_size
    for text in SAMPLES:
        assert again.encode(text) == tok.encode(text)
        assert again.decode(tok.encode(text)) == text


def test_char_unknown_characters_named():
    tok = CharTokenizer.train("abc \n")
    with pytest.raises(UnknownCharactersError) as info:
        tok.encode("a€bé c€")
    assert isinstance(info.value, ValueError)
    assert info.value.chars == ["é", "€"]
    msg = str(info.value)
    assert "'é' (U+00E9)" in msg and "'€' (U+20AC)" in msg


def test_bad_tokenizer_data():
    with pytest.raises(ValueError):
        tokenizer_from_dict({"kind": "bpe", "json": "{not json"})
    with pytest.raises(ValueError):
        tokenizer_from_dict({"kind": "wordpiece"})
    with pytest.raises(ValueError):
        BPETokenizer.train("abc", vocab_size=100)


@pytest.mark.parametrize("kind", ["char", "bpe"])
def test_stream_decoder_reassembles_text(corpus, kind):
    tok = train_tokenizer(kind, corpus, 300)
    prompt, rest = "héllo ", "wörld 你好 🙂👍🏽\n  end"
    dec = StreamDecoder(tok, tok.encode(prompt))
    pieces = [dec.push(i) for i in tok.encode(rest)]
    pieces.append(dec.flush())
    assert "".join(pieces) == rest
    assert all("\ufffd" not in p for p in pieces)  # never prints half a character
