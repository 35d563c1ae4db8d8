"""Every op of the operator set × shapes (size-1 dims, odd sizes, rank 0 where
it makes sense) × the dtypes it supports, against the numpy references of
references.py, with the per-dtype tolerances of conftest.TOLERANCES; and each
op once more through a dynamic batch, compiled once for two batch sizes.

A case is one row of a table: the dlc function, the numpy reference (which
receives float64 copies of float inputs), input shapes, dtypes and the domain
the inputs are drawn from.
"""

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import pytest

import dlc
import references as ref
from conftest import assert_matches

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = ["float32", "float64", "float16", BF16]
INTS = ["int32", "int64", "int8"]


def is_float(dtype):
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) == BF16


@dataclass
class Case:
    name: str
    fn: object                       # dlc function of the inputs
    reference: object                # numpy function of the (float64) inputs
    shapes: list                     # a list of tuples of input shapes
    dtypes: list = field(default_factory=lambda: ["float32"])
    low: float = -3.0
    high: float = 3.0
    int_inputs: tuple = ()           # positions of inputs that are int64 indices
    bool_inputs: tuple = ()          # positions of inputs that are bool
    result_dtype: object = None      # when not the input dtype
    batchable: bool = True           # the leading dimension can be dynamic
    batch_shapes: tuple = None       # shapes for the dynamic-batch test (default: shapes[0])
    batch_args: tuple = (0,)         # inputs whose leading dimension is the batch
    # Sums of many products cancel: float results are also accepted within
    # this fraction of the largest magnitude of the reference.
    magnitude_tolerance: float = 0.0


def make_inputs(case, shapes, dtype, rng):
    inputs = []
    for position, shape in enumerate(shapes):
        if position in case.int_inputs:
            inputs.append(rng.integers(-4, 10, size=shape).astype(np.int64))
        elif position in case.bool_inputs:
            inputs.append(rng.integers(0, 2, size=shape).astype(bool))
        elif is_float(dtype):
            inputs.append(rng.uniform(case.low, case.high, size=shape).astype(dtype))
        elif np.dtype(dtype) == np.bool_:
            inputs.append(rng.integers(0, 2, size=shape).astype(bool))
        else:
            inputs.append(rng.integers(int(case.low), int(case.high) + 1, size=shape).astype(dtype))
    return inputs


def reference_of(case, inputs):
    widened = [a.astype(np.float64) if is_float(a.dtype) else a for a in inputs]
    return case.reference(*widened)


def check(case, inputs, dtype, result):
    expected = reference_of(case, inputs)
    results, expecteds = (result, expected) if isinstance(result, list) else ([result], [expected])
    assert len(results) == len(expecteds)
    for r, e in zip(results, expecteds):
        e = np.asarray(e)
        atol = case.magnitude_tolerance * float(np.max(np.abs(e))) if e.size else 0.0
        assert_matches(r, e, case.result_dtype or dtype, extra_atol=atol)


