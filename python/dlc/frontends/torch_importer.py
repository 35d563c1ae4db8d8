"""PyTorch importer: an ``nn.Module`` into `dl` through ``torch.export``.

``torch.export`` captures the module's forward as a graph of ATen operators
(its training IR: composites such as conv2d, batch_norm, layer_norm, and
in-place ops). Where every op of that graph has a converter it is imported
as it is (``_direct``); otherwise ``run_decompositions()`` first lowers it to
the core ATen set (a re-trace of the whole program, seconds). The graph is then
interpreted node by node inside a :func:`dlc.jit` trace with the converters
of :mod:`dlc.frontends.torch_ops`; each op is located at the line of the
module's source (the FX node's stack trace) that produced it. Parameters and
buffers become constants (the graph passes fold batch norms into
convolutions) unless ``params="arguments"``.
"""

import functools
import operator
import os

import numpy as np

from .. import dtypes
from ..errors import (DataDependentShapeError, DLCError, DynamicDimensionError,
                      ModelImportError, ShapeError, UnsupportedOpError)
from ..tracing import Size, Tensor, located
from . import torch_ops
from .common import ImportedFunction, count_uses, raise_unsupported

__all__ = ["from_torch"]

_TORCH_DIR = None


def _torch_dir():
    global _TORCH_DIR
    if _TORCH_DIR is None:
        import torch
        _TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
    return _TORCH_DIR


def source_location(node):
    """(file, line, column) of the user's source line an FX node comes from:
    the innermost frame of its stack trace outside torch itself."""
    return _location_in(node.meta.get("stack_trace") or "")


@functools.lru_cache(maxsize=4096)
def _location_in(trace):
    """source_location of a stack trace's text (memoized: the layers of a
    model share their traces, and parsing each was 10 ms of GPT-2's 0.1 s
    trace)."""
    best = None
    for line in trace.splitlines():
        line = line.strip()
        if line.startswith('File "'):
            try:
                path, rest = line[6:].split('", line ', 1)
                number = int(rest.split(",", 1)[0])
            except ValueError:
                continue
            if not os.path.abspath(path).startswith(_torch_dir() + os.sep):
                best = (path, number, 0)
    return best or ("<torch.export>", 0, 0)


def _describe(location):
    path, line, _ = location
    return f"{path}:{line}" if line else path


def _key(node):
    target = node.target
    if isinstance(target, str):
        return target
    if getattr(target, "__module__", None) in ("_operator", "operator"):
        return f"operator.{target.__name__}"
    return str(target)


def _to_numpy(tensor):
    import torch
    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(dtypes.BFLOAT16)
    return tensor.numpy()


