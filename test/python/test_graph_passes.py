"""Graph-level optimization: constant folding and algebraic identities (ODS
folders), transposed matmul operands, dl-fold-batchnorm, the Python passes
dl-simplify and dl-fusion-report. Each checks what the graph stage contains
AND that results are unchanged against numpy (float64 references; f32
results within 1e-5 relative unless stated)."""

import re

import numpy as np
import pytest

import dlc
from dlc import nn
from references import conv2d as reference_conv2d

F32 = np.float32
RNG = np.random.default_rng(7)


def graph_ops(f, *args):
    """The dl op names of `f`'s graph stage (constants excluded)."""
    text = f.lower(*args).as_text("graph")
    return [line.split("=", 1)[1].split()[0] for line in text.splitlines()
            if "= dl." in line and "dl.constant" not in line]


def close(actual, expected, rtol=1e-5):
    np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=rtol,
                               atol=rtol * max(1.0, float(np.nanmax(np.abs(expected)))),
                               equal_nan=True)


# -- constant folding ------------------------------------------------------------

C = RNG.uniform(0.5, 2.0, (3, 4)).astype(F32)   # positive: log, sqrt are defined
D = RNG.standard_normal((3, 4)).astype(F32)
UNARY = {
    "relu": (dlc.relu, lambda c: np.maximum(c, 0)),
    "relu6": (dlc.relu6, lambda c: np.clip(c, 0, 6)),
    "abs": (dlc.abs, np.abs),
    "negative": (dlc.negative, np.negative),
    "exp": (dlc.exp, np.exp),
    "log": (dlc.log, np.log),
    "sqrt": (dlc.sqrt, np.sqrt),
    "rsqrt": (dlc.rsqrt, lambda c: 1 / np.sqrt(c)),
    "tanh": (dlc.tanh, np.tanh),
    "sigmoid": (dlc.sigmoid, lambda c: 1 / (1 + np.exp(-c))),
    "silu": (dlc.silu, lambda c: c / (1 + np.exp(-c))),
    "hardswish": (dlc.hardswish, lambda c: c * np.clip(c + 3, 0, 6) / 6),
    "leaky_relu": (lambda c: dlc.leaky_relu(c - 1, 0.1),
                   lambda c: np.where(c - 1 >= 0, c - 1, 0.1 * (c - 1))),
    "gelu_tanh": (lambda c: dlc.gelu(c, approximate="tanh"),
                  lambda c: 0.5 * c * (1 + np.tanh(np.sqrt(2 / np.pi) * (c + 0.044715 * c**3)))),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_on_constants_fold(name):
    op, reference = UNARY[name]
    f = dlc.jit(lambda x: x + op(C))
    x = RNG.standard_normal((3, 4)).astype(F32)
    # x + (-C) is simplified to x - C before C is folded
    assert graph_ops(f, x) == (["dl.sub"] if name == "negative" else ["dl.add"])
    close(f(x), x.astype(np.float64) + reference(C.astype(np.float64)))


BINARY_AND_SHAPE = {
    "broadcast_add": (lambda: C + D[0], lambda: C + D[0]),
    "sub_mul_div": (lambda: (C - D) * D / C, lambda: (C - D) * D / C),
    "pow": (lambda: C ** D, lambda: C ** D),
    "max_min": (lambda: dlc.minimum(dlc.maximum(C, D), 1.0),
                lambda: np.minimum(np.maximum(C, D), 1.0)),
    "where": (lambda: dlc.where(C > D, C, D * 2.0), lambda: np.where(C > D, C, D * 2.0)),
    "reductions": (lambda: dlc.sum(C, axis=0) + dlc.max(D, axis=0) - dlc.mean(C, axis=0)
                   + dlc.min(D, axis=0),
                   lambda: C.sum(0) + D.max(0) - C.mean(0) + D.min(0)),
    "transpose_reshape": (lambda: dlc.reshape(dlc.transpose(C), (2, 6)),
                          lambda: C.T.reshape(2, 6)),
    "slice_concat_pad": (lambda: dlc.pad(dlc.concatenate([C[:, ::2], D[:, 1:2]], axis=1), 1,
                                         constant_values=5.0),
                         lambda: np.pad(np.concatenate([C[:, ::2], D[:, 1:2]], axis=1), 1,
                                        constant_values=5.0)),
    "broadcast_to": (lambda: dlc.broadcast_to(D[0], (2, 3, 4)), lambda: np.broadcast_to(D[0], (2, 3, 4))),
    "astype": (lambda: dlc.astype(dlc.astype(D * 10, np.int32), np.float32),
               lambda: (D * 10).astype(np.int32).astype(np.float64)),
}


@pytest.mark.parametrize("name", sorted(BINARY_AND_SHAPE))
def test_ops_on_constants_fold(name):
    build, reference = BINARY_AND_SHAPE[name]
    expected = np.asarray(reference(), np.float64)
    f = dlc.jit(lambda x: x * build())
    x = RNG.standard_normal(expected.shape).astype(F32)
    assert graph_ops(f, x) == ["dl.mul"]
    close(f(x), x * expected)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float64])
@pytest.mark.parametrize("shape", [(130, 70), (64, 64), (1, 200), (65, 3)])
def test_large_constant_transposes_fold_exactly(shape, dtype):
    """A matrix transpose of a constant folds in 64 x 64 blocks (a linear
    layer's weight): across block edges and ragged ends, every element where
    numpy puts it."""
    w = (np.arange(np.prod(shape)) % 251 - 125).reshape(shape).astype(dtype)
    f = dlc.jit(lambda x: x + dlc.transpose(w))
    x = np.zeros(shape[::-1], dtype)
    assert graph_ops(f, x) == ["dl.add"]
    np.testing.assert_array_equal(f(x), w.T)


def test_integer_folding_wraps_like_numpy():
    a = np.array([127, -128, 5], np.int8)
    f = dlc.jit(lambda x: x + (dlc.asarray(a) + np.int8(1)) * np.int8(3))
    x = np.zeros(3, np.int8)
    assert graph_ops(f, x) == ["dl.add"]
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(f(x), (a + np.int8(1)) * np.int8(3))


# -- identities -------------------------------------------------------------------

def test_identities_remove_ops_and_keep_results():
    f = dlc.jit(lambda x: dlc.relu(dlc.relu(-(-(x * 1.0 + 0.0) / 1.0))))
    x = RNG.standard_normal((5, 7)).astype(F32)
    assert graph_ops(f, x) == ["dl.relu"]
    np.testing.assert_array_equal(f(x), np.maximum(x, 0))


