"""Numerics of the optimized CPU code generation at sizes that cross its
boundaries: register tiles (8 rows x 32 columns at 512 bits), cache blocks
(hundreds of columns and reduction steps, from the host's cache sizes or the
fixed sizes below), packing (plain and transposed), remainder nests,
vectorization tails and parallel chunks, each at 1 and 3 threads. Every
result is compared with a float64 numpy reference; float32 tolerance is
scaled with the reduction length (sums reassociate)."""

import numpy as np
import pytest

import dlc
from references import conv2d as conv2d_reference

F32 = np.float32


def jit(fn, **options):
    """dlc.jit with every parallel loop on threads, however little work it
    has (the default keeps nests under 2**13 operations sequential), so that
    the small shapes here exercise the parallel chunks too."""
    return dlc.jit(fn, parallel_min_work=0, **options)


@pytest.fixture(params=[1, 3], ids=["1thread", "3threads"])
def threads(request):
    saved = dlc.get_num_threads()
    dlc.set_num_threads(request.param)
    yield request.param
    dlc.set_num_threads(saved)


def close(actual, expected, reduction):
    tolerance = 2e-6 * np.sqrt(reduction) + 1e-5
    np.testing.assert_allclose(actual.astype(np.float64), expected,
                               rtol=tolerance, atol=tolerance * np.abs(expected).max())


# M, K, N: below/at/above one tile, one column block (256 here on any
# machine: the block is min(sqrt(L2/32), L1-bound) rounded to the tile), one
# reduction block, with remainders everywhere.
MATMUL_SHAPES = [
    (1, 1, 1), (3, 5, 7), (8, 16, 32), (9, 17, 33), (7, 300, 40),
    (64, 784, 128), (33, 257, 513), (130, 520, 300), (257, 129, 1030),
    # Rows whose partial sums pass half of L2: column blocks narrowed to take
    # the whole reduction, the tiles starting from the fill.
    (1030, 1100, 200),
]


@pytest.mark.parametrize("m,k,n", MATMUL_SHAPES)
def test_matmul_across_blocks(m, k, n, threads):
    rng = np.random.default_rng(m * 1000 + k + n)
    a = rng.standard_normal((m, k), dtype=F32)
    b = rng.standard_normal((k, n), dtype=F32)
    f = jit(lambda a, b: a @ b)
    close(f(a, b), a.astype(np.float64) @ b, k)


def test_matmul_epilogue_with_whole_reduction_blocks(threads):
    # The narrowed column blocks (see MATMUL_SHAPES) with a bias and an
    # activation computed on the tiles.
    rng = np.random.default_rng(7)
    a = rng.standard_normal((1030, 1100), dtype=F32)
    b = rng.standard_normal((1100, 200), dtype=F32) * F32(0.03)
    bias = rng.standard_normal(200, dtype=F32)
    f = jit(lambda a: dlc.tanh(a @ b + bias))
    expected = np.tanh(a.astype(np.float64) @ b + bias)
    close(f(a), expected, 1100)


@pytest.mark.parametrize("batch,m,k,n", [(3, 17, 300, 70), (2, 9, 1030, 260)])
def test_batched_matmul_across_blocks(batch, m, k, n, threads):
    rng = np.random.default_rng(batch + m + k + n)
    a = rng.standard_normal((batch, m, k), dtype=F32)
    b = rng.standard_normal((batch, k, n), dtype=F32)
    close(jit(lambda a, b: a @ b)(a, b), a.astype(np.float64) @ b, k)


@pytest.mark.parametrize("m,k,n", [(40, 600, 300), (9, 1100, 520), (300, 64, 96)])
def test_matmul_with_transposed_operand(m, k, n, threads):
    """B read transposed (x @ w.T, as `linear` and im2col convolutions do) is
    packed by the micro-kernel; A transposed is broadcast row by row."""
    rng = np.random.default_rng(m + k + n)
    x = rng.standard_normal((m, k), dtype=F32)
    w = rng.standard_normal((n, k), dtype=F32)
    xt = np.ascontiguousarray(x.T)
    close(jit(lambda x, w: x @ w.T)(x, w), x.astype(np.float64) @ w.T, k)
    close(jit(lambda xt, w: xt.T @ w.T)(xt, w), x.astype(np.float64) @ w.T, k)
    close(jit(lambda x, w: dlc.linear(x, w))(x, w), x.astype(np.float64) @ w.T, k)


