"""Dynamic dimensions beyond the batch: one compiled function for every size.

`dlc.jit(..., dynamic={arg: {axis: name}})` makes those dimensions dynamic;
inside the function `dlc.dim` reads their run-time sizes for reshape,
broadcast_to, slicing and `dlc.arange`. Checked against numpy (float32,
max abs error <= 1e-5 on values of order 1) at several sizes of each dynamic
dimension with one compilation.
"""

import numpy as np
import pytest

import dlc

RNG = np.random.default_rng(20261127)


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def attention(x, w, mask):
    """Two-head self-attention over [batch, seq, 8], with a [batch, seq]
    padding mask, as transformers writes it."""
    b, s = dlc.dim(x, 0), dlc.dim(x, 1)
    q = x @ w
    heads = dlc.transpose(q.reshape(b, s, 2, 4), (0, 2, 1, 3))
    scores = heads @ dlc.transpose(heads, (0, 1, 3, 2))
    keep = dlc.broadcast_to(mask[:, None, None, :], (b, 2, s, s))
    scores = dlc.where(keep > 0, scores, -1e9)
    out = dlc.transpose(dlc.softmax(scores, axis=-1) @ heads, (0, 2, 1, 3))
    out = out.reshape(b, s, 8)
    return dlc.layer_norm(out, axis=-1), out[:, 0], dlc.arange(s)


def attention_reference(x, w, mask):
    B, S, _ = x.shape
    heads = (x @ w).reshape(B, S, 2, 4).transpose(0, 2, 1, 3)
    scores = heads @ heads.transpose(0, 1, 3, 2)
    scores = np.where(mask[:, None, None, :] > 0, scores, -1e9)
    out = (_softmax(scores) @ heads).transpose(0, 2, 1, 3).reshape(B, S, 8)
    norm = (out - out.mean(-1, keepdims=True)) / np.sqrt(out.var(-1, keepdims=True) + 1e-5)
    return norm, out[:, 0], np.arange(S)


def test_one_compilation_serves_every_sequence_length():
    f = dlc.jit(attention, dynamic={"x": {0: "batch", 1: "seq"},
                                    "mask": {0: "batch", 1: "seq"}})
    w = RNG.standard_normal((8, 8)).astype(np.float32)
    for batch, seq in [(2, 5), (1, 1), (3, 17), (1, 64)]:
        x = RNG.standard_normal((batch, seq, 8)).astype(np.float32)
        mask = (RNG.random((batch, seq)) > 0.3).astype(np.int64)
        mask[:, 0] = 1
        for got, want in zip(f(x, w, mask), attention_reference(x, w, mask)):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
    assert f.cache_size() == 1
    text = f.lower(x, w, mask).as_text("dl")
    assert "tensor<?x?x8xf32>" in text and "dl.iota" in text


def test_the_call_names_the_dimension_that_disagrees():
    f = dlc.jit(attention, dynamic={"x": {0: "batch", 1: "seq"},
                                    "mask": {0: "batch", 1: "seq"}})
    w = np.eye(8, dtype=np.float32)
    x = np.ones((2, 5, 8), np.float32)
    with pytest.raises(dlc.ShapeError, match=r"dynamic dimension 'seq': it is 5 in 'x' "
                                             r"\(axis 1\) and 4 in 'mask' \(axis 1\)"):
        f(x, w, np.ones((2, 4), np.int64))
    compiled = f.lower(x, w, np.ones((2, 5), np.int64)).compile()
    with pytest.raises(dlc.ShapeError, match=r"dimension 'seq'"):
        compiled(np.ones((2, 6, 8), np.float32), w, np.ones((2, 3), np.int64))
    # Static dimensions stay checked.
    with pytest.raises(dlc.ShapeError, match="expected"):
        compiled(np.ones((2, 6, 4), np.float32), w, np.ones((2, 6), np.int64))


def test_unnamed_dynamic_axes_and_bad_specs():
    f = dlc.jit(lambda x: dlc.sum(x, axis=1), dynamic={0: (1,)})
    for n in (1, 7):
        x = RNG.standard_normal((3, n)).astype(np.float32)
        np.testing.assert_allclose(f(x), x.sum(1), rtol=1e-5, atol=1e-6)
    assert f.cache_size() == 1
    with pytest.raises(ValueError, match="'y', which is not an argument"):
        dlc.jit(lambda x: x, dynamic={"y": (0,)})
    with pytest.raises(ValueError, match="dynamic position 3 is out of range"):
        dlc.jit(lambda x: x, dynamic={3: (0,)})
    with pytest.raises(TypeError, match="dynamic's keys must be argument positions"):
        dlc.jit(lambda x: x, dynamic={1.5: (0,)})
    with pytest.raises(TypeError, match="dynamic must be a dict"):
        dlc.jit(lambda x: x, dynamic=(0,))
    with pytest.raises(dlc.ShapeError, match="has 1 dimension"):
        dlc.jit(lambda x: x, dynamic={"x": (3,)})(np.ones(2, np.float32))


