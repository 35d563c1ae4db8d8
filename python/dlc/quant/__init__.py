"""Post-training quantization: ``dlc.quantize``.

``dlc.quantize(f, calibration_data)`` runs `f` (a function, a ``dlc.jit``
function, a ``dlc.nn`` model or a model imported with ``from_torch`` /
``from_onnx``) on the calibration batches, observes the input activation of
every float matmul and convolution whose weight is a constant, and returns
the function compiled with those operations quantized: the activation
through ``dl.quantize`` / ``dl.dequantize`` (per tensor: uint8 asymmetric or
int8 symmetric), the weight rounded to int8 per output channel (symmetric).
Everything else stays in float, and a matmul whose right operand is computed
at run time (attention's products) too; ``report`` lists each operation,
where the model defines it, and its parameters or why it stayed in float.

A quantized matmul runs in integers: the activation quantized, an 8-bit
product summed in int32 (``dl.matmul_integer``: the VNNI micro-kernel of
``dl-integer-matmul`` where the target has one), the zero point's column-sum
correction subtracted, and one float multiply by activation scale x weight
scale per column. A quantized convolution runs as a float convolution
between quantize and dequantize (the same numerics, float speed).
"""

import functools
import inspect

import numpy as np

from .. import dtypes, tracing
from .. import ops as D
from ..tracing import format_location, user_location
from .observers import METHODS, Observer, affine_qparams, channel_scales

__all__ = ["quantize", "QuantizedFunction", "METHODS"]


class _Site:
    """One float matmul or convolution met while tracing."""

    def __init__(self, kind, location, weight_axis, weight):
        self.kind = kind
        self.location = location
        self.weight_axis = weight_axis
        self.weight = weight  # numpy value of a constant weight, or None
        self.observer = None
        self.scale = self.zero_point = None
        self.weight_scales = None
        self.quantized_weight = None
        self.integer_weight = None

    @property
    def quantized(self):
        return self.quantized_weight is not None

    def describe(self):
        where = format_location(self.location)
        if self.weight is None:
            return {"op": self.kind, "where": where, "quantized": False,
                    "reason": "its right operand is computed at run time, not a weight"}
        if not self.quantized:
            return {"op": self.kind, "where": where, "quantized": False,
                    "reason": "no finite activation value was observed"}
        return {"op": self.kind, "where": where, "quantized": True,
                "activation_scale": float(self.scale),
                "activation_zero_point": int(self.zero_point),
                "weight_channels": int(np.size(self.weight_scales)),
                "weight_shape": tuple(self.weight.shape)}


def _constant_value(tensor):
    """The numpy value of a traced tensor that is a dl.constant, or a
    transpose or reshape of one (a dlc.linear weight); None otherwise."""
    return _constant_of(tensor.value)


def _constant_of(value):
    op = value.owner
    name = op.name if hasattr(op, "name") else None
    if name == "dl.constant":
        try:
            return np.array(tracing.constant_array(op.attributes["value"]))
        except (TypeError, ValueError):
            return None
    if name in ("dl.transpose", "dl.reshape") and len(op.operands) == 1:
        inner = _constant_of(op.operands[0])
        if inner is None:
            return None
        if name == "dl.transpose":
            return np.transpose(inner, list(op.attributes["permutation"]))
        shape = [d for d in value.type.shape]
        return inner.reshape(shape) if -9223372036854775808 not in shape else None
    return None


def _fake_quantize_weight(weight, axis, per_channel, dtype):
    """(integers, scales): the weight rounded to `dtype` symmetrically, per
    channel along `axis` (or per tensor), as dl.quantize rounds."""
    axis = axis % weight.ndim
    if per_channel:
        scales = channel_scales(weight, axis, dtype)
        shape = [-1 if d == axis else 1 for d in range(weight.ndim)]
        expanded = scales.reshape(shape)
    else:
        bound = float(np.abs(weight).max())
        scales = np.float32(bound / np.iinfo(dtype).max if bound > 0 else 1.0)
        expanded = scales
    info = np.iinfo(dtype)
    integers = np.clip(np.rint(weight.astype(np.float32) / expanded), info.min, info.max)
    return integers.astype(dtype), scales, (integers * expanded).astype(weight.dtype)


