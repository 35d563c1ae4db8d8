"""Unsigned integer dtypes (uint8 ... uint64) through dlc, and the ONNX
integer-inference operators built on them (issue 34, item 1 and part of 5).

Every result is compared exactly with numpy or with onnx's reference
implementation: integer arithmetic has no tolerance.
"""

import numpy as np
import pytest

import dlc
from dlc.errors import DTypeError, ModelImportError

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]


def _values(rng, dtype, shape):
    info = np.iinfo(dtype)
    # The top of the range too: where a signed reading of the bits differs.
    return rng.integers(0, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_unsigned_elementwise_and_compare_match_numpy(dtype):
    rng = np.random.default_rng(34)
    a, b = _values(rng, dtype, (6, 9)), _values(rng, dtype, (9,))
    b[0] = 0  # x % 0 is 0, as numpy gives it (with a warning)

    @dlc.jit
    def f(a, b):
        return (a + b, a - b, a * b, dlc.maximum(a, b), dlc.minimum(a, b),
                a < b, a >= b, a == b, a % b, dlc.relu(a), dlc.abs(a), dlc.sign(a),
                dlc.bitwise_and(a, b), dlc.bitwise_not(a))

    got = f(a, b)
    with np.errstate(all="ignore"):
        want = (a + b, a - b, a * b, np.maximum(a, b), np.minimum(a, b), a < b, a >= b,
                a == b, a % b, np.maximum(a, 0).astype(dtype), np.abs(a), np.sign(a),
                a & b, ~a)
    for index, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, index
        np.testing.assert_array_equal(g, w, err_msg=f"result {index}")


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_unsigned_reductions_match_numpy(dtype):
    rng = np.random.default_rng(35)
    a = _values(rng, dtype, (5, 7))
    f = dlc.jit(lambda a: (dlc.max(a, axis=1), dlc.min(a, axis=0), dlc.sum(a, axis=1),
                           dlc.argmax(a, axis=1), dlc.argmin(a, axis=0)))
    got = f(a)
    want = (a.max(axis=1), a.min(axis=0), a.sum(axis=1, dtype=dtype),
            a.argmax(axis=1), a.argmin(axis=0))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_unsigned_casts_match_numpy(dtype):
    rng = np.random.default_rng(36)
    a = _values(rng, dtype, (64,))
    floats = rng.uniform(0, min(np.iinfo(dtype).max, 2.0 ** 53), 64).astype(np.float64)
    f = dlc.jit(lambda a, x: (a.astype(np.float64), a.astype(np.int64), a.astype(np.int8),
                              a.astype(np.bool_), x.astype(dtype)))
    got = f(a, floats)
    want = (a.astype(np.float64), a.astype(np.int64), a.astype(np.int8),
            a.astype(np.bool_), floats.astype(dtype))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_matmul_integer_matches_numpy_in_int32():
    rng = np.random.default_rng(47)
    for a_type, b_type in [(np.uint8, np.int8), (np.int8, np.uint8), (np.int8, np.int8)]:
        a = rng.integers(np.iinfo(a_type).min, np.iinfo(a_type).max, (2, 7, 33), dtype=a_type)
        b = rng.integers(np.iinfo(b_type).min, np.iinfo(b_type).max, (33, 18), dtype=b_type)
        got = dlc.jit(dlc.matmul_integer)(a, b)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, a.astype(np.int32) @ b.astype(np.int32))
        v = b[:, 0]
        np.testing.assert_array_equal(dlc.jit(dlc.matmul_integer)(a, v),
                                      a.astype(np.int32) @ v.astype(np.int32))
    with pytest.raises(DTypeError, match="needs int8 or uint8 operands"):
        dlc.jit(dlc.matmul_integer)(np.zeros((2, 2), np.int16), np.zeros((2, 2), np.int8))


