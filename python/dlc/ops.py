"""dlc operations: numpy-named functions that build `dl` ops while tracing.

Call them inside a :func:`dlc.jit` function on traced tensors, numpy arrays or
Python scalars. numpy arrays become constants; Python scalars take the dtype of
the tensor they meet (``x * 2`` keeps ``x``'s dtype). Binary operations
broadcast like numpy. dlc never promotes dtypes implicitly: mixing float32 and
float64 tensors is an error that asks for ``astype``. Every error names the
operation, the operands and the line of user code that called it.
"""

import builtins
import contextvars
import numbers

import numpy as np

from . import dtypes
from .errors import DTypeError, ShapeError, TraceError
from .mlir import ir
from .mlir.dialects import dl
from .tracing import Size, Tensor, current_trace, dim_of, format_location, user_location

__all__ = [
    # elementwise arithmetic and math
    "add", "subtract", "multiply", "divide", "power", "pow", "maximum", "minimum",
    "negative", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "erf", "tanh", "clip",
    # comparisons and selection
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "where",
    # more elementwise ops: trigonometry, rounding, sign, float classes
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh",
    "arccosh", "arctanh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
    "floor", "ceil", "round", "sign", "isnan", "isinf",
    # logical and bitwise ops, remainders
    "logical_not", "logical_and", "logical_or", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_not", "invert", "remainder", "mod", "fmod",
    # activations
    "relu", "relu6", "leaky_relu", "gelu", "sigmoid", "silu", "hardswish",
    "softmax", "log_softmax",
    # linear algebra, convolution, pooling, normalization
    "matmul", "matmul_integer", "linear", "conv2d", "max_pool2d", "avg_pool2d", "global_avg_pool2d",
    "batch_norm", "layer_norm",
    # quantization
    "quantize_linear", "dequantize_linear",
    # reductions
    "sum", "mean", "max", "min", "argmax", "argmin",
    # shapes and types
    "reshape", "flatten", "transpose", "squeeze", "expand_dims", "concatenate",
    "split", "pad", "broadcast_to", "take", "gather", "astype", "cast", "asarray",
    "dim", "arange",
]


def _where():
    return format_location(user_location())


def _trace(op_name):
    trace = current_trace()
    if trace is None:
        raise TraceError(
            f"{_where()}: dlc.{op_name} builds a compiled operation and can only "
            f"be called inside a @dlc.jit function")
    return trace


def asarray(value, dtype=None):
    """A traced tensor from a Tensor, numpy array or Python scalar (as a
    constant of `dtype`; a Python float becomes float32 unless `dtype` says
    otherwise)."""
    return _tensor(value, "asarray", dtype)


def _tensor(value, op_name, dtype=None):
    if isinstance(value, Tensor):
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return astype(value, dtype)
        return value
    if value is None or isinstance(value, (str, bytes, dict, set)):
        raise TypeError(f"{_where()}: dlc.{op_name}: {value!r} ({type(value).__name__}) "
                        f"is not a tensor operand; operands are traced tensors, numpy "
                        f"arrays and Python numbers")
    trace = _trace(op_name)
    array = np.asarray(value, dtype=dtypes.numpy_dtype(dtype) if dtype is not None else None)
    if dtype is None and isinstance(value, float):
        array = array.astype(np.float32)
    return trace.constant(array)


def _is_scalar(value):
    return isinstance(value, (numbers.Number, np.bool_)) and not isinstance(value, np.ndarray)


def _scalar_for(value, dtype, op_name, other):
    """A Python scalar as a rank-0 constant of the dtype of the tensor it meets."""
    dtype = np.dtype(dtype)
    if isinstance(value, (bool, np.bool_)) and dtype != np.bool_:
        value = int(value)
    if dtypes.is_float(dtype) or (isinstance(value, numbers.Integral) and
                                  dtype.kind in "iub"):
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            if not info.min <= value <= info.max:
                raise DTypeError(
                    f"{_where()}: dlc.{op_name}: the Python integer {value} does not "
                    f"fit the {dtype} operand {other!r}")
        if dtype == np.bool_ and value not in (0, 1):
            raise DTypeError(f"{_where()}: dlc.{op_name}: cannot combine the bool "
                             f"operand {other!r} with the Python integer {value}")
        return np.array(value, dtype=dtype)
    raise DTypeError(
        f"{_where()}: dlc.{op_name}: cannot combine the {dtype} operand {other!r} "
        f"with the Python {type(value).__name__} {value!r} without a cast")


def _operands(op_name, *values):
    """Operands as Tensors of one dtype: Python scalars take the dtype of the
    first tensor operand."""
    trace = _trace(op_name)
    anchor = next((v for v in values if isinstance(v, Tensor)), None)
    if anchor is None:
        anchor = next((v for v in values if not _is_scalar(v)), None)
        anchor = _tensor(anchor, op_name) if anchor is not None else None
    tensors = []
    for value in values:
        if _is_scalar(value) and anchor is not None:
            value = trace.constant(_scalar_for(value, anchor.dtype, op_name, anchor))
        tensors.append(_tensor(value, op_name))
    first = tensors[0]
    for other in tensors[1:]:
        if other.dtype != first.dtype:
            raise DTypeError(
                f"{_where()}: dlc.{op_name}: operands have different dtypes: "
                f"{first!r} and {other!r}; dlc does not promote dtypes implicitly "
                f"(use .astype)")
    return (trace, *tensors)


def _require_numeric(op_name, *tensors):
    for t in tensors:
        if t.dtype == np.bool_:
            raise DTypeError(f"{_where()}: dlc.{op_name} does not accept the bool "
                             f"operand {t!r}")


def _require_float(op_name, *tensors):
    for t in tensors:
        if not dtypes.is_float(t.dtype):
            raise DTypeError(f"{_where()}: dlc.{op_name} needs a floating-point "
                             f"operand, but got {t!r}; cast with .astype")


def _emit(trace, op_name, build):
    return trace.emit(f"dl.{op_name}", build)


# -- elementwise ---------------------------------------------------------------

def _binary(op_name, builder, x1, x2, float_only=False):
    trace, x1, x2 = _operands(op_name, x1, x2)
    (_require_float if float_only else _require_numeric)(op_name, x1, x2)
    return trace.emit(f"dl.{op_name}", lambda: builder(x1.value, x2.value))


def add(x1, x2):
    """Elementwise ``x1 + x2`` with numpy broadcasting."""
    return _binary("add", dl.AddOp, x1, x2)


def subtract(x1, x2):
    """Elementwise ``x1 - x2`` with numpy broadcasting."""
    return _binary("subtract", dl.SubOp, x1, x2)


def multiply(x1, x2):
    """Elementwise ``x1 * x2`` with numpy broadcasting."""
    return _binary("multiply", dl.MulOp, x1, x2)


def divide(x1, x2):
    """Elementwise ``x1 / x2`` with numpy broadcasting. Floating-point operands
    only: numpy's true division of integers produces floats, and dlc does not
    promote dtypes implicitly."""
    return _binary("divide", dl.DivOp, x1, x2, float_only=True)


def power(x1, x2):
    """Elementwise ``x1 ** x2`` with numpy broadcasting (integers too; an
    integer raised to a negative power gives 0, except for bases 1 and -1)."""
    return _binary("power", dl.PowOp, x1, x2)


pow = power  # noqa: A001 - numpy's alias


def maximum(x1, x2):
    """numpy.maximum with broadcasting; NaN propagates."""
    return _binary("maximum", dl.MaximumOp, x1, x2)


def minimum(x1, x2):
    """numpy.minimum with broadcasting; NaN propagates."""
    return _binary("minimum", dl.MinimumOp, x1, x2)


