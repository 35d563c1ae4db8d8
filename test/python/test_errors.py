"""Every user-facing error: the exception type, and a message that names what
was wrong, what was expected and where (the user's file:line for traced ops).
"""

import inspect
import re

import numpy as np
import pytest

import dlc

F32 = np.float32


def location_of(fn, marker):
    """'file:line' of the line of `fn` holding `marker`."""
    lines, first = inspect.getsourcelines(fn)
    for offset, line in enumerate(lines):
        if marker in line:
            return f"{inspect.getsourcefile(fn)}:{first + offset}"
    raise AssertionError(f"marker {marker!r} not in {fn.__name__}")


def raises_at(exception, fn, marker, *args, match=""):
    """Calling dlc.jit(fn)(*args) raises `exception` whose message starts with
    the location of the line holding `marker` and contains `match`."""
    with pytest.raises(exception) as info:
        dlc.jit(fn)(*args)
    message = str(info.value)
    assert message.startswith(location_of(fn, marker) + ": "), message
    assert re.search(match, message), message
    return message


# -- trace-time errors point at the user's line ------------------------------

def test_matmul_contraction_mismatch_names_shapes_and_line():
    def f(x, w):
        return dlc.relu(x @ w)  # <- error

    message = raises_at(dlc.ShapeError, f, "<- error", np.ones((64, 784), F32),
                        np.ones((700, 128), F32),
                        match=r"'dl.matmul' op contraction dimensions differ")
    assert "tensor<64x784xf32>" in message and "tensor<700x128xf32>" in message


def test_broadcast_mismatch():
    def f(x, b):
        return x + b  # <- error

    raises_at(ValueError, f, "<- error", np.ones((3, 4), F32), np.ones(5, F32),
              match=r"not broadcast-compatible: dimension -1 is 4 .* and 5")


@pytest.mark.parametrize("shape", [(2**40, 2**40), (2**31, 2**31), (2**62, 8)])
def test_sizes_overflowing_64_bits_are_refused(shape):
    # Each used to abort the process (an MLIR assertion) or segfault (the
    # byte size wrapped around); now the tracer's op refuses the type.
    def f(x):
        return dlc.sum(dlc.broadcast_to(x[:1], shape), axis=1)  # <- error

    raises_at(dlc.ShapeError, f, "<- error", np.ones(4, F32),
              match=r"'dl.broadcast_to' op result #0 has type 'tensor<"
                    rf"{shape[0]}x{shape[1]}xf32>', whose size in elements or "
                    r"bytes does not fit in 64 bits")


def test_operand_dtype_mismatch():
    def f(x, y):
        return x * y  # <- error

    raises_at(dlc.DTypeError, f, "<- error", np.ones(3, F32), np.ones(3, np.float64),
              match=r"different dtypes: Tensor\(float32\[3\]\) and Tensor\(float64\[3\]\)")


def test_float_only_ops_refuse_integers():
    def f(x):
        return dlc.exp(x)  # <- exp

    def g(x):
        return x / x  # <- divide

    raises_at(TypeError, f, "<- exp", np.ones(3, np.int32),
              match=r"dlc.exp needs a floating-point operand, but got Tensor\(int32\[3\]\)")
    raises_at(TypeError, g, "<- divide", np.ones(3, np.int32), match=r"dlc.divide needs")


def test_arithmetic_refuses_bool():
    def f(x):
        return dlc.relu(x)  # <- error

    raises_at(dlc.DTypeError, f, "<- error", np.ones(3, bool),
              match=r"dlc.relu does not accept the bool operand")