@pytest.mark.parametrize("m,k,n,column_block,reduction_block", [
    (50, 300, 300, 64, 32), (17, 129, 97, 32, 16)])
def test_matmul_blocks_fixed_by_options(m, k, n, column_block, reduction_block):
    """The cache blocks and packing at explicit block sizes, through dl-opt's
    pass options, run by the ExecutionEngine."""
    from dlc import compiler
    from dlc.mlir.passmanager import PassManager
    from dlc.runtime import CompiledFunction

    rng = np.random.default_rng(k)
    a = rng.standard_normal((m, k), dtype=F32)
    b = rng.standard_normal((k, n), dtype=F32)
    lowered = jit(lambda a, b: a @ b).lower(a, b)
    module = compiler.clone(lowered._module_at("bufferized"))
    with module.context:
        PassManager.parse(
            "builtin.module(func.func(convert-linalg-to-affine-loops,"
            "dl-affine-interchange,dl-affine-register-tile{"
            f"column-block={column_block} reduction-block={reduction_block}}}))"
        ).run(module.operation)
        assert "alignment = 64" in str(module)  # the packing buffer
        PassManager.parse("builtin.module(dl-cpu-pipeline{from=affine to=llvm})").run(
            module.operation)
    function = CompiledFunction(module, lowered.symbol, lowered.result_specs)
    close(function([a, b])[0], a.astype(np.float64) @ b, k)


CONV_CASES = [
    # n, c, h, w, f, k, stride, padding, dilation, layout
    (1, 3, 23, 23, 64, 7, 2, 3, 1, "NCHW"),    # the ResNet stem, small
    (2, 64, 9, 9, 64, 3, 1, 1, 1, "NCHW"),     # K = 576 > one reduction block
    (1, 40, 7, 7, 300, 3, 1, 1, 1, "NCHW"),    # F > one column block
    (3, 5, 11, 13, 9, 3, 2, 0, 2, "NCHW"),     # strided, dilated, odd sizes
    (1, 32, 6, 6, 270, 1, 1, 0, 1, "NCHW"),    # 1x1
    (2, 30, 9, 9, 70, 3, 1, 1, 1, "NHWC"),
    (1, 64, 5, 5, 260, 3, 2, 1, 1, "NHWC"),
]


@pytest.mark.parametrize("n,c,h,w,f,k,stride,padding,dilation,layout", CONV_CASES)
def test_conv2d_im2col_across_blocks(n, c, h, w, f, k, stride, padding, dilation, layout,
                                     threads):
    rng = np.random.default_rng(c * f + h)
    x = rng.standard_normal((n, c, h, w), dtype=F32)
    weights = rng.standard_normal((f, c, k, k), dtype=F32)
    bias = rng.standard_normal(f, dtype=F32)
    expected = conv2d_reference(x, weights, bias, (stride, stride), (padding,) * 4,
                                (dilation, dilation))
    if layout == "NHWC":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
        weights = np.ascontiguousarray(weights.transpose(2, 3, 1, 0))
        expected = expected.transpose(0, 2, 3, 1)
    fn = jit(lambda x, w, b: dlc.conv2d(x, w, b, stride=stride, padding=padding,
                                            dilation=dilation, layout=layout))
    assert "alignment = 64" in fn.lower(x, weights, bias).as_text("affine") or layout == "NHWC"
    close(fn(x, weights, bias), expected, c * k * k)