def clip(x, a_min=None, a_max=None):
    """numpy.clip: ``minimum(maximum(x, a_min), a_max)``; either bound may be
    None, a scalar or a broadcastable array."""
    x = _tensor(x, "clip")
    if a_min is None and a_max is None:
        raise ValueError(f"{_where()}: dlc.clip: a_min and a_max cannot both be None")
    for name, bound in (("a_min", a_min), ("a_max", a_max)):
        if bound is not None and not (isinstance(bound, (Tensor, np.ndarray, list, tuple))
                                      or _is_scalar(bound)):
            raise TypeError(f"{_where()}: dlc.clip: {name} must be None, a number or an "
                            f"array broadcastable to {x!r}, but got {bound!r}")
    if a_min is not None:
        x = maximum(x, a_min)
    if a_max is not None:
        x = minimum(x, a_max)
    return x


def _unary(op_name, builder, x, float_only=False, dl_name=None, **attrs):
    x = _tensor(x, op_name)
    (_require_float if float_only else _require_numeric)(op_name, x)
    return _trace(op_name).emit(f"dl.{dl_name or op_name}",
                                lambda: builder(x.value, **attrs))


def negative(x):
    """Elementwise ``-x``."""
    return _unary("negative", dl.NegOp, x, dl_name="neg")


neg = negative


def abs(x):  # noqa: A001 - numpy's name
    """Elementwise absolute value."""
    return _unary("abs", dl.AbsOp, x)


def exp(x):
    """Elementwise exponential."""
    return _unary("exp", dl.ExpOp, x, float_only=True)


def log(x):
    """Elementwise natural logarithm."""
    return _unary("log", dl.LogOp, x, float_only=True)


def sqrt(x):
    """Elementwise square root."""
    return _unary("sqrt", dl.SqrtOp, x, float_only=True)


def rsqrt(x):
    """Elementwise ``1 / sqrt(x)``."""
    return _unary("rsqrt", dl.RsqrtOp, x, float_only=True)


def erf(x):
    """Elementwise Gauss error function."""
    return _unary("erf", dl.ErfOp, x, float_only=True)


def tanh(x):
    """Elementwise hyperbolic tangent."""
    return _unary("tanh", dl.TanhOp, x, float_only=True)


def _compare(op_name, builder, x1, x2):
    trace, x1, x2 = _operands(op_name, x1, x2)
    return trace.emit(f"dl.{op_name}", lambda: builder(x1.value, x2.value))


def equal(x1, x2):
    """Elementwise ``x1 == x2`` (bool result)."""
    return _compare("equal", dl.EqualOp, x1, x2)


def not_equal(x1, x2):
    """Elementwise ``x1 != x2`` (bool result; true where either is NaN)."""
    return _compare("not_equal", dl.NotEqualOp, x1, x2)


def less(x1, x2):
    """Elementwise ``x1 < x2`` (bool result)."""
    return _compare("less", dl.LessOp, x1, x2)


def less_equal(x1, x2):
    """Elementwise ``x1 <= x2`` (bool result)."""
    return _compare("less_equal", dl.LessEqualOp, x1, x2)


def greater(x1, x2):
    """Elementwise ``x1 > x2`` (bool result)."""
    return _compare("greater", dl.GreaterOp, x1, x2)


def greater_equal(x1, x2):
    """Elementwise ``x1 >= x2`` (bool result)."""
    return _compare("greater_equal", dl.GreaterEqualOp, x1, x2)


def where(condition, x, y):
    """numpy.where(condition, x, y) with three-way broadcasting; `condition`
    is a bool tensor; Python scalars take the dtype of the other value."""
    condition = _tensor(condition, "where")
    if condition.dtype != np.bool_:
        raise DTypeError(f"{_where()}: dlc.where: the condition must be a bool "
                         f"tensor, but got {condition!r}")
    trace, x, y = _operands("where", x, y)
    return trace.emit("dl.where", lambda: dl.WhereOp(condition.value, x.value, y.value))


# -- more elementwise ops (trig, rounding, bitwise, logical) -------------------

def sin(x):
    """Elementwise sine."""
    return _unary("sin", dl.SinOp, x, float_only=True)


def cos(x):
    """Elementwise cosine."""
    return _unary("cos", dl.CosOp, x, float_only=True)


def tan(x):
    """Elementwise tangent."""
    return _unary("tan", dl.TanOp, x, float_only=True)


def arcsin(x):
    """Elementwise inverse sine (NaN outside [-1, 1])."""
    return _unary("arcsin", dl.AsinOp, x, float_only=True, dl_name="asin")


def arccos(x):
    """Elementwise inverse cosine (NaN outside [-1, 1])."""
    return _unary("arccos", dl.AcosOp, x, float_only=True, dl_name="acos")


def arctan(x):
    """Elementwise inverse tangent."""
    return _unary("arctan", dl.AtanOp, x, float_only=True, dl_name="atan")


def sinh(x):
    """Elementwise hyperbolic sine."""
    return _unary("sinh", dl.SinhOp, x, float_only=True)


def cosh(x):
    """Elementwise hyperbolic cosine."""
    return _unary("cosh", dl.CoshOp, x, float_only=True)


def arcsinh(x):
    """Elementwise inverse hyperbolic sine."""
    return _unary("arcsinh", dl.AsinhOp, x, float_only=True, dl_name="asinh")


def arccosh(x):
    """Elementwise inverse hyperbolic cosine (NaN below 1)."""
    return _unary("arccosh", dl.AcoshOp, x, float_only=True, dl_name="acosh")


def arctanh(x):
    """Elementwise inverse hyperbolic tangent (infinite at -1 and 1, NaN
    outside [-1, 1])."""
    return _unary("arctanh", dl.AtanhOp, x, float_only=True, dl_name="atanh")


# numpy 2's short names
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh


def _rounding(op_name, builder, x):
    """A rounding op; integers are whole already, so they come back unchanged
    (as numpy returns them)."""
    x = _tensor(x, op_name)
    if x.dtype.kind in "iu":
        return x
    return _unary(op_name, builder, x, float_only=True)


def floor(x):
    """Elementwise floor: the largest whole number not greater than x."""
    return _rounding("floor", dl.FloorOp, x)


def ceil(x):
    """Elementwise ceiling: the smallest whole number not less than x."""
    return _rounding("ceil", dl.CeilOp, x)


def round(x, decimals=0):  # noqa: A001 - numpy's name
    """numpy.round: to the nearest whole number, halfway cases to the even one
    (0.5 -> 0, 1.5 -> 2); with `decimals`, to that many decimal places, as
    numpy computes it: ``round(x * 10**decimals) / 10**decimals`` (a negative
    `decimals` rounds to tens, hundreds, ...)."""
    if not isinstance(decimals, numbers.Integral) or isinstance(decimals, bool):
        raise TypeError(f"{_where()}: dlc.round: decimals must be an int, but got "
                        f"{decimals!r}")
    x = _tensor(x, "round")
    if decimals == 0 or x.dtype.kind in "iu" and decimals > 0:
        return _rounding("round", dl.RoundOp, x)
    _require_float("round", x)
    if decimals > 0:
        scale = 10.0 ** decimals
        return divide(_rounding("round", dl.RoundOp, multiply(x, scale)), scale)
    scale = 10.0 ** -decimals
    return multiply(_rounding("round", dl.RoundOp, divide(x, scale)), scale)


def sign(x):
    """numpy.sign: -1, 0 or 1 by the sign of each element; NaN stays NaN."""
    return _unary("sign", dl.SignOp, x)


def _float_class(op_name, builder, x):
    x = _tensor(x, op_name)
    _require_float(op_name, x)
    return _trace(op_name).emit(f"dl.{op_name}", lambda: builder(x.value))


def isnan(x):
    """Where `x` is NaN (bool result)."""
    return _float_class("isnan", dl.IsNanOp, x)


def isinf(x):
    """Where `x` is positive or negative infinity (bool result)."""
    return _float_class("isinf", dl.IsInfOp, x)


def _truth(x, op_name):
    """`x` as bools: numpy's logical functions take any dtype by truth value
    (non-zero is true); Python scalars stay scalars."""
    if _is_scalar(x):
        return builtins.bool(x)
    x = _tensor(x, op_name)
    return x if x.dtype == np.bool_ else astype(x, np.bool_)


