"""Tracing: running a Python function on abstract tensors to build `dl` IR.

A :class:`Trace` owns a module with one function under construction. While it
is active, every dlc op called on a :class:`Tensor` appends a `dl` op to that
function. Each op carries the user's ``file:line:col`` as its MLIR location, so
diagnostics from any later pass point back at the line that created it.
"""

import contextlib
import gc
import itertools
import os
import re
import sys
import threading

import numpy as np

from . import dtypes
from .errors import DTypeError, ShapeError, TraceError
from .mlir import ir
from .mlir.dialects import arith, dl, func, tensor


_gc_pause_lock = threading.Lock()
_gc_pauses = 0


@contextlib.contextmanager
def gc_paused():
    """Python's cyclic garbage collector off for the block (nested and
    thread-safe: back on when the last block ends, if it was on). Tracing a
    model makes thousands of objects without cycles, and the collector's
    full passes over a process holding a model (470,000 objects with timm's
    Swin-T) took 0.27 s of a 0.5 s compile from the disk cache."""
    global _gc_pauses
    with _gc_pause_lock:
        if _gc_pauses == 0:
            gc_paused.was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_pause_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and gc_paused.was_enabled:
                gc.enable()


gc_paused.was_enabled = True

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_state = threading.local()
_context = None


def context():
    """The MLIR context every dlc module lives in (created on first use)."""
    global _context
    if _context is None:
        _context = ir.Context()
    return _context


_forked_contexts = []


def _forget_context_in_child():
    """A forked child has none of the threads of the context's thread pool
    (MLIR's multithreaded verifier and pass manager wait on them forever):
    it traces and compiles in a new context. The parent's is kept alive,
    never destroyed (its destructor would join threads that do not exist)."""
    global _context, _resource_lock
    if _context is not None:
        _forked_contexts.append(_context)
        _context = None
    _resources_by_memory.clear()  # the old context's attributes
    _resource_lock = threading.Lock()  # a parent's thread may have held it


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_context_in_child)


#: constants of at least this many bytes (a model's weights) are traced as
#: ``dense_resource`` blobs referencing the caller's array, not copied into
#: a dense attribute: the copy (and MLIR's hash of it, to unique the
#: attribute) was 0.06 s of BERT-base's and 0.1 s of GPT-2's 0.2-0.3 s
#: compile from the disk cache, which needs only the key (its hash reads
#: the arrays in place). :func:`materialized` makes them dense attributes,
#: as every pass reads them, when the module is compiled or printed.
RESOURCE_BYTES = 64 * 1024

#: the arrays of the resource constants traced in this process, by blob
#: name (``__dlc_constant<N>``, N counting in the process: no name is ever
#: renamed by MLIR for a collision). Kept as long as the context keeps its
#: blobs (which keep the arrays alive), which is as long as it lives.
_resource_arrays = {}
#: the same, by the memory an array views: tracing the same weights again
#: (a model lowered for another shape, or again) reuses their blob. An
#: address here is never another buffer's: the array holds its memory.
_resources_by_memory = {}
_resource_numbers = itertools.count()
_resource_lock = threading.Lock()
_RESOURCE_NAME = re.compile(r"dense_resource<(__dlc_constant\d+)>")


def _resource_constant(array, tensor_type):
    memory = (array.__array_interface__["data"][0], array.dtype.str, array.shape,
              array.strides, str(tensor_type))
    with _resource_lock:
        known = _resources_by_memory.get(memory)
        if known is not None:
            return known
        name = f"__dlc_constant{next(_resource_numbers)}"
        attr = ir.DenseResourceElementsAttr.get_from_buffer(array, name, tensor_type)
        _resource_arrays[name] = array
        _resources_by_memory[memory] = attr
        return attr


def as_resource(attr):
    """`attr` as an ir.DenseResourceElementsAttr, or None: the bindings
    neither downcast one (it comes as a plain ir.Attribute) nor test for it."""
    if isinstance(attr, ir.DenseResourceElementsAttr):
        return attr
    if type(attr) is not ir.Attribute:  # downcast: another kind
        return None
    try:
        return ir.DenseResourceElementsAttr(attr)
    except ValueError:
        return None