def test_transpose_pairs_cancel():
    f = dlc.jit(lambda x: dlc.transpose(dlc.transpose(x, (2, 0, 1)), (1, 2, 0)) + 1.0)
    x = RNG.standard_normal((2, 3, 4)).astype(F32)
    assert graph_ops(f, x) == ["dl.add"]
    np.testing.assert_array_equal(f(x), x + 1)


def test_float_x_minus_x_is_not_zero_for_nan_and_inf():
    f = dlc.jit(lambda x: x - x)
    x = np.array([np.inf, np.nan, 1.5, -np.inf], F32)
    assert graph_ops(f, x) == ["dl.sub"]
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(f(x), x - x)


def test_adding_broadcast_zeros_is_not_an_identity():
    f = dlc.jit(lambda x: x + np.zeros((4, 3), F32))
    x = RNG.standard_normal((1, 3)).astype(F32)
    assert f(x).shape == (4, 3)
    np.testing.assert_array_equal(f(x), np.broadcast_to(x, (4, 3)))


@pytest.mark.parametrize("m,k,n,rewritten", [(8, 64, 8, True), (64, 2, 64, False)])
def test_matmul_of_transposed_operands(m, k, n, rewritten):
    """A^T B^T = (B A)^T where one transpose of the result moves fewer elements."""
    f = dlc.jit(lambda a, b: a.T @ b.T)
    a = RNG.standard_normal((k, m)).astype(F32)
    b = RNG.standard_normal((n, k)).astype(F32)
    ops = graph_ops(f, a, b)
    assert ops.count("dl.transpose") == (1 if rewritten else 2)
    close(f(a, b), a.T.astype(np.float64) @ b.T)


# -- batch-norm folding ----------------------------------------------------------------

class ConvBn(nn.Module):
    def __init__(self, rng, groups=1, bias=False):
        self.conv = nn.Conv2d(8, 8, 3, padding=1, groups=groups, bias=bias, rng=rng)
        self.bn = nn.BatchNorm2d(8)
        self.bn.weight = rng.uniform(0.5, 1.5, 8).astype(F32)
        self.bn.bias = rng.uniform(-0.5, 0.5, 8).astype(F32)
        self.bn.running_mean = rng.uniform(-0.5, 0.5, 8).astype(F32)
        self.bn.running_var = rng.uniform(0.5, 2.0, 8).astype(F32)

    def forward(self, x):
        return dlc.relu(self.bn(self.conv(x)))


def test_linear_over_a_non_contiguous_input_at_batch_8():
    # torch.export turns a linear layer over a non-contiguous 3-D input into
    # expand(weight) + bmm (BERT's attention output at batch 8): the graph
    # keeps one weight, not a constant copied per batch element.
    torch = pytest.importorskip("torch")

    class Head(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(48, 32)

        def forward(self, x):  # [8, 48, 16] -> [8, 16, 48], not contiguous
            return self.proj(x.transpose(1, 2))

    torch.manual_seed(0)
    module = Head().eval()
    x = RNG.standard_normal((8, 48, 16)).astype(F32)
    with torch.no_grad():
        f = dlc.from_torch(module, torch.from_numpy(x))
        want = module(torch.from_numpy(x)).numpy().astype(np.float64)
    graph = f.lower(x).as_text("graph")
    assert "broadcast_to" not in graph
    assert not re.search(r"dl\.constant [^\n]*: tensor<8x48x32xf32>", graph)
    assert re.search(r"dl\.matmul [^\n]*tensor<48x32xf32>\)", graph)
    close(f(x), want)


@pytest.mark.parametrize("groups,bias", [(1, False), (1, True), (8, False)])
def test_batch_norm_folds_into_conv(groups, bias):
    rng = np.random.default_rng(groups)
    model = ConvBn(rng, groups, bias)
    x = rng.standard_normal((2, 8, 6, 6)).astype(F32)
    unfolded = dlc.jit(model, disable=("dl-fold-batchnorm",))
    expected = unfolded(x).astype(np.float64)
    assert "dl.batch_norm" in graph_ops(unfolded, x)
    for constants in (False, True):
        folded = dlc.jit(model, constants=constants)
        ops = graph_ops(folded, x)
        assert "dl.batch_norm" not in ops
        if constants:     # the new weights and bias are folded constants
            # (between dl-layout's conversions to NHWC and back)
            assert ops == ["dl.transpose", "dl.conv2d", "dl.relu", "dl.transpose"]
        close(folded(x), expected, rtol=1e-5)


def test_batch_norm_stays_when_the_conv_output_is_used_twice():
    rng = np.random.default_rng(3)
    model = ConvBn(rng)
    f = dlc.jit(lambda x: (lambda y: model.bn(y) + y)(model.conv(x)))
    x = rng.standard_normal((1, 8, 5, 5)).astype(F32)
    assert "dl.batch_norm" in graph_ops(f, x)


# -- dl-simplify (Python) -------------------------------------------------------------

def test_simplify_strength_reduces_and_matches_numpy():
    f = dlc.jit(lambda x, y: x ** 2 + x ** 3 - abs(x) ** 0.5 + (x + 3.0) ** -1.0
                + y / 8.0 + (x + -y) - (-y))
    x = RNG.uniform(-2, 2, (9, 17)).astype(F32)
    y = RNG.standard_normal((9, 17)).astype(F32)
    ops = graph_ops(f, x, y)
    assert "dl.pow" not in ops and "dl.neg" not in ops and "dl.div" in ops  # 1 / (x + 3)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    expected = x64**2 + x64**3 - np.abs(x64)**0.5 + 1 / (x64 + 3) + y64 / 8 + (x64 - y64) + y64
    close(f(x, y), expected)
    unsimplified = dlc.jit(lambda x: x ** 2, disable="dl-simplify")
    assert graph_ops(unsimplified, x) == ["dl.pow"]


# -- dl-raise-ops (Python) --------------------------------------------------------------

def _erf64(x):
    import math
    return np.vectorize(math.erf)(x)


WRITTEN_OUT = {
    # name: (dlc function, float64 reference, the op it becomes)
    "gelu": (lambda x: x * 0.5 * (1.0 + dlc.erf(x / 1.4142135)),
             lambda x: 0.5 * x * (1 + _erf64(x / np.sqrt(2))), "dl.gelu"),
    "gelu_tanh": (lambda x: 0.5 * x * (1.0 + dlc.tanh(0.7978845608 * (x + 0.044715 * x ** 3))),
                  lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
                  "dl.gelu"),
    "silu": (lambda x: x * dlc.sigmoid(x), lambda x: x / (1 + np.exp(-x)), "dl.silu"),
    "hardswish": (lambda x: x * dlc.minimum(dlc.maximum(x + 3.0, 0.0), 6.0) / 6.0,
                  lambda x: x * np.clip(x + 3, 0, 6) / 6, "dl.hardswish"),
}


@pytest.mark.parametrize("name", sorted(WRITTEN_OUT))
def test_raise_ops_finds_written_out_activations(name):
    fn, reference, op = WRITTEN_OUT[name]
    x = RNG.uniform(-5, 5, (6, 33)).astype(F32)
    raised = dlc.jit(fn)
    assert graph_ops(raised, x) == [op]
    close(raised(x), reference(x.astype(np.float64)))
    kept = dlc.jit(fn, disable="dl-raise-ops")
    assert op not in graph_ops(kept, x)
    close(kept(x), reference(x.astype(np.float64)))


def test_raise_ops_finds_a_written_out_layer_norm_with_its_scale_and_bias():
    gamma = RNG.uniform(0.5, 1.5, 24).astype(F32)
    beta = RNG.standard_normal(24).astype(F32)

    def norm(x):  # BERT-pytorch's and pre-opset-17 ONNX's spelling
        mean = dlc.mean(x, axis=-1, keepdims=True)
        var = dlc.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return (x - mean) / dlc.sqrt(var + 1e-5) * gamma + beta

    x = (RNG.standard_normal((3, 5, 24)) * 4 + 2).astype(F32)
    f = dlc.jit(norm)
    assert graph_ops(f, x) == ["dl.layer_norm"]
    x64 = x.astype(np.float64)
    mean = x64.mean(-1, keepdims=True)
    expected = (x64 - mean) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5) * gamma + beta
    close(f(x), expected, rtol=1e-4)
    # over a leading axis (channels-first): not a layer norm of dl's kind
    channels = dlc.jit(lambda x: (x - dlc.mean(x, axis=1, keepdims=True)) / dlc.sqrt(
        dlc.mean((x - dlc.mean(x, axis=1, keepdims=True)) ** 2, axis=1, keepdims=True) + 1e-5))
    assert "dl.layer_norm" not in graph_ops(channels, x)


