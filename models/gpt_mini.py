"""GPTMini: a small decoder-only transformer (pre-LN, causal attention, GELU MLP, learned
positions, head tied to the token embedding) with KV-cache generation.

Plain torch.nn / torch.nn.functional that never names a device: it runs wherever its
parameters are (cpu, cuda, ocl). Inputs are (B, T) int64 token ids. Shapes: B batch,
T new tokens, S = past + T attended tokens, C = d_model, nh heads of hs = C / nh.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

ATTN_IMPLS = ("sdpa", "manual")


@dataclass
class GPTMiniConfig:
    vocab_size: int
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 4
    d_ff: int = 512
    max_len: int = 128
    dropout: float = 0.0
    bias: bool = True            # biases in Linear and LayerNorm
    tie_weights: bool = True     # output head shares the token embedding matrix
    attn_impl: str = "sdpa"      # "sdpa": F.scaled_dot_product_attention; "manual": softmax(QK^T)

    def __post_init__(self):
        for name in ("vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "max_len"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of n_heads "
                             f"({self.n_heads})")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.attn_impl not in ATTN_IMPLS:
            raise ValueError(f"attn_impl must be one of {ATTN_IMPLS}, got {self.attn_impl!r}")


class KVCache:
    """Keys and values of every token seen so far, per layer, for incremental decoding."""

    def __init__(self, n_layers: int):
        self.k: list[torch.Tensor | None] = [None] * n_layers  # each (B, nh, S, hs)
        self.v: list[torch.Tensor | None] = [None] * n_layers
        self.length = 0  # S: tokens already in the cache

    def append(self, layer: int, k: torch.Tensor, v: torch.Tensor):
        """Add this step's (B, nh, T, hs) keys/values; return all (B, nh, S, hs) so far."""
        if self.k[layer] is not None:
            k = torch.cat([self.k[layer], k], dim=2)
            v = torch.cat([self.v[layer], v], dim=2)
        self.k[layer], self.v[layer] = k, v
        return k, v


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTMiniConfig):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.dropout = cfg.dropout
        self.attn_impl = cfg.attn_impl
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=cfg.bias)  # fused q, k, v
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=cfg.bias)

    def forward(self, x, future, cache: KVCache | None = None, layer: int = 0):
        # x (B, T, C); future (T, S) bool, True where a key lies after its query.
        B, T, C = x.shape
        hs = C // self.n_heads
        q, k, v = self.qkv(x).split(C, dim=2)                 # each (B, T, C)
        q = q.view(B, T, self.n_heads, hs).transpose(1, 2)    # (B, nh, T, hs)
        k = k.view(B, T, self.n_heads, hs).transpose(1, 2)    # (B, nh, T, hs)
        v = v.view(B, T, self.n_heads, hs).transpose(1, 2)    # (B, nh, T, hs)
        if cache is not None:
            k, v = cache.append(layer, k, v)                  # (B, nh, S, hs)
        S = k.size(2)
        p = self.dropout if self.training else 0.0
        if self.attn_impl == "sdpa":
            if S == T:      # no past: plain causal attention
                y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
            elif T == 1:    # one new token sees every cached one
                y = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
            else:           # several new tokens after a past: is_causal would align top-left
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=future.logical_not(),
                                                   dropout_p=p)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))  # (B, nh, T, S)
            att = att.masked_fill(future, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = F.dropout(att, p=p, training=self.training)
            y = att @ v                                              # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)             # (B, T, C)
        return F.dropout(self.proj(y), p=self.dropout, training=self.training)


class MLP(nn.Module):
    def __init__(self, cfg: GPTMiniConfig):
        super().__init__()
        self.dropout = cfg.dropout
        self.fc = nn.Linear(cfg.d_model, cfg.d_ff, bias=cfg.bias)
        self.proj = nn.Linear(cfg.d_ff, cfg.d_model, bias=cfg.bias)

    def forward(self, x):                      # (B, T, C)
        h = F.gelu(self.fc(x))                 # (B, T, d_ff)
        return F.dropout(self.proj(h), p=self.dropout, training=self.training)  # (B, T, C)


class Block(nn.Module):
    """Pre-LN transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, cfg: GPTMiniConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model, bias=cfg.bias)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model, bias=cfg.bias)
        self.mlp = MLP(cfg)

    def forward(self, x, future, cache=None, layer=0):  # (B, T, C) -> (B, T, C)
        x = x + self.attn(self.ln1(x), future, cache, layer)
        return x + self.mlp(self.ln2(x))


class GPTMini(nn.Module):
    def __init__(self, cfg: GPTMiniConfig):
        super().__init__()
        self.config = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)   # token embedding
        self.wpe = nn.Embedding(cfg.max_len, cfg.d_model)      # learned positions
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model, bias=cfg.bias)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self._tie()
        # (max_len, max_len) True above the diagonal: keys a query must not see. Not
        # saved in checkpoints; it moves with the model.
        future = torch.ones(cfg.max_len, cfg.max_len, dtype=torch.bool).triu(1)
        self.register_buffer("future", future, persistent=False)
        self.apply(self._init_weights)
        # GPT-2: scale the residual projections so the residual stream's variance does
        # not grow with depth.
        for name, p in self.named_parameters():
            if name.endswith("proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layers))

    def _tie(self):
        if self.config.tie_weights:
            self.head.weight = self.wte.weight

    def _apply(self, fn, *args, **kwargs):
        # Moving to a device whose tensors cannot share the CPU TensorImpl type makes
        # nn.Module._apply replace each Parameter by a new one, which would untie the
        # head from the embedding; tie them again afterwards.
        out = super()._apply(fn, *args, **kwargs)
        self._tie()
        return out

    @staticmethod
    def _init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def num_parameters(self, non_embedding: bool = False) -> int:
        """Trainable parameters, a tied matrix counted once; non_embedding leaves out the
        position table (and the token table when it is not also the head)."""
        n = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n -= self.wpe.weight.numel()
            if not self.config.tie_weights:
                n -= self.wte.weight.numel()
        return n

    def forward(self, idx, targets=None, kv_cache: KVCache | None = None):
        """idx (B, T) ids -> logits (B, T, V), and the mean cross-entropy against targets
        (B, T) when given, else None. With kv_cache, idx continues the cached tokens."""
        B, T = idx.shape
        past = kv_cache.length if kv_cache is not None else 0
        if past + T > self.config.max_len:
            raise ValueError(f"sequence of {past + T} tokens is longer than max_len "
                             f"{self.config.max_len}")
        # Slicing the position table equals wpe(arange(past, past + T)) without the arange.
        x = self.wte(idx) + self.wpe.weight[past:past + T]   # (B, T, C)
        x = self.drop(x)
        future = self.future[past:past + T, :past + T]       # (T, S)
        for layer, block in enumerate(self.blocks):
            x = block(x, future, kv_cache, layer)            # (B, T, C)
        if kv_cache is not None:
            kv_cache.length += T
        x = self.ln_f(x)
        logits = self.head(x)                                # (B, T, V)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(B * T, -1), targets.reshape(B * T))
        return logits, loss

    @torch.no_grad()
    def stream(self, idx, max_new_tokens: int, temperature: float = 1.0, top_k: int = 0,
               top_p: float = 1.0, generator: torch.Generator | None = None,
               use_cache: bool = True):
        """Yield max_new_tokens next-token ids, each a (B,) int64 CPU tensor, continuing
        idx (B, T >= 1). Sampling runs on the CPU with `generator`, so a seed gives the
        same text on every device. With use_cache the prompt is encoded once and each
        new token costs one position; once the context passes max_len the window
        slides, absolute positions shift, cached keys go stale and each step re-encodes
        the last max_len tokens, exactly as without the cache."""
        if idx.dim() != 2 or idx.size(1) < 1:
            raise ValueError(f"idx must be (B, T) with T >= 1, got {tuple(idx.shape)}")
        was_training = self.training
        self.eval()
        try:
            max_len = self.config.max_len
            tokens = idx                                            # (B, T) on the model's device
            cache = KVCache(self.config.n_layers) if use_cache else None
            for _ in range(max_new_tokens):
                if cache is not None and tokens.size(1) <= max_len:
                    logits, _ = self(tokens[:, cache.length:], kv_cache=cache)
                else:
                    logits, _ = self(tokens[:, -max_len:])
                nxt = sample_next(logits[:, -1, :].float().cpu(), temperature, top_k,
                                  top_p, generator)                 # (B,)
                tokens = torch.cat([tokens, nxt.to(tokens.device).view(-1, 1)], dim=1)
                yield nxt
        finally:
            self.train(was_training)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens: int, temperature: float = 1.0, top_k: int = 0,
                 top_p: float = 1.0, generator: torch.Generator | None = None,
                 use_cache: bool = True) -> torch.Tensor:
        """idx (B, T) -> (B, T + max_new_tokens) ids on the CPU; see stream()."""
        out = [idx.cpu()]
        for nxt in self.stream(idx, max_new_tokens, temperature, top_k, top_p, generator,
                               use_cache):
            out.append(nxt.view(-1, 1))
        return torch.cat(out, dim=1)


def sample_next(logits: torch.Tensor, temperature: float = 1.0, top_k: int = 0,
                top_p: float = 1.0, generator: torch.Generator | None = None) -> torch.Tensor:
    """Next ids (B,) from logits (B, V): greedy when temperature <= 0, else sampled from
    the temperature-scaled distribution cut to the top_k ids (0 = all) and to the
    smallest set holding top_p of the probability (1.0 = all)."""
    if temperature <= 0:
        return logits.argmax(dim=-1)
    logits = logits / temperature
    if top_k and top_k < logits.size(-1):
        kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]      # (B, 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = torch.sort(logits, dim=-1, descending=True)  # (B, V)
        probs = F.softmax(sorted_logits, dim=-1)
        # Drop an id when the ids ranked above it already hold top_p; the first stays.
        drop = probs.cumsum(dim=-1) - probs > top_p
        sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
        logits = torch.full_like(logits, float("-inf")).scatter(-1, order, sorted_logits)
    probs = F.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1, generator=generator).view(-1)
