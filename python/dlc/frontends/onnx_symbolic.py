"""Shape computations on dynamic dimensions in ONNX graphs.

ONNX computes shapes with tensor operators: ``Shape`` of a tensor, then
``Gather``/``Slice``/``Concat``/``Mul``... on the result, into ``Reshape``,
``Expand``, ``Range`` or ``ConstantOfShape``. Where every dimension is static
the importer folds all of it at import time (numpy). Where a dimension is
dynamic (a symbolic ``dim_param`` made dynamic by ``from_onnx(...,
dynamic_dims=True)``), ``Shape`` gives a :class:`SymInts`: an int64 vector
(or scalar) whose entries are ints or run-time sizes (:class:`dlc.Size`).
The converters here compute on it entry by entry, as the importer's folding
does on numpy arrays, and hand the sizes to the ops that take them (reshape,
broadcast_to, slicing, arange). A SymInts read by any other operator (the
data of an Add with a tensor, say) becomes a traced int64 tensor first.
"""

import builtins
import numbers

import numpy as np

from .. import ops as D
from ..tracing import Size, Tensor

__all__ = ["SymInts", "SYMBOLIC", "materialize", "shape_of"]


class SymInts:
    """An int64 vector (or, with `scalar`, a 0-d value) of ints and
    :class:`dlc.Size` entries."""

    dtype = np.dtype(np.int64)

    def __init__(self, items, scalar=False):
        self.items = list(items)
        self.scalar = scalar
        assert not scalar or len(self.items) == 1

    @property
    def shape(self):
        return () if self.scalar else (len(self.items),)

    @property
    def ndim(self):
        return 0 if self.scalar else 1

    def __repr__(self):
        return f"SymInts({self.items!r}{', scalar' if self.scalar else ''})"


def materialize(value):
    """A SymInts as a traced int64 tensor (other values unchanged)."""
    if not isinstance(value, SymInts):
        return value
    if value.scalar:
        return D.asarray(D.size_tensor(value.items[0]))
    parts = [D.reshape(D.asarray(D.size_tensor(item)), (1,)) for item in value.items]
    return D.concatenate(parts, axis=0) if parts else D.asarray(np.zeros(0, np.int64))


def shape_of(value):
    """The shape of a tensor as a SymInts (an int per static dimension, a
    Size per dynamic one), or a numpy array when every dimension is static."""
    shape = tuple(value.shape)
    if None not in shape:
        return np.array(shape, np.int64)
    return SymInts([D.dim(value, axis) if size is None else size
                    for axis, size in enumerate(shape)])


def _items(value):
    """(entries, scalar) of a SymInts or a small integer numpy array; None for
    anything else (a traced tensor, floats)."""
    if isinstance(value, SymInts):
        return list(value.items), value.scalar
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu" and value.ndim <= 1:
        return [int(v) for v in value.reshape(-1)], value.ndim == 0
    return None


def _result(items, scalar=False):
    """SymInts where an entry is a Size, else a numpy int64 array."""
    if builtins.any(isinstance(i, Size) for i in items):
        return SymInts(items, scalar)
    array = np.array(items, np.int64)
    return array.reshape(()) if scalar else array


# -- converters: each returns its result, or None to let the input become a
# -- traced tensor and the ordinary converter run -------------------------------------

def _shape(node):
    x = node.input(0)
    if isinstance(x, SymInts):
        return np.array(x.shape, np.int64)
    value = shape_of(x)
    start, end = node.attr("start", 0), node.attr("end")
    items = list(value.items) if isinstance(value, SymInts) else [int(v) for v in value]
    return _result(items[start:end] if end is not None else items[start:])


def _squeeze(node):
    got = _items(node.input(0))
    if got is None or len(got[0]) != 1:
        return None
    return _result(got[0], scalar=True)


def _unsqueeze(node):
    got = _items(node.input(0))
    if got is None or not got[1]:
        return None
    return _result(got[0])


