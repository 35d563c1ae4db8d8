"""dl-fuse-attention (issue 32): attention computed by blocks of query rows
in one tile loop gives PyTorch's answers, for the shapes and masks the
libraries use, and refuses what is not attention."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import dlc
from dlc import ops

RTOL, ATOL = 1e-4, 1e-5


def _attention(q, k, v, mask=None, scale=1.0):
    s = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2)))
    s = ops.multiply(s, scale)
    if mask is not None:
        s = ops.add(s, mask)
    return ops.matmul(ops.softmax(s, axis=-1), v)


def _inputs(batch, heads, queries, keys, width, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((batch, heads, queries, width)).astype(np.float32)
    k = rng.standard_normal((batch, heads, keys, width)).astype(np.float32)
    v = rng.standard_normal((batch, heads, keys, width)).astype(np.float32)
    return q, k, v


def _fused(fn, *args):
    """The linalg stage of `fn` at `args` has the tile loop."""
    return "scf.forall" in fn.lower(*args).as_text("linalg")


@pytest.mark.parametrize("batch,heads,queries,keys,width", [
    (1, 8, 197, 197, 64),    # ViT-S: a prime number of tokens
    (2, 3, 100, 100, 16),    # blocks and a remainder block per head
    (1, 2, 7, 300, 8),       # fewer queries than one block
    (1, 1, 61, 129, 32),     # one head: blocks along the rows only
])
def test_attention_matches_torch(batch, heads, queries, keys, width):
    q, k, v = _inputs(batch, heads, queries, keys, width, seed=queries)
    fn = dlc.jit(lambda q, k, v: _attention(q, k, v, scale=width ** -0.5))
    assert _fused(fn, q, k, v)
    expected = F.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v)).numpy()
    np.testing.assert_allclose(fn(q, k, v), expected, rtol=RTOL, atol=ATOL)


def test_the_scale_is_the_scores_epilogue():
    # Inside a tile, batch and head are loops of one iteration: the scaling
    # nest keeps the scores product's loop order (dl-affine-interchange
    # leaves such loops where they are) and runs in its register tiles,
    # one pass over the block fewer.
    q, k, v = _inputs(1, 2, 1500, 1500, 64, seed=5)
    fn = dlc.jit(lambda q, k, v: _attention(q, k, v, scale=0.125))
    lowered = fn.lower(q, k, v)
    assert _fused(fn, q, k, v)
    assert lowered.fused_epilogues() >= 1
    assert "fused_epilogue = [\"arith.mulf\"]" in lowered.as_text("affine")
    # The softmax multiplies by the reciprocal of each row's sum: no vector
    # division over the 1500 keys.
    vector = lowered.as_text("vector")
    assert "arith.divf" in vector
    assert not any("arith.divf" in line and "vector<" in line
                   for line in vector.splitlines())
    expected = F.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v)).numpy()
    np.testing.assert_allclose(fn(q, k, v), expected, rtol=RTOL, atol=ATOL)


def test_additive_and_causal_masks_match_torch():
    # BERT's padding mask and GPT-2's causal one, added to the scores
    # (-inf-like minimum where masked), as the libraries' eager paths do.
    q, k, v = _inputs(2, 4, 77, 77, 32, seed=3)
    causal = np.triu(np.ones((77, 77), bool), 1)[None, None]
    padding = np.zeros((2, 1, 1, 77), bool)
    padding[1, ..., 60:] = True
    mask = np.where(causal | padding, np.finfo(np.float32).min,
                    0).astype(np.float32)
    fn = dlc.jit(lambda q, k, v, m: _attention(q, k, v, m, scale=32 ** -0.5))
    assert _fused(fn, q, k, v, mask)
    expected = F.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v),
        attn_mask=torch.from_numpy(mask)).numpy()
    np.testing.assert_allclose(fn(q, k, v, mask), expected, rtol=RTOL, atol=ATOL)


def test_torch_sdpa_module_is_fused_and_matches():
    class Attention(torch.nn.Module):
        def forward(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    q, k, v = (torch.from_numpy(a) for a in _inputs(1, 4, 50, 50, 16, seed=5))
    model = dlc.from_torch(Attention().eval(), q, k, v)
    expected = Attention()(q, k, v).numpy()
    np.testing.assert_allclose(np.asarray(model(q, k, v)), expected,
                               rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("queries", [3, 50])
def test_reversed_inputs_are_not_fused_and_match(queries):
    """Attention over flipped queries, keys and values (a map that
    multiplies a loop by -1): upstream's tiling asserted on it (the importer
    fuzzer, seed 728002, program 113); the flip now runs before the tiles."""
    class Flipped(torch.nn.Module):
        def forward(self, x):
            y = x.flip(2)
            return F.scaled_dot_product_attention(y, y, y, is_causal=True)

    x = torch.from_numpy(_inputs(3, 6, queries, queries, 4, seed=113)[0])
    model = dlc.from_torch(Flipped().eval(), x)
    np.testing.assert_allclose(np.asarray(model(x)), Flipped()(x).numpy(),
                               rtol=RTOL, atol=ATOL)


def test_a_layer_with_weights_is_not_tiled():
    # relu(x W1) W2: two GEMMs, but weights and no softmax: not attention.
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((32, 64)).astype(np.float32)
    w2 = rng.standard_normal((64, 16)).astype(np.float32)
    fn = dlc.jit(lambda x: ops.matmul(ops.relu(ops.matmul(x, w1)), w2))
    x = rng.standard_normal((128, 32)).astype(np.float32)
    assert not _fused(fn, x)
    np.testing.assert_allclose(fn(x), np.maximum(x @ w1, 0) @ w2,
                               rtol=RTOL, atol=1e-4)


def test_the_option_turns_it_off():
    q, k, v = _inputs(1, 2, 40, 40, 8, seed=1)
    fn = dlc.jit(lambda q, k, v: _attention(q, k, v),
                 disable={"dl-fuse-attention"})
    assert not _fused(fn, q, k, v)
    expected = F.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v),
        scale=1.0).numpy()
    np.testing.assert_allclose(fn(q, k, v), expected, rtol=RTOL, atol=ATOL)
