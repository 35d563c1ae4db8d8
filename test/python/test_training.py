"""dlc.optim: losses, optimizers and compiled training steps matching
PyTorch's step for step (same initialization, same data, 20 steps)."""

import re

import numpy as np
import pytest

import dlc

torch = pytest.importorskip("torch")
F = torch.nn.functional


def mlp_params(rng):
    return {"w1": (rng.standard_normal((12, 16)) * 0.3).astype(np.float32),
            "b1": (rng.standard_normal(16) * 0.1).astype(np.float32),
            "w2": (rng.standard_normal((16, 4)) * 0.3).astype(np.float32),
            "b2": np.zeros(4, np.float32)}


def mlp_loss(p, x, y):
    return dlc.optim.cross_entropy(dlc.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"], y)


def mlp_loss_torch(p, x, y):
    return F.cross_entropy(torch.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"], y)


def cnn_params(rng):
    return {"c1": (rng.standard_normal((6, 1, 3, 3)) * 0.4).astype(np.float32),
            "g1": np.ones(6, np.float32), "b1": np.zeros(6, np.float32),
            "c2": (rng.standard_normal((8, 6, 3, 3)) * 0.2).astype(np.float32),
            "g2": np.ones(8, np.float32), "b2": np.zeros(8, np.float32),
            "w": (rng.standard_normal((8 * 4 * 4, 3)) * 0.1).astype(np.float32),
            "bias": np.zeros(3, np.float32)}


def _bn_train(x, gamma, beta):
    """Batch norm in training form: the batch's statistics."""
    mean = dlc.mean(x, axis=(0, 2, 3))
    centered = x - dlc.reshape(mean, (1, -1, 1, 1))
    var = dlc.mean(centered * centered, axis=(0, 2, 3))
    return dlc.batch_norm(x, mean, var, gamma, beta)


def cnn_loss(p, x, y):
    h = dlc.relu(_bn_train(dlc.conv2d(x, p["c1"], padding=1), p["g1"], p["b1"]))
    h = dlc.relu(_bn_train(dlc.conv2d(h, p["c2"], padding=1), p["g2"], p["b2"]))
    h = dlc.max_pool2d(h, 2)
    return dlc.optim.cross_entropy(dlc.reshape(h, (x.shape[0], -1)) @ p["w"] + p["bias"], y)


def cnn_loss_torch(p, x, y):
    h = F.relu(F.batch_norm(F.conv2d(x, p["c1"], padding=1), None, None, p["g1"], p["b1"],
                            training=True))
    h = F.relu(F.batch_norm(F.conv2d(h, p["c2"], padding=1), None, None, p["g2"], p["b2"],
                            training=True))
    h = F.max_pool2d(h, 2)
    return F.cross_entropy(h.reshape(x.shape[0], -1) @ p["w"] + p["bias"], y)


OPTIMIZERS = {
    "sgd_momentum_wd": (lambda: dlc.optim.SGD(0.05, momentum=0.9, weight_decay=1e-3),
                        lambda ps: torch.optim.SGD(ps, 0.05, momentum=0.9, weight_decay=1e-3)),
    "sgd_nesterov": (lambda: dlc.optim.SGD(0.05, momentum=0.8, nesterov=True),
                     lambda ps: torch.optim.SGD(ps, 0.05, momentum=0.8, nesterov=True)),
    "adam": (lambda: dlc.optim.Adam(3e-3, weight_decay=1e-4),
             lambda ps: torch.optim.Adam(ps, 3e-3, weight_decay=1e-4)),
    "adamw": (lambda: dlc.optim.AdamW(3e-3), lambda ps: torch.optim.AdamW(ps, 3e-3)),
}


@pytest.mark.parametrize("model", ["mlp", "cnn"])
@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_training_matches_pytorch_step_for_step(model, optimizer):
    rng = np.random.default_rng(0)
    if model == "mlp":
        params, loss, loss_torch = mlp_params(rng), mlp_loss, mlp_loss_torch
        batches = [(rng.standard_normal((16, 12)).astype(np.float32),
                    rng.integers(0, 4, 16).astype(np.int32)) for _ in range(20)]
    else:
        params, loss, loss_torch = cnn_params(rng), cnn_loss, cnn_loss_torch
        batches = [(rng.standard_normal((8, 1, 8, 8)).astype(np.float32),
                    rng.integers(0, 3, 8).astype(np.int32)) for _ in range(20)]
    make, make_torch = OPTIMIZERS[optimizer]
    step = dlc.optim.TrainStep(loss, params, make())
    tparams = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    topt = make_torch(list(tparams.values()))
    for x, y in batches:
        value = step(x, y)
        topt.zero_grad()
        tvalue = loss_torch(tparams, torch.tensor(x), torch.tensor(y, dtype=torch.long))
        tvalue.backward()
        topt.step()
        np.testing.assert_allclose(value, tvalue.item(), rtol=2e-4, atol=1e-5)
    for name in params:
        np.testing.assert_allclose(step.params[name], tparams[name].detach().numpy(),
                                   rtol=2e-3, atol=2e-4, err_msg=name)


def test_losses_match_pytorch():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((5, 7)).astype(np.float32)
    labels = rng.integers(0, 7, 5).astype(np.int64)
    got = dlc.jit(dlc.optim.cross_entropy)(logits, labels)
    want = F.cross_entropy(torch.tensor(logits), torch.tensor(labels))
    np.testing.assert_allclose(got, want.item(), rtol=1e-6)
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(
        np.float32)
    np.testing.assert_allclose(dlc.jit(dlc.optim.mse_loss)(a, b),
                               F.mse_loss(torch.tensor(a), torch.tensor(b)).item(), rtol=1e-6)


def test_train_step_is_one_compiled_function_and_refuses_bad_input():
    rng = np.random.default_rng(2)
    step = dlc.optim.TrainStep(mlp_loss, mlp_params(rng), dlc.optim.SGD(0.1))
    x, y = np.ones((4, 12), np.float32), np.zeros(4, np.int32)
    text = step.lower(x, y).as_text("dl")
    assert text.count("func.func") == 1 and "dl.matmul" in text
    with pytest.raises(TypeError, match="takes 2 batch argument"):
        step(x)
    with pytest.raises(dlc.DTypeError, match="integer class indices"):
        dlc.jit(dlc.optim.cross_entropy)(x, x)
    with pytest.raises(ValueError, match="lr must be a positive number"):
        dlc.optim.Adam(lr=-1.0)
    with pytest.raises(dlc.DTypeError, match="only float parameters"):
        dlc.optim.TrainStep(mlp_loss, {"w": np.ones(3, np.int32)}, dlc.optim.SGD(0.1))


def test_function_of_the_current_parameters_compiles_once():
    rng = np.random.default_rng(3)
    step = dlc.optim.TrainStep(mlp_loss, mlp_params(rng), dlc.optim.SGD(0.5))
    predict = step.function(lambda p, x: dlc.argmax(dlc.relu(x @ p["w1"] + p["b1"]) @ p["w2"]
                                                    + p["b2"], axis=-1))
    x = rng.standard_normal((32, 12)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)  # learnable: the sign of one feature
    before = predict(x)
    for _ in range(30):
        step(x, y)
    after = predict(x)
    p = step.params
    want = np.argmax(np.maximum(x @ p["w1"] + p["b1"], 0) @ p["w2"] + p["b2"], axis=-1)
    np.testing.assert_array_equal(after, want)
    assert np.mean(after == y) > np.mean(before == y) and np.mean(after == y) >= 0.9


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_parameters_and_state_are_updated_in_place(optimizer):
    """The step writes the new parameters and optimizer state into their
    arrays: the same arrays after every step, no copy back at the return
    (every update computed in its argument's buffer), only the loss
    returned; the caller's initial arrays are left alone."""
    rng = np.random.default_rng(4)
    initial = mlp_params(rng)
    saved = {k: v.copy() for k, v in initial.items()}
    make = (lambda: dlc.optim.SGD(0.1, momentum=0.9)) if optimizer == "sgd" else \
        (lambda: dlc.optim.Adam(1e-2))
    step = dlc.optim.TrainStep(mlp_loss, initial, make())
    arrays = {k: v for k, v in step.params.items()}
    state = list(step.state)
    x = rng.standard_normal((8, 12)).astype(np.float32)
    y = rng.integers(0, 3, 8).astype(np.int32)
    for _ in range(3):
        step(x, y)
    assert all(step.params[k] is arrays[k] for k in arrays)
    assert all(a is b for a, b in zip(step.state, state))
    assert any(not np.array_equal(arrays[k], saved[k]) for k in arrays)
    for k in initial:
        np.testing.assert_array_equal(initial[k], saved[k])
    text = step.lower(x, y).as_text("bufferized")
    body = text[text.index("func.func @"):]
    assert not re.search(r"memref\.copy %\w+, %arg\d+", body)
    assert re.search(r"\) -> memref<f32> attributes", body)
