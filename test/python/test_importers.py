"""The importers: dlc.from_torch (torch.export) and dlc.from_onnx on real
model definitions (torch_zoo.py) against PyTorch eager, dynamic batch,
parameters as arguments, compile-time shape inputs, and the errors: every
unsupported operator listed at once, bad inputs, training mode."""

import io
import os
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import dlc  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_zoo  # noqa: E402

ZOO = torch_zoo.zoo()

#: max |dlc - eager| / max |eager| accepted for the float32 models
MODEL_RTOL = 1e-4


def _max_rel_error(got, want):
    return float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))


def _onnx_bytes(module, args, dynamic_batch=False):
    buffer = io.BytesIO()
    kwargs = {}
    if dynamic_batch:
        kwargs["input_names"] = [f"in{i}" for i in range(len(args))]
        kwargs["dynamic_axes"] = {f"in{i}": {0: "batch"} for i in range(len(args))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, buffer, dynamo=False, opset_version=17, **kwargs)
    return buffer.getvalue()


@pytest.mark.parametrize("frontend", ["torch", "onnx"])
@pytest.mark.parametrize("name", sorted(ZOO))
def test_model_matches_eager(name, frontend):
    module, args = ZOO[name]
    with torch.no_grad():
        want = module(*args).numpy()
    if frontend == "torch":
        compiled = dlc.from_torch(module, *args)
    else:
        compiled = dlc.from_onnx(_onnx_bytes(module, args))
    got = compiled(*[a.numpy() for a in args])
    assert got.shape == want.shape and got.dtype == want.dtype
    assert _max_rel_error(got, want) <= MODEL_RTOL
    # torch tensors are accepted as inputs too
    np.testing.assert_array_equal(compiled(*args), got)


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return self.fc(y.mean(dim=(2, 3)))


def _cnn():
    torch.manual_seed(1)
    return torch_zoo._randomize_norms(SmallCNN()).eval()


def test_torch_dynamic_batch_compiles_once():
    module = _cnn()
    f = dlc.from_torch(module, torch.randn(2, 3, 8, 8), dynamic_batch=True)
    for batch in (1, 5):
        x = torch.randn(batch, 3, 8, 8)
        with torch.no_grad():
            want = module(x).numpy()
        assert _max_rel_error(f(x.numpy()), want) <= MODEL_RTOL
    assert f._jit.cache_size() == 1


def test_torch_dynamic_batch_with_a_varargs_forward():
    # torch.export wants dynamic_shapes in forward's structure: a flat tuple
    # for forward(self, *xs) was refused ("mismatch between the structure of
    # inputs and dynamic_shapes"; found by the importer fuzzer)
    class Varargs(torch.nn.Module):
        def forward(self, *xs):
            return xs[0] * 2 + xs[1].sum(-1, keepdim=True)
    module = Varargs().eval()
    f = dlc.from_torch(module, torch.randn(2, 3), torch.randn(2, 4), dynamic_batch=True)
    for batch in (2, 5):
        x, y = torch.randn(batch, 3), torch.randn(batch, 4)
        np.testing.assert_allclose(f(x.numpy(), y.numpy()), module(x, y).numpy(), rtol=1e-6)
    assert f._jit.cache_size() == 1


