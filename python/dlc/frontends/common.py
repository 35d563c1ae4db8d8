"""What the importers share: the compiled callable they return, and the
all-at-once error for unsupported operators.

An importer only translates: it turns a model into a Python function that
calls dlc's ops (so every op it makes goes through the same tracer, verifier
and error messages as user code, located at the model's node or source line)
and hands that function to :func:`dlc.jit`. Compilation is the compiler's.
"""

import collections
import inspect
import keyword
import re
import threading

import numpy as np

from .. import dtypes
from ..errors import (ArityError, DTypeError, DynamicDimensionError, ShapeError,
                      UnsupportedOpError)

__all__ = ["ImportedFunction", "raise_unsupported", "identifier_names", "registrar"]


def registrar(table):
    """The decorator that enters a converter into an operator `table` under
    each of the names it is given: ``@converter("Add", "Sum")``."""
    def converter(*names):
        def register(fn):
            for name in names:
                table[name] = fn
            return fn
        return register
    return converter


def identifier_names(names, fallback="arg"):
    """Python identifiers for model input names ("input.1" -> "input_1"),
    unique, in order."""
    result, seen = [], set()
    for index, name in enumerate(names):
        text = re.sub(r"\W", "_", str(name)) or f"{fallback}{index}"
        if text[0].isdigit() or keyword.iskeyword(text):
            text = f"{fallback}_{text}"
        base, suffix = text, 1
        while text in seen:
            text, suffix = f"{base}_{suffix}", suffix + 1
        seen.add(text)
        result.append(text)
    return result


def raise_unsupported(frontend, uses, hint):
    """Raises UnsupportedOpError listing every unsupported operator.

    `uses` maps an operator name to the places it is used (strings: a node
    name or a source line), in the model's order."""
    if not uses:
        return
    total = sum(len(places) for places in uses.values())
    lines = [f"{frontend}: the model uses {len(uses)} operator(s) dlc does not support "
             f"({total} use(s)):"]
    for op, places in uses.items():
        shown = "; ".join(places[:3]) + ("; ..." if len(places) > 3 else "")
        lines.append(f"  {op} x{len(places)}: {shown}")
    lines.append(hint)
    raise UnsupportedOpError("\n".join(lines), uses)


def _to_numpy(value):
    """numpy view of a torch tensor (on the CPU, detached), else the value."""
    module = type(value).__module__
    if module.startswith("torch") and hasattr(value, "detach"):
        import torch
        value = value.detach().cpu()
        if value.dtype == torch.bfloat16:  # numpy has no bfloat16 of its own
            return value.view(torch.int16).numpy().view(dtypes.BFLOAT16)
        return value.numpy()
    return value


