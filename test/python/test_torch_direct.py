"""torch.export's graph imported as it is (torch_importer._direct), without
``run_decompositions``: which programs take that path, what the in-place
ops mean there, and where the importer falls back to the decomposition.

Each case checks the numerics against eager PyTorch (rtol 1e-4 of the
output's scale, float32) and which path ran: ``run_decompositions`` is
patched to count its calls.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import dlc  # noqa: E402
from dlc.frontends import torch_importer  # noqa: E402


@pytest.fixture
def decompositions(monkeypatch):
    """The number of run_decompositions calls, as a one-element list."""
    calls = [0]
    original = torch.export.ExportedProgram.run_decompositions

    def counted(self, *args, **kwargs):
        calls[0] += 1
        return original(self, *args, **kwargs)
    monkeypatch.setattr(torch.export.ExportedProgram, "run_decompositions", counted)
    return calls


def _check(module, *args):
    module = module.eval()
    with torch.no_grad():
        expected = module(*args)
        got = dlc.from_torch(module, *args)(*[a.numpy() for a in args])
    expected = expected.numpy()
    scale = max(float(np.abs(expected).max()), 1.0)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-4 * scale)


def _exported(module, *args):
    with torch.no_grad():
        return torch.export.export(module.eval(), args)


class _Conv(torch.nn.Module):
    """A module whose forward starts from a convolution's new tensor."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)


class _ReadBeforeWrite(_Conv):
    """b reads a before relu_ overwrites it; the sum reads a after."""

    def forward(self, x):
        a = self.conv(x)
        b = a * 2.0
        a.relu_()
        a.add_(b)
        return a + b


def test_in_place_ops_read_in_program_order(decompositions):
    x = torch.randn(2, 3, 8, 8)
    writes = torch_importer._direct(_exported(_ReadBeforeWrite(), x))
    assert writes is not None and len(writes) == 2
    _check(_ReadBeforeWrite(), x)
    assert decompositions[0] == 0


def test_a_use_by_the_old_name_after_the_write_sees_it():
    """torch.export chains the uses after an in-place op to its result; a
    graph that names the tensor itself after the write (rewired here) still
    reads the written value."""
    module = _ReadBeforeWrite().eval()
    x = torch.randn(2, 3, 8, 8)
    program = _exported(module, x)
    nodes = {n.name: n for n in program.graph.nodes}
    nodes["add"].args = (nodes["conv2d"], nodes["mul"])  # conv2d: the tensor add_ wrote
    program.graph_module.recompile()
    writes = torch_importer._direct(program)
    assert writes["add_"] == ["conv2d", "relu_", "add_"]
    imported = torch_importer._import_program(program, module, (x,), "constants", False, {},
                                              writes)
    with torch.no_grad():
        expected = module(x).numpy()
    np.testing.assert_allclose(imported(x.numpy()), expected, rtol=0, atol=1e-4)


class _WriteThroughView(_Conv):
    def forward(self, x):
        a = self.conv(x)
        a[:, :2].relu_()  # writes a through a view of it
        return a


class _ViewBeforeWrite(_Conv):
    def forward(self, x):
        a = self.conv(x)
        v = a.view(a.shape[0], -1)  # sees the add_ below
        a.add_(1.0)
        return v * 2.0


class _WriteAfterDropout(_Conv):
    """dropout in eval mode returns its input itself: relu_ of its result
    writes the input too."""

    def __init__(self):
        super().__init__()
        self.drop = torch.nn.Dropout(0.1)

    def forward(self, x):
        a = self.conv(x)
        d = self.drop(a)
        d.relu_()
        return a - 1.0


class _ReflectPad(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.pad(x, (1, 2, 2, 1), mode="reflect") * 3.0


@pytest.mark.parametrize("module", [_WriteThroughView, _ViewBeforeWrite, _WriteAfterDropout,
                                    _ReflectPad], ids=lambda m: m.__name__)
def test_what_direct_import_refuses_goes_through_the_decomposition(module, decompositions):
    x = torch.randn(2, 3, 8, 8)
    assert torch_importer._direct(_exported(module(), x)) is None
    _check(module(), x)
    assert decompositions[0] == 1


class _Attention(torch.nn.Module):
    def __init__(self, causal, masked):
        super().__init__()
        self.causal, self.masked = causal, masked
        self.qkv = torch.nn.Linear(32, 96)

    def forward(self, x, mask):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, 4, 8).permute(2, 0, 3, 1, 4).unbind(0)
        y = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=mask if self.masked else None, is_causal=self.causal)
        return y.transpose(1, 2).flatten(2)