@pytest.mark.parametrize("fn,dtype,match", [
    (dlc.sin, np.int32, r"dlc.sin needs a floating-point operand, but got Tensor\(int32\[3\]\)"),
    (dlc.arccosh, np.int64, r"dlc.arccosh needs a floating-point operand"),
    (dlc.isnan, np.int32, r"dlc.isnan needs a floating-point operand"),
    (dlc.floor, np.bool_, r"dlc.floor needs a floating-point operand, but got Tensor\(bool\[3\]\)"),
    (dlc.sign, np.bool_, r"dlc.sign does not accept the bool operand"),
    (lambda x: dlc.bitwise_and(x, x), np.float32,
     r"dlc.bitwise_and needs integer or bool operands, but got Tensor\(float32\[3\]\)"),
    (lambda x: ~x, np.float16, r"dlc.bitwise_not needs integer or bool operands"),
    (lambda x: x % x, np.bool_, r"dlc.remainder does not accept the bool operand"),
    (lambda x: dlc.fmod(x, x), np.bool_, r"dlc.fmod does not accept the bool operand"),
])
def test_more_elementwise_ops_refuse_wrong_dtypes(fn, dtype, match):
    with pytest.raises(dlc.DTypeError, match=match):
        dlc.jit(lambda x: fn(x))(np.ones(3, dtype))


def test_python_scalars_must_fit_the_tensor_dtype():
    def f(x):
        return x + 1.5  # <- float

    def g(x):
        return x * 300  # <- overflow

    raises_at(dlc.DTypeError, f, "<- float", np.ones(3, np.int32),
              match=r"cannot combine the int32 operand .* with the Python float 1.5")
    raises_at(dlc.DTypeError, g, "<- overflow", np.ones(3, np.int8),
              match=r"the Python integer 300 does not fit the int8 operand")


@pytest.mark.parametrize("call,match", [
    (lambda x: dlc.sum(x, axis=2), r"dlc.sum: axis 2 is out of bounds for a tensor of rank 2"),
    (lambda x: dlc.max(x, axis=(0, -2)), r"dlc.max: duplicate axes in \(0, -2\)"),
    (lambda x: dlc.softmax(x, axis=-3), r"dlc.softmax: axis -3 is out of bounds"),
    (lambda x: dlc.transpose(x, (0, 0)), r"axes \(0, 0\) are not a permutation"),
    (lambda x: dlc.reshape(x, (5, 5)), r"cannot reshape 'tensor<3x4xf32>' \(12 elements\) into \[5, 5\]"),
    (lambda x: dlc.reshape(x, (-1, -1)), r"at most one -1"),
    (lambda x: dlc.matmul(x, dlc.sum(x)), r"dlc.matmul: operands must have at least one dimension"),
], ids=["sum-axis", "max-duplicate", "softmax-axis", "transpose", "reshape-count",
        "reshape-two-inferred", "matmul-scalar"])
def test_shape_attribute_errors(call, match):
    with pytest.raises(dlc.ShapeError, match=match) as info:
        dlc.jit(call)(np.ones((3, 4), F32))
    assert str(info.value).startswith(f"{__file__}:"), str(info.value)


def test_max_of_an_empty_axis():
    with pytest.raises(dlc.ShapeError,
                       match=r"dlc.max: axis 0 of Tensor\(float32\[0, 3\]\) is empty, "
                             r"and the maximum has no identity"):
        dlc.jit(lambda x: dlc.max(x, axis=0))(np.ones((0, 3), F32))
    assert dlc.jit(lambda x: dlc.max(x, axis=1))(np.ones((0, 3), F32)).shape == (0,)


def test_reshape_of_dynamic_batch_keeps_whole_rows():
    # The -1 takes the dynamic factor wherever it is: [?, 6] -> [2, 3 * batch].
    f = dlc.jit(lambda x: x.reshape(2, -1), dynamic_batch=True)
    x = np.arange(24, dtype=F32).reshape(4, 6)
    np.testing.assert_array_equal(f(x), x.reshape(2, -1))
    # ... when the static part divides: 6 elements per row are not whole 4s.
    g = dlc.jit(lambda x: x.reshape(-1, 4), dynamic_batch=True)
    with pytest.raises(dlc.ShapeError, match=r"for every size of its dynamic dimensions"):
        g(np.ones((4, 6), F32))
    h = dlc.jit(lambda x: x.reshape(2, 6), dynamic_batch=True)
    with pytest.raises(dlc.ShapeError, match=r"needs a -1 in the new shape for them"):
        h(np.ones((2, 6), F32))


