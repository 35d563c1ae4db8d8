"""Reverse-mode differentiation of ``dl``: ``dlc.grad`` and
``dlc.value_and_grad``, in the shape of JAX's.

``dlc.grad(f)(x)`` traces ``f`` into ``dl`` ops as ``dlc.jit`` does, then walks
the ``dl`` ops it emitted backwards, from the scalar result, applying each op's
vector-Jacobian rule (:data:`RULES`, keyed by op name and reading the op's
attributes: axes, permutations, slices) to build the gradient as more ``dl``
ops in the same function. Differentiation works on the IR, not on the Python
function: whatever dlc op, composite or imported layer ``f`` used, it
differentiates what that became. The backward ops then go through the same
graph passes and code generation as any other (fusion of the elementwise
chains, memory planning, register-tiled GEMMs for the transposed matmuls).

Called outside a trace, the transformed function compiles itself with
``dlc.jit`` (once per signature); inside ``dlc.jit`` it is traced like any
other function, so ``dlc.jit(dlc.grad(f))`` and a training step that returns
the loss and updated parameters are each one compiled function.

Refused with a :class:`dlc.TraceError` naming the op and the user's line:
ops with no rule yet (NHWC convolutions and poolings, a dynamic batch through
reductions, slices, gathers and convolutions).
Comparisons and argmax have integer or bool results, which no gradient
reaches. Refused with a :class:`dlc.DTypeError`: differentiating with
respect to an integer argument, or a result that is not a float scalar.
"""

import functools
import math
import re

import numpy as np

from . import dtypes
from . import ops as O
from .composite import one_hot
from .errors import DTypeError, ShapeError, TraceError
from .mlir import ir
from .tracing import Tensor, Trace, current_trace, located


# -- helpers ----------------------------------------------------------------------

def _attr(op, name):
    return op.attributes[name] if name in op.attributes else None


def _ints(op, name):
    value = _attr(op, name)
    return [int(v) for v in ir.DenseI64ArrayAttr(value)] if value is not None else []


def _int(op, name):
    return int(ir.IntegerAttr(_attr(op, name)).value)


def _float(op, name):
    return float(ir.FloatAttr(_attr(op, name)).value)


def _scalar(like, number):
    """A constant of `like`'s float dtype (broadcasts in binary ops)."""
    return np.asarray(number, dtype=like.dtype)


def _unbroadcast(g, shape):
    """Sums `g` (of a broadcast result's shape) down to `shape`."""
    if tuple(g.shape) == tuple(shape):
        return g
    lead = len(g.shape) - len(shape)
    axes = list(range(lead))
    for i, size in enumerate(shape):
        if size == 1 and g.shape[lead + i] != 1:
            axes.append(lead + i)
    if axes:
        g = O.sum(g, axis=tuple(axes), keepdims=True)
    if lead or tuple(g.shape) != tuple(shape):
        g = O.reshape(g, tuple(-1 if d is None else d for d in shape))
    return g


def _expand_reduced(g, input_shape, axes, keepdims):
    """`g` of a reduction's result, broadcast back to its input's shape."""
    if None in input_shape:
        raise ShapeError("dlc.grad: a reduction of a tensor with a dynamic dimension is "
                         "not differentiated yet; compile for a fixed batch size")
    if not keepdims:
        g = O.reshape(g, tuple(1 if i in axes else d for i, d in enumerate(input_shape)))
    return O.broadcast_to(g, tuple(input_shape))


def _swap_last(x):
    perm = list(range(len(x.shape)))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return O.transpose(x, perm)


# -- rules: (op, gradients of its results, operands, results) -> operand grads --------

RULES = {}


def rule(*names):
    def register(fn):
        for name in names:
            RULES[name] = fn
        return fn
    return register


@rule("dl.add")
def _add(op, g, a, b, y):
    return [_unbroadcast(g, a.shape), _unbroadcast(g, b.shape)]


@rule("dl.sub")
def _sub(op, g, a, b, y):
    return [_unbroadcast(g, a.shape), _unbroadcast(O.negative(g), b.shape)]


@rule("dl.mul")
def _mul(op, g, a, b, y):
    return [_unbroadcast(g * b, a.shape), _unbroadcast(g * a, b.shape)]


@rule("dl.div")
def _div(op, g, a, b, y):
    return [_unbroadcast(g / b, a.shape), _unbroadcast(O.negative(g) * y / b, b.shape)]


@rule("dl.pow")
def _pow(op, g, a, b, y):
    da = g * b * O.power(a, b - _scalar(b, 1.0))
    # d/db a^b = a^b log a, defined where a > 0 (0 elsewhere, as PyTorch).
    positive = a > _scalar(a, 0.0)
    safe = O.where(positive, a, a * _scalar(a, 0.0) + _scalar(a, 1.0))
    db = O.where(positive, g * y * O.log(safe), g * _scalar(g, 0.0))
    return [_unbroadcast(da, a.shape), _unbroadcast(db, b.shape)]