@pytest.mark.parametrize("causal,masked", [(False, False), (True, False), (False, True)])
def test_attention_as_torch_decomposes_it(causal, masked, decompositions):
    x = torch.randn(2, 10, 32)
    mask = torch.rand(2, 1, 10, 10) > 0.3
    mask[..., 0] = True  # no row without a key
    _check(_Attention(causal, masked), x, mask)
    assert decompositions[0] == 0


@pytest.mark.parametrize("block", ["resnet", "silu", "hardswish", "layer_norm"])
def test_blocks_of_the_zoo_import_directly(block, decompositions):
    layers = {
        "resnet": lambda: torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),
            torch.nn.ReLU(inplace=True), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
            torch.nn.Dropout(0.2), torch.nn.Linear(8 * 16, 5)),
        "silu": lambda: torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 1), torch.nn.BatchNorm2d(8), torch.nn.SiLU(inplace=True),
            torch.nn.Dropout(0.3, inplace=True), torch.nn.AdaptiveAvgPool2d(1)),
        "hardswish": lambda: torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, groups=1, stride=2), torch.nn.Hardswish(inplace=True),
            torch.nn.Conv2d(8, 8, 3, groups=8)),
        "layer_norm": lambda: torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 4, stride=4), torch.nn.Flatten(2),
            torch.nn.LayerNorm(4), torch.nn.GELU(), torch.nn.Softmax(-1)),
    }
    module = layers[block]()
    for p in module.parameters():  # batch norms with statistics of their own
        p.data = torch.randn_like(p) * 0.5
    x = torch.randn(2, 3, 8, 8)
    _check(module, x)
    assert decompositions[0] == 0


class _Composites(torch.nn.Module):
    """Composite ops of transformers' and timm's code that the training IR
    keeps whole."""

    def __init__(self, norm_ord):
        super().__init__()
        self.norm_ord = norm_ord

    def forward(self, x, y):
        a, b = x.chunk(2, dim=-1)
        c = a.masked_fill(b > 0.5, -1.5) + b.narrow(1, 2, 1).expand_as(b)
        d = torch.logsumexp(c, dim=-1, keepdim=True) + torch.floor_divide(c, 0.75)
        n = torch.linalg.vector_norm(d, ord=self.norm_ord, dim=-1, keepdim=True)
        return d / (n + 1.0) + y.clone().masked_fill_(y < 0, 0.0).sum()


@pytest.mark.parametrize("norm_ord", [2, 1, float("inf"), 3, 0])
def test_composites_of_the_training_ir(norm_ord, decompositions):
    x, y = torch.randn(3, 4, 8), torch.randn(5)
    module = _Composites(norm_ord)
    with torch.no_grad():
        expected = module(x, y.clone()).numpy()
        got = dlc.from_torch(module.eval(), x, y.clone())(x.numpy(), y.numpy())
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert decompositions[0] == 0


class _LogSumExp(torch.nn.Module):
    def forward(self, x):
        return torch.logsumexp(x, dim=1)


def test_logsumexp_of_rows_with_infinities(decompositions):
    x = torch.randn(4, 6)
    x[0] = -float("inf")        # every term zero: -inf, not NaN
    x[1, 2] = -float("inf")
    x[2, 3] = float("inf")      # +inf
    with torch.no_grad():
        expected = _LogSumExp()(x).numpy()
        got = dlc.from_torch(_LogSumExp().eval(), x)(x.numpy())
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert decompositions[0] == 0


class _FlashAttention(torch.nn.Module):
    """The CPU flash-attention op (what some decompositions and user graphs
    hold) converts as scaled_dot_product_attention does."""

    def forward(self, q, k, v, mask):
        op = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
        return op(q, k, v, 0.0, True, scale=0.3)[0] + op(q, k, v, attn_mask=mask)[0]


def test_flash_attention_op():
    q, k, v = (torch.randn(2, 3, 5, 8) for _ in range(3))
    mask = torch.randn(2, 3, 5, 5)
    _check(_FlashAttention(), q, k, v, mask)


