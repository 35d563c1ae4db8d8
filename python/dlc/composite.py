"""dlc operations built from the core ones of :mod:`dlc.ops`.

Each is a numpy- or PyTorch-named function that traces into several `dl` ops
(as ``jax.nn`` builds its activations from ``jax.lax`` primitives), so the graph
passes and code generation see ops they already optimize: an ELU is a `where`
over an `exp`, which fuses into one loop; a cumulative sum is a matmul with a
constant triangular matrix; a transposed convolution is a convolution of the
zero-interleaved input with the flipped filter. Shapes are static here except
the leading (batch) dimension, which may be dynamic wherever the op works on
the other dimensions.
"""

import builtins
import numbers

import numpy as np

from . import dtypes
from .errors import DTypeError, ShapeError
from .ops import (_normalize_axis, _normalize_axes, _tensor, _where, abs, add, arange, astype,
                  broadcast_to, concatenate, conv2d, dim, divide, equal, exp, expand_dims,
                  greater, less, log, matmul, max, maximum, mean, minimum, multiply,
                  negative, pad, reshape, sqrt, subtract, sum, take, tanh, transpose,
                  where)

__all__ = [
    "reciprocal", "softplus", "softsign", "elu", "selu", "celu", "hard_sigmoid", "mish",
    "prelu", "flip", "tile", "cumsum", "take_along_axis", "gather_elements",
    "scatter_elements", "tril", "triu", "one_hot",
    "depth_to_space", "space_to_depth", "conv_transpose2d", "instance_norm", "group_norm",
    "rms_norm", "logsumexp", "prod", "cumprod", "top_k", "sort", "einsum",
]


def _float(op_name, x):
    x = _tensor(x, op_name)
    if not dtypes.is_float(x.dtype):
        raise DTypeError(f"{_where()}: dlc.{op_name} needs a floating-point operand, "
                         f"but got {x!r}; cast with .astype")
    return x


def _static_dims(op_name, x, axes):
    for a in axes:
        if x.shape[a] is None:
            raise ShapeError(f"{_where()}: dlc.{op_name} needs dimension {a} of {x!r} "
                             f"to be static")


# -- activations ------------------------------------------------------------------

def reciprocal(x):
    """Elementwise ``1 / x`` (floating point)."""
    x = _float("reciprocal", x)
    return divide(np.ones((), x.dtype), x)


def softplus(x, beta=1.0):
    """``log(1 + exp(beta * x)) / beta``, computed without overflow as
    ``max(y, 0) + log(1 + exp(-|y|))`` with ``y = beta * x``."""
    x = _float("softplus", x)
    y = x if beta == 1.0 else multiply(x, beta)
    result = add(maximum(y, 0.0), _log1p(exp(negative(abs(y)))))
    return result if beta == 1.0 else divide(result, beta)


def _log1p(t):
    """log(1 + t) accurate for tiny t (Goldberg's identity: the rounding of
    1 + t cancels in log(u) * t / (u - 1))."""
    u = add(t, 1.0)
    d = subtract(u, 1.0)
    return where(equal(d, 0.0), t, multiply(log(u), divide(t, where(equal(d, 0.0), 1.0, d))))


def softsign(x):
    """``x / (1 + |x|)``."""
    x = _float("softsign", x)
    return divide(x, add(abs(x), 1.0))


def elu(x, alpha=1.0):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    x = _float("elu", x)
    return where(greater(x, 0.0), x, multiply(subtract(exp(minimum(x, 0.0)), 1.0), alpha))


def selu(x, alpha=1.6732632423543772, scale=1.0507009873554805):
    """``scale * elu(x, alpha)`` (ONNX's and PyTorch's defaults)."""
    return multiply(elu(x, alpha), scale)


