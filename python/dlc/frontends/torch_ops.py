"""The ATen operator table of the PyTorch importer: one converter per core
ATen overload (after ``torch.export``'s decompositions), calling dlc's ops.

``CONVERTERS["aten.add.Tensor"](node, *args, **kwargs)`` receives the FX
node and its arguments with graph values replaced by traced tensors (or
numpy arrays for parameters), and returns the node's value. Dtypes follow
PyTorch's type promotion (``torch.result_type``), which dlc itself never
applies implicitly.
"""

import builtins
import numbers
import weakref

import numpy as np

from .. import composite as C
from .. import dtypes
from .. import ops as D
from ..errors import DynamicDimensionError, ModelImportError
from ..mlir.dialects import dl
from ..tracing import Size, Tensor
from ..quant import integer
from .common import bit_shift, pool2d_any_size, registrar

__all__ = ["CONVERTERS"]

CONVERTERS = {}
converter = registrar(CONVERTERS)


def _is_value(x):
    return isinstance(x, (Tensor, np.ndarray))


def _shape(x):
    return tuple(x.shape)


def _ndim(x):
    return len(x.shape)


def _np_dtype(torch_dtype):
    import torch
    if torch_dtype == torch.bfloat16:
        return dtypes.BFLOAT16
    dtype = np.dtype(torch.empty((), dtype=torch_dtype).numpy().dtype)
    if not dtypes.is_supported(dtype):
        raise ModelImportError(f"dtype {torch_dtype} is not supported by dlc "
                               f"({dtypes.supported_names()})")
    return dtype


def _torch_dtype(np_dtype):
    import torch
    if np.dtype(np_dtype) == dtypes.BFLOAT16:
        return torch.bfloat16
    return torch.from_numpy(np.zeros((), np_dtype)).dtype


def _result_dtype(*operands):
    """PyTorch's promoted dtype of tensors and Python scalars."""
    import torch
    probes = []
    for x in operands:
        if _is_value(x):
            probes.append(torch.empty((1,) if _ndim(x) else (), dtype=_torch_dtype(x.dtype)))
        elif isinstance(x, (bool, numbers.Number)):
            probes.append(x)
    if len(probes) == 1:
        p = probes[0]
        return _np_dtype(p.dtype) if isinstance(p, torch.Tensor) else \
            _np_dtype(torch.tensor(p).dtype)
    result = probes[0]
    dtype = None
    for p in probes[1:]:
        dtype = torch.result_type(result, p)
        result = torch.empty((1,), dtype=dtype) if (
            isinstance(result, torch.Tensor) and result.dim()) or (
            isinstance(p, torch.Tensor) and p.dim()) else torch.empty((), dtype=dtype)
    return _np_dtype(dtype)


def _cast(x, dtype):
    if _is_value(x):
        return x if x.dtype == dtype else D.astype(x, dtype)
    return np.asarray(x, dtype)


def _promoted(*operands):
    dtype = _result_dtype(*operands)
    return [_cast(x, dtype) for x in operands], dtype


def _float_of(x):
    """x as floating point (PyTorch's default float32 for integers)."""
    return x if dtypes.is_float(x.dtype) else D.astype(x, np.float32)


# -- elementwise -------------------------------------------------------------------------

def _binary(fn):
    def convert(node, a, b, alpha=1):
        (a, b), _ = _promoted(a, b)
        if alpha != 1:
            b = D.multiply(b, alpha)
        return fn(a, b)
    return convert


for _names, _fn in [(("aten.add.Tensor", "aten.add.Scalar"), D.add),
                    (("aten.sub.Tensor", "aten.sub.Scalar"), D.subtract),
                    (("aten.mul.Tensor", "aten.mul.Scalar", "aten.multiply.Tensor"), D.multiply),
                    (("aten.maximum.default", "aten.max.other"), D.maximum),
                    (("aten.minimum.default", "aten.min.other"), D.minimum),
                    (("aten.remainder.Tensor", "aten.remainder.Scalar"), D.remainder),
                    (("aten.fmod.Tensor", "aten.fmod.Scalar"), D.fmod),
                    (("aten.bitwise_and.Tensor",), D.bitwise_and),
                    (("aten.bitwise_or.Tensor",), D.bitwise_or),
                    (("aten.bitwise_xor.Tensor",), D.bitwise_xor)]:
    for _name in _names:
        CONVERTERS[_name] = _binary(_fn)


@converter("aten.__lshift__.Scalar", "aten.__lshift__.Tensor",
           "aten.bitwise_left_shift.Tensor", "aten.bitwise_left_shift.Tensor_Scalar",
           "aten.__rshift__.Scalar", "aten.__rshift__.Tensor",
           "aten.bitwise_right_shift.Tensor", "aten.bitwise_right_shift.Tensor_Scalar")
def _shift(node, a, b):
    (a, b), dtype = _promoted(a, b)
    if not np.issubdtype(dtype, np.integer):
        raise ModelImportError(f"shifts need integer operands, but got {dtype}")
    name = str(node.target)
    return bit_shift(a, b, "lshift" in name or "left_shift" in name)


@converter("aten.rsub.Scalar", "aten.rsub.Tensor")
def _rsub(node, a, b, alpha=1):
    (a, b), _ = _promoted(a, b)
    return D.subtract(b, D.multiply(a, alpha) if alpha != 1 else a)


@converter("aten.div.Tensor", "aten.div.Scalar", "aten.div.Tensor_mode", "aten.div.Scalar_mode")
def _div(node, a, b, rounding_mode=None):
    (a, b), dtype = _promoted(a, b)
    if rounding_mode is None:
        if not dtypes.is_float(dtype):
            a, b = D.astype(a, np.float32), _cast(b, np.float32)
        return D.divide(a, b)
    if dtypes.is_float(dtype):
        q = D.divide(a, b)
        if rounding_mode == "trunc":
            return _trunc(node, q)
        return D.floor(q)
    trace, x, y = D._operands("divide", a, b)
    q = trace.emit("dl.div", lambda: dl.DivOp(x.value, y.value))
    if rounding_mode == "trunc":
        return q
    # Floor: one less where the signs differ and the division was inexact.
    zero = np.zeros((), dtype)
    inexact = D.not_equal(D.multiply(q, y), x)
    negative = D.not_equal(D.less(x, zero), D.less(y, zero))
    return D.where(D.where(inexact, negative, np.zeros((), bool)),
                   D.subtract(q, np.ones((), dtype)), q)


@converter("aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor", "aten.pow.Scalar")
def _pow(node, a, b):
    (a, b), dtype = _promoted(a, b)
    if not _is_value(a) and not _is_value(b):
        return np.power(a, b)
    if not dtypes.is_float(dtype):
        return D.power(a, b)
    if not _is_value(b) and float(b) == 2.0:
        return D.multiply(a, a)
    if not _is_value(b) and float(b) == 0.5:
        return D.sqrt(a)
    return D.power(a, b)


def _compare(fn):
    def convert(node, a, b):
        (a, b), _ = _promoted(a, b)
        return fn(a, b)
    return convert


for _op, _fn in [("eq", D.equal), ("ne", D.not_equal), ("lt", D.less), ("le", D.less_equal),
                 ("gt", D.greater), ("ge", D.greater_equal)]:
    CONVERTERS[f"aten.{_op}.Tensor"] = _compare(_fn)
    CONVERTERS[f"aten.{_op}.Scalar"] = _compare(_fn)


def _unary(fn, floating=True):
    def convert(node, x):
        return fn(_float_of(x) if floating else x)
    return convert


for _name, _fn, _floating in [
        ("relu", D.relu, False), ("sigmoid", D.sigmoid, True), ("tanh", D.tanh, True),
        ("exp", D.exp, True), ("log", D.log, True), ("sqrt", D.sqrt, True),
        ("rsqrt", D.rsqrt, True), ("erf", D.erf, True), ("neg", D.negative, False),
        ("abs", D.abs, False), ("reciprocal", C.reciprocal, True),
        ("silu", D.silu, True), ("hardswish", D.hardswish, True), ("mish", C.mish, True),
        ("sin", D.sin, True), ("cos", D.cos, True), ("tan", D.tan, True),
        ("asin", D.arcsin, True), ("acos", D.arccos, True), ("atan", D.arctan, True),
        ("sinh", D.sinh, True), ("cosh", D.cosh, True), ("asinh", D.arcsinh, True),
        ("acosh", D.arccosh, True), ("atanh", D.arctanh, True), ("floor", D.floor, False),
        ("ceil", D.ceil, False), ("round", D.round, False), ("isinf", D.isinf, False)]:
    CONVERTERS[f"aten.{_name}.default"] = _unary(_fn, _floating)


for _name in ("clone", "alias", "detach", "lift_fresh_copy", "contiguous"):
    CONVERTERS[f"aten.{_name}.default"] = lambda node, x, **kwargs: x


@converter("aten.gelu.default")
def _gelu(node, x, approximate="none"):
    return D.gelu(x, approximate)


@converter("aten.hardtanh.default")
def _hardtanh(node, x, min_val=-1.0, max_val=1.0):
    if min_val == 0.0 and max_val == 6.0:
        return D.relu6(x)
    return D.clip(x, min_val, max_val)


@converter("aten.hardsigmoid.default")
def _hardsigmoid(node, x):
    return C.hard_sigmoid(x)


@converter("aten.leaky_relu.default")
def _leaky_relu(node, x, negative_slope=0.01):
    return D.leaky_relu(x, negative_slope)


@converter("aten.elu.default")
def _elu(node, x, alpha=1.0, scale=1.0, input_scale=1.0):
    y = C.elu(D.multiply(x, input_scale) if input_scale != 1.0 else x, alpha)
    return D.multiply(y, scale) if scale != 1.0 else y


@converter("aten.softplus.default")
def _softplus(node, x, beta=1.0, threshold=20.0):
    y = C.softplus(x, beta)
    return D.where(D.greater(D.multiply(x, beta), threshold), x, y)


@converter("aten.clamp.default", "aten.clamp.Tensor")
def _clamp(node, x, min=None, max=None):  # noqa: A002 - ATen's names
    if min is not None:
        x = D.maximum(*_promoted(x, min)[0])
    if max is not None:
        x = D.minimum(*_promoted(x, max)[0])
    return x


@converter("aten.clamp_min.default", "aten.clamp_min.Tensor")
def _clamp_min(node, x, low):
    return _clamp(node, x, min=low)


@converter("aten.clamp_max.default", "aten.clamp_max.Tensor")
def _clamp_max(node, x, high):
    return _clamp(node, x, max=high)


@converter("aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther",
           "aten.where.Scalar")
def _where(node, condition, a, b):
    (a, b), _ = _promoted(a, b)
    return D.where(condition, a, b)


@converter("aten.logical_not.default")
def _logical_not(node, x):
    return D.logical_not(_cast(x, np.bool_))


@converter("aten.bitwise_not.default")
def _bitwise_not(node, x):
    return D.bitwise_not(x)


