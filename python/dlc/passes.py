"""Graph passes written in Python.

They are real MLIR passes: each is a function ``run(op, pass_)`` that a
``PassManager`` runs in the same pipeline as the C++ passes (the 22.1 bindings
accept Python-defined passes), and rewrites go through MLIR's greedy pattern
driver with Python rewrite patterns. ``dlc.jit`` runs them in its graph stage
(see :func:`add_graph_passes`); ``python -m dlc.opt`` runs them on a file, like
``dl-opt`` for the C++ passes (the lit tests use it).

- ``dl-simplify``: algebraic simplification that the C++ folders (which only
  return existing values or constants) do not do, because it creates ops:
  strength reduction of powers with constant exponents (x**2 -> x*x,
  x**3 -> x*x*x, x**0.5 -> sqrt(x), x**-1 -> 1/x), division by a power of
  two -> multiplication (exact), x + (-y) -> x - y, (-x) + y -> y - x,
  x - (-y) -> x + y, 0 - x -> -x, x * -1 -> -x. Only where the result type
  is the type of x (no broadcasting hidden by the rewrite).
- ``dl-autodiff``: for each ``func.func`` marked ``dl.autodiff`` (one float
  scalar result), adds ``@<name>_grad`` returning the value and its gradient
  with respect to every float argument: reverse mode on the dl ops, the rules
  of :mod:`dlc.autodiff` (``dlc.grad`` is the same at trace time).
- ``dl-fusion-report``: marks every dl op with the fusion group it will be
  compiled in (``dl.fusion_group``) by the rule ``dl-linalg-fuse`` applies
  after conversion: an elementwise producer with one user is computed inside
  an elementwise consumer that reads each of its elements once. Every other
  op (matmul, convolution, pooling, reductions, normalizations, shape ops) is
  a group of its own; views (reshapes, slices with positive strides) and
  constants compute nothing and belong to no group. :func:`fusion_report`
  prints the groups.
"""

import math
import threading

from .mlir import ir, rewrite
from .mlir.dialects import dl

# -- helpers -------------------------------------------------------------------


def _defining_op(value):
    owner = value.owner
    if isinstance(owner, ir.OpView):
        return owner
    return owner.opview if isinstance(owner, ir.Operation) else None


def _splat_value(value):
    """The number a value holds when it is a splat dl.constant, else None."""
    op = _defining_op(value)
    if not isinstance(op, dl.ConstantOp):
        return None
    attr = op.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr) or not attr.is_splat:
        return None
    element = attr.get_splat_value()
    if isinstance(element, ir.FloatAttr):
        return element.value
    if isinstance(element, ir.IntegerAttr):
        return element.value
    return None


def _is_float(value):
    return isinstance(ir.RankedTensorType(value.type).element_type,
                      (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type))


def _scalar_constant(like, number):
    """A rank-0 dl.constant of `like`'s element type holding `number`."""
    element = ir.RankedTensorType(like.type).element_type
    tensor = ir.RankedTensorType.get([], element)
    attr = (ir.FloatAttr.get(element, number) if _is_float(like)
            else ir.IntegerAttr.get(element, int(number)))
    return dl.ConstantOp(ir.DenseElementsAttr.get_splat(tensor, attr)).result


def _replace(rewriter, op, build):
    """Builds the replacement at `op` (with its location) and replaces it."""
    with rewriter.ip, op.location:
        new = build()
    rewriter.replace_op(op, [new])


# -- dl-simplify -----------------------------------------------------------------


def _simplify_pow(op, rewriter):
    x, exponent = op.lhs, _splat_value(op.rhs)
    if exponent is None or x.type != op.result.type:
        return True
    if exponent == 2:
        _replace(rewriter, op, lambda: dl.MulOp(x, x).result)
    elif exponent == 3:
        _replace(rewriter, op, lambda: dl.MulOp(dl.MulOp(x, x).result, x).result)
    elif exponent == 0.5 and _is_float(x):
        _replace(rewriter, op, lambda: dl.SqrtOp(x).result)
    elif exponent == -1 and _is_float(x):
        _replace(rewriter, op, lambda: dl.DivOp(_scalar_constant(x, 1.0), x).result)
    else:
        return True
    return None