def _int8(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("a_type", [np.uint8, np.int8])
@pytest.mark.parametrize("constant_b", [False, True])
def test_integer_matmul_kernel_is_exact_at_every_edge(a_type, constant_b):
    """The dot-product micro-kernel (dl-integer-matmul: vpdpbusd where the
    host has VNNI, the generic elsewhere) against numpy, exactly: rows and
    columns that fill no register tile, K not a multiple of 4, a single
    row/column/step, extreme values (-128 x -128 sums, 255 x 127), an
    activation with batch dimensions, and the weight constant (packed at
    compile time) or an argument (packed per call)."""
    rng = np.random.default_rng(4242)
    shapes = [(1, 1, 1), (1, 4, 16), (6, 4, 64), (7, 13, 19), (5, 3, 17), (13, 65, 97),
              (64, 128, 48), (2, 768, 3)]
    shapes += [tuple(int(v) for v in rng.integers(1, 80, 3)) for _ in range(6)]
    for m, k, n in shapes:
        a = _int8(rng, a_type, (m, k))
        b = _int8(rng, np.int8, (k, n))
        if (m, k, n) == (6, 4, 64):  # the extremes
            a[:] = np.iinfo(a_type).min if a_type == np.int8 else 255
            b[:] = -128
        if constant_b:
            got = dlc.jit(lambda x: dlc.matmul_integer(x, b))(a)
        else:
            got = dlc.jit(dlc.matmul_integer)(a, b)
        np.testing.assert_array_equal(got, a.astype(np.int32) @ b.astype(np.int32),
                                      err_msg=str((m, k, n)))
    a = _int8(rng, a_type, (2, 3, 9, 10))
    b = _int8(rng, np.int8, (10, 33))
    np.testing.assert_array_equal(dlc.jit(dlc.matmul_integer)(a, b),
                                  a.astype(np.int32) @ b.astype(np.int32))
    b = _int8(rng, np.int8, (3, 10, 33))  # a batch of weights, broadcast over a's first
    np.testing.assert_array_equal(dlc.jit(dlc.matmul_integer)(a, b),
                                  a.astype(np.int32) @ b.astype(np.int32))


@pytest.mark.parametrize("cpu,kernel", [("znver4", "avx512.vpdpbusd.512"),
                                        ("icelake-server", "avx512.vpdpbusd.512"),
                                        ("alderlake", "avx512.vpdpbusd.256"),
                                        ("skylake-avx512", "avx512.pmaddw.d.512"),
                                        ("znver3", "avx2.pmadd.wd"), ("haswell", "avx2.pmadd.wd"),
                                        ("x86-64", None)])
def test_integer_matmul_kernel_follows_the_target(cpu, kernel):
    """The kernel is chosen from the target description, not the host: the
    IR for a named CPU has its dot product (vpdpbusd with VNNI, the exact
    widening vpmaddwd without), or none (SSE2's baseline: the generic)."""
    b = np.arange(64 * 40, dtype=np.int64).reshape(64, 40).astype(np.int8)
    f = dlc.jit(lambda x: dlc.matmul_integer(x, b), target=dlc.Target(cpu))
    text = f.lower(np.zeros((8, 64), np.uint8)).as_text("affine")
    if kernel:
        assert f'"llvm.x86.{kernel}"' in text
        assert "linalg.generic" not in text
    else:
        assert "llvm.x86" not in text


@pytest.mark.parametrize("cpu", ["znver3", "skylake-avx512", "znver4", "alderlake"])
def test_integer_matmul_kernels_of_other_cpus_are_exact(cpu):
    """Each ISA's kernel, run where the host can (its features a subset of
    the host's): every sign combination of A and B, edges and extremes,
    against numpy."""
    target = dlc.Target(cpu)
    vector_isa = {f for f in target.isa_features
                  if f.startswith(("avx", "sse", "ssse", "fma", "f16c", "bmi"))}
    if not vector_isa <= dlc.Target.host().isa_features:
        pytest.skip(f"this host cannot run code for {cpu}")
    rng = np.random.default_rng(77)
    for a_type in (np.uint8, np.int8):
        for b_type in (np.int8, np.uint8):
            for m, k, n in [(1, 1, 1), (7, 13, 19), (33, 65, 70), (64, 128, 48)]:
                a = _int8(rng, a_type, (m, k))
                b = _int8(rng, b_type, (k, n))
                want = a.astype(np.int32) @ b.astype(np.int32)
                np.testing.assert_array_equal(
                    dlc.jit(lambda x: dlc.matmul_integer(x, b), target=target)(a), want)
                np.testing.assert_array_equal(
                    dlc.jit(dlc.matmul_integer, target=target)(a, b), want)


def test_unsigned_constants_scalars_and_matmul():
    """Constants above the signed range keep their value (200 is not -56),
    Python scalars take the tensor's unsigned dtype, and a uint8 product wraps
    as numpy's does; constant operands fold with the same results."""
    rng = np.random.default_rng(37)
    table = np.array([200, 3, 255, 128], np.uint8)
    a, b = _values(rng, np.uint8, (5, 4)), _values(rng, np.uint8, (4, 3))

    @dlc.jit
    def f(x, a, b):
        folded = dlc.maximum(dlc.asarray(table), dlc.asarray(np.full(4, 100, np.uint8)))
        return x + table, x > 250, x * 2, dlc.matmul(a, b), folded

    x = np.array([100, 1, 2, 255], np.uint8)
    got = f(x, a, b)
    want = (x + table, x > 250, x * np.uint8(2), a @ b, np.maximum(table, 100))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_uint64_values_above_int64_survive():
    big = np.array([2 ** 63 + 5, 1, 2 ** 64 - 1], np.uint64)
    f = dlc.jit(lambda x: (x, x > np.uint64(2 ** 63), dlc.max(x, axis=0)))
    same, above, top = f(big)
    np.testing.assert_array_equal(same, big)
    np.testing.assert_array_equal(above, big > np.uint64(2 ** 63))
    assert top == big.max()


def test_mixing_unsigned_and_signed_is_refused():
    f = dlc.jit(lambda a, b: a + b)
    with pytest.raises(DTypeError, match="different dtypes.*uint8.*int8"):
        f(np.zeros(3, np.uint8), np.zeros(3, np.int8))
    g = dlc.jit(lambda a: a + 300)
    with pytest.raises(DTypeError, match="300 does not fit the uint8"):
        g(np.zeros(3, np.uint8))


# -- dlc.quantize_linear / dlc.dequantize_linear (dl.quantize, dl.dequantize) ---------

def _reference_quantize(x, scale, zero, axis, dtype):
    """onnx's reference QuantizeLinear (x / scale, rint, int32, + zero, clip)."""
    from onnx.reference.ops.op_quantize_linear import QuantizeLinear_21
    from onnx.reference.ops.op_dequantize_linear import DequantizeLinear_21
    if np.dtype(dtype) == np.int32:  # not an ONNX quantized type: the same formula
        shape = [-1 if d == axis else 1 for d in range(x.ndim)] if np.ndim(scale) else ()
        s, z = np.reshape(scale, shape), np.reshape(zero, shape)
        q = np.clip(np.rint(x / s).astype(np.float64) + z, -2 ** 31, 2 ** 31 - 1)
        q = q.astype(np.int32)
        return q, ((q.astype(np.float32) - z.astype(np.float32)) * s).astype(np.float32)
    q = QuantizeLinear_21.eval(x, scale, zero, axis=axis)
    return q, DequantizeLinear_21.eval(q, scale, zero, axis=axis)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32"])
@pytest.mark.parametrize("per_axis", [False, True])
def test_quantize_linear_matches_onnx_reference(dtype, per_axis):
    rng = np.random.default_rng(44)
    x = rng.normal(0, 40, (3, 5, 4)).astype(np.float32)
    x[0, 0, :3] = [0.5, 1.5, -2.5]  # halfway cases to even
    info = np.iinfo(dtype)
    if per_axis:
        scale = rng.uniform(0.05, 0.5, 5).astype(np.float32)
        zero = rng.integers(max(info.min, -20), min(info.max, 20), 5).astype(dtype)
    else:
        scale, zero = np.array(0.25, np.float32), np.array(min(3, info.max), dtype)
    axis = 1 if per_axis else None
    f = dlc.jit(lambda x: (lambda q: (q, dlc.dequantize_linear(q, scale, zero, axis=axis)))(
        dlc.quantize_linear(x, scale, zero, axis=axis)))
    q, back = f(x)
    want_q, want_back = _reference_quantize(x, scale, zero, 1, dtype)
    assert q.dtype == np.dtype(dtype) and back.dtype == np.float32
    np.testing.assert_array_equal(q, want_q)
    np.testing.assert_array_equal(back, want_back)
    # NaN (undefined in ONNX; the reference's int32 conversion wraps) is qmin.
    nan = f(np.full((3, 5, 4), np.nan, np.float32))[0]
    assert (nan == info.min).all()


def test_quantize_linear_errors_name_the_mistake():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(DTypeError, match="cannot quantize to float16"):
        dlc.jit(lambda x: dlc.quantize_linear(x, 0.5, dtype=np.float16))(x)
    with pytest.raises(dlc.ShapeError, match="a 1-D scale quantizes per axis: say which one"):
        dlc.jit(lambda x: dlc.quantize_linear(x, np.ones(3, np.float32)))(x)
    with pytest.raises(dlc.ShapeError, match="one scale per index of axis 0"):
        dlc.jit(lambda x: dlc.quantize_linear(x, np.ones(3, np.float32), axis=0))(x)
    with pytest.raises(DTypeError, match="does not fit uint8"):
        dlc.jit(lambda x: dlc.quantize_linear(x, 0.5, 300, dtype=np.uint8))(x)
    with pytest.raises(DTypeError, match="needs a floating-point operand"):
        dlc.jit(lambda x: dlc.quantize_linear(x.astype(np.int32), 0.5))(x)
    with pytest.raises(DTypeError, match="not of a quantized dtype"):
        dlc.jit(lambda x: dlc.dequantize_linear(x, 0.5))(x)


# -- ONNX integer operators, against onnx's reference implementation ------------------

def _model(node, inputs, outputs, initializers=(), opset=21):
    graph = helper.make_graph([node], "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _vinfo(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _check_exact(model, feeds):
    want = ReferenceEvaluator(model).run(None, feeds)
    got = dlc.from_onnx(model)(*feeds.values())
    got = got if isinstance(got, (list, tuple)) else [got]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("a_type,b_type,per_row", [(np.uint8, np.int8, False),
                                                   (np.uint8, np.uint8, True),
                                                   (np.int8, np.int8, False)])
def test_onnx_matmul_integer_with_row_and_column_zero_points(a_type, b_type, per_row):
    """8-bit products (dl.matmul_integer) with the zero points subtracted as
    corrections (row and column sums): equal to the products of the shifted
    values in int32."""
    rng = np.random.default_rng(38)
    a = rng.integers(np.iinfo(a_type).min, np.iinfo(a_type).max, (4, 16), dtype=a_type)
    b = rng.integers(np.iinfo(b_type).min, np.iinfo(b_type).max, (16, 5), dtype=b_type)
    a_zero = rng.integers(0, 20, (4,)).astype(a_type) if per_row else \
        np.array(rng.integers(0, 20), a_type)
    b_zero = rng.integers(0, 20, (5,)).astype(b_type)  # one per column
    elem = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    model = _model(node, [_vinfo("a", elem[a_type], [4, 16]), _vinfo("b", elem[b_type], [16, 5])],
                   [_vinfo("y", TensorProto.INT32, [4, 5])],
                   [onnx.numpy_helper.from_array(a_zero, "az"),
                    onnx.numpy_helper.from_array(b_zero, "bz")])
    shifted_a = a.astype(np.int32) - (a_zero.astype(np.int32).reshape(-1, 1) if per_row
                                      else a_zero.astype(np.int32))
    want = shifted_a @ (b.astype(np.int32) - b_zero)
    compiled = dlc.from_onnx(model)
    np.testing.assert_array_equal(compiled(a, b), want)
    assert "dl.matmul_integer" in compiled.lower(a, b).as_text("dl")


def test_onnx_qlinear_conv_per_channel_with_bias_is_bit_exact():
    rng = np.random.default_rng(39)
    x = rng.integers(0, 256, (1, 3, 9, 9), dtype=np.uint8)
    w = rng.integers(-127, 128, (4, 3, 3, 3), dtype=np.int8)
    inits = [onnx.numpy_helper.from_array(v, n) for n, v in [
        ("xs", np.array(0.02, np.float32)), ("xz", np.array(128, np.uint8)),
        ("w", w), ("ws", rng.uniform(0.001, 0.01, 4).astype(np.float32)),
        ("wz", np.zeros(4, np.int8)), ("ys", np.array(0.05, np.float32)),
        ("yz", np.array(120, np.uint8)), ("b", rng.integers(-500, 500, 4).astype(np.int32))]]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], pads=[1, 1, 1, 1], strides=[2, 2])
    model = _model(node, [_vinfo("x", TensorProto.UINT8, [1, 3, 9, 9])],
                   [_vinfo("y", TensorProto.UINT8, None)], inits)
    _check_exact(model, {"x": x})


