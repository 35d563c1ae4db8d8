"""Numerics of every op of the foundation slice against numpy.

Each case compiles a one-op function through the whole pipeline (dl -> llvm ->
ExecutionEngine) and compares with a numpy reference: float results within the
per-dtype tolerance of conftest.TOLERANCES (the reference is computed in
float64 from the same inputs), integer results exactly. Shapes include size-1
dimensions, odd sizes (3, 17, 129), rank 0, and a dynamic batch.
"""

import ml_dtypes
import numpy as np
import pytest

import dlc
from conftest import assert_matches, random_array

FLOATS = ["float32", "float64", "float16"]
NUMERIC = FLOATS + ["int32", "int64", "int8"]

BROADCAST_SHAPES = [
    ((17,), (17,)),
    ((3, 17), (17,)),
    ((129, 1), (1, 3)),
    ((1,), (3, 129)),
    ((), (3, 17)),
    ((3, 1, 17), (4, 1)),
    ((1, 1), (1, 1)),
]


def reference_dtype(dtype):
    return np.float64 if np.dtype(dtype).kind == "f" else np.dtype(dtype)


BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "subtract": (lambda a, b: a - b, np.subtract),
    "multiply": (lambda a, b: a * b, np.multiply),
    "divide": (lambda a, b: a / b, np.divide),
}


# dlc.divide is true division: float operands only (integers are refused,
# see test_errors).
BINARY_CASES = [(op, dtype) for op in BINARY for dtype in NUMERIC
                if op != "divide" or dtype in FLOATS]


@pytest.mark.parametrize("op,dtype", BINARY_CASES)
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
def test_binary_broadcast(op, shapes, dtype, rng):
    python_op, numpy_op = BINARY[op]
    a = random_array(rng, shapes[0], dtype)
    b = random_array(rng, shapes[1], dtype, low=1 if op == "divide" else -3)
    via_function = dlc.jit(lambda x, y: getattr(dlc, op)(x, y))
    via_operator = dlc.jit(lambda x, y: python_op(x, y))
    ref_dtype = reference_dtype(dtype)
    expected = numpy_op(a.astype(ref_dtype), b.astype(ref_dtype))
    assert_matches(via_function(a, b), expected, dtype)
    assert_matches(via_operator(a, b), expected, dtype)


@pytest.mark.parametrize("op", BINARY)
def test_binary_with_python_scalars_and_constants(op, rng):
    python_op, numpy_op = BINARY[op]
    a = random_array(rng, (3, 17), "float32", low=1)
    const = random_array(rng, (17,), "float32", low=1)
    f = dlc.jit(lambda x: python_op(python_op(x, 2.5), const))
    g = dlc.jit(lambda x: python_op(3, x))
    a64 = a.astype(np.float64)
    assert_matches(f(a), numpy_op(numpy_op(a64, 2.5), const.astype(np.float64)), np.float32)
    assert_matches(g(a), numpy_op(3.0, a64), np.float32)


@pytest.mark.parametrize("shape", [(), (1,), (3, 17), (129, 3, 17)], ids=str)
@pytest.mark.parametrize("dtype", NUMERIC)
def test_relu_and_negative(shape, dtype, rng):
    a = random_array(rng, shape, dtype)
    assert_matches(dlc.jit(dlc.relu)(a), np.maximum(a, 0), dtype)
    assert_matches(dlc.jit(lambda x: -x)(a), -a.astype(reference_dtype(dtype)), dtype)


def test_relu_propagates_nan():
    a = np.array([np.nan, -1.0, 2.0], np.float32)
    out = dlc.jit(dlc.relu)(a)
    assert np.isnan(out[0]) and out[1] == 0 and out[2] == 2