def _simplify_div(op, rewriter):
    x, divisor = op.lhs, _splat_value(op.rhs)
    if (divisor is None or not _is_float(x) or x.type != op.result.type
            or divisor == 0 or not math.isfinite(divisor)):
        return True
    mantissa, _ = math.frexp(abs(divisor))
    if mantissa != 0.5:          # not a power of two: 1/c is inexact
        return True
    _replace(rewriter, op, lambda: dl.MulOp(x, _scalar_constant(x, 1.0 / divisor)).result)
    return None


def _negated(value):
    op = _defining_op(value)
    return op.input if isinstance(op, dl.NegOp) else None


def _simplify_add(op, rewriter):
    lhs, rhs = op.lhs, op.rhs
    if (y := _negated(rhs)) is not None and y.type == rhs.type:
        _replace(rewriter, op, lambda: dl.SubOp(lhs, y).result)
    elif (x := _negated(lhs)) is not None and x.type == lhs.type:
        _replace(rewriter, op, lambda: dl.SubOp(rhs, x).result)
    else:
        return True
    return None


def _simplify_sub(op, rewriter):
    lhs, rhs = op.lhs, op.rhs
    if (y := _negated(rhs)) is not None:
        _replace(rewriter, op, lambda: dl.AddOp(lhs, y).result)
    elif _splat_value(lhs) == 0 and rhs.type == op.result.type:
        _replace(rewriter, op, lambda: dl.NegOp(rhs).result)
    else:
        return True
    return None


def _simplify_mul(op, rewriter):
    for x, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        if _splat_value(other) == -1 and x.type == op.result.type:
            _replace(rewriter, op, lambda: dl.NegOp(x).result)
            return None
    return True


_SIMPLIFY_PATTERNS = [
    (dl.PowOp, _simplify_pow),
    (dl.DivOp, _simplify_div),
    (dl.AddOp, _simplify_add),
    (dl.SubOp, _simplify_sub),
    (dl.MulOp, _simplify_mul),
]


def simplify(op, pass_=None):
    """The dl-simplify pass: runs the patterns above (and the dl folders)."""
    patterns = rewrite.RewritePatternSet(op.context)
    for root, fn in _SIMPLIFY_PATTERNS:
        patterns.add(root, fn)
    rewrite.apply_patterns_and_fold_greedily(op, patterns.freeze())


# -- dl-raise-ops ----------------------------------------------------------------
#
# Exporters and hand-written modules spell layer norm, GELU, SiLU and
# hard-swish as chains of elementwise ops and reductions (ONNX before opset
# 17 has no LayerNormalization, and no Gelu before 20; transformers' GPT-2
# writes its tanh GELU out; the TorchScript exporter writes GELU with Erf).
# dl-raise-ops finds those chains and puts back the one dl op that dlc
# optimizes, so that the same network reaches the same graph from every
# frontend. Each rule checks the constants (within 1e-5 relative) and the
# types (the result has the input's type: nothing broadcast away); anything
# else is left as it is.

def _near(value, target):
    return value is not None and abs(value - target) <= 1e-5 * max(1.0, abs(target))


def _product(value, depth=0):
    """(constant factor, [value factors]) with value = factor * prod(values):
    through dl.mul, and dl.div by a splat constant."""
    op = _defining_op(value)
    if depth < 6 and isinstance(op, dl.MulOp):
        left, right = _product(op.lhs, depth + 1), _product(op.rhs, depth + 1)
        return left[0] * right[0], left[1] + right[1]
    if depth < 6 and isinstance(op, dl.DivOp):
        divisor = _splat_value(op.rhs)
        if divisor:
            factor, values = _product(op.lhs, depth + 1)
            return factor / divisor, values
    number = _splat_value(value)
    if number is not None:
        return float(number), []
    return 1.0, [value]


def _sum_with_constant(value):
    """(other operand, constant) of a dl.add of a splat constant, else None."""
    op = _defining_op(value)
    if not isinstance(op, dl.AddOp):
        return None
    for other, constant in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        number = _splat_value(constant)
        if number is not None:
            return other, float(number)
    return None


def _scaled(value, x, scale):
    """Whether `value` is x * scale (a product of x and constants)."""
    factor, values = _product(value)
    return len(values) == 1 and values[0] == x and _near(factor, scale)


def _is_unary(value, op_class, x):
    op = _defining_op(value)
    return isinstance(op, op_class) and op.input == x


