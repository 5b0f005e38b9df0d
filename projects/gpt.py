"""A decoder-only transformer (GPT) written with ``minitensor.nn`` the way a PyTorch user writes one.

The layout is nanoGPT's, so a PyTorch user finds every name where they expect it::

    GPT
      transformer.wte   Embedding(vocab_size, n_embd)      token embeddings (tied to lm_head.weight)
      transformer.wpe   Embedding(block_size, n_embd)      learned position embeddings
      transformer.drop  Dropout
      transformer.h     ModuleList of n_layer Blocks:
                          x = x + attn(ln_1(x))            causal multi-head self-attention
                          x = x + mlp(ln_2(x))             Linear(d, 4d) -> GELU -> Linear(4d, d)
      transformer.ln_f  LayerNorm(n_embd)
      lm_head           Linear(n_embd, vocab_size, bias=False), weight shared with wte

Attention is ``F.scaled_dot_product_attention(q, k, v, is_causal=True)`` over (B, n_head, T, head_dim).
Initialisation follows GPT-2: N(0, 0.02) weights and embeddings, zero biases, and the residual
projections (``c_proj``) scaled down by 1/sqrt(2 n_layer).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

import minitensor as mt
from minitensor import nn, optim
from minitensor.errors import DTypeError, ShapeError
from minitensor.nn import functional as F  # noqa: N812 - torch's spelling


@dataclass
class GPTConfig:
    """Sizes of a :class:`GPT`: ``n_embd`` must be divisible by ``n_head``."""

    vocab_size: int
    block_size: int = 128
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = True

    def __post_init__(self) -> None:
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"GPTConfig.{name} must be a positive int, got {value!r}")
        if self.n_embd % self.n_head:
            raise ValueError(f"GPTConfig: n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"GPTConfig.dropout must be in [0, 1), got {self.dropout}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention where position t sees positions <= t; one (d, 3d) projection makes q, k and v."""

    def __init__(self, config: GPTConfig, **kw: Any):
        super().__init__()
        self.n_head, self.n_embd, self.dropout = config.n_head, config.n_embd, config.dropout
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias, **kw)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias, **kw)
        self.resid_dropout = nn.Dropout(config.dropout)

    def forward(self, x: mt.Tensor) -> mt.Tensor:
        B, T, C = x.shape  # noqa: N806 - the usual names
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        heads = (B, T, self.n_head, C // self.n_head)
        # (B, nh, T, hs) views of the projection: a head's rows are 3C apart, which BLAS takes as its leading dim.
        q, k, v = (t.view(*heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    """Linear(d, 4d) -> exact GELU -> Linear(4d, d) -> dropout."""

    def __init__(self, config: GPTConfig, **kw: Any):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias, **kw)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias, **kw)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: mt.Tensor) -> mt.Tensor:
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(ln_1(x)), then + mlp(ln_2(x))."""

    def __init__(self, config: GPTConfig, **kw: Any):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias, **kw)
        self.attn = CausalSelfAttention(config, **kw)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias, **kw)
        self.mlp = MLP(config, **kw)

    def forward(self, x: mt.Tensor) -> mt.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """Token + position embeddings, ``n_layer`` blocks, final LayerNorm and a head tied to the token embedding.

    ``forward(idx, targets=None)`` takes (B, T) int64 token indices (T <= block_size) and returns
    ``(logits, loss)``: logits (B, T, vocab) and the mean cross-entropy against ``targets`` (B, T); without
    targets only the last position's logits (B, 1, vocab) and ``loss=None``.
    """

    def __init__(self, config: GPTConfig, backend: Any = None, dtype: Any = None):
        super().__init__()
        self.config = config
        kw = {"backend": backend, "dtype": dtype}
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd, **kw),
            wpe=nn.Embedding(config.block_size, config.n_embd, **kw),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config, **kw) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd, bias=config.bias, **kw),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False, **kw)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    @property
    def backend(self) -> Any:
        return self.lm_head.weight.backend

    def get_num_params(self, non_embedding: bool = True) -> int:
        """Parameter count (the tied head counted once); without the position embeddings by default, as nanoGPT."""
        n = sum(p.numel() for p in self.parameters())
        return n - self.transformer.wpe.weight.numel() if non_embedding else n

    def forward(self, idx: Any, targets: Any = None) -> tuple[mt.Tensor, mt.Tensor | None]:
        idx = self._indices(idx, "idx")
        if idx.dim() != 2:
            raise ShapeError(f"GPT takes (batch, time) token indices, got shape {idx.shape}")
        _, t = idx.shape
        if t > self.config.block_size:
            raise ShapeError(f"cannot forward a sequence of length {t}: block size is {self.config.block_size}")
        pos = mt.arange(t, dtype=mt.int64, backend=self.backend)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is None:
            return self.lm_head(x[:, -1:, :]), None
        targets = self._indices(targets, "targets")
        if targets.shape != idx.shape:
            raise ShapeError(f"targets must have the shape of idx {idx.shape}, got {targets.shape}")
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))
        return logits, loss

    def _indices(self, values: Any, name: str) -> mt.Tensor:
        if isinstance(values, mt.Tensor):
            if values.dtype != mt.int64:
                raise DTypeError(f"GPT {name} must be int64 token indices, got {values.dtype}")
            return values
        return mt.tensor(np.asarray(values, dtype=np.int64), dtype=mt.int64, backend=self.backend)

    def configure_optimizers(self, weight_decay: float, learning_rate: float,
                             betas: tuple[float, float] = (0.9, 0.95)) -> optim.AdamW:
        """AdamW with ``weight_decay`` on the matrices (Linear weights, embeddings) and none on biases and norms."""
        params = list(self.parameters())
        decay = [p for p in params if p.dim() >= 2]
        no_decay = [p for p in params if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
        return optim.AdamW(groups, lr=learning_rate, betas=betas)

    @mt.no_grad()
    def generate(self, idx: Any, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None,
                 rng: np.random.Generator | None = None) -> np.ndarray:
        """Extend (B, T) indices by ``max_new_tokens`` sampled tokens; returns (B, T + max_new_tokens) int64.

        Each step feeds the last ``block_size`` tokens, divides the last logits by ``temperature``, keeps the
        ``top_k`` largest (others -inf), and samples from the softmax with ``mt.multinomial`` drawing from ``rng``
        (default: the generator ``mt.manual_seed`` seeds).
        """
        if not temperature > 0.0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        rng = rng if rng is not None else mt.generator()
        out = np.array(idx, dtype=np.int64, ndmin=2)
        if out.shape[1] == 0:
            raise ValueError("generate() needs at least one token of context")
        was_training = self.training
        self.eval()
        try:
            for _ in range(max_new_tokens):
                logits, _ = self(out[:, -self.config.block_size:])
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    kth = logits.topk(min(top_k, logits.shape[-1]), dim=-1).values[:, -1:]
                    logits = logits.masked_fill(logits < kth, float("-inf"))
                nxt = mt.multinomial(F.softmax(logits, dim=-1), 1, generator=rng).to_numpy()
                out = np.concatenate([out, nxt], axis=1)
        finally:
            self.train(was_training)
        return out