class ImportedFunction:
    """A model compiled by dlc: call it with numpy arrays (or torch tensors)
    in the model's input order; it returns a numpy array, or a tuple of them
    for a model with several outputs.

    Like a :func:`dlc.jit` function, it compiles on the first call per input
    signature; ``lower(*inputs)`` gives the :class:`dlc.Lowered` whose
    ``as_text(stage)`` shows the IR at every stage. Inputs that the model
    uses as shapes (`static_inputs`) are compile-time values: a new value
    compiles a new version.
    """

    def __init__(self, name, input_names, input_specs, static_inputs, build,
                 output_names, jit_kwargs, check_dims=None):
        from ..jit import jit
        self.__name__ = name
        #: called with the inputs (arrays, in order) before each call: raises
        #: ShapeError where a dynamic dimension is outside what the model was
        #: traced for (torch.export's ranges)
        self._check_dims = check_dims
        self.input_names = list(input_names)
        self.output_names = list(output_names)
        #: per input: (dtype, shape with None for symbolic dims) or None if unknown
        self.input_specs = list(input_specs)
        self.static_inputs = frozenset(static_inputs)
        self._params = identifier_names(self.input_names)

        def traced(*args):
            arrays = [_from_static(a) if n in self.static_inputs else a
                      for n, a in zip(self.input_names, args)]
            return build(arrays)

        traced.__name__ = identifier_names([name], "model")[0]
        traced.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD)
             for p in self._params])
        batch = jit_kwargs.pop("dynamic_batch", False)
        if batch is True:
            batch = tuple(p for p, n, spec in zip(self._params, self.input_names,
                                                  self.input_specs)
                          if n not in self.static_inputs and spec is not None
                          and spec[1] and spec[1][0] is None)
        self._traced, self._jit_kwargs = traced, jit_kwargs
        self._jit = jit(traced, dynamic_batch=batch, **jit_kwargs)
        self.dynamic_batch = bool(batch)
        self._fallback_lock = threading.Lock()

    def _arguments(self, args, kwargs):
        if kwargs:
            unknown = [k for k in kwargs if k not in self.input_names and k not in self._params]
            if unknown:
                raise ArityError(f"{self.__name__}(): unknown input(s) {unknown}; the "
                                 f"inputs are {self.input_names}")
            by_name = dict(zip(self.input_names, args))
            for key, value in kwargs.items():
                name = key if key in self.input_names else \
                    self.input_names[self._params.index(key)]
                if name in by_name:
                    raise ArityError(f"{self.__name__}(): input {name!r} given twice")
                by_name[name] = value
            missing = [n for n in self.input_names if n not in by_name]
            if missing:
                raise ArityError(f"{self.__name__}(): missing input(s) {missing}")
            args = [by_name[n] for n in self.input_names]
        if len(args) != len(self.input_names):
            raise ArityError(f"{self.__name__}() takes {len(self.input_names)} input(s) "
                             f"({', '.join(self.input_names)}), but got {len(args)}")
        result = []
        for name, spec, value in zip(self.input_names, self.input_specs, args):
            value = np.asarray(_to_numpy(value)) if not isinstance(value, np.ndarray) \
                else value
            if spec is not None:
                dtype, shape = spec
                if dtype is not None and value.dtype != dtype:
                    raise DTypeError(f"{self.__name__}(): input {name!r} must have dtype "
                                     f"{dtype}, but got {value.dtype}")
                if shape is not None and (len(shape) != value.ndim or any(
                        d is not None and d != v for d, v in zip(shape, value.shape))):
                    want = "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
                    raise ShapeError(f"{self.__name__}(): input {name!r} must have shape "
                                     f"{want}, but got {list(value.shape)}")
            result.append(_as_static(value) if name in self.static_inputs else value)
        if self._check_dims is not None:
            self._check_dims(self.__name__, self.input_names, result)
        return result

    def _static_batch(self, error):
        """Gives up the dynamic batch (the model computes with its size)."""
        import warnings

        from ..jit import jit
        warnings.warn(f"{self.__name__}: compiling one version per batch size, since "
                      f"{error}", stacklevel=4)
        self.dynamic_batch = False
        self._jit = jit(self._traced, dynamic_batch=False, **self._jit_kwargs)

    def _with_fallback(self, method, arguments):
        """Calls `method` of the jit function; where the dynamic batch fails,
        gives it up once (whichever thread gets there first) and calls the
        per-batch version."""
        compiled = self._jit
        try:
            return getattr(compiled, method)(*arguments)
        except DynamicDimensionError as error:
            with self._fallback_lock:
                if compiled is self._jit:
                    if not self.dynamic_batch:
                        raise
                    self._static_batch(error)
            return getattr(self._jit, method)(*arguments)

    def __call__(self, *args, **kwargs):
        return self._with_fallback("__call__", self._arguments(args, kwargs))

    def lower(self, *args, **kwargs):
        """The :class:`dlc.Lowered` of this model for these inputs."""
        return self._with_fallback("lower", self._arguments(args, kwargs))

    def clear_cache(self):
        self._jit.clear_cache()

    def __repr__(self):
        return f"<dlc imported model {self.__name__}({', '.join(self.input_names)})>"


def _as_static(array):
    """A numpy array as a hashable compile-time value of dlc.jit."""
    return ("ndarray", str(array.dtype), tuple(array.shape),
            tuple(array.reshape(-1).tolist()))


def _from_static(value):
    _, dtype, shape, flat = value
    return np.array(flat, dtype=dtypes.numpy_dtype(dtype)).reshape(shape)


def count_uses(pairs):
    """{op: [place, ...]} from (op, place) pairs, in first-use order."""
    uses = collections.OrderedDict()
    for op, place in pairs:
        uses.setdefault(op, []).append(place)
    return uses