def _one_plus(value, op_class):
    """The input of `op_class` where value = op_class(u) + 1, else None."""
    found = _sum_with_constant(value)
    if found is None or not _near(found[1], 1.0):
        return None
    op = _defining_op(found[0])
    return op.input if isinstance(op, op_class) else None


def _cubed(values, x):
    """Whether the product of `values` is x**3 (x * x * x or pow(x, 3))."""
    count = 0
    for value in values:
        op = _defining_op(value)
        if value == x:
            count += 1
        elif isinstance(op, dl.PowOp) and op.lhs == x and _splat_value(op.rhs) == 3:
            count += 3
        else:
            return False
    return count == 3


def _tanh_gelu_argument(value, x):
    """Whether value = sqrt(2/pi) * (x + 0.044715 x^3), or its factored
    form sqrt(2/pi) * x * (1 + 0.044715 x^2)."""
    factor, values = _product(value)
    if not _near(factor, math.sqrt(2.0 / math.pi)):
        return False
    if len(values) == 1:
        op = _defining_op(values[0])
        if isinstance(op, dl.AddOp):
            for lhs, rhs in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
                cube_factor, cube = _product(rhs)
                if lhs == x and _near(cube_factor, 0.044715) and _cubed(cube, x):
                    return True
        return False
    if len(values) == 2 and x in values:
        rest = values[1] if values[0] == x else values[0]
        found = _sum_with_constant(rest)
        if found is not None and _near(found[1], 1.0):
            square_factor, square = _product(found[0])
            return _near(square_factor, 0.044715) and square == [x, x]
    return False


def _clip(value):
    """(t, low, high) where value = min(max(t, low), high) (either nesting,
    or relu6), else None."""
    op = _defining_op(value)
    if isinstance(op, dl.Relu6Op):
        return op.input, 0.0, 6.0
    for outer, inner, upper in ((dl.MinimumOp, dl.MaximumOp, True),
                                (dl.MaximumOp, dl.MinimumOp, False)):
        if not isinstance(op, outer):
            continue
        for lhs, rhs in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            bound = _splat_value(rhs)
            nested = _defining_op(lhs)
            if bound is None or not isinstance(nested, inner):
                continue
            for t, other in ((nested.lhs, nested.rhs), (nested.rhs, nested.lhs)):
                other_bound = _splat_value(other)
                if other_bound is not None:
                    return (t, float(other_bound), float(bound)) if upper else \
                        (t, float(bound), float(other_bound))
    return None


def _hard_sigmoid_of(value, factor, x):
    """Whether factor * value = clip(x / 6 + 1/2, 0, 1) (hard-swish's gate),
    with value = clip(a * x + b, low, high)."""
    clipped = _clip(value)
    if clipped is None or factor <= 0:
        return False
    t, low, high = clipped
    shifted = _sum_with_constant(t)
    if shifted is None:
        return False
    a, values = _product(shifted[0])
    return (values == [x] and _near(factor * a, 1.0 / 6.0) and _near(factor * shifted[1], 0.5)
            and _near(factor * low, 0.0) and _near(factor * high, 1.0))


def _raise_activation(op, rewriter):
    """x * (1 + erf(x / sqrt 2)) / 2 -> gelu(x); the tanh form ->
    gelu(x, tanh); x * sigmoid(x) -> silu(x); x * hard_sigmoid(x) ->
    hardswish(x)."""
    factor, values = _product(op.result)
    if len(values) != 2 or not _is_float(op.result):
        return True
    for x, other in ((values[0], values[1]), (values[1], values[0])):
        if x.type != op.result.type:
            continue
        if _near(factor, 0.5):
            u = _one_plus(other, dl.ErfOp)
            if u is not None and _scaled(u, x, 1.0 / math.sqrt(2.0)):
                _replace(rewriter, op, lambda: dl.GeluOp(x).result)
                return None
            v = _one_plus(other, dl.TanhOp)
            if v is not None and _tanh_gelu_argument(v, x):
                _replace(rewriter, op, lambda: dl.GeluOp(x, approximate_tanh=True).result)
                return None
        if _near(factor, 1.0) and _is_unary(other, dl.SigmoidOp, x):
            _replace(rewriter, op, lambda: dl.SiluOp(x).result)
            return None
        if _hard_sigmoid_of(other, factor, x):
            _replace(rewriter, op, lambda: dl.HardswishOp(x).result)
            return None
    return True


