"""GPTMini model, tokenizers and training data for torch_ocl's end-to-end example
(train.py). Nothing here names a device."""

from .data import DataError, WindowSampler, load_corpus, stdlib_docstrings
from .gpt_mini import GPTMini, GPTMiniConfig, KVCache, sample_next
from .tokenizer import (BPETokenizer, CharTokenizer, StreamDecoder, UnknownCharactersError,
                        tokenizer_from_dict, train_tokenizer)

__all__ = [
    "BPETokenizer", "CharTokenizer", "DataError", "GPTMini", "GPTMiniConfig", "KVCache",
    "StreamDecoder", "UnknownCharactersError", "WindowSampler", "load_corpus",
    "sample_next", "stdlib_docstrings", "tokenizer_from_dict", "train_tokenizer",
]