def test_unknown_pass_in_disable_is_an_error():
    with pytest.raises(ValueError, match="dl-simplfy.*dl-simplify, dl-raise-ops, dl-fold-batchnorm"):
        dlc.jit(lambda x: x, disable=("dl-simplfy",))


# -- dl-fusion-report (Python) ----------------------------------------------------------

def test_fusion_report_of_the_mlp():
    f = dlc.jit(lambda x, w1, b1, w2, b2: dlc.softmax(dlc.relu(x @ w1 + b1) @ w2 + b2, axis=-1))
    args = [np.ones(s, F32) for s in [(4, 784), (784, 128), (128,), (128, 10), (10,)]]
    report = f.lower(*args).as_text("fused")
    assert report.splitlines() == [
        "@dlc__lambda_: 6 ops in 5 kernels (1 fused away)",
        "  kernel 0: matmul", "  kernel 1: add + relu", "  kernel 2: matmul",
        "  kernel 3: add", "  kernel 4: softmax",
        # add + relu after the first matmul (128 columns: whole register
        # tiles); the second matmul has 10 columns, under one vector
        "  + 1 elementwise kernel(s) computed in the register tiles of the "
        "matmul/convolution before them"]
    assert f.lower(*args).fused_epilogues() == 1
    assert dlc.jit(f.__wrapped__, disable="dl-fuse-epilogue").lower(*args).fused_epilogues() == 0
    assert f.lower(*args).as_text("graph").count("dl.fusion_group = 1 ") == 2


def test_fusion_groups_stop_at_broadcasts_and_shared_values():
    # exp(x[0]) is broadcast into the product (read 4 times per element): its
    # own kernel; t = x * 2 has two users: its own kernel; the slice x[0] is
    # a view, in no kernel.
    f = dlc.jit(lambda x: (lambda t: (t + 1.0) * dlc.exp(x[0]) - t)(x * 2.0))
    x = RNG.standard_normal((4, 3)).astype(F32)
    report = f.lower(x).as_text("fused").splitlines()
    assert report == ["@dlc__lambda_: 5 ops in 3 kernels (2 fused away)",
                      "  kernel 0: mul", "  kernel 1: exp", "  kernel 2: add + mul + sub"]
    close(f(x), (x * 2.0 + 1.0) * np.exp(x[0]) - x * 2.0)


# -- static memory planning (dl-plan-memory) ---------------------------------------------

def chain(x, a, b, c, d):
    y = dlc.relu(dlc.conv2d(x, a, padding=1))
    y = dlc.relu(dlc.conv2d(y, b, padding=1))
    y = dlc.relu(dlc.conv2d(y, c, padding=1))
    return dlc.conv2d(y, d, padding=1)


def conv_chain_reference(x, ws):
    expected = x.astype(np.float64)
    for i, w in enumerate(ws):
        expected = reference_conv2d(expected, w, padding=(1, 1, 1, 1))
        if i < 3:
            expected = np.maximum(expected, 0)
    return expected


@pytest.mark.parametrize("n,c,h", [(1, 8, 12), (2, 3, 5)])
def test_memory_planning_shares_temporaries_of_a_chain(n, c, h):
    # A chain of padded convolutions: bufferization alone reuses no buffer
    # across them (each activation, padded copy and accumulator is its own
    # alloc); the planner overlaps those whose lifetimes do not.
    rng = np.random.default_rng(c)
    x = rng.standard_normal((n, c, h, h)).astype(F32)
    ws = [(rng.standard_normal((c, c, 3, 3)) / 3).astype(F32) for _ in range(4)]
    planned, unplanned = dlc.jit(chain), dlc.jit(chain, disable="dl-plan-memory")
    plan = planned.lower(x, *ws).memory_plan()
    assert plan["buffers"] >= 3
    assert plan["peak_bytes"] < plan["unplanned_peak_bytes"]
    unplanned_plan = unplanned.lower(x, *ws).memory_plan()
    assert unplanned_plan["peak_bytes"] == unplanned_plan["unplanned_peak_bytes"] == \
        plan["unplanned_peak_bytes"]
    assert "memref.view" not in unplanned.lower(x, *ws).as_text("bufferized")
    assert "memref.view" in planned.lower(x, *ws).as_text("bufferized")
    close(planned(x, *ws), conv_chain_reference(x, ws))
    np.testing.assert_array_equal(planned(x, *ws), unplanned(x, *ws))