def _select_ties(g, a, b, wins):
    """max/min: the winner gets g; ties split it evenly (as PyTorch)."""
    half = g * _scalar(g, 0.5)
    zero = g * _scalar(g, 0.0)
    ga = O.where(wins, g, O.where(O.equal(a, b), half, zero))
    gb = O.where(wins, zero, O.where(O.equal(a, b), half, g))
    return [_unbroadcast(ga, a.shape), _unbroadcast(gb, b.shape)]


@rule("dl.maximum")
def _maximum(op, g, a, b, y):
    return _select_ties(g, a, b, a > b)


@rule("dl.minimum")
def _minimum(op, g, a, b, y):
    return _select_ties(g, a, b, a < b)


def _unary(name):
    def register(fn):
        RULES[name] = lambda op, g, x, y: [fn(g, x, y, op)]
        return fn
    return register


_unary("dl.neg")(lambda g, x, y, op: O.negative(g))
_unary("dl.abs")(lambda g, x, y, op: g * O.sign(x))
_unary("dl.exp")(lambda g, x, y, op: g * y)
_unary("dl.log")(lambda g, x, y, op: g / x)
_unary("dl.sqrt")(lambda g, x, y, op: g * _scalar(y, 0.5) / y)
_unary("dl.rsqrt")(lambda g, x, y, op: g * _scalar(y, -0.5) * y / x)
_unary("dl.tanh")(lambda g, x, y, op: g * (_scalar(y, 1.0) - y * y))
_unary("dl.sigmoid")(lambda g, x, y, op: g * y * (_scalar(y, 1.0) - y))
_unary("dl.relu")(lambda g, x, y, op: O.where(y > _scalar(y, 0.0), g, g * _scalar(g, 0.0)))
_unary("dl.erf")(lambda g, x, y, op: g * _scalar(x, 2.0 / math.sqrt(math.pi))
                 * O.exp(O.negative(x * x)))
_unary("dl.sin")(lambda g, x, y, op: g * O.cos(x))
_unary("dl.cos")(lambda g, x, y, op: O.negative(g) * O.sin(x))
_unary("dl.tan")(lambda g, x, y, op: g * (_scalar(y, 1.0) + y * y))
_unary("dl.sinh")(lambda g, x, y, op: g * O.cosh(x))
_unary("dl.cosh")(lambda g, x, y, op: g * O.sinh(x))
_unary("dl.atan")(lambda g, x, y, op: g / (_scalar(x, 1.0) + x * x))
_unary("dl.asin")(lambda g, x, y, op: g * O.rsqrt(_scalar(x, 1.0) - x * x))
_unary("dl.acos")(lambda g, x, y, op: O.negative(g) * O.rsqrt(_scalar(x, 1.0) - x * x))
_unary("dl.asinh")(lambda g, x, y, op: g * O.rsqrt(x * x + _scalar(x, 1.0)))
_unary("dl.acosh")(lambda g, x, y, op: g * O.rsqrt(x * x - _scalar(x, 1.0)))
_unary("dl.atanh")(lambda g, x, y, op: g / (_scalar(x, 1.0) - x * x))
# Piecewise constant: zero almost everywhere (as PyTorch).
for _name in ("dl.floor", "dl.ceil", "dl.round", "dl.sign"):
    _unary(_name)(lambda g, x, y, op: g * _scalar(g, 0.0))


@_unary("dl.silu")
def _silu(g, x, y, op):
    s = O.sigmoid(x)
    return g * s * (_scalar(x, 1.0) + x * (_scalar(x, 1.0) - s))


@_unary("dl.gelu")
def _gelu(g, x, y, op):
    if _attr(op, "approximate_tanh") is not None:
        c = math.sqrt(2.0 / math.pi)
        inner = _scalar(x, c) * (x + _scalar(x, 0.044715) * x * x * x)
        t = O.tanh(inner)
        dinner = _scalar(x, c) * (_scalar(x, 1.0) + _scalar(x, 3 * 0.044715) * x * x)
        return g * (_scalar(x, 0.5) * (_scalar(x, 1.0) + t)
                    + _scalar(x, 0.5) * x * (_scalar(x, 1.0) - t * t) * dinner)
    cdf = _scalar(x, 0.5) * (_scalar(x, 1.0) + O.erf(x * _scalar(x, 1 / math.sqrt(2))))
    pdf = O.exp(x * x * _scalar(x, -0.5)) * _scalar(x, 1 / math.sqrt(2 * math.pi))
    return g * (cdf + x * pdf)