def from_torch(module, *example_args, dynamic_batch=False, dynamic_shapes=None,
               params="constants", **jit_kwargs):
    """Compiles a PyTorch module with dlc, through ``torch.export``.

    Args:
      module: a ``torch.nn.Module`` in eval mode (dlc compiles inference:
        batch norms use their running statistics, dropout is off).
      *example_args: example inputs (torch tensors or numpy arrays) of the
        shapes and dtypes the module will be called with; the module is
        exported for them.
      dynamic_batch: ``True`` exports the leading dimension of every input as
        one dynamic ``torch.export.Dim``, so one compiled version serves every
        batch size.
      dynamic_shapes: any dimensions dynamic, as ``torch.export.export``
        takes them (e.g. ``{"input_ids": {0: batch, 1: seq}}`` with
        ``torch.export.Dim`` objects): one compiled version serves every size
        torch.export allows, through attention, reshapes, slices and
        gathers; a call checks that the inputs agree on each dimension (and
        names it when they do not). Not with `dynamic_batch`.
      params: ``"constants"`` (default) bakes parameters and buffers into the
        compiled code (constant folding applies); ``"arguments"`` passes them
        at each call, read from the module then (so updated weights are seen).
      **jit_kwargs: as for :func:`dlc.jit`.

    Returns an :class:`~dlc.frontends.common.ImportedFunction` taking the
    module's inputs (numpy arrays or torch tensors) and returning numpy
    arrays. Raises :class:`dlc.UnsupportedOpError` listing every ATen
    operator dlc does not support, with its count and source lines.
    """
    import torch
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"dlc.from_torch expects a torch.nn.Module, but got "
                        f"{type(module).__name__}")
    # A module torch.export made (ExportedProgram.module(), PT2E's convert_pt2e)
    # fixed train or eval when it was exported; its .training means nothing
    # (and torch forbids .eval() on it).
    # torch marks such a module by replacing its train/eval methods.
    exported = isinstance(module, torch.fx.GraphModule) and (
        hasattr(module, "range_constraints") or "eval" in vars(module))
    if module.training and not exported:
        raise ModelImportError(
            f"dlc.from_torch: {type(module).__name__} is in training mode; dlc compiles "
            f"inference: call .eval() on it first")
    if params not in ("constants", "arguments"):
        raise ValueError(f"params must be 'constants' or 'arguments', but got {params!r}")
    args = tuple(torch.from_numpy(np.ascontiguousarray(a)) if isinstance(a, np.ndarray)
                 else a for a in example_args)
    for index, a in enumerate(args):
        if not isinstance(a, torch.Tensor):
            raise TypeError(f"dlc.from_torch: example argument {index} is a "
                            f"{type(a).__name__}; example arguments are tensors")
    if dynamic_batch and dynamic_shapes is not None:
        raise ValueError("dlc.from_torch: give dynamic_batch or dynamic_shapes, not both "
                         "(dynamic_shapes can make the batch dynamic too)")
    if dynamic_batch:
        dynamic_shapes = _batch_shapes(module, args, torch.export.Dim("batch"))
    try:
        program = torch.export.export(module, args, dynamic_shapes=dynamic_shapes)
    except Exception as error:  # noqa: BLE001 - torch's own message, with context
        raise ModelImportError(f"dlc.from_torch: torch.export could not capture "
                               f"{type(module).__name__}: {type(error).__name__}: "
                               f"{error}") from None
    writes = _direct(program)
    if writes is None:
        program, writes = _decompose(program, type(module).__name__), {}
    return _import_program(program, module, args, params, dynamic_batch, jit_kwargs, writes)


def _batch_shapes(module, args, batch):
    """torch.export's dynamic_shapes making dimension 0 of every tensor
    argument `batch`, in the structure of forward's signature (a `*args`
    parameter takes a tuple of them)."""
    import inspect
    spec = [{0: batch} if a.dim() else None for a in args]
    try:
        parameters = list(inspect.signature(module.forward).parameters.values())
    except (TypeError, ValueError):
        return tuple(spec)
    shapes, position = {}, 0
    for parameter in parameters:
        if position >= len(spec):
            break
        if parameter.kind == inspect.Parameter.VAR_POSITIONAL:
            shapes[parameter.name] = tuple(spec[position:])
            position = len(spec)
        elif parameter.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                inspect.Parameter.POSITIONAL_OR_KEYWORD):
            shapes[parameter.name] = spec[position]
            position += 1
    return shapes if position == len(spec) else tuple(spec)


#: core ATen ops torch's table decomposes that dlc keeps whole: each is one
#: dl op (or the form the ONNX importer gives the same ONNX op), so both
#: frontends reach one graph (hard-swish as dl.hardswish, not x * clamp(x +
#: 3, 0, 6) / 6; the attention's safe softmax without a row reduction;
#: torch.roll as ONNX's slices and concatenation, not a gather of computed
#: indices)
KEPT_OPS = ("hardswish", "hardsigmoid", "silu", "_safe_softmax", "roll")


def _decompositions():
    import torch
    table = torch.export.default_decompositions()
    for name in KEPT_OPS:
        table.pop(getattr(torch.ops.aten, name).default, None)
    return table