def _trailing_mean(value, x=None):
    """(input, first axis) of a dl.reduce_mean with keepdims over the
    trailing dimensions (of `x` when given), else None."""
    op = _defining_op(value)
    if not isinstance(op, dl.ReduceMeanOp) or "keepdims" not in op.attributes:
        return None
    if x is not None and op.input != x:
        return None
    rank = ir.RankedTensorType(op.input.type).rank
    axes = sorted(a % rank for a in ir.DenseI64ArrayAttr(op.attributes["axes"]))
    if not axes or axes != list(range(axes[0], rank)):
        return None
    return op.input, axes[0]


def _centered(d):
    """(x, first axis) where d = x - mean(x) over x's trailing dimensions,
    else None."""
    op = _defining_op(d)
    if not isinstance(op, dl.SubOp):
        return None
    found = _trailing_mean(op.rhs, op.lhs)
    return found if found is not None and found[0].type == d.type else None


def _variance_under_sqrt(value, inverse):
    """v where value = sqrt(v), or with `inverse` 1 / sqrt(v) (rsqrt, or 1
    divided by the square root), else None."""
    op = _defining_op(value)
    if not inverse:
        return op.input if isinstance(op, dl.SqrtOp) else None
    if isinstance(op, dl.RsqrtOp):
        return op.input
    if isinstance(op, dl.DivOp) and _near(_splat_value(op.lhs), 1.0):
        return _variance_under_sqrt(op.rhs, False)
    return None


def _layer_norm_variance(variance, d, x, axis):
    shifted = _sum_with_constant(variance)
    if shifted is None or shifted[1] < 0:
        return None
    found = _trailing_mean(shifted[0])
    if found is None or found[1] != axis:
        return None
    square = _defining_op(found[0])
    if not ((isinstance(square, dl.MulOp) and _same(square.lhs, d) and _same(square.rhs, d))
            or (isinstance(square, dl.PowOp) and _same(square.lhs, d)
                and _splat_value(square.rhs) == 2)):
        return None
    return x, axis, shifted[1]


def _attributes(op):
    attributes = op.operation.attributes
    return sorted((name, str(attributes[name])) for name in attributes)


def _same(a, b):
    """Whether a and b are one value, or the results of two identical ops on
    the same operands (x - mean written twice, before CSE has run)."""
    if a == b:
        return True
    op_a, op_b = _defining_op(a), _defining_op(b)
    if op_a is None or op_b is None or op_a.operation.name != op_b.operation.name or \
            len(op_a.results) != 1 or a.type != b.type:
        return False
    return (list(op_a.operands) == list(op_b.operands)
            and _attributes(op_a) == _attributes(op_b)
            and op_a.operation.name.startswith("dl.") and not op_a.regions)


def _normalized_constant(x, axis, number):
    shape = ir.RankedTensorType(x.type).shape[axis:]
    element = ir.RankedTensorType(x.type).element_type
    tensor = ir.RankedTensorType.get(shape, element)
    return dl.ConstantOp(ir.DenseElementsAttr.get_splat(
        tensor, ir.FloatAttr.get(element, number))).result


def _emit_layer_norm(x, gamma, beta, axis, eps):
    return dl.LayerNormOp(x, gamma, beta,
                          ir.IntegerAttr.get(ir.IntegerType.get_signless(64), axis),
                          ir.FloatAttr.get(ir.F64Type.get(), eps)).result


def _raise_layer_norm(op, rewriter):
    """(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) over the trailing
    dimensions (or times rsqrt(...)) -> layer_norm(x) (scale 1, bias 0: the
    affine part folds in next)."""
    if not _is_float(op.result):
        return True
    if isinstance(op, dl.DivOp):
        candidates = [(op.lhs, _variance_under_sqrt(op.rhs, False))]
    else:
        candidates = [(op.lhs, _variance_under_sqrt(op.rhs, True)),
                      (op.rhs, _variance_under_sqrt(op.lhs, True))]
    for d, variance in candidates:
        found = _centered(d) if variance is not None else None
        parts = _layer_norm_variance(variance, d, *found) if found is not None else None
        if parts is None:
            continue
        x, axis, eps = parts
        if x.type != op.result.type or None in _static_dims(x)[axis:]:
            continue
        _replace(rewriter, op, lambda: _emit_layer_norm(
            x, _normalized_constant(x, axis, 1.0), _normalized_constant(x, axis, 0.0),
            axis, eps))
        return None
    return True