@_unary("dl.leaky_relu")
def _leaky_relu(g, x, y, op):
    return O.where(x > _scalar(x, 0.0), g, g * _scalar(g, _float(op, "alpha")))


@_unary("dl.hardswish")
def _hardswish(g, x, y, op):
    middle = (x * _scalar(x, 2.0) + _scalar(x, 3.0)) / _scalar(x, 6.0)
    zero = g * _scalar(g, 0.0)
    return O.where(x < _scalar(x, -3.0), zero,
                   O.where(x > _scalar(x, 3.0), g, g * middle))


@rule("dl.where")
def _where(op, g, c, a, b, y):
    zero = g * _scalar(g, 0.0)
    return [None, _unbroadcast(O.where(c, g, zero), a.shape),
            _unbroadcast(O.where(c, zero, g), b.shape)]


@rule("dl.cast")
def _cast(op, g, x, y):
    if not dtypes.is_float(x.dtype):
        return [None]
    return [O.astype(g, x.dtype)]


@rule("dl.matmul")
def _matmul(op, g, a, b, y):
    if len(a.shape) < 2 or len(b.shape) < 2:
        raise TraceError("dlc.grad: dl.matmul of a vector is not differentiated yet")
    return [_unbroadcast(O.matmul(g, _swap_last(b)), a.shape),
            _unbroadcast(O.matmul(_swap_last(a), g), b.shape)]


@rule("dl.reduce_sum")
def _reduce_sum(op, g, x, y):
    return [_expand_reduced(g, x.shape, _ints(op, "axes"), _attr(op, "keepdims") is not None)]


@rule("dl.reduce_mean")
def _reduce_mean(op, g, x, y):
    axes = _ints(op, "axes")
    count = 1
    for axis in axes:
        if x.shape[axis] is None:
            raise ShapeError("dlc.grad: a mean over a dynamic dimension is not "
                             "differentiated yet")
        count *= x.shape[axis]
    expanded = _expand_reduced(g, x.shape, axes, _attr(op, "keepdims") is not None)
    return [expanded / _scalar(g, float(count))]


@rule("dl.reduce_max", "dl.reduce_min")
def _reduce_extremum(op, g, x, y):
    axes = _ints(op, "axes")
    keep = _attr(op, "keepdims") is not None
    expanded_y = _expand_reduced(y, x.shape, axes, keep)
    hits = O.astype(O.equal(x, expanded_y), x.dtype)
    ties = O.sum(hits, axis=tuple(axes), keepdims=True)
    share = _expand_reduced(g, x.shape, axes, keep) / O.broadcast_to(ties, tuple(x.shape))
    return [share * hits]


@rule("dl.softmax")
def _softmax(op, g, x, y):
    axis = _int(op, "axis")
    return [y * (g - O.sum(g * y, axis=axis, keepdims=True))]


@rule("dl.log_softmax")
def _log_softmax(op, g, x, y):
    axis = _int(op, "axis")
    return [g - O.exp(y) * O.sum(g, axis=axis, keepdims=True)]


@rule("dl.transpose")
def _transpose(op, g, x, y):
    perm = _ints(op, "permutation")
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return [O.transpose(g, inverse)]


@rule("dl.reshape")
def _reshape(op, g, x, y):
    return [O.reshape(g, tuple(-1 if d is None else d for d in x.shape))]


@rule("dl.broadcast_to")
def _broadcast_to(op, g, x, y):
    return [_unbroadcast(g, x.shape)]


def _unslice_axis(t, axis, start, size, stride, dim):
    """`t` (size elements along `axis`, taken from a `dim`-long axis at
    start, start + stride, ...) placed back at those positions, zeros
    elsewhere."""
    if size == 0:
        shape = list(t.shape)
        shape[axis] = dim
        return O.broadcast_to(np.zeros((), t.dtype), tuple(shape))
    if stride < 0:  # reversed: the same elements, read from the lowest index
        index = [slice(None)] * len(t.shape)
        index[axis] = slice(None, None, -1)
        t = t[tuple(index)]
        start, stride = start + (size - 1) * stride, -stride
    if stride > 1:
        shape = list(t.shape)
        t = O.reshape(t, tuple(shape[:axis + 1]) + (1,) + tuple(shape[axis + 1:]))
        widths = [(0, 0)] * len(t.shape)
        widths[axis + 1] = (0, stride - 1)
        t = O.pad(t, widths)
        shape[axis] = size * stride
        t = O.reshape(t, tuple(shape))
        index = [slice(None)] * len(shape)
        index[axis] = slice(0, (size - 1) * stride + 1)
        t = t[tuple(index)]
    span = (size - 1) * stride + 1
    widths = [(0, 0)] * len(t.shape)
    widths[axis] = (start, dim - start - span)
    return O.pad(t, widths) if widths[axis] != (0, 0) else t