def test_torch_index_put_with_a_dynamic_batch():
    # y[:, idx] = value with a dynamic batch: an index_put into the rows and
    # a slice_scatter of the whole batch (found by the importer fuzzer's
    # torch-dynamic frontend; both were refused)
    class Writes(torch.nn.Module):
        def forward(self, x):
            y = x.clone()
            y[:, torch.tensor([0, 2])] = 0.5
            z = x.clone()
            z[:, :, torch.tensor([1, 3])] = torch.tensor([3.0, 4.0])
            return y, z
    module = Writes().eval()
    f = dlc.from_torch(module, torch.randn(2, 3, 4), dynamic_batch=True)
    for batch in (2, 5):
        x = torch.randn(batch, 3, 4)
        for got, want in zip(f(x.numpy()), module(x)):
            np.testing.assert_array_equal(got, want.numpy())
    assert f._jit.cache_size() == 1

    class PerRow(torch.nn.Module):
        def forward(self, x, v):
            y = x.clone()
            y[:, torch.tensor([0])] = v
            return y
    # Values that differ per row need the batch size: the operator says so
    # (DynamicDimensionError) and the model compiles per batch size instead,
    # with a warning naming why.
    per_row = dlc.from_torch(PerRow().eval(), torch.randn(2, 3), torch.randn(2, 1),
                             dynamic_batch=True)
    x, v = np.ones((2, 3), np.float32), np.arange(2, dtype=np.float32).reshape(2, 1)
    with pytest.warns(UserWarning, match="one version per batch size.*the same for every row"):
        got = per_row(x, v)
    np.testing.assert_array_equal(got, PerRow()(torch.from_numpy(x), torch.from_numpy(v)))
    assert not per_row.dynamic_batch


def test_onnx_dynamic_batch_from_symbolic_dims():
    module = _cnn()
    model = _onnx_bytes(module, (torch.randn(2, 3, 8, 8),), dynamic_batch=True)
    f = dlc.from_onnx(model, dynamic_batch=True)
    assert f.input_specs[0][1][0] is None
    for batch in (1, 4):
        x = torch.randn(batch, 3, 8, 8)
        with torch.no_grad():
            want = module(x).numpy()
        assert _max_rel_error(f(x.numpy()), want) <= MODEL_RTOL
    assert f._jit.cache_size() == 1


def test_torch_parameters_as_arguments_follow_the_module():
    module = _cnn()
    x = torch.randn(1, 3, 8, 8)
    f = dlc.from_torch(module, x, params="arguments")
    with torch.no_grad():
        module.fc.bias.add_(1.0)
        want = module(x).numpy()
    assert _max_rel_error(f(x.numpy()), want) <= MODEL_RTOL


def test_lowered_stages_are_printable():
    module = _cnn()
    x = torch.randn(1, 3, 8, 8)
    text = dlc.from_torch(module, x).lower(x.numpy()).as_text("dl")
    assert "dl.conv2d" in text
    onnx_text = dlc.from_onnx(_onnx_bytes(module, (x,))).lower(x.numpy()).as_text("linalg")
    assert "linalg" in onnx_text


class Unsupported(torch.nn.Module):
    def forward(self, x):
        y = torch.lgamma(x)          # first use of lgamma
        z = torch.lgamma(x + 1)      # second use
        return torch.digamma(y + z)  # one use of digamma


def test_torch_unsupported_ops_listed_at_once():
    with pytest.raises(dlc.UnsupportedOpError) as info:
        dlc.from_torch(Unsupported().eval(), torch.rand(3) + 1)
    message = str(info.value)
    assert "aten.lgamma.default x2" in message and "aten.digamma.default x1" in message
    assert "test_importers.py" in message       # the module's source lines
    assert info.value.ops["aten.lgamma.default"][0] != info.value.ops["aten.lgamma.default"][1]


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _info(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def test_onnx_unsupported_ops_listed_at_once():
    model = _model(
        [helper.make_node("Det", ["x"], ["d"], name="det"),
         helper.make_node("NonZero", ["x"], ["n1"], name="nz1"),
         helper.make_node("NonZero", ["x"], ["n2"], name="nz2")],
        [_info("x", TensorProto.FLOAT, [3, 3])],
        [_info("d", TensorProto.FLOAT, []), _info("n1", TensorProto.INT64, None),
         _info("n2", TensorProto.INT64, None)])
    with pytest.raises(dlc.UnsupportedOpError) as info:
        dlc.from_onnx(model)
    message = str(info.value)
    assert "Det x1" in message and "NonZero x2" in message and "'nz2'" in message


def test_onnx_shape_inputs_specialize():
    model = _model([helper.make_node("Reshape", ["x", "shape"], ["y"])],
                   [_info("x", TensorProto.FLOAT, [2, 6]),
                    _info("shape", TensorProto.INT64, [2])],
                   [_info("y", TensorProto.FLOAT, None)])
    f = dlc.from_onnx(model)
    assert f.static_inputs == {"shape"}
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    for shape in ([3, 4], [4, 3], [12, -1]):
        np.testing.assert_array_equal(f(x, np.array(shape, np.int64)),
                                      x.reshape(shape))
    assert f._jit.cache_size() == 3


def test_onnx_shape_subgraph_folds():
    # Shape -> Gather -> Concat -> Reshape, as exported models compute shapes.
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ]
    inits = [helper.make_tensor("zero", TensorProto.INT64, [], [0]),
             helper.make_tensor("axes", TensorProto.INT64, [1], [0]),
             helper.make_tensor("minus1", TensorProto.INT64, [1], [-1])]
    model = _model(nodes, [_info("x", TensorProto.FLOAT, [2, 3, 4])],
                   [_info("y", TensorProto.FLOAT, None)], inits)
    f = dlc.from_onnx(model)
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(f(x), x.reshape(2, -1))
    assert "dl.reshape" in f.lower(x).as_text("dl")
    assert "Shape" not in f.lower(x).as_text("dl")