def _static_dims(value):
    shape = ir.RankedTensorType(value.type).shape
    return [None if ir.ShapedType.is_dynamic_size(d) else d for d in shape]


def _as_normalized(value, x, axis):
    """`value` (broadcasting against x's normalized dimensions only) as a
    tensor of those dimensions, else None."""
    normalized = _static_dims(x)[axis:]
    shape = _static_dims(value)
    if None in shape or len(shape) > len(_static_dims(x)):
        return None
    lead = len(shape) - len(normalized)
    if lead > 0 and any(d != 1 for d in shape[:lead]):
        return None
    trailing = shape[lead:] if lead > 0 else shape
    if any(d not in (1, n) for d, n in zip(reversed(trailing), reversed(normalized))):
        return None
    element = ir.RankedTensorType(x.type).element_type
    if ir.RankedTensorType(value.type).element_type != element:
        return None

    def build():
        result = value
        if lead > 0:
            result = dl.ReshapeOp(result, trailing, []).result
        if list(trailing) != list(normalized):
            result = dl.BroadcastToOp(result, list(normalized), []).result
        return result
    return build


def _fold_layer_norm_affine(op, rewriter):
    """layer_norm(x, g, b) * s -> layer_norm(x, g * s, b * s) and
    layer_norm(x, g, b) + t -> layer_norm(x, g, b + t), for s, t that
    broadcast along the normalized dimensions only."""
    for norm_value, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        norm = _defining_op(norm_value)
        if not isinstance(norm, dl.LayerNormOp) or norm.result.type != op.result.type:
            continue
        if len(list(norm_value.uses)) != 1:
            continue
        axis = ir.IntegerAttr(norm.attributes["axis"]).value
        build = _as_normalized(other, norm.input, axis)
        if build is None:
            continue
        eps = ir.FloatAttr(norm.attributes["epsilon"]).value

        def rebuilt():
            extra = build()
            if isinstance(op, dl.MulOp):
                gamma = dl.MulOp(norm.gamma, extra).result
                # a zero bias stays zero (0 * s would be NaN where s is inf)
                beta = norm.beta if _splat_value(norm.beta) == 0 else \
                    dl.MulOp(norm.beta, extra).result
            else:
                gamma, beta = norm.gamma, dl.AddOp(norm.beta, extra).result
            return _emit_layer_norm(norm.input, gamma, beta, axis, eps)
        _replace(rewriter, op, rebuilt)
        return None
    return True


def _raise_mul(op, rewriter):
    if _raise_activation(op, rewriter) is None:
        return None
    if _raise_layer_norm(op, rewriter) is None:
        return None
    return _fold_layer_norm_affine(op, rewriter)


def _raise_div(op, rewriter):
    if _raise_activation(op, rewriter) is None:
        return None
    return _raise_layer_norm(op, rewriter)


#: ops whose results are finite where their operands are (overflow aside)
_FINITE_OPS = frozenset("dl." + name for name in (
    "add sub mul matmul conv2d reshape transpose slice concat broadcast_to "
    "layer_norm gelu relu relu6 silu sigmoid tanh erf hardswish leaky_relu softmax "
    "reduce_mean reduce_sum reduce_max reduce_min neg abs maximum minimum cast gather "
    "where avg_pool2d max_pool2d").split())

#: ops whose results are never infinite, whatever their operands (bounded,
#: or NaN at worst: a NaN is no -inf, and PyTorch's safe softmax leaves NaN
#: rows NaN)
_BOUNDED_OPS = frozenset("dl." + name for name in (
    "softmax sigmoid tanh erf isnan isinf equal not_equal less less_equal greater "
    "greater_equal logical_and logical_or logical_xor logical_not").split())


def _constant_array(value, attr):
    """A float constant's elements as numpy (a splat as one element), NaN
    where they cannot be read (a resource blob, a type numpy lacks): then
    nothing is proven about them."""
    import numpy as np
    number = _splat_value(value)
    if number is not None:
        return np.array([float(number)])
    try:
        array = np.asarray(attr)  # the attribute's buffer, not a copy
        if array.dtype.kind != "f":
            array = array.astype(np.float64)
        return array.reshape(-1)
    except Exception:  # noqa: BLE001 - unreadable: unknown
        return np.array([np.nan])