@rule("dl.slice")
def _slice(op, g, x, y):
    starts, sizes, strides = _ints(op, "starts"), _ints(op, "sizes"), _ints(op, "strides")
    if None in x.shape:
        raise TraceError(f"{_location(op)}: dlc.grad: a slice of a dynamic batch is not "
                         f"differentiated yet")
    for axis, (start, size, stride, dim) in enumerate(zip(starts, sizes, strides, x.shape)):
        if (start, size, stride) != (0, dim, 1):
            g = _unslice_axis(g, axis, start, size, stride, dim)
    return [g]


@rule("dl.gather")
def _gather(op, g, x, indices, y):
    """take(x, indices, axis): the gradient sums g into the rows it read, as
    a product with the indices' one-hot matrix."""
    axis = _int(op, "axis") % len(x.shape)
    if None in x.shape or None in g.shape:
        raise TraceError(f"{_location(op)}: dlc.grad: a gather with a dynamic dimension is "
                         f"not differentiated yet")
    rows = x.shape[axis]
    pre = int(np.prod(x.shape[:axis], dtype=np.int64))
    post = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    taken = int(np.prod(indices.shape, dtype=np.int64))
    hot = O.reshape(one_hot(indices, rows, dtype=g.dtype), (taken, rows))
    flat = O.transpose(O.reshape(g, (pre, taken, post)), (0, 2, 1))   # [pre, post, taken]
    dx = O.transpose(O.matmul(flat, hot), (0, 2, 1))                  # [pre, rows, post]
    return [O.reshape(dx, tuple(x.shape)), None]


@rule("dl.pad")
def _pad(op, g, x, y):
    low = _ints(op, "low")
    index = tuple(slice(l, l + d) for l, d in zip(low, x.shape))
    return [g[index]]


@rule("dl.concat")
def _concat(op, g, *operands_and_result):
    *operands, y = operands_and_result
    axis = _int(op, "axis")
    grads, offset = [], 0
    for operand in operands:
        size = operand.shape[axis]
        index = [slice(None)] * len(y.shape)
        index[axis] = slice(offset, offset + size)
        grads.append(g[tuple(index)])
        offset += size
    return grads


def _any_layout(filter_index=None):
    """A rule written for NCHW made to serve NHWC ops too: the operands (and
    the filter [KH, KW, C/groups, F] at `filter_index`) transposed to NCHW,
    the rule applied, and the gradients transposed back."""
    def wrap(fn):
        @functools.wraps(fn)
        def rule_any_layout(op, g, *operands):
            layout = ir.StringAttr(_attr(op, "layout")).value
            if layout == "NCHW":
                return fn(op, g, *operands)
            if layout != "NHWC":
                raise TraceError(f"{_location(op)}: dlc.grad: {op.name} in layout {layout} "
                                 f"is not differentiated (NCHW and NHWC are)")

            def to_nchw(i, t):
                if i == filter_index:
                    return O.transpose(t, (3, 2, 0, 1))
                return O.transpose(t, (0, 3, 1, 2)) if len(t.shape) == 4 else t

            def to_nhwc(i, d):
                if d is None:
                    return None
                if i == filter_index:
                    return O.transpose(d, (2, 3, 1, 0))
                return O.transpose(d, (0, 2, 3, 1)) if len(d.shape) == 4 else d

            grads = fn(op, O.transpose(g, (0, 3, 1, 2)),
                       *[to_nchw(i, t) for i, t in enumerate(operands)])
            return [to_nhwc(i, d) for i, d in enumerate(grads)]
        return rule_any_layout
    return wrap


def _static(op, name, *tensors):
    for t in tensors:
        if None in t.shape:
            raise ShapeError(f"{_location(op)}: dlc.grad: {name} of a dynamic batch is "
                             f"not differentiated yet; compile for a fixed batch size")


