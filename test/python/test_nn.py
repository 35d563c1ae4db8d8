"""Whole blocks of real networks built from dlc.nn, each one dlc.jit function,
against numpy references written independently from the block definitions
(references.py); f32 results within 1e-4 relative to the largest magnitude of
the reference. Parameters as arguments and as constants give the same result;
a dynamic batch compiles once.
"""

import inspect

import numpy as np
import pytest

import dlc
import references as ref
from dlc import nn


def relative_error(actual, expected):
    return float(np.max(np.abs(actual.astype(np.float64) - expected)) / np.max(np.abs(expected)))


def randomize_batch_norms(module, rng):
    """Trained-looking statistics instead of the identity defaults."""
    for _, child in module.named_modules():
        if isinstance(child, nn.BatchNorm2d):
            c = child.weight.shape[0]
            child.weight = rng.uniform(0.5, 1.5, c).astype(np.float32)
            child.bias = rng.uniform(-0.5, 0.5, c).astype(np.float32)
            child.running_mean = rng.uniform(-0.5, 0.5, c).astype(np.float32)
            child.running_var = rng.uniform(0.5, 2.0, c).astype(np.float32)


def np_bn(x, bn):
    return ref.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps)


def np_conv(x, conv):
    stride = (conv.stride,) * 2 if isinstance(conv.stride, int) else conv.stride
    if conv.padding == "same":  # stride 1, odd kernels only in these tests
        kh, kw = conv.weight.shape[2:]
        padding = ((kh - 1) // 2, (kh - 1) // 2, (kw - 1) // 2, (kw - 1) // 2)
    else:
        padding = (conv.padding,) * 4 if isinstance(conv.padding, int) else conv.padding
    return ref.conv2d(x, conv.weight, conv.bias, stride, padding, (1, 1), conv.groups)


# -- ResNet basic block --------------------------------------------------------

class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride, rng):
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False, rng=rng)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False, rng=rng)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False, rng=rng),
                                         nn.BatchNorm2d(cout))
                           if stride != 1 or cin != cout else None)

    def forward(self, x):
        out = dlc.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return dlc.relu(out + identity)


def basic_block_reference(block, x):
    out = np.maximum(np_bn(np_conv(x, block.conv1), block.bn1), 0)
    out = np_bn(np_conv(out, block.conv2), block.bn2)
    if block.downsample is not None:
        x = np_bn(np_conv(x, block.downsample[0]), block.downsample[1])
    return np.maximum(out + x, 0)


@pytest.mark.parametrize("cin,cout,stride,size", [(8, 8, 1, 9), (8, 16, 2, 10)])
def test_resnet_basic_block(cin, cout, stride, size):
    rng = np.random.default_rng(cin + stride)
    block = BasicBlock(cin, cout, stride, rng)
    randomize_batch_norms(block, rng)
    x = rng.standard_normal((2, cin, size, size)).astype(np.float32)
    expected = basic_block_reference(block, x.astype(np.float64))
    assert relative_error(dlc.jit(block)(x), expected) <= 1e-4
    assert relative_error(dlc.jit(block, constants=True)(x), expected) <= 1e-4


# -- MobileNetV2 inverted residual ----------------------------------------------

class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand, rng):
        hidden = cin * expand
        self.use_residual = stride == 1 and cin == cout
        self.layers = nn.Sequential(
            nn.Conv2d(cin, hidden, 1, bias=False, rng=rng), nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, hidden, 3, stride=stride, padding=1, groups=hidden, bias=False,
                      rng=rng),
            nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, cout, 1, bias=False, rng=rng), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.layers(x)
        return x + y if self.use_residual else y


def inverted_residual_reference(block, x):
    expand, bn1, _, depthwise, bn2, _, project, bn3 = block.layers.layers
    y = np.clip(np_bn(np_conv(x, expand), bn1), 0, 6)
    y = np.clip(np_bn(np_conv(y, depthwise), bn2), 0, 6)
    y = np_bn(np_conv(y, project), bn3)
    return x + y if block.use_residual else y


@pytest.mark.parametrize("cin,cout,stride", [(8, 8, 1), (8, 12, 2)])
def test_mobilenet_v2_inverted_residual(cin, cout, stride):
    rng = np.random.default_rng(cout)
    block = InvertedResidual(cin, cout, stride, expand=6, rng=rng)
    randomize_batch_norms(block, rng)
    model = dlc.jit(block, dynamic_batch=True)
    for batch in (1, 3):
        x = rng.standard_normal((batch, cin, 11, 11)).astype(np.float32)
        assert relative_error(model(x), inverted_residual_reference(block, x.astype(np.float64))) <= 1e-4
    assert model.cache_size() == 1


