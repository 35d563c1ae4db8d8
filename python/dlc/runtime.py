"""Calling JIT-compiled functions with numpy buffers.

A compiled dlc function has the C interface of MLIR's ExecutionEngine
(``llvm.emit_c_interface``): each argument is a pointer to a ranked memref
descriptor ``{allocated, aligned, offset, sizes[rank], strides[rank]}``, and
the results come back through a pointer to a struct of descriptors.

Arguments are passed without copying when they are C-contiguous. Results are
buffers the compiled code allocated with ``malloc`` and handed to the caller
(the pipeline's ownership-based deallocation guarantees that); they become
numpy arrays without copying, and ``free`` runs when the last array viewing a
buffer is garbage-collected.
"""

import ctypes
import ctypes.util
import os
import weakref

import numpy as np

from . import _build_config
from .mlir.execution_engine import ExecutionEngine

_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None

_descriptor_types = {}


def runtime_libraries():
    """Runtime support libraries of MLIR that JIT-compiled code may call
    (memrefCopy, for example)."""
    lib_dir = _build_config.MLIR_RUNTIME_LIB_DIR
    libs = [os.path.join(lib_dir, "libmlir_c_runner_utils.so")]
    return [lib for lib in libs if os.path.exists(lib)]


def descriptor_type(rank):
    """The ctypes struct of a ranked memref descriptor of `rank`."""
    if rank not in _descriptor_types:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                  ("offset", ctypes.c_int64)]
        if rank > 0:
            fields += [("sizes", ctypes.c_int64 * rank),
                       ("strides", ctypes.c_int64 * rank)]
        _descriptor_types[rank] = type(f"MemRefDescriptor{rank}D",
                                       (ctypes.Structure,), {"_fields_": fields})
    return _descriptor_types[rank]


def descriptor_for(array):
    """A descriptor viewing a C-contiguous numpy array (no copy)."""
    descriptor = descriptor_type(array.ndim)()
    address = array.ctypes.data
    descriptor.allocated = address
    descriptor.aligned = address
    descriptor.offset = 0
    if array.ndim > 0:
        itemsize = array.itemsize
        descriptor.sizes[:] = array.shape
        descriptor.strides[:] = [s // itemsize for s in array.strides]
    return descriptor


class _MallocBuffer:
    """Owns one malloc'ed block; frees it when garbage-collected."""

    __slots__ = ("__weakref__",)


def _owner_for(address, owners):
    """One owner object per distinct allocation, so that results sharing a
    buffer free it once."""
    if address not in owners:
        owner = _MallocBuffer()
        weakref.finalize(owner, _libc.free, address)
        owners[address] = owner
    return owners[address]


def array_from_descriptor(descriptor, rank, dtype, owners, argument_ranges):
    """A numpy array for a result descriptor, taking ownership of its buffer."""
    dtype = np.dtype(dtype)
    shape = tuple(descriptor.sizes[:rank]) if rank > 0 else ()
    element_strides = tuple(descriptor.strides[:rank]) if rank > 0 else ()
    aliases_argument = any(lo <= descriptor.allocated < hi for lo, hi in argument_ranges)
    if 0 in shape:
        if descriptor.allocated and not aliases_argument:
            _owner_for(descriptor.allocated, owners)  # freed on return
        return np.empty(shape, dtype=dtype)
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, element_strides))
    start = descriptor.aligned + descriptor.offset * dtype.itemsize
    buffer = (ctypes.c_char * (extent * dtype.itemsize)).from_address(start)
    array = np.ndarray(shape, dtype=dtype, buffer=buffer,
                       strides=tuple(s * dtype.itemsize for s in element_strides))
    if aliases_argument:
        # The result views an argument's memory: never free it, and give the
        # caller an array of its own.
        return array.copy()
    if descriptor.allocated in owners:
        # Another result already owns this buffer; results never share memory.
        return array.copy()
    # The array's base is `buffer`; the buffer holds the owner, which frees
    # the allocation once no array views it.
    buffer.owner = _owner_for(descriptor.allocated, owners)
    return array


class CompiledFunction:
    """A function in a JIT-compiled module, callable with numpy arrays."""

    def __init__(self, module, name, result_specs, opt_level=3):
        self.engine = ExecutionEngine(module, opt_level=opt_level,
                                      shared_libs=runtime_libraries())
        self.name = name
        self.result_specs = result_specs  # [(rank, dtype)]
        address = self.engine.raw_lookup("_mlir_ciface_" + name)
        if not address:
            raise RuntimeError(f"compiled module has no function {name!r}")
        self._entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)
        result_types = [descriptor_type(rank) for rank, _ in result_specs]
        if len(result_types) > 1:
            fields = [(f"r{i}", t) for i, t in enumerate(result_types)]
            self._results_type = type("Results", (ctypes.Structure,), {"_fields_": fields})
        elif result_types:
            self._results_type = result_types[0]
        else:
            self._results_type = None

    def __call__(self, arrays):
        """Runs the function on C-contiguous numpy arrays; returns a list of
        numpy arrays."""
        descriptors = [descriptor_for(a) for a in arrays]
        pointers = [ctypes.pointer(d) for d in descriptors]
        packed_values = []
        results = None
        if self._results_type is not None:
            results = self._results_type()
            packed_values.append(ctypes.pointer(ctypes.pointer(results)))
        packed_values += [ctypes.pointer(p) for p in pointers]
        packed = (ctypes.c_void_p * len(packed_values))(
            *[ctypes.cast(v, ctypes.c_void_p) for v in packed_values])
        self._entry(packed)
        if results is None:
            return []
        if len(self.result_specs) == 1:
            result_descriptors = [results]
        else:
            result_descriptors = [getattr(results, f"r{i}")
                                  for i in range(len(self.result_specs))]
        ranges = [(a.ctypes.data, a.ctypes.data + max(a.nbytes, 1)) for a in arrays]
        owners = {}
        return [array_from_descriptor(d, rank, dtype, owners, ranges)
                for d, (rank, dtype) in zip(result_descriptors, self.result_specs)]