def test_onnx_qlinear_matmul_per_column_weight_scale_is_bit_exact():
    rng = np.random.default_rng(40)
    a = rng.integers(-128, 128, (2, 3, 8), dtype=np.int8)
    inits = [onnx.numpy_helper.from_array(v, n) for n, v in [
        ("as", np.array(0.05, np.float32)), ("az", np.array(-3, np.int8)),
        ("b", rng.integers(-128, 128, (8, 6), dtype=np.int8)),
        ("bs", rng.uniform(0.001, 0.02, 6).astype(np.float32)),
        ("bz", np.zeros(6, np.int8)), ("ys", np.array(0.1, np.float32)),
        ("yz", np.array(5, np.int8))]]
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    model = _model(node, [_vinfo("a", TensorProto.INT8, [2, 3, 8])],
                   [_vinfo("y", TensorProto.INT8, None)], inits)
    _check_exact(model, {"a": a})


def test_onnx_quantize_dequantize_uint8_and_per_axis():
    rng = np.random.default_rng(41)
    x = rng.normal(0, 3, (2, 4, 5)).astype(np.float32)
    x[0, 0, :3] = [0.5, 1.5, -2.5]  # halfway cases round to even
    scale = rng.uniform(0.01, 0.1, 4).astype(np.float32)
    zero = rng.integers(0, 256, 4).astype(np.uint8)
    q = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1)
    dq = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)
    graph = helper.make_graph(
        [q, dq], "g", [_vinfo("x", TensorProto.FLOAT, [2, 4, 5])],
        [_vinfo("q", TensorProto.UINT8, None), _vinfo("y", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(scale, "s"), onnx.numpy_helper.from_array(zero, "z")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    _check_exact(model, {"x": x})
    # No zero point: uint8, saturating at 0 and 255.
    node = helper.make_node("QuantizeLinear", ["x", "s"], ["q"])
    model = _model(node, [_vinfo("x", TensorProto.FLOAT, [6])], [_vinfo("q", TensorProto.UINT8, None)],
                   [onnx.numpy_helper.from_array(np.array(0.5, np.float32), "s")])
    _check_exact(model, {"x": np.array([-3, 0.24, 0.26, 0.75, 127.6, 1e4], np.float32)})


def test_onnx_uint8_max_pool_and_shifts():
    rng = np.random.default_rng(42)
    x = rng.integers(0, 256, (1, 2, 6, 6), dtype=np.uint8)
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                            pads=[1, 1, 1, 1])
    _check_exact(_model(node, [_vinfo("x", TensorProto.UINT8, [1, 2, 6, 6])],
                        [_vinfo("y", TensorProto.UINT8, None)]), {"x": x})
    for direction in ("LEFT", "RIGHT"):
        node = helper.make_node("BitShift", ["a", "b"], ["y"], direction=direction)
        model = _model(node, [_vinfo("a", TensorProto.UINT8, [5]), _vinfo("b", TensorProto.UINT8, [5])],
                       [_vinfo("y", TensorProto.UINT8, None)])
        _check_exact(model, {"a": np.array([200, 3, 255, 1, 128], np.uint8),
                             "b": np.array([1, 2, 7, 0, 3], np.uint8)})


def test_onnx_integer_op_refusals_name_the_node():
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])
    model = _model(node, [_vinfo("x", TensorProto.FLOAT, [4])], [_vinfo("q", TensorProto.INT64, None)],
                   [onnx.numpy_helper.from_array(np.array(0.5, np.float32), "s"),
                    onnx.numpy_helper.from_array(np.array(0, np.int64), "z")])
    with pytest.raises(ModelImportError,
                       match="QuantizeLinear.*quantizing to int64 is not supported"):
        dlc.from_onnx(model)(np.zeros(4, np.float32))