UNARY = [
    Case("relu", dlc.relu, lambda x: np.maximum(x, 0), [((17,),), ((3, 1, 129),), ((),)],
         FLOATS + INTS),
    Case("relu6", dlc.relu6, lambda x: np.clip(x, 0, 6), [((17,),), ((3, 1, 129),)],
         FLOATS + INTS, low=-9, high=9),
    Case("abs", dlc.abs, np.abs, [((17,),), ((3, 1, 129),), ((),)], FLOATS + INTS),
    Case("negative", dlc.negative, np.negative, [((17,),), ((3, 1, 129),)], FLOATS + INTS),
    Case("exp", dlc.exp, np.exp, [((17,),), ((3, 1, 129),), ((),)], FLOATS),
    Case("log", dlc.log, np.log, [((17,),), ((3, 1, 129),)], FLOATS, low=0.01, high=50),
    Case("sqrt", dlc.sqrt, np.sqrt, [((17,),), ((3, 1, 129),)], FLOATS, low=0, high=50),
    Case("rsqrt", dlc.rsqrt, lambda x: 1 / np.sqrt(x), [((17,),), ((3, 1, 129),)], FLOATS,
         low=0.05, high=50),
    Case("erf", dlc.erf, ref.erf, [((17,),), ((3, 1, 129),)], FLOATS),
    Case("tanh", dlc.tanh, np.tanh, [((17,),), ((3, 1, 129),)], FLOATS),
    Case("sigmoid", dlc.sigmoid, ref.sigmoid, [((17,),), ((3, 1, 129),)], FLOATS,
         low=-20, high=20),
    Case("silu", dlc.silu, lambda x: x * ref.sigmoid(x), [((17,),), ((3, 1, 129),)], FLOATS),
    Case("hardswish", dlc.hardswish, ref.hardswish, [((17,),), ((3, 1, 129),)], FLOATS,
         low=-5, high=5),
    Case("leaky_relu", lambda x: dlc.leaky_relu(x, 0.1), lambda x: np.where(x >= 0, x, 0.1 * x),
         [((17,),), ((3, 1, 129),)], FLOATS),
    Case("gelu", dlc.gelu, ref.gelu, [((17,),), ((3, 1, 129),)], FLOATS),
    Case("gelu_tanh", lambda x: dlc.gelu(x, approximate="tanh"),
         lambda x: ref.gelu(x, "tanh"), [((17,),), ((3, 1, 129),)], FLOATS),
]

# Trigonometry, rounding, sign, float classes, logical and bitwise negation.
# Domains keep clear of poles (tan) and of the edges where a function is not
# defined (arcsin, arccosh, arctanh).
MORE_UNARY = [
    Case("sin", dlc.sin, np.sin, [((17,),), ((3, 1, 129),), ((),)], FLOATS, low=-7, high=7),
    Case("cos", dlc.cos, np.cos, [((17,),), ((3, 1, 129),)], FLOATS, low=-7, high=7),
    Case("tan", dlc.tan, np.tan, [((17,),), ((3, 1, 129),)], FLOATS, low=-1.4, high=1.4),
    Case("arcsin", dlc.arcsin, np.arcsin, [((17,),), ((3, 1, 129),)], FLOATS,
         low=-0.99, high=0.99),
    Case("arccos", dlc.arccos, np.arccos, [((17,),), ((3, 1, 129),)], FLOATS,
         low=-0.99, high=0.99),
    Case("arctan", dlc.arctan, np.arctan, [((17,),), ((3, 1, 129),)], FLOATS, low=-9, high=9),
    Case("sinh", dlc.sinh, np.sinh, [((17,),), ((3, 1, 129),)], FLOATS),
    Case("cosh", dlc.cosh, np.cosh, [((17,),), ((3, 1, 129),)], FLOATS),
    Case("arcsinh", dlc.arcsinh, np.arcsinh, [((17,),), ((3, 1, 129),)], FLOATS, low=-9, high=9),
    Case("arccosh", dlc.arccosh, np.arccosh, [((17,),), ((3, 1, 129),)], FLOATS, low=1, high=9),
    Case("arctanh", dlc.arctanh, np.arctanh, [((17,),), ((3, 1, 129),)], FLOATS,
         low=-0.95, high=0.95),
    Case("floor", dlc.floor, np.floor, [((17,),), ((3, 1, 129),), ((),)], FLOATS + INTS),
    Case("ceil", dlc.ceil, np.ceil, [((17,),), ((3, 1, 129),)], FLOATS + INTS),
    Case("round", dlc.round, np.round, [((17,),), ((3, 1, 129),)], FLOATS + INTS),
    Case("sign", dlc.sign, np.sign, [((17,),), ((3, 1, 129),), ((),)], FLOATS + INTS),
    Case("isnan", dlc.isnan, np.isnan, [((17,),), ((3, 1, 129),)], FLOATS, result_dtype=np.bool_),
    Case("isinf", dlc.isinf, np.isinf, [((17,),), ((3, 1, 129),)], FLOATS, result_dtype=np.bool_),
    Case("logical_not", dlc.logical_not, np.logical_not, [((17,),), ((3, 1, 129),)],
         ["bool", "int8", "float32"], result_dtype=np.bool_),
    Case("bitwise_not", dlc.bitwise_not, np.bitwise_not, [((17,),), ((3, 1, 129),), ((),)],
         INTS + ["bool"], low=-100, high=100),
    Case("invert_operator", lambda x: ~x, np.invert, [((3, 17),)], ["int32", "bool"]),
]