@pytest.mark.parametrize("shape", [(), (1,), (3, 17), (129, 3)], ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_exp(shape, dtype, rng):
    a = random_array(rng, shape, dtype)
    assert_matches(dlc.jit(dlc.exp)(a), np.exp(a.astype(np.float64)), dtype)


MATMUL_SHAPES = [
    ((1, 1), (1, 1)),
    ((3, 17), (17, 129)),
    ((129, 3), (3, 1)),
    ((2, 3, 17), (2, 17, 3)),
    ((4, 1, 3, 5), (2, 5, 3)),
    ((3, 17), (2, 17, 5)),
    ((17,), (17, 3)),
    ((3, 17), (17,)),
    ((17,), (17,)),
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
def test_matmul(shapes, dtype, rng):
    a = random_array(rng, shapes[0], dtype)
    b = random_array(rng, shapes[1], dtype)
    expected = np.matmul(a.astype(reference_dtype(dtype)), b.astype(reference_dtype(dtype)))
    assert_matches(dlc.jit(lambda x, y: x @ y)(a, b), expected, dtype)
    assert_matches(dlc.jit(dlc.matmul)(a, b), expected, dtype)


REDUCTION_CASES = [
    ((17,), None), ((3, 17), 0), ((3, 17), -1), ((129, 3, 1), (0, 2)),
    ((129, 3, 1), None), ((2, 3, 4), (1,)), ((3, 17), ()),
]


@pytest.mark.parametrize("shape,axis", REDUCTION_CASES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64"])
def test_sum_and_max(shape, axis, keepdims, dtype, rng):
    a = random_array(rng, shape, dtype)
    a_ref = a.astype(reference_dtype(dtype))
    got_sum = dlc.jit(lambda x: dlc.sum(x, axis=axis, keepdims=keepdims))(a)
    got_max = dlc.jit(lambda x: dlc.max(x, axis=axis, keepdims=keepdims))(a)
    assert_matches(got_sum, np.sum(a_ref, axis=axis, keepdims=keepdims), dtype)
    assert_matches(got_max, np.max(a_ref, axis=axis, keepdims=keepdims), dtype)


def test_half_precision_accumulates_in_float32(rng):
    """A long f16 dot product or sum keeps f32 accuracy until the final rounding
    (accumulating in f16 would lose about 3 digits over 4096 terms)."""
    a = random_array(rng, (2, 4096), "float16", low=0, high=1)
    b = random_array(rng, (4096, 3), "float16", low=0, high=1)
    product = dlc.jit(lambda x, y: x @ y)(a, b)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(product.astype(np.float64), exact, rtol=1e-3)
    total = dlc.jit(lambda x: dlc.sum(x, axis=1))(a)
    np.testing.assert_allclose(total.astype(np.float64), a.astype(np.float64).sum(axis=1), rtol=1e-3)


def test_max_propagates_nan():
    a = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 3.0]], np.float32)
    out = dlc.jit(lambda x: dlc.max(x, axis=1))(a)
    assert np.isnan(out[0]) and out[1] == 3.0