def resource_array(attr):
    """The array a resource constant traced by dlc references, or None
    (another attribute, or a blob from elsewhere: a parsed file)."""
    attr = as_resource(attr)
    if attr is None:
        return None
    match = _RESOURCE_NAME.match(str(attr))
    return None if match is None else _resource_arrays.get(match.group(1))


def constant_array(attr):
    """The elements of a dl.constant's attribute as numpy: the traced array
    itself for a resource constant dlc made (not a copy: read it only), the
    dense attribute's (np.array's conversion: may raise) otherwise."""
    array = resource_array(attr)
    return np.array(attr) if array is None else array


def normalize_resource_names(text):
    """`text` (a module printed with its resources elided) with dlc's blob
    names replaced by one name: they count per process, the key must not."""
    return _RESOURCE_NAME.sub("dense_resource<__dlc_constant>", text)


def materialized(module):
    """`module` with every resource constant traced by dlc as a dense
    attribute (a copy of the module; `module` itself where it has none)."""
    found = False

    def visit(op):
        nonlocal found
        found = op.name == "dl.constant" and resource_array(op.attributes["value"]) is not None
        return ir.WalkResult.INTERRUPT if found else ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    if not found:
        return module
    from .compiler import clone
    copy = clone(module)

    def replace(op):
        if op.name == "dl.constant":
            value = op.attributes["value"]
            array = resource_array(value)
            if array is not None:
                op.attributes["value"] = ir.DenseElementsAttr.get(
                    array, type=ir.DenseResourceElementsAttr(value).type)
        return ir.WalkResult.ADVANCE
    with module.context:
        copy.operation.walk(replace)
    return copy


def current_trace():
    return getattr(_state, "trace", None)


def user_frame():
    """The innermost stack frame outside the dlc package: the user's code."""
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_PACKAGE_DIR + os.sep):
            return frame
        frame = frame.f_back
    return None


class located:
    """Within this context, ops traced are located at (file, line, column)
    instead of the calling Python line: the importers locate each op at the
    model's node or the PyTorch module's source line it comes from."""

    def __init__(self, location):
        self.location = location

    def __enter__(self):
        self.saved = getattr(_state, "location", None)
        _state.location = self.location
        return self

    def __exit__(self, *exc):
        _state.location = self.saved
        return False


def user_location():
    """(file, line, column) of the user's code calling into dlc (or of the
    model node being imported, see :class:`located`)."""
    override = getattr(_state, "location", None)
    if override is not None:
        return override
    frame = user_frame()
    if frame is None:
        return ("<unknown>", 0, 0)
    line, column = frame.f_lineno, 0
    positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    if 0 <= index < len(positions):
        start_line, _, start_col, _ = positions[index]
        if start_line is not None:
            line = start_line
        if start_col is not None:
            column = start_col + 1
    return (frame.f_code.co_filename, line, column)


def format_location(location):
    file, line, _ = location
    return f"{file}:{line}"