def logical_not(x):
    """Elementwise ``not x`` (bool result; non-zero counts as true)."""
    x = _truth(x, "logical_not")
    return _trace("logical_not").emit("dl.logical_not",
                                      lambda: dl.LogicalNotOp(x.value))


def _logical(op_name, builder, x1, x2):
    trace, x1, x2 = _operands(op_name, _truth(x1, op_name), _truth(x2, op_name))
    return trace.emit(f"dl.{op_name}", lambda: builder(x1.value, x2.value))


def logical_and(x1, x2):
    """Elementwise ``x1 and x2`` with broadcasting (bool result; non-zero
    counts as true)."""
    return _logical("logical_and", dl.LogicalAndOp, x1, x2)


def logical_or(x1, x2):
    """Elementwise ``x1 or x2`` with broadcasting (bool result; non-zero
    counts as true)."""
    return _logical("logical_or", dl.LogicalOrOp, x1, x2)


def logical_xor(x1, x2):
    """Elementwise ``x1 != x2`` of truth values with broadcasting (bool
    result; non-zero counts as true)."""
    return _logical("logical_xor", dl.LogicalXorOp, x1, x2)


def _require_integer(op_name, *tensors):
    for t in tensors:
        if dtypes.is_float(t.dtype):
            raise DTypeError(f"{_where()}: dlc.{op_name} needs integer or bool "
                             f"operands, but got {t!r}")


def _bitwise(op_name, builder, x1, x2):
    trace, x1, x2 = _operands(op_name, x1, x2)
    _require_integer(op_name, x1, x2)
    return trace.emit(f"dl.{op_name}", lambda: builder(x1.value, x2.value))


def bitwise_and(x1, x2):
    """Elementwise ``x1 & x2`` of integers or bools, with broadcasting."""
    return _bitwise("bitwise_and", dl.BitwiseAndOp, x1, x2)


def bitwise_or(x1, x2):
    """Elementwise ``x1 | x2`` of integers or bools, with broadcasting."""
    return _bitwise("bitwise_or", dl.BitwiseOrOp, x1, x2)


def bitwise_xor(x1, x2):
    """Elementwise ``x1 ^ x2`` of integers or bools, with broadcasting."""
    return _bitwise("bitwise_xor", dl.BitwiseXorOp, x1, x2)


def bitwise_not(x):
    """Elementwise ``~x``: the complement of the bits of integers (``-x - 1``),
    logical negation of bools."""
    x = _tensor(x, "bitwise_not")
    _require_integer("bitwise_not", x)
    return _trace("bitwise_not").emit("dl.bitwise_not", lambda: dl.BitwiseNotOp(x.value))


invert = bitwise_not


def remainder(x1, x2):
    """numpy.remainder (Python's ``%``) with broadcasting: the result has the
    sign of `x2`. Integer ``x % 0`` is 0 (as numpy returns, without its
    warning); float ``x % 0`` is NaN."""
    return _binary("remainder", dl.RemainderOp, x1, x2)


mod = remainder


def fmod(x1, x2):
    """numpy.fmod (C's fmod) with broadcasting: the result has the sign of
    `x1`. Integer ``fmod(x, 0)`` is 0; float ``fmod(x, 0)`` is NaN."""
    return _binary("fmod", dl.FmodOp, x1, x2)


# -- activations ---------------------------------------------------------------

def relu(x):
    """Rectified linear unit ``max(x, 0)``, elementwise."""
    return _unary("relu", dl.ReluOp, x)


def relu6(x):
    """``min(max(x, 0), 6)``, elementwise."""
    return _unary("relu6", dl.Relu6Op, x)


def leaky_relu(x, alpha=0.01):
    """``x`` where ``x >= 0``, else ``alpha * x``."""
    return _unary("leaky_relu", dl.LeakyReluOp, x, float_only=True,
                  alpha=_f64_attr(alpha, "leaky_relu", "alpha"))


def gelu(x, approximate="none"):
    """Gaussian error linear unit: ``x * (1 + erf(x / sqrt(2))) / 2``, or the
    tanh approximation with ``approximate="tanh"``."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"{_where()}: dlc.gelu: approximate must be 'none' or "
                         f"'tanh', but got {approximate!r}")
    return _unary("gelu", dl.GeluOp, x, float_only=True,
                  approximate_tanh=approximate == "tanh")


def sigmoid(x):
    """Logistic sigmoid ``1 / (1 + exp(-x))``."""
    return _unary("sigmoid", dl.SigmoidOp, x, float_only=True)


def silu(x):
    """``x * sigmoid(x)`` (swish)."""
    return _unary("silu", dl.SiluOp, x, float_only=True)


def hardswish(x):
    """``x * relu6(x + 3) / 6``."""
    return _unary("hardswish", dl.HardswishOp, x, float_only=True)


def _f64_attr(value, op_name, name):
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{_where()}: dlc.{op_name}: {name} must be a number, but "
                        f"got {value!r}")
    with _context():
        return ir.FloatAttr.get(ir.F64Type.get(), float(value))


def _i64_attr(value):
    with _context():
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))


def _context():
    trace = current_trace()
    return ir.Location.unknown(context=trace.ctx)


def _normalize_axis(op_name, axis, ndim):
    if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
        raise TypeError(f"{_where()}: dlc.{op_name}: axis must be an int, but got "
                        f"{axis!r}")
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{_where()}: dlc.{op_name}: axis {axis} is out of bounds "
                         f"for a tensor of rank {ndim}")
    return int(axis) % ndim


def _normalize_axes(op_name, axis, ndim):
    if axis is None:
        return list(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    normalized = [_normalize_axis(op_name, a, ndim) for a in axes]
    if len(set(normalized)) != len(normalized):
        raise ShapeError(f"{_where()}: dlc.{op_name}: duplicate axes in {axis!r}")
    return sorted(normalized)


def _softmax_like(op_name, builder, x, axis):
    x = _tensor(x, op_name)
    _require_float(op_name, x)
    axis = _normalize_axis(op_name, axis, x.ndim)
    return _trace(op_name).emit(f"dl.{op_name}",
                                lambda: builder(x.value, _i64_attr(axis)))


def softmax(x, axis=-1):
    """Softmax along `axis`, computed as ``exp(x - max) / sum(exp(x - max))``."""
    return _softmax_like("softmax", dl.SoftmaxOp, x, axis)


def log_softmax(x, axis=-1):
    """``x - max - log(sum(exp(x - max)))`` along `axis`."""
    return _softmax_like("log_softmax", dl.LogSoftmaxOp, x, axis)


# -- reductions ------------------------------------------------------------------

def _reduce(op_name, builder, x, axis, keepdims, float_only=False):
    x = _tensor(x, op_name)
    (_require_float if float_only else _require_numeric)(op_name, x)
    axes = _normalize_axes(op_name, axis, x.ndim)
    return _trace(op_name).emit(
        f"dl.reduce_{op_name}",
        lambda: builder(x.value, axes, keepdims=bool(keepdims)))


def _refuse_empty(op_name, x, axes, what):
    for a in axes:
        if x.shape[a] == 0:
            raise ShapeError(f"{_where()}: dlc.{op_name}: axis {a} of {x!r} is empty, "
                             f"and the {what} has no identity")


def sum(x, axis=None, keepdims=False):  # noqa: A001 - numpy's name
    """Sum over `axis` (int, tuple of ints, or None for all), like numpy.sum.
    The result keeps the input's dtype (f16/bf16 accumulate in f32)."""
    return _reduce("sum", dl.ReduceSumOp, x, axis, keepdims)


def mean(x, axis=None, keepdims=False):
    """Arithmetic mean over `axis`, like numpy.mean, for floating-point x."""
    return _reduce("mean", dl.ReduceMeanOp, x, axis, keepdims, float_only=True)


