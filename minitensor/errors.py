"""Typed errors. Each subclasses the built-in exception a Python user would expect to catch."""


class MinitensorError(Exception):
    """Base of every error minitensor raises on purpose."""


class ShapeError(MinitensorError, ValueError):
    """Shapes that do not fit: broadcast, matmul inner dims, view element counts."""


class NonContiguousError(ShapeError):
    """An operation that needs contiguous data got strided data."""


class PermutationError(MinitensorError, ValueError):
    """A permutation that is not a rearrangement of the tensor's dims."""


class IndexOutOfRangeError(MinitensorError, IndexError):
    """An index or dim outside a tensor's shape."""


class EmptyReductionError(ShapeError, IndexError):
    """A reduction with no identity (max, min, argmax, median) over an empty dim or tensor."""


class RaggedDataError(MinitensorError, ValueError):
    """Nested lists whose rows differ in length."""


class BackendError(MinitensorError, ValueError):
    """Unknown backend name, or tensors of two backends in one operation."""


class BackendUnavailableError(BackendError, RuntimeError):
    """A known backend that cannot run on this machine (e.g. ``cuda`` without a GPU)."""


class GradientError(MinitensorError, RuntimeError):
    """Misuse of autodiff, such as ``backward()`` on a non-scalar without a gradient."""


class DivisionByZeroError(MinitensorError, ZeroDivisionError):
    """Integer division (``//``, ``%``, ``fmod``) by zero."""


class HigherOrderGradError(GradientError, NotImplementedError):
    """``create_graph=True`` reached a Function whose backward is not differentiable (named in the message)."""


class NoDerivativeError(GradientError, NotImplementedError):
    """A backward through an argument PyTorch has no derivative for (igamma's ``a``, geqrf)."""


class DTypeError(MinitensorError, TypeError):
    """An unsupported dtype."""


class CompileError(MinitensorError, RuntimeError):
    """A function that ``minitensor.compile`` cannot record faithfully (it reads a tensor's value back to Python,
    uses random numbers on the host, nests compiled calls); the message says what and where."""


class LinAlgError(MinitensorError, RuntimeError):
    """A matrix that a linear-algebra routine cannot handle: ``linalg.inv``/``solve`` of a singular matrix,
    ``linalg.cholesky`` of one that is not positive-definite (``torch.linalg.LinAlgError``; the message names the
    batch element and the failing diagonal element or leading minor, as PyTorch's does)."""


class RNGStateError(MinitensorError, ValueError):
    """A random-generator state that ``set_rng_state``/``Generator.set_state`` cannot restore: not one that
    ``get_rng_state``/``Generator.get_state`` returned (wrong shape, format tag or contents)."""