def _concat(node):
    items = []
    for value in node.values:
        if value is None:
            continue
        got = _items(value)
        if got is None:
            return None
        items += got[0]
    return _result(items)


def _gather(node):
    got, indices = _items(node.input(0)), node.input(1)
    if got is None or got[1] or not isinstance(indices, np.ndarray):
        return None
    items = got[0]
    picked = [items[int(i)] for i in indices.reshape(-1)]
    return _result(picked, scalar=indices.ndim == 0)


def _slice(node):
    data = node.input(0)
    got = _items(data)
    starts, ends = _items(node.input(1)), _items(node.input(2))
    if got is not None and not got[1] and starts is not None and ends is not None and \
            builtins.all(isinstance(v, int) for v in starts[0] + ends[0]):
        steps = node.input(4) if len(node.values) > 4 else None
        step = int(np.asarray(steps).reshape(-1)[0]) if steps is not None else 1
        return _result(got[0][slice(starts[0][0], ends[0][0], step)])
    if isinstance(data, (Tensor, np.ndarray)) and ends is not None and \
            builtins.any(isinstance(v, Size) for v in ends[0]):
        # A window of a run-time length of a tensor (position ids[:, :seq]).
        x = D.asarray(data)
        axes = node.input(3) if len(node.values) > 3 else None
        axes = list(range(len(ends[0]))) if axes is None else \
            [int(a) % x.ndim for a in np.asarray(axes).reshape(-1)]
        steps = node.input(4) if len(node.values) > 4 else None
        steps = [1] * len(axes) if steps is None else \
            [int(s) for s in np.asarray(steps).reshape(-1)]
        key = [slice(None)] * x.ndim
        for axis, start, end, step in zip(axes, starts[0], ends[0], steps):
            if isinstance(start, Size) or (not isinstance(end, Size) and end >= 2**62):
                return None
            key[axis] = slice(start, end, step)
        return x[tuple(key)]
    return None


def _cast(node):
    from onnx import TensorProto
    got = _items(node.input(0))
    if got is None or node.attr("to") not in (TensorProto.INT64, TensorProto.INT32):
        return None
    return _result(*got)


def _arithmetic(fn):
    def convert(node):
        a, b = _items(node.input(0)), _items(node.input(1))
        if a is None or b is None:
            return None
        (x, xs), (y, ys) = a, b
        if len(x) != len(y):
            if len(x) == 1:
                x = x * len(y)
            elif len(y) == 1:
                y = y * len(x)
            else:
                return None
        return _result([fn(p, q) for p, q in zip(x, y)], scalar=xs and ys)
    return convert


def _floordiv(p, q):
    # ONNX's integer Div truncates; sizes are not negative, so it floors.
    return p // q


def _equal(node):
    """A shape compared with constants: a size is never negative, so it differs
    from -1 (the exporters' "keep this dimension" marker)."""
    a, b = _items(node.input(0)), _items(node.input(1))
    if a is None or b is None or not isinstance(node.input(1), np.ndarray):
        return None
    (x, xs), (y, _) = a, b
    y = y * len(x) if len(y) == 1 else y
    out = []
    for p, q in zip(x, y):
        if isinstance(p, Size):
            if q >= 0:
                return None
            out.append(False)
        else:
            out.append(p == q)
    return np.array(out, bool).reshape(()) if xs else np.array(out, bool)


def _where(node):
    condition = node.input(0)
    a, b = _items(node.input(1)), _items(node.input(2))
    if not isinstance(condition, np.ndarray) or a is None or b is None:
        return None
    flags = [bool(c) for c in condition.reshape(-1)]
    x = a[0] * len(flags) if len(a[0]) == 1 else a[0]
    y = b[0] * len(flags) if len(b[0]) == 1 else b[0]
    return _result([p if f else q for f, p, q in zip(flags, x, y)])