#: composite ops of torch.export's graph whose result is always a new tensor
#: (their schemas cannot say so: composites may return their input, as
#: dropout in eval mode does)
_FRESH_COMPOSITES = {
    "aten.conv1d.default", "aten.conv2d.default", "aten.conv3d.default",
    "aten.linear.default", "aten.matmul.default", "aten.batch_norm.default",
    "aten.layer_norm.default", "aten.group_norm.default", "aten.softmax.int",
    "aten.log_softmax.int", "aten.scaled_dot_product_attention.default",
    "aten.adaptive_avg_pool2d.default"}


def _op_of(node):
    return node.target if node.op == "call_function" and hasattr(node.target, "_schema") \
        else None


def _fresh(node):
    """Whether `node`'s value is a new tensor, never a view of an input."""
    op = _op_of(node)
    if op is None:
        return False
    if _key(node) in _FRESH_COMPOSITES:
        return True
    import torch
    if torch._C._dispatch_has_kernel_for_dispatch_key(op.name(),
                                                      "CompositeImplicitAutograd"):
        return False
    return all(r.alias_info is None for r in op._schema.returns)


def _in_place(node):
    """The functional op's converter key of an in-place ATen op writing its
    first argument (``relu_``, ``add_.Tensor``), or None."""
    op = _op_of(node)
    if op is None:
        return None
    schema = op._schema
    writes = [a for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write]
    if len(writes) != 1 or writes[0] is not schema.arguments[0] or \
            not schema.name.split("::")[-1].endswith("_"):
        return None
    name, overload = _key(node).rsplit(".", 1)
    return f"{name[:-1]}.{overload}"


def _direct(program):
    """Whether torch.export's graph can be imported as it is, without
    ``run_decompositions`` (which re-traces the program: seconds of a cold
    compile): every op has a converter (torch_ops' table covers the
    composites of the training IR: conv2d, batch_norm, layer_norm, dropout,
    ...) and every in-place op (``relu_``, ``add_``) writes a tensor no view
    shares. Returns {in-place node name: names of the values it overwrites},
    or None where the program takes the decomposition path.

    An in-place op's value replaces every alias of the tensor it writes from
    that node on (the tensor itself and earlier in-place results on it); the
    tensor must be a new one (not an input, a parameter or a view), and any
    view of it (any user that is not a new tensor) must come after its last
    write, so that no view can see a value other than the one dlc gives it.
    An ``aten.alias`` of a new tensor (a slice of the whole tensor:
    GhostNet's ``cat(...)[:, :c] += shortcut``) is that tensor under another
    name: it joins the tensor's aliases, and a write through it replaces
    both."""
    graph = program.graph_module.graph
    order = {node: position for position, node in enumerate(graph.nodes)}
    base, groups = {}, {}
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        key = _key(node)
        if key in torch_ops.CONVERTERS:
            when = torch_ops.TRAINING_IR_WHEN.get(key)
            if when is not None and not when(node):
                return None
            source = node.args[0] if node.args else None
            if key == "aten.alias.default" and hasattr(source, "op") and \
                    (source in base or _fresh(source)):
                root = base.get(source, source)
                base[node] = root
                groups.setdefault(root, [root]).append(node)
            continue
        functional = _in_place(node)
        if functional is None or functional not in torch_ops.CONVERTERS:
            return None
        when = torch_ops.TRAINING_IR_WHEN.get(functional)
        if when is not None and not when(node):
            return None
        target = node.args[0] if node.args else None
        if not hasattr(target, "op"):
            return None
        root = base.get(target, target)
        if root is target and not _fresh(target):
            return None
        base[node] = root
        groups.setdefault(root, [root]).append(node)
    writes = {}
    for root, members in groups.items():
        written = [m for m in members[1:] if _key(m) != "aten.alias.default"]
        if not written:
            continue
        last = order[written[-1]]
        for member in members:
            for user in member.users:
                if user in members or user.op == "output":
                    continue
                if not _fresh(user) and order[user] < last:
                    return None
        for position, member in enumerate(members[1:], 1):
            if member in written:
                writes[member.name] = [m.name for m in members[:position + 1]]
    return writes


