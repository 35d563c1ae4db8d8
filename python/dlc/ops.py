"""dlc operations: numpy-named functions that build `dl` ops while tracing.

Call them inside a :func:`dlc.jit` function on traced tensors, numpy arrays or
Python scalars. numpy arrays become constants; Python scalars take the dtype of
the tensor they meet (``x * 2`` keeps ``x``'s dtype). Binary operations
broadcast like numpy. Every error names the operation, the operands and the
line of user code that called it.
"""

import numbers

import numpy as np

from . import dtypes
from .errors import DTypeError, ShapeError, TraceError
from .mlir import ir
from .mlir.dialects import dl
from .tracing import Tensor, current_trace, format_location, user_location

__all__ = [
    "add", "subtract", "multiply", "divide", "negative", "matmul", "relu", "exp",
    "softmax", "sum", "max", "transpose", "reshape", "asarray",
]


def _trace(op_name):
    trace = current_trace()
    if trace is None:
        raise TraceError(
            f"{format_location(user_location())}: dlc.{op_name} builds a compiled "
            f"operation and can only be called inside a @dlc.jit function")
    return trace


def asarray(value, dtype=None):
    """A traced tensor from a Tensor, numpy array or Python scalar (as a
    constant of `dtype`; a Python float becomes float32 unless `dtype` says
    otherwise)."""
    return _tensor(value, "asarray", dtype)


def _tensor(value, op_name, dtype=None):
    if isinstance(value, Tensor):
        return value
    trace = _trace(op_name)
    array = np.asarray(value, dtype=dtype)
    if dtype is None and isinstance(value, float):
        array = array.astype(np.float32)
    return trace.constant(array)


def _scalar_for(value, dtype, op_name, other):
    """A Python scalar as a rank-0 constant of the dtype of the tensor it meets."""
    dtype = np.dtype(dtype)
    if isinstance(value, (bool, np.bool_)) and dtype != np.bool_:
        value = int(value)
    if dtypes.is_float(dtype) or (isinstance(value, numbers.Integral) and
                                  dtype.kind in "ib"):
        if dtype.kind == "i":
            info = np.iinfo(dtype)
            if not info.min <= value <= info.max:
                raise DTypeError(
                    f"{format_location(user_location())}: dlc.{op_name}: the "
                    f"Python integer {value} does not fit the {dtype} operand "
                    f"{other!r}")
        return np.array(value, dtype=dtype)
    raise DTypeError(
        f"{format_location(user_location())}: dlc.{op_name}: cannot combine the "
        f"{dtype} operand {other!r} with the Python {type(value).__name__} "
        f"{value!r} without a cast")


def _operands(op_name, lhs, rhs):
    """Both operands of a binary op as Tensors of one dtype."""
    trace = _trace(op_name)
    is_scalar = lambda v: isinstance(v, (numbers.Number, np.bool_)) and not isinstance(v, np.ndarray)
    if isinstance(lhs, Tensor) and is_scalar(rhs):
        rhs = trace.constant(_scalar_for(rhs, lhs.dtype, op_name, lhs))
    elif isinstance(rhs, Tensor) and is_scalar(lhs):
        lhs = trace.constant(_scalar_for(lhs, rhs.dtype, op_name, rhs))
    lhs, rhs = _tensor(lhs, op_name), _tensor(rhs, op_name)
    if lhs.dtype != rhs.dtype:
        raise DTypeError(
            f"{format_location(user_location())}: dlc.{op_name}: operands have "
            f"different dtypes: {lhs!r} and {rhs!r}; dlc does not promote "
            f"dtypes implicitly")
    return trace, lhs, rhs


def _require_numeric(op_name, *tensors):
    for t in tensors:
        if t.dtype == np.bool_:
            raise DTypeError(f"{format_location(user_location())}: dlc.{op_name} "
                             f"does not accept the bool operand {t!r}")


def _require_float(op_name, tensor):
    if not dtypes.is_float(tensor.dtype):
        raise DTypeError(f"{format_location(user_location())}: dlc.{op_name} "
                         f"needs a floating-point operand, but got {tensor!r}")


def _binary(op_name, builder, lhs, rhs):
    trace, lhs, rhs = _operands(op_name, lhs, rhs)
    _require_numeric(op_name, lhs, rhs)
    return trace.emit(f"dl.{op_name}", lambda: builder(lhs.value, rhs.value))


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
    trace, x1, x2 = _operands("divide", x1, x2)
    _require_float("divide", x1)
    return trace.emit("dl.div", lambda: dl.DivOp(x1.value, x2.value))


def negative(x):
    """Elementwise ``-x``."""
    x = _tensor(x, "negative")
    return multiply(x, -1)


