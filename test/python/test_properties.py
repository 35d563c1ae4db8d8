"""Property-based checks with hypothesis: broadcasting and reductions agree
with numpy for generated shapes, axes and values, and dlc refuses exactly the
shapes numpy refuses.

Examples are derandomized (the same on every run) so CI is reproducible; each
example compiles a function, hence the modest example counts.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dlc
from conftest import assert_matches

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)

BINARY = {
    "add": (dlc.add, np.add),
    "subtract": (dlc.subtract, np.subtract),
    "multiply": (dlc.multiply, np.multiply),
    "maximum": (dlc.maximum, np.maximum),
    "greater": (dlc.greater, np.greater),
}


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=5),
       op=st.sampled_from(sorted(BINARY)), dtype=st.sampled_from(["float32", "int32"]),
       seed=st.integers(0, 2**16))
def test_binary_ops_broadcast_like_numpy(shapes, op, dtype, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.integers(-5, 5, size=s).astype(dtype) for s in shapes.input_shapes)
    dlc_op, numpy_op = BINARY[op]
    expected = numpy_op(a, b)
    assert_matches(dlc.jit(dlc_op)(a, b), expected, expected.dtype)


@SETTINGS
@given(a=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
       b=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
def test_dlc_refuses_exactly_what_numpy_refuses(a, b):
    x, y = np.ones(a, np.float32), np.ones(b, np.float32)
    try:
        expected = np.add(x, y)
    except ValueError:
        expected = None
    if expected is None:
        try:
            dlc.jit(dlc.add)(x, y)
        except dlc.ShapeError as error:
            assert "not broadcast-compatible" in str(error)
        else:
            raise AssertionError(f"dlc accepted shapes {a} and {b} that numpy refuses")
    else:
        assert_matches(dlc.jit(dlc.add)(x, y), expected)


@st.composite
def reductions(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    axes = draw(st.one_of(
        st.none(),
        st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=len(shape),
                 unique_by=lambda a: a % len(shape)).map(tuple)))
    return shape, axes, draw(st.booleans()), draw(st.sampled_from(["sum", "mean", "max", "min"]))


@SETTINGS
@given(case=reductions(), seed=st.integers(0, 2**16))
def test_reductions_match_numpy(case, seed):
    shape, axes, keepdims, op = case
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    f = dlc.jit(lambda t: getattr(dlc, op)(t, axis=axes, keepdims=keepdims))
    expected = getattr(np, op)(x.astype(np.float64), axis=axes, keepdims=keepdims)
    assert_matches(f(x), np.asarray(expected), np.float32)


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=2, max_dims=3, max_side=6), seed=st.integers(0, 2**16))
def test_dynamic_batch_reductions_over_every_axis(shape, seed):
    rng = np.random.default_rng(seed)
    f = dlc.jit(lambda t: [dlc.sum(t, axis=i) for i in range(len(shape))], dynamic_batch=True)
    for batch in (1, shape[0]):
        x = rng.standard_normal((batch,) + shape[1:]).astype(np.float32)
        for i, got in enumerate(f(x)):
            assert_matches(got, x.astype(np.float64).sum(axis=i), np.float32)
    assert f.cache_size() == 1