# -- a model quantized by onnxruntime's tool ------------------------------------------

def _small_cnn(torch, batch_norm=False):
    """Conv (+ batch norm), strided conv, a residual add of a strided slice,
    global pooling, linear: the quantized-model tests' network (eval mode)."""

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.b1 = torch.nn.BatchNorm2d(8) if batch_norm else torch.nn.Identity()
            self.c2 = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1)
            self.fc = torch.nn.Linear(8, 10)

        def forward(self, x):
            x = torch.relu(self.b1(self.c1(x)))
            x = torch.relu(self.c2(x)) + x[:, :, ::2, ::2]
            return self.fc(torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))
    return Net().eval()




@pytest.mark.parametrize("activation", ["QInt8", "QUInt8"])
def test_onnxruntime_qdq_model_imports_and_agrees_with_onnxruntime(tmp_path, activation):
    """A small CNN (conv, batch norm, strided conv, residual add, pooling,
    linear) exported by torch and quantized by onnxruntime's quantize_static
    (QDQ, per-channel, S8S8, MinMax, opset 17: before the reference evaluator
    has a DequantizeLinear) imports and agrees with onnxruntime's run of the
    graph as written (graph optimizations off: see below): outputs within two
    steps of the output scale (dlc scales the exact int32 sums in float; on a
    Zen 3 the difference was 0), and the same
    top-1 class. The importer's QDQ fusion computes every convolution and the
    linear layer in integers: no float convolution or matmul is left. Also
    with uint8 activations (U8S8, onnxruntime's default: asymmetric, a zero
    point folded into the weights' column sums)."""
    torch = pytest.importorskip("torch")
    ort = pytest.importorskip("onnxruntime")
    from onnxruntime import quantization as q

    torch.manual_seed(0)

    model = _small_cnn(torch, batch_norm=True)
    with torch.no_grad():
        model.b1.running_mean.uniform_(-0.5, 0.5)
        model.b1.running_var.uniform_(0.5, 2.0)
    float_path, int8_path = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    torch.onnx.export(model, torch.randn(1, 3, 16, 16), float_path, dynamo=False,
                      opset_version=17, input_names=["x"], output_names=["y"])
    rng = np.random.default_rng(43)
    samples = [rng.normal(size=(1, 3, 16, 16)).astype(np.float32) for _ in range(24)]

    class Reader(q.CalibrationDataReader):
        def __init__(self):
            self.data = iter({"x": s} for s in samples[:8])

        def get_next(self):
            return next(self.data, None)

    q.quantize_static(float_path, int8_path, Reader(), quant_format=q.QuantFormat.QDQ,
                      per_channel=True, activation_type=getattr(q.QuantType, activation),
                      weight_type=q.QuantType.QInt8)
    quantized = onnx.load(int8_path)
    assert any(n.op_type == "QuantizeLinear" for n in quantized.graph.node)
    # onnxruntime without its graph optimizations runs the QDQ graph as
    # written (dequantize, float op, quantize): what the file means. Its
    # optimized session fuses QDQ into integer kernels that, on AVX2 without
    # VNNI, sum u8 x s8 pairs with vpmaddubsw into saturating 16-bit lanes
    # (15 output steps off on a Zen 3), so it is not the reference here.
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(int8_path, options, providers=["CPUExecutionProvider"])
    compiled = dlc.from_onnx(quantized)
    text = compiled.lower(samples[0]).as_text("dl")
    assert text.count("dl.matmul_integer") == 3, text
    assert "dl.conv2d" not in text and "dl.matmul " not in text
    out_scale = next(onnx.numpy_helper.to_array(i) for i in quantized.graph.initializer
                     if i.name == next(n.input[1] for n in quantized.graph.node
                                       if n.op_type == "DequantizeLinear"
                                       and n.output[0] == "y"))
    for sample in samples[8:]:
        want = session.run(None, {"x": sample})[0]
        got = compiled(sample)
        assert np.abs(got - want).max() <= 2 * float(out_scale) + 1e-7
        assert got.argmax() == want.argmax()


