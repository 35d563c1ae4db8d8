"""dlc.nn: module-style layers holding numpy parameters.

A layer's ``__call__`` traces into `dl`, so a whole model is one
:func:`dlc.jit` function::

    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16),
                          nn.ReLU(), nn.GlobalAvgPool2d(), nn.Flatten(),
                          nn.Linear(16, 10))
    fast = dlc.jit(model, dynamic_batch=True)        # parameters are arguments
    folded = dlc.jit(model, constants=True)          # parameters are constants

Parameters are the numpy-array attributes of a module (and of its child
modules, recursively); weight layouts and default initializations follow
PyTorch (Conv2d with layout="NHWC" takes [KH, KW, C/groups, F] filters).
Some arrays are buffers, state that is not trained (BatchNorm2d's running
statistics: ``named_buffers()``; ``named_parameters()`` lists the others).

Modules are in evaluation mode unless ``model.train()`` is called: then
BatchNorm2d normalizes with the batch's statistics and, inside
:func:`functional_call` with ``buffers=``, returns updated running
statistics (PyTorch's momentum and unbiased variance)::

    def loss_fn(params, buffers, x, y):
        logits, buffers = nn.functional_call(model, params, x, buffers=buffers)
        return dlc.optim.cross_entropy(logits, y), buffers
    step = dlc.optim.TrainStep(loss_fn, model.named_parameters(),
                               dlc.optim.Adam(1e-3), buffers=model.named_buffers())
"""

import contextlib
import math
import threading

import numpy as np

from . import ops
from .errors import TraceError

__all__ = [
    "Module", "Sequential", "functional_call", "Linear", "Conv2d", "BatchNorm2d", "LayerNorm",
    "Embedding", "MaxPool2d", "AvgPool2d", "GlobalAvgPool2d", "Flatten", "Identity",
    "Dropout", "ReLU", "ReLU6", "LeakyReLU", "GELU", "Sigmoid", "Tanh", "SiLU",
    "Hardswish", "Softmax",
]


def _rng(rng):
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


def _uniform(rng, bound, shape, dtype):
    return rng.uniform(-bound, bound, size=shape).astype(dtype)


class Module:
    """Base class: subclasses define ``forward``; numpy-array attributes are
    parameters (or buffers, named by ``buffer_names``), Module attributes are
    children."""

    #: training mode: set by train() and eval() on a module and its children
    training = False
    #: the array attributes that are state, not trained (running statistics)
    buffer_names = ()

    def train(self, mode=True):
        """Training mode (``mode=True``) or evaluation mode for this module
        and its children; returns the module."""
        for _, module in self.named_modules():
            module.training = bool(mode)
        return self

    def eval(self):
        """Evaluation mode (see :meth:`train`)."""
        return self.train(False)

    def named_parameters(self):
        """Qualified name -> trained array (buffers left out)."""
        return {name: getattr(owner, attr) for name, owner, attr in self.parameter_slots()
                if attr not in owner.buffer_names}

    def named_buffers(self):
        """Qualified name -> buffer array (state that is not trained)."""
        return {name: getattr(owner, attr) for name, owner, attr in self.parameter_slots()
                if attr in owner.buffer_names}

    def __call__(self, *args, **kwargs):
        forward = getattr(self, "forward", None)
        if forward is None:
            raise TypeError(f"{type(self).__name__} defines no forward()")
        return forward(*args, **kwargs)

    def named_modules(self, prefix=""):
        """(qualified name, module) for this module and its descendants."""
        yield prefix, self
        for name, value in vars(self).items():
            children = value if isinstance(value, (list, tuple)) else [value]
            for index, child in enumerate(children):
                if isinstance(child, Module):
                    key = name if not isinstance(value, (list, tuple)) else f"{name}.{index}"
                    yield from child.named_modules(f"{prefix}{key}.")

    def parameter_slots(self):
        """(qualified name, owner module, attribute) of every parameter, in a
        stable order."""
        slots = []
        for prefix, module in self.named_modules():
            for name, value in vars(module).items():
                if isinstance(value, np.ndarray):
                    slots.append((prefix + name, module, name))
        return slots

    def state_dict(self):
        """Qualified name -> parameter array."""
        return {name: getattr(owner, attr) for name, owner, attr in self.parameter_slots()}

    def load_state_dict(self, state):
        """Replaces parameters by name; shapes must match."""
        slots = {name: (owner, attr) for name, owner, attr in self.parameter_slots()}
        unknown = set(state) - set(slots)
        if unknown:
            raise KeyError(f"unknown parameters: {sorted(unknown)}")
        for name, array in state.items():
            owner, attr = slots[name]
            current = getattr(owner, attr)
            array = np.asarray(array, dtype=current.dtype)
            if array.shape != current.shape:
                raise ValueError(f"parameter {name!r} has shape {current.shape}, "
                                 f"but the new value has {array.shape}")
            setattr(owner, attr, array)
        return self