def test_windows_of_run_time_sizes():
    """position_ids[:, :seq] of a static table, a window past the end
    (clamped, like Python's slicing), and a step."""
    table = np.arange(32, dtype=np.int64).reshape(1, 32)

    def f(ids):
        s = dlc.dim(ids, 1)
        positions = dlc.asarray(table)[:, :s]
        return (dlc.broadcast_to(positions, (dlc.dim(ids, 0), s)) + ids,
                ids[:, 1:s + 5], ids[:, ::2], ids[:, 2:])

    g = dlc.jit(f, dynamic={"ids": (0, 1)})
    for batch, seq in [(2, 3), (1, 9), (4, 1)]:
        ids = RNG.integers(0, 100, (batch, seq))
        got = g(ids)
        want = (table[:, :seq] + ids, ids[:, 1:seq + 5], ids[:, ::2], ids[:, 2:])
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    assert g.cache_size() == 1


def test_shape_helpers_keep_dynamic_dimensions():
    def f(x):
        flat = dlc.flatten(x, 1)                      # [b, s * 4]
        grown = dlc.expand_dims(x, 1)                 # [b, 1, s, 4]
        back = dlc.squeeze(grown, 1)                  # [b, s, 4]
        merged = x.reshape(dlc.dim(x, 0) * dlc.dim(x, 1), 4)
        return (flat, grown, back + 1, merged, dlc.arange(dlc.dim(x, 1) * 2, dtype=np.float32),
                dlc.pad(x, ((0, 0), (1, 2), (0, 0)), constant_values=-1.0),
                dlc.arange(1, dlc.dim(x, 1) + 4, 2))

    g = dlc.jit(f, dynamic={"x": (0, 1)})
    for shape in [(2, 3, 4), (1, 1, 4), (5, 2, 4)]:
        x = RNG.standard_normal(shape).astype(np.float32)
        flat, grown, back, merged, counted, padded, stepped = g(x)
        np.testing.assert_array_equal(padded, np.pad(x, ((0, 0), (1, 2), (0, 0)),
                                                     constant_values=-1.0))
        np.testing.assert_array_equal(flat, x.reshape(shape[0], -1))
        np.testing.assert_array_equal(grown, x[:, None])
        np.testing.assert_allclose(back, x + 1)
        np.testing.assert_array_equal(merged, x.reshape(-1, 4))
        np.testing.assert_array_equal(counted, np.arange(shape[1] * 2, dtype=np.float32))
        np.testing.assert_array_equal(stepped, np.arange(1, shape[1] + 4, 2))
    assert g.cache_size() == 1


def test_dynamic_sizes_are_not_python_ints():
    def f(x):
        if dlc.dim(x, 1):
            return x
        return x

    with pytest.raises(dlc.TraceError, match="not known at trace time"):
        dlc.jit(f, dynamic={"x": (1,)})(np.ones((2, 3), np.float32))

    def g(x):
        return x.reshape(dlc.dim(x, 0), -1, 2)   # the -1 from the element count

    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    np.testing.assert_array_equal(dlc.jit(g, dynamic={"x": (0, 1)})(x), x.reshape(2, 3, 2))

    def h(x):
        return x.reshape(dlc.dim(x, 0), -1, -1)

    with pytest.raises(ValueError, match="gives every other size"):
        dlc.jit(h, dynamic={"x": (0, 1)})(np.ones((2, 4), np.float32))


# -- the importers -----------------------------------------------------------------------