def celu(x, alpha=1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    x = _float("celu", x)
    negative_part = multiply(subtract(exp(divide(minimum(x, 0.0), alpha)), 1.0), alpha)
    return add(maximum(x, 0.0), minimum(negative_part, 0.0))


def hard_sigmoid(x, alpha=1.0 / 6.0, beta=0.5):
    """``clip(alpha * x + beta, 0, 1)`` (PyTorch's defaults; ONNX's are 0.2, 0.5)."""
    x = _float("hard_sigmoid", x)
    return minimum(maximum(add(multiply(x, alpha), beta), 0.0), 1.0)


def mish(x):
    """``x * tanh(softplus(x))``."""
    x = _float("mish", x)
    return multiply(x, tanh(softplus(x)))


def prelu(x, slope):
    """``x`` where non-negative, ``slope * x`` elsewhere; `slope` broadcasts
    against x (numpy broadcasting)."""
    x = _float("prelu", x)
    return where(less(x, 0.0), multiply(x, slope), x)


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x)))`` over `axis`, shifted by the maximum so that it
    does not overflow (an all ``-inf`` slice gives ``-inf``)."""
    x = _float("logsumexp", x)
    axes = _normalize_axes("logsumexp", axis, x.ndim)
    top = max(x, axis=tuple(axes), keepdims=True)
    finite = where(equal(abs(top), float("inf")), 0.0, top)
    total = sum(exp(subtract(x, finite)), axis=tuple(axes), keepdims=True)
    result = add(log(total), finite)
    if not keepdims:
        result = reshape(result, tuple(-1 if d is None else d
                                       for i, d in enumerate(x.shape) if i not in axes))
    return result


# -- shapes -------------------------------------------------------------------------

def flip(x, axis=None):
    """Reverses the order of elements along `axis` (all axes when None), like
    numpy.flip."""
    x = _tensor(x, "flip")
    axes = _normalize_axes("flip", axis, x.ndim)
    key = tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim))
    return x[key]


def tile(x, reps):
    """numpy.tile: `x` repeated `reps[i]` times along dimension i (a
    broadcast of x with new size-`reps` axes, then a reshape)."""
    x = _tensor(x, "tile")
    reps = (reps,) if isinstance(reps, numbers.Integral) else tuple(int(r) for r in reps)
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"{_where()}: dlc.tile: repetitions must be >= 0, got {reps}")
    ndim = builtins.max(x.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    x = reshape(x, (1,) * (ndim - x.ndim) + tuple(-1 if d is None else d for d in x.shape))
    _static_dims("tile", x, [i for i, r in enumerate(reps) if r != 1])
    interleaved, target, final = [], [], []
    for r, d in zip(reps, x.shape):
        interleaved += [1, -1 if d is None else d]
        target += [r, -1 if d is None else d]
        final.append(-1 if d is None else r * d)
    return reshape(broadcast_to(reshape(x, tuple(interleaved)), tuple(target)), tuple(final))


def _moved_last(x, axis):
    perm = [i for i in range(x.ndim) if i != axis] + [axis]
    back = list(np.argsort(perm))
    return transpose(x, perm), back


def cumsum(x, axis=0, exclusive=False, reverse=False):
    """Cumulative sum along `axis`, like numpy.cumsum (with ONNX's
    `exclusive`: each sum leaves its own element out, and `reverse`: sums run
    from the end). A matmul with a constant 0/1 triangular matrix, so the
    register-tiled GEMM computes it."""
    x = _tensor(x, "cumsum")
    if x.dtype == np.bool_:
        raise DTypeError(f"{_where()}: dlc.cumsum does not accept the bool operand {x!r}")
    if x.ndim == 0:
        return x
    axis = _normalize_axis("cumsum", axis, x.ndim)
    n = x.shape[axis]
    if n is None:  # a run-time length: the triangle is built at run time
        n = dim(x, axis)
        i = expand_dims(arange(n), 1)
        j = expand_dims(arange(n), 0)
    else:
        i, j = np.indices((n, n))
    # y[..., j] = sum_i x[..., i] * m[i, j]
    if reverse:
        mask = (i > j) if exclusive else (i >= j)
    else:
        mask = (i < j) if exclusive else (i <= j)
    moved, back = _moved_last(x, axis)
    sizes = [dim(moved, d) for d in range(moved.ndim)]
    flat = reshape(moved, (-1, n))
    y = matmul(flat, mask.astype(x.dtype))
    y = reshape(y, tuple(sizes) if None in moved.shape else moved.shape)
    return transpose(y, back)


def _iota(shape, axis):
    return np.indices(shape, dtype=np.int64)[axis] if shape else np.zeros((), np.int64)


def take_along_axis(x, indices, axis):
    """numpy.take_along_axis: ``result[..., i, ...] = x[..., indices[..., i,
    ...], ...]`` along `axis` (negative indices count from the end). The
    gather of one element per index from the flattened x; static shapes."""
    x = _tensor(x, "take_along_axis")
    indices = _tensor(indices, "take_along_axis")
    if indices.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise DTypeError(f"{_where()}: dlc.take_along_axis: indices must be int32 or "
                         f"int64, but got {indices!r}")
    if indices.ndim != x.ndim:
        raise ShapeError(f"{_where()}: dlc.take_along_axis: indices {indices!r} must "
                         f"have the rank of {x!r}")
    axis = _normalize_axis("take_along_axis", axis, x.ndim)
    _static_dims("take_along_axis", x, [axis])
    if None in x.shape or None in indices.shape:
        return _take_along_axis_selecting(x, indices, axis)
    for d, (a, b) in enumerate(zip(x.shape, indices.shape)):
        if d != axis and b not in (a, 1) and a != 1:
            raise ShapeError(f"{_where()}: dlc.take_along_axis: indices {indices!r} do "
                             f"not broadcast against {x!r} outside axis {axis}")
    out_shape = tuple(indices.shape[d] if d == axis else
                      builtins.max(x.shape[d], indices.shape[d]) for d in range(x.ndim))
    indices = broadcast_to(astype(indices, np.int64), out_shape)
    n = x.shape[axis]
    indices = where(less(indices, 0), add(indices, n), indices)
    strides = np.cumprod((x.shape[1:] + (1,))[::-1])[::-1]
    linear = multiply(indices, int(strides[axis]))
    offsets = np.zeros(out_shape, np.int64)
    for d in range(x.ndim):
        if d != axis:
            offsets = offsets + _iota(out_shape, d) * int(strides[d])
    linear = add(linear, offsets)
    return take(reshape(x, (-1,)), linear)


def _take_along_axis_selecting(x, indices, axis):
    """take_along_axis where a dimension other than `axis` is dynamic (the
    batch: the flat gather's offsets would depend on it): each index selects
    its element from a one-hot comparison with positions 0..n-1 along a new
    dimension after `axis`, summed away (one term is the element, the others
    exact zeros). O(indices x n) work: for the short axes of sort and top_k."""
    n = x.shape[axis]
    index = astype(indices, np.int64)
    index = where(less(index, 0), add(index, n), index)
    positions = np.arange(n, dtype=np.int64).reshape((n,) + (1,) * (x.ndim - 1 - axis))
    hits = equal(expand_dims(index, axis + 1), positions)      # [..., m, n, ...]
    values = x if x.dtype != np.bool_ else astype(x, np.int8)
    picked = where(hits, expand_dims(values, axis), np.zeros((), values.dtype))
    result = sum(picked, axis=axis + 1)
    return result if x.dtype != np.bool_ else astype(result, np.bool_)


def _indexed_along(op_name, x, indices, axis, batch=False):
    """(x, indices, axis) of gather_elements/scatter_elements: tensors of one
    rank and static shapes (with `batch`, but for a dynamic leading dimension
    both have and `axis` is not, and the indices' size along `axis`), the axis
    normalized."""
    x = _tensor(x, op_name)
    indices = _tensor(indices, op_name)
    if indices.ndim != x.ndim:
        raise ShapeError(f"{_where()}: dlc.{op_name}: indices {indices!r} must "
                         f"have the rank of {x!r}")
    axis = _normalize_axis(op_name, axis, x.ndim)
    first = 1 if batch and axis != 0 and x.shape[0] is None and indices.shape[0] is None \
        else 0
    _static_dims(op_name, x, range(first, x.ndim))
    # A gather's indices may have a dynamic size along the axis (how many to
    # take: torch's gather of a sequence's positions).
    _static_dims(op_name, indices, [d for d in range(first, indices.ndim)
                                    if not (batch and d == axis)])
    return x, indices, axis


def gather_elements(x, indices, axis):
    """``torch.gather`` / ONNX ``GatherElements``: ``result[i][j] =
    x[indices[i][j]][j]`` along `axis`; the result has the indices' shape,
    which may be smaller than `x`'s outside `axis` (only the leading part of
    those dimensions is read; no broadcasting, unlike numpy's
    take_along_axis)."""
    x, indices, axis = _indexed_along("gather_elements", x, indices, axis, batch=True)
    key = []
    for d, (a, b) in enumerate(zip(x.shape, indices.shape)):
        if d != axis and a is not None and b > a:   # a None is the shared batch
            raise ShapeError(f"{_where()}: dlc.gather_elements: indices {indices!r} are "
                             f"larger than {x!r} in dimension {d}")
        key.append(slice(None) if d == axis or a == b else slice(0, b))
    if any(k != slice(None) for k in key):
        x = x[tuple(key)]
    return take_along_axis(x, indices, axis)


def scatter_elements(x, indices, updates, axis=0, reduction="none"):
    """``torch.scatter`` / ``scatter_reduce`` / ONNX ``ScatterElements``:
    `x` with ``result[indices[i][j]][j] = updates[i][j]`` along `axis` (or
    combined with it: `reduction` "add", "mul", "max", "min"); `indices` and
    `updates` have one shape, at most `x`'s outside `axis`. Where two
    updates write one place without a reduction, their sum is written (the
    order of such writes is undefined in torch and ONNX alike). Static
    shapes; a one-hot selection of updates x elements (at most 2**26)."""
    x, indices, axis = _indexed_along("scatter_elements", x, indices, axis)
    shape, ishape = tuple(x.shape), tuple(indices.shape)
    updates = _tensor(updates, "scatter_elements")
    if tuple(updates.shape) != ishape:
        updates = broadcast_to(updates, ishape)
    if updates.dtype != x.dtype:
        updates = astype(updates, x.dtype)
    indices = astype(indices, np.int64)
    indices = where(less(indices, 0), add(indices, shape[axis]), indices)
    strides = np.cumprod((shape[1:] + (1,))[::-1])[::-1].astype(np.int64)
    positions = multiply(indices, int(strides[axis]))
    offsets = np.zeros(ishape, np.int64)
    grid = np.indices(ishape, dtype=np.int64)
    for d in range(len(shape)):
        if d != axis:
            offsets = offsets + grid[d] * int(strides[d])
    return _scatter_flat(x, add(positions, offsets), updates, reduction)


def _scatter_flat(x, positions, updates, reduction="none"):
    """x (flattened) with `updates` written at the flat `positions` (same
    shape as updates): a [updates, elements] one-hot selection."""
    from .ops import min as _min
    shape = tuple(x.shape)
    total = int(np.prod(shape, dtype=np.int64))
    count = int(np.prod(positions.shape, dtype=np.int64))
    if total * count > 1 << 26:
        raise ValueError(f"{_where()}: scattering {count} updates into {total} elements "
                         f"is beyond dlc's one-hot scatter (at most 2**26 pairs)")
    flat = reshape(x, (-1,))
    hit = equal(reshape(positions, (count, 1)), np.arange(total, dtype=np.int64))
    values = reshape(updates, (count, 1))
    dtype = x.dtype
    written = reshape(max(astype(hit, np.int8), axis=0), (total,))
    written = greater(written, np.zeros((), np.int8))
    if reduction in ("none", "add"):
        summed = sum(where(hit, values, np.zeros((), dtype)), axis=0)
        result = where(written, summed, flat) if reduction == "none" else add(flat, summed)
    elif reduction == "mul":
        result = multiply(flat, prod(where(hit, values, np.ones((), dtype)), axis=0))
    elif reduction in ("max", "min"):
        if dtypes.is_float(dtype):
            fill = np.array(-np.inf if reduction == "max" else np.inf, dtype)
        else:
            info = np.iinfo(dtype)
            fill = np.array(info.min if reduction == "max" else info.max, dtype)
        pick = max if reduction == "max" else _min
        combine = maximum if reduction == "max" else minimum
        best = pick(where(hit, values, fill), axis=0)
        result = where(written, combine(flat, best), flat)
    else:
        raise ValueError(f"{_where()}: scatter reduction {reduction!r} is not none, add, "
                         f"mul, max or min")
    return reshape(result, shape)


def _triangle(x, k, upper):
    x = _tensor(x, "triu" if upper else "tril")
    if x.ndim < 2:
        raise ShapeError(f"{_where()}: dlc.{'triu' if upper else 'tril'} needs at least "
                         f"2 dimensions, but got {x!r}")
    _static_dims("triu" if upper else "tril", x, [x.ndim - 2, x.ndim - 1])
    rows, cols = x.shape[-2:]
    keep = np.triu(np.ones((rows, cols), bool), k) if upper else \
        np.tril(np.ones((rows, cols), bool), k)
    return where(keep, x, np.zeros((), x.dtype))


def tril(x, k=0):
    """numpy.tril: elements below and on diagonal `k` of the last two
    dimensions, zeros above."""
    return _triangle(x, int(k), upper=False)


def triu(x, k=0):
    """numpy.triu: elements on and above diagonal `k`, zeros below."""
    return _triangle(x, int(k), upper=True)


def one_hot(indices, depth, axis=-1, on_value=1.0, off_value=0.0, dtype=np.float32):
    """One-hot encoding (ONNX's OneHot, ``torch.nn.functional.one_hot``): a new
    dimension of size `depth` at `axis`, `on_value` at each index (negative
    indices count from the end) and `off_value` elsewhere; indices out of
    range give an all-`off_value` row."""
    indices = _tensor(indices, "one_hot")
    if indices.dtype.kind not in "iu" and not dtypes.is_float(indices.dtype):
        raise DTypeError(f"{_where()}: dlc.one_hot: indices must be numbers, but got "
                         f"{indices!r}")
    depth = int(depth)
    axis = _normalize_axis("one_hot", axis, indices.ndim + 1)
    if dtypes.is_float(indices.dtype):
        indices = astype(indices, np.int64)
    indices = astype(indices, np.int64)
    indices = where(less(indices, 0), add(indices, depth), indices)
    expanded = expand_dims(indices, axis)
    positions = np.arange(depth, dtype=np.int64).reshape(
        [depth if i == axis else 1 for i in range(indices.ndim + 1)])
    hot = equal(expanded, positions)
    dtype = dtypes.numpy_dtype(dtype)
    return where(hot, np.asarray(on_value, dtype), np.asarray(off_value, dtype))


def depth_to_space(x, block_size, mode="DCR"):
    """ONNX DepthToSpace / PyTorch pixel_shuffle (mode "CRD") of an NCHW tensor:
    [N, C*b*b, H, W] -> [N, C, H*b, W*b]."""
    x = _tensor(x, "depth_to_space")
    if x.ndim != 4 or mode not in ("DCR", "CRD"):
        raise ShapeError(f"{_where()}: dlc.depth_to_space takes a 4-D NCHW tensor and "
                         f"mode 'DCR' or 'CRD', but got {x!r}, {mode!r}")
    b = int(block_size)
    n, c, h, w = x.shape
    if c % (b * b):
        raise ShapeError(f"{_where()}: dlc.depth_to_space: {c} channels of {x!r} do "
                         f"not divide by block_size**2 = {b * b}")
    n = -1 if n is None else n
    if mode == "DCR":
        y = transpose(reshape(x, (n, b, b, c // (b * b), h, w)), (0, 3, 4, 1, 5, 2))
    else:
        y = transpose(reshape(x, (n, c // (b * b), b, b, h, w)), (0, 1, 4, 2, 5, 3))
    return reshape(y, (n, c // (b * b), h * b, w * b))


def space_to_depth(x, block_size, mode="DCR"):
    """ONNX SpaceToDepth of an NCHW tensor: [N, C, H, W] -> [N, C*b*b, H/b, W/b]
    (mode "CRD": channel-major output, PyTorch's pixel_unshuffle)."""
    x = _tensor(x, "space_to_depth")
    if x.ndim != 4:
        raise ShapeError(f"{_where()}: dlc.space_to_depth takes a 4-D NCHW tensor, "
                         f"but got {x!r}")
    b = int(block_size)
    n, c, h, w = x.shape
    if h % b or w % b:
        raise ShapeError(f"{_where()}: dlc.space_to_depth: the {h}x{w} image of {x!r} "
                         f"does not divide into {b}x{b} blocks")
    n = -1 if n is None else n
    order = (0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4)
    y = transpose(reshape(x, (n, c, h // b, b, w // b, b)), order)
    return reshape(y, (n, c * b * b, h // b, w // b))


def conv_transpose2d(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 2-D convolution of NCHW `x` with `w` of shape
    [C_in, C_out / groups, KH, KW], as ``torch.nn.functional.conv_transpose2d``
    (`padding` an int, a pair or (top, bottom, left, right)). Computed as the
    convolution of x with zeros inserted between its elements (stride - 1 of
    them) and padded by ``dilation * (k - 1) - padding``, with the filter
    flipped and its channel axes swapped."""
    x, w = _float("conv_transpose2d", x), _float("conv_transpose2d", w)
    if x.ndim != 4 or w.ndim != 4:
        raise ShapeError(f"{_where()}: dlc.conv_transpose2d: input and filter must be "
                         f"4-D, but got {x!r} and {w!r}")
    pair = lambda v: (int(v), int(v)) if isinstance(v, numbers.Integral) else tuple(int(a) for a in v)  # noqa: E731
    sh, sw = pair(stride)
    dh, dw = pair(dilation)
    oph, opw = pair(output_padding)
    pads = pair(padding)
    if len(pads) == 2:
        pads = (pads[0], pads[0], pads[1], pads[1])
    groups = int(groups)
    n, c, h, width = x.shape
    cin, cout_g, kh, kw = w.shape
    if cin != c or c % groups:
        raise ShapeError(f"{_where()}: dlc.conv_transpose2d: the filter {w!r} does not "
                         f"match the {c} input channels of {x!r} with {groups} groups")
    n_ = -1 if n is None else n
    if sh > 1 or sw > 1:
        y = reshape(x, (n_, c, h, 1, width, 1))
        y = pad(y, [(0, 0), (0, 0), (0, 0), (0, sh - 1), (0, 0), (0, sw - 1)])
        y = reshape(y, (n_, c, h * sh, width * sw))
        y = y[:, :, :(h - 1) * sh + 1, :(width - 1) * sw + 1]
    else:
        y = x
    top, bottom = dh * (kh - 1) - pads[0], dh * (kh - 1) - pads[1] + oph
    left, right = dw * (kw - 1) - pads[2], dw * (kw - 1) - pads[3] + opw
    # Negative paddings (padding larger than the kernel's reach) crop instead.
    crop = [builtins.max(-top, 0), builtins.max(-bottom, 0),
            builtins.max(-left, 0), builtins.max(-right, 0)]
    y = pad(y, [(0, 0), (0, 0), (builtins.max(top, 0), builtins.max(bottom, 0)),
                (builtins.max(left, 0), builtins.max(right, 0))])
    if builtins.any(crop):
        y = y[:, :, crop[0]:y.shape[2] - crop[1], crop[2]:y.shape[3] - crop[3]]
    # [C_in, C_out/g, KH, KW] -> [C_out, C_in/g, KH, KW], flipped spatially.
    filt = reshape(w, (groups, cin // groups, cout_g, kh, kw))
    filt = reshape(transpose(filt, (0, 2, 1, 3, 4)), (groups * cout_g, cin // groups, kh, kw))
    filt = filt[:, :, ::-1, ::-1]
    return conv2d(y, filt, b, stride=1, padding=0, dilation=(dh, dw), groups=groups)


# -- normalization ------------------------------------------------------------------

def _normalize(x, axes, eps):
    centered = subtract(x, mean(x, axis=axes, keepdims=True))
    var = mean(multiply(centered, centered), axis=axes, keepdims=True)
    return multiply(centered, divide(1.0, sqrt(add(var, eps))))


def _channel_affine(y, scale, bias, ndim):
    shape = (-1,) + (1,) * (ndim - 2)
    if scale is not None:
        y = multiply(y, reshape(_tensor(scale, "normalization"), shape))
    if bias is not None:
        y = add(y, reshape(_tensor(bias, "normalization"), shape))
    return y


def instance_norm(x, scale=None, bias=None, eps=1e-5):
    """Instance normalization of [N, C, ...]: each (n, c) slice normalized over
    its spatial dimensions, then ``* scale[c] + bias[c]``."""
    x = _float("instance_norm", x)
    if x.ndim < 3:
        raise ShapeError(f"{_where()}: dlc.instance_norm needs [N, C, ...], but got {x!r}")
    y = _normalize(x, tuple(range(2, x.ndim)), eps)
    return _channel_affine(y, scale, bias, x.ndim)


def group_norm(x, num_groups, scale=None, bias=None, eps=1e-5):
    """Group normalization of [N, C, ...] (C divisible by `num_groups`): each
    group of C / num_groups channels normalized over its channels and spatial
    dimensions, then ``* scale[c] + bias[c]``."""
    x = _float("group_norm", x)
    if x.ndim < 2 or x.shape[1] is None or x.shape[1] % int(num_groups):
        raise ShapeError(f"{_where()}: dlc.group_norm: the channels of {x!r} do not "
                         f"divide into {num_groups} groups")
    g = int(num_groups)
    # run-time sizes (a dynamic batch or image) as dlc.Size values
    shape = tuple(dim(x, axis) if d is None else d for axis, d in enumerate(x.shape))
    rest = x.shape[1:]
    if None not in rest:
        # the group's size is static
        grouped = reshape(x, (shape[0], g, int(np.prod(rest, dtype=np.int64)) // g))
    else:
        grouped = reshape(x, (shape[0], g, -1))
    y = reshape(_normalize(grouped, (2,), eps), shape)
    return _channel_affine(y, scale, bias, x.ndim)


def rms_norm(x, scale=None, axis=-1, eps=1e-6):
    """``x / sqrt(mean(x**2 over axis..-1) + eps) * scale`` (RMSNorm)."""
    x = _float("rms_norm", x)
    axis = _normalize_axis("rms_norm", axis, x.ndim)
    axes = tuple(range(axis, x.ndim))
    y = multiply(x, divide(1.0, sqrt(add(mean(multiply(x, x), axis=axes, keepdims=True),
                                             eps))))
    return y if scale is None else multiply(y, scale)


# -- products, top-k, einsum ----------------------------------------------------------

def _flatten_axes_last(x, axes):
    """x with `axes` moved last and merged into one (static sizes)."""
    keep = [i for i in range(x.ndim) if i not in axes]
    moved = transpose(x, keep + list(axes)) if keep + list(axes) != list(range(x.ndim)) else x
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    return reshape(moved, tuple(-1 if x.shape[i] is None else x.shape[i] for i in keep) + (n,)), n


def prod(x, axis=None, keepdims=False):
    """Product over `axis` (int, tuple or None for all), like numpy.prod: a
    tree of elementwise products of halves (log2 of the reduced size
    steps); an empty axis gives 1."""
    x = _tensor(x, "prod")
    axes = _normalize_axes("prod", axis, x.ndim)
    _static_dims("prod", x, axes)
    out_shape = tuple(1 if i in axes else (-1 if d is None else d)
                      for i, d in enumerate(x.shape)) if keepdims else \
        tuple(-1 if d is None else d for i, d in enumerate(x.shape) if i not in axes)
    if not axes:
        return x
    y, n = _flatten_axes_last(x, axes)
    if n == 0:
        return broadcast_to(np.ones((), x.dtype), out_shape) if None not in x.shape else \
            add(multiply(sum(y, axis=-1), 0), np.ones((), x.dtype))
    while n > 1:
        half = n // 2
        product = multiply(y[..., :half], y[..., half:2 * half])
        y = concatenate([product, y[..., 2 * half:]], axis=-1) if n % 2 else product
        n = half + n % 2
    return reshape(y, out_shape)


def cumprod(x, axis=0, exclusive=False, reverse=False):
    """Cumulative product along `axis`, like numpy.cumprod (with ONNX's
    `exclusive` and `reverse`): log2(n) steps of products with the shifted
    partial products (Hillis-Steele)."""
    x = _tensor(x, "cumprod")
    if x.ndim == 0:
        return x
    axis = _normalize_axis("cumprod", axis, x.ndim)
    _static_dims("cumprod", x, [axis])
    n = x.shape[axis]
    if reverse:
        x = flip(x, axis)
    ones_shape = lambda k: tuple(k if i == axis else (1 if d is None else d)  # noqa: E731
                                 for i, d in enumerate(x.shape))

    def shifted(y, k):
        key = tuple(slice(0, n - k) if i == axis else slice(None) for i in range(x.ndim))
        ones = np.ones(ones_shape(k), x.dtype)
        if None in x.shape:
            ones = broadcast_to(ones, tuple(-1 if d is None else (k if i == axis else d)
                                            for i, d in enumerate(x.shape)))
        return concatenate([ones, y[key]], axis=axis)
    y = shifted(x, 1) if exclusive and n else x
    k = 1
    while k < n:
        y = multiply(y, shifted(y, k))
        k *= 2
    return flip(y, axis) if reverse else y


def top_k(x, k, axis=-1, largest=True):
    """The `k` largest (or smallest) elements along `axis`, sorted, and their
    int64 indices; ties go to the lower index (as ``torch.topk`` and ONNX
    TopK). k passes of arg-max and masking: meant for small k. Integers are
    compared as float64 (exact below 2**53)."""
    x = _tensor(x, "top_k")
    axis = _normalize_axis("top_k", axis, x.ndim)
    _static_dims("top_k", x, [axis])
    k = int(k)
    n = x.shape[axis]
    if not 0 <= k <= n:
        raise ShapeError(f"{_where()}: dlc.top_k: k = {k} is out of range for dimension "
                         f"{axis} of {x!r}")
    work = x if dtypes.is_float(x.dtype) else astype(x, np.float64)
    if not largest:
        work = negative(work)
    fill = np.array(-np.inf, work.dtype)
    positions = np.arange(n, dtype=np.int64).reshape([n if i == axis else 1
                                                      for i in range(x.ndim)])
    values, indices = [], []
    from .ops import argmax
    for _ in range(k):
        index = argmax(work, axis=axis, keepdims=True)
        values.append(take_along_axis(x, index, axis))
        indices.append(index)
        work = where(equal(positions, index), fill, work)
    if not values:
        shape = tuple(0 if i == axis else d for i, d in enumerate(x.shape))
        return np.zeros(shape, x.dtype), np.zeros(shape, np.int64)
    return concatenate(values, axis=axis), concatenate(indices, axis=axis)


def sort(x, axis=-1, descending=False):
    """`x` sorted along `axis`, and the int64 indices that sort it (stable:
    equal elements keep their order). Each element's rank is counted with
    one n x n comparison and the permutation read back with another: O(n²)
    work in two fused ops, no data-dependent control (meant for the short
    axes models sort, such as the token-expert pairs of a mixture of
    experts' routing; not for long ones)."""
    x = _tensor(x, "sort")
    axis = _normalize_axis("sort", axis, x.ndim)
    n = x.shape[axis]
    last = x.ndim - 1
    order = [d for d in range(x.ndim) if d != axis] + [axis]
    moved = transpose(x, order) if axis != last else x
    mine = expand_dims(moved, -1)                    # (..., n_i, 1)
    theirs = expand_dims(moved, -2)                  # (..., 1, n_j)
    before = greater(mine, theirs) if not descending else less(mine, theirs)
    if n is None:  # a run-time length: positions counted at run time
        positions = arange(dim(x, axis))
        i, j = expand_dims(positions, 1), expand_dims(positions, 0)
    else:
        i = np.arange(n, dtype=np.int64).reshape(n, 1)
        j = np.arange(n, dtype=np.int64).reshape(1, n)
    tie_before = where(less(j, i), equal(mine, theirs), np.zeros((), bool))
    rank = sum(astype(before, np.int64), axis=-1) + sum(astype(tie_before, np.int64), axis=-1)
    # indices[..., r] = the i whose rank is r
    hits = equal(expand_dims(rank, -2), i)           # (..., n_r, n_i)
    indices = sum(where(hits, j, np.zeros((), np.int64)), axis=-1)
    if n is None:  # values read with the same one-hot selection (exact)
        values = sum(where(hits, expand_dims(moved, -2), np.zeros((), moved.dtype)), axis=-1)
    else:
        values = take_along_axis(moved, indices, -1)
    if axis != last:
        back = list(np.argsort(order))
        values, indices = transpose(values, back), transpose(indices, back)
    return values, indices


def einsum(subscripts, *operands):
    """numpy.einsum for explicit and implicit subscripts (``"ij,jk->ik"``,
    ``"bij,bjk"``, ``"...ii->...i"``): repeated labels of one operand take
    its diagonal, labels of one operand not needed later are summed, and
    each pair of operands becomes one batched matmul."""
    if not isinstance(subscripts, str):
        raise TypeError(f"{_where()}: dlc.einsum: subscripts must be a string, got "
                        f"{subscripts!r}")
    tensors = [_tensor(t, "einsum") for t in operands]
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(tensors):
        raise ValueError(f"{_where()}: dlc.einsum: {subscripts!r} has {len(terms)} "
                         f"operand(s), but {len(tensors)} were given")
    # Expand "..." into upper-case labels (einsum labels are letters).
    ellipsis_rank = builtins.max([t.ndim - (len(term) - 3) for term, t in zip(terms, tensors)
                                  if "..." in term] or [0])
    spare = [chr(c) for c in range(ord("A"), ord("Z") + 1) if chr(c) not in spec]
    dots = "".join(spare[:ellipsis_rank])
    labels = []
    for term, t in zip(terms, tensors):
        if "..." in term:
            own = t.ndim - (len(term) - 3)
            term = term.replace("...", dots[ellipsis_rank - own:])
        if len(term) != t.ndim:
            raise ShapeError(f"{_where()}: dlc.einsum: term {term!r} does not match "
                             f"{t!r}")
        labels.append(term)
    if arrow:
        output = output.replace("...", dots)
    else:
        counts = {}
        for term in labels:
            for c in term:
                counts[c] = counts.get(c, 0) + 1
        output = dots + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in dots))
    sizes = {}
    for term, t in zip(labels, tensors):
        for c, d in zip(term, t.shape):
            if d is None:
                raise ShapeError(f"{_where()}: dlc.einsum needs static shapes, got {t!r}")
            if sizes.get(c, d) != d and d != 1 and sizes[c] != 1:
                raise ShapeError(f"{_where()}: dlc.einsum: label {c!r} has sizes "
                                 f"{sizes[c]} and {d}")
            sizes[c] = builtins.max(sizes.get(c, d), d)
    pairs = [_einsum_diagonal(t, term) for t, term in zip(tensors, labels)]

    def needed_after(index):
        later = set(output)
        for _, term in pairs[index + 1:]:
            later.update(term)
        return later
    pairs[0] = _einsum_reduce(*pairs[0], needed_after(0))
    acc, acc_labels = pairs[0]
    for index in range(1, len(pairs)):
        other, other_labels = _einsum_reduce(*pairs[index], needed_after(index) | set(acc_labels))
        keep = needed_after(index)
        acc, acc_labels = _einsum_pair(acc, acc_labels, other, other_labels, keep, sizes)
    acc, acc_labels = _einsum_reduce(acc, acc_labels, set(output))
    if sorted(acc_labels) != sorted(output):
        raise ValueError(f"{_where()}: dlc.einsum: output labels {output!r} are not in "
                         f"the operands of {subscripts!r}")
    perm = [acc_labels.index(c) for c in output]
    return transpose(acc, perm) if perm != list(range(len(perm))) else acc


def _einsum_diagonal(t, term):
    """(t, term) with each repeated label of term reduced to its diagonal."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        i = term.index(c)
        j = term.index(c, i + 1)
        n = t.shape[i]
        mask = np.eye(n, dtype=bool).reshape([n if a in (i, j) else 1 for a in range(t.ndim)])
        t = sum(where(mask, t, np.zeros((), t.dtype)), axis=j)
        term = term[:j] + term[j + 1:]
    return t, term


def _einsum_reduce(t, term, keep):
    axes = tuple(i for i, c in enumerate(term) if c not in keep)
    if axes:
        t = sum(t, axis=axes)
        term = "".join(c for c in term if c in keep)
    return t, term


def _einsum_pair(a, la, b, lb, keep, sizes):
    batch = [c for c in la if c in lb and c in keep]
    contracted = [c for c in la if c in lb and c not in keep]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]
    a = transpose(a, [la.index(c) for c in batch + left + contracted])
    b = transpose(b, [lb.index(c) for c in batch + contracted + right])
    size = lambda cs, t, start: int(np.prod([t.shape[start + i] for i in range(len(cs))],  # noqa: E731
                                            dtype=np.int64))
    nb = len(batch)
    bshape = [builtins.max(a.shape[i], b.shape[i]) for i in range(nb)]
    a2 = reshape(a, tuple(a.shape[:nb]) + (size(left, a, nb), size(contracted, a, nb + len(left))))
    b2 = reshape(b, tuple(b.shape[:nb]) + (size(contracted, b, nb), size(right, b, nb + len(contracted))))
    y = matmul(a2, b2)
    shape = tuple(bshape) + tuple(a.shape[nb:nb + len(left)]) + \
        tuple(b.shape[nb + len(contracted):])
    return reshape(y, shape), "".join(batch + left + right)