def _known(node, shape):
    """`shape` (of the node's first output) with the sizes ONNX's shape
    inference knows static (the graph's value_info: the exporter's, or
    onnx.shape_inference's) as ints: a reshape's -1 next to run-time sizes
    (the heads of [batch, seq, -1, 64]) stays a static dimension."""
    known = node.importer.known_shapes.get(node.proto.output[0])
    if known is None or len(known) != len(shape):
        return shape
    return [k if k is not None else s for s, k in zip(shape, known)]


def _reshape(node):
    target = _items(node.input(1))
    if target is None:
        return None
    data = node.input(0)
    if isinstance(data, SymInts):
        # a shape vector reshaped: to one entry, a scalar, or a vector
        items = [t for t in target[0]]
        if builtins.all(isinstance(t, int) for t in items) and len(items) <= 1:
            if not items and len(data.items) == 1:
                return SymInts(data.items, scalar=True)
            if items and items[0] in (-1, len(data.items)):
                return SymInts(data.items)
        data = materialize(data)
    x = D.asarray(data)
    shape = _known(node, list(target[0]))
    if not node.attr("allowzero", 0):
        shape = [D.dim(x, i) if not isinstance(t, Size) and t == 0 and i < x.ndim else t
                 for i, t in enumerate(shape)]
    return D.reshape(x, tuple(shape))


def _expand(node):
    """Expand: numpy's broadcasting of the input against the shape, both ways."""
    target = _items(node.input(1))
    if target is None:
        return None
    x = D.asarray(materialize(node.input(0)))
    wanted = list(target[0])
    rank = builtins.max(len(wanted), x.ndim)
    wanted = _known(node, [1] * (rank - len(wanted)) + wanted) if len(wanted) <= rank \
        else wanted
    wanted = [1] * (rank - len(wanted)) + wanted
    have = [1] * (rank - x.ndim) + list(x.shape)
    shape = []
    for axis, (w, h) in enumerate(zip(wanted, have)):
        if h is None:
            shape.append(-1)                    # the input's dynamic size stays
        elif isinstance(w, Size):
            shape.append(w if h == 1 else h)
        else:
            shape.append(builtins.max(w, h) if 1 in (w, h) else h)
    if builtins.any(isinstance(s, Size) for s in shape):
        # with run-time sizes, a kept dynamic dimension gives its size too
        shape = [D.dim(x, axis - (rank - x.ndim)) if s == -1 and not isinstance(s, Size)
                 else s for axis, s in enumerate(shape)]
    return D.broadcast_to(x, tuple(shape))


def _constant_of_shape(node):
    from onnx import numpy_helper
    target = _items(node.input(0))
    if target is None:
        return None
    value = node.attrs.get("value")
    fill = numpy_helper.to_array(value).reshape(-1) if value is not None else \
        np.zeros(1, np.float32)
    return D.broadcast_to(np.full((), fill[0], fill.dtype), tuple(target[0]))


def _range(node):
    bounds = [_items(node.input(i)) for i in range(3)]
    if builtins.any(b is None for b in bounds):
        return None
    start, limit, delta = (b[0][0] for b in bounds)
    if isinstance(delta, Size) or not isinstance(delta, numbers.Integral) or delta <= 0:
        return None
    return D.arange(start, limit, delta)


def _identity(node):
    return node.input(0)


#: converters that compute on SymInts (ONNX operator -> converter)
SYMBOLIC = {
    "Shape": _shape, "Squeeze": _squeeze, "Unsqueeze": _unsqueeze, "Concat": _concat,
    "Gather": _gather, "Slice": _slice, "Cast": _cast, "Add": _arithmetic(lambda p, q: p + q),
    "Sub": _arithmetic(lambda p, q: p - q), "Mul": _arithmetic(lambda p, q: p * q),
    "Div": _arithmetic(_floordiv), "Equal": _equal, "Where": _where, "Reshape": _reshape,
    "Expand": _expand, "ConstantOfShape": _constant_of_shape, "Range": _range,
    "Identity": _identity,
}