def _traceable(fn):
    """(function to trace, signature, jit keyword arguments) of what the user
    gave: a dlc.jit function, an imported model, a dlc.nn model or a plain
    function."""
    from ..frontends.common import ImportedFunction
    from ..jit import JitFunction
    from ..nn import Module
    if isinstance(fn, ImportedFunction):
        return fn._traced, inspect.signature(fn._traced), dict(fn._jit_kwargs)
    if isinstance(fn, JitFunction):
        fn = fn._fn
    if isinstance(fn, Module):
        return fn, inspect.signature(fn.forward), {}
    if not callable(fn):
        raise TypeError(f"dlc.quantize expects a function or model, but got {fn!r}")
    return fn, inspect.signature(fn), {}


def _batches(calibration_data):
    batches = []
    for batch in calibration_data:
        if isinstance(batch, (tuple, list)):
            batches.append(tuple(np.asarray(a) for a in batch))
        else:
            batches.append((np.asarray(batch),))
    if not batches:
        raise ValueError("dlc.quantize: the calibration data is empty: give at least "
                         "one batch of inputs")
    return batches


def _with_signature(function, signature, name):
    function.__signature__ = signature
    function.__name__ = name
    return function


class QuantizedFunction:
    """What :func:`quantize` returns: call it like the original function;
    ``report`` describes every matmul and convolution (quantized or left in
    float), ``lower(*args)`` gives the :class:`dlc.Lowered` of the quantized
    program."""

    def __init__(self, jitted, sites):
        self._jit = jitted
        self._sites = sites
        functools.update_wrapper(self, jitted)

    def __call__(self, *args, **kwargs):
        return self._jit(*args, **kwargs)

    def lower(self, *args, **kwargs):
        return self._jit.lower(*args, **kwargs)

    @property
    def report(self):
        return [site.describe() for site in self._sites]

    def summary(self):
        """The report as text, one line per operation."""
        lines = []
        quantized = sum(1 for s in self._sites if s.quantized)
        lines.append(f"{quantized} of {len(self._sites)} matmuls/convolutions quantized")
        for entry in self.report:
            if entry["quantized"]:
                lines.append(f"  {entry['op']:8s} {entry['where']}: int8 weight "
                             f"{entry['weight_shape']} ({entry['weight_channels']} "
                             f"scale(s)), activation scale {entry['activation_scale']:.4g} "
                             f"zero point {entry['activation_zero_point']}")
            else:
                lines.append(f"  {entry['op']:8s} {entry['where']}: float ({entry['reason']})")
        return "\n".join(lines)


def _integer_product(q, site, dtype):
    """x @ w from the quantized activation `q` and the site's int8 weight:
    scale x weight_scale[n] x (sum_k q w - zero_point x colsum(w)[n]), the
    sum exact in int32."""
    weight = site.integer_weight
    acc = D.matmul_integer(q, D.asarray(weight))
    zero_point = int(site.zero_point)
    if zero_point:
        column_sums = weight.astype(np.int64).sum(axis=0) * zero_point
        acc = D.subtract(acc, D.asarray(column_sums.astype(np.int32)))
    factor = np.float64(site.scale) * np.asarray(site.weight_scales, np.float64)
    return D.multiply(D.astype(acc, dtype), D.asarray(factor.astype(dtype)))