_updates = threading.local()


def _record_update(owner, attr, value):
    """A buffer's new value computed by a forward (a running statistic), kept
    for the functional_call around it; dropped outside one."""
    updates = getattr(_updates, "current", None)
    if updates is not None:
        updates[(id(owner), attr)] = value


def functional_call(module, params, *args, buffers=None, **kwargs):
    """Calls ``module(*args, **kwargs)`` with its parameters replaced by
    ``params`` (qualified name -> array or traced tensor; names left out keep
    the module's own) without changing the module: the way to differentiate
    a dlc.nn model with respect to its parameters (``dlc.grad`` of a
    function of ``params``). With ``buffers`` (qualified name -> array or
    tensor, e.g. ``module.named_buffers()``), returns ``(output,
    new_buffers)``: in training mode BatchNorm2d's running statistics
    updated from the batch, otherwise the buffers as given."""
    if not isinstance(module, Module):
        raise TypeError(f"functional_call expects a dlc.nn.Module, but got {module!r}")
    slots = {name: (owner, attr) for name, owner, attr in module.parameter_slots()}
    buffer_slots = {name for name, (owner, attr) in slots.items() if attr in owner.buffer_names}
    given = dict(params or {})
    for kind, values, allowed in (("parameter", given, set(slots) - buffer_slots),
                                  ("buffer", buffers or {}, buffer_slots)):
        unknown = sorted(set(values) - allowed)
        if unknown:
            raise KeyError(f"functional_call: unknown {kind}(s) {unknown}; the module's "
                           f"{kind}s are: {sorted(allowed)}")
    if buffers is not None:
        given.update(buffers)
    saved = {name: getattr(owner, attr) for name, (owner, attr) in slots.items()}
    previous = getattr(_updates, "current", None)
    updates = _updates.current = {}
    try:
        for name, value in given.items():
            owner, attr = slots[name]
            setattr(owner, attr, value)
        output = module(*args, **kwargs)
        if buffers is None:
            return output
        new_buffers = {}
        for name in sorted(buffer_slots, key=list(slots).index):
            owner, attr = slots[name]
            new_buffers[name] = updates.get((id(owner), attr), getattr(owner, attr))
        return output, new_buffers
    finally:
        _updates.current = previous
        for name, (owner, attr) in slots.items():
            setattr(owner, attr, saved[name])


class Sequential(Module):
    """Applies its layers in order."""

    def __init__(self, *layers):
        self.layers = list(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def __getitem__(self, index):
        return self.layers[index]

    def __len__(self):
        return len(self.layers)


class Linear(Module):
    """``x @ weight.T + bias`` with weight [out_features, in_features]."""

    def __init__(self, in_features, out_features, bias=True, rng=None, dtype=np.float32):
        rng = _rng(rng)
        bound = 1 / math.sqrt(in_features)
        self.weight = _uniform(rng, bound, (out_features, in_features), dtype)
        self.bias = _uniform(rng, bound, (out_features,), dtype) if bias else None

    def forward(self, x):
        return ops.linear(x, self.weight, self.bias)


class Conv2d(Module):
    """2-D convolution; see dlc.conv2d for the arguments."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, layout="NCHW", rng=None,
                 dtype=np.float32):
        rng = _rng(rng)
        kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"groups={groups} must divide in_channels={in_channels} "
                             f"and out_channels={out_channels}")
        fan_in = in_channels // groups * kh * kw
        bound = 1 / math.sqrt(fan_in)
        shape = ((out_channels, in_channels // groups, kh, kw) if layout == "NCHW"
                 else (kh, kw, in_channels // groups, out_channels))
        self.weight = _uniform(rng, bound, shape, dtype)
        self.bias = _uniform(rng, bound, (out_channels,), dtype) if bias else None
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.groups, self.layout = groups, layout

    def forward(self, x):
        return ops.conv2d(x, self.weight, self.bias, stride=self.stride,
                          padding=self.padding, dilation=self.dilation,
                          groups=self.groups, layout=self.layout)


class BatchNorm2d(Module):
    """Batch normalization. In evaluation mode (the default) with the running
    statistics; in training mode (``train()``) with the batch's (mean and
    biased variance over batch and space), and, inside
    :func:`functional_call` with ``buffers=``, the running statistics
    updated as PyTorch does: ``(1 - momentum) * running + momentum * batch``,
    the variance unbiased."""

    buffer_names = ("running_mean", "running_var")

    def __init__(self, num_features, eps=1e-5, momentum=0.1, layout="NCHW",
                 dtype=np.float32):
        self.weight = np.ones(num_features, dtype)
        self.bias = np.zeros(num_features, dtype)
        self.running_mean = np.zeros(num_features, dtype)
        self.running_var = np.ones(num_features, dtype)
        self.eps, self.momentum, self.layout = eps, momentum, layout

    def forward(self, x):
        axis = 1 if self.layout == "NCHW" else -1
        if not self.training:
            return ops.batch_norm(x, self.running_mean, self.running_var, self.weight,
                                  self.bias, eps=self.eps, axis=axis)
        rank = len(x.shape)
        axis %= rank
        over = tuple(i for i in range(rank) if i != axis)
        if any(x.shape[i] is None for i in over):
            raise ValueError("BatchNorm2d in training mode needs a fixed batch size (its "
                             "running variance is unbiased by the count): compile without "
                             "dynamic_batch")
        count = int(np.prod([x.shape[i] for i in over]))
        channels = tuple(-1 if i == axis else 1 for i in range(rank))
        mean = ops.mean(x, axis=over)
        centered = x - ops.reshape(mean, channels)
        var = ops.mean(centered * centered, axis=over)
        m = self.momentum
        dtype = np.dtype(x.dtype)
        keep, take = np.asarray(1.0 - m, dtype), np.asarray(m, dtype)
        unbias = np.asarray(count / max(count - 1, 1), dtype)
        _record_update(self, "running_mean", self.running_mean * keep + mean * take)
        _record_update(self, "running_var", self.running_var * keep + var * unbias * take)
        return ops.batch_norm(x, mean, var, self.weight, self.bias, eps=self.eps, axis=axis)


class LayerNorm(Module):
    """Layer normalization over the trailing `normalized_shape` dimensions."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True,
                 dtype=np.float32):
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.weight = np.ones(shape, dtype) if elementwise_affine else None
        self.bias = np.zeros(shape, dtype) if elementwise_affine else None
        self.normalized_ndim, self.eps = len(shape), eps

    def forward(self, x):
        return ops.layer_norm(x, self.weight, self.bias, axis=-self.normalized_ndim,
                              eps=self.eps)


