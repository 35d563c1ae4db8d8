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


def _nn_models(rng):
    """The same conv-bn-relu-pool-linear model in dlc.nn and torch.nn, with
    dlc's initial parameters copied into torch's, both in training mode."""
    from dlc import nn
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, rng=rng), nn.BatchNorm2d(4),
                          nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, 3,
                                                                               rng=rng))
    model.layers[1].weight = rng.uniform(0.5, 1.5, 4).astype(np.float32)
    model.layers[1].bias = rng.uniform(-0.5, 0.5, 4).astype(np.float32)
    tmodel = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4),
                                 torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                 torch.nn.Linear(36, 3))
    state = {"0.weight": "layers.0.weight", "0.bias": "layers.0.bias",
             "1.weight": "layers.1.weight", "1.bias": "layers.1.bias",
             "1.running_mean": "layers.1.running_mean", "1.running_var": "layers.1.running_var",
             "5.weight": "layers.5.weight", "5.bias": "layers.5.bias"}
    ours = model.state_dict()
    tmodel.load_state_dict({t: torch.tensor(ours[d]) for t, d in state.items()}, strict=False)
    return model.train(), tmodel.train(), state


def test_nn_model_trains_with_batch_norm_running_statistics():
    """A dlc.nn model in training mode through functional_call and
    TrainStep(buffers=...): parameters and the batch norm's running mean and
    (unbiased) variance match torch.nn's after 10 SGD steps; named_parameters
    leaves the buffers out; evaluation mode uses the running statistics."""
    from dlc import nn
    rng = np.random.default_rng(6)
    model, tmodel, names = _nn_models(rng)
    assert set(model.named_buffers()) == {"layers.1.running_mean", "layers.1.running_var"}
    assert not set(model.named_buffers()) & set(model.named_parameters())

    def loss_fn(params, buffers, x, y):
        logits, buffers = nn.functional_call(model, params, x, buffers=buffers)
        return dlc.optim.cross_entropy(logits, y), buffers

    step = dlc.optim.TrainStep(loss_fn, model.named_parameters(), dlc.optim.SGD(0.1),
                               buffers=model.named_buffers())
    topt = torch.optim.SGD(tmodel.parameters(), 0.1)
    for i in range(10):
        x = rng.standard_normal((8, 1, 6, 6)).astype(np.float32)
        y = rng.integers(0, 3, 8).astype(np.int32)
        loss = step(x, y)
        topt.zero_grad()
        tloss = F.cross_entropy(tmodel(torch.tensor(x)), torch.tensor(y, dtype=torch.long))
        tloss.backward()
        topt.step()
        np.testing.assert_allclose(loss, tloss.item(), rtol=1e-4, atol=1e-5)
    tstate = tmodel.state_dict()
    for tname, name in names.items():
        value = step.params.get(name, step.buffers.get(name))
        want = tstate[tname].numpy()
        np.testing.assert_allclose(value, want, rtol=1e-4, atol=1e-5, err_msg=name)
    # Evaluation: the running statistics, as torch's eval mode.
    model.load_state_dict({**step.params, **step.buffers}).eval()
    tmodel.eval()
    x = rng.standard_normal((5, 1, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(dlc.jit(model)(x), tmodel(torch.tensor(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_functional_call_leaves_the_module_alone():
    from dlc import nn
    rng = np.random.default_rng(7)
    model = nn.Sequential(nn.Linear(3, 2, rng=rng), nn.BatchNorm2d(2))
    before = {k: v.copy() for k, v in model.state_dict().items()}
    w = np.zeros((2, 3), np.float32)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    out = dlc.jit(lambda w, x: nn.functional_call(model.layers[0], {"weight": w}, x))(w, x)
    np.testing.assert_allclose(out, np.broadcast_to(model.layers[0].bias, (4, 2)), rtol=1e-6)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v, before[k])
    with pytest.raises(KeyError, match=r"unknown parameter\(s\) \['wieght'\]"):
        nn.functional_call(model.layers[0], {"wieght": w}, x)
    with pytest.raises(KeyError, match=r"unknown buffer\(s\)"):
        nn.functional_call(model, {}, x, buffers={"layers.0.weight": w})
    with pytest.raises(dlc.TraceError, match="Dropout in training mode"):
        dlc.jit(nn.Sequential(nn.Dropout(0.5)).train())(x)


def test_the_digits_example_runs(monkeypatch):
    """examples/train_digits.py's models, training loop and PyTorch step on
    random 8x8 images (the real run needs scikit-learn: make bench)."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "train_digits.py")
    spec = importlib.util.spec_from_file_location("train_digits", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    monkeypatch.setattr(example, "BATCH", 16)
    rng = np.random.default_rng(8)
    x = rng.uniform(0, 1, (80, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, 80).astype(np.int32)
    data = (x[:64], y[:64], x[64:], y[64:])
    for name in ("cnn", "mlp"):
        result = example.train(name, 2, data)
        assert len(result["losses"]) == 8 and 0.0 <= result["accuracy"] <= 1.0
        assert np.all(np.isfinite(result["losses"]))
        run = example.torch_step(name, result["step"])
        run(torch.tensor(x[:16]), torch.tensor(y[:16], dtype=torch.long))