def test_onnx_shape_computations_on_symbolic_dimensions():
    """Shape -> Gather/Slice/Concat/Mul -> Reshape, Expand, Range and
    ConstantOfShape, on inputs [batch, seq, 8] and [batch, seq] whose
    dimensions are dim_params: run-time sizes with dynamic_dims=True."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    def const(name, values):
        return helper.make_node("Constant", [], [name], value=helper.make_tensor(
            name, TensorProto.INT64, [len(values)], values))

    nodes = [
        const("zero", [0]), const("one", [1]), const("two", [2]), const("heads", [2, 4]),
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["b"], axis=0),
        helper.make_node("Slice", ["shape", "one", "two"], ["s"]),
        helper.make_node("Concat", ["b", "s", "heads"], ["split_shape"], axis=0),
        helper.make_node("Reshape", ["x", "split_shape"], ["split"]),
        helper.make_node("Transpose", ["split"], ["heads_first"], perm=[0, 2, 1, 3]),
        helper.make_node("Mul", ["b", "s"], ["rows"]),
        helper.make_node("Concat", ["rows", "heads"], ["flat_shape"], axis=0),
        helper.make_node("Reshape", ["x", "flat_shape"], ["flat"]),
        helper.make_node("Squeeze", ["s", "zero"], ["s0"]),
        helper.make_node("Constant", [], ["start"], value=helper.make_tensor(
            "start", TensorProto.INT64, [], [0])),
        helper.make_node("Constant", [], ["step"], value=helper.make_tensor(
            "step", TensorProto.INT64, [], [1])),
        helper.make_node("Range", ["start", "s0", "step"], ["positions"]),
        helper.make_node("Shape", ["mask"], ["mask_shape"]),
        helper.make_node("Expand", ["positions", "mask_shape"], ["grid"]),
        helper.make_node("ConstantOfShape", ["mask_shape"], ["ones"],
                         value=helper.make_tensor("v", TensorProto.INT64, [1], [1])),
        helper.make_node("Add", ["grid", "ones"], ["counted"]),
        helper.make_node("Mul", ["counted", "mask"], ["masked"]),
    ]
    graph = helper.make_graph(
        nodes, "shapes",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 8]),
         helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("heads_first", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("flat", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("masked", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    f = dlc.from_onnx(model, dynamic_dims=True)
    for batch, seq in [(2, 3), (1, 1), (3, 11)]:
        x = RNG.standard_normal((batch, seq, 8)).astype(np.float32)
        mask = RNG.integers(0, 2, (batch, seq))
        heads_first, flat, masked = f(x, mask)
        np.testing.assert_array_equal(heads_first,
                                      x.reshape(batch, seq, 2, 4).transpose(0, 2, 1, 3))
        np.testing.assert_array_equal(flat, x.reshape(batch * seq, 2, 4))
        np.testing.assert_array_equal(masked, (np.arange(seq) + 1) * mask)
    assert f._jit.cache_size() == 1
    with pytest.raises(dlc.ShapeError, match="dimension 'seq'"):
        f(np.zeros((2, 3, 8), np.float32), np.zeros((2, 4), np.int64))
    with pytest.raises(ValueError, match="not both"):
        dlc.from_onnx(model, dynamic_dims=True, dynamic_batch=True)


def _tiny_bert():
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, intermediate_size=37,
                                      max_position_embeddings=64)
    from dlc.zoo.weights import trained_like
    return trained_like(transformers.BertModel(config)).eval(), torch


def _bert_inputs(torch, batch, seq):
    ids = torch.randint(0, 100, (batch, seq))
    mask = torch.ones(batch, seq, dtype=torch.long)
    mask[0, seq // 2 + 1:] = 0
    return ids, mask


@pytest.mark.parametrize("frontend", ["torch", "onnx-dynamo"])
def test_transformers_bert_serves_every_batch_and_sequence(frontend):
    """transformers' BertModel (its mask utilities, position-id slices, token
    type gathers, attention) through both importers with the batch and the
    sequence dynamic: one compiled function, eager's answers at every shape
    (max abs error <= 1e-4 x max |eager|)."""
    model, torch = _tiny_bert()
    batch = torch.export.Dim("batch", min=1, max=8)
    seq = torch.export.Dim("seq", min=2, max=64)
    shapes = {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}
    example = _bert_inputs(torch, 2, 16)
    if frontend == "torch":
        f = dlc.from_torch(model, *example, dynamic_shapes=shapes)
    else:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = torch.onnx.export(model, example, dynamo=True, dynamic_shapes=shapes,
                                        verbose=False)
        f = dlc.from_onnx(program.model_proto, dynamic_dims=True)
    for b, s in [(2, 16), (1, 2), (3, 9), (1, 64)]:
        ids, mask = _bert_inputs(torch, b, s)
        with torch.no_grad():
            want = model(ids, attention_mask=mask).last_hidden_state.numpy()
        got = f(ids.numpy(), mask.numpy())
        got = got[0] if isinstance(got, tuple) else got
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()
    assert f._jit.cache_size() == 1


def test_from_torch_dynamic_shapes_refusals():
    model, torch = _tiny_bert()
    example = _bert_inputs(torch, 2, 16)
    with pytest.raises(ValueError, match="not both"):
        dlc.from_torch(model, *example, dynamic_batch=True,
                       dynamic_shapes={"input_ids": {1: torch.export.Dim("seq")}})


def test_empty_dynamic_dimensions_do_not_trap():
    """Run-time sizes of 0: an element count over them divides by max(size, 1)
    (no division by zero), windows and sums of nothing are empty or zero."""
    def f(x):
        rows = x.reshape(dlc.dim(x, 0), -1)
        return rows, dlc.sum(x, axis=1), x[:, :dlc.dim(x, 1) - 1]

    g = dlc.jit(f, dynamic={"x": (0, 1)})
    for shape in [(2, 0), (0, 3), (3, 1)]:
        x = np.ones(shape, np.float32)
        rows, total, window = g(x)
        assert rows.shape[0] == shape[0] and rows.size == x.size
        np.testing.assert_array_equal(total, x.sum(1))
        np.testing.assert_array_equal(window, x[:, :max(shape[1] - 1, 0)])
    with pytest.raises(ZeroDivisionError):
        dlc.jit(lambda x: x.reshape(dlc.dim(x, 0) // 0, -1), dynamic={"x": (0,)})(
            np.ones((2, 2), np.float32))


# -- images of any size: convolutions and poolings ----------------------------------


def _conv_reference(torch, x, w, b, **kw):
    F = torch.nn.functional
    return F.conv2d(torch.tensor(x), torch.tensor(w), None if b is None else torch.tensor(b),
                    **kw).numpy()


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_convolutions_and_poolings_over_images_of_any_size(layout):
    """A dense (im2col GEMM), a grouped and a depthwise convolution, max and
    average pooling (padding not counted) with the batch, height and width
    dynamic: one compilation, PyTorch's answers at every size, and an empty
    output where the image is smaller than the window (no read outside it)."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    dense = RNG.standard_normal((16, 6, 3, 3)).astype(np.float32) / 4
    grouped = RNG.standard_normal((16, 8, 3, 3)).astype(np.float32) / 4
    depthwise = RNG.standard_normal((16, 1, 5, 5)).astype(np.float32) / 4
    bias = RNG.standard_normal(16).astype(np.float32)
    nhwc = layout == "NHWC"

    def filt(w):
        return np.ascontiguousarray(w.transpose(2, 3, 1, 0)) if nhwc else w

    def f(x, w1, b1, w2, w3):
        y = dlc.relu(dlc.conv2d(x, w1, b1, stride=2, padding=1, layout=layout))
        y = dlc.conv2d(y, w2, groups=2, padding="same", layout=layout)
        y = dlc.conv2d(y, w3, groups=16, padding=2, layout=layout)
        return (dlc.max_pool2d(y, 3, 2, 1, layout=layout),
                dlc.avg_pool2d(y, 3, 2, 1, count_include_pad=False, layout=layout))

    axes = (0, 1, 2) if nhwc else (0, 2, 3)
    g = dlc.jit(f, dynamic={"x": axes})
    for n, h, w in [(2, 17, 23), (1, 8, 5), (3, 32, 9), (1, 1, 1)]:
        x = RNG.standard_normal((n, 6, h, w)).astype(np.float32)
        y = F.relu(torch.tensor(_conv_reference(torch, x, dense, bias, stride=2, padding=1)))
        y = F.conv2d(y, torch.tensor(grouped), groups=2, padding="same")
        y = F.conv2d(y, torch.tensor(depthwise), groups=16, padding=2)
        want = (F.max_pool2d(y, 3, 2, 1).numpy(),
                F.avg_pool2d(y, 3, 2, 1, count_include_pad=False).numpy())
        arg = np.ascontiguousarray(x.transpose(0, 2, 3, 1)) if nhwc else x
        got = g(arg, filt(dense), bias, filt(grouped), filt(depthwise))
        for a, b in zip(got, want):
            a = a.transpose(0, 3, 1, 2) if nhwc else a
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    assert g.cache_size() == 1
    # an image smaller than the window: empty, as the output size says
    small = dlc.jit(lambda x, w: dlc.conv2d(x, w), dynamic={"x": (2, 3)})
    assert small(np.ones((1, 6, 2, 7), np.float32), dense).shape == (1, 16, 0, 5)


