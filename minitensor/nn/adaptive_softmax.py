"""``nn.AdaptiveLogSoftmaxWithLoss`` (Grave et al., 2017, "Efficient softmax approximation for GPUs"), torch's
names, parameters (``head``, ``tail.i.0``, ``tail.i.1``) and outputs.

The classes are split by ``cutoffs`` into a shortlist ``[0, cutoffs[0])`` and clusters ``[cutoffs[i],
cutoffs[i+1])``. The head scores the shortlist classes and one entry per cluster; cluster i has its own two-layer
projection (``in -> in // div_value**(i+1) -> cluster size``, no biases). A class in cluster i has
``log p = log_softmax(head)[cluster i] + log_softmax(tail_i)[class - cutoffs[i]]``. Rows are grouped by the
cluster of their target host-side; the per-row pieces are concatenated and put back in row order by one
``index_select``, so everything is differentiable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..creation import tensor
from ..errors import IndexOutOfRangeError, ShapeError
from ..module import Module
from ..tensor import Tensor
from ..tensor_join import cat
from ..tensor_softmax import log_softmax
from .container import ModuleList, Sequential
from .linear import Linear

__all__ = ["AdaptiveLogSoftmaxWithLoss"]


class _ASMoutput(NamedTuple):
    """What :meth:`AdaptiveLogSoftmaxWithLoss.forward` returns: each row's target log-probability and the mean NLL."""

    output: Tensor
    loss: Tensor


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax over ``n_classes`` classes of ``in_features``-dim inputs, split at the increasing
    ``cutoffs`` (each in [1, n_classes-1]); ``head_bias`` gives the head a bias. ``forward(input, target)`` ->
    ``(output, loss)``; :meth:`log_prob` gives all classes' log-probabilities, :meth:`predict` the most likely class."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device: Any = None, dtype: Any = None, *, backend: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing order, "
                             f"where each value is between 1 and n_classes-1 (got {cutoffs} for n_classes={n_classes})")
        kw = {"device": device, "dtype": dtype, "backend": backend}
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, self.cutoffs[i + 1] - self.cutoffs[i], bias=False, **kw)))

    def reset_parameters(self) -> None:
        """Re-draw the head's and every projection's parameters (Linear's default init)."""
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def forward(self, input: Tensor, target: Tensor) -> _ASMoutput:  # noqa: A002
        """``output[r] = log p(target[r] | input[r])`` and ``loss = mean(-output)``; 1-D input with a 0-D target is
        one unbatched row."""
        if target.dims == 1:
            if input.shape[0] != target.shape[0]:
                raise ShapeError(f"Input and target should have the same size in the batch dimension (input "
                                 f"{input.shape}, target {target.shape}).")
            if input.dims != 2:
                raise ShapeError(f"1D target tensor expects 2D input tensors, but found inputs with size {input.shape}")
        elif target.dims == 0:
            if input.dims != 1:
                raise ShapeError(f"0D target tensor expects 1D input tensors, but found inputs with size {input.shape}")
        else:
            raise ShapeError(f"0D or 1D target tensor expected, multi-target not supported (target {target.shape})")
        batched = target.dims > 0
        x = input if batched else input.unsqueeze(0)
        labels = np.asarray(target.to_numpy()).reshape(-1).astype(np.int64)
        if labels.size and (labels.min() < 0 or labels.max() >= self.n_classes):
            raise IndexOutOfRangeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                                       f"[{labels.min()}, {labels.max()}] were found.")
        cluster = np.searchsorted(np.asarray(self.cutoffs), labels, side="right")  # 0: shortlist, i: tail i-1
        head_index = np.where(cluster == 0, labels, self.shortlist_size + cluster - 1)
        head_logprob = log_softmax(self.head(x), 1)
        out = head_logprob.gather(1, tensor(head_index[:, None], dtype="int64", backend=x.backend)).squeeze(1)
        pieces, order = [], []
        for i in range(1, self.n_clusters + 1):
            rows = np.nonzero(cluster == i)[0]
            if rows.size == 0:
                continue
            rows_t = tensor(rows, dtype="int64", backend=x.backend)
            local = tensor((labels[rows] - self.cutoffs[i - 1])[:, None], dtype="int64", backend=x.backend)
            pieces.append(log_softmax(self.tail[i - 1](x.index_select(0, rows_t)), 1).gather(1, local).squeeze(1))
            order.append(rows)
        if pieces:
            rest = np.nonzero(cluster == 0)[0]
            if rest.size:
                pieces.insert(0, out.new_zeros(rest.size))
                order.insert(0, rest)
            inverse = np.empty(labels.size, np.int64)
            inverse[np.concatenate(order)] = np.arange(labels.size)
            out = out + cat(pieces).index_select(0, tensor(inverse, dtype="int64", backend=x.backend))
        loss = (-out).mean()
        return _ASMoutput(out if batched else out.squeeze(0), loss)

    def _full_log_prob(self, x: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = log_softmax(head_output, 1)
        parts = [head_logprob[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            parts.append(log_softmax(self.tail[i](x), 1) + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        """(N, n_classes) log-probabilities of every class for an (N, in_features) input."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:  # noqa: A002
        """The most likely class of each row (``log_prob(input).argmax(1)``, the tails evaluated only for rows whose
        head argmax is a cluster)."""
        head_output = self.head(input)
        best = head_output.argmax(1).to_numpy().astype(np.int64)
        outside = np.nonzero(best >= self.shortlist_size)[0]
        if outside.size:
            rows = tensor(outside, dtype="int64", backend=input.backend)
            full = self._full_log_prob(input.index_select(0, rows), head_output.index_select(0, rows))
            best[outside] = full.argmax(1).to_numpy()
        return tensor(best, dtype="int64", backend=input.backend)