@rule("dl.conv2d")
@_any_layout(filter_index=1)
def _conv2d(op, g, x, w, *rest):
    """dx: the transposed convolution of g with w; dw: a grouped convolution
    of x (channels as batch) with g (batch as channels), stride and dilation
    swapped; db: g summed over batch and space."""
    b = rest[0] if len(rest) == 2 else None
    _static(op, "dl.conv2d", x)
    (sh, sw), (dh, dw_) = _ints(op, "strides"), _ints(op, "dilations")
    top, bottom, left, right = _ints(op, "padding")
    groups = _int(op, "groups")
    n, c, h, width = x.shape
    f, cg, kh, kw = w.shape
    _, _, ho, wo = g.shape
    out_h = (ho - 1) * sh - top - bottom + dh * (kh - 1) + 1
    out_w = (wo - 1) * sw - left - right + dw_ * (kw - 1) + 1
    from .composite import conv_transpose2d
    dx = conv_transpose2d(g, w, stride=(sh, sw), padding=(top, bottom, left, right),
                          output_padding=(h - out_h, width - out_w), groups=groups,
                          dilation=(dh, dw_))
    xs = O.reshape(x, (n, groups, cg, h, width))
    xs = O.reshape(O.transpose(xs, (2, 1, 0, 3, 4)), (cg, groups * n, h, width))
    gs = O.transpose(g, (1, 0, 2, 3))
    dw = O.conv2d(xs, gs, stride=(dh, dw_), dilation=(sh, sw),
                  padding=(top, bottom, left, right), groups=groups)
    dw = O.transpose(dw, (1, 0, 2, 3))[:, :, :kh, :kw]
    grads = [dx, dw]
    if b is not None:
        grads.append(O.sum(g, axis=(0, 2, 3)))
    return grads


def _window_positions(x, g, kernel, strides, pads):
    """For each kernel offset (a, b): the strided view of the padded input
    that offset reads for every output position, and a function placing an
    output-shaped tensor back at those input positions (zeros elsewhere)."""
    n, c, h, width = x.shape
    _, _, ho, wo = g.shape
    (kh, kw), (sh, sw) = kernel, strides
    top, bottom, left, right = pads
    hp, wp = h + top + bottom, width + left + right

    def place(t, a, b):
        # Zeros between the elements (stride - 1), then shifted to (a, b)
        # within the padded input, then the padding cropped.
        t = O.reshape(t, (n, c, ho, 1, wo, 1))
        t = O.pad(t, [(0, 0), (0, 0), (0, 0), (0, sh - 1), (0, 0), (0, sw - 1)])
        t = O.reshape(t, (n, c, ho * sh, wo * sw))
        t = t[:, :, :(ho - 1) * sh + 1, :(wo - 1) * sw + 1]
        t = O.pad(t, [(0, 0), (0, 0), (a, hp - a - (ho - 1) * sh - 1),
                      (b, wp - b - (wo - 1) * sw - 1)])
        return t[:, :, top:top + h, left:left + width]

    def view(padded, a, b):
        return padded[:, :, a:a + (ho - 1) * sh + 1:sh, b:b + (wo - 1) * sw + 1:sw]

    return [(a, b) for a in range(kh) for b in range(kw)], place, view


def _max_pool2d_tiled(x, g, kernel):
    """The gradient of a max pool whose windows tile the input (stride =
    kernel, no padding): each window's elements as the last axis, the first
    maximum found by argmax, and g placed there: a few kernels, where the
    general rule below needs a chain of masks and pads per window offset."""
    n, c, h, width = x.shape
    _, _, ho, wo = g.shape
    kh, kw = kernel
    hc, wc = ho * kh, wo * kw  # rows and columns a window covers
    covered = x[:, :, :hc, :wc] if (hc, wc) != (h, width) else x
    windows = O.reshape(O.transpose(O.reshape(covered, (n, c, ho, kh, wo, kw)),
                                    (0, 1, 2, 4, 3, 5)), (n, c, ho, wo, kh * kw))
    first = O.expand_dims(O.argmax(windows, axis=-1), -1)
    offsets = np.arange(kh * kw, dtype=np.dtype(first.dtype))
    # The winners as a mask (a byte per element) moved back to the input's
    # layout, and g broadcast over each window there: the gradient is
    # written once, where it lies (transposing it from the windows' layout
    # took two more input-sized float buffers at the training step's peak).
    won = O.reshape(O.transpose(O.reshape(O.equal(first, offsets), (n, c, ho, wo, kh, kw)),
                                (0, 1, 2, 4, 3, 5)), (n, c, ho, kh, wo, kw))
    d = O.where(won, O.reshape(g, (n, c, ho, 1, wo, 1)), _scalar(g, 0.0))
    d = O.reshape(d, (n, c, hc, wc))
    if (hc, wc) != (h, width):
        d = O.pad(d, [(0, 0), (0, 0), (0, h - hc), (0, width - wc)])
    return d