def test_same_padding_with_stride_needs_a_static_image():
    w = np.ones((4, 3, 3, 3), np.float32)
    g = dlc.jit(lambda x: dlc.conv2d(x, w, stride=2, padding="same"), dynamic={"x": (2, 3)})
    with pytest.raises(dlc.ShapeError, match="padding='same' with stride 2 needs a static "
                                             "height"):
        g(np.ones((1, 3, 8, 8), np.float32))


def test_an_image_of_any_size_on_the_gpu_path():
    """The emulated GPU path: the im2col GEMM's [N, F, OH*OW] result is
    reshaped through a shape buffer that stays on the host."""
    torch = pytest.importorskip("torch")
    w = RNG.standard_normal((8, 3, 3, 3)).astype(np.float32)
    g = dlc.jit(lambda x, w: dlc.relu(dlc.conv2d(x, w, padding=1, stride=2)),
                target="cuda", emulate=True, block_size=32, dynamic={"x": (2, 3)})
    for h, w_ in [(9, 12), (16, 5)]:
        x = RNG.standard_normal((1, 3, h, w_)).astype(np.float32)
        want = np.maximum(_conv_reference(torch, x, w, None, padding=1, stride=2), 0)
        np.testing.assert_allclose(g(x, w), want, rtol=1e-5, atol=1e-5)
    assert g.cache_size() == 1