def max(x, axis=None, keepdims=False):  # noqa: A001 - numpy's name
    """Maximum over `axis` (int, tuple of ints, or None for all), like
    numpy.max; NaN propagates. Like numpy, an empty reduced axis is an error
    when its size is known at trace time (a dynamic batch of 0 rows gives the
    identity, -inf or the smallest integer)."""
    x = _tensor(x, "max")
    _refuse_empty("max", x, _normalize_axes("max", axis, x.ndim), "maximum")
    return _reduce("max", dl.ReduceMaxOp, x, axis, keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001 - numpy's name
    """Minimum over `axis`, like numpy.min; NaN propagates."""
    x = _tensor(x, "min")
    _refuse_empty("min", x, _normalize_axes("min", axis, x.ndim), "minimum")
    return _reduce("min", dl.ReduceMinOp, x, axis, keepdims)


def _arg_reduce(op_name, builder, x, axis, keepdims):
    x = _tensor(x, op_name)
    _require_numeric(op_name, x)
    if axis is None:
        if keepdims:
            raise ValueError(f"{_where()}: dlc.{op_name}: keepdims needs an axis")
        x = reshape(x, (-1,))
        axis = 0
    axis = _normalize_axis(op_name, axis, x.ndim)
    _refuse_empty(op_name, x, [axis], "result")
    return _trace(op_name).emit(
        f"dl.{op_name}",
        lambda: builder(x.value, _i64_attr(axis), keepdims=bool(keepdims)))


def argmax(x, axis=None, keepdims=False):
    """Index of the (first) maximum along `axis` (over the flattened tensor
    when None), as int64, like numpy.argmax."""
    return _arg_reduce("argmax", dl.ArgmaxOp, x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    """Index of the (first) minimum along `axis`, as int64, like numpy.argmin."""
    return _arg_reduce("argmin", dl.ArgminOp, x, axis, keepdims)


# -- linear algebra, convolution, pooling, normalization --------------------------

#: set by dlc.quant while it traces: sees (and may replace) the operands of
#: each float matmul and convolution (calibration, fake quantization); for a
#: matmul it may instead return (None, result): the product computed in
#: integers (dl.matmul_integer)
_QUANT_HOOK = contextvars.ContextVar("dlc_quant_hook", default=None)


def _quant_operands(kind, x, w, weight_axis):
    hook = _QUANT_HOOK.get()
    if hook is None or not (dtypes.is_float(x.dtype) and dtypes.is_float(w.dtype)):
        return x, w
    return hook(kind, x, w, weight_axis)


def matmul(x1, x2):
    """Matrix product like ``numpy.matmul``: batch dimensions broadcast; a 1-D
    operand is a vector (a 1 is added to its shape, then removed)."""
    trace, x1, x2 = _operands("matmul", x1, x2)
    _require_numeric("matmul", x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ShapeError(f"{_where()}: dlc.matmul: operands must have at least one "
                         f"dimension, but got {x1!r} and {x2!r}")
    x1, x2 = _quant_operands("matmul", x1, x2, -1)
    if x1 is None:  # dlc.quant computed the product in integers
        return x2
    return _matrix_product(trace, "dl.matmul", dl.MatmulOp, x1, x2)


def _matrix_product(trace, name, builder, x1, x2):
    """`builder`'s product of operands of rank 1 or more, numpy's way: a 1-D
    operand is a vector (a 1 added to its shape, then removed)."""
    vector_lhs, vector_rhs = x1.ndim == 1, x2.ndim == 1
    if vector_lhs:
        x1 = reshape(x1, (1, x1.shape[0]))
    if vector_rhs:
        x2 = reshape(x2, (x2.shape[0], 1))
    result = trace.emit(name, lambda: builder(x1.value, x2.value))
    if vector_lhs or vector_rhs:
        shape = list(result.shape)
        if vector_rhs:
            shape.pop(-1)
        if vector_lhs:
            shape.pop(-2 if not vector_rhs else -1)
        result = reshape(result, tuple(-1 if d is None else d for d in shape))
    return result


def matmul_integer(x1, x2):
    """Matrix product of 8-bit integers summed exactly in int32 (the
    ``dl.matmul_integer`` op): `x1` and `x2` are int8 or uint8 (they may
    differ), shaped as for :func:`matmul`; the result is int32. The integer
    products of quantized inference (ONNX ``MatMulInteger``)."""
    trace = _trace("matmul_integer")
    x1, x2 = _tensor(x1, "matmul_integer"), _tensor(x2, "matmul_integer")
    for x in (x1, x2):
        if x.dtype not in (np.dtype(np.int8), np.dtype(np.uint8)):
            raise DTypeError(f"{_where()}: dlc.matmul_integer needs int8 or uint8 "
                             f"operands, but got {x!r}")
    if x1.ndim == 0 or x2.ndim == 0:
        raise ShapeError(f"{_where()}: dlc.matmul_integer: operands must have at least "
                         f"one dimension, but got {x1!r} and {x2!r}")
    return _matrix_product(trace, "dl.matmul_integer", dl.MatmulIntegerOp, x1, x2)


def linear(x, w, b=None):
    """``x @ w.T + b`` with `w` of shape [out_features, in_features] (PyTorch's
    layout)."""
    x, w = _tensor(x, "linear"), _tensor(w, "linear")
    if w.ndim != 2:
        raise ShapeError(f"{_where()}: dlc.linear: the weight must be 2-D "
                         f"[out_features, in_features], but got {w!r}")
    y = matmul(x, transpose(w))
    return y if b is None else add(y, b)


def _pair(value, op_name, name):
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value), int(value))
    if (isinstance(value, (tuple, list)) and len(value) == 2 and
            builtins.all(isinstance(v, numbers.Integral) for v in value)):
        return (int(value[0]), int(value[1]))
    raise TypeError(f"{_where()}: dlc.{op_name}: {name} must be an int or a pair of "
                    f"ints, but got {value!r}")


def _check_layout(op_name, layout):
    if layout not in ("NCHW", "NHWC"):
        raise ValueError(f"{_where()}: dlc.{op_name}: layout must be 'NCHW' or "
                         f"'NHWC', but got {layout!r}")
    return layout


def _spatial(x, layout):
    return (x.shape[2], x.shape[3]) if layout == "NCHW" else (x.shape[1], x.shape[2])


def _padding(op_name, padding, spatial, kernel, strides, dilations):
    """[top, bottom, left, right] from an int, a pair, a 4-tuple or "same"/"valid"."""
    if padding == "valid":
        return [0, 0, 0, 0]
    if padding == "same":
        pads = []
        for axis, size, k, s, d in zip(("height", "width"), spatial, kernel, strides,
                                       dilations):
            if size is None and s != 1:
                # TensorFlow's split depends on the size modulo the stride.
                raise ShapeError(
                    f"{_where()}: dlc.{op_name}: padding='same' with stride {s} needs a "
                    f"static {axis} (it is dynamic here); pass the padding explicitly")
            if size is None:
                total = (k - 1) * d
                pads += [total // 2, total - total // 2]
                continue
            out = -(-size // s)
            total = builtins.max((out - 1) * s + (k - 1) * d + 1 - size, 0)
            pads += [total // 2, total - total // 2]
        return pads
    if (isinstance(padding, (tuple, list)) and len(padding) == 4 and
            builtins.all(isinstance(p, numbers.Integral) for p in padding)):
        return [int(p) for p in padding]
    ph, pw = _pair(padding, op_name, "padding")
    return [ph, ph, pw, pw]


def conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1, layout="NCHW"):
    """2-D convolution (cross-correlation), as in PyTorch.

    `layout="NCHW"`: x is [N, C, H, W] and w [F, C/groups, KH, KW];
    `layout="NHWC"`: x is [N, H, W, C] and w [KH, KW, C/groups, F]. `stride`,
    `dilation`: int or (h, w); `padding`: int, (h, w), (top, bottom, left,
    right), "valid" or "same" (TensorFlow's split, extra on the bottom/right);
    `groups` = C is a depthwise convolution; `b` is [F] or None.
    """
    x, w = _tensor(x, "conv2d"), _tensor(w, "conv2d")
    _require_float("conv2d", x, w)
    _check_layout("conv2d", layout)
    x, w = _quant_operands("conv2d", x, w, 0 if layout == "NCHW" else 3)
    if x.ndim != 4 or w.ndim != 4:
        raise ShapeError(f"{_where()}: dlc.conv2d: input and filter must be 4-D, but "
                         f"got {x!r} and {w!r}")
    strides = _pair(stride, "conv2d", "stride")
    dilations = _pair(dilation, "conv2d", "dilation")
    kernel = (w.shape[2], w.shape[3]) if layout == "NCHW" else (w.shape[0], w.shape[1])
    pads = _padding("conv2d", padding, _spatial(x, layout), kernel, strides, dilations)
    if not isinstance(groups, numbers.Integral) or isinstance(groups, bool):
        raise TypeError(f"{_where()}: dlc.conv2d: groups must be an int, but got {groups!r}")
    operands = [x, w]
    if b is not None:
        operands.append(_tensor(b, "conv2d"))
    trace, *operands = _operands("conv2d", *operands)
    return trace.emit("dl.conv2d", lambda: dl.Conv2dOp(
        operands[0].value, operands[1].value, list(strides), pads, list(dilations),
        _i64_attr(groups), ir.StringAttr.get(layout, context=trace.ctx),
        bias=operands[2].value if len(operands) > 2 else None))


def _pool_args(op_name, x, kernel_size, stride, padding, layout):
    x = _tensor(x, op_name)
    _require_float(op_name, x)
    _check_layout(op_name, layout)
    if x.ndim != 4:
        raise ShapeError(f"{_where()}: dlc.{op_name}: the input must be 4-D, but got {x!r}")
    kernel = _pair(kernel_size, op_name, "kernel_size")
    strides = kernel if stride is None else _pair(stride, op_name, "stride")
    pads = _padding(op_name, padding, _spatial(x, layout), kernel, strides, (1, 1))
    return x, list(kernel), list(strides), pads


def max_pool2d(x, kernel_size, stride=None, padding=0, layout="NCHW"):
    """Max pooling over `kernel_size` windows (stride defaults to the kernel);
    padding never wins. Padding is at most half the kernel, as in PyTorch."""
    x, kernel, strides, pads = _pool_args("max_pool2d", x, kernel_size, stride,
                                          padding, layout)
    return _trace("max_pool2d").emit("dl.max_pool2d", lambda: dl.MaxPool2dOp(
        x.value, kernel, strides, pads, ir.StringAttr.get(layout, context=x.value.context)))


def avg_pool2d(x, kernel_size, stride=None, padding=0, count_include_pad=True,
               layout="NCHW"):
    """Average pooling; with ``count_include_pad=False`` padding is not counted
    in the divisor (PyTorch's semantics)."""
    x, kernel, strides, pads = _pool_args("avg_pool2d", x, kernel_size, stride,
                                          padding, layout)
    return _trace("avg_pool2d").emit("dl.avg_pool2d", lambda: dl.AvgPool2dOp(
        x.value, kernel, strides, pads, ir.StringAttr.get(layout, context=x.value.context),
        count_include_pad=bool(count_include_pad)))


def global_avg_pool2d(x, layout="NCHW", keepdims=True):
    """Mean over the spatial dimensions ([N, C, 1, 1] for NCHW with keepdims)."""
    x = _tensor(x, "global_avg_pool2d")
    _check_layout("global_avg_pool2d", layout)
    if x.ndim != 4:
        raise ShapeError(f"{_where()}: dlc.global_avg_pool2d: the input must be 4-D, "
                         f"but got {x!r}")
    return mean(x, axis=(2, 3) if layout == "NCHW" else (1, 2), keepdims=keepdims)


def batch_norm(x, mean, var, gamma, beta, eps=1e-5, axis=1):
    """Batch normalization in inference form over channel `axis` (1 for NCHW,
    -1 for NHWC): ``(x - mean) / sqrt(var + eps) * gamma + beta``."""
    trace, x, mean, var, gamma, beta = _operands("batch_norm", x, mean, var, gamma, beta)
    _require_float("batch_norm", x)
    axis = _normalize_axis("batch_norm", axis, x.ndim)
    return trace.emit("dl.batch_norm", lambda: dl.BatchNormOp(
        x.value, mean.value, var.value, gamma.value, beta.value,
        _f64_attr(eps, "batch_norm", "eps"), _i64_attr(axis)))


def layer_norm(x, gamma=None, beta=None, axis=-1, eps=1e-5):
    """Layer normalization over dimensions `axis`..-1 (PyTorch's
    normalized_shape); `gamma`/`beta` have the shape of those dimensions
    (ones/zeros when None)."""
    x = _tensor(x, "layer_norm")
    _require_float("layer_norm", x)
    axis = _normalize_axis("layer_norm", axis, x.ndim)
    normalized = x.shape[axis:]
    if None in normalized:
        raise ShapeError(f"{_where()}: dlc.layer_norm: cannot normalize over the "
                         f"dynamic dimension of {x!r}")
    if gamma is None:
        gamma = np.ones(normalized, dtype=x.dtype)
    if beta is None:
        beta = np.zeros(normalized, dtype=x.dtype)
    trace, x, gamma, beta = _operands("layer_norm", x, gamma, beta)
    return trace.emit("dl.layer_norm", lambda: dl.LayerNormOp(
        x.value, gamma.value, beta.value, _i64_attr(axis),
        _f64_attr(eps, "layer_norm", "eps")))


# -- quantization -----------------------------------------------------------------

#: dtypes a quantized tensor (and its zero point) may have
QUANTIZED_DTYPES = tuple(np.dtype(n) for n in ("int8", "uint8", "int16", "uint16", "int32"))


def _quant_params(op_name, x, scale, zero_point, axis, scale_dtype, zero_dtype):
    """(scale, zero_point, axis) as tensors of one shape (rank 0: per tensor;
    rank 1: per index of `axis`) of `scale_dtype` / `zero_dtype`."""
    if not isinstance(scale, Tensor):
        scale = np.asarray(scale, dtype=scale_dtype)
    if not isinstance(zero_point, Tensor):
        zero_point = np.asarray(zero_point)
        if zero_point.dtype.kind not in "iu" or zero_point.dtype != zero_dtype:
            info = np.iinfo(zero_dtype)
            if not np.all((zero_point >= info.min) & (zero_point <= info.max)):
                raise DTypeError(f"{_where()}: dlc.{op_name}: the zero point "
                                 f"{zero_point!r} does not fit {zero_dtype}")
            zero_point = zero_point.astype(zero_dtype)
        if zero_point.shape != np.shape(scale) and zero_point.ndim == 0:
            zero_point = np.broadcast_to(zero_point, np.shape(scale)).copy()
    if len(np.shape(scale)) > 1:
        raise ShapeError(f"{_where()}: dlc.{op_name}: the scale must be a scalar (per "
                         f"tensor) or 1-D (per axis), but has shape {tuple(np.shape(scale))}")
    if len(np.shape(scale)) == 1:
        if axis is None:
            raise ShapeError(f"{_where()}: dlc.{op_name}: a 1-D scale quantizes per "
                             f"axis: say which one (axis=...)")
        axis = _normalize_axis(op_name, axis, x.ndim)
    trace, scale = _operands(op_name, scale)
    _, zero_point = _operands(op_name, zero_point)
    return trace, scale, zero_point, 0 if axis is None else axis


def quantize_linear(x, scale, zero_point=0, axis=None, dtype=None):
    """Affine quantization (ONNX QuantizeLinear, PyTorch's quantize_per_tensor
    and quantize_per_channel): ``clip(round(x / scale) + zero_point)`` to the
    range of `dtype`, rounding half to even. `scale` and `zero_point` are
    scalars (per tensor) or 1-D with one entry per index of `axis` (per
    channel). The result's dtype is `dtype`, or the zero point's when it is an
    array or tensor (int8 for a Python int); one of int8, uint8, int16, uint16,
    int32."""
    x = _tensor(x, "quantize_linear")
    _require_float("quantize_linear", x)
    if dtype is None:
        typed = isinstance(zero_point, (Tensor, np.ndarray, np.generic))
        dtype = zero_point.dtype if typed and zero_point.dtype.kind in "iu" \
            else np.dtype(np.int8)
    dtype = np.dtype(dtype)
    if dtype not in QUANTIZED_DTYPES:
        raise DTypeError(f"{_where()}: dlc.quantize_linear: cannot quantize to {dtype}; "
                         f"quantized dtypes: {', '.join(map(str, QUANTIZED_DTYPES))}")
    trace, scale, zero_point, axis = _quant_params(
        "quantize_linear", x, scale, zero_point, axis, x.dtype, dtype)
    return trace.emit("dl.quantize", lambda: dl.QuantizeOp(
        x.value, scale.value, zero_point.value, _i64_attr(axis)))


def dequantize_linear(q, scale, zero_point=0, axis=None, dtype=np.float32):
    """``(q - zero_point) * scale`` (ONNX DequantizeLinear, PyTorch's
    dequantize): integers back to floats of `dtype` (the scale's dtype when
    the scale is an array or tensor). `scale` and `zero_point` are scalars
    (per tensor) or 1-D along `axis`; the zero point has q's dtype."""
    q = _tensor(q, "dequantize_linear")
    if q.dtype not in QUANTIZED_DTYPES:
        raise DTypeError(f"{_where()}: dlc.dequantize_linear: {q!r} is not of a "
                         f"quantized dtype ({', '.join(map(str, QUANTIZED_DTYPES))})")
    if isinstance(scale, (Tensor, np.ndarray)) and dtypes.is_float(scale.dtype):
        dtype = scale.dtype
    trace, scale, zero_point, axis = _quant_params(
        "dequantize_linear", q, scale, zero_point, axis, np.dtype(dtype), q.dtype)
    return trace.emit("dl.dequantize", lambda: dl.DequantizeOp(
        q.value, scale.value, zero_point.value, _i64_attr(axis)))


# -- shapes and types -------------------------------------------------------------

def transpose(x, axes=None):
    """Permutes dimensions like numpy.transpose (reverses them when `axes` is
    None)."""
    x = _tensor(x, "transpose")
    if axes is None:
        perm = list(reversed(range(x.ndim)))
    else:
        perm = [_normalize_axis("transpose", a, x.ndim) for a in axes]
        if sorted(perm) != list(range(x.ndim)):
            raise ShapeError(f"{_where()}: dlc.transpose: axes {tuple(axes)!r} are not a "
                             f"permutation of the {x.ndim} dimensions of {x!r}")
    return _trace("transpose").emit("dl.transpose", lambda: dl.TransposeOp(x.value, perm))


def dim(x, axis):
    """The size of dimension `axis` of `x`: an int when it is static, a
    :class:`dlc.Size` (known at run time) when it is dynamic. Sizes combine
    with ``+ - * //`` and go where reshape, broadcast_to, slicing and arange
    take a size."""
    x = _tensor(x, "dim")
    return dim_of(x, _normalize_axis("dim", axis, x.ndim))


def size_tensor(size):
    """A 0-d int64 value of a size, for arithmetic with tensors: a numpy
    scalar for an int, a traced tensor for a run-time size (:class:`dlc.Size`:
    ``tensor.from_elements`` of the index cast to i64)."""
    if not isinstance(size, Size):
        return np.asarray(int(size), np.int64)
    from .mlir.dialects import arith, tensor

    def build():
        i64 = ir.IntegerType.get_signless(64)
        value = arith.IndexCastOp(i64, size.value).result
        return tensor.FromElementsOp(ir.RankedTensorType.get([], i64), [value])
    return _trace("size_tensor").emit("tensor.from_elements", build)


def _sizes(op_name, shape):
    """A shape of ints, -1/None and Sizes as (entries, size operands): each
    Size becomes a -1 entry with its value as an operand."""
    if isinstance(shape, (numbers.Integral, Size)) or shape is None:
        shape = (shape,)
    entries, operands = [], []
    for size in shape:
        if isinstance(size, Size):
            entries.append(-1)
            operands.append(size.value)
            continue
        if size is None:
            size = -1
        if not isinstance(size, numbers.Integral) or isinstance(size, bool):
            raise TypeError(f"{_where()}: dlc.{op_name}: sizes must be ints or "
                            f"dlc.dim sizes, but got {tuple(shape)!r}")
        entries.append(int(size))
    if operands and -1 in [e for e, s in zip(entries, shape) if not isinstance(s, Size)]:
        raise ValueError(f"{_where()}: dlc.{op_name}: a shape with run-time sizes "
                         f"(dlc.dim) gives every other size, but got -1 in "
                         f"{tuple(shape)!r}")
    return entries, operands


def reshape(x, shape):
    """Gives `x` a new shape with the same elements in row-major order, like
    numpy.reshape; one entry may be -1 (``None`` is read as -1, so
    ``x.reshape(x.shape[0], -1)`` works with a dynamic batch). Entries may be
    run-time sizes (``dlc.dim``): ``x.reshape(dlc.dim(x, 0), dlc.dim(x, 1),
    12, 64)`` splits the last dimension of a tensor with two dynamic ones."""
    x = _tensor(x, "reshape")
    if isinstance(shape, (tuple, list)) and builtins.any(isinstance(s, Size) for s in shape):
        shape = _infer_unknown(x, list(shape))
    entries, operands = _sizes("reshape", shape)
    return _trace("reshape").emit("dl.reshape",
                                  lambda: dl.ReshapeOp(x.value, entries, operands))


def _infer_unknown(x, shape):
    """A shape with run-time sizes and one -1 (or None): the -1 computed, as
    x's element count over the other sizes (PyTorch's view(b, s, -1, 64))."""
    unknown = [i for i, s in enumerate(shape)
               if s is None or (not isinstance(s, Size) and s == -1)]
    if len(unknown) != 1:
        return shape
    total = 1
    for axis in range(x.ndim):
        total = total * dim_of(x, axis)
    known = 1
    for i, s in enumerate(shape):
        if i != unknown[0]:
            known = known * s
    shape[unknown[0]] = total // known
    return shape


def arange(start, stop=None, step=1, dtype=np.int64):
    """numpy.arange of integer bounds that may be run-time sizes
    (``dlc.dim``): ``arange(n)``, ``arange(start, stop[, step])`` with a
    positive step; all static, a constant."""
    trace = _trace("arange")
    if stop is None:
        start, stop = 0, start
    bounds = (start, stop, step)
    if not builtins.any(isinstance(v, Size) for v in bounds):
        return trace.constant(np.arange(start, stop, step).astype(dtype))
    if isinstance(step, Size) or not isinstance(step, numbers.Integral) or step <= 0 or \
            not builtins.all(isinstance(v, (numbers.Integral, Size)) for v in bounds):
        raise ValueError(f"{_where()}: dlc.arange of a run-time length takes integer "
                         f"bounds and a positive static step, but got {bounds!r}")
    count = (stop - start + (step - 1)) // step
    values = trace.emit("dl.iota", lambda: dl.IotaOp(
        ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()],
                                dtypes.to_mlir(np.dtype(np.int64))), count.value))
    if step != 1:
        values = multiply(values, np.asarray(step, np.int64))
    if isinstance(start, Size) or start != 0:
        values = add(values, size_tensor(start))
    return values if np.dtype(dtype) == np.int64 else astype(values, dtype)


def flatten(x, start_axis=1):
    """Merges dimensions `start_axis`.. into one (PyTorch's flatten; the
    default keeps the batch dimension)."""
    x = _tensor(x, "flatten")
    start = _normalize_axis("flatten", start_axis, builtins.max(x.ndim, 1))
    if start == 0:
        return reshape(x, (-1,))
    kept = [dim_of(x, i) for i in range(start)]
    if None not in x.shape[start:]:
        merged = int(np.prod(x.shape[start:], dtype=np.int64))
    else:
        merged = 1
        for i in range(start, x.ndim):
            merged = merged * dim_of(x, i)
    return _reshape_keeping(x, kept + [merged])


def _reshape_keeping(x, shape):
    """reshape to `shape` (ints and Sizes); with one dynamic entry only, it is
    a -1 (no size operand), as a dynamic batch always was."""
    dynamic = [i for i, s in enumerate(shape) if isinstance(s, Size)]
    if len(dynamic) == 1 and None in x.shape:
        shape = [-1 if isinstance(s, Size) else s for s in shape]
    return reshape(x, tuple(shape))


def squeeze(x, axis=None):
    """Removes size-1 dimensions (all of them, or those in `axis`)."""
    x = _tensor(x, "squeeze")
    if axis is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    else:
        axes = _normalize_axes("squeeze", axis, x.ndim)
        for a in axes:
            if x.shape[a] != 1:
                raise ShapeError(f"{_where()}: dlc.squeeze: dimension {a} of {x!r} is "
                                 f"not 1")
    return _reshape_keeping(x, [dim_of(x, i) for i in range(x.ndim) if i not in axes])


def expand_dims(x, axis):
    """Inserts size-1 dimensions at `axis` (int or tuple), like numpy."""
    x = _tensor(x, "expand_dims")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = x.ndim + len(axes)
    positions = _normalize_axes("expand_dims", axes, ndim)
    sizes = iter([dim_of(x, i) for i in range(x.ndim)])
    shape = [1 if i in positions else next(sizes) for i in range(ndim)]
    return _reshape_keeping(x, shape)


def concatenate(tensors, axis=0):
    """Joins tensors along `axis`, like numpy.concatenate."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"{_where()}: dlc.concatenate needs at least one tensor")
    trace, *tensors = _operands("concatenate", *tensors)
    axis = _normalize_axis("concatenate", axis, builtins.max(tensors[0].ndim, 1))
    if len(tensors) == 1:
        return tensors[0]
    return trace.emit("dl.concat", lambda: dl.ConcatOp([t.value for t in tensors],
                                                        _i64_attr(axis)))


def split(x, indices_or_sections, axis=0):
    """Splits `x` along `axis` like numpy.split: into N equal sections, or at
    the given indices. Returns a list of tensors."""
    x = _tensor(x, "split")
    axis = _normalize_axis("split", axis, x.ndim)
    size = x.shape[axis]
    if size is None:
        raise ShapeError(f"{_where()}: dlc.split cannot split the dynamic dimension "
                         f"of {x!r}")
    if isinstance(indices_or_sections, numbers.Integral):
        sections = int(indices_or_sections)
        if sections <= 0 or size % sections:
            raise ShapeError(f"{_where()}: dlc.split: dimension {axis} of {x!r} does "
                             f"not split into {sections} equal sections")
        bounds = [i * (size // sections) for i in range(sections + 1)]
    else:
        bounds = [0] + [builtins.min(builtins.max(int(i) if i >= 0 else size + int(i), 0), size)
                        for i in indices_or_sections] + [size]
    pieces = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        index = [slice(None)] * x.ndim
        index[axis] = slice(start, builtins.max(start, stop))
        pieces.append(x[tuple(index)])
    return pieces


def _index_constant(value):
    from .mlir.dialects import arith
    return arith.ConstantOp(ir.IndexType.get(), int(value))


def _slice(x, starts, sizes, strides, dynamic_sizes=()):
    operands = [s.value for s in dynamic_sizes]
    return _trace("getitem").emit(
        "dl.slice", lambda: dl.SliceOp(x.value, starts, sizes, strides, operands))


def _static_window(x, axis, start, size, step=1):
    """`size` elements of dimension `axis` from `start` every `step`, a
    static size even where the dimension is dynamic (the caller knows it
    holds them: an importer whose exporter proved it); the other dimensions
    whole."""
    shape = x.shape
    starts, sizes = [0] * x.ndim, [-1 if d is None else d for d in shape]
    strides = [1] * x.ndim
    starts[axis], sizes[axis], strides[axis] = start, size, step
    dynamic = [dim(x, a) for a, d in enumerate(shape) if d is None and a != axis]
    return _slice(x, starts, sizes, strides, dynamic)


def getitem(x, key):
    """numpy basic indexing on a traced tensor: ints, slices (any step),
    ``None`` (new axis) and ``...``. The dynamic dimension only takes ``:``."""
    x = _tensor(x, "getitem")
    key = key if isinstance(key, tuple) else (key,)
    for k in key:
        if isinstance(k, (Tensor, np.ndarray, list)):
            kind = "a boolean mask" if getattr(k, "dtype", None) == np.bool_ else \
                "an array of indices"
            raise IndexError(
                f"{_where()}: indexing {x!r} with {kind} is not supported: with a "
                f"mask the result's shape depends on the data (use dlc.where(mask, "
                f"x, 0) to keep the shape), and gathers are dlc.take; indices are "
                f"ints, slices, None and ...")
    if builtins.sum(k is Ellipsis for k in key) > 1:
        raise IndexError(f"{_where()}: an index can only have a single ellipsis")
    consumed = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    if consumed > x.ndim:
        raise IndexError(f"{_where()}: too many indices for {x!r}: {consumed} given")
    if Ellipsis in key:
        at = key.index(Ellipsis)
        key = key[:at] + (slice(None),) * (x.ndim - consumed) + key[at + 1:]
    else:
        key = key + (slice(None),) * (x.ndim - consumed)
    starts, sizes, strides, dynamic, layout = [], [], [], [], []
    dim = 0
    for k in key:
        if k is None:
            layout.append(None)  # a new axis
            continue
        extent = x.shape[dim]
        if isinstance(k, slice) and (extent is None or isinstance(k.stop, Size)):
            # A window of a run-time size: from a static start, forwards.
            start = 0 if k.start is None else k.start
            step = 1 if k.step is None else k.step
            if k == slice(None) or k == slice(None, None, 1):
                starts.append(0), sizes.append(-1), strides.append(1)
                if extent is not None:  # a whole static dimension
                    sizes[-1] = extent
                else:
                    dynamic.append(("whole", dim))
            elif not (isinstance(start, numbers.Integral) and start >= 0 and
                      isinstance(step, numbers.Integral) and step > 0 and
                      (k.stop is None or isinstance(k.stop, Size) or
                       isinstance(k.stop, numbers.Integral))):
                raise IndexError(f"{_where()}: a slice of a dynamic size takes a start "
                                 f">= 0 and a step > 0, but got {k} for dimension {dim} "
                                 f"of {x!r}")
            else:
                end = dim_of(x, dim) if k.stop is None else k.stop
                if isinstance(end, numbers.Integral) and end < 0:
                    end = dim_of(x, dim) + int(end)
                count = (end - start + (step - 1)) // step
                if not isinstance(count, Size):  # a static stop on a dynamic dimension
                    count = builtins.max(count, 0)
                    count = _trace("getitem").size(lambda c=count: _index_constant(c))
                starts.append(int(start)), sizes.append(-1), strides.append(int(step))
                dynamic.append(("window", count))
            layout.append(dim)
        elif isinstance(k, slice):
            start, stop, step = k.indices(extent)
            count = len(range(start, stop, step))
            starts.append(start if count else 0), sizes.append(count)
            strides.append(step)
            layout.append(dim)
        elif isinstance(k, numbers.Integral) and not isinstance(k, bool):
            if extent is None:
                if k < 0:
                    raise IndexError(f"{_where()}: cannot index the dynamic dimension "
                                     f"{dim} of {x!r} from its end ({k})")
                # The caller's promise: the dimension has more than k elements.
                starts.append(int(k)), sizes.append(1), strides.append(1)
            else:
                if not -extent <= k < extent:
                    raise IndexError(f"{_where()}: index {k} is out of bounds for "
                                     f"dimension {dim} of {x!r}")
                starts.append(int(k) % extent), sizes.append(1), strides.append(1)
        else:
            raise IndexError(f"{_where()}: dlc supports ints, slices, None and ... as "
                             f"indices, but got {k!r}; use dlc.take for index arrays")
        dim += 1
    result = x
    windows = builtins.any(kind == "window" for kind, _ in dynamic)
    if windows or builtins.any(s != 0 for s in starts) or builtins.any(
            size != -1 and size != extent for size, extent in zip(sizes, x.shape)) or \
            builtins.any(s != 1 for s in strides):
        # With a window of a run-time size, every -1 takes a size operand (a
        # whole dynamic dimension its own size).
        operands = [size if kind == "window" else dim_of(x, size)
                    for kind, size in dynamic] if windows else []
        result = _slice(x, starts, sizes, strides, operands)
    shape = [1 if d is None else dim_of(result, d) for d in layout]
    if len(shape) != result.ndim or builtins.any(
            not isinstance(a, Size) and a != b for a, b in zip(shape, result.shape)):
        result = _reshape_keeping(result, shape)
    return result


def pad(x, pad_width, mode="constant", constant_values=0):
    """numpy.pad: `pad_width` is an int, a (before, after) pair, or one pair
    per dimension; `mode` is "constant" (`constant_values`), "edge" (the
    border element repeated), "reflect" (mirrored without the border) or
    "wrap" (the other end's elements)."""
    x = _tensor(x, "pad")
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise ValueError(f"{_where()}: dlc.pad: mode must be 'constant', 'edge', "
                         f"'reflect' or 'wrap', but got {mode!r}")
    try:
        widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64),
                                 (x.ndim, 2)).tolist() if x.ndim else []
    except (ValueError, TypeError):
        raise ValueError(f"{_where()}: dlc.pad: pad_width must be an int, a (before, "
                         f"after) pair or one pair per dimension of {x!r} ({x.ndim} "
                         f"pairs), but got {pad_width!r}") from None
    if builtins.any(w < 0 for pair in widths for w in pair):
        raise ValueError(f"{_where()}: dlc.pad: pad widths must be >= 0, got {pad_width!r}")
    for (before, after), size in zip(widths, x.shape):
        if size is None and (before or after) and mode != "constant":
            raise ShapeError(f"{_where()}: dlc.pad: mode {mode!r} cannot pad the dynamic "
                             f"dimension of {x!r} (only 'constant' can)")
    if mode != "constant":
        return _pad_by_copies(x, widths, mode)
    low = [p[0] for p in widths]
    high = [p[1] for p in widths]
    value = _f64_attr(constant_values, "pad", "constant_values")
    return _trace("pad").emit("dl.pad", lambda: dl.PadOp(x.value, low, high, value))