def _decompose(program, name):
    """The exported program lowered to core ATen (``run_decompositions``).

    torch's table re-traces the graph with the decomposed ops, whose results
    may have other strides than the originals; an ``aten.view`` that was valid
    on the original strides then fails ("Cannot view a tensor with shape ...
    and strides ..."; GPT-2's attention, for one). dlc's tensors have no
    strides, so a view is a reshape: where the first try fails, every view
    becomes a reshape (which decomposes to a view or to a copy and a view, as
    the strides allow) and the decomposition is tried again."""
    import torch
    table = _decompositions()
    try:
        return program.run_decompositions(table)
    except Exception as first:  # noqa: BLE001 - retried below, else reported
        error = first
    try:
        views = 0
        for node in program.graph_module.graph.nodes:
            if node.op == "call_function" and node.target == torch.ops.aten.view.default:
                node.target = torch.ops.aten.reshape.default
                views += 1
        if views:
            program.graph_module.recompile()
            return program.run_decompositions(table)
    except Exception:  # noqa: BLE001 - the first error is the one to report
        pass
    raise ModelImportError(f"dlc.from_torch: torch.export captured {name}, but torch's "
                           f"decomposition to core ATen failed: {type(error).__name__}: "
                           f"{error}") from None


def _refuse_data_dependent_shapes(graph):
    """A value whose shape depends on the data (``x[mask]``, ``nonzero``,
    ``masked_select``: torch.export's unbacked sizes) cannot be compiled to
    static shapes: one clear error at its op and line."""
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
    for node in graph.nodes:
        value = node.meta.get("val")
        if node.op != "call_function" or not hasattr(value, "shape"):
            continue
        if free_unbacked_symbols(value):
            raise DataDependentShapeError(
                f"dlc.from_torch: {_key(node)} at {_describe(source_location(node))} "
                f"makes a tensor of shape {tuple(value.shape)} whose size depends on the "
                f"values of the data (a boolean mask, nonzero, masked_select); dlc "
                f"compiles static shapes: use torch.where or a fixed-size formulation")


def _symbolic_dims(node):
    """{axis: symbol name} of the dimensions of a placeholder that
    torch.export made symbolic."""
    value = node.meta.get("val")
    if not hasattr(value, "shape"):
        return {}
    return {axis: str(size) for axis, size in enumerate(value.shape)
            if not isinstance(size, int)}