@pytest.mark.parametrize("shape,axis", [((1,), -1), ((3, 17), -1), ((3, 17), 0),
                                        ((129, 3), 1), ((2, 3, 17), 1)], ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax(shape, axis, dtype, rng):
    a = random_array(rng, shape, dtype)
    a64 = a.astype(np.float64)
    e = np.exp(a64 - a64.max(axis=axis, keepdims=True))
    expected = e / e.sum(axis=axis, keepdims=True)
    assert_matches(dlc.jit(lambda x: dlc.softmax(x, axis=axis))(a), expected, dtype)


def test_softmax_is_stable_for_large_logits():
    a = np.array([[1000.0, 999.0, -1000.0], [-1e30, 0.0, 1e30]], np.float32)
    out = dlc.jit(dlc.softmax)(a)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out.sum(axis=-1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("shape,axes", [((3, 17), None), ((2, 3, 17), (1, 0, 2)),
                                        ((1, 3, 17, 2), (3, 1, 0, 2)), ((129,), None)],
                         ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int64", "int8", "bool"])
def test_transpose(shape, axes, dtype, rng):
    a = random_array(rng, shape, dtype)
    assert_matches(dlc.jit(lambda x: dlc.transpose(x, axes))(a), np.transpose(a, axes), dtype)
    if axes is None:
        assert_matches(dlc.jit(lambda x: x.T)(a), a.T, dtype)


@pytest.mark.parametrize("shape,new_shape", [((3, 17), (17, 3)), ((129,), (3, -1)),
                                             ((2, 3, 4), (-1,)), ((), (1, 1)),
                                             ((1, 1), ()), ((2, 3, 4), (4, 1, 6))],
                         ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_reshape(shape, new_shape, dtype, rng):
    a = random_array(rng, shape, dtype)
    expected = a.reshape(new_shape)
    assert_matches(dlc.jit(lambda x: dlc.reshape(x, new_shape))(a), expected, dtype)
    assert_matches(dlc.jit(lambda x: x.reshape(new_shape))(a), expected, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int8", "bool"])
def test_constants(dtype, rng):
    c = random_array(rng, (3, 17), dtype)
    out = dlc.jit(lambda x: (dlc.asarray(c), x))(np.zeros(1, np.float32))[0]
    assert_matches(out, c, dtype)


# -- dynamic batch: one compiled version, every batch size ------------------

BATCHES = [1, 3, 17, 129]


def _run_batches(f, make_args, reference):
    for batch in BATCHES:
        args = make_args(batch)
        expected = reference(*args)
        assert_matches(f(*args), expected, np.float32)
    assert f.cache_size() == 1


def test_dynamic_batch_elementwise_and_reductions(rng):
    bias = random_array(rng, (17,), "float32")

    @dlc.jit(dynamic_batch=True)
    def f(x):
        return dlc.sum(dlc.exp(x - bias) * 0.5, axis=1, keepdims=True) + dlc.max(x)

    def reference(x):
        x64 = x.astype(np.float64)
        return np.sum(np.exp(x64 - bias) * 0.5, axis=1, keepdims=True) + x64.max()

    _run_batches(f, lambda b: (random_array(rng, (b, 17), "float32"),), reference)


def test_dynamic_batch_matmul_softmax_reshape_transpose(rng):
    w = random_array(rng, (12, 5), "float32")

    @dlc.jit(dynamic_batch=True)
    def f(x):
        flat = x.reshape(-1, 12)
        swapped = dlc.transpose(x, (0, 2, 1)).reshape(x.shape[0], 12)
        return dlc.softmax(flat @ w, axis=-1) + dlc.relu(swapped @ w)

    def reference(x):
        x64 = x.astype(np.float64)
        logits = x64.reshape(-1, 12) @ w
        e = np.exp(logits - logits.max(-1, keepdims=True))
        swapped = np.transpose(x64, (0, 2, 1)).reshape(x.shape[0], 12)
        return e / e.sum(-1, keepdims=True) + np.maximum(swapped @ w, 0)

    _run_batches(f, lambda b: (random_array(rng, (b, 3, 4), "float32"),), reference)


def test_dynamic_batch_batched_matmuls(rng):
    w = random_array(rng, (4, 5), "float32", low=0, high=1)

    @dlc.jit(dynamic_batch=True)
    def f(x):
        gram = x @ dlc.transpose(x, (0, 2, 1))        # batch_matmul, dynamic batch
        return dlc.sum(gram, axis=2, keepdims=True) * (x @ w)  # broadcast rhs batch

    def reference(x):
        x64 = x.astype(np.float64)
        gram = x64 @ np.transpose(x64, (0, 2, 1))
        return gram.sum(axis=2, keepdims=True) * (x64 @ w)

    # Positive inputs: no cancellation, so float32 stays within its tolerance.
    _run_batches(f, lambda b: (random_array(rng, (b, 3, 4), "float32", low=0, high=1),),
                 reference)


def test_dynamic_batch_selected_arguments(rng):
    @dlc.jit(dynamic_batch=("x", "y"))
    def f(x, y, w):
        return (x + y) @ w

    w = random_array(rng, (17, 3), "float32")
    _run_batches(f, lambda b: (random_array(rng, (b, 17), "float32"),
                               random_array(rng, (b, 17), "float32"), w),
                 lambda x, y, w: (x.astype(np.float64) + y) @ w)


def test_dynamic_batch_of_zero_rows(rng):
    f = dlc.jit(lambda x: dlc.softmax(x, axis=-1) * 2.0, dynamic_batch=True)
    out = f(np.zeros((0, 5), np.float32))
    assert out.shape == (0, 5) and out.dtype == np.float32
    assert_matches(f(np.zeros((2, 5), np.float32)), np.full((2, 5), 0.4), np.float32)
    assert f.cache_size() == 1


# -- slices and concatenations at the edges (issue 17: valid programs the
# lowering refused) ----------------------------------------------------------

EDGE_SLICES = [
    ((0, 3), lambda x: x[:, 1:]),
    ((0, 3), lambda x: x[:, ::-1]),
    ((4, 5), lambda x: x[0:0:-1]),
    ((4, 5), lambda x: x[3:1, ::-1]),
    ((4, 5), lambda x: x[::-1, :3]),
    ((4, 5), lambda x: x[:2, ::-1]),
    ((4, 5), lambda x: x[::-1, 0]),
    ((4, 5), lambda x: x[1::-1, 1:4:2]),
    ((4, 5), lambda x: x[::-2, ::-3]),
    ((3, 4, 5), lambda x: x[::-1, 1:3, ::-2]),
    ((3, 4, 5), lambda x: x[2, ::-1, 1:]),
]


@pytest.mark.parametrize("shape,index", EDGE_SLICES)
def test_slices_with_reversed_or_empty_dimensions(shape, index):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    out = dlc.jit(index)(x)
    assert out.shape == index(x).shape
    np.testing.assert_array_equal(out, index(x))


def test_random_slices_match_numpy():
    rng = np.random.default_rng(17)
    x = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
    for _ in range(40):
        key = []
        for size in x.shape:
            step = int(rng.choice([-3, -2, -1, 1, 2]))
            start, stop = (int(v) for v in rng.integers(-size - 1, size + 1, 2))
            key.append(slice(start, stop, step))
        key = tuple(key)
        expected = x[key]
        np.testing.assert_array_equal(dlc.jit(lambda a: a[key])(x), expected,
                                      err_msg=str(key))


@pytest.mark.parametrize("parts", [
    lambda x: [x, x[:0]], lambda x: [x[:0], x], lambda x: [x[:0], x, x[:0]],
    lambda x: [x[:0], x[:0]]])
def test_concatenate_with_empty_operands(parts):
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    out = dlc.jit(lambda a: dlc.concatenate(parts(a), axis=0))(x)
    np.testing.assert_array_equal(out, np.concatenate(parts(x), axis=0))


def test_convolution_with_no_input_channels_and_padding():
    w = np.zeros((4, 0, 3, 3), np.float32)
    out = dlc.jit(lambda x: dlc.conv2d(x, w, padding=1))(np.zeros((1, 0, 5, 5), np.float32))
    np.testing.assert_array_equal(out, np.zeros((1, 4, 5, 5), np.float32))


# -- more elementwise ops: the special values numpy defines -------------------

ALL_FLOATS = FLOATS + [np.dtype(ml_dtypes.bfloat16)]
SPECIAL = [-np.inf, -2.5, -1.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, 2.5, 3.7, np.inf, np.nan]


def _same_as_numpy(got, expected, dtype):
    """Equal to numpy's result rounded to `dtype` (exact where the result is
    exact: rounding, sign, remainders), NaN where numpy is NaN, and zeros of
    the same sign."""
    expected = np.asarray(expected).astype(dtype)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    wide_got, wide_expected = got.astype(np.float64), expected.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(wide_got), np.isnan(wide_expected))
    np.testing.assert_array_equal(wide_got, wide_expected)
    numbers = ~np.isnan(wide_expected)  # a NaN's sign bit is not specified
    np.testing.assert_array_equal(np.signbit(wide_got[numbers]),
                                  np.signbit(wide_expected[numbers]))


@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=str)
@pytest.mark.parametrize("name", ["floor", "ceil", "round", "sign"])
def test_rounding_and_sign_of_special_values(name, dtype):
    """Halfway cases round to even, -0.5 rounds to -0, infinities stay,
    NaN stays NaN; sign(NaN) is NaN and sign(-0.0) is 0."""
    a = np.array(SPECIAL, dtype)
    got = dlc.jit(getattr(dlc, name))(a)
    _same_as_numpy(got, getattr(np, name)(a.astype(np.float64)), dtype)


@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=str)
def test_isnan_isinf(dtype):
    a = np.array(SPECIAL, dtype)
    nan, inf = dlc.jit(lambda x: (dlc.isnan(x), dlc.isinf(x)))(a)
    np.testing.assert_array_equal(nan, np.isnan(a.astype(np.float64)))
    np.testing.assert_array_equal(inf, np.isinf(a.astype(np.float64)))
    assert nan.dtype == np.bool_ and inf.dtype == np.bool_


@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=str)
def test_trig_outside_domains_and_at_infinities(dtype):
    """NaN outside a domain, infinities where numpy gives them (arctanh(1),
    sinh(inf), cosh(-inf)), and the usual values on the edges."""
    special = np.array([-np.inf, -2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, np.inf, np.nan], dtype)
    names = ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh",
             "arccosh", "arctanh"]
    got = dlc.jit(lambda x: tuple(getattr(dlc, n)(x) for n in names))(special)
    with np.errstate(all="ignore"):
        for name, result in zip(names, got):
            expected = getattr(np, name)(special.astype(np.float64))
            np.testing.assert_array_equal(np.isnan(result.astype(np.float64)), np.isnan(expected),
                                          err_msg=name)
            finite = np.isfinite(expected)
            np.testing.assert_array_equal(result[~finite].astype(np.float64), expected[~finite],
                                          err_msg=name)
            assert_matches(result[finite], expected[finite], dtype)