def pool2d_any_size(x, kind, kernel, strides, pads, ceil_mode=False,
                    count_include_pad=True):
    """A 2-D max ("max") or average ("avg") pooling of `x` [N, C, H, W] with
    `pads` (top, bottom, left, right) that holds for every image size, so
    that a run-time (dynamic) height or width can use it; None where that
    takes the static sizes (a ceil_mode window could start in the padding:
    the caller then refuses, naming the op).

    PyTorch's and ONNX's ``ceil_mode`` adds a last window where the image
    leaves a partial one, except one starting in the end padding: stride - 1
    more padding at the end, counted in no divisor, gives exactly that where
    such a window cannot occur (end padding + stride <= kernel)."""
    from .. import ops as D

    top, bottom, left, right = pads
    if ceil_mode:
        if bottom + strides[0] > kernel[0] or right + strides[1] > kernel[1]:
            return None
        bottom, right = bottom + strides[0] - 1, right + strides[1] - 1
    fits = (2 * max(top, bottom) <= kernel[0] and 2 * max(left, right) <= kernel[1])
    if kind == "max":
        if fits:
            return D.max_pool2d(x, tuple(kernel), tuple(strides), (top, bottom, left, right))
        lowest = float("-inf") if dtypes.is_float(x.dtype) else \
            int(np.iinfo(x.dtype).min)
        padded = D.pad(x, [(0, 0), (0, 0), (top, bottom), (left, right)],
                       constant_values=lowest)
        return D.max_pool2d(padded, tuple(kernel), tuple(strides), 0)
    explicit = pads[0] or pads[1] or pads[2] or pads[3]
    if fits and not (ceil_mode and count_include_pad and explicit):
        return D.avg_pool2d(x, tuple(kernel), tuple(strides), (top, bottom, left, right),
                            count_include_pad=bool(count_include_pad and not ceil_mode))
    # Otherwise: window sums over zero padding, divided by what each window
    # counts, pooled the same way from an image of ones whose counted
    # padding (the explicit one, with count_include_pad) is ones too.
    area = float(kernel[0] * kernel[1])
    widths = [(0, 0), (0, 0), (top, bottom), (left, right)]
    total = D.multiply(D.avg_pool2d(D.pad(x, widths), tuple(kernel), tuple(strides), 0),
                       area)
    ones = D.broadcast_to(np.ones((), x.dtype), (1, 1, D.dim(x, 2), D.dim(x, 3)))
    if count_include_pad:
        ones = D.pad(ones, [(0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])],
                     constant_values=1.0)
        widths = [(0, 0), (0, 0), (0, bottom - pads[1]), (0, right - pads[3])]
    count = D.multiply(D.avg_pool2d(D.pad(ones, widths), tuple(kernel), tuple(strides), 0),
                       area)
    return D.divide(total, count)


def bit_shift(x, y, left):
    """`x << y` (`left`) or `x >> y` elementwise, x and y integer tensors of
    one dtype (ONNX BitShift, torch's shifts): logical for unsigned x,
    arithmetic for signed (floor division by the power of two); a shift by
    the width or more (or a negative one) gives 0, and -1 for a negative x
    shifted right."""
    from .. import ops as D
    from ..mlir.dialects import dl

    def truncating_divide(a, b):  # dl.div: integer quotients round to zero
        trace, a, b = D._operands("divide", a, b)
        return trace.emit("dl.div", lambda: dl.DivOp(a.value, b.value))

    bits = x.dtype.itemsize * 8
    zero = np.zeros((), x.dtype)
    if np.issubdtype(x.dtype, np.unsignedinteger):
        valid = D.less(y, np.array(bits, y.dtype))
        power = D.power(np.array(2, x.dtype), D.where(valid, y, np.zeros((), y.dtype)))
        shifted = D.multiply(x, power) if left else truncating_divide(x, power)
        return D.where(valid, shifted, zero)
    valid = D.where(D.less(y, 0), np.zeros((), bool), D.less(y, np.array(bits, y.dtype)))
    power = D.power(np.array(2, x.dtype), D.where(valid, y, np.zeros((), y.dtype)))
    if left:
        return D.where(valid, D.multiply(x, power), zero)
    quotient = truncating_divide(x, power)
    floor = D.where(D.not_equal(D.multiply(quotient, power), x),
                    D.where(D.less(x, zero), D.subtract(quotient, np.ones((), x.dtype)),
                            quotient), quotient)
    return D.where(valid, floor, D.where(D.less(x, zero), np.array(-1, x.dtype), zero))