def test_torch_uint8_images_and_shifts_match_eager():
    """uint8 tensors through from_torch: an image's normalization, unsigned
    comparisons, max/min, sums, and torch's shifts (logical on unsigned,
    arithmetic on signed, a shift past the width gives 0 or -1)."""
    torch = pytest.importorskip("torch")

    class Module(torch.nn.Module):
        def forward(self, img, m):
            return (img.float() / 255.0, (img > 128) & (m < 3), torch.maximum(img, m) - img.min(),
                    img.to(torch.int32).sum(), img.max(dim=1).values, img >> 2, img << 3,
                    m.to(torch.int16) >> 20, torch.bitwise_right_shift(m.to(torch.int8), 1),
                    m.to(torch.int32) << 4)

    gen = torch.Generator().manual_seed(45)
    img = torch.randint(0, 256, (3, 7), dtype=torch.uint8, generator=gen)
    m = torch.randint(0, 256, (3, 7), dtype=torch.uint8, generator=gen)
    got = dlc.from_torch(Module().eval(), img, m)(img.numpy(), m.numpy())
    want = Module()(img, m)
    for index, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, w.numpy(), err_msg=f"output {index}")
        assert g.dtype == w.numpy().dtype


def test_pt2e_quantized_model_imports_and_matches_eager():
    """A CNN quantized by PyTorch 2 quantization (torchao's prepare_pt2e /
    convert_pt2e, X86InductorQuantizer: uint8 activations per tensor, int8
    weights per channel) through from_torch: quantized_decomposed ops become
    dl.quantize / dl.dequantize with torch's arithmetic (x * (1 / scale)), so
    the quantized activations equal eager's and the outputs differ by float
    summation order only (a quantized activation within rounding of a step
    boundary may land on the other side: two steps' worth of tolerance).
    The QDQ fusion computes both convolutions and the linear layer in
    integers (dl.matmul_integer), no float convolution or matmul left."""
    torch = pytest.importorskip("torch")
    pt2e = pytest.importorskip("torchao.quantization.pt2e.quantize_pt2e")
    xiq = pytest.importorskip("torchao.quantization.pt2e.quantizer.x86_inductor_quantizer")
    torch.manual_seed(0)

    example = torch.randn(1, 3, 16, 16)
    quantizer = xiq.X86InductorQuantizer()
    quantizer.set_global(xiq.get_default_x86_inductor_quantization_config())
    prepared = pt2e.prepare_pt2e(torch.export.export(_small_cnn(torch), (example,)).module(),
                                 quantizer)
    for _ in range(8):
        prepared(torch.randn(1, 3, 16, 16))
    quantized = pt2e.convert_pt2e(prepared)
    compiled = dlc.from_torch(quantized, example)
    text = compiled.lower(example.numpy()).as_text()
    assert text.count("dl.quantize") >= 3
    assert text.count("dl.matmul_integer") == 3
    assert "dl.conv2d" not in text and "dl.matmul " not in text
    for _ in range(4):
        x = torch.randn(1, 3, 16, 16)
        want = quantized(x).detach().numpy()
        got = compiled(x.numpy())
        np.testing.assert_allclose(got, want, rtol=0, atol=0.02 * np.abs(want).max())
        assert np.median(np.abs(got - want)) <= 1e-5 * np.abs(want).max()
        assert got.argmax() == want.argmax()