def _pad_by_copies(x, widths, mode):
    """Edge, reflect and wrap padding: the input's own slices concatenated
    around it, one dimension after the other."""
    for axis, (before, after) in enumerate(widths):
        if not before and not after:
            continue
        size = x.shape[axis]
        if size == 0 or (mode == "reflect" and builtins.max(before, after) >= size):
            raise ShapeError(f"{_where()}: dlc.pad: mode {mode!r} cannot pad dimension "
                             f"{axis} of {x!r} by {builtins.max(before, after)}")

        def piece(index, axis=axis):
            key = [slice(None)] * x.ndim
            key[axis] = slice(index, index + 1)
            return x[tuple(key)]
        if mode == "edge":
            left, right = [piece(0)] * before, [piece(size - 1)] * after
        elif mode == "reflect":
            left = [piece(i) for i in range(before, 0, -1)]
            right = [piece(size - 2 - i) for i in range(after)]
        else:
            left = [piece((i - before) % size) for i in range(before)]
            right = [piece(i % size) for i in range(after)]
        x = concatenate(left + [x] + right, axis=axis)
    return x


def broadcast_to(x, shape):
    """numpy.broadcast_to; an entry of -1 or None keeps the input's dimension
    there (a dynamic one stays dynamic), and run-time sizes (``dlc.dim``) give
    dynamic dimensions that size-1 dimensions broadcast to."""
    x = _tensor(x, "broadcast_to")
    shape = shape if isinstance(shape, (tuple, list)) else (shape,)
    if builtins.any(isinstance(d, Size) for d in shape):
        # With run-time sizes every dynamic entry is one; a kept dimension
        # takes its size from the input.
        offset = len(shape) - x.ndim
        shape = [dim_of(x, i - offset) if (d is None or (not isinstance(d, Size) and d == -1))
                 and i >= offset else d for i, d in enumerate(shape)]
        entries, operands = _sizes("broadcast_to", [d if isinstance(d, Size) or d is None
                                                     else int(d) for d in shape])
    else:
        entries, operands = [-1 if d is None else int(d) for d in shape], []
    return _trace("broadcast_to").emit(
        "dl.broadcast_to", lambda: dl.BroadcastToOp(x.value, entries, operands))