def test_memory_planning_keeps_results_of_a_resnet_block_unchanged():
    rng = np.random.default_rng(11)
    model = ConvBn(rng)
    block = lambda x: model(model(x)) + x  # noqa: E731
    x = rng.standard_normal((2, 8, 6, 6)).astype(F32)
    planned = dlc.jit(block)
    plan = planned.lower(x).memory_plan()
    assert plan["peak_bytes"] <= plan["unplanned_peak_bytes"]
    np.testing.assert_array_equal(planned(x), dlc.jit(block, disable="dl-plan-memory")(x))


def test_fusion_reduces_kernels_and_keeps_results():
    """The fusion report's kernels are the linalg ops (loop nests) compiled."""
    def f(x, w, b):
        return dlc.sigmoid(dlc.relu(x @ w + b) * 2.0 - 1.0)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((33, 40)).astype(F32)
    w = rng.standard_normal((40, 24)).astype(F32)
    b = rng.standard_normal(24).astype(F32)
    fused, unfused = dlc.jit(f), dlc.jit(f, disable="dl-linalg-fuse")
    fused_nests = fused.lower(x, w, b).kernel_count()
    unfused_nests = unfused.lower(x, w, b).kernel_count()
    # fill + matmul, the one elementwise nest computed in the matmul's
    # register tiles; without dl-linalg-fuse one nest per elementwise op but
    # the first (the epilogue)
    assert fused_nests == 2 and unfused_nests == 6
    no_epilogue = dlc.jit(f, disable=("dl-linalg-fuse", "dl-fuse-epilogue"))
    assert no_epilogue.lower(x, w, b).kernel_count() == 7
    assert fused.lower(x, w, b).as_text("fused").splitlines()[0].endswith(
        "6 ops in 2 kernels (4 fused away)")
    expected = 1 / (1 + np.exp(-(np.maximum(x.astype(np.float64) @ w + b, 0) * 2 - 1)))
    close(fused(x, w, b), expected)
    close(unfused(x, w, b), expected)


def _numpy_conv(x, w, pad):
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((n, f, h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + out.shape[2], j:j + out.shape[3]]
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j])
    return out


@pytest.mark.parametrize("batch", [1, 3])
def test_layout_runs_a_resnet_block_in_nhwc(batch):
    """dl-layout: the convolutions and the pooling of an NCHW block run in
    NHWC; the conversions cancel through relu, the bias, the residual add;
    two are left (input and output), and the results are unchanged."""
    rng = np.random.default_rng(21)
    w1 = (rng.standard_normal((8, 8, 3, 3)) / 8).astype(F32)
    w2 = (rng.standard_normal((8, 8, 3, 3)) / 8).astype(F32)
    bias = rng.standard_normal((8, 1, 1)).astype(F32)

    def block(x):
        h = dlc.relu(dlc.conv2d(x, w1, padding=1))
        h = dlc.conv2d(h, w2, padding=1) + bias
        return dlc.max_pool2d(dlc.relu(h + x), 2)

    x = rng.standard_normal((batch, 8, 7, 9)).astype(F32)
    nhwc, nchw = dlc.jit(block), dlc.jit(block, disable="dl-layout")
    graph = nhwc.lower(x).as_text("graph")
    # (ops' layouts, not their strategies': `, layout = ...` inside #dl.strategy)
    op_layouts = re.findall(r'(?<!, )layout = "(N[CH]+W?C?)"', graph)
    assert op_layouts == ["NHWC"] * 3
    assert "dl.layout_conversions = 2" in graph
    assert 'layout = "NHWC"' not in nchw.lower(x).as_text("graph")
    x64 = x.astype(np.float64)
    h = np.maximum(_numpy_conv(x64, w1, 1), 0)
    h = np.maximum(_numpy_conv(h, w2, 1) + bias + x64, 0)
    expected = h[:, :, :6, :8].reshape(batch, 8, 3, 2, 4, 2).max(axis=(3, 5))
    close(nhwc(x), expected)
    close(nchw(x), expected)


def test_layout_with_a_dynamic_batch_and_grouped_convolution():
    rng = np.random.default_rng(22)
    w = rng.standard_normal((6, 2, 3, 3)).astype(F32)

    def f(x):
        return dlc.avg_pool2d(dlc.sigmoid(dlc.conv2d(x, w, stride=2, padding=1, groups=3)), 2)

    compiled = dlc.jit(f, dynamic_batch=True)
    for batch in (1, 4):
        x = rng.standard_normal((batch, 6, 9, 9)).astype(F32)
        np.testing.assert_allclose(compiled(x), dlc.jit(f, disable="dl-layout")(x),
                                   rtol=1e-5, atol=1e-6)
    assert 'layout = "NHWC"' in compiled.lower(x).as_text("graph")


# -- epilogue fusion (dl-affine-register-tile) -------------------------------------

EPILOGUES = {
    "bias+relu": (lambda y, b, r: dlc.relu(y + b), lambda y, b, r: np.maximum(y + b, 0)),
    "tanh+residual": (lambda y, b, r: dlc.tanh(y) + r, lambda y, b, r: np.tanh(y) + r),
    "scale+shift": (lambda y, b, r: y * b - 1.0, lambda y, b, r: y * b - 1.0),
    "sigmoid(bias)*residual": (lambda y, b, r: dlc.sigmoid(y + b) * r,
                               lambda y, b, r: r / (1 + np.exp(-(y + b)))),
}


@pytest.mark.parametrize("epilogue", sorted(EPILOGUES))
@pytest.mark.parametrize("m,k,n", [(1, 300, 45), (37, 53, 29), (64, 784, 128), (8, 17, 16),
                                   (100, 64, 33), (13, 2000, 70), (200, 1500, 300)])