class _GhostShortcut(_Conv):
    """GhostNet's block end: the concatenation sliced to its own width
    (torch.export: ``aten.alias``), then the shortcut added in place; `early`
    reads the concatenation before the write."""

    def forward(self, x):
        a = self.conv(x)
        out = torch.cat([a, a * 0.5], dim=1)
        early = out * 3.0
        out = out[:, :out.shape[1]]
        out += x.repeat(1, 8, 1, 1)[:, :8]
        return out - early


class _ViewOfAliasBeforeWrite(_Conv):
    """A view of the alias taken before the in-place add sees the add."""

    def forward(self, x):
        a = self.conv(x)
        out = torch.cat([a, a], dim=1)[:, :8]
        v = out.view(out.shape[0], -1)
        out += 1.0
        return v * 2.0


def test_a_write_through_an_alias_of_a_new_tensor_imports_directly(decompositions):
    x = torch.randn(2, 3, 8, 8)
    program = _exported(_GhostShortcut(), x)
    assert any(n.target == torch.ops.aten.alias.default for n in program.graph.nodes)
    writes = torch_importer._direct(program)
    assert writes is not None and list(writes) == ["add_"]
    assert writes["add_"] == ["cat", "alias", "add_"]
    _check(_GhostShortcut(), x)
    assert decompositions[0] == 0


def test_a_view_of_an_alias_before_its_write_goes_through_the_decomposition(decompositions):
    x = torch.randn(2, 3, 8, 8)
    assert torch_importer._direct(_exported(_ViewOfAliasBeforeWrite(), x)) is None
    _check(_ViewOfAliasBeforeWrite(), x)
    assert decompositions[0] == 1


class _ReshapeAs(torch.nn.Module):
    """LeViT's attention: ``x.reshape_as(y)``, also under a dynamic batch."""

    def forward(self, x, y):
        return (x * 2.0).reshape_as(y) + y


@pytest.mark.parametrize("dynamic", [False, True])
def test_reshape_as_imports_directly(dynamic, decompositions):
    x, y = torch.randn(3, 4, 6), torch.randn(3, 24)
    module = _ReshapeAs().eval()
    with torch.no_grad():
        f = dlc.from_torch(module, x, y, dynamic_batch=dynamic)
        for batch in ([3, 5] if dynamic else [3]):
            xb, yb = torch.randn(batch, 4, 6), torch.randn(batch, 24)
            np.testing.assert_allclose(f(xb.numpy(), yb.numpy()), module(xb, yb).numpy(),
                                       rtol=1e-6)
    assert decompositions[0] == 0


class _Einsum(torch.nn.Module):
    """MaxViT's relative-position logits (``torch.einsum``), T5's
    ``torch.min(a, b)`` (``aten.min.other``) and ConvBERT's
    ``torch.multiply``."""

    def __init__(self):
        super().__init__()
        self.rel = torch.nn.Parameter(torch.randn(4, 6, 8))

    def forward(self, q, k):
        logits = torch.einsum("bhid,bhjd->bhij", q, k) + torch.einsum("bhid,hjd->bhij", q,
                                                                      self.rel)
        return torch.min(logits, torch.max(torch.multiply(logits, 0.5),
                                           torch.full_like(logits, -1.0)))


def test_einsum_and_binary_min_import_directly(decompositions):
    q, k = torch.randn(2, 4, 6, 8), torch.randn(2, 4, 6, 8)
    _check(_Einsum(), q, k)
    assert decompositions[0] == 0


def test_einsum_over_a_dynamic_batch_goes_through_the_decomposition(decompositions):
    q, k = torch.randn(2, 4, 6, 8), torch.randn(2, 4, 6, 8)
    module = _Einsum().eval()
    with torch.no_grad():
        f = dlc.from_torch(module, q, k, dynamic_batch=True)
        for batch in (2, 3):
            qb, kb = torch.randn(batch, 4, 6, 8), torch.randn(batch, 4, 6, 8)
            np.testing.assert_allclose(f(qb.numpy(), kb.numpy()), module(qb, kb).numpy(),
                                       rtol=1e-5, atol=1e-5)
    assert decompositions[0] == 1
