"""dlc.grad / dlc.value_and_grad: every vector-Jacobian rule against PyTorch
autograd (float32 and float64; shapes with broadcasting and size-1 dims) and
against central finite differences in float64; the API's refusals."""

import numpy as np
import pytest

import dlc

torch = pytest.importorskip("torch")

# (name, dlc function, torch function, input shapes, input domain)
CASES = [
    ("add_broadcast", lambda a, b: a + b, lambda a, b: a + b, [(3, 4), (4,)], None),
    ("sub_size1", lambda a, b: a - b, lambda a, b: a - b, [(3, 1), (1, 4)], None),
    ("mul_scalar_operand", lambda a, b: a * b, lambda a, b: a * b, [(2, 3, 4), ()], None),
    ("div", lambda a, b: a / b, lambda a, b: a / b, [(3, 4), (3, 4)], "positive"),
    ("pow", lambda a, b: a ** b, lambda a, b: a ** b, [(3, 4), (4,)], "positive"),
    ("maximum_ties", lambda a, b: dlc.maximum(a, b), torch.maximum, [(3, 4), (3, 4)], "ties"),
    ("minimum", lambda a, b: dlc.minimum(a, b), torch.minimum, [(3, 4), (1, 4)], None),
    ("neg_abs", lambda a: dlc.abs(-a), lambda a: torch.abs(-a), [(5,)], None),
    ("exp_log", lambda a: dlc.log(dlc.exp(a) + 1.0), lambda a: torch.log(torch.exp(a) + 1),
     [(3, 4)], None),
    ("sqrt_rsqrt", lambda a: dlc.sqrt(a) + dlc.rsqrt(a),
     lambda a: torch.sqrt(a) + torch.rsqrt(a), [(6,)], "positive"),
    ("tanh_sigmoid", lambda a: dlc.tanh(a) * dlc.sigmoid(a),
     lambda a: torch.tanh(a) * torch.sigmoid(a), [(3, 4)], None),
    ("relu", dlc.relu, torch.relu, [(4, 5)], None),
    ("leaky_relu", lambda a: dlc.leaky_relu(a, 0.1),
     lambda a: torch.nn.functional.leaky_relu(a, 0.1), [(4, 5)], None),
    ("silu", dlc.silu, torch.nn.functional.silu, [(4, 5)], None),
    ("gelu", dlc.gelu, torch.nn.functional.gelu, [(4, 5)], None),
    ("gelu_tanh", lambda a: dlc.gelu(a, approximate="tanh"),
     lambda a: torch.nn.functional.gelu(a, approximate="tanh"), [(4, 5)], None),
    ("hardswish", dlc.hardswish, torch.nn.functional.hardswish, [(4, 5)], "wide"),
    ("erf", dlc.erf, torch.erf, [(7,)], None),
    ("trig", lambda a: dlc.sin(a) * dlc.cos(a) + dlc.tan(a * 0.3),
     lambda a: torch.sin(a) * torch.cos(a) + torch.tan(a * 0.3), [(6,)], None),
    ("hyperbolic", lambda a: dlc.sinh(a) + dlc.cosh(a) + dlc.arctan(a) + dlc.arcsinh(a),
     lambda a: torch.sinh(a) + torch.cosh(a) + torch.atan(a) + torch.asinh(a), [(6,)], None),
    ("inverse_trig", lambda a: dlc.arcsin(a * 0.5) + dlc.arccos(a * 0.5) + dlc.arctanh(a * 0.5),
     lambda a: torch.asin(a * 0.5) + torch.acos(a * 0.5) + torch.atanh(a * 0.5), [(6,)],
     "unit"),
    ("where", lambda a, b: dlc.where(a > b, a * 2.0, b), lambda a, b: torch.where(a > b, a * 2, b),
     [(3, 4), (4,)], None),
    ("matmul", lambda a, b: a @ b, lambda a, b: a @ b, [(3, 5), (5, 4)], None),
    ("matmul_batched_broadcast", lambda a, b: a @ b, lambda a, b: a @ b,
     [(2, 3, 5), (5, 4)], None),
    ("sum_axes", lambda a: dlc.sum(a, axis=(0, 2)), lambda a: a.sum((0, 2)), [(2, 3, 4)], None),
    ("mean_keepdims", lambda a: dlc.mean(a, axis=1, keepdims=True) * a,
     lambda a: a.mean(1, keepdim=True) * a, [(3, 4)], None),
    ("max_axis", lambda a: dlc.max(a, axis=1), lambda a: torch.amax(a, 1), [(3, 4)], None),
    ("min_all", lambda a: dlc.min(a), lambda a: torch.amin(a), [(3, 4)], None),
    ("softmax", lambda a: dlc.softmax(a, axis=-1), lambda a: torch.softmax(a, -1), [(3, 5)], None),
    ("log_softmax", lambda a: dlc.log_softmax(a, axis=0), lambda a: torch.log_softmax(a, 0),
     [(3, 5)], None),
    ("transpose", lambda a: dlc.transpose(a, (2, 0, 1)) * 1.5,
     lambda a: a.permute(2, 0, 1) * 1.5, [(2, 3, 4)], None),
    ("reshape", lambda a: dlc.reshape(a, (4, 6)) ** 2.0, lambda a: a.reshape(4, 6) ** 2,
     [(2, 3, 4)], None),
    ("broadcast_to", lambda a: dlc.broadcast_to(a, (3, 2, 4)), lambda a: a.expand(3, 2, 4),
     [(2, 1)], None),
    ("slice", lambda a: a[1:3, :2] * 3.0, lambda a: a[1:3, :2] * 3, [(4, 5)], None),
    ("slice_strided", lambda a: a[::2, 1::3] * 3.0, lambda a: a[::2, 1::3] * 3, [(5, 7)], None),
    ("slice_reversed", lambda a: a[::-1, 4:0:-2] * 3.0,
     lambda a: torch.flip(a, (0,))[:, [4, 2]] * 3, [(3, 6)], None),
    ("take", lambda a: dlc.take(a, np.array([[2, 0], [2, -1]]), axis=1),
     lambda a: a[:, torch.tensor([[2, 0], [2, 3]])], [(3, 4, 2)], None),
    ("embedding", lambda e: dlc.take(e, np.array([1, 4, 1, 1]), axis=0),
     lambda e: e[torch.tensor([1, 4, 1, 1])], [(6, 3)], None),
    ("concat", lambda a, b: dlc.concatenate([a, b, a], axis=1),
     lambda a, b: torch.cat([a, b, a], 1), [(2, 3), (2, 1)], None),
    ("pad", lambda a: dlc.pad(a, ((1, 0), (2, 1))), lambda a: torch.nn.functional.pad(a, (2, 1, 1, 0)),
     [(2, 3)], None),
    ("cast", lambda a: dlc.astype(dlc.astype(a, np.float16), a.dtype) + a,
     lambda a: a.half().to(a.dtype) + a, [(5,)], None),
    ("mlp_cross_entropy",
     lambda x, w1, w2: -dlc.mean(dlc.log_softmax(dlc.relu(x @ w1) @ w2, axis=-1)[:, :1]),
     lambda x, w1, w2: -torch.log_softmax(torch.relu(x @ w1) @ w2, -1)[:, :1].mean(),
     [(4, 6), (6, 8), (8, 3)], None),
]