@pytest.mark.parametrize("stride", [1, 2])
def test_epilogue_into_the_interior_of_a_padded_buffer(stride, threads):
    # 1x1 convolution + bias + hard-swish feeding a padded depthwise
    # convolution (MobileNet's inverted residual): the activation is the 1x1's
    # epilogue, stored straight into the interior of the depthwise input's
    # padded buffer (its zero border written first); odd sizes leave
    # remainder rows and columns to the scalar nests, which store there too.
    rng = np.random.default_rng(stride)
    n, c, h, f = 2, 20, 11, 36
    x = rng.standard_normal((n, h, h, c), dtype=F32)
    w1 = rng.standard_normal((1, 1, c, f), dtype=F32) / 4
    b1 = rng.standard_normal(f, dtype=F32)
    w2 = rng.standard_normal((3, 3, 1, f), dtype=F32)
    b2 = rng.standard_normal(f, dtype=F32)

    def block(x, w1, b1, w2, b2):
        y = dlc.hardswish(dlc.conv2d(x, w1, b1, layout="NHWC"))
        return dlc.conv2d(y, w2, b2, stride=stride, padding=1, groups=f, layout="NHWC")

    fn = jit(block)
    lowered = fn.lower(x, w1, b1, w2, b2)
    # Both convolutions' epilogues: the hard-swish into the padded interior
    # (left a nest of its own before: the border fills stood between).
    assert lowered.fused_epilogues() == 2, lowered.as_text("fused")
    y = np.einsum("nhwc,cf->nhwf", x.astype(np.float64), w1[0, 0]) + b1
    y = y * np.clip(y + 3, 0, 6) / 6
    nchw = conv2d_reference(y.transpose(0, 3, 1, 2), w2.transpose(3, 2, 0, 1), b2,
                            (stride, stride), (1, 1, 1, 1), (1, 1), groups=f)
    close(fn(x, w1, b1, w2, b2), nchw.transpose(0, 2, 3, 1), 9 * c)