def test_reshape_sizes_must_be_ints():
    with pytest.raises(TypeError, match=r"dlc.reshape: sizes must be ints"):
        dlc.jit(lambda x: x.reshape(2.0, 6))(np.ones((3, 4), F32))


def test_axis_must_be_int():
    with pytest.raises(TypeError, match=r"axis must be an int, but got 1.5"):
        dlc.jit(lambda x: dlc.softmax(x, axis=1.5))(np.ones((3, 4), F32))


def test_data_dependent_python_is_refused():
    def branch(x):
        if x:  # <- bool
            return x
        return -x

    raises_at(dlc.TraceError, branch, "<- bool", np.ones(3, F32),
              match=r"truth value of a traced tensor is not known at trace time")
    with pytest.raises(dlc.TraceError, match="cannot convert a traced tensor to a numpy array"):
        dlc.jit(lambda x: np.asarray(x))(np.ones(3, F32))
    with pytest.raises(dlc.TraceError, match="iterating over a traced tensor"):
        dlc.jit(lambda x: [r for r in x][0])(np.ones((2, 3), F32))


def test_function_must_return_tensors():
    with pytest.raises(dlc.TraceError, match=r"returned None"):
        dlc.jit(lambda x: None)(np.ones(3, F32))
    with pytest.raises(dlc.TraceError, match=r"returned an empty tuple"):
        dlc.jit(lambda x: ())(np.ones(3, F32))


def test_ops_outside_jit_are_refused():
    with pytest.raises(dlc.TraceError, match=r"dlc.relu .* can only be called inside a @dlc.jit"):
        dlc.relu(np.ones(3, F32))


def test_jit_needs_a_function():
    with pytest.raises(TypeError, match="dlc.jit expects a function"):
        dlc.jit(3)


# -- call-time errors name the argument --------------------------------------

def mlp(x, w, b):
    return dlc.relu(x @ w + b)


def test_wrong_arity_names_the_function():
    with pytest.raises(dlc.ArityError, match=r"mlp\(\): missing a required argument: 'b'"):
        dlc.jit(mlp)(np.ones((2, 3), F32), np.ones((3, 4), F32))
    with pytest.raises(TypeError, match=r"too many positional arguments"):
        dlc.jit(mlp)(*[np.ones(1, F32)] * 4)


def test_unsupported_argument_dtype():
    with pytest.raises(dlc.DTypeError, match=r"argument 'x' has dtype complex64, which dlc does not support; supported: float16, float32"):
        dlc.jit(mlp)(np.ones((2, 3), np.complex64), np.ones((3, 4), F32), np.ones(4, F32))
    with pytest.raises(dlc.DTypeError, match=r"argument 'w' has dtype <U1"):
        dlc.jit(mlp)(np.ones((2, 3), F32), np.array(["a"]), np.ones(4, F32))


def test_compiled_checks_arity_dtype_and_shape():
    args = (np.ones((2, 3), F32), np.ones((3, 4), F32), np.ones(4, F32))
    compiled = dlc.jit(mlp, dynamic_batch=("x",)).lower(*args).compile()
    np.testing.assert_allclose(compiled(*args), np.full((2, 4), 4.0))
    assert compiled(np.ones((7, 3), F32), args[1], args[2]).shape == (7, 4)

    with pytest.raises(dlc.ArityError, match=r"takes 3 arguments \(x, w, b\), but got 2"):
        compiled(*args[:2])
    with pytest.raises(dlc.DTypeError,
                       match=r"argument 'w': expected float32\[3, 4\], but got float64\[3, 4\]"):
        compiled(args[0], args[1].astype(np.float64), args[2])
    with pytest.raises(dlc.ShapeError,
                       match=r"argument 'b': expected float32\[4\], but got float32\[5\]"):
        compiled(args[0], args[1], np.ones(5, F32))
    with pytest.raises(dlc.ShapeError,
                       match=r"argument 'x': expected float32\[\?, 3\], but got float32\[2, 2, 3\]"):
        compiled(np.ones((2, 2, 3), F32), args[1], args[2])