class Trace:
    """Builds one `func.func` in a fresh module from a Python function."""

    def __init__(self, name, arg_specs, location):
        self.ctx = context()
        self.location = location
        with self.ctx, self._loc(location):
            self.module = ir.Module.create()
            arg_types = [dtypes.tensor_type(shape, dtype) for shape, dtype in arg_specs]
            with ir.InsertionPoint(self.module.body):
                self.func = func.FuncOp(name, (arg_types, []))
            self.func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            self.block = self.func.add_entry_block()
        self.arguments = [Tensor(value, self) for value in self.block.arguments]

    @classmethod
    def attach(cls, func_op, block):
        """A trace appending to `block` of an existing function (a pass
        adding ops to it: dl-autodiff); :meth:`finish` adds its return."""
        trace = cls.__new__(cls)
        trace.ctx = func_op.context
        trace.location = ("<dl-autodiff>", 0, 0)
        trace.module = None
        trace.func = func_op
        trace.block = block
        trace.arguments = [Tensor(value, trace) for value in block.arguments]
        return trace

    def _loc(self, location):
        file, line, column = location
        return ir.Location.file(file, line, column, context=self.ctx)

    def __enter__(self):
        if current_trace() is not None:
            raise TraceError("dlc.jit functions cannot be traced inside another "
                             "trace; call the inner function directly instead")
        _state.trace = self
        return self

    def __exit__(self, *exc):
        _state.trace = None
        return False

    def emit(self, op_name, build):
        """Runs ``build()`` (which creates one dl op) at the user's location and
        verifies the op; MLIR diagnostics become ShapeError/DTypeError."""
        location = user_location()
        with self.ctx, self._loc(location), ir.InsertionPoint(self.block):
            try:
                op = build()
                op.operation.verify()
            except ir.MLIRError as error:
                raise _diagnostic_error(op_name, location, error) from None
        return Tensor(op.result, self)

    def size(self, build):
        """Runs ``build()`` (which creates one op of `index` result) at the
        user's location: a :class:`Size`."""
        with self.ctx, self._loc(user_location()), ir.InsertionPoint(self.block):
            op = build()
            return Size(op.result if hasattr(op, "result") else op, self)

    def constant(self, array):
        """A dl.constant holding a numpy array (or scalar)."""
        array = np.require(array, requirements=["C_CONTIGUOUS"])
        if not dtypes.is_supported(array.dtype):
            raise DTypeError(
                f"{format_location(user_location())}: cannot use a constant of "
                f"dtype {array.dtype}; supported: {dtypes.supported_names()}")
        with self.ctx, ir.Location.unknown():
            element = dtypes.to_mlir(array.dtype)
            tensor_type = ir.RankedTensorType.get(list(array.shape), element)
            if array.dtype == np.bool_:
                attr = ir.DenseElementsAttr.get(
                    np.packbits(array, axis=None, bitorder="little"),
                    type=tensor_type)
            elif array.dtype == dtypes.BFLOAT16:
                # The bindings take bf16 as its raw 16-bit patterns.
                attr = ir.DenseElementsAttr.get(array.view(np.uint16),
                                                type=tensor_type)
            elif array.nbytes >= RESOURCE_BYTES:
                attr = _resource_constant(array, tensor_type)
            else:
                attr = ir.DenseElementsAttr.get(array, type=tensor_type)
        return self.emit("dl.constant", lambda: dl.ConstantOp(attr))

    def finish(self, results):
        """Returns `results` (Tensors) from the function."""
        with self.ctx, self._loc(self.location), ir.InsertionPoint(self.block):
            func.ReturnOp([r.value for r in results])
            arg_types = [a.value.type for a in self.arguments]
            result_types = [r.value.type for r in results]
            self.func.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(arg_types, result_types))
        if self.module is None:  # attached to an existing function
            return None
        self.module.operation.verify()
        return self.module


def _diagnostic_error(op_name, location, error):
    messages = [d.message for d in error.error_diagnostics] or [str(error)]
    text = "; ".join(messages)
    kind = DTypeError if "element type" in text else ShapeError
    return kind(f"{format_location(location)}: {text}")


class Size:
    """A size known at run time only: a dynamic dimension (``dlc.dim(x, i)``)
    or integer arithmetic on such sizes and ints (``+ - * //``). It is what
    reshape, broadcast_to, slicing and arange take where a size is dynamic:
    ``x.reshape(dlc.dim(x, 0), dlc.dim(x, 1), 12, 64)``."""

    __slots__ = ("_value", "_trace")

    def __init__(self, value, trace):
        self._value = value
        self._trace = trace

    @property
    def value(self):
        if self._trace is not current_trace():
            raise TraceError(f"{format_location(user_location())}: a dlc.Size exists "
                             f"only inside the trace that made it")
        return self._value

    def __repr__(self):
        return "Size(?)"

    def _index(self, other):
        if isinstance(other, Size):
            return other.value
        if isinstance(other, (int, np.integer)) and not isinstance(other, bool):
            return self._trace.size(lambda: arith.ConstantOp(
                ir.IndexType.get(), int(other)))._value
        return None

    def _binary(self, other, op, reverse=False):
        rhs = self._index(other)
        if rhs is None:
            return NotImplemented
        lhs = self.value
        if reverse:  # noqa: SIM108
            lhs, rhs = rhs, lhs
        return self._trace.size(lambda: op(lhs, rhs))

    def __add__(self, other):
        return self._binary(other, arith.AddIOp)

    def __radd__(self, other):
        return self._binary(other, arith.AddIOp, True)

    def __sub__(self, other):
        return self._binary(other, arith.SubIOp)

    def __rsub__(self, other):
        return self._binary(other, arith.SubIOp, True)

    def __mul__(self, other):
        return self._binary(other, arith.MulIOp)

    def __rmul__(self, other):
        return self._binary(other, arith.MulIOp, True)

    def __floordiv__(self, other):
        if isinstance(other, (int, np.integer)) and other == 0:
            raise ZeroDivisionError("a dlc.Size divided by zero")
        return self._binary(other, _safe_floordiv)

    def __rfloordiv__(self, other):
        return self._binary(other, _safe_floordiv, True)

    def __bool__(self):
        raise TraceError(f"{format_location(user_location())}: a dynamic size is not "
                         f"known at trace time; it cannot decide Python control flow")

    def __index__(self):
        raise TraceError(f"{format_location(user_location())}: a dynamic size is not "
                         f"known at trace time; it is not a Python int")

    __hash__ = object.__hash__