# -- Squeeze-and-excitation (EfficientNet-B0 / MobileNetV3 MBConv) -------------

class MBConvSE(nn.Module):
    """Depthwise conv -> BN -> SiLU -> squeeze-and-excitation (mean over
    H, W; 1x1 conv, SiLU, 1x1 conv, sigmoid; a broadcast (N, C, 1, 1) mul)
    -> 1x1 projection -> BN (+ residual). It once crashed dl-layout: the
    NHWC conversions sank through the broadcasting mul with the wrong type."""

    def __init__(self, channels, squeezed, kernel, rng):
        self.depthwise = nn.Conv2d(channels, channels, kernel, padding=kernel // 2,
                                   groups=channels, bias=False, rng=rng)
        self.bn1 = nn.BatchNorm2d(channels)
        self.reduce = nn.Conv2d(channels, squeezed, 1, rng=rng)
        self.expand = nn.Conv2d(squeezed, channels, 1, rng=rng)
        self.project = nn.Conv2d(channels, channels, 1, bias=False, rng=rng)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = dlc.silu(self.bn1(self.depthwise(x)))
        s = dlc.mean(y, axis=(2, 3), keepdims=True)
        s = dlc.sigmoid(self.expand(dlc.silu(self.reduce(s))))
        return x + self.bn2(self.project(y * s))


def mbconv_se_reference(block, x):
    silu = lambda t: t * ref.sigmoid(t)  # noqa: E731
    y = silu(np_bn(np_conv(x, block.depthwise), block.bn1))
    s = y.mean(axis=(2, 3), keepdims=True)
    s = ref.sigmoid(np_conv(silu(np_conv(s, block.reduce)), block.expand))
    return x + np_bn(np_conv(y * s, block.project), block.bn2)


@pytest.mark.parametrize("channels,squeezed,kernel,size", [
    (4, 1, 3, 6), (16, 4, 3, 7), (24, 6, 5, 1), (40, 10, 5, 9)])
def test_squeeze_and_excitation_block(channels, squeezed, kernel, size):
    rng = np.random.default_rng(channels)
    block = MBConvSE(channels, squeezed, kernel, rng)
    randomize_batch_norms(block, rng)
    for batch, constants in ((1, False), (2, True)):
        x = rng.standard_normal((batch, channels, size, size)).astype(np.float32)
        out = dlc.jit(block, constants=constants)(x)
        assert relative_error(out, mbconv_se_reference(block, x.astype(np.float64))) <= 1e-4


# -- Transformer encoder layer ----------------------------------------------------