def matmul(x1, x2):
    """Matrix product like ``numpy.matmul``: batch dimensions broadcast; a 1-D
    operand is a vector (a 1 is added to its shape, then removed)."""
    trace, x1, x2 = _operands("matmul", x1, x2)
    _require_numeric("matmul", x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ShapeError(f"{format_location(user_location())}: dlc.matmul: "
                         f"operands must have at least one dimension, but got "
                         f"{x1!r} and {x2!r}")
    vector_lhs, vector_rhs = x1.ndim == 1, x2.ndim == 1
    if vector_lhs:
        x1 = reshape(x1, (1, x1.shape[0]))
    if vector_rhs:
        x2 = reshape(x2, (x2.shape[0], 1))
    result = trace.emit("dl.matmul", lambda: dl.MatmulOp(x1.value, x2.value))
    if vector_lhs or vector_rhs:
        shape = list(result.shape)
        if vector_rhs:
            shape.pop(-1)
        if vector_lhs:
            shape.pop(-2 if not vector_rhs else -1)
        result = reshape(result, tuple(-1 if d is None else d for d in shape))
    return result


def relu(x):
    """Rectified linear unit ``max(x, 0)``, elementwise."""
    x = _tensor(x, "relu")
    _require_numeric("relu", x)
    return _trace("relu").emit("dl.relu", lambda: dl.ReluOp(x.value))


def exp(x):
    """Elementwise exponential."""
    x = _tensor(x, "exp")
    _require_float("exp", x)
    return _trace("exp").emit("dl.exp", lambda: dl.ExpOp(x.value))


def _normalize_axis(op_name, axis, ndim):
    if not isinstance(axis, (numbers.Integral,)) or isinstance(axis, bool):
        raise TypeError(f"{format_location(user_location())}: dlc.{op_name}: "
                        f"axis must be an int, but got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{format_location(user_location())}: dlc.{op_name}: "
                         f"axis {axis} is out of bounds for a tensor of rank {ndim}")
    return int(axis) % ndim


def _normalize_axes(op_name, axis, ndim):
    if axis is None:
        return list(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    normalized = [_normalize_axis(op_name, a, ndim) for a in axes]
    if len(set(normalized)) != len(normalized):
        raise ShapeError(f"{format_location(user_location())}: dlc.{op_name}: "
                         f"duplicate axes in {axis!r}")
    return sorted(normalized)


def softmax(x, axis=-1):
    """Softmax along `axis`, computed as ``exp(x - max) / sum(exp(x - max))``."""
    x = _tensor(x, "softmax")
    _require_float("softmax", x)
    axis = _normalize_axis("softmax", axis, x.ndim)
    with ir.Location.unknown(context=x.value.context):
        axis_attr = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), axis)
    return _trace("softmax").emit("dl.softmax", lambda: dl.SoftmaxOp(x.value, axis_attr))


def _reduce(op_name, builder, x, axis, keepdims):
    x = _tensor(x, op_name)
    _require_numeric(op_name, x)
    axes = _normalize_axes(op_name, axis, x.ndim)
    return _trace(op_name).emit(
        f"dl.reduce_{op_name}",
        lambda: builder(x.value, axes, keepdims=bool(keepdims)))


def sum(x, axis=None, keepdims=False):  # noqa: A001 - numpy's name
    """Sum over `axis` (int, tuple of ints, or None for all), like numpy.sum.
    The result keeps the input's dtype."""
    return _reduce("sum", dl.ReduceSumOp, x, axis, keepdims)


def max(x, axis=None, keepdims=False):  # noqa: A001 - numpy's name
    """Maximum over `axis` (int, tuple of ints, or None for all), like
    numpy.max; NaN propagates. Like numpy, an empty reduced axis is an error
    when its size is known at trace time (a dynamic batch of 0 rows gives the
    identity, -inf or the smallest integer)."""
    x = _tensor(x, "max")
    for a in _normalize_axes("max", axis, x.ndim):
        if x.shape[a] == 0:
            raise ShapeError(f"{format_location(user_location())}: dlc.max: axis {a} "
                             f"of {x!r} is empty, and the maximum has no identity")
    return _reduce("max", dl.ReduceMaxOp, x, axis, keepdims)


def transpose(x, axes=None):
    """Permutes dimensions like numpy.transpose (reverses them when `axes` is
    None)."""
    x = _tensor(x, "transpose")
    if axes is None:
        perm = list(reversed(range(x.ndim)))
    else:
        perm = [_normalize_axis("transpose", a, x.ndim) for a in axes]
        if sorted(perm) != list(range(x.ndim)):
            raise ShapeError(f"{format_location(user_location())}: dlc.transpose: "
                             f"axes {tuple(axes)!r} are not a permutation of the "
                             f"{x.ndim} dimensions of {x!r}")
    return _trace("transpose").emit("dl.transpose", lambda: dl.TransposeOp(x.value, perm))


def reshape(x, shape):
    """Gives `x` a new shape with the same elements in row-major order, like
    numpy.reshape; one entry may be -1 (``None`` is read as -1, so
    ``x.reshape(x.shape[0], -1)`` works with a dynamic batch)."""
    x = _tensor(x, "reshape")
    if isinstance(shape, (numbers.Integral,)) or shape is None:
        shape = (shape,)
    sizes = []
    for size in shape:
        if size is None:
            size = -1
        if not isinstance(size, numbers.Integral) or isinstance(size, bool):
            raise TypeError(f"{format_location(user_location())}: dlc.reshape: "
                            f"sizes must be ints, but got {tuple(shape)!r}")
        sizes.append(int(size))
    return _trace("reshape").emit("dl.reshape", lambda: dl.ReshapeOp(x.value, sizes))
