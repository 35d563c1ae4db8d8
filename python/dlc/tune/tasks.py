"""Tuning tasks: the compute-heavy ops of a compiled function, by signature.

A *task* is one distinct op signature at the graph stage, where
``dl-select-strategies`` has written each op's ``#dl.strategy``: the op's
name, operand and result types (and which operands are constants: a
constant weight is packed at compile time, an argument at every call), its
attributes but the strategy, and the target. Two ops of one signature (the
twelve identical layers of BERT) are one task of weight two. The signature,
hashed, is the *workload* key of the records database (:mod:`.records`).

A task compiles on its own as a ``dl`` module of one function: the op with
its non-constant operands as arguments and its constant ones as constants
of random values (seeded), the op marked ``dl.tune_site`` so that a builder
can write a candidate strategy on it.
"""

import hashlib
from dataclasses import dataclass, field

import numpy as np

from .. import dtypes
from ..mlir import ir

#: ops whose strategy carries parameters worth searching
TUNABLE_OPS = ("dl.matmul", "dl.conv2d")
#: kinds with a register tile (rows x vectors, cache blocks) to search
TILED_KINDS = ("register_tiled_gemm", "im2col_gemm", "direct")
#: attributes that are not part of an op's workload
_NOT_WORKLOAD = ("dl.strategy", "dl.tuned", "dl.fusion_group", "dl.tune_site")