#: whether each constant attribute dl-raise-ops has read in the current run
#: (per thread) is free of infinities: every softmax of a network searches
#: back through the same weights (GPT-2: 12 searches over 500 MB of weights,
#: read as float64 each time, took 2.1 s). Attributes are uniqued and live
#: as long as their context, so one is never mistaken for another (a Value
#: of an erased op could be).
_checked = threading.local()


def _constant_finite(value, attr):
    memo = getattr(_checked, "attributes", None)
    if memo is not None and attr in memo:
        return memo[attr]
    import numpy as np
    finite = bool(np.all(np.isfinite(_constant_array(value, attr))))
    if memo is not None:
        memo[attr] = finite
    return finite


def _finite(value):
    """Whether `value` is never infinite where the function's arguments are
    finite (no constant holds an infinity, no op makes one but by overflow;
    NaN may be), searched back through the ops above, iteratively (a network
    is deep), down to bounded ops."""
    stack, seen = [value], set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        op = _defining_op(current)
        if op is None:
            continue  # a function argument: finite by assumption
        name = op.operation.name
        if name in _BOUNDED_OPS:
            continue
        if name == "dl.constant":
            attr = op.attributes["value"]
            if _is_float(current) and not _constant_finite(current, attr):
                return False
            continue
        if name == "dl.div" and _splat_value(op.operation.operands[1]) not in (None, 0):
            stack.append(op.operation.operands[0])
            continue
        if name not in _FINITE_OPS or len(seen) > 20000:
            return False
        stack.extend(op.operation.operands)
    return True


def _unguard_softmax(op, rewriter):
    """where(isnan(softmax(s)), 0, softmax(s)) -> softmax(s) where s is
    finite (no row of s is all -inf: nothing to guard). PyTorch's attention
    decomposes to this safe softmax even without a mask; its ONNX exporter
    writes a plain Softmax there."""
    condition, zero, y = op.operation.operands
    isnan, softmax = _defining_op(condition), _defining_op(y)
    if not isinstance(isnan, dl.IsNanOp) or isnan.input != y or \
            not isinstance(softmax, dl.SoftmaxOp) or _splat_value(zero) != 0 or \
            y.type != op.result.type:
        return True
    if not (_finite(softmax.input) or _masked_by_constant(softmax)):
        return True
    rewriter.replace_op(op, [y])
    return None


def _masked_by_constant(softmax):
    """Whether the softmax's input is finite + a constant mask that leaves
    every row some finite entry (a causal mask: -inf above the diagonal)."""
    import numpy as np
    add = _defining_op(softmax.input)
    if not isinstance(add, dl.AddOp):
        return False
    rank = ir.RankedTensorType(softmax.input.type).rank
    axis = ir.IntegerAttr(softmax.attributes["axis"]).value % rank
    for other, mask in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        constant = _defining_op(mask)
        if not isinstance(constant, dl.ConstantOp) or not _is_float(mask):
            continue
        shape = ir.RankedTensorType(mask.type).shape
        values = _constant_array(mask, constant.attributes["value"])
        if values.size == 1:
            values = np.broadcast_to(values, shape)
        elif values.size == int(np.prod(shape)):
            values = values.reshape(shape)
        else:
            continue
        if np.any(np.isnan(values)) or np.any(values == np.inf):
            continue
        along = axis - (rank - len(shape))
        masked = values == -np.inf
        rows = masked if along < 0 or shape[along] == 1 else np.all(masked, axis=along)
        if not np.any(rows) and _finite(other):
            return True
    return False


def raise_ops(op, pass_=None):
    """The dl-raise-ops pass."""
    patterns = rewrite.RewritePatternSet(op.context)
    patterns.add(dl.MulOp, _raise_mul)
    patterns.add(dl.DivOp, _raise_div)
    patterns.add(dl.AddOp, _fold_layer_norm_affine)
    patterns.add(dl.WhereOp, _unguard_softmax)
    _checked.attributes = {}
    try:
        rewrite.apply_patterns_and_fold_greedily(op, patterns.freeze())
    finally:
        _checked.attributes = None


# -- dl-fusion-report ------------------------------------------------------------