@converter("aten.logical_and.default")
def _logical_and(node, a, b):
    return D.logical_and(_cast(a, np.bool_), _cast(b, np.bool_))


@converter("aten.logical_or.default")
def _logical_or(node, a, b):
    return D.logical_or(_cast(a, np.bool_), _cast(b, np.bool_))


@converter("aten.logical_xor.default")
def _logical_xor(node, a, b):
    return D.logical_xor(_cast(a, np.bool_), _cast(b, np.bool_))


@converter("aten.isnan.default")
def _isnan(node, x):
    return D.isnan(x) if dtypes.is_float(x.dtype) else D.not_equal(x, x)


@converter("aten.sign.default")
def _sign(node, x):
    return D.sign(x)


@converter("aten.trunc.default")
def _trunc(node, x):
    if not dtypes.is_float(x.dtype):
        return x
    return D.where(D.less(x, np.zeros((), x.dtype)), D.ceil(x), D.floor(x))


@converter("aten._to_copy.default")
def _to_copy(node, x, dtype=None, **kwargs):
    return x if dtype is None else _cast(x, _np_dtype(dtype))


# -- linear algebra, convolution, pooling, normalization -------------------------------------

@converter("aten.mm.default", "aten.bmm.default", "aten.matmul.default")
def _mm(node, a, b):
    operands = _qdq_operands(node, a, b, 1) if _ndim(b) == 2 and _ndim(a) >= 2 else None
    if operands is not None:
        return integer.matmul(*operands, dtype=a.dtype)
    return D.matmul(a, b)


@converter("aten.addmm.default")
def _addmm(node, bias, a, b, beta=1, alpha=1):
    operands = _qdq_operands(node, a, b, 1)
    y = integer.matmul(*operands, dtype=a.dtype) if operands is not None \
        else D.matmul(a, b)
    if alpha != 1:
        y = D.multiply(y, alpha)
    return D.add(y, bias if beta == 1 else D.multiply(bias, beta))


@converter("aten.linear.default")
def _linear(node, x, w, b=None):
    operands = _qdq_operands(node, x, w, 0)
    if operands is not None and _ndim(x) >= 2 and _ndim(w) == 2:
        y = integer.matmul(*operands, dtype=x.dtype, transposed=True)
        return y if b is None else D.add(y, b)
    return D.linear(x, w, b)


@converter("aten.convolution.default")
def _convolution(node, x, w, b, stride, padding, dilation, transposed, output_padding,
                 groups):
    rank = _ndim(x) - 2
    if rank == 3 and not transposed:
        return _convolution3d(x, w, b, stride, padding, dilation, groups)
    if rank not in (1, 2):
        raise ModelImportError(f"{rank}-D {'transposed ' if transposed else ''}convolutions "
                               f"are not supported (1-D and 2-D are, and 3-D direct ones)")
    operands = _qdq_operands(node, x, w, 0)
    if operands is not None and rank == 2 and not transposed and groups == 1:
        (ph, pw), strides, dilations = padding, list(stride), list(dilation)
        y = integer.conv2d(*operands, strides, [ph, pw, ph, pw], dilations, dtype=x.dtype)
        if y is not None:
            return y if b is None else D.add(y, D.reshape(D.astype(b, x.dtype), (-1, 1, 1)))
    if rank == 1:
        x, w = D.expand_dims(x, 2), D.expand_dims(w, 2)
        stride, padding, dilation = [1] + list(stride), [0] + list(padding), \
            [1] + list(dilation)
        output_padding = [0] + list(output_padding)
    if transposed:
        y = C.conv_transpose2d(x, w, b, stride=tuple(stride), padding=tuple(padding),
                               output_padding=tuple(output_padding), groups=groups,
                               dilation=tuple(dilation))
    else:
        y = D.conv2d(x, w, b, stride=tuple(stride), padding=tuple(padding),
                     dilation=tuple(dilation), groups=groups)
    return D.squeeze(y, 2) if rank == 1 else y


def _convolution3d(x, w, b, stride, padding, dilation, groups):
    """A 3-D convolution as a sum of 2-D ones over the kernel's depth: the
    depth positions each kernel slice reads are gathered into the batch
    (N x D_out images), convolved in 2-D with that slice, and summed (the
    lambda layers of LambdaNets; video models)."""
    n, c, depth = _shape(x)[:3]
    kd = _shape(w)[2]
    if n is None or depth is None:
        raise ModelImportError("3-D convolutions need static batch and depth")
    (sd, sh, sw), (pd, ph, pw), (dd, dh, dw) = stride, padding, dilation
    if pd:
        x = D.pad(x, [[0, 0], [0, 0], [pd, pd], [0, 0], [0, 0]])
        depth += 2 * pd
    out_depth = (depth - dd * (kd - 1) - 1) // sd + 1
    moved = D.transpose(x, (0, 2, 1, 3, 4))                   # N, D, C, H, W
    total = None
    for k in range(kd):
        index = np.arange(out_depth, dtype=np.int64) * sd + k * dd
        frames = D.take(moved, index, axis=1)                 # N, D_out, C, H, W
        frames = D.reshape(frames, (n * out_depth, c) + tuple(_shape(x)[3:]))
        part = D.conv2d(frames, w[:, :, k], None, stride=(sh, sw), padding=(ph, pw),
                        dilation=(dh, dw), groups=groups)
        total = part if total is None else D.add(total, part)
    out = D.reshape(total, (n, out_depth) + tuple(_shape(total)[1:]))
    out = D.transpose(out, (0, 2, 1, 3, 4))                   # N, O, D_out, H', W'
    if b is not None:
        out = D.add(out, D.reshape(b, (-1, 1, 1, 1)))
    return out


@converter("aten._native_batch_norm_legit_no_training.default")
def _batch_norm(node, x, weight, bias, mean, var, momentum, eps):
    channels = _shape(x)[1]
    weight = np.ones(channels, x.dtype) if weight is None else weight
    bias = np.zeros(channels, x.dtype) if bias is None else bias
    return (D.batch_norm(x, mean, var, weight, bias, eps=eps, axis=1), None, None)


@converter("aten.native_layer_norm.default")
def _layer_norm(node, x, shape, weight, bias, eps):
    axis = _ndim(x) - len(shape)
    return (D.layer_norm(x, weight, bias, axis=axis, eps=eps), None, None)


@converter("aten.native_group_norm.default")
def _group_norm(node, x, weight, bias, n, c, hw, groups, eps):
    return (C.group_norm(x, groups, weight, bias, eps=eps), None, None)