BINARY_SHAPES = [((17,), (17,)), ((3, 17), (17,)), ((129, 1), (1, 3)), ((), (3, 17))]

BATCHABLE_PAIR = ((3, 17), (17,))

BINARY = [
    Case("power", dlc.power, np.power, BINARY_SHAPES, ["float32", "float64", "float16"],
         low=0.1, high=2.5, batch_shapes=BATCHABLE_PAIR),
    Case("power_int", dlc.power, np.power, BINARY_SHAPES, ["int32", "int64"], low=0, high=4,
         batch_shapes=BATCHABLE_PAIR),
    Case("maximum", dlc.maximum, np.maximum, BINARY_SHAPES, FLOATS + INTS,
         batch_shapes=BATCHABLE_PAIR),
    Case("minimum", dlc.minimum, np.minimum, BINARY_SHAPES, FLOATS + INTS,
         batch_shapes=BATCHABLE_PAIR),
    Case("clip_scalars", lambda x: dlc.clip(x, -1.5, 2), lambda x: np.clip(x, -1.5, 2),
         [((3, 17),)], FLOATS),
    Case("clip_arrays", dlc.clip, np.clip, [((3, 17), (17,), (3, 1))], ["float32"],
         batch_shapes=((3, 17), (17,), (1,))),
    Case("clip_ints", lambda x: dlc.clip(x, -1, 2), lambda x: np.clip(x, -1, 2),
         [((3, 17),)], INTS),
]

def without_warnings(fn):
    """`fn` with numpy's warnings off (integer x % 0 is 0, with a warning)."""
    def quiet(*args):
        with np.errstate(all="ignore"):
            return fn(*args)
    return quiet


MORE_BINARY = [
    Case(name, getattr(dlc, name), getattr(np, name), BINARY_SHAPES,
         ["bool", "int32", "float32"], low=-1, high=1, result_dtype=np.bool_,
         batch_shapes=BATCHABLE_PAIR)
    for name in ("logical_and", "logical_or", "logical_xor")
] + [
    Case(name, getattr(dlc, name), getattr(np, name), BINARY_SHAPES, INTS + ["bool"],
         low=-100, high=100, batch_shapes=BATCHABLE_PAIR)
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor")
] + [
    # Integer divisors include 0 (the result is then 0, as numpy's).
    Case(name, getattr(dlc, name), without_warnings(getattr(np, name)), BINARY_SHAPES,
         FLOATS + INTS, low=-9, high=9, batch_shapes=BATCHABLE_PAIR)
    for name in ("remainder", "fmod")
] + [
    Case("bitwise_operators", lambda x, y: (x & y) | (x ^ 5) ^ (3 | y),
         lambda x, y: (x & y) | (x ^ 5) ^ (3 | y), [((3, 17), (17,))], ["int64", "int8"],
         low=-50, high=50),
    Case("mod_operator", lambda x, y: x % y + 7 % y, without_warnings(lambda x, y: x % y + 7 % y),
         [((3, 17), (17,))], ["int32", "float32"], low=-9, high=9),
]

COMPARISONS = [
    Case(name, getattr(dlc, name), getattr(np, name), BINARY_SHAPES,
         ["float32", "float16", "int32", "int8", "bool"], low=-2, high=2, result_dtype=np.bool_,
         batch_shapes=BATCHABLE_PAIR)
    for name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
]