def digest(text, size=16):
    """A short hex digest of `text` (the records' keys)."""
    return hashlib.blake2b(text.encode(), digest_size=size // 2).hexdigest()


def target_key(target):
    """The key of a :class:`dlc.Target` (its complete description)."""
    return digest(str(target))


def _owner_name(value):
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return getattr(owner, "operation", owner).name


def _is_constant(value):
    return _owner_name(value) == "dl.constant"


def strategy_kind(strategy_text):
    """The `kind` of a #dl.strategy's text."""
    start = strategy_text.index("kind = ") + len("kind = ")
    end = start
    while end < len(strategy_text) and (strategy_text[end].isalnum() or strategy_text[end] == "_"):
        end += 1
    return strategy_text[start:end]


def signature_of(op):
    """The workload text of `op` (an ir.Operation at the graph stage)."""
    operands = ", ".join(("const " if _is_constant(v) else "") + str(v.type)
                         for v in op.operands)
    results = ", ".join(str(r.type) for r in op.results)
    attributes = ", ".join(f"{name} = {op.attributes[name]}"
                           for name in sorted(op.attributes) if name not in _NOT_WORKLOAD)
    return f"{op.name}({operands}) -> ({results}) {{{attributes}}}"


def _near_softmax(value, depth, forward):
    """Whether a dl.softmax is within `depth` single-operand steps of
    `value`: after it (its users) or before it (its producers)."""
    if depth == 0:
        return False
    if forward:
        for use in value.uses:
            user = use.owner
            name = getattr(user, "operation", user).name
            if name == "dl.softmax":
                return True
            if any(_near_softmax(r, depth - 1, True) for r in user.results):
                return True
        return False
    owner = value.owner
    if isinstance(owner, ir.Block):
        return False
    owner = getattr(owner, "operation", owner)
    if owner.name == "dl.softmax":
        return True
    return any(_near_softmax(v, depth - 1, False) for v in owner.operands)


def in_attention(op):
    """Whether `op` is a product of attention (scores computed from two
    activations into a softmax, or the softmax's probabilities times V):
    dl-fuse-attention computes those by blocks of query rows, so a
    measurement of the whole product alone would not be what runs."""
    if op.name != "dl.matmul" or _is_constant(op.operands[1]):
        return False
    return _near_softmax(op.results[0], 4, True) or _near_softmax(op.operands[0], 4, False)


def tunable_ops(module):
    """The ops of `module` (graph stage) whose strategy can be tuned, in
    program order: f32 matmuls and convolutions of static shapes with a
    register tile, but attention's products (in_attention)."""
    found = []

    def visit(op):
        if op.name in TUNABLE_OPS and "dl.strategy" in op.attributes and not in_attention(op):
            kind = strategy_kind(str(op.attributes["dl.strategy"]))
            element = ir.ShapedType(op.results[0].type).element_type
            if kind in TILED_KINDS and isinstance(element, ir.F32Type) and \
                    all(ir.ShapedType(v.type).has_static_shape for v in op.operands):
                found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def _shape(value_type):
    return tuple(ir.ShapedType(value_type).shape)


def gemm_view(name, operand_shapes, result_shape, attributes):
    """(batch, M, N, K) of the product an op computes: a matmul's own, a
    convolution's as im2col sees it (M output pixels, N filters, K the
    window times the input channels per group)."""
    if name == "dl.matmul":
        a, b = operand_shapes[0], operand_shapes[1]
        m = a[-2] if len(a) >= 2 else 1
        k = a[-1]
        n = b[-1] if len(b) >= 2 else 1
        batch = int(np.prod(result_shape[:-2])) if len(result_shape) > 2 else 1
        return batch, int(m), int(n), int(k)
    filt = operand_shapes[1]
    layout = attributes.get("layout", "NCHW")
    groups = int(attributes.get("groups", 1))
    if layout == "NHWC":  # filter HWIO, result NHWC
        kh, kw, c, f = filt
        pixels = result_shape[0] * result_shape[1] * result_shape[2]
    else:  # filter OIHW, result NCHW
        f, c, kh, kw = filt
        pixels = result_shape[0] * result_shape[2] * result_shape[3]
    return groups, int(pixels), int(f // max(groups, 1)), int(kh * kw * c)


@dataclass
class Task:
    """One tuning task: an op signature and where it occurs."""

    #: the workload text (signature_of) and its key
    signature: str
    workload: str
    #: "dl.matmul" or "dl.conv2d"
    op_name: str
    #: the heuristic's #dl.strategy text (dl-select-strategies)
    heuristic: str
    #: operand types (text), shapes, numpy dtypes, and which are constants
    operand_types: list
    operand_shapes: list
    operand_dtypes: list
    constant: list
    result_type: str
    result_shape: tuple
    #: the op's attributes but the strategy ({name: text}; ints as ints)
    attributes: dict
    #: the op's generic text with its operands as %arg0.. (module_text)
    op_text: str
    #: the target's complete description and key
    target: str
    target_key: str
    #: how many ops of the function share the signature
    count: int = 1
    #: where each occurs (locations, text)
    locations: list = field(default_factory=list)

    @property
    def gemm(self):
        """(batch, M, N, K) of the product (gemm_view)."""
        return gemm_view(self.op_name, self.operand_shapes, self.result_shape,
                         self.attributes)

    @property
    def flops(self):
        batch, m, n, k = self.gemm
        return 2.0 * batch * m * n * k

    def describe(self):
        batch, m, n, k = self.gemm
        what = "matmul" if self.op_name == "dl.matmul" else "conv2d"
        head = f"{batch} x " if batch > 1 else ""
        return f"{what} {head}{m}x{n}x{k} (x{self.count})"

    def module_text(self, seed=0):
        """The task as a dl module of one function @task: non-constant
        operands are its arguments, constant ones constants of random
        values (seeded); the op carries the heuristic strategy and
        ``dl.tune_site``."""
        rng = np.random.default_rng(seed)
        args, lines, names = [], [], []
        for index, (text, shape, dtype, const) in enumerate(zip(
                self.operand_types, self.operand_shapes, self.operand_dtypes,
                self.constant)):
            if const:
                values = rng.standard_normal(shape).astype(dtype) if np.dtype(dtype).kind == "f" \
                    else rng.integers(-3, 4, shape).astype(dtype)
                hexed = np.ascontiguousarray(values).tobytes().hex().upper()
                lines.append(f'    %c{index} = dl.constant dense<"0x{hexed}"> : {text}')
                names.append(f"%c{index}")
            else:
                args.append(f"%a{index}: {text}")
                names.append(f"%a{index}")
        op = self.op_text
        for index in reversed(range(len(names))):
            op = op.replace(f"%arg{index}", names[index])
        lines.append(f"    %r = {op}")
        body = "\n".join(lines)
        return (f"module attributes {{dl.target = {self.target}}} {{\n"
                f"  func.func @task({', '.join(args)}) -> {self.result_type} "
                f"attributes {{llvm.emit_c_interface}} {{\n{body}\n"
                f"    return %r : {self.result_type}\n  }}\n}}\n")


def _op_text(op):
    """`op`'s generic form with operands %arg0.., the heuristic strategy and
    ``dl.tune_site``, no fusion group."""
    attributes = [f"{name} = {op.attributes[name]}" for name in sorted(op.attributes)
                  if name not in ("dl.fusion_group", "dl.tuned", "dl.tune_site")]
    attributes.append("dl.tune_site")
    operands = ", ".join(f"%arg{i}" for i in range(len(op.operands)))
    types = ", ".join(str(v.type) for v in op.operands)
    return (f'"{op.name}"({operands}) {{{", ".join(attributes)}}} : '
            f"({types}) -> {op.results[0].type}")


def _attribute_values(op):
    values = {}
    for name in op.attributes:
        if name in _NOT_WORKLOAD:
            continue
        attr = op.attributes[name]
        if isinstance(attr, ir.IntegerAttr):
            values[name] = ir.IntegerAttr(attr).value
        elif isinstance(attr, ir.StringAttr):
            values[name] = ir.StringAttr(attr).value
        else:
            values[name] = str(attr)
    return values


def extract_tasks(module, target):
    """The tasks of `module` (graph stage, compiled for the dlc.Target
    `target`), most expensive first (FLOPs x count)."""
    tasks = {}
    tkey = target_key(target)
    for op in tunable_ops(module):
        signature = signature_of(op)
        workload = digest(signature)
        location = str(op.location)
        if workload in tasks:
            tasks[workload].count += 1
            tasks[workload].locations.append(location)
            continue
        operand_types = [str(v.type) for v in op.operands]
        tasks[workload] = Task(
            signature=signature, workload=workload, op_name=op.name,
            heuristic=str(op.attributes["dl.strategy"]),
            operand_types=operand_types,
            operand_shapes=[_shape(v.type) for v in op.operands],
            operand_dtypes=[dtypes.from_mlir(ir.ShapedType(v.type).element_type).name
                            for v in op.operands],
            constant=[_is_constant(v) for v in op.operands],
            result_type=str(op.results[0].type),
            result_shape=_shape(op.results[0].type),
            attributes=_attribute_values(op), op_text=_op_text(op),
            target=str(target), target_key=tkey, locations=[location])
    return sorted(tasks.values(), key=lambda t: -t.flops * t.count)
