"""The ONNX operator table: one converter per operator, calling dlc's ops.

``CONVERTERS[op_type](node)`` returns the node's output value(s). A node
whose inputs are all known at import time never reaches its converter (it
is evaluated by the importer), so converters deal with traced inputs.
``STATIC_INPUTS[op_type]`` lists the inputs that must be known at import
(shapes, axes, pads, ...). Operator semantics follow the ONNX specification
of every version from opset 7; where a version changed an operator the
converter reads ``node.opset``.
"""

import builtins

import numpy as np

from .. import composite as C
from .. import dtypes
from .. import ops as D
from ..errors import DynamicDimensionError
from ..mlir.dialects import dl
from ..tracing import Size, Tensor
from ..quant import integer
from .common import bit_shift, pool2d_any_size, registrar

__all__ = ["CONVERTERS", "STATIC_INPUTS"]

CONVERTERS = {}
converter = registrar(CONVERTERS)

STATIC_INPUTS = {
    "Reshape": (1,), "Expand": (1,), "Tile": (1,), "Slice": (1, 2, 3, 4),
    "Pad": (1, 2, 3), "Resize": (1, 2, 3), "Upsample": (1,), "Unsqueeze": (1,),
    "Squeeze": (1,), "ConstantOfShape": (0,), "Range": (0, 1, 2), "TopK": (1,),
    "Split": (1,), "OneHot": (1,), "CumSum": (1,), "CumProd": (1,), "Trilu": (1,), "Dropout": (1, 2),
    "CenterCropPad": (1,), "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,),
    "ReduceMin": (1,), "ReduceProd": (1,), "ReduceL1": (1,), "ReduceL2": (1,),
    "ReduceLogSum": (1,), "ReduceLogSumExp": (1,), "ReduceSumSquare": (1,),
    "If": (0,), "Loop": (0, 1), "MaxUnpool": (2,), "HannWindow": (0,),
    "HammingWindow": (0,), "BlackmanWindow": (0,), "AffineGrid": (1,), "MelWeightMatrix": (0, 1, 2, 3, 4),
}


def _t(value):
    """A traced tensor of a value (numpy arrays become constants)."""
    return D.asarray(value)


def _dtype(value):
    return value.dtype if isinstance(value, (Tensor, np.ndarray)) else np.asarray(value).dtype


def _shape(value):
    return tuple(value.shape)


def _ndim(value):
    return len(value.shape)


def _np_dtype(node, elem_type, what):
    from onnx import helper
    import onnx
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, TypeError, ValueError):
        dtype = None
    if dtype is None or not dtypes.is_supported(dtype):
        name = onnx.TensorProto.DataType.Name(elem_type)
        node.fail(f"{what} {name} is not a dtype dlc supports "
                  f"({dtypes.supported_names()})")
    return dtype


def _static_shape(node, value, what="input"):
    shape = _shape(value)
    if None in shape:
        raise DynamicDimensionError(f"{node}: the {what} has a dynamic dimension, whose "
                                    f"size this operator needs to know")
    return shape


# -- elementwise -------------------------------------------------------------------

def _binary(fn):
    return lambda node: fn(node.input(0), node.input(1))


def _divide(x, y):
    """ONNX Div: integer division truncates towards zero (dl.div's integer
    semantics; dlc.divide itself is numpy's true division, floats only)."""
    if dtypes.is_float(_dtype(x)) or dtypes.is_float(_dtype(y)):
        return D.divide(x, y)
    trace, x, y = D._operands("divide", x, y)
    return trace.emit("dl.div", lambda: dl.DivOp(x.value, y.value))


for _name, _fn in [("Add", D.add), ("Sub", D.subtract), ("Mul", D.multiply),
                   ("Div", _divide), ("Equal", D.equal), ("Less", D.less),
                   ("LessOrEqual", D.less_equal), ("Greater", D.greater),
                   ("GreaterOrEqual", D.greater_equal)]:
    CONVERTERS[_name] = _binary(_fn)


@converter("Pow")
def _pow(node):
    x, y = node.input(0), node.input(1)
    if _dtype(x) == _dtype(y):
        return D.power(x, y)
    if dtypes.is_float(_dtype(x)):
        return D.power(x, D.astype(_t(y), _dtype(x)))
    wide = np.float64
    return D.astype(D.power(D.astype(_t(x), wide), D.astype(_t(y), wide)), _dtype(x))


def _variadic(fn):
    def convert(node):
        present = [v for v in node.values if v is not None]
        result = present[0]
        for value in present[1:]:
            result = fn(result, value)
        return _t(result)
    return convert


CONVERTERS["Max"] = _variadic(D.maximum)
CONVERTERS["Min"] = _variadic(D.minimum)
CONVERTERS["Sum"] = _variadic(D.add)


@converter("Mean")
def _mean(node):
    present = [v for v in node.values if v is not None]
    return D.divide(_variadic(D.add)(node), float(len(present)))


def _unary(fn):
    return lambda node: fn(node.input(0))


for _name, _fn in [("Neg", D.negative), ("Abs", D.abs), ("Exp", D.exp), ("Log", D.log),
                   ("Sqrt", D.sqrt), ("Relu", D.relu), ("Sigmoid", D.sigmoid),
                   ("Tanh", D.tanh), ("Erf", D.erf), ("Reciprocal", C.reciprocal),
                   ("Softplus", C.softplus), ("Softsign", C.softsign), ("Mish", C.mish),
                   ("HardSwish", D.hardswish), ("Identity", lambda x: x)]:
    CONVERTERS[_name] = _unary(_fn)


@converter("LeakyRelu")
def _leaky_relu(node):
    return D.leaky_relu(node.input(0), node.attr("alpha", 0.01))


@converter("Elu")
def _elu(node):
    return C.elu(node.input(0), node.attr("alpha", 1.0))


@converter("Selu")
def _selu(node):
    return C.selu(node.input(0), node.attr("alpha", 1.67326319217681884765625),
                  node.attr("gamma", 1.05070102214813232421875))


@converter("Celu")
def _celu(node):
    return C.celu(node.input(0), node.attr("alpha", 1.0))


@converter("HardSigmoid")
def _hard_sigmoid(node):
    return C.hard_sigmoid(node.input(0), node.attr("alpha", 0.2), node.attr("beta", 0.5))


@converter("ThresholdedRelu")
def _thresholded_relu(node):
    x = node.input(0)
    return D.where(D.greater(x, node.attr("alpha", 1.0)), x, np.zeros((), _dtype(x)))


@converter("PRelu")
def _prelu(node):
    return C.prelu(node.input(0), node.input(1))


@converter("Gelu")
def _gelu(node):
    return D.gelu(node.input(0), node.attr("approximate", "none"))


@converter("Swish")
def _swish(node):
    x = node.input(0)
    alpha = node.attr("alpha", 1.0)
    return D.silu(x) if alpha == 1.0 else D.multiply(x, D.sigmoid(D.multiply(x, alpha)))


@converter("Shrink")
def _shrink(node):
    x = _t(node.input(0))
    lambd, bias = node.attr("lambd", 0.5), node.attr("bias", 0.0)
    zero = np.zeros((), x.dtype)
    return D.where(D.less(x, -lambd), D.add(x, bias),
                   D.where(D.greater(x, lambd), D.subtract(x, bias), zero))


@converter("Sign")
def _sign(node):
    return D.sign(node.input(0))


@converter("IsNaN")
def _isnan(node):
    return D.isnan(node.input(0))


@converter("IsInf")
def _isinf(node):
    x = _t(node.input(0))
    positive, negative = node.attr("detect_positive", 1), node.attr("detect_negative", 1)
    inf = np.array(np.inf, x.dtype)
    if positive and negative:
        return D.equal(D.abs(x), inf)
    if positive:
        return D.equal(x, inf)
    if negative:
        return D.equal(x, -inf)
    return D.less(x, -inf)  # never true


@converter("Not")
def _not(node):
    return D.logical_not(node.input(0))


@converter("And")
def _and(node):
    return D.logical_and(node.input(0), node.input(1))


@converter("Or")
def _or(node):
    return D.logical_or(node.input(0), node.input(1))


@converter("Xor")
def _xor(node):
    return D.logical_xor(node.input(0), node.input(1))


@converter("Where")
def _where(node):
    return D.where(node.input(0), node.input(1), node.input(2))


@converter("Clip")
def _clip(node):
    x = _t(node.input(0))
    if node.opset < 11:
        low, high = node.attr("min"), node.attr("max")
    else:
        low, high = node.input(1), node.input(2)
    if low is not None:
        x = D.maximum(x, low if isinstance(low, Tensor) else np.asarray(low, x.dtype))
    if high is not None:
        x = D.minimum(x, high if isinstance(high, Tensor) else np.asarray(high, x.dtype))
    return x


@converter("Cast")
def _cast(node):
    dtype = _np_dtype(node, node.attr("to"), "the target type")
    return D.astype(node.input(0), dtype)


@converter("CastLike")
def _cast_like(node):
    return D.astype(node.input(0), _dtype(node.input(1)))


@converter("Dropout")
def _dropout(node):
    training = node.static(2, "training_mode") if node.opset >= 12 else None
    if training is not None and bool(np.asarray(training)):
        node.fail("training_mode = true is not supported (dlc compiles inference)")
    x = _t(node.input(0))
    if node.num_outputs > 1:
        return [x, np.ones(_static_shape(node, x), bool)]
    return x


# -- linear algebra, convolution, pooling --------------------------------------------

@converter("MatMul")
def _matmul(node):
    fused = _qdq_matmul(node, node.input(0), node.input(1), transposed=False)
    if fused is not None:
        return fused
    return D.matmul(node.input(0), node.input(1))


@converter("Gemm")
def _gemm(node):
    if not node.attr("transA", 0) and node.attr("alpha", 1.0) == 1.0 and \
            node.attr("beta", 1.0) == 1.0:
        fused = _qdq_matmul(node, node.input(0), node.input(1),
                            transposed=bool(node.attr("transB", 0)))
        if fused is not None:
            return fused if node.input(2) is None else D.add(fused, _t(node.input(2)))
    a, b, c = _t(node.input(0)), _t(node.input(1)), node.input(2)
    if node.attr("transA", 0):
        a = D.transpose(a)
    if node.attr("transB", 0):
        b = D.transpose(b)
    y = D.matmul(a, b)
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    if alpha != 1.0:
        y = D.multiply(y, alpha)
    if c is not None and beta != 0.0:
        c = _t(c)
        y = D.add(y, c if beta == 1.0 else D.multiply(c, beta))
    return y


def _spatial_attrs(node, rank, kernel):
    strides = list(node.attr("strides", [1] * rank))
    dilations = list(node.attr("dilations", [1] * rank))
    pads = list(node.attr("pads", [0] * (2 * rank)))
    return strides, dilations, pads