def test_onnx_backend_runs_tensorprotos():
    from dlc.onnx_backend import DlcBackend
    from onnx import numpy_helper
    model = _model([helper.make_node("Relu", ["x"], ["y"])],
                   [_info("x", TensorProto.FLOAT, [4])], [_info("y", TensorProto.FLOAT, [4])])
    x = np.array([-1, 2, -3, 4], np.float32)
    (y,) = DlcBackend.run_model(model, [numpy_helper.from_array(x)])
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    assert DlcBackend.supports_device("CPU") and not DlcBackend.supports_device("CUDA")


def test_imported_function_checks_inputs():
    model = _model([helper.make_node("Relu", ["x"], ["y"])],
                   [_info("x", TensorProto.FLOAT, [2, 3])], [_info("y", TensorProto.FLOAT, None)])
    f = dlc.from_onnx(model)
    with pytest.raises(dlc.DTypeError, match="'x' must have dtype float32"):
        f(np.zeros((2, 3), np.float64))
    with pytest.raises(dlc.ShapeError, match=r"'x' must have shape \[2, 3\]"):
        f(np.zeros((3, 2), np.float32))
    with pytest.raises(dlc.ArityError):
        f()
    np.testing.assert_array_equal(f(x=np.ones((2, 3), np.float32)), np.ones((2, 3)))


def test_onnx_errors_name_the_node():
    model = _model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="bad_reshape")],
                   [_info("x", TensorProto.FLOAT, [2, 6])], [_info("y", TensorProto.FLOAT, None)],
                   [helper.make_tensor("shape", TensorProto.INT64, [2], [5, 5])])
    with pytest.raises(dlc.ShapeError, match="bad_reshape.*Reshape"):
        dlc.from_onnx(model)(np.zeros((2, 6), np.float32))


def test_onnx_unsupported_dtype_is_named():
    model = _model([helper.make_node("Relu", ["x"], ["y"])],
                   [_info("x", TensorProto.INT4, [2])], [_info("y", TensorProto.INT4, None)])
    with pytest.raises(dlc.ModelImportError, match="input 'x' has ONNX type INT4"):
        dlc.from_onnx(model)


def test_from_onnx_bad_arguments():
    with pytest.raises(FileNotFoundError):
        dlc.from_onnx("/nonexistent/model.onnx")
    with pytest.raises(TypeError):
        dlc.from_onnx(42)


def test_from_torch_refuses_training_mode_and_non_modules():
    module = SmallCNN()  # training mode
    with pytest.raises(dlc.ModelImportError, match=r"training mode.*\.eval\(\)"):
        dlc.from_torch(module, torch.randn(1, 3, 8, 8))
    with pytest.raises(TypeError):
        dlc.from_torch(lambda x: x, torch.randn(2))
    with pytest.raises(ValueError, match="params"):
        dlc.from_torch(_cnn(), torch.randn(1, 3, 8, 8), params="nope")