@rule("dl.max_pool2d")
@_any_layout()
def _max_pool2d(op, g, x, y):
    """The gradient goes to the first maximum of each window (row-major
    window order, as PyTorch); padding never wins."""
    _static(op, "dl.max_pool2d", x)
    pads = _ints(op, "padding")
    kernel, strides = _ints(op, "kernel"), _ints(op, "strides")
    if tuple(kernel) == tuple(strides) and not any(pads):
        return [_max_pool2d_tiled(x, g, kernel)]
    offsets, place, view = _window_positions(x, g, _ints(op, "kernel"), _ints(op, "strides"),
                                             pads)
    lowest = float(np.finfo(np.dtype(x.dtype)).min) if x.dtype != dtypes.BFLOAT16 else -3e38
    padded = O.pad(x, [(0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])],
                   constant_values=lowest)
    taken = None
    dx = None
    for a, b in offsets:
        hit = O.equal(view(padded, a, b), y)
        if taken is not None:
            hit = O.logical_and(hit, O.logical_not(taken))
        taken = hit if taken is None else O.logical_or(taken, hit)
        part = place(O.where(hit, g, g * _scalar(g, 0.0)), a, b)
        dx = part if dx is None else dx + part
    return [dx]


@rule("dl.avg_pool2d")
@_any_layout()
def _avg_pool2d(op, g, x, y):
    _static(op, "dl.avg_pool2d", x)
    kernel, pads = _ints(op, "kernel"), _ints(op, "padding")
    offsets, place, view = _window_positions(x, g, kernel, _ints(op, "strides"), pads)
    if _attr(op, "count_include_pad") is not None:
        share = g / _scalar(g, float(kernel[0] * kernel[1]))
    else:
        # The divisor of each window: how many of its elements are input.
        ones = O.pad(x * _scalar(x, 0.0) + _scalar(x, 1.0),
                     [(0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])])
        count = None
        for a, b in offsets:
            count = view(ones, a, b) if count is None else count + view(ones, a, b)
        share = g / count
    dx = None
    for a, b in offsets:
        part = place(share, a, b)
        dx = part if dx is None else dx + part
    return [dx]


def _channel_shape(x, axis):
    return tuple(-1 if i == axis else 1 for i in range(len(x.shape)))