def test_round_decimals_like_numpy(rng):
    for dtype in ["float32", "float64"]:
        a = random_array(rng, (3, 17), dtype, low=-50, high=50)
        for decimals in (2, 1, -1):
            got = dlc.jit(lambda x: dlc.round(x, decimals))(a)
            assert_matches(got, np.round(a, decimals).astype(np.float64), dtype)


def test_rounding_keeps_integers():
    a = np.array([-3, 0, 7], np.int32)
    for fn in (dlc.floor, dlc.ceil, dlc.round):
        np.testing.assert_array_equal(dlc.jit(lambda x: fn(x) + 0)(a), a)


def test_logical_ops_take_truth_values_and_broadcast():
    p = np.array([[True], [False]])
    q = np.array([True, False, True])
    i = np.array([0, 2, -1], np.int8)
    f = np.array([[0.0, np.nan, -0.5]], np.float32)
    got = dlc.jit(lambda p, q, i, f: (dlc.logical_and(p, q), dlc.logical_or(p, i),
                                      dlc.logical_xor(f, q), dlc.logical_not(f),
                                      dlc.logical_and(p, True)))(p, q, i, f)
    expected = (np.logical_and(p, q), np.logical_or(p, i), np.logical_xor(f, q),
                np.logical_not(f), np.logical_and(p, True))
    for r, e in zip(got, expected):
        assert r.dtype == np.bool_
        np.testing.assert_array_equal(r, e)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "bool"])