def test_onnx_loop_and_if_unroll():
    # A Loop with a static trip count accumulating x, inside an If on a constant.
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "x"], ["acc_out"])],
        "body",
        [_info("i", TensorProto.INT64, []), _info("cond_in", TensorProto.BOOL, []),
         _info("acc_in", TensorProto.FLOAT, [3])],
        [_info("cond_out", TensorProto.BOOL, []), _info("acc_out", TensorProto.FLOAT, [3])])
    nodes = [helper.make_node("Loop", ["trip", "cond", "zero"], ["acc"], body=body)]
    inits = [helper.make_tensor("trip", TensorProto.INT64, [], [4]),
             helper.make_tensor("cond", TensorProto.BOOL, [], [True]),
             helper.make_tensor("zero", TensorProto.FLOAT, [3], [0, 0, 0])]
    model = _model(nodes, [_info("x", TensorProto.FLOAT, [3])],
                   [_info("acc", TensorProto.FLOAT, [3])], inits)
    x = np.array([1, 2, 3], np.float32)
    np.testing.assert_allclose(dlc.from_onnx(model)(x), 4 * x)


def test_onnx_dynamic_batch_falls_back_when_shapes_use_it():
    # The BERT layer views its activations with the batch size: exported with
    # a dynamic batch, the graph computes Shape -> Gather on it.
    module, (x, mask) = ZOO["bert_layer"]
    model = _onnx_bytes(module, (x, mask), dynamic_batch=True)
    f = dlc.from_onnx(model, dynamic_batch=True)
    with pytest.warns(UserWarning, match="one version per batch size"):
        got = f(x.numpy(), mask.numpy())
    with torch.no_grad():
        want = module(x, mask).numpy()
    assert _max_rel_error(got, want) <= MODEL_RTOL
    assert not f.dynamic_batch
    got = f(x[:1].numpy(), mask[:1].numpy())
    with torch.no_grad():
        assert _max_rel_error(got, module(x[:1], mask[:1]).numpy()) <= MODEL_RTOL


def test_torch_bfloat16_module_and_inputs():
    torch.manual_seed(2)
    module = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.GELU()).eval().to(torch.bfloat16)
    x = torch.randn(4, 16, dtype=torch.bfloat16)
    f = dlc.from_torch(module, x)
    got = f(x)  # a bfloat16 torch tensor as input
    with torch.no_grad():
        want = module(x).float().numpy()
    assert got.dtype == dlc.bfloat16
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-2, atol=2e-2)


class Attention(torch.nn.Module):
    def forward(self, q, k, v):
        causal = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return causal + torch.nn.functional.scaled_dot_product_attention(q, k, v)


def test_torch_scaled_dot_product_attention():
    q, k, v = (torch.randn(2, 4, 8, 16) for _ in range(3))
    f = dlc.from_torch(Attention().eval(), q, k, v)
    with torch.no_grad():
        want = Attention()(q, k, v).numpy()
    assert _max_rel_error(f(q, k, v), want) <= MODEL_RTOL


class PoolWithIndices(torch.nn.Module):
    def forward(self, x):
        y, indices = torch.nn.functional.max_pool2d(x, 2, return_indices=True)
        return y, indices


def test_torch_refusals_name_the_problem():
    with pytest.raises(dlc.ModelImportError, match="indices output of max_pool2d"):
        dlc.from_torch(PoolWithIndices().eval(), torch.randn(1, 2, 4, 4))(
            np.zeros((1, 2, 4, 4), np.float32))