class Embedding(Module):
    """A lookup table: ``weight[ids]`` for integer ids, weight [num, dim]."""

    def __init__(self, num_embeddings, embedding_dim, rng=None, dtype=np.float32):
        self.weight = _rng(rng).standard_normal((num_embeddings, embedding_dim)).astype(dtype)

    def forward(self, ids):
        return ops.take(self.weight, ids, axis=0)


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, layout="NCHW"):
        self.kernel_size, self.stride, self.padding, self.layout = (
            kernel_size, stride, padding, layout)

    def forward(self, x):
        return ops.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.layout)


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, count_include_pad=True,
                 layout="NCHW"):
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.count_include_pad, self.layout = count_include_pad, layout

    def forward(self, x):
        return ops.avg_pool2d(x, self.kernel_size, self.stride, self.padding,
                              self.count_include_pad, self.layout)


class GlobalAvgPool2d(Module):
    """Mean over the spatial dimensions, keeping them as size 1."""

    def __init__(self, layout="NCHW"):
        self.layout = layout

    def forward(self, x):
        return ops.global_avg_pool2d(x, self.layout)


class Flatten(Module):
    def __init__(self, start_axis=1):
        self.start_axis = start_axis

    def forward(self, x):
        return ops.flatten(x, self.start_axis)


class Identity(Module):
    def forward(self, x):
        return x


class Dropout(Module):
    """The identity in evaluation mode; in training mode (random masks, not
    supported) a TraceError rather than training without dropping."""

    def __init__(self, p=0.5):
        self.p = p

    def forward(self, x):
        if self.training and self.p > 0:
            # Refused rather than traced as the identity: training would
            # silently differ from PyTorch's.
            raise TraceError("dlc.nn.Dropout in training mode (random masks) is not "
                             "supported; call model.eval() or use p=0")
        return x


def _activation(name, fn, doc):
    def forward(self, x):
        return fn(x)
    return type(name, (Module,), {"forward": forward, "__doc__": doc})


ReLU = _activation("ReLU", ops.relu, "max(x, 0)")
ReLU6 = _activation("ReLU6", ops.relu6, "min(max(x, 0), 6)")
Sigmoid = _activation("Sigmoid", ops.sigmoid, "1 / (1 + exp(-x))")
Tanh = _activation("Tanh", ops.tanh, "tanh(x)")
SiLU = _activation("SiLU", ops.silu, "x * sigmoid(x)")
Hardswish = _activation("Hardswish", ops.hardswish, "x * relu6(x + 3) / 6")


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01):
        self.negative_slope = negative_slope

    def forward(self, x):
        return ops.leaky_relu(x, self.negative_slope)


class GELU(Module):
    def __init__(self, approximate="none"):
        self.approximate = approximate

    def forward(self, x):
        return ops.gelu(x, self.approximate)


class Softmax(Module):
    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        return ops.softmax(x, self.axis)