@converter("aten.max_pool2d_with_indices.default", "aten.max_pool2d.default")
def _max_pool2d(node, x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    if builtins.any(user.args[1] == 1 for user in node.users
                    if "getitem" in str(user.target)):
        raise ModelImportError("the indices output of max_pool2d_with_indices (return_indices="
                               "True) is not supported")
    kernel = _pair(kernel)
    stride = _pair(stride) if stride else kernel
    padding, dilation = _pair(padding), _pair(dilation)
    if dilation != (1, 1) or ceil_mode:
        y = _pool_general(x, kernel, stride, padding, dilation, ceil_mode, "max")
    else:
        y = D.max_pool2d(x, kernel, stride, padding)
    return (y, None) if "with_indices" in str(node.target) else y


@converter("aten.avg_pool2d.default")
def _avg_pool2d(node, x, kernel, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    kernel = _pair(kernel)
    stride = _pair(stride) if stride else kernel
    padding = _pair(padding)
    if divisor_override:
        raise ModelImportError("avg_pool2d with divisor_override is not supported")
    if ceil_mode:
        return _pool_general(x, kernel, stride, padding, (1, 1), True,
                             "avg" if count_include_pad else "avg_exclude")
    return D.avg_pool2d(x, kernel, stride, padding, count_include_pad=count_include_pad)


def _pool_general(x, kernel, stride, padding, dilation, ceil_mode, kind):
    """Pooling as a combination of strided slices (ceil_mode, dilation); with
    a dynamic image, dl's pooling with the ceil extra as padding."""
    from .onnx_ops import _window_slices
    n, c, h, w = _shape(x)
    if h is None or w is None:
        y = None if dilation != (1, 1) else pool2d_any_size(
            x, "max" if kind == "max" else "avg", kernel, stride,
            (padding[0], padding[0], padding[1], padding[1]), ceil_mode,
            count_include_pad=kind == "avg")
        if y is None:
            raise DynamicDimensionError(
                f"{kind.replace('_', ' ')} pooling (kernel {kernel}, stride {stride}, "
                f"padding {padding}, dilation {dilation}, ceil_mode) of an image of "
                f"dynamic size needs its size")
        return y
    out, extra = [], []
    for size, k, s, p, d in zip((h, w), kernel, stride, padding, dilation):
        span = size + 2 * p - d * (k - 1) - 1
        o = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (o - 1) * s >= size + p:
            o -= 1
        out.append(o)
        extra.append(builtins.max((o - 1) * s + d * (k - 1) + 1 - (size + 2 * p), 0))
    widths = [(0, 0), (0, 0), (padding[0], padding[0] + extra[0]),
              (padding[1], padding[1] + extra[1])]
    fill = float("-inf") if kind == "max" else 0.0
    padded = D.pad(x, widths, constant_values=fill)
    result = None
    for key in _window_slices(padded, kernel, stride, dilation, out):
        piece = padded[key]
        result = piece if result is None else (D.maximum if kind == "max" else D.add)(
            result, piece)
    if kind == "max":
        return result
    mask = np.zeros((1, 1, h + 2 * padding[0] + extra[0], w + 2 * padding[1] + extra[1]))
    if kind == "avg":
        mask[:, :, :h + 2 * padding[0], :w + 2 * padding[1]] = 1
    else:
        mask[:, :, padding[0]:padding[0] + h, padding[1]:padding[1] + w] = 1
    count = builtins.sum(mask[key] for key in _window_slices(mask, kernel, stride, dilation, out))
    return D.divide(result, np.maximum(count, 1).astype(x.dtype))


def _pair(v):
    if isinstance(v, numbers.Integral):
        return (int(v), int(v))
    v = list(v)
    return (int(v[0]), int(v[0])) if len(v) == 1 else (int(v[0]), int(v[1]))


@converter("aten._adaptive_avg_pool2d.default", "aten.adaptive_avg_pool2d.default")
def _adaptive_avg_pool2d(node, x, output_size):
    oh, ow = _pair(output_size)
    n, c, h, w = _shape(x)
    if (oh, ow) == (1, 1):
        return D.mean(x, axis=(2, 3), keepdims=True)
    if h % oh == 0 and w % ow == 0:
        return D.avg_pool2d(x, (h // oh, w // ow), (h // oh, w // ow))
    # General case: each output cell averages rows [floor(i*h/oh), ceil((i+1)*h/oh)).
    rows = []
    for i in range(oh):
        r0, r1 = (i * h) // oh, -(-((i + 1) * h) // oh)
        cols = []
        for j in range(ow):
            c0, c1 = (j * w) // ow, -(-((j + 1) * w) // ow)
            cols.append(D.mean(x[:, :, r0:r1, c0:c1], axis=(2, 3), keepdims=True))
        rows.append(D.concatenate(cols, axis=3))
    return D.concatenate(rows, axis=2)


@converter("aten._softmax.default")
def _softmax(node, x, dim, half_to_float=False):
    return D.softmax(x, dim)


@converter("aten._safe_softmax.default")
def _safe_softmax(node, x, dim, dtype=None):
    """Softmax with rows of only -inf (masked out) giving zeros, not NaN: the
    form ONNX exporters write (Where(IsNaN(y), 0, y)), where a softmax row
    is NaN exactly when its inputs are all -inf (or hold a NaN)."""
    x = _float_of(x) if dtype is None else _cast(x, _np_dtype(dtype))
    y = D.softmax(x, dim)
    return D.where(D.isnan(y), np.zeros((), y.dtype), y)


@converter("aten.roll.default")
def _roll(node, x, shifts, dims=()):
    """torch.roll as slices and a concatenation per dimension (the form of
    ONNX exporters)."""
    shifts = list(shifts) if isinstance(shifts, (list, tuple)) else [shifts]
    dims = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    if not dims:  # over the flattened tensor, then the shape back
        shape = _shape(x)
        return D.reshape(_roll(node, D.reshape(x, (-1,)), shifts, [0]), shape)
    for shift, dim in zip(shifts, dims):
        dim = dim % _ndim(x)
        size = _shape(x)[dim]
        if size is None:
            raise ModelImportError(f"torch.roll over the dynamic dimension {dim} of "
                                   f"{x!r}")
        shift = shift % size if size else 0
        if shift:
            head = [slice(None)] * _ndim(x)
            tail = [slice(None)] * _ndim(x)
            head[dim], tail[dim] = slice(size - shift, size), slice(0, size - shift)
            x = D.concatenate([x[tuple(head)], x[tuple(tail)]], axis=dim)
    return x


@converter("aten._log_softmax.default")
def _log_softmax(node, x, dim, half_to_float=False):
    return D.log_softmax(x, dim)


@converter("aten._scaled_dot_product_flash_attention_for_cpu.default")
def _sdpa_flash(node, q, k, v, dropout_p=0.0, is_causal=False, attn_mask=None, scale=None):
    return (_sdpa(node, q, k, v, attn_mask, dropout_p, is_causal, scale), None)


@converter("aten.scaled_dot_product_attention.default")
def _sdpa(node, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):
    """torch's own decomposition of it (``_scaled_dot_product_attention_math``,
    what ``run_decompositions`` gives): q and k^T each scaled by the square
    root of the scale, a boolean or causal mask as an added 0 / -inf, a safe
    softmax (a row of only -inf gives zeros)."""
    if dropout_p:
        raise ModelImportError(f"scaled_dot_product_attention with dropout_p={dropout_p}: "
                               f"dlc compiles inference (call .eval() on the module)")
    heads, kv_heads = _shape(q)[-3] if _ndim(q) >= 3 else 1, \
        _shape(k)[-3] if _ndim(k) >= 3 else 1
    if enable_gqa and heads != kv_heads:
        if heads is None or kv_heads is None or heads % kv_heads:
            raise ModelImportError(f"grouped-query attention of {heads} query heads over "
                                   f"{kv_heads} key/value heads")
        index = np.repeat(np.arange(kv_heads, dtype=np.int64), heads // kv_heads)
        k, v = D.take(k, index, axis=_ndim(k) - 3), D.take(v, index, axis=_ndim(v) - 3)
    size = _shape(q)[-1]
    scale = 1.0 / np.sqrt(size) if scale is None else scale
    factor = float(np.sqrt(abs(scale)))
    multiply = CONVERTERS["aten.mul.Scalar"]
    q = multiply(node, q, -factor if scale < 0 else factor)
    kt = D.transpose(k, list(range(_ndim(k) - 2)) + [_ndim(k) - 1, _ndim(k) - 2])
    scores = D.matmul(q, multiply(node, kt, factor))
    lq, lk = _shape(q)[-2], _shape(k)[-2]
    if is_causal:
        if lq is None or lk is None:
            raise ModelImportError("a causal scaled_dot_product_attention over dynamic "
                                   "sequence lengths")
        attn_mask = np.tril(np.ones((lq, lk), bool))
    if attn_mask is not None:
        if attn_mask.dtype == np.bool_:
            attn_mask = D.where(attn_mask, np.zeros((), scores.dtype),
                                np.array(-np.inf, scores.dtype))
        scores = D.add(scores, _cast(attn_mask, scores.dtype))
    return D.matmul(_safe_softmax(node, scores, -1), v)


# -- reductions ---------------------------------------------------------------------------------

def _dims(x, dim):
    if dim is None or dim == [] or dim == ():
        return None
    return tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)


@converter("aten.mean.dim", "aten.mean.default")
def _mean(node, x, dim=None, keepdim=False, dtype=None):
    x = _cast(x, _np_dtype(dtype)) if dtype is not None else x
    return D.mean(x, axis=_dims(x, dim), keepdims=keepdim)


@converter("aten.sum.dim_IntList", "aten.sum.default")
def _sum(node, x, dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        x = _cast(x, _np_dtype(dtype))
    elif x.dtype == np.bool_ or (not dtypes.is_float(x.dtype) and x.dtype != np.int64):
        x = _cast(x, np.int64)
    return D.sum(x, axis=_dims(x, dim), keepdims=keepdim)


@converter("aten.prod.dim_int", "aten.prod.default")
def _prod(node, x, dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        x = _cast(x, _np_dtype(dtype))
    return C.prod(x, axis=_dims(x, dim), keepdims=keepdim)


@converter("aten.amax.default")
def _amax(node, x, dim=(), keepdim=False):
    return D.max(x, axis=_dims(x, dim), keepdims=keepdim)


@converter("aten.amin.default")
def _amin(node, x, dim=(), keepdim=False):
    return D.min(x, axis=_dims(x, dim), keepdims=keepdim)


@converter("aten.max.dim")
def _max_dim(node, x, dim, keepdim=False):
    return (D.max(x, axis=dim, keepdims=keepdim), D.argmax(x, axis=dim, keepdims=keepdim))


@converter("aten.min.dim")
def _min_dim(node, x, dim, keepdim=False):
    return (D.min(x, axis=dim, keepdims=keepdim), D.argmin(x, axis=dim, keepdims=keepdim))


@converter("aten.max.default")
def _max_all(node, x):
    return D.max(x)


@converter("aten.min.default")
def _min_all(node, x):
    return D.min(x)


@converter("aten.argmax.default")
def _argmax(node, x, dim=None, keepdim=False):
    return D.argmax(x, axis=dim, keepdims=keepdim and dim is not None)


@converter("aten.argmin.default")
def _argmin(node, x, dim=None, keepdim=False):
    return D.argmin(x, axis=dim, keepdims=keepdim and dim is not None)


@converter("aten.any.dim", "aten.any.dims", "aten.any.default")
def _any(node, x, dim=None, keepdim=False):
    hits = D.astype(D.not_equal(x, np.zeros((), x.dtype)), np.int8)
    return D.greater(D.max(hits, axis=_dims(x, dim), keepdims=keepdim), np.zeros((), np.int8))


@converter("aten.all.dim", "aten.all.dims", "aten.all.default")
def _all(node, x, dim=None, keepdim=False):
    hits = D.astype(D.not_equal(x, np.zeros((), x.dtype)), np.int8)
    return D.greater(D.min(hits, axis=_dims(x, dim), keepdims=keepdim), np.zeros((), np.int8))


@converter("aten.var.correction", "aten.var.dim")
def _var(node, x, dim=None, correction=None, keepdim=False, unbiased=None):
    axes = _dims(x, dim)
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    mean = D.mean(x, axis=axes, keepdims=True)
    centered = D.subtract(x, mean)
    total = D.sum(D.multiply(centered, centered), axis=axes, keepdims=keepdim)
    count = int(np.prod([_shape(x)[a] for a in (axes or range(_ndim(x)))], dtype=np.int64))
    return D.divide(total, float(builtins.max(count - correction, 0)))


@converter("aten.cumsum.default")
def _cumsum(node, x, dim, dtype=None):
    if dtype is not None:
        x = _cast(x, _np_dtype(dtype))
    elif not dtypes.is_float(x.dtype):
        x = _cast(x, np.int64)
    return C.cumsum(x, dim)


# -- shapes and creation ------------------------------------------------------------------------

def _sizes(size):
    """A torch size list: ints, and run-time sizes (dlc.Size) of symbolic
    dimensions, kept."""
    return tuple(s if isinstance(s, Size) else -1 if s is None else int(s) for s in size)


def _known_sizes(node, size):
    """`size` with every entry torch.export knows to be static (the node's
    output shape) as that int: a -1 or a run-time size next to symbolic ones
    (view(b, s, -1, 64) has 12 heads, whatever b and s are)."""
    sizes = _sizes(size)
    value = node.meta.get("val") if node is not None else None
    shape = getattr(value, "shape", None)
    if shape is None or len(shape) != len(sizes):
        return sizes
    return tuple(d if isinstance(d, int) else s for s, d in zip(sizes, shape))


@converter("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default")
def _view(node, x, size):
    return D.reshape(x, _known_sizes(node, size))


@converter("aten.reshape_as.default")
def _reshape_as(node, x, other):
    """x.reshape(other.shape): `other`'s symbolic sizes read at run time."""
    return _view(node, x, [D.dim(other, d) if s is None else s
                           for d, s in enumerate(_shape(other))])


@converter("aten.permute.default")
def _permute(node, x, dims):
    y = D.transpose(x, [d % builtins.max(_ndim(x), 1) for d in dims])
    if _ndim(x) == 2 and [d % 2 for d in dims] == [1, 0]:
        _transposed_dequantization(node, x, y)
    return y


@converter("aten.t.default")
def _t(node, x):
    if _ndim(x) != 2:
        return x
    y = D.transpose(x)
    _transposed_dequantization(node, x, y)
    return y


@converter("aten.transpose.int")
def _transpose(node, x, a, b):
    perm = list(range(_ndim(x)))
    perm[a], perm[b] = perm[b], perm[a]
    return D.transpose(x, perm)


@converter("aten.expand.default")
def _expand(node, x, size, implicit=False):
    shape = _shape(x)
    size = _known_sizes(node, size)
    offset = len(size) - len(shape)
    target = []
    for i, s in enumerate(size):
        if isinstance(s, Size):
            # A run-time size where the input is dynamic keeps its dimension.
            target.append(-1 if i >= offset and shape[i - offset] is None else s)
            continue
        if s is None or s == -1:
            s = shape[i - offset] if i >= offset else 1
        target.append(-1 if s is None else int(s))
    if tuple(target) == tuple(-1 if d is None else d for d in shape):
        return x
    return D.broadcast_to(x, tuple(target))


@converter("aten.unsqueeze.default")
def _unsqueeze(node, x, dim):
    return D.expand_dims(x, dim % (_ndim(x) + 1))


@converter("aten.squeeze.dims", "aten.squeeze.dim", "aten.squeeze.default")
def _squeeze(node, x, dims=None):
    if dims is None:
        return D.squeeze(x)
    dims = [d % builtins.max(_ndim(x), 1) for d in (dims if isinstance(dims, (list, tuple))
                                                     else [dims])]
    dims = [d for d in dims if _shape(x)[d] == 1]
    return D.squeeze(x, tuple(dims)) if dims else x


@converter("aten.cat.default")
def _cat(node, tensors, dim=0):
    tensors = [t for t in tensors if not (_ndim(t) == 1 and _shape(t)[0] == 0)]
    tensors, _ = _promoted(*tensors) if len(tensors) > 1 else (tensors, None)
    return D.concatenate(tensors, axis=dim)


@converter("aten.stack.default")
def _stack(node, tensors, dim=0):
    rank = _ndim(tensors[0]) + 1
    return D.concatenate([D.expand_dims(t, dim % rank) for t in tensors], axis=dim % rank)


@converter("aten.slice.Tensor")
def _slice(node, x, dim=0, start=None, end=None, step=1):
    dim = dim % _ndim(x)
    size = _shape(x)[dim]
    huge = not isinstance(end, Size) and end is not None and end >= 2**62
    if size is None and start in (None, 0) and (end is None or huge) and step == 1:
        return x
    if isinstance(start, Size):
        raise ModelImportError("slicing from a run-time start is not supported")
    if isinstance(end, Size) and isinstance(x, np.ndarray):
        x = D.asarray(x)  # a window of a run-time size is an op, not numpy
    known = _known_sizes(node, [-1] * _ndim(x))[dim]
    if size is None and known != -1 and isinstance(x, Tensor) and step >= 1 and \
            isinstance(start, int) and start >= 0:
        # torch.export proved the window's size (within the dimension's
        # range, which the call checks): a static window of a dynamic
        # dimension, so that it broadcasts as the size 1 it is.
        return D._static_window(x, dim, start, known, step)
    key = [slice(None)] * _ndim(x)
    key[dim] = slice(start, None if huge else end, step)
    return x[tuple(key)]


@converter("aten.select.int")
def _select(node, x, dim, index):
    key = [slice(None)] * _ndim(x)
    key[dim % _ndim(x)] = index
    return x[tuple(key)]


def _fill_positions(x, src, dim, positions):
    """`x` with the slices at static `positions` along `dim` replaced by the
    slices of `src` (whose `dim` has len(positions)) in order: one gather of
    `src` and one select (no scatter op needed)."""
    n = _shape(x)[dim]
    source = np.zeros(n, np.int64)
    hit = np.zeros(n, bool)
    source[positions] = np.arange(len(positions))
    hit[positions] = True
    if isinstance(x, np.ndarray) and isinstance(src, np.ndarray):
        out = np.array(x)
        key = [slice(None)] * x.ndim
        key[dim] = positions
        out[tuple(key)] = src
        return out
    gathered = D.take(src, source, axis=dim)
    mask = hit.reshape((n,) + (1,) * (_ndim(x) - dim - 1))
    return D.where(mask, D.astype(gathered, x.dtype), x)


@converter("aten.slice_scatter.default")
def _slice_scatter(node, x, src, dim=0, start=None, end=None, step=1):
    """``x[..., start:end:step, ...] = src`` out of place."""
    dim = dim % _ndim(x)
    n = _shape(x)[dim]
    whole = start in (None, 0) and (end is None or end >= 2**62) and step == 1
    if n is None and whole:  # all of a dynamic dimension: src is the result
        src = _broadcast_static(src, _shape(x))
        return _cast(src, x.dtype)
    if n is None:
        raise ModelImportError("writing into a slice of a dynamic dimension is not supported")
    positions = list(range(n))[slice(start, None if end is not None and end >= 2**62 else end,
                                     step)]
    src = _broadcast_static(src, _shape(x)[:dim] + (len(positions),) + _shape(x)[dim + 1:])
    return _fill_positions(x, src, dim, positions)


@converter("aten.select_scatter.default")
def _select_scatter(node, x, src, dim, index):
    """``x[..., index, ...] = src`` out of place."""
    dim = dim % _ndim(x)
    n = _shape(x)[dim]
    if n is None:
        raise ModelImportError("writing into a dynamic dimension is not supported")
    src = _broadcast_static(src, _shape(x)[:dim] + _shape(x)[dim + 1:])
    src = np.expand_dims(src, dim) if isinstance(src, np.ndarray) else D.expand_dims(src, dim)
    return _fill_positions(x, src, dim, [index % n])


def _broadcast_static(x, shape):
    if isinstance(x, np.ndarray):
        return np.broadcast_to(x, shape)
    return x if _shape(x) == tuple(shape) else D.broadcast_to(x, shape)


@converter("aten.copy.default")
def _copy(node, x, src, non_blocking=False):
    """The value of ``x.copy_(src)``: `src` broadcast to `x`'s shape, in its dtype."""
    if isinstance(src, np.ndarray):
        return np.broadcast_to(src, _shape(x)).astype(x.dtype)
    src = D.astype(src, x.dtype) if src.dtype != x.dtype else src
    return _broadcast_static(src, _shape(x))


@converter("aten.scatter.src", "aten.scatter.value", "aten.scatter_add.default",
           "aten.scatter.reduce", "aten.scatter.value_reduce", "aten.scatter_reduce.two")
def _scatter(node, x, dim, index, src, reduce=None, include_self=True):
    """torch.scatter / scatter_add / scatter_reduce: dlc.composite's
    scatter_elements (the part of `src` the index covers is read)."""
    name = str(node.target)
    reduction = {None: "none", "add": "add", "sum": "add", "multiply": "mul", "prod": "mul",
                 "amax": "max", "amin": "min"}.get(reduce, reduce)
    if name == "aten.scatter_add.default":
        reduction = "add"
    if reduction not in ("none", "add", "mul", "max", "min"):
        raise ModelImportError(f"scatter with reduce={reduce!r} is not supported "
                               f"(sum, prod, amax and amin are)")
    if not include_self:
        raise ModelImportError("scatter_reduce with include_self=False is not supported")
    ishape = _shape(index)
    if _is_value(src):
        if _shape(src) != ishape:
            src = src[tuple(slice(0, n) for n in ishape)]
    else:
        src = np.full(ishape, src, dtype=x.dtype)
    return C.scatter_elements(x, index, src, dim, reduction)


@converter("aten.index_put.default")
def _index_put(node, x, indices, values, accumulate=False):
    """``x[indices] = values`` (or ``+=`` with `accumulate`) out of place.

    The indexed dimensions (adjacent ones) merge into one of size M and the
    broadcast index tensors into one linear index of L entries; each of the M
    positions takes the value of the last index that names it (a compare of
    M x L, a max and a gather) or, accumulating, the sum of all of them (a
    matmul of the M x L hit matrix with the values). Static sizes; meant for
    the routing and mask updates models make, not for large scatters."""
    present = [axis for axis, index in enumerate(indices) if index is not None]
    for axis in present:
        if np.dtype(indices[axis].dtype) == np.bool_:
            raise ModelImportError("index_put with a boolean mask is not supported; "
                                   "use torch.where")
    if not present:
        raise ModelImportError("index_put without an index tensor")
    if present != list(range(present[0], present[-1] + 1)):
        raise ModelImportError("index_put with index tensors on dimensions that are not "
                               "adjacent is not supported")
    shape = _shape(x)
    first, last = present[0], present[-1]
    pre, post = shape[:first], shape[last + 1:]
    dynamic = None in shape
    index_dynamic = builtins.any(None in tuple(indices[a].shape) for a in present)
    if (None in shape[first:] or index_dynamic) and None not in pre:
        return _index_put_dynamic(x, [indices[a] for a in present], values, accumulate,
                                  first, last)
    if dynamic and (accumulate or None in shape[first:]):
        raise ModelImportError("index_put into a tensor with a dynamic dimension is "
                               "supported only for a dynamic batch before the indexed "
                               "dimensions, without accumulate")
    sizes = [shape[a] for a in present]
    index_shapes = [tuple(indices[a].shape) for a in present]
    b = tuple(np.broadcast_shapes(*index_shapes))
    if all(isinstance(indices[a], np.ndarray) for a in present) and \
            isinstance(x, np.ndarray) and isinstance(values, np.ndarray):
        out = np.array(x)
        key = tuple([slice(None)] * first + [indices[a] for a in present])
        if accumulate:
            np.add.at(out, key, values)
        else:
            out[key] = values
        return out
    # from here on dlc's ops take numpy operands and tensors alike
    m, count = int(np.prod(sizes)), int(np.prod(b))
    linear = None
    for axis, size in zip(present, sizes):
        index = D.astype(_broadcast_static(indices[axis], b), np.int64)
        index = D.where(D.less(index, 0), D.add(index, size), index)
        linear = index if linear is None else D.add(D.multiply(linear, size), index)
    merged = D.reshape(x, pre + (m,) + post)
    if dynamic:
        # values the same for every batch row (the batch dimensions 1 or
        # absent) broadcast against the rows in the select below
        vshape = (1,) * (len(pre + b + post) - len(_shape(values))) + _shape(values)
        if builtins.any(d != 1 for d in vshape[:len(pre)]):
            raise ModelImportError("index_put into a tensor with a dynamic batch needs "
                                   "values that are the same for every row")
        ones = (1,) * len(pre)
        values = D.reshape(_broadcast_static(values, ones + b + post), ones + (count,) + post)
    else:
        values = D.reshape(_broadcast_static(values, pre + b + post), pre + (count,) + post)
    if values.dtype != x.dtype:
        values = D.astype(values, x.dtype)
    hits = D.equal(np.arange(m, dtype=np.int64).reshape(m, 1), D.reshape(linear, (1, count)))
    tail = (1,) * len(post)
    if accumulate:
        if not np.issubdtype(np.dtype(x.dtype), np.floating) and x.dtype != dtypes.BFLOAT16:
            raise ModelImportError("index_put with accumulate=True on integers is not "
                                   "supported")
        weights = D.astype(hits, x.dtype)
        flat = D.reshape(values, (int(np.prod(pre)), count, int(np.prod(post))))
        added = D.reshape(D.matmul(weights, flat), pre + (m,) + post)
        return D.reshape(D.add(merged, added), shape)
    position = np.arange(count, dtype=np.int64).reshape(1, count)
    last_hit = D.max(D.where(hits, position, -1), axis=1)            # (m,)
    hit = D.greater_equal(last_hit, 0)
    gathered = D.take(values, D.maximum(last_hit, 0), axis=len(pre))
    result = D.where(D.reshape(hit, (m,) + tail), gathered, merged)
    return D.reshape(result, shape)


def _index_put_dynamic(x, indices, values, accumulate, first, last):
    """index_put where the indexed dimensions, the ones after them or the
    index tensors are dynamic (a mixture of experts adding each expert's
    rows into the tokens, for any number of tokens): the same hit matrix,
    its sizes known at run time. The index tensors have one shape."""
    shape = _shape(x)
    pre = shape[:first]
    ishape = tuple(indices[0].shape)
    if builtins.any(tuple(i.shape) != ishape for i in indices):
        raise ModelImportError("index_put with index tensors of different dynamic "
                               "shapes is not supported")
    x = D.asarray(x)
    sizes = [D.dim(x, a) for a in range(first, last + 1)]
    post = [D.dim(x, a) for a in range(last + 1, len(shape))]
    anchor = D.asarray(indices[0])
    count = 1
    for axis in range(len(ishape)):
        count = count * D.dim(anchor, axis)
    m = 1
    for size in sizes:
        m = m * size
    linear = None
    for index, size in zip(indices, sizes):
        index = D.astype(D.asarray(index), np.int64)
        extent = D.size_tensor(size)
        index = D.where(D.less(index, 0), D.add(index, extent), index)
        linear = index if linear is None else D.add(D.multiply(linear, extent), index)
    merged = D.reshape(x, tuple(pre) + (m,) + tuple(post))
    values = D.asarray(values)
    if values.dtype != x.dtype:
        values = D.astype(values, x.dtype)
    full = list(pre) + [D.dim(anchor, a) for a in range(len(ishape))] + post
    if tuple(values.shape) != tuple(None if isinstance(d, Size) else d for d in full):
        values = D.broadcast_to(values, tuple(full))
    values = D.reshape(values, tuple(pre) + (count,) + tuple(post))
    rows = D.expand_dims(D.arange(m), 1)                               # (m, 1)
    hits = D.equal(rows, D.reshape(linear, (1, count)))                # (m, count)
    tail = (1,) * len(post)
    if accumulate:
        if not np.issubdtype(np.dtype(x.dtype), np.floating) and x.dtype != dtypes.BFLOAT16:
            raise ModelImportError("index_put with accumulate=True on integers is not "
                                   "supported")
        inner = 1
        for size in post:
            inner = inner * size
        outer = int(np.prod(pre, dtype=np.int64))
        flat = D.reshape(values, (outer, count, inner))
        added = D.reshape(D.matmul(D.astype(hits, x.dtype), flat),
                          tuple(pre) + (m,) + tuple(post))
        return D.reshape(D.add(merged, added), tuple(D.dim(x, a) for a in range(len(shape))))
    position = D.expand_dims(D.arange(count), 0)                       # (1, count)
    last_hit = D.max(D.where(hits, position, -1), axis=1)              # (m,)
    hit = D.greater_equal(last_hit, 0)
    gathered = D.take(values, D.maximum(last_hit, 0), axis=len(pre))
    result = D.where(D.reshape(hit, (m,) + tail), gathered, merged)
    return D.reshape(result, tuple(D.dim(x, a) for a in range(len(shape))))


@converter("aten.as_strided.default", "aten.as_strided_copy.default")
def _as_strided(node, x, size, stride, storage_offset=None):
    """``torch.as_strided``: a view of the input's storage. dlc's tensors have
    no strides, so the input's storage order (its strides at export, from the
    FX node's metadata) maps each storage position to one of its elements;
    the view is then a reshape (where it reads the elements in order: e.g.
    timm's pooled features re-strided to channels-last) or one gather with a
    constant index. Views of storage the input does not densely cover are
    refused."""
    source = node.args[0].meta.get("val") if hasattr(node.args[0], "meta") else None
    leading = _as_strided_leading(source, _fx_values(node.args[1]),
                                  _fx_values(node.args[2]), storage_offset)
    if leading is not None:
        # A dynamic outermost dimension walked as it lies (timm's pooled
        # features re-strided, any batch): the view of each item is static.
        item_size, item_stride = leading
        item = _as_strided_index(list(source.shape[1:]), list(source.stride()[1:]), 0,
                                 item_size, item_stride, 0)
        rows = D.reshape(x, (D.dim(x, 0), -1))
        if np.array_equal(item, np.arange(item.size)) and \
                item.size == int(np.prod(source.shape[1:])):
            return D.reshape(rows, (D.dim(x, 0),) + tuple(item_size))
        return D.reshape(D.take(rows, item, axis=1), (D.dim(x, 0),) + tuple(item_size))
    try:
        in_shape = [int(d) for d in source.shape]
        in_stride = [int(d) for d in source.stride()]
        in_offset = int(source.storage_offset())
        size = [int(d) for d in size]
        stride = [int(d) for d in stride]
        offset = in_offset if storage_offset is None else int(storage_offset)
    except (AttributeError, TypeError):
        raise ModelImportError("as_strided needs static sizes and strides") from None
    index = _as_strided_index(in_shape, in_stride, in_offset, size, stride, offset)
    count = int(np.prod(in_shape))
    if np.array_equal(index, np.arange(index.size)) and index.size == count:
        return D.reshape(x, tuple(size)) if not isinstance(x, np.ndarray) else \
            np.reshape(x, size)
    flat = D.reshape(x, (-1,)) if not isinstance(x, np.ndarray) else np.reshape(x, (-1,))
    if isinstance(flat, np.ndarray):
        return flat[index].reshape(size)
    return D.reshape(D.take(flat, index, axis=0), tuple(size))


def _fx_values(args):
    """A list argument of an FX node with each node replaced by its traced
    value (a SymInt for a size computed from a dynamic dimension)."""
    return [a.meta.get("val", a) if hasattr(a, "meta") else a for a in args]


def _as_strided_leading(source, size, stride, storage_offset):
    """(item size, item stride) when an as_strided view keeps a dynamic
    outermost dimension as it lies (same size and stride as the input's, no
    offset, the other dimensions static), else None."""
    try:
        shape, strides = list(source.shape), list(source.stride())
        if not shape or isinstance(shape[0], int) or len(size) != len(shape):
            return None
        if storage_offset not in (None, 0) or int(source.storage_offset()) != 0:
            return None
        if str(size[0]) != str(shape[0]) or str(stride[0]) != str(strides[0]):
            return None
        rest = [int(d) for d in shape[1:]]
        if int(strides[0]) != int(np.prod(rest)):
            return None
        return [int(d) for d in size[1:]], [int(d) for d in stride[1:]]
    except (AttributeError, TypeError, ValueError):
        return None


def _as_strided_index(in_shape, in_stride, in_offset, size, stride, offset):
    """The row-major positions in the input that an as_strided view reads."""
    in_shape, in_stride = [int(d) for d in in_shape], [int(d) for d in in_stride]
    count = int(np.prod(in_shape))
    positions = np.full(in_shape, in_offset, np.int64)
    for axis, (extent, step) in enumerate(zip(in_shape, in_stride)):
        positions = positions + np.arange(extent).reshape(
            [extent if a == axis else 1 for a in range(len(in_shape))]) * step
    positions = positions.ravel()
    if len(np.unique(positions)) != count:
        raise ModelImportError(f"as_strided of an input whose strides {in_stride} overlap")
    logical = np.full(int(positions.max(initial=-1)) + 1, -1, np.int64)
    logical[positions] = np.arange(count)
    wanted = np.full(size, offset, np.int64)
    for axis, (extent, step) in enumerate(zip(size, stride)):
        wanted = wanted + np.arange(extent).reshape(
            [extent if a == axis else 1 for a in range(len(size))]) * step
    wanted = wanted.ravel()
    if wanted.size and (wanted.min() < 0 or wanted.max() >= len(logical)
                        or np.any(logical[wanted] < 0)):
        raise ModelImportError(f"as_strided(size={size}, stride={stride}, offset={offset}) "
                               f"reads storage outside the input of shape {in_shape}")
    return logical[wanted] if wanted.size else wanted


@converter("aten.unfold.default")
def _unfold(node, x, dim, size, step):
    """``Tensor.unfold``: the windows of `size` elements every `step` along
    `dim` (which becomes the window count), each window a new last
    dimension: one gather with a constant index."""
    dim = dim % builtins.max(_ndim(x), 1)
    n = _shape(x)[dim] if _ndim(x) else 1
    if n is None:
        raise ModelImportError("unfold along a dynamic dimension is not supported")
    count = (n - size) // step + 1
    if count < 0 or size < 0 or step <= 0:
        raise ModelImportError(f"unfold(dim={dim}, size={size}, step={step}) does not fit "
                               f"a dimension of {n}")
    index = np.arange(count).reshape(count, 1) * step + np.arange(size).reshape(1, size)
    windows = D.take(x, index.astype(np.int64), axis=dim)      # (..., count, size, ...)
    order = list(range(dim + 1)) + list(range(dim + 2, _ndim(x) + 1)) + [dim + 1]
    return D.transpose(windows, tuple(order))


@converter("aten.split_with_sizes.default", "aten.split.Tensor")
def _split(node, x, sizes, dim=0):
    dim = dim % _ndim(x)
    n = _shape(x)[dim]
    if isinstance(sizes, numbers.Integral):
        sizes = [sizes] * (n // sizes) + ([n % sizes] if n % sizes else [])
    bounds = list(np.cumsum(sizes)[:-1])
    return D.split(x, bounds, axis=dim)


@converter("aten.flip.default")
def _flip(node, x, dims):
    return C.flip(x, tuple(dims))


@converter("aten.repeat.default")
def _repeat(node, x, repeats):
    return C.tile(x, tuple(repeats))


@converter("aten.constant_pad_nd.default")
def _constant_pad(node, x, pad, value=0):
    widths = [[0, 0] for _ in range(_ndim(x))]
    for i in range(len(pad) // 2):
        widths[_ndim(x) - 1 - i] = [pad[2 * i], pad[2 * i + 1]]
    if builtins.any(w < 0 for pair in widths for w in pair):
        key = tuple(slice(-a if a < 0 else None, b if b < 0 else None) for a, b in widths)
        x = x[key]
        widths = [[builtins.max(a, 0), builtins.max(b, 0)] for a, b in widths]
    return D.pad(x, widths, constant_values=value)


@converter("aten.index_select.default")
def _index_select(node, x, dim, index):
    return D.take(x, index, axis=dim)


@converter("aten.embedding.default")
def _embedding(node, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return D.take(weight, indices, axis=0)


@converter("aten.gather.default")
def _gather(node, x, dim, index, sparse_grad=False):
    return C.gather_elements(x, index, dim)


@converter("aten.index.Tensor")
def _index(node, x, indices):
    """``x[i0, i1, ...]`` with index tensors (None for a full slice): numpy's
    advanced indexing. The index tensors broadcast together; the indexed
    dimensions become one linear index into ``x`` with those dimensions
    merged, so the whole lookup is one ``dl.gather``. Where the indexed
    dimensions are not adjacent, their result dimensions come first (as in
    numpy and PyTorch)."""
    expanded = []
    for position, index in enumerate(indices):
        if index is not None and np.dtype(index.dtype) == np.bool_:
            if not isinstance(index, np.ndarray):
                raise ModelImportError(
                    f"indexing with a boolean mask computed at run time (index {position}): "
                    f"the result's shape would depend on the mask's values, and dlc "
                    f"compiles static shapes; use torch.where instead")
            expanded.extend(np.nonzero(index))   # a constant mask: its positions
        else:
            expanded.append(index)
    expanded += [None] * (_ndim(x) - len(expanded))
    if len(expanded) > _ndim(x):
        raise ModelImportError(f"{len(expanded)} indices for a tensor of rank {_ndim(x)}")
    present = [axis for axis, index in enumerate(expanded) if index is not None]
    if not present:
        return x
    if len(present) == 1:
        return D.take(x, expanded[present[0]], axis=present[0])
    shape = _shape(x)
    # Sizes of the indexed dimensions: ints, or run-time sizes (their tensor
    # form for the index arithmetic).
    sizes = {axis: D.dim(x, axis) for axis in present}
    size_values = {axis: D.size_tensor(size) if isinstance(size, Size) else size
                   for axis, size in sizes.items()}
    linear = None
    for axis in present:
        index, extent = expanded[axis], size_values[axis]
        if isinstance(index, np.ndarray) and not isinstance(extent, Tensor):
            index = np.where(index < 0, index + extent, index).astype(np.int64)
        else:
            index = D.astype(index, np.int64)
            index = D.where(index < 0, index + extent, index)
        linear = index if linear is None else linear * extent + index
    if isinstance(linear, np.ndarray):
        linear = np.ascontiguousarray(linear)
    rest = [axis for axis in range(_ndim(x)) if axis not in present]
    merged = 1
    for axis in present:
        merged = merged * sizes[axis]
    if isinstance(merged, Size) or builtins.any(shape[axis] is None for axis in rest):
        # Run-time sizes: reshape with every size given.
        if present == list(range(present[0], present[-1] + 1)):
            first = present[0]
            new_shape = [D.dim(x, a) for a in range(first)] + [merged] + \
                [D.dim(x, a) for a in range(present[-1] + 1, _ndim(x))]
            return D.take(D.reshape(x, tuple(new_shape)), linear, axis=first)
        moved = D.transpose(x, tuple(present + rest))
        new_shape = [merged] + [D.dim(x, a) for a in rest]
        return D.take(D.reshape(moved, tuple(new_shape)), linear, axis=0)
    if present == list(range(present[0], present[-1] + 1)):
        first = present[0]
        new_shape = shape[:first] + (merged,) + shape[present[-1] + 1:]
        return D.take(_reshape_dynamic(x, new_shape), linear, axis=first)
    moved = D.transpose(x, tuple(present + rest))
    new_shape = (merged,) + tuple(shape[axis] for axis in rest)
    return D.take(_reshape_dynamic(moved, new_shape), linear, axis=0)


def _reshape_dynamic(x, shape):
    """reshape to `shape`, where one None (a dynamic size) becomes -1."""
    if builtins.sum(s is None for s in shape) > 1:
        raise ModelImportError(f"cannot merge dimensions of {_shape(x)}: more than one is "
                               f"dynamic")
    return D.reshape(x, tuple(-1 if s is None else s for s in shape))


@converter("aten.tril.default")
def _tril(node, x, diagonal=0):
    return C.tril(x, diagonal)


@converter("aten.triu.default")
def _triu(node, x, diagonal=0):
    return C.triu(x, diagonal)


def _creation_dtype(dtype, value):
    if dtype is not None:
        return _np_dtype(dtype)
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    return np.dtype(np.int64) if isinstance(value, numbers.Integral) else np.dtype(np.float32)


@converter("aten.full.default")
def _full(node, size, value, dtype=None, **kwargs):
    return _filled(_known_sizes(node, size), value, _creation_dtype(dtype, value))


def _filled(sizes, value, dtype):
    """A tensor of `sizes` (ints, or run-time sizes) holding `value`: a numpy
    constant when static, else a broadcast scalar."""
    if not builtins.any(isinstance(s, Size) for s in sizes):
        return np.full(sizes, value, dtype)
    return D.broadcast_to(np.full((), value, dtype), tuple(sizes))


@converter("aten.scalar_tensor.default")
def _scalar_tensor(node, value, dtype=None, **kwargs):
    return np.array(value, _creation_dtype(dtype, value) if dtype is not None
                    else np.float32)


@converter("aten.full_like.default")
def _full_like(node, x, value, dtype=None, **kwargs):
    dtype = _np_dtype(dtype) if dtype is not None else x.dtype
    # (not x * 0 + value: an inf or a NaN in x would leak into the result)
    return _filled([D.dim(x, axis) if size is None else size
                    for axis, size in enumerate(_shape(x))], value, dtype)


@converter("aten.zeros.default")
def _zeros(node, size, dtype=None, **kwargs):
    return _filled(_known_sizes(node, size), 0, _creation_dtype(dtype, 0.0))


@converter("aten.ones.default")
def _ones(node, size, dtype=None, **kwargs):
    return _filled(_known_sizes(node, size), 1, _creation_dtype(dtype, 0.0))


@converter("aten.zeros_like.default")
def _zeros_like(node, x, dtype=None, **kwargs):
    return _full_like(node, x, 0, dtype)


@converter("aten.ones_like.default")
def _ones_like(node, x, dtype=None, **kwargs):
    return _full_like(node, x, 1, dtype)


@converter("aten.empty.memory_format", "aten.empty_permuted.default")
def _empty(node, size, *args, dtype=None, **kwargs):
    """Uninitialized memory in torch: zeros here (every use overwrites it)."""
    return _filled(_known_sizes(node, size), 0, _creation_dtype(dtype, 0.0))


@converter("aten.sort.default", "aten.sort.stable")
def _sort(node, x, *args, **kwargs):
    dim, descending = -1, False
    if node.target.__name__.endswith("stable"):
        dim = kwargs.get("dim", -1)
        descending = kwargs.get("descending", False)
    else:
        dim = args[0] if len(args) > 0 else kwargs.get("dim", -1)
        descending = args[1] if len(args) > 1 else kwargs.get("descending", False)
    return C.sort(x, axis=dim, descending=descending)


@converter("aten.histc.default")
def _histc(node, x, bins=100, min=0, max=0):  # noqa: A002 - ATen's names
    """torch.histc with explicit bounds: the count of elements in each of
    `bins` equal bins of [min, max] (the last bin includes max; elements
    outside are not counted), in x's dtype."""
    if min == max:
        raise ModelImportError("histc with min == max takes its bounds from the data; "
                               "pass explicit bounds")
    width = (max - min) / bins
    flat = D.reshape(x, (-1,))
    index = D.astype(D.floor(D.divide(D.subtract(flat, np.asarray(min, x.dtype)),
                                      np.asarray(width, x.dtype))), np.int64)
    index = D.minimum(index, bins - 1)      # x == max falls in the last bin
    inside = D.logical_and(D.greater_equal(flat, np.asarray(min, x.dtype)),
                           D.less_equal(flat, np.asarray(max, x.dtype)))
    hits = D.logical_and(D.equal(D.expand_dims(index, 0),
                                 np.arange(bins, dtype=np.int64).reshape(bins, 1)),
                         D.expand_dims(inside, 0))
    return D.sum(D.astype(hits, x.dtype), axis=1)


@converter("transformers.grouped_mm_fallback.default")
def _grouped_mm(node, x, weight, offs):
    """transformers' mixture-of-experts grouped matmul: the rows of `x`
    (S, K), sorted by expert, multiply their expert's (K, N) slice of
    `weight` (E, K, N); expert e owns the rows offs[e-1] <= s < offs[e], and
    rows past offs[-1] are zero. Computed densely (every row against every
    expert, one batched matmul, then a select by expert): static shapes
    whatever the routing, at E times the arithmetic of the rows' own
    experts."""
    s, e = _shape(x)[0], _shape(weight)[0]
    if e is None:
        raise ModelImportError("grouped_mm needs a static expert count")
    every = D.matmul(D.astype(x, weight.dtype) if x.dtype != weight.dtype else x, weight)
    rows = np.arange(s, dtype=np.int64).reshape(1, s) if s is not None else \
        D.expand_dims(D.arange(D.dim(x, 0)), 0)       # a run-time row count
    bounds = D.reshape(D.astype(offs, np.int64), (e, 1))
    expert = D.sum(D.astype(D.less_equal(bounds, rows), np.int64), axis=0)   # (S,)
    owner = D.equal(D.expand_dims(expert, 0), np.arange(e, dtype=np.int64).reshape(e, 1))
    picked = D.where(D.expand_dims(owner, -1), every, np.zeros((), every.dtype))
    return D.sum(picked, axis=0)


@converter("aten.arange.start_step", "aten.arange.default", "aten.arange.start")
def _arange(node, start, end=None, step=1, dtype=None, **kwargs):
    if end is None:
        start, end = 0, start
    if builtins.any(isinstance(v, Size) for v in (start, end, step)):
        return D.arange(start, end, step, _np_dtype(dtype) if dtype is not None else np.int64)
    values = np.arange(start, end, step)
    if dtype is not None:
        return values.astype(_np_dtype(dtype))
    floating = builtins.any(isinstance(v, float) for v in (start, end, step))
    return values.astype(np.float32 if floating else np.int64)


@converter("aten.upsample_nearest2d.vec", "aten.upsample_nearest2d.default")
def _upsample_nearest(node, x, output_size=None, scale_factors=None, *rest):
    n, c, h, w = _shape(x)
    if output_size is None:
        output_size = [int(h * scale_factors[0]), int(w * scale_factors[1])]
    oh, ow = output_size
    rows = np.minimum((np.arange(oh) * (h / oh)).astype(np.int64), h - 1)
    cols = np.minimum((np.arange(ow) * (w / ow)).astype(np.int64), w - 1)
    return D.take(D.take(x, rows, axis=2), cols, axis=3)


@converter("aten.upsample_bilinear2d.vec", "aten.upsample_bilinear2d.default")
def _upsample_bilinear(node, x, output_size=None, align_corners=False, scale_factors=None,
                       *rest):
    n, c, h, w = _shape(x)
    if output_size is None:
        output_size = [int(h * scale_factors[0]), int(w * scale_factors[1])]
    y = x
    for axis, (size, out) in zip((2, 3), ((h, output_size[0]), (w, output_size[1]))):
        if align_corners:
            coords = np.arange(out) * ((size - 1) / (out - 1) if out > 1 else 0.0)
        else:
            scale = size / out if scale_factors is None else 1.0 / scale_factors[axis - 2]
            coords = np.maximum((np.arange(out) + 0.5) * scale - 0.5, 0.0)
        low = np.minimum(np.floor(coords).astype(np.int64), size - 1)
        high = np.minimum(low + 1, size - 1)
        frac = (coords - low).astype(x.dtype)
        shape = [out if i == axis else 1 for i in range(4)]
        y = D.add(D.multiply(D.take(y, low, axis=axis), (1 - frac).reshape(shape)),
                  D.multiply(D.take(y, high, axis=axis), frac.reshape(shape)))
    return y


@converter("aten.pixel_shuffle.default")
def _pixel_shuffle(node, x, factor):
    return C.depth_to_space(x, factor, "CRD")


@converter("aten.sym_size.int")
def _sym_size(node, x, dim):
    """A static size, or the run-time size (dlc.Size) of a symbolic one."""
    size = _shape(x)[dim]
    return D.dim(x, dim) if size is None else size


def _sym(fn):
    def convert(node, a, b):
        return fn(a, b)
    return convert


CONVERTERS["operator.mul"] = _sym(lambda a, b: a * b)
CONVERTERS["operator.add"] = _sym(lambda a, b: a + b)
CONVERTERS["operator.sub"] = _sym(lambda a, b: a - b)
CONVERTERS["operator.floordiv"] = _sym(lambda a, b: a // b)


@converter("operator.getitem")
def _getitem(node, value, index):
    return value[index]


@converter("aten._native_batch_norm_legit.no_stats", "aten._native_batch_norm_legit.default",
           "aten.native_batch_norm.default")
def _batch_norm_batch_stats(node, x, weight, bias, *rest):
    """Normalization with the statistics of the input itself, per channel
    (dim 1): what instance norm and group norm decompose to in eval mode."""
    eps = rest[-1]
    training = rest[0] if str(node.target).endswith("no_stats") else rest[2]
    if str(node.target) != "aten._native_batch_norm_legit.no_stats" and not training:
        running_mean, running_var = rest[0], rest[1]
        channels = _shape(x)[1]
        weight = np.ones(channels, x.dtype) if weight is None else weight
        bias = np.zeros(channels, x.dtype) if bias is None else bias
        return (D.batch_norm(x, running_mean, running_var, weight, bias, eps=eps, axis=1),
                None, None)
    axes = tuple(a for a in range(_ndim(x)) if a != 1)
    mean = D.mean(x, axis=axes, keepdims=True)
    centered = D.subtract(x, mean)
    var = D.mean(D.multiply(centered, centered), axis=axes, keepdims=True)
    y = D.multiply(centered, D.rsqrt(D.add(var, eps)))
    shape = (-1,) + (1,) * (_ndim(x) - 2)
    if weight is not None:
        y = D.multiply(y, D.reshape(weight, shape))
    if bias is not None:
        y = D.add(y, D.reshape(bias, shape))
    return (y, None, None)


@converter("aten.log1p.default")
def _log1p(node, x):
    return C._log1p(_float_of(x))


@converter("aten.expm1.default")
def _expm1(node, x):
    x = _float_of(x)
    u = D.exp(x)
    d = D.subtract(u, 1.0)
    # (u - 1) * x / log(u): the rounding of exp cancels (Kahan's expm1).
    safe = D.where(D.equal(d, 0.0), 1.0, D.log(u))
    return D.where(D.equal(d, 0.0), x,
                   D.where(D.equal(d, -1.0), d, D.multiply(d, D.divide(x, safe))))


@converter("aten.topk.default")
def _topk(node, x, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - ATen's name
    return C.top_k(x, k, axis=dim, largest=largest)


@converter("aten._assert_tensor_metadata.default", "aten._assert_scalar.default",
           "aten.sym_constrain_range_for_size.default", "aten._assert_async.msg")
def _assertion(node, *args, **kwargs):
    """Assertions torch.export records about shapes and dtypes: checked when
    the program was captured; nothing to compute."""
    return None


# -- torch.export's training IR -----------------------------------------------------------
# The graph torch.export captures, before ``run_decompositions`` (which
# re-traces the whole program and costs seconds: 3.6 s of RegNetY's cold
# compile on a Zen 3), holds composite ops that the core ATen set spells out:
# each converter here is the dl form of its decomposition, so both paths reach
# one graph (test_canonical_graph.py, test_torch_direct.py). The importer uses
# this graph only when every op in it has a converter (torch_importer._direct).

def _spatial(value, rank):
    """A convolution's stride/padding/dilation as `rank` ints (torch accepts
    an int or one entry for every spatial dimension)."""
    if isinstance(value, numbers.Integral):
        return [int(value)] * rank
    value = [int(v) for v in value]
    return value * rank if len(value) == 1 else value


def _conv_nd(rank):
    def convert(node, x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
        return _convolution(node, x, w, b, _spatial(stride, rank), _spatial(padding, rank),
                            _spatial(dilation, rank), False, [0] * rank, groups)
    return convert


for _rank in (1, 2, 3):
    CONVERTERS[f"aten.conv{_rank}d.default"] = _conv_nd(_rank)


@converter("aten.batch_norm.default")
def _batch_norm_composite(node, x, weight, bias, mean, var, training, momentum, eps,
                          cudnn_enabled=True):
    if training or mean is None or var is None:  # the input's own statistics
        return _batch_norm_batch_stats(node, x, weight, bias, None, None, True, momentum,
                                       eps)[0]
    return _batch_norm(node, x, weight, bias, mean, var, momentum, eps)[0]


@converter("aten.layer_norm.default")
def _layer_norm_composite(node, x, shape, weight=None, bias=None, eps=1e-5,
                          cudnn_enable=True):
    return _layer_norm(node, x, shape, weight, bias, eps)[0]


@converter("aten.group_norm.default")
def _group_norm_composite(node, x, groups, weight=None, bias=None, eps=1e-5,
                          cudnn_enabled=True):
    return C.group_norm(x, groups, weight, bias, eps=eps)


@converter("aten.dropout.default", "aten.feature_dropout.default",
           "aten.alpha_dropout.default", "aten.feature_alpha_dropout.default")
def _dropout(node, x, p, train):
    if train and p:
        raise ModelImportError(f"dropout with p={p} in training mode: dlc compiles "
                               f"inference (call .eval() on the module)")
    return x


@converter("aten.flatten.using_ints")
def _flatten(node, x, start_dim=0, end_dim=-1):
    rank = builtins.max(_ndim(x), 1)
    start, end = start_dim % rank, end_dim % rank
    if _ndim(x) == 0:
        return D.reshape(x, (1,))
    known = _known_sizes(node, [-1] * (_ndim(x) - (end - start)))
    if builtins.sum(1 for d in known if d == -1) > 1:
        raise ModelImportError(f"flatten of {x!r} with more than one dynamic dimension")
    return D.reshape(x, known)


@converter("aten.unflatten.int")
def _unflatten(node, x, dim, sizes):
    dim = dim % _ndim(x)
    shape = [-1 if d is None else d for d in _shape(x)]
    return _view(node, x, shape[:dim] + list(sizes) + shape[dim + 1:])


@converter("aten.softmax.int")
def _softmax_int(node, x, dim, dtype=None):
    return D.softmax(_float_of(x) if dtype is None else _cast(x, _np_dtype(dtype)), dim)


@converter("aten.log_softmax.int")
def _log_softmax_int(node, x, dim, dtype=None):
    return D.log_softmax(_float_of(x) if dtype is None else _cast(x, _np_dtype(dtype)), dim)


@converter("aten.pad.default")
def _pad(node, x, pad, mode="constant", value=None):
    if mode != "constant":
        raise ModelImportError(f"torch.nn.functional.pad(mode={mode!r}) is not supported "
                               f"(mode 'constant' is)")
    return _constant_pad(node, x, pad, 0 if value is None else value)


@converter("aten.unbind.int")
def _unbind(node, x, dim=0):
    dim = dim % _ndim(x)
    if _shape(x)[dim] is None:
        raise ModelImportError(f"unbind over the dynamic dimension {dim} of {x!r}")
    return tuple(_select(node, x, dim, i) for i in range(_shape(x)[dim]))


@converter("aten.to.dtype", "aten.to.device", "aten.to.dtype_layout", "aten.to.other",
           "aten.type_as.default")
def _to(node, x, *args, **kwargs):
    """Tensor.to(...): only its dtype matters to dlc (one device)."""
    import torch
    dtype = kwargs.get("dtype")
    target = str(node.target)
    if target == "aten.to.other" or target == "aten.type_as.default":
        dtype = _torch_dtype(args[0].dtype) if _is_value(args[0]) else None
    elif target == "aten.to.dtype" and args:
        dtype = args[0]
    elif target == "aten.to.device" and len(args) > 1:
        dtype = args[1]
    if dtype is None or not isinstance(dtype, torch.dtype):
        return x
    return _cast(x, _np_dtype(dtype))


@converter("aten.new_ones.default", "aten.new_zeros.default", "aten.new_full.default",
           "aten.new_empty.default")
def _new_filled(node, x, size, *rest, dtype=None, **kwargs):
    name = str(node.target).split(".")[1]
    value = rest[0] if name == "new_full" else 1 if name == "new_ones" else 0
    dtype = _np_dtype(dtype) if dtype is not None else x.dtype
    return _filled(_known_sizes(node, size), value, dtype)


@converter("aten.__and__.Tensor", "aten.__or__.Tensor", "aten.__xor__.Tensor")
def _bitwise_operator(node, a, b):
    name = str(node.target).split(".")[1].strip("_")
    return CONVERTERS[f"aten.bitwise_{name}.Tensor"](node, a, b)


@converter("aten.diff.default")
def _diff(node, x, n=1, dim=-1, prepend=None, append=None):
    dim = dim % _ndim(x)
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = _cat(node, parts, dim)
    for _ in range(n):
        size = _shape(x)[dim]
        if size is None:
            raise ModelImportError(f"diff over the dynamic dimension {dim} of {x!r}")
        head = [slice(None)] * _ndim(x)
        tail = [slice(None)] * _ndim(x)
        head[dim], tail[dim] = slice(1, size), slice(0, size - 1)
        x = D.logical_xor(x[tuple(head)], x[tuple(tail)]) if x.dtype == np.bool_ \
            else D.subtract(x[tuple(head)], x[tuple(tail)])
    return x


@converter("aten.masked_fill.Scalar", "aten.masked_fill.Tensor")
def _masked_fill(node, x, mask, value):
    """where(mask, value, x) in x's dtype (torch casts the value to it)."""
    value = _cast(value, x.dtype) if _is_value(value) else np.asarray(value, x.dtype)
    return D.where(_cast(mask, np.bool_), value, x)


@converter("aten.chunk.default")
def _chunk(node, x, chunks, dim=0):
    size = _shape(x)[dim % _ndim(x)]
    if size is None:
        raise ModelImportError(f"chunk over the dynamic dimension {dim} of {x!r}")
    return _split(node, x, -(-size // chunks) if size else 1, dim)


@converter("aten.narrow.default")
def _narrow(node, x, dim, start, length):
    return _slice(node, x, dim, start, start + length)


@converter("aten.expand_as.default")
def _expand_as(node, x, other):
    return _expand(node, x, [-1 if d is None else d for d in _shape(other)])


@converter("aten.einsum.default")
def _einsum(node, equation, tensors, path=None):
    """torch.einsum (MaxViT's relative-position attention) as dlc.einsum:
    static shapes only (TRAINING_IR_WHEN; a dynamic one is decomposed)."""
    return C.einsum(equation, *tensors)


@converter("aten.floor_divide.default", "aten.floor_divide.Scalar")
def _floor_divide(node, a, b):
    return _div(node, a, b, "floor")


@converter("aten.logsumexp.default")
def _logsumexp(node, x, dim, keepdim=False):
    """torch's decomposition: the maximum (0 where it is infinite) taken
    out before the exponentials."""
    x = _float_of(x)
    axes = _dims(x, dim) or tuple(range(_ndim(x)))
    top = D.max(x, axis=axes, keepdims=True)
    top = D.where(D.isinf(top), np.zeros((), x.dtype), top)
    total = D.sum(D.exp(D.subtract(x, top)), axis=axes, keepdims=keepdim)
    return D.add(D.log(total), top if keepdim else D.squeeze(top, axes))


@converter("aten.linalg_vector_norm.default")
def _vector_norm(node, x, ord=2, dim=None, keepdim=False, dtype=None):  # noqa: A002
    x = _float_of(x) if dtype is None else _cast(x, _np_dtype(dtype))
    axes = _dims(x, dim)
    if ord == 0:
        return D.sum(D.astype(D.not_equal(x, np.zeros((), x.dtype)), x.dtype), axis=axes,
                     keepdims=keepdim)
    magnitude = D.abs(x)
    if ord == float("inf"):
        return D.max(magnitude, axis=axes, keepdims=keepdim)
    if ord == float("-inf"):
        return D.min(magnitude, axis=axes, keepdims=keepdim)
    if ord == 1:
        return D.sum(magnitude, axis=axes, keepdims=keepdim)
    if ord == 2:
        return D.sqrt(D.sum(D.multiply(x, x), axis=axes, keepdims=keepdim))
    powered = D.power(magnitude, np.asarray(ord, x.dtype))
    return D.power(D.sum(powered, axis=axes, keepdims=keepdim), np.asarray(1.0 / ord, x.dtype))


def _argument(node, position, name, default=None):
    if len(node.args) > position:
        return node.args[position]
    return node.kwargs.get(name, default)


def _static_dims(node, position, dims):
    """Whether torch.export knows dimensions `dims` of the node's argument
    `position` as ints."""
    value = getattr(_argument(node, position, None), "meta", {}).get("val")
    shape = getattr(value, "shape", None)
    return shape is not None and builtins.all(
        isinstance(shape[d], int) for d in dims if -len(shape) <= d < len(shape))


def _static_result(node, at_most=0):
    shape = getattr(node.meta.get("val"), "shape", None)
    return shape is not None and builtins.sum(not isinstance(d, int) for d in shape) <= at_most


#: {training-IR op: whether this node of it converts} where a converter
#: above takes only some of what the op allows; the rest goes through
#: ``run_decompositions`` (torch_importer._direct)
TRAINING_IR_WHEN = {
    "aten.pad.default": lambda node: _argument(node, 2, "mode", "constant") == "constant",
    "aten.scaled_dot_product_attention.default": lambda node: not _argument(
        node, 4, "dropout_p", 0.0) and (not _argument(node, 5, "is_causal", False) or (
            _static_dims(node, 0, [-2]) and _static_dims(node, 1, [-2]))),
    "aten.einsum.default": lambda node: builtins.all(
        _static_result(operand) for operand in _argument(node, 1, "tensors", ())),
    "aten.unbind.int": lambda node: _static_dims(node, 0, [_argument(node, 1, "dim", 0)]),
    "aten.diff.default": lambda node: _static_result(node),
    "aten.flatten.using_ints": lambda node: _static_result(node, at_most=1),
    "aten.dropout.default": lambda node: not (_argument(node, 2, "train") and
                                              _argument(node, 1, "p")),
}


# -- PyTorch 2 quantization (PT2E: torchao's prepare_pt2e / convert_pt2e) -----------------
# quantized_decomposed ops, converted to dl.quantize / dl.dequantize with PyTorch's
# arithmetic: quantization multiplies by the reciprocal of the scale (1 / scale in
# double for a Python scale, in float32 for a tensor of scales), which is the product
# dl.mul computes here before a dl.quantize of scale 1 (bit-identical to eager);
# a quant_min / quant_max inside the dtype's range clamps the integers again.

def _qparam_dtype(node, dtype):
    np_dtype = _np_dtype(dtype)
    if np_dtype not in D.QUANTIZED_DTYPES:
        raise ModelImportError(f"{node}: quantized dtype {dtype} is not supported "
                               f"({', '.join(map(str, D.QUANTIZED_DTYPES))} are)")
    return np_dtype


def _narrow(q, quant_min, quant_max):
    info = np.iinfo(q.dtype)
    if quant_min > info.min:
        q = D.maximum(q, np.array(quant_min, q.dtype))
    if quant_max < info.max:
        q = D.minimum(q, np.array(quant_max, q.dtype))
    return q


def _float32(x):
    return x if x.dtype == np.float32 else D.astype(x, np.float32)


def _inverse_scale(scale):
    """torch's 1.0 / scale for a per-tensor scale: a Python float (or a
    0-d tensor's .item()) divided in double, then float32 where it meets the
    float32 input."""
    if _is_value(scale) and not isinstance(scale, np.ndarray):
        wide = D.astype(D.reshape(scale, ()), np.float64)
        return D.astype(D.divide(np.float64(1.0), wide), np.float32)
    return np.float32(1.0 / float(np.asarray(scale)))


def _per_tensor_zero(zero_point, q_dtype):
    if _is_value(zero_point) and not isinstance(zero_point, np.ndarray):
        return D.astype(D.reshape(zero_point, ()), q_dtype)
    return np.array(int(np.asarray(zero_point)), q_dtype)


@converter("quantized_decomposed.quantize_per_tensor.default",
           "quantized_decomposed.quantize_per_tensor.tensor")
def _pt2e_quantize_per_tensor(node, x, scale, zero_point, quant_min, quant_max, dtype):
    q_dtype = _qparam_dtype(node, dtype)
    scaled = D.multiply(_float32(x), _inverse_scale(scale))
    q = D.quantize_linear(scaled, np.float32(1.0), _per_tensor_zero(zero_point, q_dtype),
                          dtype=q_dtype)
    return _narrow(q, quant_min, quant_max)


@converter("quantized_decomposed.dequantize_per_tensor.default",
           "quantized_decomposed.dequantize_per_tensor.tensor")
def _pt2e_dequantize_per_tensor(node, q, scale, zero_point, quant_min, quant_max, dtype,
                                out_dtype=None):
    q_dtype = _qparam_dtype(node, dtype)
    if _is_value(scale) and not isinstance(scale, np.ndarray):
        scale = _float32(D.reshape(scale, ()))
    else:
        scale = np.float32(np.asarray(scale))
    zero = _per_tensor_zero(zero_point, q_dtype)
    y = D.dequantize_linear(q, scale, zero)
    out = np.float32 if out_dtype is None else _np_dtype(out_dtype)
    y = y if y.dtype == out else D.astype(y, out)
    if isinstance(scale, np.generic) and isinstance(zero, np.ndarray):
        _remember_dequantized(node, y, q, np.asarray(scale), zero, None)
    return y


def _channel_params(scales, zero_points, q_dtype):
    scales = D.asarray(scales) if _is_value(scales) else np.asarray(scales, np.float32)
    if zero_points is None:
        zero_points = np.zeros(_shape(scales), q_dtype)
    elif _is_value(zero_points) and zero_points.dtype != q_dtype:
        zero_points = D.astype(zero_points, q_dtype)
    return _float32(D.asarray(scales)), zero_points


@converter("quantized_decomposed.quantize_per_channel.default")
def _pt2e_quantize_per_channel(node, x, scales, zero_points, axis, quant_min, quant_max,
                               dtype):
    q_dtype = _qparam_dtype(node, dtype)
    x = _float32(x)
    axis = axis % _ndim(x)
    scales, zero_points = _channel_params(scales, zero_points, q_dtype)
    inverse = D.divide(np.ones((), np.float32), scales)  # float32, as torch's 1.0 / scales
    shape = tuple(-1 if d == axis else 1 for d in range(_ndim(x)))
    scaled = D.multiply(x, D.reshape(inverse, shape))
    q = D.quantize_linear(scaled, np.ones(_shape(scales), np.float32), zero_points,
                          axis=axis, dtype=q_dtype)
    return _narrow(q, quant_min, quant_max)


@converter("quantized_decomposed.dequantize_per_channel.default")
def _pt2e_dequantize_per_channel(node, q, scales, zero_points, axis, quant_min, quant_max,
                                 dtype, out_dtype=None):
    q_dtype = _qparam_dtype(node, dtype)
    given = (scales, zero_points)
    scales, zero_points = _channel_params(scales, zero_points, q_dtype)
    y = D.dequantize_linear(q, scales, zero_points, axis=axis % _ndim(q))
    out = np.float32 if out_dtype is None else _np_dtype(out_dtype)
    y = y if y.dtype == out else D.astype(y, out)
    if isinstance(q, np.ndarray) and isinstance(given[0], np.ndarray) and \
            (given[1] is None or isinstance(given[1], np.ndarray)):
        _remember_dequantized(node, y, q, given[0], given[1], axis % _ndim(q))
    return y


# The QDQ fusion (dlc.quant.integer): a convolution or linear layer of a
# dequantized activation by a dequantized int8 weight computes in integers.
# The dequantizations are recorded per FX graph (one import).
_DEQUANTIZED = weakref.WeakKeyDictionary()


def _remember_dequantized(node, value, q, scale, zero, axis):
    table = _DEQUANTIZED.setdefault(node.graph, {})
    table[id(value)] = (value, q, scale, zero, axis)


def _transposed_dequantization(node, x, y):
    """y = x.T: if x is a dequantized 2-D constant (a linear layer's
    weight, transposed by the decomposition of aten.linear), so is y."""
    entry = _DEQUANTIZED.get(node.graph, {}).get(id(x))
    if entry is not None and entry[0] is x and isinstance(entry[1], np.ndarray):
        _, q, scale, zero, axis = entry
        _remember_dequantized(node, y, np.ascontiguousarray(q.T), scale, zero,
                              None if axis is None else 1 - axis)


def _qdq_operands(node, x, w, weight_axis):
    table = _DEQUANTIZED.get(node.graph, {})
    xo, wo = table.get(id(x)), table.get(id(w))
    if xo is None or wo is None or xo[0] is not x or wo[0] is not w:
        return None
    return integer.qdq_operands(xo[1:], wo[1:], weight_axis)
