"""dlc.quantize: post-training static quantization (issue 34, item 4).

The models are classifiers with margins (a random feature layer and a
least-squares read-out of synthetic classes), so that top-1 agreement between
the float and the quantized model measures the quantization, not ties of
random logits. Inputs: synthetic (no download): class centers plus noise,
calibration and test batches drawn apart.
"""

import numpy as np
import pytest

import dlc

CLASSES, FEATURES, HIDDEN = 10, 32, 64


def _data(rng, count, centers):
    labels = rng.integers(0, CLASSES, count)
    return (centers[labels] + 0.6 * rng.normal(size=(count, FEATURES))).astype(np.float32), labels


def _classifier(seed=0):
    """(mlp function, centers): relu(x A) B, B fitted to one-hot labels."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(CLASSES, FEATURES))
    a = (rng.normal(size=(HIDDEN, FEATURES)) / np.sqrt(FEATURES)).astype(np.float32)
    x, labels = _data(rng, 2000, centers)
    hidden = np.maximum(x @ a.T, 0)
    b, *_ = np.linalg.lstsq(hidden, np.eye(CLASSES)[labels], rcond=None)
    b = b.T.astype(np.float32)  # [classes, hidden], PyTorch's linear layout

    def mlp(x):
        return dlc.linear(dlc.relu(dlc.linear(x, a)), b)
    return mlp, centers


@pytest.mark.parametrize("method", ["minmax", "percentile", "entropy"])
@pytest.mark.parametrize("activation_dtype", ["uint8", "int8"])
def test_quantized_mlp_agrees_with_float_top1(method, activation_dtype):
    mlp, centers = _classifier()
    rng = np.random.default_rng(1)
    calibration = [_data(rng, 32, centers)[0] for _ in range(16)]
    quantized = dlc.quantize(mlp, calibration, method=method,
                             activation_dtype=activation_dtype)
    x, _ = _data(np.random.default_rng(2), 1000, centers)
    float_out, int8_out = dlc.jit(mlp)(x), quantized(x)
    agreement = (float_out.argmax(1) == int8_out.argmax(1)).mean()
    assert agreement >= 0.98, agreement
    # Quantization did happen: the outputs are not the float ones.
    assert not np.array_equal(float_out, int8_out)
    report = quantized.report
    assert [entry["quantized"] for entry in report] == [True, True]
    assert report[0]["where"].endswith("test_quantize.py:" + str(_line_of("dlc.linear(dlc.relu")))
    assert report[0]["weight_shape"] == (FEATURES, HIDDEN) and report[0]["weight_channels"] == HIDDEN
    if activation_dtype == "int8":
        assert all(entry["activation_zero_point"] == 0 for entry in report)


def _line_of(text):
    import inspect
    lines, start = inspect.getsourcelines(_classifier)
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_quantized_program_has_quantize_ops_and_integer_matmuls():
    """Each quantized matmul: the activation quantized to uint8, an int8
    weight, the product summed in int32 (dl.matmul_integer), no float matmul
    and no dequantize; on a VNNI target, vpdpbusd."""
    mlp, centers = _classifier()
    rng = np.random.default_rng(3)
    quantized = dlc.quantize(mlp, [_data(rng, 16, centers)[0] for _ in range(4)])
    lowered = quantized.lower(np.zeros((8, FEATURES), np.float32))
    text = lowered.as_text("dl")
    assert text.count("dl.quantize") == 2 and text.count("dl.matmul_integer") == 2
    assert "dl.dequantize" not in text and "dl.matmul " not in text
    assert "tensor<8x" + str(FEATURES) + "xui8>" in text
    assert "2 of 2 matmuls/convolutions quantized" in quantized.summary()
    if dlc.Target.host().has_feature("avx512vnni") or dlc.Target.host().has_feature("avxvnni"):
        assert "vpdpbusd" in lowered.as_text("affine")


def test_integer_matmul_equals_the_fake_quantized_float_product():
    """The integer path computes what quantize -> dequantize -> float matmul
    computes, up to float32 rounding (the integer sum is exact), for uint8
    (asymmetric, a zero point) and int8 (symmetric) activations, per-channel
    and per-tensor weights."""
    rng = np.random.default_rng(11)
    w = rng.normal(size=(48, 24)).astype(np.float32)
    x_data = [rng.normal(1.0, 2.0, size=(5, 48)).astype(np.float32) for _ in range(3)]

    def f(x):
        return x @ w

    for activation_dtype in ("uint8", "int8"):
        for per_channel in (True, False):
            quantized = dlc.quantize(f, x_data, activation_dtype=activation_dtype,
                                     per_channel=per_channel)
            site = quantized.report[0]
            scale, zero = site["activation_scale"], site["activation_zero_point"]
            info = np.iinfo(activation_dtype)
            x = x_data[0]
            q = np.clip(np.rint(x / np.float32(scale)) + zero, info.min, info.max)
            x_fake = ((q - zero) * np.float32(scale)).astype(np.float32)
            bound = np.abs(w).max(axis=0) if per_channel else np.abs(w).max()
            w_scale = (bound / 127).astype(np.float32)
            w_fake = (np.clip(np.rint(w / w_scale), -127, 127) * w_scale).astype(np.float32)
            expected = x_fake.astype(np.float64) @ w_fake.astype(np.float64)
            np.testing.assert_allclose(quantized(x), expected, rtol=1e-5,
                                       atol=1e-5 * np.abs(expected).max())


def test_per_tensor_weights_and_runtime_operands_left_in_float():
    """A product of two activations (attention's scores) stays in float, with
    the reason in the report; per_channel=False gives one weight scale."""
    rng = np.random.default_rng(4)
    w = rng.normal(size=(16, 16)).astype(np.float32)

    def attention(q, k):
        scores = dlc.matmul(dlc.matmul(q, w), dlc.transpose(k, (0, 2, 1)))
        return dlc.softmax(scores, axis=-1)

    data = [(rng.normal(size=(2, 8, 16)).astype(np.float32),
             rng.normal(size=(2, 8, 16)).astype(np.float32)) for _ in range(4)]
    quantized = dlc.quantize(attention, data, per_channel=False)
    first, second = quantized.report
    assert first["quantized"] and first["weight_channels"] == 1
    assert not second["quantized"] and "computed at run time" in second["reason"]
    q, k = data[0]
    np.testing.assert_allclose(quantized(q, k), dlc.jit(attention)(q, k), atol=0.05)


def test_quantize_dlc_nn_model_and_imported_torch_model():
    """A dlc.nn CNN and the same kind of network imported from PyTorch: their
    convolutions and linear layers quantized, agreeing with the float model
    (random features, least-squares read-out of synthetic image classes)."""
    torch = pytest.importorskip("torch")
    from dlc import nn
    rng = np.random.default_rng(5)
    prototypes = rng.normal(size=(4, 1, 8, 8)).astype(np.float32)

    def images(count):
        labels = rng.integers(0, 4, count)
        return (prototypes[labels] + 0.5 * rng.normal(size=(count, 1, 8, 8))).astype(np.float32)

    torch.manual_seed(0)
    features = torch.nn.Sequential(torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(),
                                   torch.nn.Conv2d(8, 8, 3, stride=2, padding=1),
                                   torch.nn.ReLU(), torch.nn.Flatten()).eval()
    train = images(600)
    with torch.no_grad():
        hidden = features(torch.from_numpy(train)).numpy()
    labels = np.argmax([[np.sum(p * t) for p in prototypes] for t in train], axis=1)
    readout, *_ = np.linalg.lstsq(hidden, np.eye(4)[labels], rcond=None)
    head = torch.nn.Linear(hidden.shape[1], 4)
    with torch.no_grad():
        head.weight.copy_(torch.from_numpy(readout.T.astype(np.float32)))
        head.bias.zero_()
    model = torch.nn.Sequential(features, head).eval()
    imported = dlc.from_torch(model, torch.from_numpy(train[:16]))
    calibration = [images(16) for _ in range(8)]
    tests = [images(16) for _ in range(25)]  # the import is for batches of 16
    quantized = dlc.quantize(imported, calibration)
    assert sum(e["quantized"] for e in quantized.report) == 3

    def agreement(f, g):
        return np.mean([(f(t).argmax(1) == g(t).argmax(1)).mean() for t in tests])
    assert agreement(imported, quantized) >= 0.98, agreement(imported, quantized)

    # The same network as a dlc.nn model, its weights copied.
    net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(),
                        nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU(), nn.Flatten(),
                        nn.Linear(hidden.shape[1], 4))
    for mine, theirs in [(net.layers[0], features[0]), (net.layers[2], features[2]),
                         (net.layers[5], head)]:
        mine.weight[...] = theirs.weight.detach().numpy()
        mine.bias[...] = theirs.bias.detach().numpy()
    quantized_net = dlc.quantize(net, calibration)
    assert sum(e["quantized"] for e in quantized_net.report) == 3
    assert agreement(quantized_net, quantized) >= 0.98, agreement(quantized_net, quantized)


def test_quantize_refuses_bad_arguments():
    mlp, centers = _classifier()
    data = [np.zeros((4, FEATURES), np.float32)]
    with pytest.raises(ValueError, match="calibration data is empty"):
        dlc.quantize(mlp, [])
    with pytest.raises(ValueError, match="unknown method 'kl'.*minmax, percentile, entropy"):
        dlc.quantize(mlp, data, method="kl")
    with pytest.raises(ValueError, match="activation_dtype must be uint8 or int8"):
        dlc.quantize(mlp, data, activation_dtype="int16")
    with pytest.raises(TypeError, match="expects a function or model"):
        dlc.quantize(42, data)


def _trained_digits_cnn(torch):
    """A small CNN trained on scikit-learn's digits (8x8 images, bundled: no
    download) for a few epochs, and the held-out images."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(y))
    train, test = order[:1400], order[1400:]
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, padding=1, stride=2), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(32 * 4 * 4, 64), torch.nn.ReLU(),
        torch.nn.Linear(64, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    xs, ys = torch.from_numpy(x[train]), torch.from_numpy(y[train])
    for epoch in range(6):
        for i in range(0, len(train), 64):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xs[i:i + 64]), ys[i:i + 64])
            loss.backward()
            optimizer.step()
    return model.eval(), x[train], x[test], y[test]