def test_dynamic_batch_arguments_must_agree():
    f = dlc.jit(lambda x, y: x + y, dynamic_batch=True)
    with pytest.raises(dlc.ShapeError,
                       match=r"batched arguments disagree on the batch size: 'x' has 2 and 'y' has 3"):
        f(np.ones((2, 4), F32), np.ones((3, 4), F32))
    with pytest.raises(dlc.ShapeError, match=r"argument 'y' is a scalar, but dynamic_batch"):
        f(np.ones((2, 4), F32), np.float32(1))


def test_static_scalar_arguments_are_compile_time_constants():
    def scale(x, factor):
        return x * factor

    compiled = dlc.jit(scale).lower(np.ones(3, F32), 2.0).compile()
    np.testing.assert_allclose(compiled(np.ones(3, F32), 2.0), 2.0)
    with pytest.raises(dlc.ShapeError, match=r"argument 'factor' was 2.0 when compiled, but got 3.0"):
        compiled(np.ones(3, F32), 3.0)


def test_unknown_stage():
    lowered = dlc.jit(mlp).lower(np.ones((2, 3), F32), np.ones((3, 4), F32), np.ones(4, F32))
    with pytest.raises(ValueError, match=r"unknown stage 'loops'; stages are: dl, graph, linalg"):
        lowered.as_text("loops")


@pytest.mark.parametrize("batch,error,match", [
    (("nope",), ValueError, r"dynamic_batch names 'nope', which is not an argument of f; "
                            r"its arguments are \['a', 'b'\]"),
    ((5,), ValueError, r"dynamic_batch position 5 is out of range for f, which takes 2"),
    ("a", TypeError, r"dynamic_batch must be True, False or a tuple"),
    ((1.5,), TypeError, r"dynamic_batch entries must be argument positions or names"),
])
def test_bad_dynamic_batch_is_refused_at_jit_time(batch, error, match):
    # An unknown name used to be ignored silently.
    def f(a, b):
        return a + b

    with pytest.raises(error, match=match):
        dlc.jit(f, dynamic_batch=batch)


_kept = []


def test_a_tensor_kept_from_another_trace_is_an_error_not_a_crash():
    # It used to segfault: the kept tensor's IR belongs to a finished trace.
    def keep(a):
        _kept.append(a)
        return a + 1

    dlc.jit(keep)(np.ones(3, F32))

    def use(a):
        return a + _kept[0]  # <- error

    raises_at(dlc.TraceError, use, "<- error", np.ones(3, F32),
              match=r"comes from another dlc.jit trace .* pass the value as an argument")


@pytest.mark.parametrize("fn,error,match", [
    (lambda a: a[a > 0], IndexError, r"with a boolean mask is not supported: .*dlc.where"),
    (lambda a: a == None, TypeError, r"dlc.equal: None \(NoneType\) is not a tensor operand"),  # noqa: E711
    (lambda a: dlc.pad(a, ((1, 1), (1, 1), (1, 1))), ValueError,
     r"dlc.pad: pad_width must be an int, a \(before, after\) pair or one pair per "
     r"dimension of Tensor\(float32\[2, 3\]\) \(2 pairs\)"),
    (lambda a: dlc.clip(a, "x", 1.0), TypeError, r"dlc.clip: a_min must be None, a number"),
])
def test_unclear_errors_name_the_op_and_what_is_accepted(fn, error, match):
    with pytest.raises(error, match=match) as info:
        dlc.jit(fn)(np.ones((2, 3), F32))
    assert str(info.value).startswith(__file__ + ":"), str(info.value)


@pytest.mark.parametrize("fn,match", [
    (lambda a: {"y": a}, r"returned a dict; a dlc.jit function returns a tensor"),
    (lambda a: ((a, a), a), r"returned a tuple whose item 0 is a tuple"),
])
def test_unsupported_return_structures_are_named(fn, match):
    with pytest.raises(dlc.TraceError, match=match):
        dlc.jit(fn)(np.ones((2, 3), F32))
