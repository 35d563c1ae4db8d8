"""Integer products of quantized operands: the QDQ fusion the importers do.

Quantized models (onnxruntime's QDQ files, PyTorch 2 quantization) compute
a convolution or a matmul as a float op between dequantizations:
``conv(dequantize(qx, sx, zx), dequantize(qw, sw))``. The importers call
these functions instead, as onnxruntime's QDQ transformers do when a session
loads such a model: the activation stays the 8-bit tensor the dequantization
read, the weight stays int8, the product is summed exactly in int32
(``dl.matmul_integer``: ``dl-integer-matmul``'s VNNI or vpmaddwd micro-kernel)
with the activation's zero point folded into the weight's column sums, and
one float multiply by sx x sw (per output channel) follows. The result
equals the float computation on the dequantized values up to float rounding.

A convolution is an im2col product in NHWC: the activation transposed to
NHWC (padded with its zero point, which contributes 0), its windows laid out
as rows in (kh, kw, c) order, times the weight as a [KH·KW·C, Cout] matrix.
The NCHW <-> NHWC transposes are marked as layout conversions
(``dl.layout_conversion``): between two such convolutions dl-layout cancels
them, as it does around its own NHWC convolutions.
"""

import numpy as np

from .. import ops as D

EIGHT_BITS = (np.dtype(np.int8), np.dtype(np.uint8))


def qdq_operands(x_origin, w_origin, weight_axis):
    """(qx, x_scale, x_zero, qw, w_scale) for an activation dequantized per
    tensor and an int8 constant weight of zero point 0 dequantized per tensor
    or per channel along `weight_axis`; None otherwise. An origin is
    (q, scale, zero, axis) as the importers record a dequantization."""
    qx, x_scale, x_zero, _ = x_origin
    qw, w_scale, w_zero, w_axis = w_origin
    if isinstance(qx, np.ndarray) or np.dtype(qx.dtype) not in EIGHT_BITS:
        return None
    if np.size(x_scale) != 1 or (x_zero is not None and np.size(x_zero) != 1):
        return None
    if not isinstance(qw, np.ndarray) or qw.dtype != np.int8:
        return None
    if w_zero is not None and np.asarray(w_zero).any():
        return None
    w_scale = np.asarray(w_scale)
    if w_scale.size == 1:
        w_scale = w_scale.reshape(())
    elif w_scale.ndim != 1 or w_axis is None or \
            w_axis % qw.ndim != weight_axis % qw.ndim or w_scale.size != qw.shape[weight_axis]:
        return None
    zero = np.zeros((), qx.dtype) if x_zero is None else np.asarray(x_zero).reshape(())
    return qx, np.asarray(x_scale).reshape(()), zero, qw, w_scale


def _scaled(acc, x_scale, w_scale, dtype, channel_shape):
    factor = (x_scale.astype(np.float64) * w_scale.astype(np.float64)).astype(dtype)
    if factor.ndim == 1:
        factor = factor.reshape(channel_shape)
    return D.multiply(D.astype(acc, dtype), D.asarray(factor))


def _less_zero_point(acc, matrix, zero):
    """acc - zero x the column sums of the int8 `matrix` (a constant)."""
    if not int(zero):
        return acc
    sums = matrix.astype(np.int64).sum(axis=0) * int(zero)
    return D.subtract(acc, D.asarray(sums.astype(np.int32)))


def matmul(qx, x_scale, x_zero, qw, w_scale, dtype, transposed=False):
    """x @ w of dequantized operands in integers: qw is [K, N] ([N, K] when
    `transposed`), w_scale per tensor or per N."""
    matrix = np.ascontiguousarray(qw.T if transposed else qw)
    acc = _less_zero_point(D.matmul_integer(qx, D.asarray(matrix)), matrix, x_zero)
    return _scaled(acc, x_scale, w_scale, dtype, (-1,))


def layout_transpose(x, perm):
    """D.transpose marked as a layout conversion (dl-layout sinks it through
    elementwise ops and cancels it against its inverse)."""
    from ..mlir import ir
    y = D.transpose(x, perm)
    owner = y.value.owner
    if isinstance(owner, ir.OpView):
        owner = owner.operation
    if isinstance(owner, ir.Operation) and owner.name == "dl.transpose":
        owner.attributes["dl.layout_conversion"] = ir.UnitAttr.get(owner.context)
    return y


def conv2d_sums(x, x_zero, w, strides, pads, dilations):
    """Σ (x - x_zero) w over each window of a 2-D NCHW convolution (group 1;
    `pads` [top, left, bottom, right]), in int32, NCHW; None where x is not
    an 8-bit 4-D tensor of static channels and spatial size matching w, an
    int8 [Cout, C, KH, KW] array, or the output would be empty."""
    if not isinstance(w, np.ndarray) or w.dtype != np.int8 or w.ndim != 4:
        return None
    if x.ndim != 4 or np.dtype(x.dtype) not in EIGHT_BITS or None in x.shape[1:] or \
            x.shape[1] != w.shape[1]:
        return None
    cout, channels, kh, kw = w.shape
    height, width = x.shape[2:]
    out = [(size + pads[i] + pads[i + 2] - ((k - 1) * d + 1)) // s + 1
           for i, (size, k, s, d) in enumerate(zip((height, width), (kh, kw), strides,
                                                   dilations))]
    if min(out) < 1:
        return None
    zero = int(x_zero)
    x = layout_transpose(x, (0, 2, 3, 1))
    if kh == kw == 1 and list(strides) == [1, 1] and not any(pads):
        patches = D.reshape(x, (-1, channels))
    else:
        if any(pads):
            x = D.pad(x, ((0, 0), (pads[0], pads[2]), (pads[1], pads[3]), (0, 0)),
                      constant_values=zero)
        windows = []
        for i, j in np.ndindex(kh, kw):
            top, left = i * dilations[0], j * dilations[1]
            key = (slice(None),
                   slice(top, top + (out[0] - 1) * strides[0] + 1, strides[0]),
                   slice(left, left + (out[1] - 1) * strides[1] + 1, strides[1]),
                   slice(None))
            windows.append(D.expand_dims(x[key], 3))
        patches = D.concatenate(windows, axis=3) if len(windows) > 1 else windows[0]
        patches = D.reshape(patches, (-1, kh * kw * channels))
    matrix = np.ascontiguousarray(w.transpose(2, 3, 1, 0).reshape(-1, cout))
    acc = D.reshape(D.matmul_integer(patches, D.asarray(matrix)), (-1, out[0], out[1], cout))
    # The correction on the NHWC view: one shape with the scale, bias, activation and
    # requantization that follow, so that they fuse into one loop nest.
    acc = _less_zero_point(acc, matrix, zero)
    return layout_transpose(acc, (0, 3, 1, 2))


def conv2d(qx, x_scale, x_zero, qw, w_scale, strides, pads, dilations, dtype):
    """conv2d(dequantize(qx), dequantize(qw)) (NCHW, group 1, no bias) in
    integers, or None where conv2d_sums refuses."""
    acc = conv2d_sums(qx, x_zero, qw, strides, pads, dilations)
    if acc is None:
        return None
    return _scaled(acc, x_scale, w_scale, dtype, (-1, 1, 1))