class EncoderLayer(nn.Module):
    def __init__(self, d_model, heads, d_ff, rng):
        self.heads = heads
        self.q = nn.Linear(d_model, d_model, rng=rng)
        self.k = nn.Linear(d_model, d_model, rng=rng)
        self.v = nn.Linear(d_model, d_model, rng=rng)
        self.out = nn.Linear(d_model, d_model, rng=rng)
        self.norm1 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, d_ff, rng=rng)
        self.act = nn.GELU()
        self.ff2 = nn.Linear(d_ff, d_model, rng=rng)
        self.norm2 = nn.LayerNorm(d_model)

    def split_heads(self, t):
        _, seq, d_model = t.shape
        t = t.reshape(-1, seq, self.heads, d_model // self.heads)
        return dlc.transpose(t, (0, 2, 1, 3))

    def forward(self, x):
        _, seq, d_model = x.shape
        q, k, v = self.split_heads(self.q(x)), self.split_heads(self.k(x)), self.split_heads(self.v(x))
        scores = q @ dlc.transpose(k, (0, 1, 3, 2)) / float(np.sqrt(d_model // self.heads))
        attention = dlc.softmax(scores, axis=-1) @ v
        merged = dlc.transpose(attention, (0, 2, 1, 3)).reshape(-1, seq, d_model)
        x = self.norm1(x + self.out(merged))
        return self.norm2(x + self.ff2(self.act(self.ff1(x))))


def encoder_reference(layer, x):
    b, s, d = x.shape
    h = layer.heads
    lin = lambda t, m: t @ m.weight.T.astype(np.float64) + m.bias  # noqa: E731
    split = lambda t: t.reshape(b, s, h, d // h).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = split(lin(x, layer.q)), split(lin(x, layer.k)), split(lin(x, layer.v))
    attention = ref.softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // h)) @ v
    merged = attention.transpose(0, 2, 1, 3).reshape(b, s, d)
    norm = lambda t, m: ref.layer_norm(t, m.weight, m.bias, eps=m.eps)  # noqa: E731
    x = norm(x + lin(merged, layer.out), layer.norm1)
    return norm(x + lin(ref.gelu(lin(x, layer.ff1)), layer.ff2), layer.norm2)


def test_transformer_encoder_layer():
    rng = np.random.default_rng(3)
    layer = EncoderLayer(d_model=32, heads=4, d_ff=64, rng=rng)
    layer.norm1.weight = rng.uniform(0.5, 1.5, 32).astype(np.float32)
    layer.norm2.bias = rng.uniform(-0.5, 0.5, 32).astype(np.float32)
    model = dlc.jit(layer, dynamic_batch=True)
    for batch in (1, 4):
        x = rng.standard_normal((batch, 7, 32)).astype(np.float32)
        assert relative_error(model(x), encoder_reference(layer, x.astype(np.float64))) <= 1e-4
    assert model.cache_size() == 1


# -- models as functions of their parameters ------------------------------------------

def test_parameters_are_read_at_each_call_unless_constant():
    rng = np.random.default_rng(5)
    model = nn.Sequential(nn.Linear(4, 3, rng=rng), nn.ReLU())
    as_arguments, as_constants = dlc.jit(model), dlc.jit(model, constants=True)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    before = as_arguments(x)
    np.testing.assert_allclose(as_constants(x), before, rtol=1e-6)
    model.load_state_dict({"layers.0.bias": np.full(3, 100, np.float32)})
    assert np.all(as_arguments(x) >= 99)          # sees the new bias, no recompilation
    np.testing.assert_allclose(as_constants(x), before, rtol=1e-6)   # baked in
    assert as_arguments.cache_size() == 1
    assert "dl.constant" not in as_arguments.lower(x).as_text("dl")
    assert as_constants.lower(x).as_text("dl").count("dl.constant") == 2


def test_sequential_cnn_with_embedding_and_pooling():
    rng = np.random.default_rng(9)
    cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding="same", rng=rng), nn.BatchNorm2d(8),
                        nn.ReLU(), nn.MaxPool2d(2), nn.AvgPool2d(3, stride=1, padding=1,
                                                                 count_include_pad=False),
                        nn.GlobalAvgPool2d(), nn.Flatten(), nn.Linear(8, 5, rng=rng),
                        nn.Softmax())
    randomize_batch_norms(cnn, rng)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    conv, bn, _, _, _, _, _, linear, _ = cnn.layers
    y = np.maximum(np_bn(np_conv(x.astype(np.float64), conv), bn), 0)
    y = ref.pool2d(y, (2, 2), (2, 2), kind="max")
    y = ref.pool2d(y, (3, 3), (1, 1), (1, 1, 1, 1), kind="avg", count_include_pad=False)
    y = ref.softmax(y.mean(axis=(2, 3)) @ linear.weight.T + linear.bias)
    assert relative_error(dlc.jit(cnn)(x), y) <= 1e-4

    table = nn.Embedding(50, 6, rng=rng)
    ids = np.array([[1, 4, 49], [0, 0, 7]])
    np.testing.assert_array_equal(dlc.jit(table)(ids), table.weight[ids])


def test_channel_mismatch_points_at_the_users_line():
    class Broken(nn.Module):
        def __init__(self):
            self.conv = nn.Conv2d(4, 8, 3)

        def forward(self, x):
            return self.conv(x)  # <- here

    lines, first = inspect.getsourcelines(Broken.forward)
    line = first + next(i for i, text in enumerate(lines) if "<- here" in text)
    with pytest.raises(dlc.ShapeError) as info:
        dlc.jit(Broken())(np.ones((1, 3, 8, 8), np.float32))
    message = str(info.value)
    assert message.startswith(f"{__file__}:{line}: "), message
    assert "'dl.conv2d' op expects the filter to have 3 input channels" in message
    assert "tensor<1x3x8x8xf32>" in message and "tensor<8x4x3x3xf32>" in message