class _PoolNet:
    """A small convolutional network with what timm's and torchvision's
    networks pool with: max pooling (k3 s2 p1 and ceil_mode), average pooling
    with ceil_mode (ResNet-D's shortcut), a 1-D convolution over a row,
    global average pooling and a linear head."""

    @staticmethod
    def build(torch):
        nn, F = torch.nn, torch.nn.functional

        class PoolNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = nn.Conv2d(3, 8, 3, 2, 1)
                self.norm = nn.BatchNorm2d(8)
                self.body = nn.Conv2d(8, 8, 3, 1, 1, groups=4)
                self.line = nn.Conv1d(8, 8, 3, padding=1)
                self.head = nn.Linear(8, 5)

            def forward(self, x):
                y = F.relu(self.norm(self.stem(x)))
                y = F.max_pool2d(y, 3, 2, 1)
                y = self.body(y) + F.avg_pool2d(y, 2, 1, ceil_mode=True,
                                                count_include_pad=False)[..., :1, :1]
                y = F.max_pool2d(y, 2, 2, ceil_mode=True)
                row = self.line(y.mean(2))
                return self.head(F.adaptive_avg_pool2d(y, 1).flatten(1) + row.mean(-1))

        torch.manual_seed(0)
        model = PoolNet().eval()
        with torch.no_grad():
            model.norm.running_mean.uniform_(-1, 1)
            model.norm.running_var.uniform_(0.5, 2)
        return model


@pytest.mark.parametrize("frontend", ["torch", "onnx-dynamo"])
def test_convnets_serve_every_image_size(frontend):
    """A network of convolutions and poolings (ceil_mode ones included)
    exported with the batch, height and width dynamic, through both
    importers: one compiled function, eager's answers at every image size."""
    torch = pytest.importorskip("torch")
    model = _PoolNet.build(torch)
    # ceil_mode pooling makes torch.export ask for multiples of 8 (its guard
    # on a last window starting in the padding)
    dims = {0: torch.export.Dim("batch", max=8), 2: 8 * torch.export.Dim("h", min=2, max=12),
            3: 8 * torch.export.Dim("w", min=2, max=12)}
    example = torch.randn(2, 3, 32, 32)
    if frontend == "torch":
        f = dlc.from_torch(model, example, dynamic_shapes={"x": dims})
    else:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = torch.onnx.export(model, (example,), dynamo=True,
                                        dynamic_shapes={"x": dims}, verbose=False)
        f = dlc.from_onnx(program.model_proto, dynamic_dims=True)
    for shape in [(2, 3, 32, 32), (1, 3, 24, 48), (3, 3, 16, 40)]:
        x = torch.randn(*shape)
        with torch.no_grad():
            want = model(x).numpy()
        got = f(x.numpy())
        got = got[0] if isinstance(got, tuple) else got
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()
    assert f._jit.cache_size() == 1


