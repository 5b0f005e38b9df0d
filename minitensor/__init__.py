"""minitensor: a readable, fast tensor engine with autodiff and pluggable backends.

The public names follow PyTorch: ``minitensor`` is ``torch``, ``minitensor.nn`` is ``torch.nn``.
"""

# ruff: noqa: F401 - this module re-exports the public API
from . import (
    creation_asarray,
    linalg,
    linalg_cholesky,
    linalg_decomp,
    linalg_extra,
    linalg_householder,
    linalg_ldl,
    linalg_lstsq,
    linalg_lu,
    linalg_norms,
    linalg_solve,
    linalg_svd,
    operators,
    special,
    tensor_arith,
    tensor_broadcast,
    tensor_build,
    tensor_compare,
    tensor_copies,
    tensor_counting,
    tensor_gradient,
    tensor_igamma,
    tensor_index,
    tensor_index_write,
    tensor_integrate,
    tensor_join,
    tensor_math,
    tensor_methods_extra,
    tensor_misc,
    tensor_numeric,
    tensor_order,
    tensor_pointwise,
    tensor_products,
    tensor_random,
    tensor_reduce,
    tensor_scatter,
    tensor_search,
    tensor_select,
    tensor_shape,
    tensor_softmax,
    tensor_stats,
    tensor_strided,
    tensor_trig,
)
from .autodiff import (
    Context,
    Function,
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .backends import backend_names, default_backend_name, get_backend, set_default_backend
from .constants import *  # noqa: F403 - e, pi, inf, nan, newaxis and the dtype type
from .creation import *  # noqa: F403 - the creation functions, listed in creation.__all__
from .devices import device, get_default_device, set_default_device
from .dlpack import *  # noqa: F403 - from_dlpack, to_dlpack, frombuffer
from .dtypes import as_dtype, float32, float64, get_default_dtype, int32, int64, set_default_dtype
from .dtypes import bool_ as bool  # noqa: A001 - PyTorch's name
from .errors import (
    BackendError,
    BackendUnavailableError,
    DivisionByZeroError,
    DTypeError,
    EmptyReductionError,
    GradientError,
    HigherOrderGradError,
    IndexOutOfRangeError,
    LinAlgError,
    MinitensorError,
    NoDerivativeError,
    NonContiguousError,
    PermutationError,
    RaggedDataError,
    RNGStateError,
    ShapeError,
)
from .flags import *  # noqa: F403 - deterministic algorithms, anomaly detection, matmul precision, ... (flags.py)
from .function_forms import export as _export
from .function_forms import tensor_first as _tensor_first
from .generators import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .linalg import *  # noqa: F403
from .linalg_cholesky import *  # noqa: F403
from .linalg_lowrank import *  # noqa: F403
from .linalg_solve import *  # noqa: F403
from .module import Module, Parameter
from .scalar import Scalar
from .size import Size
from .tensor import Tensor
from .tensor_arith import *  # noqa: F403
from .tensor_broadcast import *  # noqa: F403
from .tensor_build import *  # noqa: F403
from .tensor_compare import *  # noqa: F403
from .tensor_counting import *  # noqa: F403
from .tensor_data import TensorData
from .tensor_erf_gamma import *  # noqa: F403
from .tensor_index import *  # noqa: F403
from .tensor_index_write import *  # noqa: F403
from .tensor_integrate import *  # noqa: F403
from .tensor_join import *  # noqa: F403
from .tensor_math import *  # noqa: F403
from .tensor_methods_extra import *  # noqa: F403
from .tensor_misc import *  # noqa: F403
from .tensor_numeric import *  # noqa: F403
from .tensor_order import *  # noqa: F403
from .tensor_pieces import *  # noqa: F403
from .tensor_pointwise import *  # noqa: F403
from .tensor_products import *  # noqa: F403
from .tensor_random import *  # noqa: F403
from .tensor_reduce import *  # noqa: F403
from .tensor_rounding import *  # noqa: F403
from .tensor_scatter import *  # noqa: F403
from .tensor_search import *  # noqa: F403
from .tensor_select import *  # noqa: F403
from .tensor_shape import *  # noqa: F403
from .tensor_softmax import *  # noqa: F403
from .tensor_stats import *  # noqa: F403
from .tensor_trig import *  # noqa: F403

# The function forms again, each tensor-first one with PyTorch's TypeError for a non-tensor (function_forms.py).
_export(globals(), (linalg, tensor_arith, tensor_broadcast, tensor_compare, tensor_index, tensor_join, tensor_math,
                    tensor_order, tensor_pointwise, tensor_products, tensor_integrate, tensor_reduce, tensor_search, tensor_select,
                    tensor_shape, tensor_softmax, tensor_stats, tensor_trig, tensor_build,
                    tensor_index_write, tensor_scatter, tensor_misc, linalg_solve, linalg_cholesky, tensor_random,
                    tensor_numeric, tensor_counting, tensor_methods_extra, tensor_copies))
linalg.multi_dot = tensor_products.multi_dot  # type: ignore[attr-defined]  # torch.linalg.multi_dot, with the composite products
linalg.matrix_power = _tensor_first(tensor_products.matrix_power, "linalg.matrix_power")  # type: ignore[attr-defined]
for _name, _fn in {**linalg_solve.LINALG, **linalg_cholesky.LINALG}.items():  # torch.linalg.det, inv, solve, cholesky, ...
    setattr(linalg, _name, _tensor_first(_fn, f"linalg.{_name}"))
for _name, _fn in {**linalg_norms.LINALG, **linalg_extra.LINALG, **linalg_decomp.LINALG, **linalg_svd.LINALG,
                   **linalg_lstsq.LINALG}.items():  # torch.linalg.vector_norm, matrix_exp, qr, eigh, svd, lstsq, ...
    setattr(linalg, _name, _tensor_first(_fn, f"linalg.{_name}"))
for _name, _fn in {**linalg_lu.LINALG, **linalg_ldl.LINALG, **linalg_householder.LINALG}.items():  # torch.linalg.lu, ldl_factor, ...
    setattr(linalg, _name, _tensor_first(_fn, f"linalg.{_name}"))
del _name, _fn
_export(globals(), (linalg_decomp, linalg_svd, linalg_lstsq))  # mt.qr, mt.svd, mt.pinverse
_export(globals(), (linalg_lu, linalg_householder))  # mt.lu, mt.lu_unpack, mt.lu_solve, mt.orgqr
_export(globals(), (tensor_igamma, tensor_strided, tensor_gradient, creation_asarray))  # mt.igamma, adjoint, gradient, asarray
matrix_exp = _tensor_first(linalg_extra.matrix_exp, "matrix_exp")  # torch.matrix_exp (its parameter is named A)
linalg.LinAlgError = LinAlgError  # type: ignore[attr-defined]  # torch.linalg.LinAlgError

float = float32  # noqa: A001 - PyTorch's aliases
double = float64
long = int64
int = int32  # noqa: A001

from . import autograd, cuda, distributions, flags, func, nn, optim, random, testing, utils  # noqa: E402 - after the core they build on
from .checkpoint import load, save  # noqa: E402
from .compiler.api import compile  # noqa: E402, A004 - torch.compile's name
from .functional_aliases import *  # noqa: E402, F403 - the torch.* names of nn.functional ops and the rest (functional_aliases.py)

autograd.detect_anomaly = flags.detect_anomaly  # type: ignore[attr-defined]  # torch.autograd's anomaly switches
autograd.set_detect_anomaly = flags.set_detect_anomaly  # type: ignore[attr-defined]

from . import amp, cpu  # noqa: E402 - torch.amp, torch.cpu (mt.cuda.amp and mt.cpu.amp: the deprecated forms)
from .amp import autocast  # noqa: E402 - torch.autocast
from .amp.autocast_state import *  # noqa: E402, F403 - is_autocast_enabled get_autocast_dtype ... (amp/autocast_state.py)