def _defined_by(value, name):
    """The op named `name` whose result `value` is, or None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner is None:
        return None
    op = owner.opview if hasattr(owner, "opview") else owner
    return op if op.operation.name == name else None


def _batch_statistics(x, mean, var, others):
    """The centred input `x - mean` if `mean` and `var` are `x`'s batch
    statistics as dlc.nn.BatchNorm2d computes them in training mode
    (mean = reduce_mean(x), var = reduce_mean(c * c), c = x - reshape(mean),
    over every axis but the channel's); None otherwise."""
    mean_op = _defined_by(mean.value, "dl.reduce_mean")
    var_op = _defined_by(var.value, "dl.reduce_mean")
    if mean_op is None or var_op is None or mean_op.operands[0] != x.value:
        return None
    for reduce in (mean_op, var_op):
        if tuple(_ints(reduce, "axes")) != others or _attr(reduce, "keepdims") is not None:
            return None
    square = _defined_by(var_op.operands[0], "dl.mul")
    if square is None or square.operands[0] != square.operands[1]:
        return None
    centred = _defined_by(square.operands[0], "dl.sub")
    if centred is None or centred.operands[0] != x.value:
        return None
    reshaped = _defined_by(centred.operands[1], "dl.reshape")
    if reshaped is None or reshaped.operands[0] != mean.value:
        return None
    return Tensor(square.operands[0], x._trace)


@rule("dl.batch_norm")
def _batch_norm(op, g, x, mean, var, gamma, beta, y):
    """Inference form (statistics as inputs), and the training form: with
    the batch's own statistics (dlc.nn.BatchNorm2d in training mode) the
    gradient through the mean and the variance is folded into the input's,
    in closed form (as PyTorch's kernel), so that the backward pass reads
    only g and the centred input: two per-channel sums and one elementwise
    pass instead of the chain the mean and variance ops' own rules make."""
    axis, eps = _int(op, "axis"), _float(op, "epsilon")
    axis = axis % len(x.shape)
    shape = _channel_shape(x, axis)
    others = tuple(i for i in range(len(x.shape)) if i != axis)
    inv = O.reshape(O.rsqrt(var + _scalar(var, eps)), shape)
    centered = _batch_statistics(x, mean, var, others)
    if centered is not None and None not in x.shape:
        count = 1
        for i in others:
            count *= x.shape[i]
        total = O.sum(g, axis=others)                  # dbeta
        moment = O.sum(g * centered, axis=others)      # dgamma / inv
        inv_c = O.rsqrt(var + _scalar(var, eps))
        dgamma = moment * inv_c
        scale = O.reshape(gamma * inv_c / _scalar(var, float(count)), shape)
        dx = scale * (g * _scalar(g, float(count)) - O.reshape(total, shape)
                      - centered * O.reshape(moment * inv_c * inv_c, shape))
        return [dx, None, None, dgamma, total]
    centered = x - O.reshape(mean, shape)
    dx = g * O.reshape(gamma, shape) * inv
    dgamma = O.sum(g * centered * inv, axis=others)
    dbeta = O.sum(g, axis=others)
    dmean = O.negative(O.sum(dx, axis=others))
    dvar = O.sum(g * O.reshape(gamma, shape) * centered * inv * inv * inv, axis=others) \
        * _scalar(var, -0.5)
    return [dx, dmean, dvar, dgamma, dbeta]


@rule("dl.layer_norm")
def _layer_norm(op, g, x, gamma, beta, y):
    axis, eps = _int(op, "axis"), _float(op, "epsilon")
    axes = tuple(range(axis % len(x.shape), len(x.shape)))
    lead = tuple(range(axes[0]))
    count = 1
    for a in axes:
        count *= x.shape[a]
    mu = O.mean(x, axis=axes, keepdims=True)
    centered = x - mu
    inv = O.rsqrt(O.mean(centered * centered, axis=axes, keepdims=True) + _scalar(x, eps))
    xhat = centered * inv
    gx = g * gamma
    dx = inv * (gx - O.mean(gx, axis=axes, keepdims=True)
                - xhat * O.mean(gx * xhat, axis=axes, keepdims=True))
    dgamma = O.sum(g * xhat, axis=lead) if lead else g * xhat
    dbeta = O.sum(g, axis=lead) if lead else g
    return [dx, dgamma, dbeta]


@rule("dl.constant")
def _constant(op, g, y):
    return []


# -- the transformation --------------------------------------------------------------

def _source(op):
    """(file, line, column) of `op`'s location, or None."""
    match = re.match(r'loc\("(.*)":(\d+):(\d+)\)', str(op.location))
    return (match.group(1), int(match.group(2)), int(match.group(3))) if match else None


def _location(op):
    """file:line of the user's code that made `op` (as dlc's other errors)."""
    text = str(op.location)
    match = re.match(r'loc\("(.*)":(\d+):\d+\)', text)
    return f"{match.group(1)}:{match.group(2)}" if match else text


def backward(trace, ops, output, wrt):
    """The gradients of `output` (a float scalar Tensor) with respect to
    `wrt` (Tensors), through `ops` (the dl ops that computed it, in order),
    emitted into `trace`. None for an argument the output does not use."""
    adjoints = {output.value: O.broadcast_to(trace.constant(np.ones((), output.dtype)), ())}
    for op in reversed(ops):
        results = list(op.results)
        grads = [adjoints.get(r) for r in results]
        if all(g is None for g in grads):
            continue
        name = op.operation.name
        fn = RULES.get(name)
        if fn is None:
            raise TraceError(f"{_location(op)}: dlc.grad: {name} has no derivative rule "
                             f"(differentiable so far: elementwise math, matmul, "
                             f"conv2d, pooling, normalizations, reductions, softmax, "
                             f"shape ops)")
        operands = [Tensor(v, trace) for v in op.operands]
        outs = [Tensor(r, trace) for r in results]
        if len(results) != 1:
            raise TraceError(f"{_location(op)}: dlc.grad: {name} has several results")
        # The backward ops are located at the forward op's source line.
        source = _source(op)
        if source is not None:
            with located(source):
                operand_grads = fn(op, grads[0], *operands, *outs)
        else:
            operand_grads = fn(op, grads[0], *operands, *outs)
        for value, grad in zip(op.operands, operand_grads):
            if grad is None or not dtypes.is_float(Tensor(value, trace).dtype):
                continue
            previous = adjoints.get(value)
            adjoints[value] = grad if previous is None else previous + grad
    return [adjoints.get(t.value) for t in wrt]


def _zeros(trace, like):
    if None in like.shape:
        return like * _scalar(like, 0.0)
    return O.broadcast_to(trace.constant(np.zeros((), like.dtype)), tuple(like.shape))


def value_and_grad(f, argnums=0, has_aux=False):
    """A function computing ``(f(*args), gradient)``: the gradient of the
    float scalar ``f(*args)`` with respect to argument ``argnums`` (an int),
    or a tuple of gradients (a tuple of ints). With ``has_aux``, ``f``
    returns ``(value, aux)`` and the result is ``((value, aux), gradient)``.
    Outside a trace it compiles itself (``dlc.jit``) per signature."""
    single = isinstance(argnums, int)
    positions = (argnums,) if single else tuple(argnums)
    if not positions or not all(isinstance(p, int) for p in positions):
        raise TypeError(f"dlc.value_and_grad: argnums must be an int or a tuple of ints, "
                        f"but got {argnums!r}")

    @functools.wraps(f)
    def transformed(*args, **kwargs):
        trace = current_trace()
        if trace is None:
            return compiled(*args, **kwargs)
        for p in positions:
            if p >= len(args) or p < -len(args):
                raise TypeError(f"dlc.grad: argnums {p} is out of range for "
                                f"{len(args)} positional arguments")
            if not isinstance(args[p], Tensor):
                raise TypeError(f"dlc.grad: argument {p} is {type(args[p]).__name__}, "
                                f"not an array: only array arguments are differentiated")
            if not dtypes.is_float(args[p].dtype):
                raise DTypeError(f"dlc.grad: argument {p} has dtype {args[p].dtype}; "
                                 f"only float arguments can be differentiated")
        start = len(trace.block.operations)
        out = f(*args, **kwargs)
        value, aux = (out if has_aux else (out, None))
        if not isinstance(value, Tensor) or value.shape != () or \
                not dtypes.is_float(value.dtype):
            what = f"{value.dtype}{list(value.shape)}" if isinstance(value, Tensor) \
                else type(value).__name__
            raise DTypeError(f"dlc.grad: the function must return a float scalar (a loss), "
                             f"but returned {what}")
        ops = list(trace.block.operations)[start:]
        wrt = [args[p] for p in positions]
        grads = backward(trace, ops, value, wrt)
        grads = [g if g is not None else _zeros(trace, t) for g, t in zip(grads, wrt)]
        grads = grads[0] if single else tuple(grads)
        return ((value, aux) if has_aux else value), grads

    compiled = _compiled_nested(transformed)
    return transformed


def _flatten(value, leaves):
    if isinstance(value, (tuple, list)):
        return (type(value), [_flatten(v, leaves) for v in value])
    leaves.append(value)
    return None


def _unflatten(structure, leaves):
    if structure is None:
        return next(leaves)
    kind, items = structure
    return kind(_unflatten(item, leaves) for item in items)


def _compiled_nested(fn):
    """``dlc.jit(fn)`` for a function returning nested tuples (value and
    gradients): compiled with its results flattened, rebuilt at each call."""
    from .jit import jit
    shape = {}

    @functools.wraps(fn)
    def flat(*args, **kwargs):
        leaves = []
        shape["structure"] = _flatten(fn(*args, **kwargs), leaves)
        return tuple(leaves)

    jitted = jit(flat)

    def call(*args, **kwargs):
        leaves = jitted(*args, **kwargs)
        return _unflatten(shape["structure"], iter(leaves))
    return call


def grad(f, argnums=0, has_aux=False):
    """The gradient of the float scalar ``f`` with respect to argument
    ``argnums`` (see :func:`value_and_grad`)."""
    inner = value_and_grad(f, argnums, has_aux)

    @functools.wraps(f)
    def gradient(*args, **kwargs):
        if current_trace() is None:
            return compiled(*args, **kwargs)
        value, grads = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    compiled = _compiled_nested(gradient)
    return gradient


# -- the pass form: python -m dlc.opt -p dl-autodiff -----------------------------

def autodiff_pass(op, pass_=None):
    """dl-autodiff: for each func.func marked ``dl.autodiff`` whose one
    result is a float scalar, adds ``@<name>_grad`` returning the value and
    its gradient with respect to every float argument (the rules above)."""
    for func in [child.operation for region in op.regions for block in region.blocks
                 for child in block.operations if child.operation.name == "func.func"]:
        if "dl.autodiff" not in func.attributes:
            continue
        with func.context, ir.Location.unknown():
            clone = func.clone(ip=ir.InsertionPoint.after(func))
            name = ir.StringAttr(func.attributes["sym_name"]).value
            clone.attributes["sym_name"] = ir.StringAttr.get(name + "_grad")
            del clone.attributes["dl.autodiff"]
            block = clone.regions[0].blocks[0]
            terminator = list(block.operations)[-1]
            results = list(terminator.operands)
            trace = Trace.attach(clone, block)
            if len(results) != 1:
                raise TraceError(f"dl-autodiff: @{name} must return one float scalar, "
                                 f"but returns {len(results)} values")
            terminator.erase()
            with trace:
                value = Tensor(results[0], trace)
                if value.shape != () or not dtypes.is_float(value.dtype):
                    raise DTypeError(f"dl-autodiff: @{name} must return a float scalar, "
                                     f"but returns {value.dtype}{list(value.shape)}")
                wrt = [Tensor(a, trace) for a in block.arguments
                       if dtypes.is_float(Tensor(a, trace).dtype)]
                forward = list(block.operations)
                grads = backward(trace, forward, value, wrt)
                grads = [g if g is not None else _zeros(trace, t) for g, t in zip(grads, wrt)]
                trace.finish([value] + grads)


def _register():
    from . import passes
    passes.PYTHON_PASSES["dl-autodiff"] = (
        autodiff_pass, "For each function marked dl.autodiff, add @<name>_grad returning "
        "its value and gradients (reverse mode)")


_register()