SELECTION = [
    Case("where", dlc.where, np.where, [((3, 17), (3, 17), (3, 17)), ((3, 1), (17,), ()),
                                        ((1,), (129, 3), (129, 1))],
         FLOATS + INTS, bool_inputs=(0,), batch_shapes=((3, 17), (17,), ())),
    Case("where_scalar", lambda c, x: dlc.where(c, x, 0.0), lambda c, x: np.where(c, x, 0.0),
         [((3, 17), (3, 17))], FLOATS, bool_inputs=(0,), batch_shapes=BATCHABLE_PAIR),
    Case("operators", lambda x, y: dlc.where(x >= y, x ** 2, -y),
         lambda x, y: np.where(x >= y, x ** 2, -y), [((3, 17), (17,))], ["float32"]),
]

def bound(fn, **kwargs):
    """`fn` with keyword arguments fixed, as a function of the tensors only
    (closures, so that dlc.jit sees no extra parameters)."""
    return lambda *tensors: fn(*tensors, **kwargs)


REDUCTIONS = [
    Case(f"{name}_{axis}_{keepdims}", bound(getattr(dlc, name), axis=axis, keepdims=keepdims),
         bound(getattr(np, name), axis=axis, keepdims=keepdims),
         [((3, 17, 5),), ((129, 1, 3),)], dtypes)
    for name, dtypes in [("sum", FLOATS + INTS), ("mean", FLOATS), ("max", FLOATS + INTS),
                         ("min", FLOATS + INTS)]
    for axis in (None, 0, -1, (0, 2))
    for keepdims in (False, True)
] + [
    Case(f"{name}_{axis}", bound(getattr(dlc, name), axis=axis), bound(getattr(np, name), axis=axis),
         [((3, 17, 5),), ((129, 1, 3),)], ["float32", "float64", "int32"], result_dtype=np.int64)
    for name in ("argmax", "argmin") for axis in (None, 0, 1, -1)
] + [
    Case("softmax", lambda x: dlc.softmax(x, axis=1), lambda x: ref.softmax(x, 1),
         [((3, 17),), ((129, 3, 2),), ((1, 1),)], FLOATS),
    Case("log_softmax", lambda x: dlc.log_softmax(x, axis=-1), ref.log_softmax,
         [((3, 17),), ((129, 3, 2),), ((1, 1),)], FLOATS),
]

LAYERS = [
    Case("linear", dlc.linear, lambda x, w, b: x @ w.T + b,
         [((3, 17), (5, 17), (5,)), ((2, 1, 129), (3, 129), (3,))], FLOATS,
         magnitude_tolerance=1e-5),
    Case("linear_nobias", lambda x, w: dlc.linear(x, w), lambda x, w: x @ w.T,
         [((3, 17), (5, 17))], ["float32"]),
    Case("batch_norm_nchw",
         lambda x, m, v, g, b: dlc.batch_norm(x, m, v, g, b, eps=1e-3),
         lambda x, m, v, g, b: ref.batch_norm(x, m, v, g, b, 1e-3),
         [((2, 3, 5, 5), (3,), (3,), (3,), (3,)), ((1, 17, 1, 3), (17,), (17,), (17,), (17,))],
         FLOATS, low=0.1, high=2),
    Case("batch_norm_nhwc",
         lambda x, m, v, g, b: dlc.batch_norm(x, m, v, g, b, axis=-1),
         lambda x, m, v, g, b: ref.batch_norm(x, m, v, g, b, 1e-5, axis=-1),
         [((2, 5, 5, 3), (3,), (3,), (3,), (3,))], ["float32"], low=0.1, high=2),
    Case("layer_norm", lambda x, g, b: dlc.layer_norm(x, g, b, eps=1e-5),
         lambda x, g, b: ref.layer_norm(x, g, b), [((3, 17), (17,), (17,)), ((2, 5, 129), (129,), (129,))],
         FLOATS),
    Case("layer_norm_2d", lambda x, g, b: dlc.layer_norm(x, g, b, axis=-2),
         lambda x, g, b: ref.layer_norm(x, g, b, axis=-2), [((3, 4, 6), (4, 6), (4, 6))],
         ["float32", "float64"]),
    Case("layer_norm_default_affine", lambda x: dlc.layer_norm(x),
         lambda x: ref.layer_norm(x, 1.0, 0.0), [((3, 17),)], ["float32"]),
]