def quantize(fn, calibration_data, method="minmax", per_channel=True,
             activation_dtype="uint8", weight_dtype="int8", percentile=99.99, **jit_kwargs):
    """Post-training static quantization of `fn`'s matmuls and convolutions.

    Args:
      fn: a function of arrays, a ``dlc.jit`` function, a ``dlc.nn`` model, or
        a model imported with ``dlc.from_torch`` / ``dlc.from_onnx``.
      calibration_data: an iterable of batches; a batch is the tuple of
        `fn`'s arguments (or one array for a function of one argument).
      method: ``"minmax"``, ``"percentile"`` (clip at `percentile` % of
        |x|) or ``"entropy"`` (TensorRT's KL-divergence threshold).
      per_channel: weights get one scale per output channel (else one).
      activation_dtype: ``"uint8"`` (asymmetric) or ``"int8"`` (symmetric).
      weight_dtype: ``"int8"`` (symmetric).
      **jit_kwargs: as for :func:`dlc.jit` (``target``, ``options``...).

    Returns a :class:`QuantizedFunction`.
    """
    if method not in METHODS:
        raise ValueError(f"dlc.quantize: unknown method {method!r}; the methods are "
                         f"{', '.join(METHODS)}")
    activation_dtype, weight_dtype = np.dtype(activation_dtype), np.dtype(weight_dtype)
    if activation_dtype not in (np.dtype(np.uint8), np.dtype(np.int8)):
        raise ValueError(f"dlc.quantize: activation_dtype must be uint8 or int8, "
                         f"not {activation_dtype}")
    if weight_dtype != np.dtype(np.int8):
        raise ValueError(f"dlc.quantize: weight_dtype must be int8, not {weight_dtype}")
    from ..jit import jit
    body, signature, imported_kwargs = _traceable(fn)
    jit_kwargs = {**imported_kwargs, **jit_kwargs}
    batches = _batches(calibration_data)
    name = getattr(fn, "__name__", type(fn).__name__)

    sites = []

    def probe(*args):
        sites.clear()
        observed = []

        def hook(kind, x, w, weight_axis):
            site = _Site(kind, user_location(), weight_axis, _constant_value(w))
            sites.append(site)
            if site.weight is not None:
                observed.append(x)
            return x, w
        token = D._QUANT_HOOK.set(hook)
        try:
            body(*args)
        finally:
            D._QUANT_HOOK.reset(token)
        return tuple(observed)

    calibrate = jit(_with_signature(probe, signature, f"{name}_calibration"), **jit_kwargs)
    observers = None
    for batch in batches:
        values = calibrate(*batch)
        values = values if isinstance(values, tuple) else (values,)
        if observers is None:
            observers = [Observer(method, percentile) for _ in values]
        for observer, value in zip(observers, values):
            observer.observe(value)
    weighted = [s for s in sites if s.weight is not None]
    for site, observer in zip(weighted, observers or []):
        site.observer = observer
        if observer.count == 0:
            continue
        site.scale, site.zero_point = observer.qparams(activation_dtype)
        site.integer_weight, site.weight_scales, site.quantized_weight = _fake_quantize_weight(
            site.weight, site.weight_axis, per_channel, weight_dtype)

    def quantized(*args):
        position = iter(range(len(sites)))

        def hook(kind, x, w, weight_axis):
            site = sites[next(position)]
            if not site.quantized:
                return x, w
            scale = np.asarray(site.scale, x.dtype)
            q = D.quantize_linear(x, scale, site.zero_point)
            if kind == "matmul" and x.ndim >= 2 and site.integer_weight.ndim == 2:
                return None, _integer_product(q, site, x.dtype)
            x = D.dequantize_linear(q, scale, site.zero_point, dtype=x.dtype)
            return x, D.asarray(site.quantized_weight.astype(w.dtype))
        token = D._QUANT_HOOK.set(hook)
        try:
            return body(*args)
        finally:
            D._QUANT_HOOK.reset(token)

    jitted = jit(_with_signature(quantized, signature, f"{name}_quantized"), **jit_kwargs)
    return QuantizedFunction(jitted, sites)