@pytest.mark.parametrize("h,stride,step", [(7, 1, 19), (14, 2, 10)])
def test_grouped_convolution_tiles_split_evenly_over_the_threads(h, stride, step, threads):
    # RegNetY-1.6GF's last stage at batch 8: 888 channels in 37 groups of 24.
    # dl-affine-tile's power-of-two tiles of the groups (32 and 16) split 37
    # as 32 + 5 over 2 threads; balanced, the parallel loop's step is 19
    # (19 + 18) and 10 (20 + 17). Compiled for a Zen 3 of 2 threads (its
    # caches are what the sizes come from, its vector width what the tiles
    # inside are), run on 1 and 3 where this host can run its code.
    target = dlc.Target("znver3", threads=2)
    rng = np.random.default_rng(h)
    n, c, groups = 8, 888, 37
    x = rng.standard_normal((n, h, h, c), dtype=F32)
    w = rng.standard_normal((3, 3, c // groups, c), dtype=F32) / 8
    b = rng.standard_normal(c, dtype=F32)
    fn = jit(lambda x, w, b: dlc.relu(dlc.conv2d(x, w, b, stride=stride, padding=1,
                                                   groups=groups, layout="NHWC")),
             target=target)
    vector = fn.lower(x, w, b).as_text("vector")
    assert f"to (37) step ({step})" in vector, vector
    if not {f for f in target.isa_features if f.startswith(("avx", "sse", "ssse", "fma"))} \
            <= dlc.Target.host().isa_features:
        pytest.skip("this host cannot run code for znver3 (checked the IR only)")
    expected = conv2d_reference(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), b,
                                (stride, stride), (1, 1, 1, 1), (1, 1), groups=groups)
    close(fn(x, w, b), np.maximum(expected, 0).transpose(0, 2, 3, 1), 9 * c // groups)


@pytest.mark.parametrize("n,h,c,groups,stride,prefetched", [
    (2, 15, 96, 4, 2, True),     # groups of 24 floats: 96-byte runs, odd rows
    (3, 9, 64, 4, 1, True),      # groups of 16: 64-byte runs, stride 1
    (1, 10, 128, 2, 2, False),   # groups of 64: 256-byte runs, a stream
    (2, 9, 32, 1, 2, False),     # one group: kw x channels is one run
])
def test_grouped_convolution_prefetches_the_next_rows(n, h, c, groups, stride, prefetched,
                                                      threads):
    # A grouped NHWC convolution reads a short run of its group's channels
    # at every pixel of the window: the micro-kernel fetches the runs of the
    # next output row ahead (affine.prefetch), up to the last row only.
    rng = np.random.default_rng(h * c)
    x = rng.standard_normal((n, h, h, c), dtype=F32)
    w = rng.standard_normal((3, 3, c // groups, c), dtype=F32) / 8
    b = rng.standard_normal(c, dtype=F32)
    fn = jit(lambda x, w, b: dlc.relu(dlc.conv2d(x, w, b, stride=stride, padding=1,
                                                   groups=groups, layout="NHWC")))
    affine = fn.lower(x, w, b).as_text("affine")
    assert ("affine.prefetch" in affine) == prefetched, affine
    expected = conv2d_reference(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), b,
                                (stride, stride), (1, 1, 1, 1), (1, 1), groups=groups)
    close(fn(x, w, b), np.maximum(expected, 0).transpose(0, 2, 3, 1), 9 * c // groups)


@pytest.mark.parametrize("n,h,cin,cout,groups,stride,cpu,merged", [
    (1, 12, 32, 32, 8, 1, "znver3", True),    # ResNeXt's 4 per group, 8 lanes
    (2, 11, 64, 64, 16, 2, "znver3", True),   # strided, odd size, batch 2
    (1, 9, 48, 24, 6, 1, "znver3", True),     # 8 inputs, 4 outputs per group
    (2, 8, 64, 64, 8, 1, "znver4", True),     # 8 per group on 16 lanes
    (1, 10, 32, 32, 8, 1, "znver4", False),   # a quarter of a vector: kept
    (1, 10, 24, 24, 3, 1, "znver3", False),   # 8 per group: whole vectors
])
def test_grouped_convolution_of_half_vector_groups_merges_pairs(n, h, cin, cout, groups, stride,
                                                               cpu, merged, threads):
    # Groups of half a vector of output channels with a constant filter run
    # in pairs (dl-pack-weights: the filter block-diagonal): the graph has
    # half the groups, the results are the grouped convolution's.
    target = dlc.Target(cpu, threads=2)
    rng = np.random.default_rng(cin * h + groups)
    x = rng.standard_normal((n, h, h, cin), dtype=F32)
    w = rng.standard_normal((3, 3, cin // groups, cout), dtype=F32) / 8
    b = rng.standard_normal(cout, dtype=F32)
    fn = jit(lambda x: dlc.relu(dlc.conv2d(x, w, b, stride=stride, padding=1, groups=groups,
                                           layout="NHWC")), target=target)
    graph = fn.lower(x).as_text("graph")
    if merged:
        assert f"groups = {groups // 2} " in graph and f"groups = {groups} " not in graph, graph
    else:
        assert f"groups = {groups} " in graph, graph
    if not {f for f in target.isa_features if f.startswith(("avx", "sse", "ssse", "fma"))} \
            <= dlc.Target.host().isa_features:
        pytest.skip(f"this host cannot run code for {cpu} (checked the graph only)")
    expected = conv2d_reference(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), b,
                                (stride, stride), (1, 1, 1, 1), (1, 1), groups=groups)
    close(fn(x), np.maximum(expected, 0).transpose(0, 2, 3, 1), 9 * cin // groups)


def _l2_bytes():
    """This machine's L2 per core (as dl-layout reads it), or None."""
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index2/size") as f:
            text = f.read().strip()
    except OSError:
        return None
    scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
    return int(text.rstrip("KM")) * scale


LARGE_FILTER_CASES = [
    # n, c, h, w, f, k, stride, padding: filters over half of L2 (1 MiB
    # here) stay NCHW, their OIHW filter packed by transposing squares
    (1, 256, 7, 7, 256, 3, 1, 1),     # K = 2304, F = 256: whole squares
    (3, 150, 6, 5, 300, 3, 2, 1),     # K = 1350, F = 300: scalar edges, remainder columns
    (1, 129, 9, 9, 520, 3, 1, 0),     # odd K = 1161
    (2, 1030, 4, 4, 300, 1, 1, 0),    # 1x1, K = 1030
]


@pytest.mark.parametrize("n,c,h,w,f,k,stride,padding", LARGE_FILTER_CASES)
def test_conv2d_large_filters_stay_nchw(n, c, h, w, f, k, stride, padding, threads):
    rng = np.random.default_rng(c + f)
    x = rng.standard_normal((n, c, h, w), dtype=F32)
    weights = (rng.standard_normal((f, c, k, k)) / np.sqrt(c * k * k)).astype(F32)
    bias = rng.standard_normal(f, dtype=F32)
    assert weights.nbytes > 1 << 20
    expected = np.maximum(conv2d_reference(x, weights, bias, (stride, stride),
                                           (padding,) * 4), 0)
    fn = jit(lambda x, w, b: dlc.relu(dlc.conv2d(x, w, b, stride=stride,
                                                 padding=padding)))
    lowered = fn.lower(x, weights, bias)
    l2 = _l2_bytes()
    if l2 and l2 // 2 < weights.nbytes:
        assert 'layout = "NCHW"' in lowered.as_text("graph")
    close(fn(x, weights, bias), expected, c * k * k)


def test_conv2d_large_filter_dynamic_batch(threads):
    rng = np.random.default_rng(5)
    weights = (rng.standard_normal((272, 160, 3, 3)) / 40).astype(F32)
    fn = jit(lambda x, w: dlc.conv2d(x, w, padding=1), dynamic_batch=("x",))
    for batch in (1, 3):
        x = rng.standard_normal((batch, 160, 5, 7), dtype=F32)
        close(fn(x, weights), conv2d_reference(x, weights, padding=(1, 1, 1, 1)), 160 * 9)
    assert fn.cache_size() == 1


def test_conv2d_im2col_dynamic_batch(threads):
    rng = np.random.default_rng(3)
    weights = rng.standard_normal((96, 48, 3, 3), dtype=F32)
    fn = jit(lambda x, w: dlc.relu(dlc.conv2d(x, w, padding=1)), dynamic_batch=("x",))
    for batch in (1, 2, 5):
        x = rng.standard_normal((batch, 48, 10, 10), dtype=F32)
        expected = np.maximum(conv2d_reference(x, weights, padding=(1, 1, 1, 1)), 0)
        close(fn(x, weights), expected, 48 * 9)
    assert fn.cache_size() == 1


@pytest.mark.parametrize("shape", [(7,), (64,), (1000,), (3, 1001), (129, 257), (2, 3, 67, 45)])
def test_elementwise_and_reductions_across_vector_tails(shape, threads):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape, dtype=F32)
    y = rng.standard_normal(shape, dtype=F32)
    f = jit(lambda x, y: (dlc.tanh(x) * y + 1.0, dlc.sum(x * y, axis=-1),
                              dlc.softmax(x, axis=-1)))
    s, r, p = f(x, y)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    close(s, np.tanh(x64) * y64 + 1, 1)
    close(r, (x64 * y64).sum(axis=-1), shape[-1])
    e = np.exp(x64 - x64.max(axis=-1, keepdims=True))
    close(p, e / e.sum(axis=-1, keepdims=True), shape[-1])


def test_erf_approximation_error():
    """f32 erf is one rational function (dl-math-approximation's, not
    upstream's piecewise one): its absolute error over [-6, 6], its edges
    (+-inf to +-1, NaN stays NaN, -0 stays -0, odd), and as GELU in a
    product's fused epilogue, vectors and scalar tails alike."""
    import math
    x = np.linspace(-6, 6, 400_003).astype(F32)
    expected = np.vectorize(math.erf)(x.astype(np.float64))
    got = jit(lambda x: dlc.erf(x))(x)
    assert np.abs(got - expected).max() <= 4e-7
    np.testing.assert_array_equal(got, -got[::-1])
    edges = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 3.832506856900711,
                      -3.832506856900711, 1e30, -1e-30], F32)
    got = jit(lambda x: dlc.erf(x))(edges)
    np.testing.assert_array_equal(got[[0, 1, 5, 6, 7]], [1, -1, 1, -1, 1])
    assert np.isnan(got[2]) and np.signbit(got[3]) and got[4] == 0
    assert abs(got[8] - (-1e-30 * 2 / math.sqrt(math.pi))) < 1e-36
    rng = np.random.default_rng(5)
    a = rng.standard_normal((37, 96), dtype=F32)
    w = (rng.standard_normal((96, 131)) * 0.2).astype(F32)
    h = (a.astype(np.float64) @ w) / math.sqrt(2)
    close(jit(lambda a: dlc.gelu(dlc.matmul(a, w)))(a),
          h * math.sqrt(2) * 0.5 * (1 + np.vectorize(math.erf)(h)), 96)


@pytest.mark.parametrize("shape,axes", [((300, 257), (1, 0)), ((3, 130, 70), (2, 0, 1)),
                                        ((64, 3, 56, 56), (0, 2, 3, 1))])
def test_transpose_across_blocks(shape, axes, threads):
    x = np.random.default_rng(1).standard_normal(shape, dtype=F32)
    np.testing.assert_array_equal(jit(lambda x: dlc.transpose(x, axes) * 1.0)(x),
                                  np.transpose(x, axes))


# Transposes whose input and output are contiguous along different
# dimensions are copied by vector squares (dl-affine-transpose-squares), with
# scalar edges where a dimension is no multiple of the square; a dimension
# under 4 leaves the nest to the scalar code.
SQUARE_CASES = [((64, 32, 10, 10), (0, 2, 3, 1)), ((64, 8, 8, 32), (0, 3, 1, 2)),
                ((17, 100), (1, 0)), ((3, 5, 7, 9), (0, 2, 3, 1)), ((2, 33, 20), (0, 2, 1)),
                ((4, 16, 3, 16), (3, 1, 2, 0)), ((1, 3, 8, 8), (0, 2, 3, 1))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
@pytest.mark.parametrize("shape,axes", SQUARE_CASES)
def test_transpose_by_squares(shape, axes, dtype, threads):
    x = (np.random.default_rng(2).standard_normal(shape) * 100).astype(dtype)
    f = jit(lambda x: dlc.transpose(x, axes))
    np.testing.assert_array_equal(f(x), np.transpose(x, axes))
    squares = "dl.transpose_squares" in f.lower(x).as_text("affine")
    lanes_fit = min(shape[-1], shape[axes[-1]]) >= 4
    assert squares == lanes_fit
    scalar = jit(lambda x: dlc.transpose(x, axes), disable="dl-affine-transpose-squares")
    assert "dl.transpose_squares" not in scalar.lower(x).as_text("affine")
    np.testing.assert_array_equal(scalar(x), np.transpose(x, axes))


# Reductions whose accumulator stays at one address over the reduction loops
# (per-channel statistics over N, H, W; a row's sum; a whole tensor's) carry
# it in registers (dl-affine-promote-accumulators): vectorized where the
# innermost reduced dimension is contiguous, scalar in registers otherwise
# (an argmax).
def test_reductions_with_accumulators_in_registers(threads):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 32, 8, 8), dtype=F32) + 3.0

    def stats(x):
        mean = dlc.mean(x, axis=(0, 2, 3))
        centred = x - dlc.reshape(mean, (1, 32, 1, 1))
        return (mean, dlc.mean(centred * centred, axis=(0, 2, 3)), dlc.sum(x),
                dlc.max(x, axis=(0, 2)), dlc.argmax(dlc.reshape(x, (64, 32, 16, 4)), axis=-1))

    f = jit(stats)
    assert "vector.reduction" in f.lower(x).as_text("vector")
    x64 = x.astype(np.float64)
    mean, var, total, peak, index = f(x)
    close(mean, x64.mean(axis=(0, 2, 3)), 4096)
    close(var, x64.var(axis=(0, 2, 3)), 4096)
    close(total, x64.sum(), x.size)
    np.testing.assert_array_equal(peak, x.max(axis=(0, 2)))
    np.testing.assert_array_equal(index, np.argmax(x.reshape(64, 32, 16, 4), axis=-1))
    # The same in memory, as before the pass.
    g = jit(stats, disable="dl-affine-promote-accumulators")
    assert "vector.reduction" not in g.lower(x).as_text("vector")
    for ours, theirs in zip(f(x), g(x)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)


def test_integer_and_nan_reductions_in_registers():
    x = np.random.default_rng(4).integers(-1000, 1000, (16, 8, 24), dtype=np.int32)
    f = jit(lambda x: (dlc.sum(x, axis=(0, 2)), dlc.max(x, axis=-1), dlc.argmax(x, axis=-1)))
    s, m, a = f(x)
    np.testing.assert_array_equal(s, x.sum(axis=(0, 2)))
    np.testing.assert_array_equal(m, x.max(axis=-1))
    np.testing.assert_array_equal(a, np.argmax(x, axis=-1))
    y = np.random.default_rng(5).standard_normal((8, 32), dtype=F32)
    y[3, 7] = np.nan
    m, a = jit(lambda y: (dlc.max(y, axis=-1), dlc.argmax(y, axis=-1)))(y)
    assert np.isnan(m[3]) and a[3] == 7
    np.testing.assert_array_equal(np.delete(m, 3), np.delete(y.max(axis=-1), 3))


# Elementwise nests over contiguous memory run as one loop
# (dl-affine-collapse): a bias broadcast over the first dimension merges
# the other three ([4, 12, 49, 49]: rows of 49, odd), an in-place scale of a
# dynamic batch merges all but the batch, a row broadcast merges nothing;
# each against numpy, and the same with the pass off.
def test_contiguous_nests_as_one_loop(threads):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 12, 49, 49), dtype=F32)
    bias = rng.standard_normal((1, 12, 49, 49), dtype=F32)
    rows = rng.standard_normal((4, 12, 49, 1), dtype=F32)

    def attention_scores(x, bias, rows):
        return dlc.exp(x + bias - rows), x * 0.5

    f = jit(attention_scores)
    vector = f.lower(x, bias, rows).as_text("vector")
    assert "memref.collapse_shape" in vector
    scores, half = f(x, bias, rows)
    x64 = x.astype(np.float64)
    close(scores, np.exp(x64 + bias - rows), 1)
    close(half, x64 * 0.5, 1)
    g = jit(attention_scores, disable="dl-affine-collapse")
    lowered = g.lower(x, bias, rows)
    assert "memref.collapse_shape" not in lowered.as_text("vector")
    for ours, theirs in zip(f(x, bias, rows), g(x, bias, rows)):
        np.testing.assert_array_equal(ours, theirs)
    # A per-channel scale of an NHWC image (squeeze-excitation): rows and
    # columns merge, the channels stay their own loop.
    image = rng.standard_normal((2, 14, 14, 40), dtype=F32)
    scale = rng.standard_normal((2, 1, 1, 40), dtype=F32)
    se = jit(lambda x, s: x * s)
    assert "memref<2x14x14x40xf32> into memref<2x196x40xf32>" in \
        se.lower(image, scale).as_text("vector")
    close(se(image, scale), image.astype(np.float64) * scale, 1)
    dynamic = jit(lambda x: x * 2.0 + 1.0, dynamic_batch=True)
    assert "memref.collapse_shape" in dynamic.lower(
        np.zeros((2, 7, 97), F32)).as_text("vector")
    for batch in (1, 3):
        y = rng.standard_normal((batch, 7, 97), dtype=F32)
        close(dynamic(y), y.astype(np.float64) * 2.0 + 1.0, 1)