def test_pt2e_quantize_ops_are_bit_exact():
    """The quantized_decomposed ops alone, on inputs: dlc's integers equal
    torch's, per tensor and per channel, with ranges narrower than the dtype
    (quant_min/quant_max), and dequantization back."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchao.quantization.pt2e.quantize_pt2e")  # registers the ops
    ops = torch.ops.quantized_decomposed

    class Module(torch.nn.Module):
        def forward(self, x, scales):
            q1 = ops.quantize_per_tensor.default(x, 0.0173, 121, 0, 255, torch.uint8)
            q2 = ops.quantize_per_tensor.default(x, 0.0311, -3, -64, 63, torch.int8)
            zeros = torch.zeros(4, dtype=torch.int64)
            q3 = ops.quantize_per_channel.default(x, scales, zeros, 1, -127, 127, torch.int8)
            # The .tensor overloads: scale and zero point as 0-d tensors.
            q4 = ops.quantize_per_tensor.tensor(x, scales[0], zeros[0] + 9, 0, 255,
                                                torch.uint8)
            return (q1, q2, q3,
                    ops.dequantize_per_tensor.default(q1, 0.0173, 121, 0, 255, torch.uint8),
                    ops.dequantize_per_channel.default(q3, scales, zeros, 1, -127, 127,
                                                       torch.int8),
                    q4, ops.dequantize_per_tensor.tensor(q4, scales[1], zeros[1] + 9, 0, 255,
                                                         torch.uint8))

    gen = torch.Generator().manual_seed(46)
    x = torch.randn(2, 4, 9, generator=gen) * 3
    scales = torch.rand(4, generator=gen) * 0.05 + 0.01
    got = dlc.from_torch(Module().eval(), x, scales)(x.numpy(), scales.numpy())
    want = Module()(x, scales)
    for index, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, w.numpy(), err_msg=f"output {index}")


def test_requantization_runs_on_the_integer_kernels_tiles():
    """dl-integer-matmul computes the elementwise nest after an integer
    product (a quantized convolution's requantization: the zero point's
    correction per column, the scale, rounding and clamping to int8, back to
    float) on its tiles in registers, storing straight into the padded
    buffer the next (depthwise) convolution reads: rows that fill no tile
    (35), columns past a vector (20), K below one widened chunk (12); and a
    per-row scale (a dynamic quantization's) broadcast along the columns.
    Results equal numpy/PyTorch exactly (the same float operations in the
    same order)."""
    import re
    import torch
    rng = np.random.default_rng(5)
    n, h, w, k, c = 1, 5, 7, 12, 20
    x = rng.integers(-128, 128, (n * h * w, k), dtype=np.int8)
    wt = rng.integers(-128, 128, (k, c), dtype=np.int8)
    corr = rng.integers(-500, 500, (c,), dtype=np.int32)
    scale = np.float32(0.0037)
    dwh = rng.standard_normal((3, 3, 1, c)).astype(np.float32)

    @dlc.jit
    def conv_block(x):
        s = dlc.matmul_integer(x, wt) - corr
        q = dlc.astype(dlc.clip(dlc.round(dlc.astype(s, np.float32) * scale), -128, 127),
                       np.int8)
        back = dlc.reshape(dlc.astype(q, np.float32), (n, h, w, c))
        return dlc.conv2d(back, dwh, padding=1, groups=c, layout="NHWC")

    affine = conv_block.lower(x).as_text("affine")
    assert re.search(r"math.roundeven %\S+ : vector<\d+xf32>", affine), \
        "the requantization was not computed on the kernel's tiles"
    s = x.astype(np.int64) @ wt.astype(np.int64) - corr
    q = np.clip(np.round(s.astype(np.float32) * scale), -128, 127).astype(np.int8)
    q = q.astype(np.float32).reshape(n, h, w, c)
    want = torch.nn.functional.conv2d(torch.from_numpy(q).permute(0, 3, 1, 2),
                                      torch.from_numpy(dwh).permute(3, 2, 0, 1),
                                      padding=1, groups=c).permute(0, 2, 3, 1).numpy()
    np.testing.assert_array_equal(conv_block(x), want)

    rows = rng.uniform(0.001, 0.01, (n * h * w, 1)).astype(np.float32)

    @dlc.jit
    def per_row(x, rows):
        return dlc.astype(dlc.matmul_integer(x, wt), np.float32) * rows

    assert re.search(r"arith.mulf %\S+, %\S+ : vector<\d+xf32>",
                     per_row.lower(x, rows).as_text("affine"))
    np.testing.assert_array_equal(per_row(x, rows),
                                  (x.astype(np.int32) @ wt.astype(np.int32)).astype(np.float32)
                                  * rows)


def test_projections_of_one_input_each_run_their_consumer_on_their_tiles():
    """BERT's dynamically quantized Q, K, V projections: an input quantized
    in the function (a temporary of the memory plan), three integer products
    of it written first, then each product's consumer (the zero point's
    correction per column from a zero point known only at run time, int ->
    float, the scale). All three consumers run on their product's tiles
    (dl-schedule-epilogues puts each next to its product before the memory
    plan; dl-integer-matmul moves nests the consumer reads above the
    product: test/Codegen/Common/schedule-epilogues.mlir and
    integer-matmul-epilogue.mlir show each step). Results equal numpy
    exactly (the same integer sums, one float multiply)."""
    rng = np.random.default_rng(11)
    m, k, n = 37, 24, 40
    xf = rng.standard_normal((m, k)).astype(np.float32)
    ws = [rng.integers(-128, 128, (k, n), dtype=np.int8) for _ in range(3)]
    cols = [w.astype(np.int32).sum(axis=0, dtype=np.int32) for w in ws]
    scale = np.float32(0.0021)

    @dlc.jit
    def qkv(xf, zp):
        x = dlc.astype(dlc.clip(dlc.round(xf * np.float32(40.0)) + dlc.astype(zp, np.float32),
                                0, 255), np.uint8)
        zw = dlc.astype(zp, np.int32)
        sums = [dlc.matmul_integer(x, w) for w in ws]
        corrections = [zw * col for col in cols]
        return tuple(dlc.astype(s - c, np.float32) * scale
                     for s, c in zip(sums, corrections))

    zp = np.array(131, dtype=np.uint8)
    lowered = qkv.lower(xf, zp)
    assert lowered.fused_epilogues() == 3, lowered.as_text("fused")
    got = qkv(xf, zp)
    x = np.clip(np.round(xf * np.float32(40.0)) + np.float32(131), 0, 255).astype(np.uint8)
    for w, col, g in zip(ws, cols, got):
        s = x.astype(np.int64) @ w.astype(np.int64) - 131 * col.astype(np.int64)
        np.testing.assert_array_equal(g, s.astype(np.int32).astype(np.float32) * scale)