class Resampling(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.ConvTranspose2d(4, 8, 3, 2, 1, 1)
        self.gn = torch.nn.GroupNorm(2, 8)
        self.inorm = torch.nn.InstanceNorm2d(8, affine=True)

    def forward(self, x):
        y = self.inorm(self.gn(self.up(x)))
        y = torch.nn.functional.interpolate(y, scale_factor=2, mode="bilinear")
        y = torch.nn.functional.interpolate(y, size=(10, 10), mode="nearest")
        return torch.nn.functional.pixel_shuffle(y, 2)


class Recurrent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(20, 8)
        self.lstm = torch.nn.LSTM(8, 6, batch_first=True)
        self.gru = torch.nn.GRU(6, 5, bidirectional=True)

    def forward(self, ids):
        h, _ = self.lstm(self.embed(ids))
        y, _ = self.gru(h.transpose(0, 1))
        return y


class Pools(torch.nn.Module):
    def forward(self, x):
        a = torch.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)
        b = torch.nn.functional.max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True)
        c = torch.nn.functional.adaptive_avg_pool2d(x, (3, 5))
        return a.sum() + b.sum() + c.sum() + torch.cumsum(x, 2).mean() + torch.expm1(x).mean()


class Math(torch.nn.Module):
    def forward(self, x):
        F = torch.nn.functional
        y = torch.where(x > 0, torch.sin(x), torch.cos(x)) ** 2
        y = y + torch.floor(x * 3) / 3 + torch.remainder(x, 0.7) + F.softplus(x) + F.elu(x)
        y = y + F.hardsigmoid(x) + F.mish(x) + torch.log1p(x.abs())
        values, indices = torch.topk(y, 3, dim=-1)
        return values * indices.float() + torch.flip(y, [1])[..., :3] + torch.tril(y)[..., :3]


