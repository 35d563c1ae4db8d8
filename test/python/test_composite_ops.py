"""The composite ops of dlc.composite against numpy / PyTorch references, in
float32 and float64 (and the integer dtypes where they apply), with size-1
and odd dimensions, and the errors they give."""

import numpy as np
import pytest

import dlc

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-12, atol=1e-13)}


def _run(fn, *arrays, **kwargs):
    return dlc.jit(lambda *a: fn(*a, **kwargs))(*arrays)


def _t(x):
    return torch.from_numpy(np.ascontiguousarray(x))


ACTIVATIONS = [
    ("reciprocal", dlc.reciprocal, lambda x: 1 / x, {}),
    ("softplus", dlc.softplus, lambda x: np.logaddexp(0, x), {}),
    ("softsign", dlc.softsign, lambda x: x / (1 + np.abs(x)), {}),
    ("elu", dlc.elu, lambda x: torch.nn.functional.elu(_t(x), 0.7).numpy(), {"alpha": 0.7}),
    ("selu", dlc.selu, lambda x: torch.nn.functional.selu(_t(x)).numpy(), {}),
    ("celu", dlc.celu, lambda x: torch.nn.functional.celu(_t(x), 1.3).numpy(), {"alpha": 1.3}),
    ("hard_sigmoid", dlc.hard_sigmoid,
     lambda x: torch.nn.functional.hardsigmoid(_t(x)).numpy(), {}),
    ("mish", dlc.mish, lambda x: torch.nn.functional.mish(_t(x)).numpy(), {}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,fn,ref,kwargs", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activations(name, fn, ref, kwargs, dtype):
    x = RNG.uniform(-30, 30, size=(3, 1, 17)).astype(dtype)
    if name == "reciprocal":
        x[x == 0] = 1
    np.testing.assert_allclose(_run(fn, x, **kwargs), ref(x), **TOL[dtype])


def test_activations_refuse_integers():
    with pytest.raises(dlc.DTypeError, match="softplus needs a floating-point"):
        _run(dlc.softplus, np.arange(3))


def test_prelu_and_logsumexp():
    x = RNG.standard_normal((2, 3, 5)).astype(np.float32)
    slope = RNG.uniform(0, 1, (3, 1)).astype(np.float32)
    np.testing.assert_allclose(_run(dlc.prelu, x, slope), np.where(x < 0, x * slope, x))
    ref = torch.logsumexp(_t(x), dim=(0, 2)).numpy()
    np.testing.assert_allclose(_run(dlc.logsumexp, x, axis=(0, 2)), ref, rtol=1e-5)
    big = np.array([[1000.0, 1000.0], [-np.inf, -np.inf]], np.float32)
    np.testing.assert_allclose(_run(dlc.logsumexp, big, axis=1),
                               [1000 + np.log(2), -np.inf], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_shape_ops(dtype):
    x = (RNG.standard_normal((2, 3, 4)) * 10).astype(dtype)
    np.testing.assert_array_equal(_run(dlc.flip, x, axis=(0, 2)), np.flip(x, (0, 2)))
    np.testing.assert_array_equal(_run(dlc.flip, x), np.flip(x))
    for reps in [(2,), (1, 3, 1), (2, 1, 2, 2)]:
        np.testing.assert_array_equal(_run(dlc.tile, x, reps=reps), np.tile(x, reps))
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(_run(dlc.tril, x, k=k), np.tril(x, k))
        np.testing.assert_array_equal(_run(dlc.triu, x, k=k), np.triu(x, k))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_cumulative(dtype):
    x = RNG.integers(-3, 4, size=(3, 5, 2)).astype(dtype)
    for axis in (0, 1, -1):
        np.testing.assert_allclose(_run(dlc.cumsum, x, axis=axis), np.cumsum(x, axis))
        np.testing.assert_allclose(_run(dlc.cumprod, x, axis=axis), np.cumprod(x, axis))
    ref = np.flip(np.cumsum(np.flip(x, 1), 1), 1) - x
    np.testing.assert_allclose(_run(dlc.cumsum, x, axis=1, exclusive=True, reverse=True), ref)
    ref = np.cumprod(np.concatenate([np.ones_like(x[:, :1]), x[:, :-1]], 1), 1)
    np.testing.assert_allclose(_run(dlc.cumprod, x, axis=1, exclusive=True), ref)


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_prod(dtype):
    x = RNG.integers(-3, 4, size=(2, 7, 3)).astype(dtype)
    for axis in (None, 1, (0, 2)):
        np.testing.assert_allclose(_run(dlc.prod, x, axis=axis), np.prod(x, axis=axis))
    np.testing.assert_allclose(_run(dlc.prod, x, axis=1, keepdims=True),
                               np.prod(x, axis=1, keepdims=True))


def test_take_along_axis_and_one_hot():
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    for axis in range(3):
        shape = list(x.shape)
        shape[axis] = 2
        idx = RNG.integers(-x.shape[axis], x.shape[axis], size=shape)
        np.testing.assert_array_equal(_run(dlc.take_along_axis, x, idx, axis=axis),
                                      np.take_along_axis(x, idx % x.shape[axis], axis))
    labels = np.array([[0, 2], [-1, 5]])
    ref = torch.nn.functional.one_hot(_t(labels % 4).long(), 4).numpy().astype(np.float32)
    ref[1, 1] = 0  # out of range: all off
    np.testing.assert_array_equal(_run(dlc.one_hot, labels, depth=4), ref)


def test_top_k():
    x = np.array([[3, 1, 3, 2], [0, -1, 5, 5]], np.float32)
    values, indices = _run(dlc.top_k, x, k=3)
    np.testing.assert_array_equal(values, [[3, 3, 2], [5, 5, 0]])
    np.testing.assert_array_equal(indices, [[0, 2, 3], [2, 3, 0]])
    values, indices = _run(dlc.top_k, x, k=2, axis=0, largest=False)
    ref = torch.topk(_t(x), 2, dim=0, largest=False)
    np.testing.assert_array_equal(values, ref.values.numpy())
    with pytest.raises(dlc.ShapeError, match="k = 5 is out of range"):
        _run(dlc.top_k, x, k=5)


@pytest.mark.parametrize("spec,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(4, 4)]), ("ij->", [(3, 4)]), ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("i,j->ij", [(3,), (4,)]), ("...ij,...jk", [(2, 3, 4), (2, 4, 2)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
])
def test_einsum(spec, shapes):
    arrays = [RNG.standard_normal(s).astype(np.float64) for s in shapes]
    got = dlc.jit(lambda *a: dlc.einsum(spec, *a))(*arrays)
    np.testing.assert_allclose(got, np.einsum(spec, *arrays), rtol=1e-12, atol=1e-12)


def test_pixel_rearrangements():
    x = RNG.standard_normal((2, 8, 3, 5)).astype(np.float32)
    ref = torch.nn.functional.pixel_shuffle(_t(x), 2).numpy()
    np.testing.assert_array_equal(_run(dlc.depth_to_space, x, block_size=2, mode="CRD"), ref)
    y = RNG.standard_normal((2, 3, 4, 6)).astype(np.float32)
    ref = torch.nn.functional.pixel_unshuffle(_t(y), 2).numpy()
    np.testing.assert_array_equal(_run(dlc.space_to_depth, y, block_size=2, mode="CRD"), ref)
    back = _run(dlc.depth_to_space, _run(dlc.space_to_depth, y, block_size=2), block_size=2)
    np.testing.assert_array_equal(back, y)


@pytest.mark.parametrize("stride,padding,output_padding,groups,dilation", [
    (1, 0, 0, 1, 1), (2, 1, 1, 1, 1), (3, 2, 0, 2, 1), (2, 0, 1, 1, 2), (1, 3, 0, 1, 1)])
def test_conv_transpose2d(stride, padding, output_padding, groups, dilation):
    x = RNG.standard_normal((2, 4, 5, 6)).astype(np.float32)
    w = RNG.standard_normal((4, 6 // groups, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(6).astype(np.float32)
    ref = torch.nn.functional.conv_transpose2d(
        _t(x), _t(w), _t(b), stride, padding, output_padding, groups, dilation).numpy()
    got = _run(dlc.conv_transpose2d, x, w, b, stride=stride, padding=padding,
               output_padding=output_padding, groups=groups, dilation=dilation)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_normalizations():
    x = RNG.standard_normal((2, 6, 4, 5)).astype(np.float32)
    scale = RNG.uniform(0.5, 1.5, 6).astype(np.float32)
    bias = RNG.standard_normal(6).astype(np.float32)
    ref = torch.nn.functional.instance_norm(_t(x), weight=_t(scale), bias=_t(bias)).numpy()
    np.testing.assert_allclose(_run(dlc.instance_norm, x, scale, bias), ref, atol=1e-5)
    ref = torch.nn.functional.group_norm(_t(x), 3, _t(scale), _t(bias)).numpy()
    np.testing.assert_allclose(_run(dlc.group_norm, x, 3, scale, bias), ref, atol=1e-5)
    g = RNG.uniform(0.5, 1.5, 5).astype(np.float32)
    ref = torch.nn.functional.rms_norm(_t(x), (5,), _t(g), eps=1e-6).numpy()
    np.testing.assert_allclose(_run(dlc.rms_norm, x, g), ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(dlc.ShapeError, match="do not divide into 4 groups"):
        _run(dlc.group_norm, x, 4)


def test_group_norm_with_a_dynamic_batch():
    # [N, G, -1] held two -1s when N was dynamic (found by the importer
    # fuzzer's torch-dynamic frontend): one compiled version, two batch sizes
    f = dlc.jit(lambda x: dlc.group_norm(x, 3), dynamic_batch=True)
    for batch in (2, 5):
        x = RNG.standard_normal((batch, 6, 4, 5)).astype(np.float32)
        ref = torch.nn.functional.group_norm(_t(x), 3).numpy()
        np.testing.assert_allclose(f(x), ref, atol=1e-5)
    assert f.cache_size() == 1


@pytest.mark.parametrize("mode", ["edge", "reflect", "wrap"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_pad_modes(mode, dtype):
    x = (RNG.standard_normal((3, 4, 5)) * 10).astype(dtype)
    for widths in [((1, 2), (0, 3), (2, 0)), 1, ((0, 0), (3, 3), (4, 1))]:
        np.testing.assert_array_equal(_run(dlc.pad, x, pad_width=widths, mode=mode),
                                      np.pad(x, widths, mode=mode))


def test_pad_mode_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(dlc.ShapeError, match="mode 'reflect' cannot pad"):
        _run(dlc.pad, x, pad_width=2, mode="reflect")
    with pytest.raises(ValueError, match="mode must be"):
        _run(dlc.pad, x, pad_width=1, mode="symmetric")


def test_gathers_sort_and_top_k_with_a_dynamic_batch():
    # take_along_axis's flat gather needs every dimension static; with a
    # dynamic batch it selects by a one-hot comparison instead (found by the
    # importer fuzzer's torch-dynamic frontend: topk, sort and gather of a
    # batched tensor were refused). One compiled version per function.
    take = dlc.jit(lambda x, i: dlc.take_along_axis(x, i, 1), dynamic_batch=True)
    gather = dlc.jit(lambda x, i: dlc.gather_elements(x, i, 2), dynamic_batch=True)
    top = dlc.jit(lambda x: dlc.top_k(x, 3, axis=-1), dynamic_batch=True)
    order = dlc.jit(lambda x: dlc.sort(x, axis=1), dynamic_batch=True)
    for batch in (2, 5):
        x = RNG.standard_normal((batch, 5, 4)).astype(np.float32)
        i = RNG.integers(-5, 5, (batch, 3, 4))
        np.testing.assert_array_equal(take(x, i), np.take_along_axis(x, i % 5, 1))
        j = RNG.integers(0, 4, (batch, 2, 3))
        np.testing.assert_array_equal(gather(x, j), torch.gather(_t(x), 2, _t(j)).numpy())
        values, indices = top(x)
        want = torch.topk(_t(x), 3)
        np.testing.assert_array_equal(values, want.values.numpy())
        np.testing.assert_array_equal(indices, want.indices.numpy())
        values, indices = order(x)
        np.testing.assert_array_equal(values, np.sort(x, 1))
        np.testing.assert_array_equal(indices, np.argsort(x, 1, kind="stable"))
    for f in (take, gather, top, order):
        assert f.cache_size() == 1
    # the selected axis itself cannot be the dynamic one
    with pytest.raises(dlc.ShapeError, match="dimension 0 .* static"):
        dlc.jit(lambda x: dlc.top_k(x, 1, axis=0), dynamic_batch=True)(x)