def test_onnx_ceil_mode_pooling_of_any_size():
    """ONNX MaxPool and AveragePool with ceil_mode over a symbolic image:
    the partial last window as end padding counted in no divisor;
    onnxruntime's answers at odd sizes, one compilation."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4, "h", "w"])
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
               for name in ("max", "avg", "avg_pad")]
    nodes = [helper.make_node("MaxPool", ["x"], ["max"], kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
             helper.make_node("AveragePool", ["x"], ["avg"], kernel_shape=[2, 2],
                              strides=[2, 2], ceil_mode=1, count_include_pad=1),
             helper.make_node("AveragePool", ["x"], ["avg_pad"], kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 0, 1, 0], ceil_mode=1)]
    model = helper.make_model(helper.make_graph(nodes, "pools", [x], outputs),
                              opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    f = dlc.from_onnx(model.SerializeToString(), dynamic_dims=True)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    for shape in [(1, 4, 7, 9), (2, 4, 8, 5), (1, 4, 3, 3)]:
        data = RNG.standard_normal(shape).astype(np.float32)
        for got, want in zip(f(data), session.run(None, {"x": data})):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert f._jit.cache_size() == 1


def test_onnx_reshape_copying_a_dynamic_size():
    """Reshape's 0 copies the input's size, a run-time one too: [0, 1, -1]
    of [n, 4, h, w] (PoolFormer's GroupNorm as the dynamo exporter writes it)
    keeps its one -1."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4, "h", "w"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    shape = numpy_helper.from_array(np.array([0, 1, -1], np.int64), "shape")
    model = helper.make_model(
        helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["y"])], "r",
                          [x], [y], [shape]), opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    f = dlc.from_onnx(model.SerializeToString(), dynamic_dims=True)
    for dims in [(2, 4, 3, 5), (1, 4, 7, 2)]:
        data = RNG.standard_normal(dims).astype(np.float32)
        np.testing.assert_array_equal(f(data), data.reshape(dims[0], 1, -1))
    assert f._jit.cache_size() == 1


def test_from_torch_refuses_sizes_outside_the_traced_range():
    """torch.export traced the model for Dim(min, max) and derived dims
    (8 * Dim): a call outside them is refused, naming the input, the
    dimension and the range, instead of answered."""
    torch = pytest.importorskip("torch")
    model = _PoolNet.build(torch)
    f = dlc.from_torch(model, torch.randn(1, 3, 32, 24), dynamic_shapes={
        "x": {2: 8 * torch.export.Dim("h", min=2, max=8),
              3: 8 * torch.export.Dim("w", min=2, max=8)}})
    assert f(np.zeros((1, 3, 40, 64), np.float32)).shape == (1, 5)
    with pytest.raises(dlc.ShapeError, match=r"input 'x' dimension 3 is 72, outside what "
                                             r"torch.export traced the model for \(sizes "
                                             r"16\.\.64 of the form 8\*"):
        f(np.zeros((1, 3, 40, 72), np.float32))
    with pytest.raises(dlc.ShapeError, match=r"dimension 2 is 41, .* of the form 8\*"):
        f(np.zeros((1, 3, 41, 32), np.float32))


def test_exported_libraries_check_named_dimensions(tmp_path):
    """dlc.export's manifest names each dynamic dimension: dlcrt and the C
    entry point itself (called without dlcrt's check) refuse inputs that
    disagree on one, naming it; inputs that agree run."""
    import dlcrt
    example = np.ones((2, 5), np.float32)
    dims = {0: "batch", 1: "seq"}
    path = dlc.export(lambda ids, mask: ids * mask, example, example,
                      path=str(tmp_path / "f.so"), name="f",
                      dynamic={"ids": dims, "mask": dims})
    f = dlcrt.load(path).f
    assert [i["dims"] for i in f.inputs] == [["batch", "seq"], ["batch", "seq"]]
    ids = RNG.standard_normal((3, 7)).astype(np.float32)
    np.testing.assert_array_equal(f(ids, ids), ids * ids)
    short = np.ones((3, 6), np.float32)
    with pytest.raises(dlcrt.ShapeError, match="arguments disagree on dynamic dimension "
                                               "'seq': 'ids' has 7 and 'mask' has 6"):
        f(ids, short)
    inputs = f._tensors([(ids.ctypes.data, "float32", ids.shape),
                         (short.ctypes.data, "float32", short.shape)])
    with pytest.raises(dlcrt.ShapeError, match="dlc_f: inputs disagree on dynamic "
                                               "dimension seq: input 0 has 7 and input 1 "
                                               r"\(mask\) has 6"):
        f._run(f._entry, inputs)