def _inputs(shapes, domain, dtype, rng):
    arrays = []
    for shape in shapes:
        if domain == "positive":
            a = rng.uniform(0.5, 2.0, shape)
        elif domain == "unit":
            a = rng.uniform(-0.9, 0.9, shape)
        elif domain == "wide":
            a = rng.uniform(-5, 5, shape)
        else:
            a = rng.standard_normal(shape)
        arrays.append(np.asarray(a, dtype=dtype))
    if domain == "ties" and len(arrays) == 2:
        arrays[1].flat[::3] = arrays[0].flat[::3]  # equal elements: the tie rule
    return arrays


def _loss(fn, weight):
    return lambda *xs: dlc.sum(fn(*xs) * weight)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,fn,tfn,shapes,domain", CASES, ids=[c[0] for c in CASES])
def test_rule_matches_torch_autograd(name, fn, tfn, shapes, domain, dtype):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    xs = _inputs(shapes, domain, dtype, rng)
    tensors = [torch.tensor(x, requires_grad=True) for x in xs]
    out = tfn(*tensors)
    weight = rng.standard_normal(tuple(out.shape)).astype(dtype)
    (out * torch.tensor(weight)).sum().backward()
    value, grads = dlc.value_and_grad(_loss(fn, weight), argnums=tuple(range(len(xs))))(*xs)
    tol = dict(rtol=2e-4, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(value, float((out * torch.tensor(weight)).sum().detach()),
                               **tol)
    for g, t in zip(grads, tensors):
        assert g.dtype == dtype and g.shape == tuple(t.shape)
        np.testing.assert_allclose(g, t.grad.numpy(), **tol)


@pytest.mark.parametrize("name,fn,tfn,shapes,domain",
                         [c for c in CASES if c[4] != "ties" and c[0] not in ("relu", "cast")],
                         ids=[c[0] for c in CASES if c[4] != "ties"
                              and c[0] not in ("relu", "cast")])
def test_rule_matches_finite_differences(name, fn, tfn, shapes, domain):
    """Central differences in float64 (away from kinks: relu and ties are
    checked against autograd only; cast rounds through float16)."""
    rng = np.random.default_rng(7)
    xs = _inputs(shapes, domain, np.float64, rng)
    out_shape = np.asarray(tfn(*[torch.tensor(x) for x in xs])).shape
    weight = rng.standard_normal(out_shape)
    loss = _loss(fn, weight)
    grads = dlc.grad(loss, argnums=tuple(range(len(xs))))(*xs)
    value = dlc.jit(loss)
    eps = 1e-6
    for index, (x, g) in enumerate(zip(xs, grads)):
        for flat in rng.choice(x.size, size=min(x.size, 4), replace=False):
            plus, minus = [a.copy() for a in xs], [a.copy() for a in xs]
            plus[index].flat[flat] += eps
            minus[index].flat[flat] -= eps
            numeric = (float(value(*plus)) - float(value(*minus))) / (2 * eps)
            assert abs(g.flat[flat] - numeric) <= 1e-5 * (1 + abs(numeric)), \
                (name, index, flat, g.flat[flat], numeric)


def test_grad_composes_with_jit_and_has_aux():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    x = rng.standard_normal((5, 4)).astype(np.float32)

    def loss(w, x):
        logits = x @ w
        return dlc.mean(logits * logits), logits

    (value, logits), g = dlc.value_and_grad(loss, has_aux=True)(w, x)
    np.testing.assert_allclose(logits, x @ w, rtol=1e-5)
    np.testing.assert_allclose(g, x.T @ (2 * (x @ w)) / (5 * 3), rtol=1e-5)

    @dlc.jit
    def sgd_step(w, x):  # one compiled call: forward, backward, update
        value, g = dlc.value_and_grad(lambda w: loss(w, x)[0])(w)
        return w - 0.1 * g, value

    new_w, value2 = sgd_step(w, x)
    np.testing.assert_allclose(new_w, w - 0.1 * g, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(value2, value, rtol=1e-6)
    grads, aux = dlc.grad(loss, has_aux=True)(w, x)
    np.testing.assert_allclose(grads, g, rtol=1e-6)


def test_unused_argument_gets_zeros():
    g = dlc.grad(lambda a, b: dlc.sum(a * 2.0), argnums=1)(np.ones(3, np.float32),
                                                            np.ones((2, 2), np.float32))
    np.testing.assert_array_equal(g, np.zeros((2, 2), np.float32))


def test_refusals():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(dlc.DTypeError, match="must return a float scalar"):
        dlc.grad(lambda a: a * 2.0)(x)
    with pytest.raises(dlc.DTypeError, match="only float arguments"):
        dlc.grad(lambda a: dlc.sum(dlc.astype(a, np.float32)))(np.ones(3, np.int32))
    with pytest.raises(dlc.TraceError, match=r"test_autodiff.py:\d+: dlc.grad: dl.remainder has "
                                             r"no derivative rule"):
        dlc.grad(lambda a: dlc.sum(dlc.remainder(a, 0.5)))(x)
    with pytest.raises(TypeError, match="argnums"):
        dlc.grad(lambda a: dlc.sum(a), argnums="a")
    with pytest.raises(TypeError, match="out of range"):
        dlc.grad(lambda a: dlc.sum(a), argnums=3)(x)


F = torch.nn.functional
LAYER_CASES = [
    ("conv2d", lambda x, w, b: dlc.conv2d(x, w, b, stride=1, padding=1),
     lambda x, w, b: F.conv2d(x, w, b, stride=1, padding=1), [(2, 3, 6, 6), (4, 3, 3, 3), (4,)]),
    ("conv2d_strided_dilated", lambda x, w: dlc.conv2d(x, w, stride=2, padding=2, dilation=2),
     lambda x, w: F.conv2d(x, w, stride=2, padding=2, dilation=2), [(2, 3, 9, 8), (4, 3, 3, 3)]),
    ("conv2d_grouped", lambda x, w: dlc.conv2d(x, w, stride=(2, 1), padding=(1, 0), groups=2),
     lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=(1, 0), groups=2),
     [(2, 4, 7, 6), (6, 2, 3, 2)]),
    ("conv2d_depthwise", lambda x, w: dlc.conv2d(x, w, padding=1, groups=3),
     lambda x, w: F.conv2d(x, w, padding=1, groups=3), [(1, 3, 5, 5), (3, 1, 3, 3)]),
    ("max_pool2d", lambda x: dlc.max_pool2d(x, 3, 2, 1), lambda x: F.max_pool2d(x, 3, 2, 1),
     [(2, 3, 7, 6)]),
    ("max_pool2d_overlap", lambda x: dlc.max_pool2d(x, 2, 1), lambda x: F.max_pool2d(x, 2, 1),
     [(1, 2, 5, 5)]),
    # Windows tiling the input (stride = kernel, no padding): argmax rule.
    ("max_pool2d_tiled", lambda x: dlc.max_pool2d(x, 2), lambda x: F.max_pool2d(x, 2),
     [(2, 3, 6, 8)]),
    ("max_pool2d_tiled_uneven", lambda x: dlc.max_pool2d(x, (2, 3)),
     lambda x: F.max_pool2d(x, (2, 3)), [(1, 2, 7, 8)]),
    ("avg_pool2d", lambda x: dlc.avg_pool2d(x, 3, 2, 1), lambda x: F.avg_pool2d(x, 3, 2, 1),
     [(2, 3, 7, 6)]),
    # NHWC (filters [KH, KW, C/groups, F]): the NCHW rules between transposes.
    ("conv2d_nhwc", lambda x, w, b: dlc.conv2d(x, w, b, stride=2, padding=1, groups=2,
                                               layout="NHWC"),
     lambda x, w, b: F.conv2d(x.permute(0, 3, 1, 2), w.permute(3, 2, 0, 1), b, stride=2,
                              padding=1, groups=2).permute(0, 2, 3, 1),
     [(2, 7, 6, 4), (3, 3, 2, 6), (6,)]),
    ("max_pool2d_nhwc", lambda x: dlc.max_pool2d(x, 3, 2, 1, layout="NHWC"),
     lambda x: F.max_pool2d(x.permute(0, 3, 1, 2), 3, 2, 1).permute(0, 2, 3, 1),
     [(2, 7, 6, 3)]),
    ("max_pool2d_tiled_nhwc", lambda x: dlc.max_pool2d(x, 2, layout="NHWC"),
     lambda x: F.max_pool2d(x.permute(0, 3, 1, 2), 2).permute(0, 2, 3, 1), [(2, 6, 8, 3)]),
    ("avg_pool2d_nhwc", lambda x: dlc.avg_pool2d(x, 3, 2, 1, layout="NHWC"),
     lambda x: F.avg_pool2d(x.permute(0, 3, 1, 2), 3, 2, 1).permute(0, 2, 3, 1),
     [(2, 7, 6, 3)]),
    ("avg_pool2d_exclude_pad", lambda x: dlc.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
     lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), [(2, 3, 7, 6)]),
    ("batch_norm_inference", lambda x, m, v, g, b: dlc.batch_norm(x, m, v, g, b),
     lambda x, m, v, g, b: ((x - m[:, None, None]) / torch.sqrt(v[:, None, None] + 1e-5)
                            * g[:, None, None] + b[:, None, None]),
     [(2, 3, 4, 4), (3,), (3,), (3,), (3,)]),
    ("batch_norm_training_form",
     lambda x, g, b: dlc.batch_norm(x, dlc.mean(x, axis=(0, 2, 3)),
                                    dlc.mean((x - dlc.mean(x, axis=(0, 2, 3), keepdims=True))
                                             ** 2.0, axis=(0, 2, 3)), g, b),
     lambda x, g, b: F.batch_norm(x, None, None, g, b, training=True),
     [(4, 3, 3, 3), (3,), (3,)]),
    ("layer_norm", lambda x, g, b: dlc.layer_norm(x, g, b, axis=-1),
     lambda x, g, b: F.layer_norm(x, (6,), g, b), [(2, 4, 6), (6,), (6,)]),
    ("layer_norm_2d", lambda x, g, b: dlc.layer_norm(x, g, b, axis=1),
     lambda x, g, b: F.layer_norm(x, (4, 6), g, b), [(3, 4, 6), (4, 6), (4, 6)]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,fn,tfn,shapes", LAYER_CASES, ids=[c[0] for c in LAYER_CASES])
def test_layer_rules_match_torch_autograd(name, fn, tfn, shapes, dtype):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    xs = [rng.standard_normal(s).astype(dtype) for s in shapes]
    if name == "batch_norm_inference":
        xs[2] = np.abs(xs[2]) + 0.5  # a variance
    tensors = [torch.tensor(x, requires_grad=True) for x in xs]
    out = tfn(*tensors)
    weight = rng.standard_normal(tuple(out.shape)).astype(dtype)
    (out * torch.tensor(weight)).sum().backward()
    grads = dlc.grad(_loss(fn, weight), argnums=tuple(range(len(xs))))(*xs)
    tol = dict(rtol=1e-3, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-8, atol=1e-10)
    for g, t in zip(grads, tensors):
        np.testing.assert_allclose(g, t.grad.numpy(), **tol)


@pytest.mark.parametrize("kernel,stride,padding", [(2, 2, 0), ((2, 3), (2, 3), 0),
                                                   (3, 2, 1), (2, 1, 0)])
def test_max_pool_ties_go_to_the_first_maximum(kernel, stride, padding):
    """Windows with equal maxima (small integers: many ties) send the
    gradient to the first one in row-major order, as PyTorch, for tiled
    windows (the argmax rule) and overlapping or padded ones alike."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 3, (2, 3, 7, 9)).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    out = F.max_pool2d(tx, kernel, stride, padding)
    weight = rng.standard_normal(tuple(out.shape)).astype(np.float32)
    (out * torch.tensor(weight)).sum().backward()
    got = dlc.grad(_loss(lambda a: dlc.max_pool2d(a, kernel, stride, padding), weight))(x)
    np.testing.assert_allclose(got, tx.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_norm_with_batch_statistics_in_closed_form(layout, dtype):
    """dlc.nn.BatchNorm2d in training mode (the batch's mean and biased
    variance): the gradient through the statistics is folded into the
    input's in closed form (two per-channel sums in the backward pass, not
    the chain of the mean and variance rules), and matches PyTorch's."""
    from dlc import nn
    rng = np.random.default_rng(7)
    shape = (4, 3, 5, 6) if layout == "NCHW" else (4, 5, 6, 3)
    x = (rng.standard_normal(shape) * 2 + 1).astype(dtype)
    g, b = rng.standard_normal(3).astype(dtype), rng.standard_normal(3).astype(dtype)
    bn = nn.BatchNorm2d(3, layout=layout, dtype=dtype).train()
    weight = rng.standard_normal(shape).astype(dtype)

    def loss(x, g, b):
        y, _ = nn.functional_call(bn, {"weight": g, "bias": b}, x,
                                  buffers={"running_mean": bn.running_mean,
                                           "running_var": bn.running_var})
        return dlc.sum(y * weight)

    grads = dlc.grad(loss, argnums=(0, 1, 2))(x, g, b)
    tx, tg, tb = (torch.tensor(v, requires_grad=True) for v in (x, g, b))
    tin = tx if layout == "NCHW" else tx.permute(0, 3, 1, 2)
    out = F.batch_norm(tin, None, None, tg, tb, training=True)
    out = out if layout == "NCHW" else out.permute(0, 2, 3, 1)
    (out * torch.tensor(weight)).sum().backward()
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    for ours, theirs in zip(grads, (tx, tg, tb)):
        np.testing.assert_allclose(ours, theirs.grad.numpy(), **tol)
    # The loss's sum, then two per-channel sums in the backward pass; the
    # generic rules would differentiate the mean and the variance ops too.
    text = dlc.jit(dlc.grad(loss)).lower(x, g, b).as_text("dl")
    assert text.count("dl.reduce_sum") == 3