def _dimension_check(program, user_nodes):
    """A check of the inputs' dynamic dimensions against the ranges
    torch.export traced the model for (``Dim(min=, max=)``, derived dims such
    as ``32 * Dim``): outside them the graph may have taken other branches,
    so a call there is refused, not answered. torch's default lower bound of
    2 (its 0/1 specialization) is not enforced: the graphs dlc compiles
    serve sizes 0 and 1 too. None when there is nothing to check."""
    import sympy

    def finite(bound):
        return int(bound) if getattr(bound, "is_Integer", False) else None

    ranges = {}
    for expr, bounds in program.range_constraints.items():
        lower, upper = finite(bounds.lower), finite(bounds.upper)
        ranges[expr] = (lower if lower is not None and lower > 2 else None, upper)
    checks = []
    for position, node in enumerate(user_nodes):
        value = node.meta.get("val")
        for axis, size in enumerate(getattr(value, "shape", ())):
            if isinstance(size, int):
                continue
            expr = size.node.expr
            free = sorted(expr.free_symbols, key=str)
            if len(free) != 1:
                continue
            bounds = [ranges.get(expr, (None, None)), ranges.get(free[0], (None, None))]
            if expr == free[0] and bounds[0] == (None, None):
                continue
            checks.append((position, axis, expr, free[0], bounds))
    if not checks:
        return None
    solved = {}

    def within(value, bounds):
        lower, upper = bounds
        return (lower is None or value >= lower) and (upper is None or value <= upper)

    def check(name, input_names, values):
        for position, axis, expr, symbol, (outer, inner) in checks:
            size = int(values[position].shape[axis])
            key = (expr, size)
            if key not in solved:
                roots = sympy.solve(sympy.Eq(expr, size), symbol) if expr != symbol \
                    else [size]
                solved[key] = [int(r) for r in roots if sympy.sympify(r).is_integer]
            roots = solved[key]
            if within(size, outer) and any(within(r, inner) for r in roots):
                continue
            def span(bounds):
                lower, upper = bounds
                return f"{'' if lower is None else lower}..{'' if upper is None else upper}"

            form = "" if expr == symbol else \
                f" of the form {expr} with {symbol} in {span(inner)}"
            raise ShapeError(
                f"{name}(): input {input_names[position]!r} dimension {axis} is {size}, "
                f"outside what torch.export traced the model for (sizes {span(outer)}"
                f"{form}; dynamic_shapes): export again with a range that holds it")
    return check


def _import_program(program, module, args, params, dynamic_batch, jit_kwargs, writes):
    from torch.export.graph_signature import InputKind
    graph = program.graph_module.graph
    signature = program.graph_signature
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    state = dict(program.state_dict)
    state.update(program.constants)
    user_nodes, param_nodes = [], []
    for node, spec in zip(placeholders, signature.input_specs):
        if spec.kind == InputKind.USER_INPUT:
            user_nodes.append(node)
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER,
                           InputKind.CONSTANT_TENSOR):
            param_nodes.append((node, spec.target))
        else:
            raise ModelImportError(f"dlc.from_torch: unsupported graph input kind "
                                   f"{spec.kind} ({spec.target})")
    _refuse_data_dependent_shapes(graph)
    pairs = []
    for node in graph.nodes:
        if node.op == "call_function" and _key(node) not in torch_ops.CONVERTERS and \
                node.name not in writes:
            pairs.append((_key(node), _describe(source_location(node))))
    raise_unsupported("dlc.from_torch", count_uses(pairs),
                      "Supported ATen operators: dlc.frontends.torch_ops.CONVERTERS "
                      "(docs/frontends.md).")
    mutated = list(signature.buffers_to_mutate) if hasattr(signature, "buffers_to_mutate") \
        else []
    if mutated:
        raise ModelImportError(f"dlc.from_torch: the module mutates buffers {mutated}; "
                               f"dlc compiles pure functions")
    constants = {}
    for node, target in param_nodes:
        constants[node.name] = _to_numpy(state[target])
    names = [n.name for n in user_nodes]
    specs, dynamic = [], {}
    for position, (node, example) in enumerate(zip(user_nodes, args)):
        shape = tuple(example.shape)
        if dynamic_batch and shape:
            shape = (None,) + shape[1:]
        elif not dynamic_batch:
            # torch.export's symbolic dimensions (dynamic_shapes), by symbol:
            # the call checks that inputs agree on each.
            symbols = _symbolic_dims(node)
            if symbols:
                shape = tuple(None if axis in symbols else d for axis, d in enumerate(shape))
                dynamic[position] = symbols
        specs.append((np.dtype(_to_numpy(example[:0] if example.dim() else example).dtype),
                      shape))
    if dynamic:
        jit_kwargs = dict(jit_kwargs, dynamic=dynamic)
    param_names = [target for _, target in param_nodes] if params == "arguments" else []

    def build(arrays):
        env = {}
        user_values = arrays[:len(user_nodes)]
        for node, value in zip(user_nodes, user_values):
            env[node.name] = value
        if params == "arguments":
            for (node, _), value in zip(param_nodes, arrays[len(user_nodes):]):
                env[node.name] = value
        else:
            env.update(constants)
        return _run(graph, env, writes)

    function = ImportedFunction(type(module).__name__, names + param_names,
                                specs + [None] * len(param_names), (), build,
                                [str(o) for o in signature.user_outputs],
                                dict(jit_kwargs, dynamic_batch=bool(dynamic_batch) and
                                     tuple(range(len(names)))),
                                check_dims=None if dynamic_batch else
                                _dimension_check(program, user_nodes))
    if params == "arguments":
        return _WithParameters(function, module, [target for _, target in param_nodes],
                               len(names))
    return function


