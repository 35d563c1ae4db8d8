"""The book's MLP (784-128-32-10) through the whole pipeline, against numpy.

The reference is computed in float64 from the same float32 inputs; the
compiled float32 result must be within a max relative error of 1e-5.
"""

import numpy as np
import pytest

import dlc


def init_mlp(rng, sizes=(784, 128, 32, 10)):
    """He-initialized weights and small biases, as a trained net would have."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)
        b = rng.standard_normal(fan_out) * 0.1
        params += [w.astype(np.float32), b.astype(np.float32)]
    return params


@dlc.jit
def mlp(x, w1, b1, w2, b2, w3, b3):
    h1 = dlc.relu(x @ w1 + b1)
    h2 = dlc.relu(h1 @ w2 + b2)
    return dlc.softmax(h2 @ w3 + b3, axis=-1)


def mlp_reference(x, w1, b1, w2, b2, w3, b3):
    x, w1, b1, w2, b2, w3, b3 = (a.astype(np.float64) for a in (x, w1, b1, w2, b2, w3, b3))
    h1 = np.maximum(x @ w1 + b1, 0)
    h2 = np.maximum(h1 @ w2 + b2, 0)
    logits = h2 @ w3 + b3
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def max_relative_error(actual, expected):
    return float(np.max(np.abs(actual - expected) / np.abs(expected)))


@pytest.mark.parametrize("batch", [1, 64])
def test_mlp_matches_numpy(batch):
    rng = np.random.default_rng(batch)
    params = init_mlp(rng)
    x = rng.random((batch, 784), dtype=np.float32)
    y = mlp(x, *params)
    assert y.shape == (batch, 10) and y.dtype == np.float32
    assert max_relative_error(y, mlp_reference(x, *params)) <= 1e-5


def test_mlp_dynamic_batch_compiles_once():
    rng = np.random.default_rng(7)
    params = init_mlp(rng)
    model = dlc.jit(mlp.__wrapped__, dynamic_batch=("x",))
    for batch in (1, 3, 64, 129):
        x = rng.random((batch, 784), dtype=np.float32)
        assert max_relative_error(model(x, *params), mlp_reference(x, *params)) <= 1e-5
    assert model.cache_size() == 1


def test_mlp_with_weights_as_constants():
    """Weights captured from the enclosing scope become dl.constant ops."""
    rng = np.random.default_rng(11)
    params = init_mlp(rng)

    @dlc.jit(dynamic_batch=True)
    def model(x):
        return mlp.__wrapped__(x, *params)

    text = model.lower(np.zeros((2, 784), np.float32)).as_text("dl")
    assert text.count("dl.constant") == len(params)
    x = rng.random((5, 784), dtype=np.float32)
    assert max_relative_error(model(x), mlp_reference(x, *params)) <= 1e-5