#: dl ops computed elementwise: candidates for fusion with each other.
ELEMENTWISE = frozenset(
    "dl." + name for name in (
        "add sub mul div pow maximum minimum equal not_equal less less_equal "
        "greater greater_equal where relu relu6 abs neg exp log sqrt rsqrt erf "
        "tanh sigmoid silu hardswish leaky_relu gelu cast batch_norm "
        "sin cos tan asin acos atan sinh cosh asinh acosh atanh floor ceil round "
        "sign isnan isinf logical_not logical_and logical_or logical_xor "
        "bitwise_not bitwise_and bitwise_or bitwise_xor remainder fmod "
        "quantize dequantize").split())

#: ops that are neither computed nor fused (they become no loop nest).
_NO_KERNEL = frozenset(["dl.constant", "dl.reshape", "func.return"])


def _computes(op):
    """Whether `op` becomes a loop nest: not a constant, a return, or a view
    (reshapes, and slices with positive strides, bufferize to views)."""
    name = op.operation.name
    if name in _NO_KERNEL:
        return False
    if name == "dl.slice":
        return any(stride <= 0 for stride in ir.DenseI64ArrayAttr(op.attributes["strides"]))
    return True

FUSION_GROUP = "dl.fusion_group"


def _fused_into_consumer(op):
    """The consumer `op` (elementwise, one result) is fused into, if any."""
    if op.operation.name not in ELEMENTWISE:
        return None
    uses = list(op.result.uses)
    if len(uses) != 1:
        return None
    consumer = uses[0].owner
    if consumer.name not in ELEMENTWISE:
        return None
    # The consumer reads each element of `op` once: no broadcasting of op's
    # result to a larger shape.
    if ir.RankedTensorType(op.result.type).shape != ir.RankedTensorType(
            consumer.results[0].type).shape:
        return None
    return consumer


def fusion_groups(func):
    """Groups of the ops of one function: a list of lists of operations, in
    program order of each group's last op (the kernel that computes it)."""
    group_of = {}
    groups = []
    ops = [op for op in func.regions[0].blocks[0].operations if _computes(op)]
    # Walk backwards: a producer joins its (unique) consumer's group.
    for op in reversed(ops):
        consumer = _fused_into_consumer(op)
        if consumer is not None and consumer in group_of:
            group = group_of[consumer]
        else:
            group = []
            groups.append(group)
        group.append(op.operation)
        group_of[op.operation] = group
    for group in groups:
        group.reverse()
    groups.reverse()
    return groups


def fusion_report_pass(op, pass_=None):
    """The dl-fusion-report pass: annotates every computing dl op with
    ``dl.fusion_group = <index>`` within its function."""
    i64 = ir.IntegerType.get_signless(64, op.context)
    for func in _functions(op):
        for index, group in enumerate(fusion_groups(func)):
            for member in group:
                member.attributes[FUSION_GROUP] = ir.IntegerAttr.get(i64, index)


def fusion_report(module):
    """A text report of the fusion groups of every function of `module`."""
    lines = []
    for func in _functions(module.operation):
        name = ir.StringAttr(func.attributes["sym_name"]).value
        groups = fusion_groups(func)
        ops = sum(len(group) for group in groups)
        lines.append(f"@{name}: {ops} ops in {len(groups)} kernels "
                     f"({ops - len(groups)} fused away)")
        for index, group in enumerate(groups):
            names = " + ".join(member.name.removeprefix("dl.") for member in group)
            lines.append(f"  kernel {index}: {names}")
    return "\n".join(lines)


def _functions(op):
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                if child.operation.name == "func.func":
                    yield child.operation


# -- registration ----------------------------------------------------------------

#: The Python passes by pipeline argument: (function, description).
PYTHON_PASSES = {
    "dl-simplify": (simplify, "Algebraic simplification of dl ops (strength "
                    "reduction, negations absorbed into add/sub)"),
    "dl-raise-ops": (raise_ops, "Raise decomposed layer norms, GELUs, SiLUs and "
                     "hard-swishes to their dl ops"),
    "dl-fusion-report": (fusion_report_pass, "Mark each dl op with the fusion "
                         "group (kernel) it is compiled in"),
}
# dlc.autodiff adds "dl-autodiff" when it is imported (as `import dlc` does):
# it builds ops with dlc.ops and compiles with dlc.jit, which import this.


def add_pass(pm, argument):
    """Appends the Python pass `argument` (a key of PYTHON_PASSES) to `pm`."""
    fn, description = PYTHON_PASSES[argument]
    pm.add(fn, name=argument, argument=argument, description=description)