def _auto_pads(node, spatial, kernel, strides, dilations, pads):
    """Explicit [begin..., end...] pads of an auto_pad node."""
    auto = node.attr("auto_pad", "NOTSET")
    rank = len(spatial)
    if auto in ("NOTSET", ""):
        return pads
    if auto == "VALID":
        return [0] * (2 * rank)
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        node.fail(f"auto_pad {auto!r} is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID")
    begin, end = [], []
    for size, k, s, d in zip(spatial, kernel, strides, dilations):
        if size is None and s != 1:
            raise DynamicDimensionError(
                f"{node}: auto_pad {auto} with stride {s} depends on the size of a "
                f"dynamic dimension")
        # at stride 1 the total is the window's span less one, whatever the size
        out = size if size is None else -(-size // s)
        total = (k - 1) * d if size is None else \
            builtins.max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begin.append(small if auto == "SAME_UPPER" else large)
        end.append(large if auto == "SAME_UPPER" else small)
    return begin + end


@converter("Conv")
def _conv(node):
    fused = _qdq_conv(node)
    if fused is not None:
        return fused
    return _conv_of(node, _t(node.input(0)), _t(node.input(1)), node.input(2))


def _conv_of(node, x, w, b):
    """A Conv node's convolution (its attributes) of x, w and bias b."""
    rank = _ndim(x) - 2
    if rank not in (1, 2):
        node.fail(f"{rank}-D convolutions are not supported (1-D and 2-D are)")
    kernel = list(_shape(w)[2:])
    strides, dilations, pads = _spatial_attrs(node, rank, kernel)
    pads = _auto_pads(node, _shape(x)[2:], kernel, strides, dilations, pads)
    group = node.attr("group", 1)
    if rank == 1:
        x = D.expand_dims(x, 2)
        w = D.expand_dims(w, 2)
        strides, dilations = [1] + strides, [1] + dilations
        pads = [0, pads[0], 0, pads[1]]
    padding = (pads[0], pads[2], pads[1], pads[3])
    y = D.conv2d(x, w, b, stride=tuple(strides), padding=padding,
                 dilation=tuple(dilations), groups=group)
    return D.squeeze(y, 2) if rank == 1 else y


@converter("ConvTranspose")
def _conv_transpose(node):
    x, w, b = _t(node.input(0)), _t(node.input(1)), node.input(2)
    rank = _ndim(x) - 2
    if rank not in (1, 2):
        node.fail(f"{rank}-D transposed convolutions are not supported (1-D and 2-D are)")
    kernel = list(_shape(w)[2:])
    strides, dilations, pads = _spatial_attrs(node, rank, kernel)
    output_padding = list(node.attr("output_padding", [0] * rank))
    output_shape = node.attr("output_shape")
    auto = node.attr("auto_pad", "NOTSET")
    spatial = _shape(x)[2:]
    if output_shape is not None or auto in ("SAME_UPPER", "SAME_LOWER"):
        if output_shape is None:
            output_shape = [s * st for s, st in zip(spatial, strides)]
        output_shape = list(output_shape)[-rank:]
        begin, end = [], []
        for i in range(rank):
            total = strides[i] * (spatial[i] - 1) + output_padding[i] + \
                ((kernel[i] - 1) * dilations[i] + 1) - output_shape[i]
            if total < 0:
                output_padding[i] -= total
                total = 0
            if auto == "SAME_LOWER":
                begin.append(total - total // 2), end.append(total // 2)
            else:
                begin.append(total // 2), end.append(total - total // 2)
        pads = begin + end
    elif auto == "VALID":
        pads = [0] * (2 * rank)
    if rank == 1:
        x, w = D.expand_dims(x, 2), D.expand_dims(w, 2)
        strides, dilations = [1] + strides, [1] + dilations
        output_padding = [0] + output_padding
        pads = [0, pads[0], 0, pads[1]]
    padding = (pads[0], pads[2], pads[1], pads[3])
    y = C.conv_transpose2d(x, w, b, stride=tuple(strides), padding=padding,
                           output_padding=tuple(output_padding),
                           groups=node.attr("group", 1), dilation=tuple(dilations))
    return D.squeeze(y, 2) if rank == 1 else y


def _window_slices(x, kernel, strides, dilations, out):
    """For each kernel offset, the strided slice of (padded) x it reads."""
    rank = len(kernel)
    for offset in np.ndindex(*kernel):
        key = [slice(None), slice(None)]
        for i in range(rank):
            start = offset[i] * dilations[i]
            key.append(slice(start, start + (out[i] - 1) * strides[i] + 1, strides[i]))
        yield tuple(key)


def _pool_geometry(node, x, kernel):
    rank = len(kernel)
    spatial = _static_shape(node, x)[2:] if None in _shape(x)[2:] else _shape(x)[2:]
    strides, dilations, pads = _spatial_attrs(node, rank, kernel)
    pads = _auto_pads(node, spatial, kernel, strides, dilations, pads)
    ceil = node.attr("ceil_mode", 0)
    out, extra = [], []
    for i in range(rank):
        span = spatial[i] + pads[i] + pads[rank + i] - ((kernel[i] - 1) * dilations[i] + 1)
        if span < 0:
            node.fail("the pooling window is larger than the padded input")
        n = (-(-span // strides[i]) if ceil else span // strides[i]) + 1
        if ceil and (n - 1) * strides[i] >= spatial[i] + pads[i]:
            n -= 1
        out.append(n)
        needed = (n - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1
        extra.append(builtins.max(needed - (spatial[i] + pads[i] + pads[rank + i]), 0))
    return spatial, strides, dilations, pads, out, extra


def _pool_by_slices(node, x, kernel, combine, fill):
    """N-D pooling as an elementwise combination of strided slices of the
    padded input (any dilation, ceil_mode, 1-D/3-D)."""
    rank = len(kernel)
    spatial, strides, dilations, pads, out, extra = _pool_geometry(node, x, kernel)
    widths = [(0, 0), (0, 0)] + [(pads[i], pads[rank + i] + extra[i]) for i in range(rank)]
    padded = D.pad(x, widths, constant_values=fill) if builtins.any(
        a or b for a, b in widths) else x
    result = None
    for key in _window_slices(padded, kernel, strides, dilations, out):
        piece = padded[key]
        result = piece if result is None else combine(result, piece)
    return result, (spatial, strides, dilations, pads, out, extra)


def _pool_dynamic(node, x, kernel, kind, include=True):
    """A 2-D pooling of an image of dynamic size (explicit or VALID pads,
    no dilation), or None for a static image or what needs its size (the
    static geometry then refuses, naming the node)."""
    if len(kernel) != 2 or None not in _shape(x)[2:]:
        return None
    if node.attr("auto_pad", "NOTSET") not in ("NOTSET", "", "VALID"):
        return None
    strides, dilations, pads = _spatial_attrs(node, 2, kernel)
    if node.attr("auto_pad", "NOTSET") == "VALID":
        pads = [0, 0, 0, 0]
    if dilations != [1, 1]:
        return None
    return pool2d_any_size(x, kind, kernel, strides, (pads[0], pads[2], pads[1], pads[3]),
                           bool(node.attr("ceil_mode", 0)), include)


@converter("MaxPool")
def _max_pool(node):
    x = _t(node.input(0))
    if node.output_used(1):
        node.fail("the Indices output of MaxPool is not supported")
    if node.attr("storage_order", 0):
        node.fail("storage_order = 1 is not supported")
    kernel = list(node.attr("kernel_shape"))
    rank = len(kernel)
    y = _pool_dynamic(node, x, kernel, "max")
    if y is not None:
        return y
    spatial, strides, dilations, pads, out, extra = _pool_geometry(node, x, kernel)
    if rank == 2 and dilations == [1, 1] and not builtins.any(extra) and \
            dtypes.is_float(x.dtype) and \
            builtins.all(pads[i] <= kernel[i % 2] // 2 for i in range(4)):
        return D.max_pool2d(x, tuple(kernel), tuple(strides),
                            (pads[0], pads[2], pads[1], pads[3]))
    lowest = float("-inf") if dtypes.is_float(x.dtype) else int(np.iinfo(x.dtype).min)
    return _pool_by_slices(node, x, kernel, D.maximum, lowest)[0]


@converter("AveragePool")
def _avg_pool(node):
    x = _t(node.input(0))
    kernel = list(node.attr("kernel_shape"))
    rank = len(kernel)
    include = bool(node.attr("count_include_pad", 0))
    y = _pool_dynamic(node, x, kernel, "avg", include)
    if y is not None:
        return y
    spatial, strides, dilations, pads, out, extra = _pool_geometry(node, x, kernel)
    if rank == 2 and dilations == [1, 1] and not builtins.any(extra) and \
            builtins.all(pads[i] <= kernel[i % 2] // 2 for i in range(4)):
        return D.avg_pool2d(x, tuple(kernel), tuple(strides),
                            (pads[0], pads[2], pads[1], pads[3]), count_include_pad=include)
    total, _ = _pool_by_slices(node, x, kernel, D.add, 0.0)
    # The divisor per output position: the window's elements inside the input
    # (count_include_pad: inside the explicitly padded input).
    mask = np.zeros([1, 1] + [spatial[i] + pads[i] + pads[rank + i] + extra[i]
                              for i in range(rank)], np.float64)
    inner = tuple([0, 0] + [slice(0 if include else pads[i],
                                  spatial[i] + pads[i] + (pads[rank + i] if include else 0))
                            for i in range(rank)])
    mask[inner] = 1.0
    count = builtins.sum(mask[key] for key in _window_slices(mask, kernel, strides,
                                                              dilations, out))
    return D.divide(total, np.maximum(count, 1.0).astype(x.dtype))


@converter("LpPool")
def _lp_pool(node):
    x = _t(node.input(0))
    p = node.attr("p", 2)
    kernel = list(node.attr("kernel_shape"))
    powered = D.power(D.abs(x), float(p))
    total, _ = _pool_by_slices(node, powered, kernel, D.add, 0.0)
    return D.power(total, 1.0 / p)


@converter("GlobalAveragePool")
def _global_avg_pool(node):
    x = node.input(0)
    return D.mean(x, axis=tuple(range(2, _ndim(x))), keepdims=True)


@converter("GlobalMaxPool")
def _global_max_pool(node):
    x = node.input(0)
    return D.max(x, axis=tuple(range(2, _ndim(x))), keepdims=True)


@converter("GlobalLpPool")
def _global_lp_pool(node):
    x = node.input(0)
    p = float(node.attr("p", 2))
    return D.power(D.sum(D.power(D.abs(x), p), axis=tuple(range(2, _ndim(x))),
                         keepdims=True), 1.0 / p)


# -- normalization -----------------------------------------------------------------

@converter("BatchNormalization")
def _batch_norm(node):
    if node.attr("training_mode", 0) or (node.opset < 14 and node.num_outputs > 1 and
                                          builtins.any(node.output_used(i)
                                                       for i in range(1, node.num_outputs))):
        node.fail("training mode (batch statistics) is not supported; dlc compiles "
                  "inference")
    x = _t(node.input(0))
    scale, bias, mean, var = (node.input(i) for i in (1, 2, 3, 4))
    return D.batch_norm(x, mean, var, scale, bias, eps=node.attr("epsilon", 1e-5), axis=1)


@converter("InstanceNormalization")
def _instance_norm(node):
    return C.instance_norm(node.input(0), node.input(1), node.input(2),
                           eps=node.attr("epsilon", 1e-5))


@converter("LayerNormalization")
def _layer_norm(node):
    x = _t(node.input(0))
    axis = node.attr("axis", -1)
    eps = node.attr("epsilon", 1e-5)
    ndim = _ndim(x)
    axis = axis % ndim
    axes = tuple(range(axis, ndim))
    stash = node.attr("stash_type", 1)
    if builtins.max(node.num_outputs, 1) == 1 and x.dtype in (np.float32, np.float64) \
            and None not in _shape(x)[axis:]:
        # the op dlc optimizes, as from_torch's F.layer_norm gives it; the
        # scale and bias broadcast to the normalized dimensions
        normalized = _shape(x)[axis:]
        scale, bias = node.input(1), node.input(2)
        scale = None if scale is None else D.broadcast_to(D.astype(scale, x.dtype), normalized)
        bias = None if bias is None else D.broadcast_to(D.astype(bias, x.dtype), normalized)
        return D.layer_norm(x, scale, bias, axis=axis, eps=eps)
    work = D.astype(x, np.float32) if stash == 1 and x.dtype != np.float32 and \
        x.dtype != np.float64 else x
    mean = D.mean(work, axis=axes, keepdims=True)
    centered = D.subtract(work, mean)
    var = D.mean(D.multiply(centered, centered), axis=axes, keepdims=True)
    inv = D.divide(1.0, D.sqrt(D.add(var, eps)))
    y = D.astype(D.multiply(centered, inv), x.dtype)
    scale, bias = node.input(1), node.input(2)
    if scale is not None:
        y = D.multiply(y, scale)
    if bias is not None:
        y = D.add(y, bias)
    return [y, mean, inv][:builtins.max(node.num_outputs, 1)]


@converter("GroupNormalization")
def _group_norm(node):
    x = _t(node.input(0))
    groups = node.attr("num_groups")
    scale, bias = node.input(1), node.input(2)
    channels = _shape(x)[1]
    if node.opset < 21 and scale is not None and _shape(scale)[0] == groups != channels:
        scale = D.reshape(D.broadcast_to(D.reshape(scale, (groups, 1)),
                                         (groups, channels // groups)), (channels,))
        bias = D.reshape(D.broadcast_to(D.reshape(bias, (groups, 1)),
                                        (groups, channels // groups)), (channels,))
    return C.group_norm(x, groups, scale, bias, eps=node.attr("epsilon", 1e-5))


@converter("RMSNormalization")
def _rms_norm(node):
    x = _t(node.input(0))
    axis = node.attr("axis", -1) % _ndim(x)
    eps = node.attr("epsilon", 1e-5)
    work = D.astype(x, np.float32) if node.attr("stash_type", 1) == 1 and \
        x.dtype not in (np.float32, np.float64) else x
    y = D.astype(C.rms_norm(work, None, axis=axis, eps=eps), x.dtype)
    return D.multiply(y, node.input(1)) if node.has(1) else y


@converter("LpNormalization")
def _lp_normalization(node):
    x = _t(node.input(0))
    axis, p = node.attr("axis", -1), node.attr("p", 2)
    if p == 1:
        norm = D.sum(D.abs(x), axis=axis, keepdims=True)
    elif p == 2:
        norm = D.sqrt(D.sum(D.multiply(x, x), axis=axis, keepdims=True))
    else:
        node.fail(f"p = {p} is not 1 or 2")
    zero = np.zeros((), x.dtype)
    return D.where(D.equal(norm, zero), zero, D.divide(x, norm))


@converter("MeanVarianceNormalization")
def _mvn(node):
    x = _t(node.input(0))
    axes = tuple(node.attr("axes", [0, 2, 3]))
    mean = D.mean(x, axis=axes, keepdims=True)
    centered = D.subtract(x, mean)
    var = D.mean(D.multiply(centered, centered), axis=axes, keepdims=True)
    return D.divide(centered, D.add(D.sqrt(var), 1e-9))


@converter("LRN")
def _lrn(node):
    x = _t(node.input(0))
    size = node.attr("size")
    alpha, beta, bias = node.attr("alpha", 1e-4), node.attr("beta", 0.75), node.attr("bias", 1.0)
    squared = D.multiply(x, x)
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    widths = [(0, 0)] * _ndim(x)
    widths[1] = (before, after)
    padded = D.pad(squared, widths)
    channels = _shape(x)[1]
    total = None
    for offset in range(size):
        key = (slice(None), slice(offset, offset + channels))
        piece = padded[key]
        total = piece if total is None else D.add(total, piece)
    return D.divide(x, D.power(D.add(D.multiply(total, alpha / size), bias), beta))


# -- softmax family ------------------------------------------------------------------

def _softmax_like(fn):
    def convert(node):
        x = _t(node.input(0))
        ndim = _ndim(x)
        if node.opset >= 13:
            return fn(x, node.attr("axis", -1))
        axis = node.attr("axis", 1) % builtins.max(ndim, 1)
        shape = _static_shape(node, x)
        rows = int(np.prod(shape[:axis], dtype=np.int64))
        flat = D.reshape(x, (rows, -1))
        return D.reshape(fn(flat, 1), shape)
    return convert


def _hardmax(x, axis):
    axis = axis % _ndim(x)
    index = D.argmax(x, axis=axis, keepdims=True)
    n = _shape(x)[axis]
    positions = np.arange(n, dtype=np.int64).reshape(
        [n if i == axis else 1 for i in range(_ndim(x))])
    return D.where(D.equal(index, positions), np.ones((), x.dtype), np.zeros((), x.dtype))


CONVERTERS["Softmax"] = _softmax_like(D.softmax)
CONVERTERS["LogSoftmax"] = _softmax_like(D.log_softmax)
CONVERTERS["Hardmax"] = _softmax_like(_hardmax)


# -- reductions ------------------------------------------------------------------------

def _reduce(fn):
    def convert(node):
        x = _t(node.input(0))
        keepdims = bool(node.attr("keepdims", 1))
        axes_from_input = node.opset >= 18 or (node.op == "ReduceSum" and node.opset >= 13)
        axes = node.static_ints(1, "axes") if axes_from_input else node.attr("axes")
        if not axes:
            if node.attr("noop_with_empty_axes", 0):
                return x
            axes = list(range(_ndim(x)))
        axes = tuple(a % _ndim(x) for a in axes) if _ndim(x) else ()
        if not axes:
            return fn(x, None, keepdims) if _ndim(x) else fn(x, None, False)
        return fn(x, axes, keepdims)
    return convert


CONVERTERS["ReduceSum"] = _reduce(lambda x, a, k: D.sum(x, axis=a, keepdims=k))
CONVERTERS["ReduceMean"] = _reduce(lambda x, a, k: D.mean(x, axis=a, keepdims=k))
CONVERTERS["ReduceMax"] = _reduce(lambda x, a, k: _reduce_extreme(D.max, x, a, k, -1))
CONVERTERS["ReduceMin"] = _reduce(lambda x, a, k: _reduce_extreme(D.min, x, a, k, 1))
CONVERTERS["ReduceL1"] = _reduce(lambda x, a, k: D.sum(D.abs(x), axis=a, keepdims=k))
CONVERTERS["ReduceL2"] = _reduce(
    lambda x, a, k: _l2(x, a, k))
CONVERTERS["ReduceSumSquare"] = _reduce(
    lambda x, a, k: D.sum(D.multiply(x, x), axis=a, keepdims=k))
CONVERTERS["ReduceLogSum"] = _reduce(lambda x, a, k: D.log(D.sum(x, axis=a, keepdims=k)))
CONVERTERS["ReduceLogSumExp"] = _reduce(lambda x, a, k: _logsumexp(x, a, k))


def _l2(x, axes, keepdims):
    if dtypes.is_float(x.dtype):
        return D.sqrt(D.sum(D.multiply(x, x), axis=axes, keepdims=keepdims))
    wide = D.astype(x, np.float64)
    return D.astype(D.sqrt(D.sum(D.multiply(wide, wide), axis=axes, keepdims=keepdims)),
                    x.dtype)


def _reduce_extreme(fn, x, axes, keepdims, sign):
    """ONNX reduces an empty axis to the identity (-inf for max) where numpy
    refuses."""
    shape = _shape(x)
    if axes is not None and builtins.any(shape[a] == 0 for a in axes):
        out = [1 if i in axes else d for i, d in enumerate(shape)] if keepdims else \
            [d for i, d in enumerate(shape) if i not in axes]
        if dtypes.is_float(x.dtype):
            value = sign * np.inf
        elif x.dtype == np.bool_:
            value = sign > 0
        else:
            info = np.iinfo(x.dtype)
            value = info.min if sign < 0 else info.max
        return np.full(out, value, x.dtype)
    if x.dtype == np.bool_:
        return D.astype(fn(D.astype(x, np.int8), axis=axes, keepdims=keepdims), np.bool_)
    return fn(x, axis=axes, keepdims=keepdims)


def _logsumexp(x, axes, keepdims):
    if axes is not None and builtins.any(_shape(x)[a] == 0 for a in axes):
        return D.log(D.sum(x, axis=axes, keepdims=keepdims))  # log(0) = -inf
    return C.logsumexp(x, axis=axes, keepdims=keepdims)


def _arg_reduce(fn):
    def convert(node):
        x = _t(node.input(0))
        axis = node.attr("axis", 0) % builtins.max(_ndim(x), 1)
        keepdims = bool(node.attr("keepdims", 1))
        if node.attr("select_last_index", 0):
            n = _shape(x)[axis]
            index = fn(C.flip(x, axis), axis=axis, keepdims=keepdims)
            return D.subtract(np.array(n - 1, np.int64), index)
        return fn(x, axis=axis, keepdims=keepdims)
    return convert


CONVERTERS["ArgMax"] = _arg_reduce(D.argmax)
CONVERTERS["ArgMin"] = _arg_reduce(D.argmin)


# -- shapes ------------------------------------------------------------------------------

@converter("Shape")
def _shape_op(node):
    shape = _static_shape(node, node.input(0))
    start, end = node.attr("start", 0), node.attr("end")
    return np.array(shape[start:end] if end is not None else shape[start:], np.int64)


@converter("Size")
def _size(node):
    return np.array(int(np.prod(_static_shape(node, node.input(0)), dtype=np.int64)), np.int64)


@converter("Reshape")
def _reshape(node):
    x = node.input(0)
    target = node.static_ints(1, "shape")
    shape = _shape(x)
    if not node.attr("allowzero", 0):
        # 0 copies the input's size: a run-time one as a dlc.Size (so that
        # the new shape keeps its one -1)
        target = [(D.dim(x, i) if shape[i] is None and isinstance(x, Tensor) else shape[i])
                  if t == 0 and i < len(shape) else t for i, t in enumerate(target)]
    return D.reshape(x, tuple(-1 if t is None else t for t in target))


@converter("Flatten")
def _flatten(node):
    x = node.input(0)
    shape = _shape(x)
    axis = node.attr("axis", 1)
    axis = axis + len(shape) if axis < 0 else axis
    if axis == 0:
        return D.reshape(x, (1, -1))
    if None in shape[axis:]:
        _static_shape(node, x)
    inner = int(np.prod(shape[axis:], dtype=np.int64))
    return D.reshape(x, (-1, inner))


def _axes(node, name="axes"):
    if node.opset >= 13:
        return node.static_ints(1, name)
    value = node.attr(name)
    return None if value is None else list(value)


@converter("Squeeze")
def _squeeze(node):
    axes = _axes(node)
    return D.squeeze(node.input(0), None if axes is None else tuple(axes))


@converter("Unsqueeze")
def _unsqueeze(node):
    x = node.input(0)
    axes = _axes(node)
    ndim = _ndim(x) + len(axes)
    return D.expand_dims(x, tuple(sorted(a % ndim for a in axes)))


@converter("Transpose")
def _transpose(node):
    perm = node.attr("perm")
    return D.transpose(node.input(0), None if perm is None else list(perm))


@converter("Concat")
def _concat(node):
    values = [v for v in node.values if v is not None]
    return D.concatenate(values, axis=node.attr("axis"))


@converter("Split")
def _split(node):
    x = node.input(0)
    axis = node.attr("axis", 0) % _ndim(x)
    size = _shape(x)[axis]
    if size is None:
        raise DynamicDimensionError(f"{node}: splitting the dynamic dimension {axis} "
                                    f"needs its size")
    if node.opset >= 13:
        split = node.static_ints(1, "split")
    else:
        split = node.attr("split")
    outputs = node.num_outputs
    if split is None:
        parts = node.attr("num_outputs", outputs)
        chunk = -(-size // parts)
        split = [chunk] * (size // chunk) + ([size % chunk] if size % chunk else [])
    bounds = list(np.cumsum(split)[:-1])
    return D.split(x, bounds, axis=axis)


@converter("Slice")
def _slice(node):
    x = node.input(0)
    if node.opset >= 10:
        starts = node.static_ints(1, "starts")
        ends = node.static_ints(2, "ends")
        axes = node.static_ints(3, "axes")
        steps = node.static_ints(4, "steps")
    else:
        starts, ends = list(node.attr("starts")), list(node.attr("ends"))
        axes, steps = node.attr("axes"), None
    ndim = _ndim(x)
    axes = list(range(len(starts))) if axes is None else [a % ndim for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    key = [slice(None)] * ndim
    shape = _shape(x)
    known = node.importer.known_shapes.get(node.proto.output[0])
    for start, end, axis, step in zip(starts, ends, axes, steps):
        size = shape[axis]
        if size is None:
            if (start, step) == (0, 1) and end >= 2**31 - 1:
                continue
            if known and len(known) == ndim and known[axis] is not None and \
                    start >= 0 and step >= 1 and isinstance(x, Tensor):
                # the exporter's shapes know the window's size (the size 1
                # of x[..., :1] that broadcasts): a static window
                x = D._static_window(x, axis, start, known[axis], step)
                shape = _shape(x)
                continue
            if start < 0 or step < 0:
                raise DynamicDimensionError(f"{node}: slicing the dynamic dimension "
                                            f"from its end or backwards needs its size")
            # a window of a run-time length (clamped like Python's slicing)
            key[axis] = slice(start, None if end >= 2**31 - 1 else end, step)
            continue
        # ONNX clamps out-of-range bounds; Python slices do the same for
        # values beyond the size, except the huge sentinels, clamped here.
        start = builtins.max(builtins.min(start, size), -size - 1)
        end = builtins.max(builtins.min(end, size), -size - 1)
        if step < 0:
            start = builtins.min(start, size - 1) if start >= 0 else start
            if end < -size:
                end = None
        key[axis] = slice(start, end, step)
    return x[tuple(key)]


@converter("Pad")
def _pad(node):
    x = node.input(0)
    ndim = _ndim(x)
    mode = node.attr("mode", "constant")
    if node.opset >= 11:
        pads = node.static_ints(1, "pads")
        value = node.static(2, "constant_value")
        axes = node.static_ints(3, "axes")
    else:
        pads, value, axes = list(node.attr("pads")), node.attr("value", 0.0), None
    axes = list(range(ndim)) if axes is None else [a % ndim for a in axes]
    widths = [[0, 0] for _ in range(ndim)]
    count = len(axes)
    for i, axis in enumerate(axes):
        widths[axis] = [pads[i], pads[count + i]]
    if builtins.any(w < 0 for pair in widths for w in pair):
        # Negative pads crop.
        key = tuple(slice(-a if a < 0 else None, b if b < 0 else None) for a, b in widths)
        x = x[key]
        widths = [[builtins.max(a, 0), builtins.max(b, 0)] for a, b in widths]
    value = 0 if value is None else np.asarray(value).reshape(-1)[0].item()
    if mode == "constant":
        return D.pad(x, widths, constant_values=value)
    if mode in ("reflect", "edge", "wrap"):
        return D.pad(x, widths, mode=mode)
    node.fail(f"mode {mode!r} is not one of constant, reflect, edge, wrap")


@converter("Expand")
def _expand(node):
    x = _t(node.input(0))
    target = node.static_ints(1, "shape")
    have = _shape(x)
    if None in have:
        # A dynamic dimension keeps its size where the target says 1; against
        # a larger size it would have to be that size or 1, unknown here.
        rank = builtins.max(len(have), len(target))
        padded_have = (1,) * (rank - len(have)) + have
        padded_target = [1] * (rank - len(target)) + list(target)
        shape = []
        for h, t in zip(padded_have, padded_target):
            if h is None and t != 1:
                raise DynamicDimensionError(f"{node}: expanding a dynamic dimension to "
                                            f"{t} needs its size")
            shape.append(-1 if h is None else builtins.max(h, t) if 1 in (h, t) else h)
        return D.broadcast_to(x, tuple(shape))
    shape = np.broadcast_shapes(tuple(have), tuple(target))
    return D.broadcast_to(x, shape)


@converter("Tile")
def _tile(node):
    return C.tile(node.input(0), node.static_ints(1, "repeats"))


@converter("Gather")
def _gather(node):
    x, indices = node.input(0), node.input(1)
    axis = node.attr("axis", 0)
    return D.take(x, indices, axis=axis)


@converter("GatherElements")
def _gather_elements(node):
    return C.gather_elements(node.input(0), node.input(1), node.attr("axis", 0))


@converter("GatherND")
def _gather_nd(node):
    x, indices = _t(node.input(0)), _t(node.input(1))
    batch = node.attr("batch_dims", 0)
    if not batch and (None in _shape(x) or None in _shape(indices)[:-1]):
        return _gather_nd_dynamic(node, x, indices)
    shape = _static_shape(node, x)
    ishape = _static_shape(node, indices, "indices")
    depth = ishape[-1]
    indices = D.astype(indices, np.int64)
    # Block index (a block: the `elements` values an index selects) into x
    # flattened from dimension `batch` onwards, plus each batch's offset.
    dims = shape[batch:batch + depth]
    strides = np.cumprod((dims[1:] + (1,))[::-1])[::-1].astype(np.int64)
    normalized = D.where(D.less(indices, 0), D.add(indices, np.array(dims, np.int64)),
                         indices)
    linear = D.sum(D.multiply(normalized, strides), axis=-1)
    inner = shape[batch + depth:]
    blocks = int(np.prod(dims, dtype=np.int64))
    elements = int(np.prod(inner, dtype=np.int64))
    if batch:
        batch_count = int(np.prod(shape[:batch], dtype=np.int64))
        offsets = (np.arange(batch_count, dtype=np.int64) * blocks).reshape(
            shape[:batch] + (1,) * (len(ishape) - 1 - batch))
        linear = D.add(linear, offsets)
    # Each index selects `elements` consecutive values.
    linear = D.add(D.expand_dims(D.multiply(linear, elements), -1),
                   np.arange(elements, dtype=np.int64))
    flat = D.reshape(x, (-1,))
    return D.reshape(D.take(flat, linear), ishape[:-1] + inner)


def _gather_nd_dynamic(node, x, indices):
    """GatherND (no batch dimensions) where dimensions of x or of the indices
    are dynamic: the same linear index, its strides and bounds computed from
    run-time sizes."""
    depth = _shape(indices)[-1]
    if depth is None:
        node.fail("the indices' last dimension (the index depth) must be static")
    sizes = [D.dim(x, a) for a in range(_ndim(x))]
    dims, inner = sizes[:depth], sizes[depth:]

    def vector(entries):
        return D.concatenate([D.reshape(D.asarray(D.size_tensor(e)), (1,)) for e in entries])
    strides = [1] * depth
    for i in range(depth - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    indices = D.astype(indices, np.int64)
    normalized = D.where(D.less(indices, 0), D.add(indices, vector(dims)), indices)
    linear = D.sum(D.multiply(normalized, vector(strides)), axis=-1)
    elements = 1
    for size in inner:
        elements = elements * size
    # each index selects `elements` consecutive values (a run-time count
    # where a dimension after the indexed ones is dynamic)
    offsets = D.arange(elements) if isinstance(elements, Size) else \
        np.arange(elements, dtype=np.int64)
    linear = D.add(D.expand_dims(D.multiply(linear, D.size_tensor(elements)), -1), offsets)
    flat = D.reshape(x, (-1,))
    out = [D.dim(indices, a) for a in range(_ndim(indices) - 1)] + inner
    return D.reshape(D.take(flat, linear), tuple(out))


@converter("Constant")
def _constant(node):
    from onnx import numpy_helper
    for name in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if name in node.attrs:
            value = node.attrs[name]
            if name == "value":
                return numpy_helper.to_array(value)
            dtype = np.float32 if "float" in name else np.int64
            return np.array(value, dtype)
    node.fail("only tensor, float(s) and int(s) constants are supported")


@converter("ConstantOfShape")
def _constant_of_shape(node):
    from onnx import numpy_helper
    shape = node.static_ints(0, "shape")
    value = node.attrs.get("value")
    fill = numpy_helper.to_array(value).reshape(-1) if value is not None else \
        np.zeros(1, np.float32)
    return np.full(shape, fill[0], fill.dtype)


@converter("EyeLike")
def _eye_like(node):
    x = node.input(0)
    rows, cols = _static_shape(node, x)
    dtype = _np_dtype(node, node.attr("dtype"), "dtype") if "dtype" in node.attrs else x.dtype
    return np.eye(rows, cols, node.attr("k", 0), dtype=dtype)


@converter("Trilu")
def _trilu(node):
    k = node.static_ints(1, "k")
    k = k[0] if k else 0
    return (C.triu if node.attr("upper", 1) else C.tril)(node.input(0), k)


@converter("OneHot")
def _one_hot(node):
    indices, values = _t(node.input(0)), _t(node.input(2))
    depth = node.static(1, "depth")
    depth = int(np.asarray(depth).reshape(-1)[0])
    axis = node.attr("axis", -1)
    hot = C.one_hot(indices, depth, axis=axis, on_value=1, off_value=0, dtype=np.bool_)
    return D.where(hot, values[1], values[0])


def _cumulative(fn):
    def convert(node):
        axis = node.static_ints(1, "axis")[0]
        return fn(node.input(0), axis, exclusive=bool(node.attr("exclusive", 0)),
                  reverse=bool(node.attr("reverse", 0)))
    return convert


CONVERTERS["CumSum"] = _cumulative(C.cumsum)
CONVERTERS["CumProd"] = _cumulative(C.cumprod)


@converter("DepthToSpace")
def _depth_to_space(node):
    return C.depth_to_space(node.input(0), node.attr("blocksize"), node.attr("mode", "DCR"))


@converter("SpaceToDepth")
def _space_to_depth(node):
    return C.space_to_depth(node.input(0), node.attr("blocksize"), node.attr("mode", "DCR"))


@converter("If")
def _if(node):
    condition = node.static(0, "condition")
    branch = node.attrs["then_branch" if bool(np.asarray(condition).reshape(-1)[0])
                        else "else_branch"]
    return node.importer.run_graph(branch, dict(node.env), node.source)


# -- attention -----------------------------------------------------------------------

def _heads(x, heads):
    """[B, S, heads * size] -> [B, heads, S, size]."""
    b, s, hidden = _shape(x)
    return D.transpose(D.reshape(x, (-1 if b is None else b, s, heads, hidden // heads)),
                       (0, 2, 1, 3))


@converter("Attention")
def _attention(node):
    q, k, v = _t(node.input(0)), _t(node.input(1)), _t(node.input(2))
    mask, past_key, past_value = node.input(3), node.input(4), node.input(5)
    nonpad = node.input(6)
    rank = _ndim(q)
    q_heads, kv_heads = node.attr("q_num_heads"), node.attr("kv_num_heads")
    if rank == 3:
        if q_heads is None or kv_heads is None:
            node.fail("3-D inputs need the q_num_heads and kv_num_heads attributes")
        q, k, v = _heads(q, q_heads), _heads(k, kv_heads), _heads(v, kv_heads)
    dtype = q.dtype
    scale = node.attr("scale")
    if scale is None:
        scale = 1.0 / np.sqrt(_shape(q)[3])
    root = np.asarray(np.sqrt(scale), dtype)
    if past_key is not None:
        k = D.concatenate([past_key, k], axis=2)
    if past_value is not None:
        v = D.concatenate([past_value, v], axis=2)
    present_key, present_value = k, v
    q_len, kv_len = _shape(q)[2], _shape(k)[2]
    bias = np.zeros((q_len, kv_len), dtype)
    neg_inf = np.asarray(-np.inf, dtype)
    zero = np.zeros((), dtype)
    if mask is not None:
        width = kv_len - _shape(mask)[-1]
        if width > 0:
            pad_value = False if _dtype(mask) == np.bool_ else -np.inf
            mask = D.pad(mask, [(0, 0)] * (_ndim(mask) - 1) + [(0, width)],
                         constant_values=pad_value)
        if _dtype(mask) == np.bool_:
            mask = D.where(mask, zero, neg_inf)
        bias = D.add(bias, mask)
    offset = _shape(past_key)[2] if past_key is not None else 0
    per_batch = nonpad is not None and past_key is None
    if per_batch:
        offset = D.reshape(D.subtract(D.astype(nonpad, np.int64), q_len), (-1, 1, 1, 1))
    i = np.arange(q_len, dtype=np.int64).reshape(q_len, 1)
    j = np.arange(kv_len, dtype=np.int64).reshape(1, kv_len)
    if node.attr("is_causal", 0):
        bias = D.add(bias, D.where(D.less_equal(j, D.add(i, offset)), zero, neg_inf))
    left, right = node.attr("left_window_size", -1), node.attr("right_window_size", -1)
    if left >= 0 or right >= 0:
        diff = D.subtract(D.add(i, offset), j)
        allowed = np.ones((), bool)
        if left >= 0:
            allowed = D.where(D.less_equal(diff, left), allowed, np.zeros((), bool))
        if right >= 0:
            allowed = D.where(D.less_equal(D.negative(diff), right), allowed,
                              np.zeros((), bool))
        bias = D.add(bias, D.where(allowed, zero, neg_inf))
    if nonpad is not None:
        valid = D.less(np.arange(kv_len, dtype=np.int64),
                       D.reshape(D.astype(nonpad, np.int64), (-1, 1, 1, 1)))
        bias = D.add(bias, D.where(valid, zero, neg_inf))
    heads_q, heads_k = _shape(q)[1], _shape(k)[1]
    if heads_q != heads_k and heads_q % heads_k == 0:
        reps = heads_q // heads_k

        def repeat(t):
            b, h, s, d = _shape(t)
            b = -1 if b is None else b
            return D.reshape(D.broadcast_to(D.expand_dims(t, 2), (b, h, reps, s, d)),
                             (b, h * reps, s, d))
        k, v = repeat(k), repeat(v)
    scores = D.matmul(D.multiply(q, root), D.transpose(D.multiply(k, root), (0, 1, 3, 2)))
    softcap = node.attr("softcap", 0.0)
    if softcap and softcap > 0:
        scores = D.multiply(D.tanh(D.divide(scores, softcap)), softcap)
    qk_output = scores
    mode = node.attr("qk_matmul_output_mode", 0)
    with_bias = D.add(scores, bias)
    if mode == 2:
        qk_output = with_bias
    precision = node.attr("softmax_precision")
    work = with_bias
    if precision is not None:
        work = D.astype(work, _np_dtype(node, precision, "softmax_precision"))
    # A row with every key masked softmaxes to zeros (the reference's guard).
    top = D.max(work, axis=-1, keepdims=True)
    masked_row = D.equal(top, np.asarray(-np.inf, work.dtype))
    shifted = D.subtract(work, D.where(masked_row, np.zeros((), work.dtype), top))
    e = D.exp(shifted)
    total = D.sum(e, axis=-1, keepdims=True)
    probs = D.divide(e, D.where(D.equal(total, np.zeros((), work.dtype)),
                                np.ones((), work.dtype), total))
    all_masked = D.equal(D.max(bias, axis=-1, keepdims=True), neg_inf)
    probs = D.where(all_masked, np.zeros((), work.dtype), probs)
    if mode == 3:
        qk_output = probs
    qk_output = D.astype(qk_output, dtype)
    y = D.matmul(D.astype(probs, dtype), v)
    if rank == 3:
        b, h, s, d = _shape(y)
        y = D.reshape(D.transpose(y, (0, 2, 1, 3)), (-1 if b is None else b, s, h * d))
    return [y, present_key, present_value, qk_output][:builtins.max(node.num_outputs, 1)]


# -- losses ----------------------------------------------------------------------------

def _nll(node, logp, target, weight):
    reduction = node.attr("reduction", "mean")
    ignore = node.attr("ignore_index")
    x = _t(logp)
    target = D.astype(_t(target), np.int64)
    classes = _shape(x)[1]
    safe = target
    ignored = None
    if ignore is not None:
        ignored = D.equal(target, np.array(ignore, np.int64))
        safe = D.where(ignored, np.zeros((), np.int64), target)
    safe = D.minimum(D.maximum(safe, 0), classes - 1)
    picked = D.squeeze(C.take_along_axis(x, D.expand_dims(safe, 1), 1), 1)
    loss = D.negative(picked)
    zero = np.zeros((), x.dtype)
    if ignored is not None:
        loss = D.where(ignored, zero, loss)
    gathered = None
    if weight is not None:
        gathered = D.take(weight, safe)
        if ignored is not None:
            gathered = D.where(ignored, zero, gathered)
    elif ignored is not None:
        gathered = D.where(ignored, zero, np.ones((), x.dtype))
    if weight is not None:
        loss = D.multiply(loss, gathered)
    if reduction == "none":
        return loss
    total = D.sum(loss)
    if reduction == "sum":
        return total
    if reduction != "mean":
        node.fail(f"reduction {reduction!r} is not none, sum or mean")
    if gathered is not None:
        return D.divide(total, D.sum(gathered))
    count = int(np.prod(_static_shape(node, loss), dtype=np.int64))
    return D.divide(total, float(count))


@converter("NegativeLogLikelihoodLoss")
def _nll_loss(node):
    return _nll(node, node.input(0), node.input(1), node.input(2))


@converter("SoftmaxCrossEntropyLoss")
def _softmax_cross_entropy(node):
    logp = D.log_softmax(node.input(0), axis=1)
    loss = _nll(node, logp, node.input(1), node.input(2))
    return [loss, logp][:builtins.max(node.num_outputs, 1)]


# -- resampling --------------------------------------------------------------------------

def _resample_matrix(node, size, axis_attrs, out_size=None):
    """The [out, in] matrix of a 1-D resampling of `size` elements, and the
    [out] indicator of positions that take the extrapolation value: the
    reference implementation applied to the unit vectors (resampling is
    linear in the input, whatever its mode)."""
    import onnx
    from onnx import helper
    from onnx.reference import ReferenceEvaluator
    attrs = {a.name: helper.get_attribute_value(a) for a in node.proto.attribute
             if a.name not in ("axes", "keep_aspect_ratio_policy")}
    attrs.update(axis_attrs)
    names = ["X", "roi", "scales", "sizes"] if node.op == "Resize" else ["X", "scales"]
    feeds = {}
    if node.op == "Resize":
        feeds["roi"] = axis_attrs.pop("_roi")
        attrs.pop("_roi", None)
        if out_size is not None:
            feeds["sizes"] = np.array([size, out_size], np.int64)
            names[2] = ""
        else:
            feeds["scales"] = axis_attrs.pop("_scales")
            names[3] = ""
        attrs.pop("_scales", None)
    else:
        if node.opset >= 9:
            feeds["scales"] = axis_attrs.pop("_scales")
            attrs.pop("_scales", None)
        else:
            attrs["scales"] = [float(s) for s in axis_attrs.pop("_scales")]
            attrs.pop("_scales", None)
            names = ["X"]
    inputs = [n for n in names if n == "X" or n in feeds]
    kept = {k: v for k, v in attrs.items() if not k.startswith("_")}

    def run(x, extrapolation):
        if node.op == "Resize":
            kept["extrapolation_value"] = extrapolation
        proto = helper.make_node(node.op, [n if n in feeds or n == "X" else ""
                                           for n in names], ["Y"], **kept)
        graph = helper.make_graph(
            [proto], "resample",
            [helper.make_tensor_value_info(n, onnx.TensorProto.UNDEFINED, None)
             for n in inputs],
            [helper.make_value_info("Y", onnx.TypeProto())])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", node.opset)])
        return ReferenceEvaluator(model).run(None, dict(feeds, X=x))[0]
    matrix = run(np.eye(size, dtype=np.float64), 0.0).T
    crop = node.attr("coordinate_transformation_mode") == "tf_crop_and_resize"
    outside = run(np.zeros((size, size), np.float64), 1.0)[0] \
        if node.op == "Resize" and crop else None
    return matrix, outside


def _apply_resample(x, axis, matrix, outside, extrapolation):
    moved_perm = [i for i in range(_ndim(x)) if i != axis] + [axis]
    back = list(np.argsort(moved_perm))
    moved = D.transpose(x, moved_perm) if axis != _ndim(x) - 1 else x
    work = moved if dtypes.is_float(moved.dtype) else D.astype(moved, np.float64)
    y = D.matmul(work, matrix.T.astype(work.dtype))
    if outside is not None and extrapolation != 0.0:
        y = D.add(y, (outside * extrapolation).astype(work.dtype))
    if not dtypes.is_float(moved.dtype):
        y = D.astype(y, moved.dtype)
    return D.transpose(y, back) if axis != _ndim(x) - 1 else y


@converter("Resize", "Upsample")
def _resize(node):
    x = _t(node.input(0))
    shape = _static_shape(node, x)
    ndim = len(shape)
    if node.attr("antialias", 0) and node.attr("mode", "nearest") == "nearest":
        pass
    if node.op == "Upsample":
        scales = node.static(1, "scales") if node.opset >= 9 else node.attr("scales")
        scales = [float(s) for s in np.asarray(scales).reshape(-1)]
        axes, sizes, roi = list(range(ndim)), None, None
    else:
        roi = node.static(1, "roi") if node.opset >= 11 else None
        scales = node.static(2, "scales") if node.opset >= 11 else node.static(1, "scales")
        sizes = node.static_ints(3, "sizes") if node.opset >= 11 else None
        axes = node.attr("axes")
        axes = list(range(ndim)) if axes is None else [a % ndim for a in axes]
        scales = None if scales is None or np.asarray(scales).size == 0 else \
            [float(s) for s in np.asarray(scales).reshape(-1)]
        sizes = None if not sizes else sizes
        roi = None if roi is None or np.asarray(roi).size == 0 else \
            [float(r) for r in np.asarray(roi).reshape(-1)]
    policy = node.attr("keep_aspect_ratio_policy", "stretch")
    if sizes is not None and policy != "stretch":
        ratios = [sizes[i] / shape[a] for i, a in enumerate(axes)]
        common = builtins.min(ratios) if policy == "not_larger" else builtins.max(ratios)
        scales = [common] * len(axes)
        sizes = [int(np.floor(shape[a] * common + 0.5)) for a in axes]
    extrapolation = node.attr("extrapolation_value", 0.0)
    y = x
    for i, axis in enumerate(axes):
        n = shape[axis]
        axis_attrs = {}
        if node.op == "Resize":
            r = [roi[i], roi[len(axes) + i]] if roi is not None else [0.0, 1.0]
            axis_attrs["_roi"] = np.array([0.0, r[0], 1.0, r[1]], np.float32)
        if sizes is not None and policy == "stretch":
            if sizes[i] == n and node.attr("coordinate_transformation_mode") != \
                    "tf_crop_and_resize":
                continue
            matrix, outside = _resample_matrix(node, n, axis_attrs, out_size=sizes[i])
        else:
            scale = scales[i]
            out = sizes[i] if sizes is not None else None
            if scale == 1.0 and node.attr("coordinate_transformation_mode") != \
                    "tf_crop_and_resize":
                continue
            axis_attrs["_scales"] = np.array([1.0, scale], np.float32)
            if node.op == "Resize" and out is not None:
                matrix, outside = _resample_matrix(node, n, axis_attrs, out_size=out)
            else:
                matrix, outside = _resample_matrix(node, n, axis_attrs)
        y = _apply_resample(y, axis, matrix, outside, extrapolation)
    return y


# -- products, top-k, einsum, scatter -----------------------------------------------------

CONVERTERS["ReduceProd"] = _reduce(lambda x, a, k: C.prod(x, axis=a, keepdims=k))


@converter("TopK")
def _top_k(node):
    x = _t(node.input(0))
    if node.opset >= 10:
        k = node.static_ints(1, "K")[0]
    else:
        k = node.attr("k")
    if k > 256:
        node.fail(f"K = {k}: dlc's TopK takes one pass per element (K <= 256)")
    values, indices = C.top_k(x, k, axis=node.attr("axis", -1),
                              largest=bool(node.attr("largest", 1)))
    return [values, indices]


@converter("Einsum")
def _einsum(node):
    return C.einsum(node.attr("equation"), *[v for v in node.values if v is not None])


def _scatter(node, data, positions, updates, reduction):
    """data (flattened) with `updates` written at the flat `positions`
    (same shape as updates): dlc.composite's one-hot scatter."""
    data = _t(data)
    _static_shape(node, data)
    try:
        return C._scatter_flat(data, positions, _t(updates), reduction)
    except ValueError as error:
        node.fail(str(error).split(": ", 1)[-1])


@converter("ScatterElements", "Scatter")
def _scatter_elements(node):
    data, indices, updates = _t(node.input(0)), _t(node.input(1)), node.input(2)
    _static_shape(node, data)
    _static_shape(node, indices, "indices")
    try:
        return C.scatter_elements(data, indices, _t(updates), node.attr("axis", 0),
                                  node.attr("reduction", "none"))
    except ValueError as error:
        node.fail(str(error).split(": ", 1)[-1])


@converter("ScatterND")
def _scatter_nd(node):
    data, indices, updates = _t(node.input(0)), _t(node.input(1)), node.input(2)
    shape = _static_shape(node, data)
    ishape = _static_shape(node, indices, "indices")
    depth = ishape[-1]
    indices = D.astype(indices, np.int64)
    dims = np.array(shape[:depth], np.int64)
    indices = D.where(D.less(indices, 0), D.add(indices, dims), indices)
    strides = np.cumprod((shape[1:] + (1,))[::-1])[::-1].astype(np.int64)
    start = D.sum(D.multiply(indices, strides[:depth]), axis=-1)
    elements = int(np.prod(shape[depth:], dtype=np.int64))
    positions = D.add(D.expand_dims(start, -1), np.arange(elements, dtype=np.int64))
    positions = D.reshape(positions, tuple(ishape[:-1]) + tuple(shape[depth:]))
    return _scatter(node, data, positions, updates, node.attr("reduction", "none"))


@converter("SwiGLU")
def _swiglu(node):
    a, b = _t(node.input(0)), node.input(1)
    alpha = node.attr("alpha", 1.0)
    gate = D.multiply(a, D.sigmoid(D.multiply(a, alpha) if alpha != 1.0 else a))
    return D.multiply(gate, b)


@converter("RotaryEmbedding")
def _rotary_embedding(node):
    x, cos, sin, positions = _t(node.input(0)), node.input(1), node.input(2), node.input(3)
    original = _static_shape(node, x)
    if len(original) == 4:
        x = D.transpose(x, (0, 2, 1, 3))
    else:
        heads = node.attr("num_heads")
        if not heads:
            node.fail("3-D input needs the num_heads attribute")
        b, s, hidden = original
        x = D.reshape(x, (b, s, heads, hidden // heads))
    head = _shape(x)[3]
    dim = node.attr("rotary_embedding_dim", 0) or head
    rotate, keep = x[..., :dim], x[..., dim:]
    if positions is not None:
        cos, sin = D.take(cos, positions, axis=0), D.take(sin, positions, axis=0)
    cos, sin = D.expand_dims(cos, 2), D.expand_dims(sin, 2)
    if node.attr("interleaved", 0):
        x1, x2 = rotate[..., 0::2], rotate[..., 1::2]
    else:
        x1, x2 = rotate[..., :dim // 2], rotate[..., dim // 2:]
    real = D.subtract(D.multiply(cos, x1), D.multiply(sin, x2))
    imag = D.add(D.multiply(sin, x1), D.multiply(cos, x2))
    if node.attr("interleaved", 0):
        rotated = D.reshape(D.concatenate([D.expand_dims(real, -1), D.expand_dims(imag, -1)],
                                          axis=-1), _shape(rotate))
    else:
        rotated = D.concatenate([real, imag], axis=-1)
    y = D.concatenate([rotated, keep], axis=-1) if dim < head else rotated
    if len(original) == 3:
        return D.reshape(y, original)
    return D.transpose(y, (0, 2, 1, 3))


@converter("CenterCropPad")
def _center_crop_pad(node):
    x = _t(node.input(0))
    shape = _static_shape(node, x)
    target = node.static_ints(1, "shape")
    axes = node.attr("axes")
    axes = list(range(len(shape))) if axes is None else [a % len(shape) for a in axes]
    key = [slice(None)] * len(shape)
    widths = [(0, 0)] * len(shape)
    for size, axis in zip(target, axes):
        n = shape[axis]
        if size < n:
            start = (n - size) // 2
            key[axis] = slice(start, start + size)
        elif size > n:
            before = (size - n) // 2
            widths[axis] = (before, size - n - before)
    return D.pad(x[tuple(key)], widths)


# -- recurrent networks (unrolled over the static sequence length) -------------------------

def _rnn_activation(node, name, alpha, beta):
    name = name.decode() if isinstance(name, bytes) else name
    table = {
        "Tanh": D.tanh, "Sigmoid": D.sigmoid, "Relu": D.relu, "Softsign": C.softsign,
        "Softplus": C.softplus,
        "Affine": lambda x: D.add(D.multiply(x, alpha), beta),
        "LeakyRelu": lambda x: D.leaky_relu(x, alpha),
        "ThresholdedRelu": lambda x: D.where(D.greater(x, alpha), x, np.zeros((), x.dtype)),
        "ScaledTanh": lambda x: D.multiply(D.tanh(D.multiply(x, beta)), alpha),
        "HardSigmoid": lambda x: C.hard_sigmoid(x, alpha, beta),
        "Elu": lambda x: C.elu(x, alpha),
    }
    if name not in table:
        node.fail(f"activation {name!r} is not supported")
    return table[name]


def _recurrent(node, gates, defaults, cell):
    """The common frame of RNN, GRU and LSTM: layout, directions,
    activations, initial states, sequence lengths; `cell(x_t, states, w, r,
    b, p, f, g, h, clip)` computes one time step of one direction and
    returns the new states (the hidden state first)."""
    x, w, r = _t(node.input(0)), _t(node.input(1)), _t(node.input(2))
    b, lens, h0 = node.input(3), node.input(4), node.input(5)
    layout = node.attr("layout", 0)
    if layout:
        x = D.transpose(x, (1, 0, 2))
    seq, batch, _ = _static_shape(node, x)
    hidden = node.attr("hidden_size") or _shape(r)[-1]
    direction = node.attr("direction", "forward")
    directions = ["forward", "reverse"] if direction == "bidirectional" else [direction]
    names = list(node.attr("activations", []) or [])
    per_direction = len(defaults)
    if not names:
        names = defaults * len(directions)
    alphas = list(node.attr("activation_alpha", []) or [])
    betas = list(node.attr("activation_beta", []) or [])
    default_alpha = {"LeakyRelu": 0.01, "HardSigmoid": 0.2, "Elu": 1.0, "ThresholdedRelu": 1.0,
                     "ScaledTanh": 1.0, "Affine": 1.0}
    default_beta = {"HardSigmoid": 0.5, "ScaledTanh": 1.0, "Affine": 0.0}
    activations = []
    for i, name in enumerate(names):
        text = name.decode() if isinstance(name, bytes) else name
        alpha = alphas[i] if i < len(alphas) else default_alpha.get(text, 0.0)
        beta = betas[i] if i < len(betas) else default_beta.get(text, 0.0)
        activations.append(_rnn_activation(node, text, alpha, beta))
    clip = node.attr("clip")
    dtype = x.dtype
    zero_state = np.zeros((batch, hidden), dtype)
    if lens is not None:
        lens = D.reshape(D.astype(_t(lens), np.int64), (batch, 1))
    extra_states = node.extra_states
    outputs, finals = [], [[] for _ in range(1 + len(extra_states))]
    for d, name in enumerate(directions):
        wd, rd = w[d], r[d]
        bd = b[d] if b is not None else None
        p = node.input(7)[d] if node.op == "LSTM" and node.has(7) else None
        states = [h0[d] if h0 is not None else zero_state]
        for index in extra_states:
            init = node.input(index)
            states.append(init[d] if init is not None else zero_state)
        fns = activations[d * per_direction:(d + 1) * per_direction]
        steps = range(seq - 1, -1, -1) if name == "reverse" else range(seq)
        if name == "reverse" and lens is not None:
            node.fail("reverse direction with sequence_lens is not supported")
        ys = [None] * seq
        for t in steps:
            new = cell(x[t], states, wd, rd, bd, p, fns, clip, hidden)
            if lens is not None:
                alive = D.less(np.array(t, np.int64), lens)
                new = [D.where(alive, n, s) for n, s in zip(new, states)]
                ys[t] = D.where(alive, new[0], np.zeros((), dtype))
            else:
                ys[t] = new[0]
            states = new
        outputs.append(D.concatenate([D.expand_dims(y, 0) for y in ys], axis=0))
        for i, s in enumerate(states):
            finals[i].append(D.expand_dims(s, 0))
    y = D.concatenate([D.expand_dims(o, 1) for o in outputs], axis=1)
    results = [y] + [D.concatenate(f, axis=0) for f in finals]
    if layout:
        results[0] = D.transpose(y, (2, 0, 1, 3))
        results[1:] = [D.transpose(s, (1, 0, 2)) for s in results[1:]]
    return results[:builtins.max(node.num_outputs, 1)]


def _gates(x, h, w, r, b, count, hidden):
    """x @ W^T + h @ R^T (+ both biases), split into `count` gates."""
    z = D.add(D.matmul(x, D.transpose(w)), D.matmul(h, D.transpose(r)))
    if b is not None:
        z = D.add(z, D.add(b[:count * hidden], b[count * hidden:]))
    return [z[:, i * hidden:(i + 1) * hidden] for i in range(count)]


def _clipped(z, clip):
    return z if clip is None else D.minimum(D.maximum(z, -clip), clip)


@converter("RNN")
def _rnn(node):
    node.extra_states = []

    def cell(x, states, w, r, b, p, fns, clip, hidden):
        (z,) = _gates(x, states[0], w, r, b, 1, hidden)
        return [fns[0](_clipped(z, clip))]
    return _recurrent(node, 1, ["Tanh"], cell)


@converter("GRU")
def _gru(node):
    node.extra_states = []
    before_reset = node.attr("linear_before_reset", 0)

    def cell(x, states, w, r, b, p, fns, clip, hidden):
        h = states[0]
        wz, wr, wh = w[:hidden], w[hidden:2 * hidden], w[2 * hidden:]
        rz, rr, rh = r[:hidden], r[hidden:2 * hidden], r[2 * hidden:]
        bw = b[:3 * hidden] if b is not None else None
        br = b[3 * hidden:] if b is not None else None
        zr = D.add(D.matmul(x, D.transpose(w[:2 * hidden])),
                   D.matmul(h, D.transpose(r[:2 * hidden])))
        if b is not None:
            zr = D.add(zr, D.add(bw[:2 * hidden], br[:2 * hidden]))
        z = fns[0](_clipped(zr[:, :hidden], clip))
        reset = fns[0](_clipped(zr[:, hidden:], clip))
        xh = D.matmul(x, D.transpose(wh))
        if before_reset:
            hh = D.matmul(h, D.transpose(rh))
            if b is not None:
                hh = D.add(hh, br[2 * hidden:])
            pre = D.add(xh, D.multiply(reset, hh))
        else:
            pre = D.add(xh, D.matmul(D.multiply(reset, h), D.transpose(rh)))
            if b is not None:
                pre = D.add(pre, br[2 * hidden:])
        if b is not None:
            pre = D.add(pre, bw[2 * hidden:])
        candidate = fns[1](_clipped(pre, clip))
        del wz, wr, rz, rr
        one = np.ones((), x.dtype)
        return [D.add(D.multiply(D.subtract(one, z), candidate), D.multiply(z, h))]
    return _recurrent(node, 3, ["Sigmoid", "Tanh"], cell)


@converter("LSTM")
def _lstm(node):
    node.extra_states = [6]
    if node.attr("input_forget", 0):
        node.fail("input_forget = 1 is not supported")

    def cell(x, states, w, r, b, p, fns, clip, hidden):
        h, c = states
        i, o, f, g = _gates(x, h, w, r, b, 4, hidden)
        if p is not None:
            i = D.add(i, D.multiply(p[:hidden], c))
            f = D.add(f, D.multiply(p[2 * hidden:], c))
        i, f = fns[0](_clipped(i, clip)), fns[0](_clipped(f, clip))
        g = fns[1](_clipped(g, clip))
        c_new = D.add(D.multiply(f, c), D.multiply(i, g))
        if p is not None:
            o = D.add(o, D.multiply(p[hidden:2 * hidden], c_new))
        o = fns[0](_clipped(o, clip))
        return [D.multiply(o, fns[2](c_new)), c_new]
    return _recurrent(node, 4, ["Sigmoid", "Tanh", "Tanh"], cell)


# -- sequences of a batch, unpooling, bit shifts ------------------------------------------

@converter("ReverseSequence")
def _reverse_sequence(node):
    x, lens = _t(node.input(0)), D.astype(_t(node.input(1)), np.int64)
    batch_axis, time_axis = node.attr("batch_axis", 1), node.attr("time_axis", 0)
    shape = _static_shape(node, x)
    steps = shape[time_axis]
    t = np.arange(steps, dtype=np.int64).reshape(
        [steps if i == time_axis else 1 for i in range(len(shape))])
    n = D.reshape(lens, [shape[batch_axis] if i == batch_axis else 1
                         for i in range(len(shape))])
    source = D.where(D.less(t, n), D.subtract(D.subtract(n, 1), t), t)
    return C.take_along_axis(x, D.broadcast_to(source, shape), time_axis)


@converter("MaxUnpool")
def _max_unpool(node):
    x, indices = _t(node.input(0)), _t(node.input(1))
    shape = _static_shape(node, x)
    kernel = list(node.attr("kernel_shape"))
    rank = len(kernel)
    strides = list(node.attr("strides", [1] * rank))
    pads = list(node.attr("pads", [0] * (2 * rank)))
    inferred = list(shape[:2]) + [(shape[2 + d] - 1) * strides[d] - (pads[d] + pads[rank + d])
                                  + kernel[d] for d in range(rank)]
    zeros = np.zeros(inferred, x.dtype)
    y = _scatter(node, zeros, D.astype(indices, np.int64), x, "none")
    target = node.static_ints(2, "output_shape")
    if target is not None and list(target) != inferred:
        y = D.pad(y, [(0, t - s) for t, s in zip(target, inferred)])
    return y


@converter("BitShift")
def _bit_shift(node):
    x, y = _t(node.input(0)), _t(node.input(1))
    if not np.issubdtype(x.dtype, np.integer):
        node.fail(f"dtype {x.dtype} is not an integer type")
    return bit_shift(x, y, node.attr("direction") == "LEFT")


# -- training operators of ai.onnx.preview.training -----------------------------------------

def _training_groups(node, per):
    values = node.values
    count = (len(values) - 2) // per
    return values[0], values[1], [[values[2 + k * count + i] for k in range(per)]
                                  for i in range(count)]


@converter("ai.onnx.preview.training.Adagrad")
def _adagrad(node):
    r, t, groups = _training_groups(node, 3)
    decay, eps = node.attr("decay_factor", 0.0), node.attr("epsilon", 0.0)
    norm = node.attr("norm_coefficient", 0.0)
    xs, hs = [], []
    for x, g, h in groups:
        x = _t(x)
        rate = D.divide(D.astype(_t(r), x.dtype),
                        D.add(D.multiply(D.astype(_t(t), x.dtype), decay), 1.0))
        g = D.add(D.multiply(x, norm), g)
        h_new = D.add(h, D.multiply(g, g))
        xs.append(D.subtract(x, D.divide(D.multiply(rate, g), D.add(D.sqrt(h_new), eps))))
        hs.append(h_new)
    return xs + hs


@converter("ai.onnx.preview.training.Adam")
def _adam(node):
    r, t, groups = _training_groups(node, 4)
    alpha, beta = node.attr("alpha", 0.9), node.attr("beta", 0.999)
    eps = node.attr("epsilon", 0.0)
    norm, post = node.attr("norm_coefficient", 0.0), node.attr("norm_coefficient_post", 0.0)
    xs, vs, hs = [], [], []
    for x, g, v, h in groups:
        x = _t(x)
        g = D.add(D.multiply(x, norm), g)
        v_new = D.add(D.multiply(v, alpha), D.multiply(g, 1.0 - alpha))
        h_new = D.add(D.multiply(h, beta), D.multiply(D.multiply(g, g), 1.0 - beta))
        steps = D.astype(_t(t), x.dtype)
        rate = D.astype(_t(r), x.dtype)
        corrected = D.divide(D.multiply(rate, D.sqrt(D.subtract(1.0, D.power(
            np.array(beta, x.dtype), steps)))), D.subtract(1.0, D.power(
                np.array(alpha, x.dtype), steps)))
        rate = D.where(D.greater(_t(t), 0), corrected, rate)
        x_new = D.subtract(x, D.multiply(rate, D.divide(v_new, D.add(D.sqrt(h_new), eps))))
        xs.append(D.multiply(x_new, 1.0 - post))
        vs.append(v_new)
        hs.append(h_new)
    return xs + vs + hs


@converter("ai.onnx.preview.training.Momentum")
def _momentum(node):
    r, t, groups = _training_groups(node, 3)
    alpha, beta = node.attr("alpha"), node.attr("beta")
    norm, mode = node.attr("norm_coefficient", 0.0), node.attr("mode", "standard")
    xs, vs = [], []
    for x, g, v in groups:
        x = _t(x)
        g = D.add(D.multiply(x, norm), g)
        coefficient = D.where(D.greater(_t(t), 0), np.array(beta, x.dtype),
                              np.ones((), x.dtype))
        v_new = D.add(D.multiply(v, alpha), D.multiply(coefficient, g))
        rate = D.astype(_t(r), x.dtype)
        step = v_new if mode == "standard" else D.add(g, D.multiply(v_new, alpha))
        xs.append(D.subtract(x, D.multiply(rate, step)))
        vs.append(v_new)
    return xs + vs


# -- control flow (unrolled) ----------------------------------------------------------------

#: the most iterations a Loop or Scan is unrolled into
MAX_UNROLL = 4096


def _run_body(node, graph, inputs):
    env = dict(node.env)
    for value_info, value in zip(graph.input, inputs):
        env[value_info.name] = value
    return node.importer.run_graph(graph, env, node.source)


def _stack(node, pieces, axis=0, what="output"):
    if not pieces:
        node.fail(f"a scan {what} of zero iterations has no shape to take")
    if builtins.all(isinstance(p, np.ndarray) for p in pieces):
        return np.stack(pieces, axis=axis)
    return D.concatenate([D.expand_dims(_t(p), axis) for p in pieces], axis=axis)


@converter("Loop")
def _loop(node):
    trip = node.static(0, "trip count M")
    trip = None if trip is None else int(np.asarray(trip).reshape(-1)[0])
    cond = node.static(1, "condition")
    cond = True if cond is None else bool(np.asarray(cond).reshape(-1)[0])
    body = node.attrs["body"]
    carried = list(node.values[2:])
    scans = []
    iteration = 0
    while cond and (trip is None or iteration < trip):
        if iteration >= MAX_UNROLL:
            node.fail(f"the loop runs more than {MAX_UNROLL} iterations, more than dlc "
                      f"unrolls")
        outputs = _run_body(node, body, [np.array(iteration, np.int64),
                                         np.array(cond, bool)] + carried)
        cond_out = outputs[0]
        if isinstance(cond_out, Tensor):
            node.fail("the loop's condition depends on the input data; dlc unrolls loops "
                      "whose trip count is known at import")
        cond = bool(np.asarray(cond_out).reshape(-1)[0])
        carried = list(outputs[1:1 + len(carried)])
        scans.append(outputs[1 + len(carried):])
        iteration += 1
    count = len(body.output) - 1 - len(carried)
    stacked = [_stack(node, [s[i] for s in scans]) for i in range(count)]
    return carried + stacked


@converter("Scan")
def _scan(node):
    if node.opset < 9:
        node.fail("Scan of opsets 8 and older (with a batch axis and sequence_lens) is "
                  "not supported")
    body = node.attrs["body"]
    n_scan = node.attr("num_scan_inputs")
    values = node.values
    states = list(values[:len(values) - n_scan])
    sequences = [_t(v) for v in values[len(values) - n_scan:]]
    in_axes = list(node.attr("scan_input_axes", [0] * n_scan))
    in_dirs = list(node.attr("scan_input_directions", [0] * n_scan))
    n_out = len(body.output) - len(states)
    out_axes = list(node.attr("scan_output_axes", [0] * n_out))
    out_dirs = list(node.attr("scan_output_directions", [0] * n_out))
    lengths = {_static_shape(node, s)[a % _ndim(s)] for s, a in zip(sequences, in_axes)}
    if len(lengths) != 1:
        node.fail("the scan inputs have different sequence lengths")
    length = lengths.pop()
    if length > MAX_UNROLL:
        node.fail(f"the scan has {length} steps, more than dlc unrolls ({MAX_UNROLL})")
    collected = [[] for _ in range(n_out)]
    for t in range(length):
        slices = []
        for s, a, direction in zip(sequences, in_axes, in_dirs):
            a = a % _ndim(s)
            index = length - 1 - t if direction else t
            key = tuple(index if i == a else slice(None) for i in range(_ndim(s)))
            slices.append(s[key])
        outputs = _run_body(node, body, states + slices)
        states = list(outputs[:len(states)])
        for i in range(n_out):
            collected[i].append(outputs[len(states) + i])
    scans = []
    for i in range(n_out):
        pieces = collected[i][::-1] if out_dirs[i] else collected[i]
        rank = _ndim(pieces[0]) + 1 if pieces else 1
        scans.append(_stack(node, pieces, axis=out_axes[i] % rank))
    return states + scans


# -- trigonometry, rounding, logical and bitwise operators, remainders ------------------

for _name, _fn in [("Sin", "sin"), ("Cos", "cos"), ("Tan", "tan"), ("Asin", "arcsin"),
                   ("Acos", "arccos"), ("Atan", "arctan"), ("Sinh", "sinh"),
                   ("Cosh", "cosh"), ("Asinh", "arcsinh"), ("Acosh", "arccosh"),
                   ("Atanh", "arctanh"), ("Floor", "floor"), ("Ceil", "ceil"),
                   ("Round", "round"), ("BitwiseNot", "bitwise_not")]:
    CONVERTERS[_name] = _unary(getattr(D, _fn))

for _name, _fn in [("BitwiseAnd", D.bitwise_and), ("BitwiseOr", D.bitwise_or),
                   ("BitwiseXor", D.bitwise_xor)]:
    CONVERTERS[_name] = _binary(_fn)


@converter("Mod")
def _mod(node):
    x, y = node.input(0), node.input(1)
    if node.attr("fmod", 0):
        return D.fmod(x, y)
    return D.remainder(x, y)


def _per_axis(node, param, x, axis, block):
    """A scale or zero point broadcastable against x: per tensor, per axis,
    or per block of `block` elements along the axis."""
    if param is None or _ndim(param) == 0:
        return param
    axis = axis % _ndim(x)
    param = _t(param)
    if block:
        shape = _static_shape(node, param)
        expanded = D.expand_dims(param, axis + 1)
        target = list(shape[:axis + 1]) + [block] + list(shape[axis + 1:])
        param = D.reshape(D.broadcast_to(expanded, tuple(target)),
                          tuple(shape[:axis]) + (shape[axis] * block,) + tuple(shape[axis + 1:]))
        size = _shape(x)[axis]
        if _shape(param)[axis] != size:
            key = tuple(slice(0, size) if i == axis else slice(None) for i in range(_ndim(x)))
            param = param[key]
        return param
    if _ndim(param) == 1:
        return D.reshape(param, tuple(-1 if i == axis else 1 for i in range(_ndim(x))))
    return param


def _as_scalar_if_single(value):
    """A [1]-shaped scale or zero point (as quantizers write per-tensor ones)
    as a scalar."""
    if value is not None and _ndim(value) == 1 and _shape(value)[0] == 1:
        return D.reshape(_t(value), ())
    return value


def _quant_op_applies(x, scale, zero, block, int_dtype):
    """Whether dl.quantize / dl.dequantize express this node: per tensor or
    per axis (no blocks), of a quantized dtype, the zero point shaped as the
    scale."""
    return (not block and np.dtype(int_dtype) in D.QUANTIZED_DTYPES and _ndim(scale) <= 1
            and (zero is None or _shape(zero) == _shape(scale)) and
            (_ndim(scale) == 0 or _ndim(x) > 0))


@converter("DequantizeLinear")
def _dequantize(node):
    x, scale, zero = _t(node.input(0)), node.input(1), node.input(2)
    axis, block = node.attr("axis", 1), node.attr("block_size", 0)
    out = _np_dtype(node, node.attr("output_dtype"), "output_dtype") \
        if node.attr("output_dtype") else _dtype(scale)
    scale, zero = _as_scalar_if_single(scale), _as_scalar_if_single(zero)
    if _quant_op_applies(x, scale, zero, block, x.dtype):
        zero = np.zeros((), x.dtype) if zero is None else zero
        y = D.dequantize_linear(x, _t(scale), _t(zero), axis=axis % max(_ndim(x), 1)
                                if _ndim(scale) == 1 else None)
        y = y if y.dtype == out else D.astype(y, out)
        given_scale, given_zero = node.input(1), node.input(2)
        if isinstance(given_scale, np.ndarray) and given_scale.size == 1 and (
                given_zero is None or isinstance(given_zero, np.ndarray)):
            remember_dequantized(node, y, x, given_scale.reshape(()),
                                 np.zeros((), x.dtype) if given_zero is None
                                 else given_zero.reshape(()), None)
        return y
    scale = _per_axis(node, scale, x, axis, block)
    zero = _per_axis(node, zero, x, axis, block)
    wide = np.float32 if out != np.float64 else np.float64
    value = D.astype(x, wide)
    if zero is not None:
        value = D.subtract(value, D.astype(_t(zero), wide))
    return D.astype(D.multiply(value, D.astype(_t(scale), wide)), out)


@converter("QuantizeLinear")
def _quantize(node):
    x, scale, zero = _t(node.input(0)), node.input(1), node.input(2)
    axis, block = node.attr("axis", 1), node.attr("block_size", 0)
    if node.attr("output_dtype"):
        out = _np_dtype(node, node.attr("output_dtype"), "output_dtype")
    elif zero is not None:
        out = _dtype(zero)
    else:
        out = np.dtype(np.uint8)
    if not np.issubdtype(out, np.integer) or np.dtype(out).itemsize > 4:
        node.fail(f"quantizing to {out} is not supported "
                  "(int8, uint8, int16, uint16, int32, uint32 are)")
    scale, zero = _as_scalar_if_single(scale), _as_scalar_if_single(zero)
    if _quant_op_applies(x, scale, zero, block, out):
        scale = _t(scale)
        if scale.dtype != x.dtype:  # numpy's promotion of x / scale
            x, scale = D.astype(x, np.float32), D.astype(scale, np.float32)
        zero = np.zeros((), out) if zero is None else zero
        return D.quantize_linear(x, scale, _t(zero), axis=axis % max(_ndim(x), 1)
                                 if _ndim(scale) == 1 else None, dtype=out)
    scale = _per_axis(node, scale, x, axis, block)
    zero = _per_axis(node, zero, x, axis, block)
    wide = np.float64 if x.dtype == np.float64 else np.float32
    value = D.round(D.divide(D.astype(x, wide), D.astype(_t(scale), wide)))
    if zero is not None:
        value = D.add(value, D.astype(_t(zero), wide))
    info = np.iinfo(out)
    value = D.minimum(D.maximum(value, float(info.min)), float(info.max))
    return D.astype(value, out)


# -- integer (quantized) operators ------------------------------------------------------
# Computed exactly as the ONNX reference does: integer products summed in int32
# (convolutions in float64, whose 53-bit mantissa holds every such sum), and
# requantization in float64 (numpy's promotion of int32 by a float scale).

def _minus_zero_point(node, x, zero, axis):
    """x as int32 minus its zero point (scalar, or 1-D along `axis`)."""
    x = D.astype(_t(x), np.int32)
    if zero is None:
        return x
    if _ndim(zero) == 1 and _ndim(x) > 1:
        zero = _per_axis(node, zero, x, axis, 0)
    elif _ndim(zero) > 1:
        node.fail(f"a zero point of rank {_ndim(zero)} is not supported "
                  "(a scalar or one per row/column/channel is)")
    return D.subtract(x, D.astype(_t(zero), np.int32))


def _is_zero(value):
    return value is None or (isinstance(value, np.ndarray) and not value.any())


def _integer_matmul(node, a, a_zero, b, b_zero):
    """Σ (a - a_zero)(b - b_zero) in int32. ONNX: A's zero point per row (axis
    -2), B's per column (axis -1). 8-bit operands multiply as they are
    (dl.matmul_integer) and the zero points come in as corrections:
    a@b - a_zero·colsum(b) - b_zero·rowsum(a) + K·a_zero·b_zero."""
    a, b = _t(a), _t(b)
    eight_bits = (np.dtype(np.int8), np.dtype(np.uint8))
    if a.dtype not in eight_bits or b.dtype not in eight_bits or _ndim(a) < 2 or \
            _ndim(b) < 2:
        return D.matmul(_minus_zero_point(node, a, a_zero, -2),
                        _minus_zero_point(node, b, b_zero, -1))
    acc = D.matmul_integer(a, b)

    def zero_of(zero, axis, x):
        if _ndim(zero) == 1:
            zero = _per_axis(node, zero, x, axis % _ndim(x), 0)
        elif _ndim(zero) > 1:
            node.fail(f"a zero point of rank {_ndim(zero)} is not supported "
                      "(a scalar or one per row/column is)")
        return D.astype(_t(zero), np.int32)
    if not _is_zero(a_zero):
        column_sums = D.sum(D.astype(b, np.int32), axis=-2, keepdims=True)
        acc = D.subtract(acc, D.multiply(zero_of(a_zero, -2, a), column_sums))
    if not _is_zero(b_zero):
        row_sums = D.sum(D.astype(a, np.int32), axis=-1, keepdims=True)
        acc = D.subtract(acc, D.multiply(zero_of(b_zero, -1, b), row_sums))
    if not _is_zero(a_zero) and not _is_zero(b_zero):
        k = np.array(_shape(a)[-1], np.int32)
        acc = D.add(acc, D.multiply(D.multiply(zero_of(a_zero, -2, a), zero_of(b_zero, -1, b)),
                                    k))
    return acc


def _integer_conv(node, x, x_zero, w, w_zero):
    """The int32 convolution of zero-point-shifted integers (a Conv node's
    attributes): an 8-bit product (im2col + dl.matmul_integer) where the
    weight is a constant int8 of zero point 0 and x's zero point is known,
    else through float64."""
    if isinstance(w, np.ndarray) and _is_zero(w_zero) and (
            x_zero is None or isinstance(x_zero, np.ndarray) and np.size(x_zero) == 1):
        geometry = _integer_conv_geometry(node, x, w) if node.attr("group", 1) == 1 else None
        acc = None if geometry is None else integer.conv2d_sums(
            _t(x), 0 if x_zero is None else int(np.asarray(x_zero).reshape(())), w, *geometry)
        if acc is not None:
            return acc
    x = _minus_zero_point(node, x, x_zero, 1)
    w = _minus_zero_point(node, w, w_zero, 0)
    y = _conv_of(node, D.astype(x, np.float64), D.astype(w, np.float64), None)
    return D.astype(y, np.int32)


def _requantize(node, acc, scale, zero, out_dtype, channel_axis=None):
    """round(acc * scale + zero) saturated to out_dtype, in float64."""
    value = D.multiply(D.astype(acc, np.float64), D.astype(scale, np.float64))
    if zero is not None:
        value = D.add(value, D.astype(_t(zero), np.float64))
    info = np.iinfo(out_dtype)
    value = D.minimum(D.maximum(D.round(value), float(info.min)), float(info.max))
    return D.astype(value, out_dtype)


def _scale_product(node, a_scale, b_scale, y_scale, b_axis, rank):
    """a_scale * b_scale / y_scale in the scales' dtype, b's per-axis scale
    (if any) broadcast along `b_axis` of a rank-`rank` result."""
    def per_tensor(scale):  # [1] (as ONNX's tests write it) is a scalar
        scale = _t(scale)
        if _ndim(scale) > 0 and builtins.all(d == 1 for d in _shape(scale)):
            scale = D.reshape(scale, ())
        return scale
    a_scale, y_scale, b_scale = per_tensor(a_scale), per_tensor(y_scale), per_tensor(b_scale)
    if _ndim(b_scale) == 1 and rank > 1:
        b_scale = D.reshape(b_scale, tuple(-1 if i == b_axis % rank else 1
                                           for i in range(rank)))
    if _ndim(a_scale) > 0 or _ndim(y_scale) > 0:
        node.fail("per-axis input or output scales are not supported "
                  "(scalars are; the weight's may be per channel)")
    return D.divide(D.multiply(a_scale, b_scale), y_scale)


def _quantized_dtype(node, zero, like):
    return _dtype(zero) if zero is not None else _dtype(like)


@converter("MatMulInteger")
def _matmul_integer(node):
    return _integer_matmul(node, node.input(0), node.input(2), node.input(1), node.input(3))


@converter("ConvInteger")
def _conv_integer(node):
    return _integer_conv(node, node.input(0), node.input(2), node.input(1), node.input(3))


@converter("QLinearMatMul")
def _qlinear_matmul(node):
    a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = (
        node.input(i) for i in range(8))
    acc = _integer_matmul(node, a, a_zero, b, b_zero)
    scale = _scale_product(node, a_scale, b_scale, y_scale, -1, _ndim(acc))
    return _requantize(node, acc, scale, y_zero, _quantized_dtype(node, y_zero, a))


@converter("QLinearConv")
def _qlinear_conv(node):
    x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero = (
        node.input(i) for i in range(8))
    bias = node.input(8)
    acc = _integer_conv(node, x, x_zero, w, w_zero)
    if bias is not None:
        acc = D.add(acc, D.reshape(D.astype(_t(bias), np.int32), (-1, 1, 1)
                                   if _ndim(acc) == 4 else (-1, 1)))
    scale = _scale_product(node, x_scale, w_scale, y_scale, 1, _ndim(acc))
    out = _dtype(y_zero) if y_zero is not None else _dtype(x)
    return _requantize(node, acc, scale, y_zero, out)


# -- QDQ fusion --------------------------------------------------------------------------
# onnxruntime's quantize_static writes QDQ models: QuantizeLinear -> DequantizeLinear
# pairs on activations and DequantizeLinear of int8 constants on weights, around float
# Conv/MatMul/Gemm. As onnxruntime's own QDQ transformers do when a session loads such a
# model, the importer computes those ops in integers: the activation stays the 8-bit
# tensor its DequantizeLinear read, the weight stays int8, the product is summed in
# int32 (dl.matmul_integer: the VNNI micro-kernel where the target has one), and one
# float multiply by activation scale x weight scale (per output channel) and the bias
# follow. The result equals the float computation on the dequantized values up to
# float rounding (the integer sum is exact). Grouped or 1-D convolutions, per-axis
# activation scales, weights with zero points and dynamic spatial sizes keep the
# float computation.

def remember_dequantized(node, value, q, scale, zero, axis):
    """Records that `value` is DequantizeLinear(q, scale, zero, axis): `q`
    a traced tensor (an activation) or a constant array (a weight)."""
    table = node.importer.__dict__.setdefault("dequantized", {})
    table[id(value)] = (value, q, scale, zero, axis)


def _dequantized(node, value):
    """(q, scale, zero, axis) if `value` is a recorded DequantizeLinear."""
    entry = node.importer.__dict__.get("dequantized", {}).get(id(value))
    if entry is None or entry[0] is not value:
        return None
    return entry[1:]


def _qdq_operands(node, x, w, weight_axis):
    """dlc.quant.integer's operands of x (a recorded per-tensor dequantized
    activation) and w (a recorded dequantized int8 constant), or None."""
    xo, wo = _dequantized(node, x), _dequantized(node, w)
    if xo is None or wo is None:
        return None
    return integer.qdq_operands(xo, wo, weight_axis)


def _qdq_matmul(node, x, w, transposed):
    """MatMul/Gemm of a dequantized activation by a dequantized int8 weight
    [K, N] ([N, K] when `transposed`), in integers; None if not one."""
    if not isinstance(w, np.ndarray) or w.ndim != 2 or not isinstance(x, Tensor) or \
            x.ndim < 2:
        return None
    operands = _qdq_operands(node, x, w, 0 if transposed else 1)
    if operands is None:
        return None
    return integer.matmul(*operands, dtype=x.dtype, transposed=transposed)


def _qdq_conv(node):
    """Conv of a dequantized activation by a dequantized int8 weight, in
    integers (im2col + dl.matmul_integer); None if not one."""
    x, w, b = node.input(0), node.input(1), node.input(2)
    if node.attr("group", 1) != 1 or not isinstance(x, Tensor) or x.ndim != 4 or \
            not isinstance(w, np.ndarray) or w.ndim != 4:
        return None
    operands = _qdq_operands(node, x, w, 0)
    if operands is None:
        return None
    geometry = _integer_conv_geometry(node, operands[0], w)
    if geometry is None:
        return None
    y = integer.conv2d(*operands, *geometry, dtype=x.dtype)
    if y is not None and b is not None:
        y = D.add(y, D.reshape(D.astype(_t(b), x.dtype), (-1, 1, 1)))
    return y


def _integer_conv_geometry(node, x, w):
    """(strides, pads [top, left, bottom, right], dilations) of a 2-D Conv
    node on x of static spatial size, or None."""
    if _ndim(x) != 4 or None in _shape(x)[2:] or np.ndim(w) != 4:
        return None
    kernel = list(np.shape(w)[2:])
    strides, dilations, pads = _spatial_attrs(node, 2, kernel)
    pads = _auto_pads(node, list(_shape(x)[2:]), kernel, strides, dilations, pads)
    return list(strides), list(pads), list(dilations)


# -- grid sampling ----------------------------------------------------------------------

def _reflect(x, low, high):
    """x reflected by the borders [low, high] until inside (as the reference)."""
    span = high - low
    if span <= 0:
        return D.add(D.multiply(x, 0.0), low)

    def fold(distance, near, far):
        n = D.astype(D.astype(D.divide(distance, span), np.int64), x.dtype)
        r = D.subtract(distance, D.multiply(n, span))
        even = D.equal(D.subtract(n, D.multiply(D.floor(D.divide(n, 2.0)), 2.0)), 0.0)
        return D.where(even, D.add(r, near) if near == low else D.subtract(near, r),
                       D.subtract(far, r) if far == high else D.add(far, r))
    below = fold(D.subtract(low, x), low, high)
    above = fold(D.subtract(x, high), high, low)
    return D.where(D.less(x, low), below, D.where(D.greater(x, high), above, x))


def _cubic_coeffs(t, a=-0.75):
    t1, t2 = D.add(t, 1.0), D.subtract(1.0, t)
    t3 = D.subtract(2.0, t)
    c0 = D.subtract(D.multiply(D.add(D.multiply(D.subtract(D.multiply(t1, a), 5 * a), t1),
                                     8 * a), t1), 4 * a)
    c1 = D.add(D.multiply(D.multiply(D.subtract(D.multiply(t, a + 2), a + 3), t), t), 1.0)
    c2 = D.add(D.multiply(D.multiply(D.subtract(D.multiply(t2, a + 2), a + 3), t2), t2), 1.0)
    c3 = D.subtract(D.multiply(D.add(D.multiply(D.subtract(D.multiply(t3, a), 5 * a), t3),
                                     8 * a), t3), 4 * a)
    return [c0, c1, c2, c3]


@converter("GridSample")
def _grid_sample(node):
    x, grid = _t(node.input(0)), _t(node.input(1))
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(node.attr("mode", "linear"),
                                                         node.attr("mode", "linear"))
    padding = node.attr("padding_mode", "zeros")
    align = bool(node.attr("align_corners", 0))
    shape = _static_shape(node, x)
    gshape = _static_shape(node, grid, "grid")
    n, c, dims = shape[0], shape[1], shape[2:]
    rank = len(dims)
    if not dtypes.is_float(x.dtype):
        node.fail("GridSample needs a floating-point input")
    out_spatial = gshape[1:-1]
    points = int(np.prod(out_spatial, dtype=np.int64))
    work = grid if grid.dtype == x.dtype else D.astype(grid, x.dtype)
    coords, borders = [], []
    for i, d in enumerate(dims):
        g = work[..., rank - 1 - i]
        if align:
            coord = D.multiply(D.divide(D.add(g, 1.0), 2.0), float(d - 1))
            low, high = 0.0, float(d - 1)
        else:
            coord = D.divide(D.subtract(D.multiply(D.add(g, 1.0), float(d)), 1.0), 2.0)
            low, high = -0.5, d - 0.5
        if mode == "nearest":
            coord = D.round(coord)
        outside = D.where(D.less(coord, low), np.ones((), bool), D.greater(coord, high))
        if padding == "border":
            coord = D.where(outside, D.minimum(D.maximum(coord, 0.0), float(d - 1)), coord)
        elif padding == "reflection":
            coord = _reflect(coord, low, high)
        coords.append(coord)
        borders.append((low, high))
    if mode == "nearest":
        taps = [[(D.astype(c_, np.int64), None)] for c_ in coords]
    else:
        taps = []
        for coord in coords:
            base = D.floor(coord)
            frac = D.subtract(coord, base)
            base = D.astype(base, np.int64)
            if mode == "linear":
                weights, offsets = [D.subtract(1.0, frac), frac], [0, 1]
            else:
                weights, offsets = _cubic_coeffs(frac), [-1, 0, 1, 2]
            taps.append([(D.add(base, o), w) for o, w in zip(offsets, weights)])
    flat = D.reshape(x, (n, c, -1))
    strides = np.cumprod((dims[1:] + (1,))[::-1])[::-1]
    result = None
    for combo in np.ndindex(*[len(t) for t in taps]):
        index, weight, valid = None, None, None
        for i, choice in enumerate(combo):
            idx, w = taps[i][choice]
            d = dims[i]
            if padding == "zeros":
                inside = D.where(D.less(idx, 0), np.zeros((), bool),
                                 D.less(idx, np.array(d, np.int64)))
                valid = inside if valid is None else D.where(valid, inside, np.zeros((), bool))
                idx = D.minimum(D.maximum(idx, 0), d - 1)
            elif padding == "border":
                idx = D.minimum(D.maximum(idx, 0), d - 1)
            else:
                low, high = borders[i]
                idx = D.astype(_reflect(D.astype(idx, x.dtype), low, high), np.int64)
                idx = D.minimum(D.maximum(idx, 0), d - 1)
            term = D.multiply(idx, int(strides[i]))
            index = term if index is None else D.add(index, term)
            if w is not None:
                weight = w if weight is None else D.multiply(weight, w)
        index = D.broadcast_to(D.reshape(index, (n, 1, points)), (n, c, points))
        value = C.take_along_axis(flat, index, 2)
        factor = weight
        if valid is not None:
            mask = D.astype(valid, x.dtype)
            factor = mask if factor is None else D.multiply(factor, mask)
        if factor is not None:
            value = D.multiply(value, D.reshape(factor, (n, 1, points)))
        result = value if result is None else D.add(result, value)
    return D.reshape(result, (n, c) + tuple(out_spatial))