def take(x, indices, axis=0):
    """numpy.take: elements of `x` along `axis` at integer `indices` (an
    embedding lookup for axis 0). Negative indices count from the end; indices
    out of range are clamped (numpy would raise)."""
    x = _tensor(x, "take")
    if not isinstance(indices, Tensor):
        indices = np.asarray(indices)
        if indices.dtype.kind not in "iu":
            raise DTypeError(f"{_where()}: dlc.take: indices must be integers, but got "
                             f"dtype {indices.dtype}")
        indices = _tensor(indices.astype(np.int64), "take")
    if indices.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise DTypeError(f"{_where()}: dlc.take: indices must be int32 or int64, but "
                         f"got {indices!r}")
    axis = _normalize_axis("take", axis, x.ndim)
    return _trace("take").emit("dl.gather", lambda: dl.GatherOp(
        x.value, indices.value, _i64_attr(axis)))


gather = take


def astype(x, dtype):
    """`x` converted to `dtype`, like numpy's astype (floats to ints truncate
    towards zero; anything to bool is `!= 0`)."""
    x = _tensor(x, "astype")
    dtype = dtypes.numpy_dtype(dtype)
    if not dtypes.is_supported(dtype):
        raise DTypeError(f"{_where()}: dlc.astype: dtype {dtype} is not supported; "
                         f"supported: {dtypes.supported_names()}")
    if dtype == x.dtype:
        return x
    trace = _trace("astype")
    with _context():
        result_type = dtypes.tensor_type(x.shape, dtype)
    return trace.emit("dl.cast", lambda: dl.CastOp(result_type, x.value))