def _safe_floordiv(lhs, rhs):
    """lhs // max(rhs, 1): a run-time size of 0 divides nothing (an element
    count over the sizes of an empty tensor is 0) instead of trapping."""
    one = arith.ConstantOp(ir.IndexType.get(), 1).result
    return arith.FloorDivSIOp(lhs, arith.MaxSIOp(rhs, one).result)


def dim_of(tensor, axis):
    """The size of dimension `axis` of a traced tensor: an int when static,
    a :class:`Size` when dynamic."""
    size = tensor.shape[axis]
    if size is not None:
        return size
    trace = tensor._trace
    value = tensor.value
    return trace.size(lambda: tensor_dim(value, axis))


def tensor_dim(value, axis):
    index = arith.ConstantOp(ir.IndexType.get(), axis)
    return tensor.DimOp(value, index.result)


class Tensor:
    """A traced tensor: the abstract value a dlc.jit function computes on.

    ``shape`` is a tuple of ints, with ``None`` for each dynamic dimension
    (``dlc.dim`` reads its run-time :class:`Size`); ``dtype`` is a numpy dtype. Python operators build dl ops:
    dlc.ops installs them (+ - * / ** @, comparisons, indexing, ``.T``,
    ``.reshape``, ``.astype``), so that this module never imports the ops.
    """

    __slots__ = ("_value", "_trace", "shape", "dtype")
    __array_ufunc__ = None  # `ndarray + Tensor` defers to Tensor.__radd__

    def __init__(self, value, trace):
        self._value = value
        self._trace = trace
        self.shape = dtypes.shape_of(value.type)
        self.dtype = dtypes.from_mlir(ir.RankedTensorType(value.type).element_type)

    @property
    def value(self):
        """The MLIR value, for building ops in the trace that made it. A
        tensor kept from another trace (stored in a global or a list by an
        earlier call) refers to IR that may be gone: using it is an error,
        not a crash."""
        if self._trace is not current_trace():
            raise TraceError(
                f"{format_location(user_location())}: {self!r} comes from another "
                f"dlc.jit trace (it was kept, e.g. in a list or a global, after the "
                f"call that traced it ended); a traced tensor exists only inside the "
                f"call that made it: pass the value as an argument instead")
        return self._value

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"Tensor({dtypes.format_type(self.shape, self.dtype)})"

    def __pos__(self):
        return self

    def __len__(self):
        if not self.shape or self.shape[0] is None:
            raise TraceError(f"len() of {self!r} is not known at trace time")
        return self.shape[0]

    def __bool__(self):
        raise TraceError(
            f"{format_location(user_location())}: the truth value of a traced "
            f"tensor is not known at trace time; dlc.jit traces Python control "
            f"flow once, so it cannot depend on tensor values")

    def __array__(self, *args, **kwargs):
        raise TraceError(
            f"{format_location(user_location())}: cannot convert a traced tensor "
            f"to a numpy array inside a dlc.jit function; use dlc operations")

    def __iter__(self):
        raise TraceError(f"{format_location(user_location())}: iterating over a "
                         f"traced tensor is not supported")

    __hash__ = object.__hash__