class Sequence(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(6, 8, 3, padding=1)
        self.norm = torch.nn.LayerNorm(8)
        self.attention = torch.nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        y = self.norm(self.conv(x).transpose(1, 2))
        out, weights = self.attention(y, y, y)
        return out + weights.mean()


LAYERS = {
    "resampling": (Resampling, lambda: (torch.randn(1, 4, 5, 5),), True),
    "recurrent": (Recurrent, lambda: (torch.randint(0, 20, (2, 7)),), True),
    # torch.onnx.export refuses adaptive pooling to a size that does not
    # divide, and expm1
    "pools": (Pools, lambda: (torch.randn(2, 3, 11, 13),), False),
    "math": (Math, lambda: (torch.randn(3, 6),), True),
    "sequence": (Sequence, lambda: (torch.randn(2, 6, 9),), True),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_more_layers_from_both_frontends(name):
    make, inputs, exportable = LAYERS[name]
    torch.manual_seed(3)
    module, args = make().eval(), inputs()
    with torch.no_grad():
        want = module(*args).numpy()
    arrays = [a.numpy() for a in args]
    assert _max_rel_error(dlc.from_torch(module, *args)(*arrays), want) <= MODEL_RTOL
    if exportable:
        got = dlc.from_onnx(_onnx_bytes(module, args))(*arrays)
        assert _max_rel_error(got, want) <= MODEL_RTOL


# --- what transformers' models need (issue 30): advanced indexing, the
# functionalized in-place writes, sorting and the MoE routing ops ----------

class Indexing(torch.nn.Module):
    def forward(self, x, i, j):
        adjacent = x[i[:, None], j[None, :]]        # broadcast index tensors
        apart = x.unsqueeze(1)[i, :, j[:3]]         # not adjacent: index dims first
        return adjacent, apart, torch.gather(x, 1, (i[:2, None] % 6).expand(2, 3))


class Writes(torch.nn.Module):
    def forward(self, x, i, v):
        y = x.clone()
        y[:, 1:5:2] = x[:, :2] * 2                  # slice_scatter
        y[2] = 7.0                                   # select_scatter
        z = x.clone()
        z[i] = v                                     # index_put, run-time indices
        acc = torch.zeros(6, 4).index_put((i,), v, accumulate=True)
        u = x.clone()
        u[i, 1] = 3.0                                # two index tensors
        perm = torch.argsort(v[:, 0])
        w = torch.empty(4, dtype=torch.int64)
        w[perm] = torch.arange(4)                    # an inverse permutation (MoE)
        return y, z, acc, u, w.float()


class Scatters(torch.nn.Module):
    def forward(self, x, y, perm):
        return (torch.zeros_like(x).scatter(1, perm, y),           # scatter.src
                x.scatter_add(0, torch.tensor([[0, 1, 0, 2]]), y[:1]),
                x.scatter(1, torch.tensor([[0], [2], [1]]), 5.0),  # scatter.value
                x.scatter_reduce(0, torch.tensor([[0, 1, 0, 2], [2, 2, 1, 0]]), y[:2],
                                 reduce="amax"),
                x.scatter_reduce(1, perm % 3, y, reduce="prod"),
                x.scatter_reduce(1, perm[:, :2], y[:, :2], reduce="sum"))


class Sorting(torch.nn.Module):
    def forward(self, x, e):
        values, indices = torch.sort(x, dim=0, descending=True)
        ids, order = torch.sort(e)
        counts = torch.histc(ids.float(), bins=4, min=0, max=3)
        return values, indices.float(), order.float(), counts, \
            torch.sort(x, dim=1, stable=True)[1].float()


@pytest.mark.parametrize("make, inputs", [
    (Indexing, lambda: (torch.randn(5, 6), torch.tensor([0, -1, 3]),
                        torch.tensor([1, 2, -2, 5]))),
    # duplicate index 0: accumulate sums both; plain index_put takes one
    (Writes, lambda: (torch.randn(6, 4), torch.tensor([0, -1, 3, 0]),
                      torch.randn(4, 4))),
    (Sorting, lambda: (torch.randn(5, 6), torch.tensor([3, 1, 1, 0, 2, 3, 1]))),
    # found by the importer fuzzer: aten.scatter.src was not supported
    (Scatters, lambda: (torch.randn(3, 4), torch.randn(3, 4),
                        torch.tensor([[3, 1, 0, 2], [0, 1, 2, 3], [2, 3, 1, 0]]))),
], ids=["indexing", "writes", "sorting", "scatters"])
def test_torch_indexing_writes_and_sorting(make, inputs):
    module, args = make().eval(), inputs()
    with torch.no_grad():
        want = [w.numpy() for w in module(*args)]
    got = dlc.from_torch(module, *args)(*args)
    for index, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, index
        if make is Writes and index == 1:
            # x[i] = v with a repeated index: torch leaves the winner undefined;
            # dlc takes the last. Rows named once must match exactly.
            np.testing.assert_array_equal(g[[1, 2, 4, 5]], w[[1, 2, 4, 5]])
            assert any(np.array_equal(g[0], args[2][k].numpy()) for k in (0, 3))
            continue
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=f"output {index}")


def test_torch_as_strided_and_unfold():
    class Strided(torch.nn.Module):
        def forward(self, x):
            pooled = torch.as_strided(x.mean((2, 3), keepdim=True), (2, 6, 1, 1),
                                      (6, 1, 6, 6))          # timm's re-strided pooling
            windows = torch.as_strided(x.reshape(-1), (3, 4), (5, 2), 1)   # a gather
            return pooled.flatten(1), windows, x.unfold(2, 2, 1).unfold(3, 3, 2)
    x = torch.randn(2, 6, 3, 3)
    module = Strided().eval()
    want = module(x)
    got = dlc.from_torch(module, x)(x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6, atol=1e-6)


def test_torch_conv3d_as_2d_convolutions():
    torch.manual_seed(5)
    module = torch.nn.Sequential(
        torch.nn.Conv3d(3, 4, (3, 3, 1), padding=(1, 1, 0)),
        torch.nn.Conv3d(4, 6, (2, 3, 3), stride=(2, 1, 2), padding=(1, 0, 1),
                        dilation=(1, 2, 1), groups=2, bias=False)).eval()
    x = torch.randn(2, 3, 5, 7, 6)
    want = module(x).detach().numpy()
    got = dlc.from_torch(module, x)(x)
    assert got.shape == want.shape
    assert _max_rel_error(got, want) <= MODEL_RTOL


def test_torch_runtime_boolean_mask_is_refused_clearly():
    class Masked(torch.nn.Module):
        def forward(self, x):
            return x[x > 0].sum()
    with pytest.raises(dlc.DataDependentShapeError, match="depends on the values of the data"):
        dlc.from_torch(Masked().eval(), torch.randn(4))(np.ones(4, np.float32))


def test_torch_decomposition_retry_turns_views_into_reshapes():
    """A view that torch's decomposition re-trace cannot apply to the
    decomposed op's strides (GPT-2's attention) is imported as a reshape."""
    class Viewing(torch.nn.Module):
        def forward(self, q, k, v):
            a = torch.nn.functional.scaled_dot_product_attention(q, k, v)
            b, h, s, d = a.shape
            merged = a.transpose(1, 2).reshape(b, s, h * d)
            return merged.view(-1, h * d)
    args = [torch.randn(2, 4, 7, 8) for _ in range(3)]
    module = Viewing().eval()
    want = module(*args).numpy()
    got = dlc.from_torch(module, *args)(*args)
    assert _max_rel_error(got, want) <= MODEL_RTOL


def test_onnx_gather_elements_with_smaller_indices():
    """GatherElements reads the leading part of dimensions where the indices
    are smaller (no broadcasting), computed and folded at import time."""
    data = np.arange(24, dtype=np.float32).reshape(4, 6)
    index = np.array([[5, 0, -1], [2, 2, 1]], np.int64)
    want = np.take_along_axis(data[:2], np.where(index < 0, index + 6, index), 1)
    node = helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1)
    for folded in (False, True):
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])]
        inits = [helper.make_tensor("i", TensorProto.INT64, [2, 3], index.ravel())]
        if folded:
            inputs = []
            inits.append(helper.make_tensor("x", TensorProto.FLOAT, [4, 6], data.ravel()))
        graph = helper.make_graph([node], "g", inputs,
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                                 [2, 3])], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        compiled = dlc.from_onnx(model)
        got = compiled(data) if not folded else compiled()
        np.testing.assert_array_equal(got, want)