def test_matmul_epilogue_is_fused_and_matches_numpy(m, k, n, epilogue):
    """The elementwise op after a matmul runs on the register tiles (bias
    and residual as vector loads); columns and rows the tiles leave run it
    in loops. Results against numpy and against the unfused pipeline."""
    traced, reference = EPILOGUES[epilogue]
    rng = np.random.default_rng(m * k + n)
    x = rng.standard_normal((m, k)).astype(F32)
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(F32)
    b = rng.standard_normal(n).astype(F32)
    r = rng.standard_normal((m, n)).astype(F32)
    f = lambda x, w, b, r: traced(x @ w, b, r)  # noqa: E731
    fused, unfused = dlc.jit(f), dlc.jit(f, disable="dl-fuse-epilogue")
    affine = fused.lower(x, w, b, r).as_text("affine")
    assert "dl.fused_epilogue" in affine  # n >= 16: one vector of columns
    assert "dl.fused_epilogue" not in unfused.lower(x, w, b, r).as_text("affine")
    expected = reference(x.astype(np.float64) @ w, b, r)
    close(fused(x, w, b, r), expected, rtol=1e-4)
    close(unfused(x, w, b, r), expected, rtol=1e-4)


def test_batched_matmul_epilogue():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 37, 53)).astype(F32)
    w = rng.standard_normal((3, 53, 40)).astype(F32)
    b = rng.standard_normal(40).astype(F32)
    f = dlc.jit(lambda x, w, b: dlc.relu(x @ w + b))
    assert "dl.fused_epilogue" in f.lower(x, w, b).as_text("affine")
    close(f(x, w, b), np.maximum(x.astype(np.float64) @ w + b, 0), rtol=1e-4)


def test_epilogue_with_a_dynamic_batch():
    """Rows only known at run time: full row tiles fused, the rows left over
    (any count) run the epilogue's loops."""
    rng = np.random.default_rng(4)
    w = rng.standard_normal((50, 37)).astype(F32)
    b = rng.standard_normal(37).astype(F32)
    f = dlc.jit(lambda x, w, b, r: dlc.relu(x @ w + b) + r, dynamic_batch=("x", "r"))
    for batch in (1, 7, 8, 13, 30):
        x = rng.standard_normal((batch, 50)).astype(F32)
        r = rng.standard_normal((batch, 37)).astype(F32)
        close(f(x, w, b, r), np.maximum(x.astype(np.float64) @ w + b, 0) + r, rtol=1e-4)
    lowered = f.lower(x, w, b, r)
    assert "dl.fused_epilogue" in lowered.as_text("affine")
    # bias, relu and residual fuse into one nest whatever the batch (the
    # conversion's tensor.dim of each result folded first), which then runs
    # in the matmul's tiles: fill + matmul
    assert lowered.as_text("linalg").count("linalg.generic") == 1
    assert lowered.kernel_count() == 2


