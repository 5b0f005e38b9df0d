"""Indexing of Tensor (the ``IndexMethods`` mixin) and the matching ``mt.`` functions.

Basic indexing (ints, slices, ``None``, ``...``) returns views through :mod:`minitensor.tensor_shape`;
everything here selects by index tensors on the backend's gather/scatter_add kernels.
"""

from __future__ import annotations


class IndexMethods:
    """Indexing methods of Tensor."""


__all__: list[str] = []