def test_trained_digits_cnn_int8_agrees_with_float_and_with_onnxruntime(tmp_path):
    """Issue 34's accuracy targets on a trained network (scikit-learn's
    digits, 397 held-out images): dlc.quantize of the float model agrees with
    its top-1 on >= 98% of them, and the same model quantized by
    onnxruntime's quantize_static (QDQ, S8S8, per channel), imported by dlc
    (its convolutions and linear layers computed in integers), agrees with
    onnxruntime's own int8 run on >= 99%."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("sklearn")
    ort = pytest.importorskip("onnxruntime")
    from onnxruntime import quantization as q
    model, train, test, labels = _trained_digits_cnn(torch)
    with torch.no_grad():
        float_out = model(torch.from_numpy(test)).numpy()
    assert np.mean(float_out.argmax(1) == labels) >= 0.9  # it did learn

    imported = dlc.from_torch(model, torch.from_numpy(test[:2]), dynamic_batch=True)
    quantized = dlc.quantize(imported, [train[i:i + 50] for i in range(0, 400, 50)])
    int8_out = np.asarray(quantized(test))
    assert "4 of 4 matmuls/convolutions quantized" in quantized.summary()
    assert np.mean(int8_out.argmax(1) == float_out.argmax(1)) >= 0.98

    float_path, int8_path = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    torch.onnx.export(model, torch.from_numpy(test[:1]), float_path, dynamo=False,
                      opset_version=17, input_names=["x"], output_names=["y"])

    class Reader(q.CalibrationDataReader):
        def __init__(self):
            self.data = iter({"x": train[i:i + 1]} for i in range(64))

        def get_next(self):
            return next(self.data, None)

    q.quantize_static(float_path, int8_path, Reader(), quant_format=q.QuantFormat.QDQ,
                      per_channel=True, activation_type=q.QuantType.QInt8,
                      weight_type=q.QuantType.QInt8)
    session = ort.InferenceSession(int8_path, providers=["CPUExecutionProvider"])
    compiled = dlc.from_onnx(int8_path)
    assert compiled.lower(test[:1]).as_text("dl").count("dl.matmul_integer") == 4
    ort_top1 = np.array([session.run(None, {"x": test[i:i + 1]})[0].argmax() for i in
                         range(len(test))])
    dlc_top1 = np.array([np.asarray(compiled(test[i:i + 1])).argmax() for i in
                         range(len(test))])
    assert np.mean(dlc_top1 == ort_top1) >= 0.99
    assert np.mean(ort_top1 == float_out.argmax(1)) >= 0.95