def test_torch_keeps_activations_rolls_and_safe_softmax_whole():
    """hard-swish, hard-sigmoid and SiLU are one dl op each, torch.roll is
    slices and a concatenation (no gather of computed indices), and the
    attention's safe softmax zeroes a fully masked row as PyTorch does."""
    import torch
    import torch.nn.functional as F

    class Model(torch.nn.Module):
        def forward(self, x, mask):
            a = F.hardswish(x) + F.hardsigmoid(x) + F.silu(x)
            r = torch.roll(a, shifts=(3, -2), dims=(1, 2)) + torch.roll(a, 5)
            q = r.reshape(2, 1, 6, 8)
            return F.scaled_dot_product_attention(q, q, q, attn_mask=mask)

    x = torch.randn(2, 6, 8, generator=torch.Generator().manual_seed(3))
    mask = torch.ones(6, 6, dtype=torch.bool)
    mask[2] = False  # query 2 sees nothing: PyTorch gives it zeros
    model = Model().eval()
    with torch.no_grad():
        want = model(x, mask).numpy()
    f = dlc.from_torch(model, x, mask)
    got = f(x.numpy(), mask.numpy())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert not np.isnan(got).any() and np.all(got[:, :, 2] == 0)
    text = f.lower(x.numpy(), mask.numpy()).as_text("dl")
    for op in ("dl.hardswish", "dl.silu", "dl.concat", "dl.softmax"):
        assert op in text
    assert "dl.gather" not in text and "dl.fmod" not in text


def test_torch_roll_over_a_dynamic_batch_names_itself_and_falls_back():
    """torch.roll along the dynamic batch cannot be slices of static sizes:
    the importer says so at the op and compiles one version per batch."""
    import torch

    class Roll(torch.nn.Module):
        def forward(self, x):
            return torch.roll(x, 1, 0)

    x = torch.randn(4, 3)
    f = dlc.from_torch(Roll().eval(), x, dynamic_batch=True)
    with pytest.warns(UserWarning, match=r"torch.roll over the dynamic dimension 0"):
        got = f(x.numpy())
    np.testing.assert_array_equal(got, torch.roll(x, 1, 0).numpy())