def test_bitwise_ops_at_the_extremes(dtype):
    if dtype == "bool":
        a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    else:
        info = np.iinfo(dtype)
        a = np.array([info.min, info.max, -1, 0, 5, -6], dtype)
        b = np.array([info.max, info.min, info.min, -1, 3, 10], dtype)
    got = dlc.jit(lambda x, y: (x & y, x | y, x ^ y, ~x, dlc.invert(y)))(a, b)
    for r, e in zip(got, (a & b, a | b, a ^ b, ~a, np.invert(b))):
        assert r.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(r, e)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_remainders_never_trap(dtype):
    """x % 0 and fmod(x, 0) are 0, as numpy returns them (without its
    warning); INT_MIN % -1 is 0 (the division instruction would trap)."""
    info = np.iinfo(dtype)
    a = np.array([7, -7, 7, -7, 5, info.min, info.min, info.max, 0, -3], dtype)
    b = np.array([3, 3, -3, -3, 0, -1, 7, info.min, -5, info.max], dtype)
    got = dlc.jit(lambda x, y: (x % y, dlc.fmod(x, y), dlc.mod(x, 4)))(a, b)
    with np.errstate(all="ignore"):
        expected = (np.remainder(a, b), np.fmod(a, b), np.mod(a, 4))
    for r, e in zip(got, expected):
        np.testing.assert_array_equal(r, e)


@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=str)
def test_float_remainders_of_special_values(dtype):
    """remainder has the divisor's sign (zeros too), fmod the dividend's;
    x % 0 and inf % y are NaN; x % inf follows numpy."""
    a = np.array([7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 4.0, 3.0, np.inf, 5.0, -5.0, np.nan, 1.0],
                 dtype)
    b = np.array([2.0, 2.0, -2.0, -2.0, -3.0, 3.0, 2.0, 0.0, 2.0, np.inf, np.inf, 1.0, np.nan],
                 dtype)
    got_remainder, got_fmod = dlc.jit(lambda x, y: (dlc.remainder(x, y), dlc.fmod(x, y)))(a, b)
    with np.errstate(all="ignore"):
        wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
        _same_as_numpy(got_remainder, np.remainder(wide_a, wide_b), dtype)
        _same_as_numpy(got_fmod, np.fmod(wide_a, wide_b), dtype)


def test_layer_norm_of_equal_values_is_exact():
    """A row of equal values normalizes to exactly 0 (then beta), as in
    PyTorch (Welford's mean): the corrected two-pass mean. sum / n alone was
    off by a rounding, 1e-4 relative after division by sqrt(eps) (found by
    the importer fuzzer, random/91358/291)."""
    rng = np.random.default_rng(11)
    x = np.repeat(rng.standard_normal((30, 1)).astype(np.float32), 3, axis=1)
    gamma = rng.uniform(-1, 1, 3).astype(np.float32)
    beta = rng.uniform(-1, 1, 3).astype(np.float32)
    y = dlc.jit(lambda a: dlc.layer_norm(a, gamma, beta, axis=-1))(x)
    np.testing.assert_array_equal(y, np.broadcast_to(beta, y.shape))