CONV_CONFIGS = [
    # (x shape NCHW, w shape OIHW, stride, padding, dilation, groups)
    ((2, 3, 9, 9), (4, 3, 3, 3), 1, 1, 1, 1),
    ((1, 3, 17, 17), (8, 3, 7, 7), 2, 3, 1, 1),       # a ResNet-like stem
    ((2, 4, 8, 8), (4, 1, 3, 3), 1, "same", 1, 4),     # depthwise
    ((1, 6, 7, 7), (12, 1, 3, 3), 2, 1, 1, 6),         # depthwise, multiplier 2
    ((1, 4, 9, 9), (6, 2, 3, 3), 1, 0, 2, 2),          # grouped, dilated
    ((3, 2, 5, 5), (3, 2, 1, 1), 1, 0, 1, 1),          # 1x1
    ((1, 1, 6, 5), (2, 1, 2, 3), (2, 1), (1, 0, 2, 1), 1, 1),  # asymmetric
]


def same_padding(size, kernel, stride, dilation):
    """TensorFlow's "same": output ceil(size / stride), extra padding after."""
    out = -(-size // stride)
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def _conv_case(config, layout, with_bias):
    xs, ws, stride, padding, dilation, groups = config
    stride2 = (stride, stride) if isinstance(stride, int) else stride
    if padding == "same":
        pads = (same_padding(xs[2], ws[2], stride2[0], dilation) +
                same_padding(xs[3], ws[3], stride2[1], dilation))
    elif isinstance(padding, int):
        pads = (padding,) * 4
    else:
        pads = tuple(padding)
    if layout == "NHWC":
        xs = (xs[0], xs[2], xs[3], xs[1])
        ws = (ws[2], ws[3], ws[1], ws[0])
    bias_shape = (ws[0],) if layout == "NCHW" else (ws[3],)
    if with_bias:
        fn = lambda x, w, b: dlc.conv2d(x, w, b, stride=stride, padding=padding,  # noqa: E731
                                        dilation=dilation, groups=groups, layout=layout)
        reference = lambda x, w, b: ref.conv2d(x, w, b, stride2, pads, (dilation,) * 2,  # noqa: E731
                                               groups, layout)
        shapes = (xs, ws, bias_shape)
    else:
        fn = lambda x, w: dlc.conv2d(x, w, stride=stride, padding=padding,  # noqa: E731
                                     dilation=dilation, groups=groups, layout=layout)
        reference = lambda x, w: ref.conv2d(x, w, None, stride2, pads, (dilation,) * 2,  # noqa: E731
                                            groups, layout)
        shapes = (xs, ws)
    return Case(f"conv2d_{layout}_{config}_{'bias' if with_bias else 'nobias'}", fn,
                reference, [shapes], ["float32", "float64", "float16"] if with_bias else ["float32"],
                magnitude_tolerance=1e-5)


CONV = [_conv_case(config, layout, bias) for config in CONV_CONFIGS
        for layout in ("NCHW", "NHWC") for bias in (True, False)]

POOL_CONFIGS = [((2, 3, 8, 8), 2, None, 0), ((1, 2, 9, 9), 3, 2, 1), ((1, 1, 7, 5), (3, 2), (2, 1), (1, 1, 0, 1))]


def _pool_cases():
    cases = []
    for shape, kernel, stride, padding in POOL_CONFIGS:
        k = (kernel, kernel) if isinstance(kernel, int) else kernel
        s = k if stride is None else ((stride, stride) if isinstance(stride, int) else stride)
        p = (padding,) * 4 if isinstance(padding, int) else padding
        for layout in ("NCHW", "NHWC"):
            xs = shape if layout == "NCHW" else (shape[0], shape[2], shape[3], shape[1])
            cases.append(Case(
                f"max_pool2d_{layout}_{shape}",
                bound(dlc.max_pool2d, kernel_size=kernel, stride=stride, padding=padding,
                      layout=layout),
                bound(ref.pool2d, kernel=k, stride=s, padding=p, kind="max", layout=layout),
                [(xs,)], FLOATS))
            for include in (True, False):
                cases.append(Case(
                    f"avg_pool2d_{layout}_{shape}_{include}",
                    bound(dlc.avg_pool2d, kernel_size=kernel, stride=stride, padding=padding,
                          count_include_pad=include, layout=layout),
                    bound(ref.pool2d, kernel=k, stride=s, padding=p, kind="avg",
                          count_include_pad=include, layout=layout),
                    [(xs,)], ["float32", "float64", "float16"]))
    cases.append(Case("global_avg_pool2d", dlc.global_avg_pool2d,
                      lambda x: x.mean(axis=(2, 3), keepdims=True), [((2, 3, 5, 7),)], FLOATS))
    cases.append(Case("global_avg_pool2d_nhwc",
                      lambda x: dlc.global_avg_pool2d(x, layout="NHWC", keepdims=False),
                      lambda x: x.mean(axis=(1, 2)), [((2, 5, 7, 3),)], ["float32"]))
    return cases


POOL = _pool_cases()

SHAPE = [
    Case("flatten", dlc.flatten, lambda x: x.reshape(x.shape[0], -1), [((3, 4, 5),), ((2, 1),)],
         ["float32", "int8", "bool"]),
    Case("flatten_all", lambda x: dlc.flatten(x, 0), lambda x: x.reshape(-1), [((3, 4, 5),)],
         ["float32"]),
    Case("squeeze", dlc.squeeze, np.squeeze, [((3, 1, 5, 1),), ((1,),)], ["float32", "int32"],
         batchable=False),
    Case("squeeze_axis", lambda x: dlc.squeeze(x, axis=1), lambda x: np.squeeze(x, axis=1),
         [((3, 1, 5, 1),)], ["float32"]),
    Case("expand_dims", lambda x: dlc.expand_dims(x, (1, -1)),
         lambda x: np.expand_dims(x, (1, -1)), [((3, 5),), ((2,),)], ["float32", "bool"]),
    Case("concatenate", lambda x, y, z: dlc.concatenate([x, y, z], axis=1),
         lambda x, y, z: np.concatenate([x, y, z], axis=1),
         [((3, 2), (3, 5), (3, 1)), ((2, 1, 4), (2, 3, 4), (2, 2, 4))],
         ["float32", "int64", "bool"], batch_args=(0, 1, 2)),
    Case("concatenate_axis0", lambda x, y: dlc.concatenate([x, y]),
         lambda x, y: np.concatenate([x, y]), [((3, 2), (1, 2))], ["float32"], batchable=False),
    Case("split", lambda x: dlc.split(x, 3, axis=1), lambda x: np.split(x, 3, axis=1),
         [((2, 9),), ((1, 3, 2),)], ["float32", "int32"]),
    Case("split_indices", lambda x: dlc.split(x, [2, 5, 5], axis=-1),
         lambda x: np.split(x, [2, 5, 5], axis=-1), [((2, 9),)], ["float32"]),
    Case("pad", lambda x: dlc.pad(x, ((0, 0), (1, 2)), constant_values=1.5),
         lambda x: np.pad(x, ((0, 0), (1, 2)), constant_values=1.5), [((3, 17),), ((1, 1),)],
         FLOATS),
    Case("pad_int", lambda x: dlc.pad(x, ((0, 0), (2, 0), (1, 1)), constant_values=7),
         lambda x: np.pad(x, ((0, 0), (2, 0), (1, 1)), constant_values=7), [((2, 3, 4),)],
         INTS + ["bool"]),
    Case("broadcast_to", lambda x: dlc.broadcast_to(x, (2, 3, 17)),
         lambda x: np.broadcast_to(x, (2, 3, 17)), [((3, 1),), ((17,),), ((),)],
         ["float32", "int8", "bool"], batchable=False),
    Case("take_embedding", lambda table, ids: dlc.take(table, ids, axis=0),
         lambda table, ids: np.take(table, np.clip(np.where(ids < 0, ids + table.shape[0], ids),
                                                   0, table.shape[0] - 1), axis=0),
         [((10, 6), (3, 4)), ((17, 3), (5,))], ["float32", "float16", "int32"], int_inputs=(1,),
         batchable=False),
    Case("take_axis1", lambda x, ids: dlc.take(x, ids, axis=1),
         lambda x, ids: np.take(x, np.clip(np.where(ids < 0, ids + x.shape[1], ids), 0,
                                           x.shape[1] - 1), axis=1),
         [((3, 10, 2), (4,))], ["float32"], int_inputs=(1,)),
]

SLICES = [
    (np.s_[1:3], (5, 4)), (np.s_[:, ::2], (3, 17)), (np.s_[::-1], (5, 2)),
    (np.s_[..., 1], (2, 3, 4)), (np.s_[None, 2, 1:], (4, 5)), (np.s_[-1, ::-3, None], (2, 10)),
    (np.s_[:, 5:2], (3, 7)), (np.s_[0], (129,)),
]


def _slice_case(key, shape):
    batchable = isinstance(key, tuple) and len(key) > 0 and key[0] == slice(None)
    index = lambda x: x[key]  # noqa: E731
    return Case(f"getitem_{key}_{shape}", index, index, [(shape,)], ["float32", "int8", "bool"],
                batchable=batchable)


SLICE = [_slice_case(key, shape) for key, shape in SLICES]

CAST_DTYPES = ["float32", "float64", "float16", BF16, "int8", "int32", "int64", "bool"]
def _cast(target):
    return lambda x: x.astype(target)


CAST = [
    Case(f"astype_{np.dtype(source)}_{np.dtype(target)}", _cast(target), _cast(target),
         [((3, 17),)], [source], low=-100, high=100, result_dtype=target)
    for source in CAST_DTYPES for target in CAST_DTYPES
]

ALL_CASES = UNARY + MORE_UNARY + BINARY + MORE_BINARY + COMPARISONS + SELECTION + \
    REDUCTIONS + LAYERS + CONV + POOL + SHAPE + SLICE + CAST


def _params():
    for case in ALL_CASES:
        for shapes in case.shapes:
            for dtype in case.dtypes:
                yield pytest.param(case, shapes, dtype,
                                   id=f"{case.name}-{shapes}-{np.dtype(dtype)}")


@pytest.mark.parametrize("case,shapes,dtype", list(_params()))
def test_op(case, shapes, dtype, rng):
    inputs = make_inputs(case, shapes, dtype, rng)
    if case.name.startswith("astype") and is_float(dtype) and case.result_dtype not in (
            np.bool_, "bool") and not is_float(case.result_dtype):
        # float -> int is undefined outside the target's range (as in C).
        info = np.iinfo(case.result_dtype)
        inputs = [np.clip(a.astype(np.float64), info.min, info.max).astype(dtype) for a in inputs]
    check(case, inputs, dtype, dlc.jit(case.fn)(*inputs))


def _batched_params():
    for case in ALL_CASES:
        shapes = case.batch_shapes or case.shapes[0]
        if case.batchable and len(shapes[0]) >= 1:
            yield pytest.param(case, id=case.name)


@pytest.mark.parametrize("case", list(_batched_params()))
def test_op_with_dynamic_batch(case, rng):
    """The first input's leading dimension is dynamic: one compiled version
    runs at two batch sizes."""
    dtype = case.dtypes[0]
    f = dlc.jit(case.fn, dynamic_batch=case.batch_args)
    for batch in (1, 5):
        shapes = [(batch,) + tuple(shape[1:]) if i in case.batch_args else shape
                  for i, shape in enumerate(case.batch_shapes or case.shapes[0])]
        inputs = make_inputs(case, shapes, dtype, rng)
        check(case, inputs, dtype, f(*inputs))
    assert f.cache_size() == 1