def test_matmul_used_twice_keeps_its_epilogue_apart():
    """C is returned as well: its tiles must hold the final sums, so the
    epilogue is not fused (and both results are right)."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((20, 30)).astype(F32)
    w = rng.standard_normal((30, 40)).astype(F32)
    f = dlc.jit(lambda x, w: (lambda y: (y, dlc.relu(y)))(x @ w))
    y, z = f(x, w)
    expected = x.astype(np.float64) @ w
    close(y, expected, rtol=1e-4)
    close(z, np.maximum(expected, 0), rtol=1e-4)


@pytest.mark.parametrize("n,c,h,stride,layout", [
    (1, 64, 14, 1, "NCHW"), (2, 19, 7, 1, "NCHW"), (3, 33, 13, 2, "NCHW"),
    (1, 16, 5, 1, "NCHW"), (1, 512, 4, 1, "NHWC"), (1, 512, 4, 1, "NCHW")])
def test_convolution_epilogue_bias_relu_residual(n, c, h, stride, layout):
    """A convolution's bias, residual and relu computed on its register tiles:
    a direct convolution's (small filters), or an NHWC im2col GEMM's
    [N*OH*OW, F] read by the epilogue through an expand_shape (512 channels).
    An NCHW convolution with a filter that large stays NCHW: its GEMM's
    [N, OH*OW, F] is transposed back by the kernel that adds the bias, where
    relu and the residual fuse too (not on the tiles), and the result is the
    same."""
    rng = np.random.default_rng(n * c + h)
    x = rng.standard_normal((n, c, h, h)).astype(F32)
    w = (rng.standard_normal((c, c, 3, 3)) / np.sqrt(9 * c)).astype(F32)
    b = rng.standard_normal(c).astype(F32)
    nhwc = layout == "NHWC"

    def block(x, w, b):
        if nhwc:
            y = dlc.conv2d(x, w, stride=stride, padding=1, layout="NHWC") + b
            return dlc.relu(y + x[:, ::stride, ::stride, :])
        y = dlc.conv2d(x, w, stride=stride, padding=1) + b.reshape(1, -1, 1, 1)
        return dlc.relu(y + x[:, :, ::stride, ::stride])

    args = ((np.ascontiguousarray(x.transpose(0, 2, 3, 1)),
             np.ascontiguousarray(w.transpose(2, 3, 1, 0)), b) if nhwc else (x, w, b))
    fused, unfused = dlc.jit(block), dlc.jit(block, disable="dl-fuse-epilogue")
    lowered = fused.lower(*args)
    if c == 512 and not nhwc:  # a 9.4 MB filter: kept NCHW (over half of L2 here)
        assert 'layout = "NCHW"' in lowered.as_text("graph")
    else:
        assert "dl.fused_epilogue" in lowered.as_text("affine")
    if c == 512 and nhwc:  # im2col + GEMM, its epilogue read through expand_shape
        assert "dl.strategy = #dl.strategy<kind = im2col_gemm" in lowered.as_text("graph")
        assert "memref.expand_shape" in lowered.as_text("bufferized")
    x64 = x.astype(np.float64)
    full = _numpy_conv(x64, w, 1)[:, :, ::stride, ::stride]
    expected = np.maximum(full + b.reshape(1, -1, 1, 1) + x64[:, :, ::stride, ::stride], 0)
    if nhwc:
        expected = expected.transpose(0, 2, 3, 1)
    close(fused(*args), expected, rtol=1e-4)
    close(unfused(*args), expected, rtol=1e-4)


def test_long_elementwise_chains_fuse_in_bounded_pieces():
    # dl-linalg-fuse clones bodies: fusing a 2,000-op chain into one op
    # copied O(n^2) operations (48 s for 3,000 pairs). Bounded fused bodies
    # (max-fused-ops) cut the chain into pieces; the result is unchanged.
    def chain(x):
        for _ in range(1000):
            x = x * 1.0001 + 0.0001
        return x
    x = np.linspace(-1, 1, 96, dtype=np.float32).reshape(8, 12)
    lowered = dlc.jit(chain).lower(x)
    generics = lowered.as_text("linalg").count("linalg.generic")
    assert 2 <= generics <= 40
    expected = x.copy()
    for _ in range(1000):  # float32 steps, as compiled (FMA contraction aside)
        expected = expected * np.float32(1.0001) + np.float32(0.0001)
    np.testing.assert_allclose(lowered.compile()(x), expected, rtol=1e-4, atol=1e-5)


# -- dl-pack-weights -------------------------------------------------------------

# 200 columns: at least two panels of every target's register tile (24 floats
# on AVX2, 48 or 64 on AVX-512 as the FMA pipes go) and a whole number of none.
PACK_W = RNG.standard_normal((64, 200)).astype(F32)
PACK_B = RNG.standard_normal(200).astype(F32)
PACKED = re.compile(r"dl\.matmul .*: \(tensor<1x\d+x64xf32>, tensor<(\d+)x64x(\d+)xf32>\)")


@pytest.mark.parametrize("shape", [(1, 64), (5, 64), (2, 3, 64), (32, 64), (197, 64),
                                   (256, 64)])
def test_pack_weights_packs_few_row_products_with_a_constant(shape):
    """x @ W with W constant and at most 256 rows of x reads W as column
    panels packed at compile time (the target's register-tile width; 100
    columns are no whole number of panels): same values as numpy, bias
    and activation after it included."""
    x = RNG.standard_normal(shape).astype(F32)
    f = dlc.jit(lambda a: dlc.gelu(a @ PACK_W + PACK_B))
    graph = f.lower(x).as_text("graph")
    panels, width = map(int, PACKED.search(graph).groups())
    assert panels * width >= 200 > (panels - 1) * width and panels >= 2
    assert ("dl.transpose" in graph) == (int(np.prod(shape[:-1])) > 1)
    expected = x.astype(np.float64) @ PACK_W + PACK_B
    expected = 0.5 * expected * (1 + np.vectorize(__import__("math").erf)(expected / np.sqrt(2)))
    close(f(x), expected, rtol=1e-4)


@pytest.mark.parametrize("case", ["rows", "argument", "disabled", "dynamic"])
def test_pack_weights_leaves_other_products_alone(case):
    """More than 256 rows, a weight that is an argument, the pass disabled,
    or a dynamic batch: the matmul as it was, same values."""
    rows = 257 if case == "rows" else 4
    x = RNG.standard_normal((rows, 64)).astype(F32)
    if case == "argument":
        f, args = dlc.jit(lambda a, w: a @ w), (x, PACK_W)
    else:
        kwargs = dict(disable=("dl-pack-weights",)) if case == "disabled" else \
            dict(dynamic_batch=True) if case == "dynamic" else {}
        f, args = dlc.jit(lambda a: a @ PACK_W, **kwargs), (x,)
    graph = f.lower(*args).as_text("graph")
    assert not PACKED.search(graph) and not re.search(r"<\d+x64x\d+xf32>", graph)
    close(f(*args), x.astype(np.float64) @ PACK_W)


def test_repeated_layers_are_compiled_once():
    # dl-outline-parallel and dl-outline-loops: four layers of the same code
    # over other weights give LLVM each kernel once (called four times), and
    # the result is the same as with every nest inline. The column mean is a
    # sequential nest (too little work for the threads); the GEMM with its
    # tanh, scale and add is one parallel register tile (its epilogue).
    rng = np.random.default_rng(7)
    weights = [rng.standard_normal((96, 96)).astype(np.float32) / 10 for _ in range(4)]
    scales = [rng.standard_normal(96).astype(np.float32) for _ in range(4)]

    def layers(x):
        for w, s in zip(weights, scales):
            x = dlc.tanh(x @ w) * s + dlc.mean(x, axis=0)
        return x

    x = rng.standard_normal((200, 96)).astype(np.float32)
    want = x
    for w, s in zip(weights, scales):
        want = np.tanh(want @ w) * s + want.mean(axis=0)
    outlined = dlc.jit(layers).lower(x)
    inline = dlc.jit(layers, disable="dl-outline-loops").lower(x)
    text, plain = outlined.as_text("llvm"), inline.as_text("llvm")
    loops = re.findall(r"llvm\.func @(\w+_loop_\d+)\(", text)
    assert loops and not re.findall(r"llvm\.func @\w+_loop_\d+\(", plain)
    assert all(text.count(f"llvm.call @{name}(") == 4 for name in loops)
    # the parallel bodies of the four layers: shared, not one per layer
    bodies = re.findall(r"llvm\.func internal @\w+_parallel_\d+\(", text)
    assert bodies and 2 * len(bodies) <= len(
        re.findall(r"llvm\.func internal @\w+_parallel_\d+\(", plain))
    got = outlined.compile()(x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(got, inline.compile()(x))


def test_pack_weights_lays_out_a_transposed_weight_in_blocks():
    """x @ transpose(W) with W a constant [N, K] and too many rows of x to
    pack: dl-pack-weights computes the transposed constant, in 64 x 64
    blocks; sizes that are no multiple of the block (the edges) give
    exactly numpy's transpose."""
    from dlc.mlir import ir
    from dlc.mlir.passmanager import PassManager
    rng = np.random.default_rng(64)
    w = rng.standard_normal((130, 70)).astype(F32)
    text = f"""
    func.func @f(%x: tensor<300x70xf32>) -> tensor<300x130xf32> {{
      %w = dl.constant dense<{w.tolist()}> : tensor<130x70xf32>
      %t = dl.transpose %w perm = [1, 0] : tensor<130x70xf32> -> tensor<70x130xf32>
      %y = dl.matmul %x, %t : (tensor<300x70xf32>, tensor<70x130xf32>) -> tensor<300x130xf32>
      return %y : tensor<300x130xf32>
    }}"""
    with ir.Context():
        module = ir.Module.parse(text)
        PassManager.parse("builtin.module(func.func(dl-pack-weights))").run(module.operation)
        constants = [op for op in module.body.operations[0].regions[0].blocks[0].operations
                     if op.operation.name == "dl.constant"]
        assert len(constants) == 1 and "dl.transpose" not in str(module)
        laid_out = np.asarray(constants[0].attributes["value"])
    np.testing.assert_array_equal(laid_out, w.T)