class _WithParameters:
    """An imported module whose parameters are read from the module at each
    call (``params="arguments"``)."""

    def __init__(self, function, module, targets, count):
        self.function, self.module, self.targets, self.count = function, module, targets, count
        self.__name__ = function.__name__
        self.input_names = function.input_names[:count]

    def _values(self):
        state = dict(self.module.state_dict(keep_vars=False))
        return [_to_numpy(state[t]) if t in state else _to_numpy(self._named(t))
                for t in self.targets]

    def _named(self, target):
        value = self.module
        for part in target.split("."):
            value = getattr(value, part)
        return value

    def __call__(self, *args):
        return self.function(*args, *self._values())

    def lower(self, *args):
        return self.function.lower(*args, *self._values())


def _touches_dynamic(args, kwargs):
    """Whether a converter's arguments include a tensor with a dynamic
    dimension or a run-time size."""
    stack = list(args) + list(kwargs.values())
    while stack:
        value = stack.pop()
        if isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, Size) or (isinstance(value, Tensor) and None in value.shape):
            return True
    return False


def _run(graph, env, writes=None):
    """Interprets `graph` with the converters; `writes` ({in-place node:
    names of the values it overwrites}, from _direct) runs an in-place op as
    its functional form whose value every alias of its tensor then has."""
    writes = writes or {}
    def value(arg):
        if hasattr(arg, "op") and hasattr(arg, "name") and hasattr(arg, "meta"):
            return env[arg.name]
        if isinstance(arg, (list, tuple)):
            return type(arg)(value(a) for a in arg)
        return arg
    for node in graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            outputs = value(node.args[0])
            outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
            outputs = [o if isinstance(o, (Tensor, np.ndarray)) else np.asarray(o)
                       for o in outputs]
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        if node.op != "call_function":
            raise ModelImportError(f"dlc.from_torch: unsupported FX node {node.op} "
                                   f"({node.name})")
        location = source_location(node)
        overwritten = writes.get(node.name)
        converter = torch_ops.CONVERTERS[_in_place(node) if overwritten else _key(node)]
        args = value(node.args)
        kwargs = {k: value(v) for k, v in node.kwargs.items()}
        with located(location):
            try:
                env[node.name] = converter(node, *args, **kwargs)
                for name in overwritten or ():
                    env[name] = env[node.name]
            except (DynamicDimensionError, DataDependentShapeError, UnsupportedOpError):
                raise
            except (DLCError, ValueError, TypeError, IndexError,
                    NotImplementedError) as error:
                # An operator that cannot work on a dynamic dimension of its
                # inputs says so (a dynamic batch then falls back to one
                # version per batch size); any other failure keeps its kind.
                text = f"{_key(node)} at {_describe(location)}: {error}"
                if _touches_dynamic(args, kwargs):
                    raise DynamicDimensionError(
                        f"{text} (an input of this operator has a dynamic "
                        f"dimension)") from None
                if isinstance(error, ModelImportError):
                    raise
                if isinstance(error, DLCError):
                    raise type(error)(text) from None
                raise ModelImportError(text) from None
    raise ModelImportError("dlc.from_torch: the graph has no output")


_ = operator