cast = astype


# -- Tensor methods -------------------------------------------------------------
# The operators of a traced Tensor, installed here (as JAX installs its array
# methods) so that the tracer never imports the ops.

def _binary_method(op, reflected=False):
    """A Tensor method applying `op` (operands swapped if reflected)."""
    def method(self, other):
        return op(other, self) if reflected else op(self, other)
    method.__name__ = f"__{'r' if reflected else ''}{op.__name__}__"
    return method


def _reshape_method(self, *shape):
    """This tensor reshaped (see dlc.reshape); ``x.reshape(2, 3)`` or
    ``x.reshape((2, 3))``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return reshape(self, shape)


def _astype_method(self, dtype):
    """This tensor converted to `dtype` (see dlc.astype)."""
    return astype(self, dtype)


def _install_tensor_methods():
    for dunder, op in [("add", add), ("sub", subtract), ("mul", multiply),
                       ("truediv", divide), ("matmul", matmul), ("pow", power),
                       ("mod", remainder), ("and", bitwise_and), ("or", bitwise_or),
                       ("xor", bitwise_xor)]:
        setattr(Tensor, f"__{dunder}__", _binary_method(op))
        setattr(Tensor, f"__r{dunder}__", _binary_method(op, reflected=True))
    # Comparisons give bool tensors (`x == y` too, as in numpy); Python's
    # reflection of `a < b` is `b > a`, so each needs only its forward form.
    for dunder, op in [("lt", less), ("le", less_equal), ("gt", greater),
                       ("ge", greater_equal), ("eq", equal), ("ne", not_equal)]:
        setattr(Tensor, f"__{dunder}__", _binary_method(op))
    Tensor.__neg__ = lambda self: negative(self)
    Tensor.__abs__ = lambda self: abs(self)
    Tensor.__invert__ = lambda self: invert(self)
    Tensor.__getitem__ = lambda self, key: getitem(self, key)
    Tensor.T = property(lambda self: transpose(self))
    Tensor.reshape = _reshape_method
    Tensor.astype = _astype_method


_install_tensor_methods()