def test_a_weight_shared_by_layers_is_packed_once():
    """One layer run three times (as ALBERT shares its layer's weights):
    the importer gives every use its own constant and transpose; CSE before
    dl-simplify folds each transpose once and dl-pack-weights packs each
    weight once, so the graph holds one packed constant per weight, and
    the result agrees with PyTorch. (ALBERT-xxlarge's 72 uses of 6 weights
    cost 22 s of packing and folding before.)"""
    torch = pytest.importorskip("torch")

    class Shared(torch.nn.Module):
        def __init__(self):
            super().__init__()
            # at least two panels of the widest register tile (AVX-512: 48)
            self.square = torch.nn.Linear(96, 96)
            self.wide = torch.nn.Linear(96, 192)
            self.narrow = torch.nn.Linear(192, 96)

        def forward(self, x):
            for _ in range(3):
                x = x + self.narrow(torch.relu(self.wide(self.square(x))))
            return x

    torch.manual_seed(3)
    model = Shared().eval()
    x = torch.randn(2, 5, 96)
    f = dlc.from_torch(model, x)
    text = f.lower(x.numpy()).as_text("graph")
    packed = re.findall(r"dl\.constant dense<.*> : (tensor<\d+x\d+x\d+xf32>)", text)
    products = re.findall(r"dl\.matmul .*tensor<\d+x\d+x\d+xf32>\) ->", text)
    assert len(products) == 9, text
    assert sorted(packed) == sorted(set(packed)) and len(packed) == 3, packed
    with torch.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(f(x.numpy()), want, rtol=1e-4, atol=1e-4)


CONV_PACKED = re.compile(r"dl\.matmul .*: \(tensor<1x(\d+)x(\d+)xf32>, tensor<(\d+)x\2x(\d+)xf32>\)")


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("case", [
    # (N, C, H, W, F, KH, KW, stride, padding, dilation, bias)
    (1, 16, 7, 7, 200, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), True),    # 49 rows, padded
    (1, 24, 9, 9, 130, 3, 3, (2, 2), (1, 1, 1, 1), (1, 1), False),   # strided
    (1, 8, 14, 14, 150, 1, 1, (1, 1), (0, 0, 0, 0), (1, 1), True),   # 1x1: 196 rows
    (1, 8, 14, 14, 150, 1, 1, (2, 2), (0, 0, 0, 0), (1, 1), True),   # 1x1 downsample
    (2, 5, 8, 10, 144, 3, 2, (1, 2), (2, 0, 1, 1), (2, 1), True),    # uneven everything
    (4, 6, 8, 8, 128, 5, 5, (1, 1), (2, 2, 2, 2), (1, 1), False),    # 256 rows, 5x5
    (8, 16, 7, 7, 130, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), True),   # 392 rows
    # windows that tile the image (stride = kernel): blocks, one transpose
    (1, 3, 32, 32, 130, 8, 8, (8, 8), (0, 0, 0, 0), (1, 1), True),   # a patch embedding
    (2, 4, 13, 11, 144, 4, 2, (4, 2), (0, 0, 0, 1), (1, 1), False),  # padded, a row left over
    (1, 5, 9, 10, 130, 3, 1, (3, 1), (0, 0, 0, 0), (1, 1), True),    # 3x1
])
def test_pack_weights_convolution_as_packed_im2col_product(case, layout):
    """dl-pack-weights: a convolution with a constant filter and at most 512
    output pixels becomes im2col(x) @ the filter packed in panels (dl.pad,
    strided dl.slice windows, dl.concat), bias after; same values as the
    direct numpy convolution whatever the stride, padding, dilation, kernel
    and channel counts (no whole number of panels for 130, 144, 150)."""
    n, c, h, w, f, kh, kw, stride, padding, dilation, bias = case
    rng = np.random.default_rng(sum(case[:7]))
    filt = (rng.standard_normal((f, c, kh, kw)) / np.sqrt(c * kh * kw)).astype(F32)
    b = rng.standard_normal(f).astype(F32) if bias else None
    x = rng.standard_normal((n, c, h, w)).astype(F32)
    expected = reference_conv2d(x, filt, b, stride=stride, padding=padding, dilation=dilation)
    if layout == "NHWC":
        x, filt = x.transpose(0, 2, 3, 1).copy(), filt.transpose(2, 3, 1, 0).copy()
        expected = expected.transpose(0, 2, 3, 1)
    fn = dlc.jit(lambda a: dlc.relu(dlc.conv2d(a, filt, b, stride=stride, padding=padding,
                                               dilation=dilation, layout=layout)))
    lowered = fn.lower(x)
    graph = lowered.as_text("graph")
    rows, k, panels, width = map(int, CONV_PACKED.search(graph).groups())
    assert rows == expected.size // f and k == kh * kw * c and "dl.conv2d" not in graph
    assert panels * width >= f > (panels - 1) * width
    if stride == (kh, kw) and kh * kw > 1 and dilation == (1, 1):
        assert "dl.concat" not in graph and "dl.transpose" in graph
    close(lowered.compile()(x), np.maximum(expected, 0), rtol=1e-4)
    unpacked = dlc.jit(lambda a: dlc.relu(dlc.conv2d(a, filt, b, stride=stride, padding=padding,
                                                     dilation=dilation, layout=layout)),
                       disable="dl-pack-weights").lower(x)
    assert "dl.conv2d" in unpacked.as_text("graph")


def test_pack_weights_leaves_large_and_grouped_convolutions_alone():
    """Over 512 output pixels, or grouped: the convolution stays one."""
    rng = np.random.default_rng(17)
    large = rng.standard_normal((128, 8, 3, 3)).astype(F32)
    grouped = rng.standard_normal((128, 4, 3, 3)).astype(F32)
    x = rng.standard_normal((1, 8, 24, 24)).astype(F32)
    for filt, groups in ((large, 1), (grouped, 2)):
        fn = dlc.jit(lambda a: dlc.conv2d(a, filt, padding=1, groups=groups))
        graph = fn.lower(x).as_text("graph")
        assert "dl.conv2d" in graph and not CONV_PACKED.search(graph)
        close(fn(x), reference_conv2d(x, filt, padding=(1, 1, 1, 1), groups=groups),
              rtol=1e-4)


# -- dl-winograd ------------------------------------------------------------------

WINOGRAD_PRODUCT = re.compile(r"dl\.matmul [^\n]*: \(tensor<16x(\d+)x(\d+)xf32>, "
                              r"tensor<16x(\d+)x(\d+)xf32>\)")


