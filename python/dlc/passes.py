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


# -- dl-fusion-report ------------------------------------------------------------

#: dl ops computed elementwise: candidates for fusion with each other.
ELEMENTWISE = frozenset(
    "dl." + name for name in (
        "add sub mul div pow maximum minimum equal not_equal less less_equal "
        "greater greater_equal where relu relu6 abs neg exp log sqrt rsqrt erf "
        "tanh sigmoid silu hardswish leaky_relu gelu cast batch_norm "
        "sin cos tan asin acos atan sinh cosh asinh acosh atanh floor ceil round "
        "sign isnan isinf logical_not logical_and logical_or logical_xor "
        "bitwise_not bitwise_and bitwise_or bitwise_xor remainder fmod").split())

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
    "dl-fusion-report": (fusion_report_pass, "Mark each dl op with the fusion "
                         "group (kernel) it is compiled in"),
}
# dlc.autodiff adds "dl-autodiff" when it is imported (as `import dlc` does):
# it builds ops with dlc.ops and compiles with dlc.jit, which import this.


def add_pass(pm, argument):
    """Appends the Python pass `argument` (a key of PYTHON_PASSES) to `pm`."""
    fn, description = PYTHON_PASSES[argument]
    pm.add(fn, name=argument, argument=argument, description=description)