@pytest.mark.parametrize("case", [
    # (N, C, H, W, F, padding, bias, layout)
    (1, 64, 28, 28, 64, (1, 1, 1, 1), True, "NCHW"),     # 14 x 14 tiles
    (2, 64, 13, 9, 96, (1, 1, 1, 1), False, "NHWC"),     # odd: 7 x 5 tiles, sliced back
    (1, 72, 16, 15, 64, (0, 2, 1, 0), True, "NHWC"),     # uneven padding: 16 x 13 out
    (3, 64, 11, 12, 80, (0, 0, 0, 0), True, "NCHW"),     # no padding: 9 x 10 out
])
def test_winograd_convolutions_match_the_direct_sum(case):
    """dl-winograd: a 3x3 convolution of stride 1 with 64 or more channels
    and 32 or more 2x2 output tiles becomes F(2x2, 3x3): one product of the
    16 transformed views [16, tiles, C] @ [16, C, F], no dl.conv2d left;
    the same values as the direct float64 sum (odd sizes, uneven padding,
    batches, with and without bias), as close as the untransformed
    convolution is."""
    n, c, h, w, f, padding, bias, layout = case
    rng = np.random.default_rng(sum(case[:5]))
    filt = (rng.standard_normal((f, c, 3, 3)) / np.sqrt(c * 9)).astype(F32)
    b = rng.standard_normal(f).astype(F32) if bias else None
    x = rng.standard_normal((n, c, h, w)).astype(F32)
    expected = reference_conv2d(x, filt, b, padding=padding)
    if layout == "NHWC":
        x, filt = x.transpose(0, 2, 3, 1).copy(), filt.transpose(2, 3, 1, 0).copy()
        expected = expected.transpose(0, 2, 3, 1)
    oh, ow = h + padding[0] + padding[1] - 2, w + padding[2] + padding[3] - 2

    def conv(a):
        return dlc.relu(dlc.conv2d(a, filt, b, padding=padding, layout=layout))

    lowered = dlc.jit(conv).lower(x)
    graph = lowered.as_text("graph")
    assert "dl.conv2d" not in graph
    tiles, channels, channels_again, features = map(int, WINOGRAD_PRODUCT.search(graph).groups())
    assert (tiles, channels, channels_again, features) == (
        n * -(-oh // 2) * -(-ow // 2), c, c, f)
    close(lowered.compile()(x), np.maximum(expected, 0), rtol=1e-5)
    untransformed = dlc.jit(conv, disable="dl-winograd")
    assert not WINOGRAD_PRODUCT.search(untransformed.lower(x).as_text("graph"))
    close(untransformed(x), np.maximum(expected, 0), rtol=1e-5)


def test_winograd_in_a_torch_residual_block():
    """A residual block from PyTorch (conv, batch norm with trained-looking
    statistics, ReLU, conv, batch norm, + x, ReLU) at ResNet-50's 14x14
    stage: both 3x3 convolutions transformed, the block as close to
    PyTorch's as without the transform."""
    torch = pytest.importorskip("torch")

    class Block(torch.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = torch.nn.BatchNorm2d(c)
            self.conv2 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = torch.nn.BatchNorm2d(c)

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(self.bn2(self.conv2(y)) + x)

    torch.manual_seed(3)
    block = Block(128).eval()
    with torch.no_grad():
        for bn in (block.bn1, block.bn2):
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.2, 0.2)
            bn.running_mean.uniform_(-0.1, 0.1)
            bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(1, 128, 14, 14)
    with torch.no_grad():
        expected = block(x).double().numpy()
    model = dlc.from_torch(block, x)
    graph = model.lower(x.numpy()).as_text("graph")
    assert "dl.conv2d" not in graph and len(WINOGRAD_PRODUCT.findall(graph)) == 2
    close(model(x.numpy()), expected, rtol=1e-5)


def test_winograd_thresholds_are_options():
    """winograd_min_tiles / winograd_min_channels (dlc.CPUOptions, or
    dlc.jit shortcuts): a 16-channel convolution of 4 tiles stays a
    convolution by default and is transformed with both at 1, with the same
    values; 0 is refused before compiling."""
    rng = np.random.default_rng(11)
    filt = rng.standard_normal((16, 16, 3, 3)).astype(F32)
    x = rng.standard_normal((1, 16, 4, 3)).astype(F32)
    expected = reference_conv2d(x, filt, padding=(1, 1, 1, 1))

    def conv(a):
        return dlc.conv2d(a, filt, padding=1)

    assert not WINOGRAD_PRODUCT.search(dlc.jit(conv).lower(x).as_text("graph"))
    small = dlc.jit(conv, winograd_min_tiles=1, winograd_min_channels=1)
    assert WINOGRAD_PRODUCT.search(small.lower(x).as_text("graph")).groups() == (
        "4", "16", "16", "16")
    close(small(x), expected, rtol=1e-5)
    for name in ("winograd_min_tiles", "winograd_min_channels"):
        with pytest.raises(ValueError, match=name):
            dlc.jit(conv, **{name: 0})


@pytest.mark.parametrize("key, conversions", [
    ("timm/densenet121", 2), ("timm/ghostnet_050", 9), ("timm/inception_v3", 2),
    ("timm/repvgg_a0", 11)])
def test_layout_runs_concatenations_in_nhwc(key, conversions):
    """dl-layout moves conversions through concatenations and batch norms:
    timm's DenseNet (each layer concatenates all earlier outputs and
    normalizes the concatenation), GhostNet (each block concatenates its
    primary and cheap convolutions), Inception (branches concatenated) and
    RepVGG (a batch norm as the identity branch) keep at most `conversions`
    (before: 24, 104, 57 and 39 in these small configurations; DenseNet-121
    at full size 124 -> 2), and match eager float32."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("timm")
    from dlc.zoo import catalog
    module, args = catalog.find(key).build()
    with torch.no_grad():
        expected = module(*args)
        f = dlc.from_torch(module, *args)
    arrays = [a.numpy() for a in args]
    graph = f.lower(*arrays).as_text("graph")
    assert int(re.search(r"dl\.layout_conversions = (\d+)", graph).group(1)) <= conversions
    if "repvgg" not in key:
        assert re.search(r"dl\.concat .* axis = 3 ", graph)
    close(f(*arrays), expected.numpy(), rtol=1e-4)
