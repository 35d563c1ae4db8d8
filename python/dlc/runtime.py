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
import threading

import numpy as np

from . import _build_config
from .errors import CUDAUnavailableError
from .mlir.execution_engine import ExecutionEngine

_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None

try:
    from _ctypes import dlclose as _dlclose
except ImportError:  # not on this platform: libraries stay loaded
    _dlclose = None

_descriptor_types = {}


def cuda_driver_path():
    """The CUDA driver library: libcuda.so.1, or $DLC_LIBCUDA (which dlc's
    CUDA shim reads too; tests point it at a stand-in)."""
    return os.environ.get("DLC_LIBCUDA") or "libcuda.so.1"


def cuda_status():
    """None where a CUDA driver and at least one device exist, else why not
    (a sentence)."""
    path = cuda_driver_path()
    try:
        driver = ctypes.CDLL(path)
    except OSError as error:
        return f"the CUDA driver library {path} could not be loaded ({error})"
    status = driver.cuInit(0)
    if status != 0:
        return f"the CUDA driver failed to initialize (cuInit returned {status})"
    count = ctypes.c_int(0)
    status = driver.cuDeviceGetCount(ctypes.byref(count))
    if status != 0 or count.value == 0:
        return "the CUDA driver found no device"
    return None


def require_cuda():
    """Raises CUDAUnavailableError unless a CUDA driver and device exist."""
    reason = cuda_status()
    if reason is not None:
        raise CUDAUnavailableError(
            f"target='cuda' needs an NVIDIA GPU and its driver, but {reason}. "
            f"Use emulate=True to run the same GPU kernels on the CPU, or "
            f"target='cpu'.")


_parallel_runtime = None


def _load_parallel_runtime():
    """Loads dlc's thread pool (libdlc_runtime, built from lib/Runtime) once
    per process, with global symbol visibility, so that every JIT module
    resolves its ``dlc_parallel_for`` calls to the same pool (and its
    allocations and ``memrefCopy`` calls to dlc's runtime).

    No library that links LLVM is ever loaded with global visibility (MLIR's
    runtime libraries do: the ExecutionEngine is given none of them): LLVM's
    symbols in the global scope crashed the next library with an LLVM of its
    own (``import triton`` after a compile).

    ``dlc_parallel_for`` returns only once every chunk of a loop has run, so
    no worker is left in a module's code when its call returns: an engine
    can be freed right after."""
    global _parallel_runtime
    if _parallel_runtime is None:
        path = _build_config.DLC_RUNTIME_LIB
        if not os.path.exists(path):
            raise RuntimeError(
                f"dlc's runtime library {path} is missing: rebuild dlc "
                f"(make build)")
        _parallel_runtime = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return _parallel_runtime


from .mlir._mlir_libs._site_initialize_0 import call_packed as _call_packed

_guarded_call = None


def _guarded_call_address():
    """The address of libdlc_runtime's ``dlc_call_guarded``: every call of
    compiled code goes through it, so that an allocation that fails in the
    code becomes a MemoryError (lib/Runtime/Memory.cpp)."""
    global _guarded_call
    if _guarded_call is None:
        function = _load_parallel_runtime().dlc_call_guarded
        _guarded_call = ctypes.cast(function, ctypes.c_void_p).value
    return _guarded_call


def release_memory():
    """Frees the large blocks dlc's runtime keeps for reuse across calls
    (blocks of 1 MiB or more that compiled code freed; at most 8 of them and
    ``DLC_ALLOC_CACHE_MB``, default 1024, MiB in all), and the calling
    thread's medium blocks (32 KiB to 1 MiB, at most 8 MiB per thread; the
    thread pool's workers keep theirs until they exit)."""
    _load_parallel_runtime().dlc_runtime_release_memory()


class _StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]


_lookup_function = None


def _lookup_symbol(engine, name):
    """The address of a symbol (a global variable too) of a JIT module, or 0.
    The Python binding's ``raw_lookup`` only finds packed function wrappers,
    so this calls the C API's ``mlirExecutionEngineLookup``."""
    global _lookup_function
    if _lookup_function is None:
        from .mlir import _mlir_libs
        capi = ctypes.CDLL(os.path.join(os.path.dirname(_mlir_libs.__file__),
                                        "libDLCPythonCAPI.so"))
        _lookup_function = capi.mlirExecutionEngineLookup
        _lookup_function.argtypes = [ctypes.c_void_p, _StringRef]
        _lookup_function.restype = ctypes.c_void_p
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        get_pointer.restype = ctypes.c_void_p
        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.argtypes = [ctypes.py_object]
        get_name.restype = ctypes.c_char_p
    capsule = engine._CAPIPtr
    pointer = ctypes.pythonapi.PyCapsule_GetPointer(
        capsule, ctypes.pythonapi.PyCapsule_GetName(capsule))
    encoded = name.encode()
    return _lookup_function(pointer, _StringRef(encoded, len(encoded))) or 0


def positive_int_from_env(name):
    """The positive integer in environment variable `name`, None where it is
    unset or empty; a ValueError naming it for anything else."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {text!r}")
    return value


def _cores():
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _default_num_threads():
    value = positive_int_from_env("DLC_NUM_THREADS")
    return _cores() if value is None else value


_num_threads = None


def get_num_threads():
    """The number of threads compiled functions run their parallel loops on:
    ``set_num_threads``'s value, else the ``DLC_NUM_THREADS`` environment
    variable, else the number of cores this process may run on."""
    global _num_threads
    if _num_threads is None:
        _num_threads = _default_num_threads()
    return _num_threads


def set_num_threads(count):
    """Sets the number of threads of every later call of a compiled function
    (no recompilation). 1 runs everything on the calling thread."""
    global _num_threads
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"set_num_threads: expected a positive integer, got {count!r}")
    _num_threads = int(count)


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


class _MallocArray:
    """Owns one malloc'ed block of the compiled code's and describes an
    array in it (numpy's array interface): the numpy array made from it keeps
    it as its base, so ``free`` runs once no array views the block."""

    __slots__ = ("address", "free", "__array_interface__")

    def __init__(self, allocated, start, shape, typestr, strides, free=None):
        self.address = allocated
        self.free = free or _libc.free
        self.__array_interface__ = {"data": (start, False), "shape": shape,
                                    "typestr": typestr, "strides": strides,
                                    "version": 3}

    def __del__(self):
        if self.address:
            self.free(self.address)


def array_from_descriptor(descriptor, rank, dtype, owners, argument_ranges, free=None):
    """A numpy array for a result descriptor, taking ownership of its buffer
    (released with `free`, default libc's). `owners` holds allocations
    already owned by earlier results of the same call (results never share
    memory: a repeated buffer is copied)."""
    free = free or _libc.free
    shape = tuple(descriptor.sizes[:rank]) if rank > 0 else ()
    allocated = descriptor.allocated or 0
    aliases_argument = False
    for lo, hi in argument_ranges:  # a loop: cheaper than any() per call
        if lo <= allocated < hi:
            aliases_argument = True
            break
    if 0 in shape:
        if allocated and not aliases_argument and allocated not in owners:
            free(allocated)
            owners.add(allocated)
        return np.empty(shape, dtype=dtype)
    itemsize = dtype.itemsize
    start = descriptor.aligned + descriptor.offset * itemsize
    strides = tuple(s * itemsize for s in descriptor.strides[:rank]) if rank > 0 else ()
    if aliases_argument or allocated in owners:
        # The result views an argument's memory (never freed here), or a
        # buffer another result owns: the caller gets an array of its own.
        view = np.asarray(_MallocArray(0, start, shape, dtype.str, strides))
        return (view if view.dtype == dtype else view.view(dtype)).copy()
    owners.add(allocated)
    array = np.asarray(_MallocArray(allocated, start, shape, dtype.str, strides, free))
    # Dtypes numpy does not know by type string (bfloat16: "<V2") are views.
    return array if array.dtype == dtype else array.view(dtype)


#: Constants of this many bytes or more are kept out of JIT-compiled code
#: (externalize_constants): LLVM spends about 34 ms per MB of constant data
#: (17 s for GPT-2 small's weights, per compiled function), a pointer costs
#: nothing. 64 KiB, not 1 MiB as first: the weights under 1 MiB (most of
#: EfficientNet-B0's and MobileNetV3's, Swin-T's attention biases and masks)
#: took 0.2-0.5 s of LLVM per model (Zen 3), the same speed either way; a
#: compile from the disk cache maps each as a file (Swin-T's 0.07 -> 0.09 s).
#: $DLC_EXTERNAL_CONSTANT_BYTES sets another threshold.
EXTERNAL_CONSTANT_BYTES = 64 << 10


def external_constant_bytes():
    value = positive_int_from_env("DLC_EXTERNAL_CONSTANT_BYTES")
    return EXTERNAL_CONSTANT_BYTES if value is None else value

_WEIGHT_POINTER = """module {{
  llvm.mlir.global external @{name}() {{addr_space = 0 : i32, alignment = 8 : i64}} : !llvm.ptr {{
    %0 = llvm.mlir.zero : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }}
}}"""


_HUGE_PAGE = 2 << 20


def _aligned_copy(array):
    """A copy of `array` 64-byte aligned; from 2 MiB on, in anonymous memory
    aligned to 2 MiB and advised to use transparent huge pages: GPT-2's
    output layer read from 64-byte aligned memory ran at 4.2 ms, at 3.3 ms
    2 MiB aligned (as the weights embedded in the code did: Zen 3)."""
    if array.nbytes < _HUGE_PAGE:
        raw = np.empty(array.nbytes + 64, np.uint8)
        offset = (-raw.ctypes.data) % 64
    else:
        import mmap
        memory = mmap.mmap(-1, array.nbytes + _HUGE_PAGE)
        raw = np.frombuffer(memory, np.uint8)
        offset = (-raw.ctypes.data) % _HUGE_PAGE
        if hasattr(mmap, "MADV_HUGEPAGE"):
            try:
                memory.madvise(mmap.MADV_HUGEPAGE)
            except OSError:
                pass
    out = raw[offset:offset + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


def large_constants(module, min_bytes=None):
    """[(llvm.mlir.global op, its data as a numpy view)] of the constants of
    `module` (at the llvm stage) that externalize_constants moves out: at
    least `min_bytes` (external_constant_bytes()), of a type numpy reads."""
    if min_bytes is None:
        min_bytes = external_constant_bytes()
    found = []
    for op in module.body.operations:
        op = op.operation
        if op.name != "llvm.mlir.global" or "constant" not in op.attributes or \
                "value" not in op.attributes:
            continue
        try:
            data = np.asarray(op.attributes["value"])
        except (TypeError, ValueError, RuntimeError):
            continue
        if data.dtype.kind in "fiu" and data.dtype.itemsize in (1, 2, 4, 8) and \
                data.nbytes >= min_bytes and data.size > 1:
            found.append((op, data))
    return found


def externalize_constants(module, min_bytes=None):
    """Moves the large constants of `module` (at the llvm stage; changed in
    place) out of its code: each of large_constants becomes a pointer global
    ``__dlc_weight_<i>`` (null), and each ``llvm.mlir.addressof`` of it a
    load of that pointer. Returns {pointer symbol: the data, an aligned
    copy}: bind_weights points the compiled code at them. The data are only
    ever read, as the constants were."""
    from .mlir import ir
    weights = {}
    renamed = {}
    with module.context, ir.Location.unknown():
        for op, data in large_constants(module, min_bytes):
            name = f"__dlc_weight_{len(weights)}"
            pointer = ir.Module.parse(_WEIGHT_POINTER.format(name=name))
            new = pointer.body.operations[0].operation
            new.move_before(op)
            renamed[ir.StringAttr(op.attributes["sym_name"]).value] = name
            weights[name] = _aligned_copy(data)
            op.erase()
        if not renamed:
            return weights
        ptr = ir.Type.parse("!llvm.ptr")
        uses = []

        def find(op):
            if op.name == "llvm.mlir.addressof" and \
                    ir.FlatSymbolRefAttr(op.attributes["global_name"]).value in renamed:
                uses.append(op)
            return ir.WalkResult.ADVANCE

        module.operation.walk(find)
        for use in uses:
            target = renamed[ir.FlatSymbolRefAttr(use.attributes["global_name"]).value]
            with ir.InsertionPoint(use):
                address = ir.Operation.create(
                    "llvm.mlir.addressof", results=[ptr],
                    attributes={"global_name": ir.FlatSymbolRefAttr.get(target)})
                load = ir.Operation.create(
                    "llvm.load", results=[ptr], operands=[address.result],
                    attributes={"alignment": ir.IntegerAttr.get(
                        ir.IntegerType.get_signless(64), 8)})
            use.result.replace_all_uses_with(load.result)
            use.erase()
    return weights


def bind_weights(code, weights):
    """Points the weight pointers of compiled code (a JITCode or a
    LibraryCode of a module externalize_constants changed) at `weights`."""
    for name, array in weights.items():
        address = code.address(name)
        if not address:
            raise RuntimeError(f"compiled module has no weight pointer {name!r}")
        ctypes.c_void_p.from_address(address).value = array.ctypes.data


class JITCode:
    """Machine code compiled in this process by MLIR's ExecutionEngine. With
    `pic`, compiled position-independent, so that :meth:`dump_object` writes
    an object file a linker can make a shared library of (dlc's disk cache).
    `weights` are the arrays of a module's externalized constants
    (externalize_constants), read in place by the code."""

    def __init__(self, module, opt_level=3, shared_libs=(), pic=False, initialize=False,
                 weights=None):
        _load_parallel_runtime()
        self.engine = ExecutionEngine(module, opt_level=opt_level,
                                      shared_libs=list(shared_libs),
                                      enable_object_dump=pic, enable_pic=pic)
        if initialize:
            # Global constructors: the GPU host code loads its kernels' modules
            # in one (gpu.binary's translation); without it no kernel runs.
            self.engine.initialize()
        self.weights = dict(weights or {})
        bind_weights(self, self.weights)

    def address(self, symbol):
        """The address of `symbol` (a function or global), or 0."""
        return _lookup_symbol(self.engine, symbol)

    def packed_address(self, name):
        """The address of the packed wrapper of function `name`, or 0."""
        return self.engine.raw_lookup(name) or 0

    def dump_object(self, path):
        """Writes the object file (`pic` code). Look a symbol up first: the
        ORC JIT compiles on the first lookup, and dumping a module never
        compiled aborts the process."""
        self.engine.dump_to_object_file(path)


#: (device, inode) of each loaded library -> [LibraryCode users, weights]
_libraries = {}
_libraries_lock = threading.Lock()


class LibraryCode:
    """Machine code in a shared library (an entry of dlc's disk cache): the
    same symbols as the JIT module it was linked from. dlc's runtime, which
    it calls into, is loaded first with global visibility."""

    def __init__(self, path, weights=None):
        _load_parallel_runtime()
        self.path = path
        status = os.stat(path)
        identity = (status.st_dev, status.st_ino)
        self.library = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        # The loader maps a file once per process, however often (and under
        # whatever name: a library built in the cache is renamed into place)
        # it is opened: every LibraryCode of it shares its weight pointers.
        # They point at the arrays of its first user, kept while any user is
        # left (a second user's arrays, bound over them and freed with it,
        # left the first reading unmapped memory). Same file, same key: the
        # same weights.
        with _libraries_lock:
            users = _libraries.get(identity)
            if users is None:
                users = [0, dict(weights or {})]
                bind_weights(self, users[1])
                _libraries[identity] = users
            users[0] += 1
        self._identity = identity
        self.weights = users[1]

    def __del__(self):
        # Unloaded with its last user, as a JIT engine is freed: a
        # long-running process compiling many models keeps no dead code.
        # No call is in it then (a call holds its function, and
        # dlc_parallel_for returns after its last chunk).
        identity = getattr(self, "_identity", None)
        if identity is None:
            return
        try:
            with _libraries_lock:
                users = _libraries[identity]
                users[0] -= 1
                if users[0] == 0:
                    del _libraries[identity]
            if _dlclose is not None:
                _dlclose(self.library._handle)
        except (OSError, AttributeError, TypeError, KeyError):
            pass

    def address(self, symbol):
        try:
            return ctypes.addressof(ctypes.c_char.in_dll(self.library, symbol))
        except ValueError:
            return 0

    def packed_address(self, name):
        # MLIR's ExecutionEngine names the packed wrapper of @f `_mlir_f`.
        return self.address("_mlir_" + name)


#: modules of fewer operations (``$DLC_PARALLEL_CODEGEN_MIN_OPS``) are
#: JIT-compiled by the ExecutionEngine on one thread: linking a library (tens of milliseconds) would cost more than
#: the parallel code generation saves (EfficientNet-B0's llvm module has
#: 56,000 operations and took 8 s on one Zen 5 core)
PARALLEL_CODEGEN_MIN_OPERATIONS = 4000


def compile_threads():
    """How many threads LLVM's code generation uses: ``DLC_COMPILE_THREADS``,
    else the number of cores this process may run on."""
    value = positive_int_from_env("DLC_COMPILE_THREADS")
    return _cores() if value is None else value


def wants_library(module):
    """Whether `module` (the llvm stage) is compiled by compile_library
    rather than JIT-compiled: large enough, more than one thread to compile
    it on, and a C compiler to link it with."""
    from . import cache
    from .mlir._mlir_libs import _site_initialize_0 as capi
    text = os.environ.get("DLC_PARALLEL_CODEGEN_MIN_OPS", "").strip()
    try:
        least = int(text) if text else PARALLEL_CODEGEN_MIN_OPERATIONS
    except ValueError:
        raise ValueError(f"DLC_PARALLEL_CODEGEN_MIN_OPS must be a number of operations, "
                         f"got {text!r}") from None
    return compile_threads() > 1 and cache.can_link() and \
        capi.operation_count(module) >= least


class LinkError(RuntimeError):
    """The system C compiler could not link compiled code into a library."""


def compile_objects(module, folder, opt_level=3, threads=None):
    """Compiles `module` (the llvm stage) to position-independent object
    files in `folder`: LLVM optimizes and compiles it in parts, in parallel
    on `threads` threads (lib/CAPI/ObjectCode.cpp). Returns their paths.
    Raises RuntimeError where LLVM fails (DLC_LLVM_OPTIONS LLVM does not take
    included)."""
    from .mlir._mlir_libs import _site_initialize_0 as capi
    threads = threads or compile_threads()
    parts, _, _ = capi.compile_objects(module, opt_level, 2 * threads, threads, folder)
    return [os.path.join(folder, f"part{i}.o") for i in range(parts)]


def compile_library(module, library, opt_level=3, threads=None):
    """Compiles `module` (the llvm stage) into the shared library `library`:
    its parts' objects (compile_objects) linked by the system C compiler.
    Raises RuntimeError where LLVM fails, LinkError where the linker does."""
    import shutil
    import tempfile
    from . import cache
    folder = tempfile.mkdtemp(prefix=".objects-", dir=os.path.dirname(library))
    try:
        objects = compile_objects(module, folder, opt_level, threads)
        if not cache.link(objects, library):
            raise LinkError(f"linking the compiled code into {library} failed")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class CompiledFunction:
    """A function in a compiled module, callable with numpy arrays. `code` is
    an MLIR module (JIT-compiled here), a :class:`JITCode` or a
    :class:`LibraryCode`."""

    #: how result buffers are released (None: libc's free)
    free = None

    def __init__(self, code, name, result_specs, opt_level=3, shared_libs=(),
                 initialize=False):
        if not isinstance(code, (JITCode, LibraryCode)):
            code = JITCode(code, opt_level=opt_level, shared_libs=shared_libs,
                           initialize=initialize)
        self.code = code
        # Parallel loops read their thread count from this global at run time.
        address = code.address("dlc_num_threads")
        self._threads = ctypes.c_int64.from_address(address) if address else None
        self.name = name
        self.result_specs = result_specs  # [(rank, dtype)]
        address = code.packed_address("_mlir_ciface_" + name)
        if not address:
            raise RuntimeError(f"compiled module has no function {name!r}")
        self._entry_address = address
        result_types = [descriptor_type(rank) for rank, _ in result_specs]
        if len(result_types) > 1:
            fields = [(f"r{i}", t) for i, t in enumerate(result_types)]
            self._results_type = type("Results", (ctypes.Structure,), {"_fields_": fields})
        elif result_types:
            self._results_type = result_types[0]
        else:
            self._results_type = None
        self._single_result = len(result_types) == 1
        self._result_dtypes = [(rank, np.dtype(dtype)) for rank, dtype in result_specs]
        self._state = None
        self._state_lock = threading.Lock()

    @property
    def engine(self):
        """The ExecutionEngine of JIT-compiled code (None for a library)."""
        return getattr(self.code, "engine", None)

    def _prepare(self, ranks):
        """Descriptors and the packed argument array for arguments of these
        ranks, allocated once and refilled at each call."""
        results = self._results_type() if self._results_type is not None else None
        descriptors = [descriptor_type(rank)() for rank in ranks]
        keep = []
        values = []
        if results is not None:
            inner = ctypes.pointer(results)
            keep.append(inner)
            values.append(ctypes.addressof(inner))
        for descriptor in descriptors:
            inner = ctypes.pointer(descriptor)
            keep.append(inner)
            values.append(ctypes.addressof(inner))
        packed = (ctypes.c_void_p * len(values))(*values)
        # For _call_packed: where the packed array and the descriptors are.
        keep.append((ctypes.addressof(packed),
                     [ctypes.addressof(d) for d in descriptors], list(ranks)))
        return results, descriptors, packed, keep

    def __call__(self, arrays):
        """Runs the function on C-contiguous numpy arrays; returns a list of
        numpy arrays."""
        if self._threads is not None:
            self._threads.value = get_num_threads()
        # The preallocated call state serves one call at a time; a call made
        # while another runs (from another Python thread) gets its own.
        locked = self._state_lock.acquire(blocking=False)
        try:
            state = self._state if locked else None
            if state is None:
                state = self._prepare([a.ndim for a in arrays])
                if locked:
                    self._state = state
            results, descriptors, packed, keep = state
            # Descriptors filled from the arrays' buffers and the code
            # called in C++ (dlc's extension), without the GIL.
            packed_address, descriptor_addresses, ranks = keep[-1]
            try:
                addresses = _call_packed(_guarded_call_address(), self._entry_address,
                                         packed_address, descriptor_addresses, ranks,
                                         arrays)
            except MemoryError as error:
                raise MemoryError(f"{self.name}: {error}") from None
            if addresses is None:
                raise TypeError(
                    f"{self.name}: an argument exports no strided buffer of its "
                    f"rank; expected C-contiguous numpy arrays of ranks {ranks}")
            if results is None:
                return []
            if self._single_result:
                result_descriptors = (results,)
            else:
                result_descriptors = [getattr(results, f"r{i}")
                                      for i in range(len(self.result_specs))]
            ranges = [(address, address + max(a.nbytes, 1))
                      for address, a in zip(addresses, arrays)]
            return self._results(result_descriptors, ranges)
        finally:
            if locked:
                self._state_lock.release()

    def _results(self, descriptors, ranges):
        """numpy arrays for the result descriptors of one call, owning the
        buffers the code allocated (`ranges`: the arguments' memory)."""
        owners = set()
        return [array_from_descriptor(d, rank, dtype, owners, ranges, self.free)
                for d, (rank, dtype) in zip(descriptors, self._result_dtypes)]


class _CUDAShim:
    """dlc's CUDA shim (lib/Runtime/CudaShim.cpp), which the host code of
    compiled CUDA functions calls too: device memory for arguments, the
    copies at the function boundary, and the first error of the calling
    thread's CUDA calls (the shim keeps it, where MLIR's own runtime prints
    and carries on)."""

    def __init__(self):
        lib = ctypes.CDLL(_build_config.DLC_CUDA_SHIM_LIB)
        lib.mgpuMemAlloc.restype = ctypes.c_void_p
        lib.mgpuMemAlloc.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_bool]
        lib.mgpuMemFree.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        for name in ("dlc_cuda_copy_to_device", "dlc_cuda_copy_to_host"):
            getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        lib.dlc_cuda_take_error.restype = ctypes.c_char_p
        self.lib = lib

    def synchronize(self, what):
        """Waits for the device's work: the uploads of a call's arguments
        (a pageable copy may still be in flight when it returns) before its
        kernels run on a non-blocking stream."""
        if not self.lib.dlc_cuda_synchronize():
            self.check(what)

    def take_error(self):
        """The first error of this thread's CUDA calls since the last take
        (a string), or None."""
        error = self.lib.dlc_cuda_take_error()
        return error.decode() if error else None

    def check(self, what):
        error = self.take_error()
        if error:
            raise RuntimeError(f"{what}: {error}")

    def free(self, address):
        self.lib.mgpuMemFree(address, None)

    def to_device(self, array, what):
        """A numpy array whose buffer is device memory holding `array`'s
        contents: the host uses only its address."""
        address = self.lib.mgpuMemAlloc(max(array.nbytes, 1), None, False)
        if not address:
            self.check(what)
            raise MemoryError(f"{what}: no device memory for {array.nbytes} bytes")
        holder = _MallocArray(address, address, array.shape, array.dtype.str, None,
                              self.free)
        if not self.lib.dlc_cuda_copy_to_device(address, array.ctypes.data, array.nbytes):
            self.check(what)
        device = np.asarray(holder)
        return device if device.dtype == array.dtype else device.view(array.dtype)

    def to_host(self, descriptor, rank, dtype, what):
        """A new host array with the elements a result descriptor views in
        device memory."""
        shape = tuple(descriptor.sizes[:rank]) if rank > 0 else ()
        if 0 in shape:
            return np.empty(shape, dtype=dtype)
        itemsize = dtype.itemsize
        strides = tuple(descriptor.strides[:rank]) if rank > 0 else ()
        # The span of elements the view reaches, around its first one.
        low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
        high = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
        staged = np.empty((high - low + 1) * itemsize, dtype=np.uint8)
        first = descriptor.aligned + (descriptor.offset + low) * itemsize
        if not self.lib.dlc_cuda_copy_to_host(staged.ctypes.data, first, staged.nbytes):
            self.check(what)
        view = np.lib.stride_tricks.as_strided(
            staged.view(dtype)[-low:], shape, tuple(s * itemsize for s in strides))
        return view.copy()


_cuda_shim = None
_cuda_shim_lock = threading.Lock()


def cuda_shim():
    """dlc's CUDA shim, loaded once; CUDAUnavailableError without a GPU."""
    global _cuda_shim
    with _cuda_shim_lock:
        if _cuda_shim is None:
            require_cuda()
            _cuda_shim = _CUDAShim()
    return _cuda_shim


class CUDAFunction(CompiledFunction):
    """A function compiled by dl-gpu-pipeline: its kernels run on the GPU,
    every buffer in device memory (dl-gpu-device-memory). Arguments are
    copied into device memory at each call and results back into numpy
    arrays, the device buffers then freed; a failed CUDA call (a kernel
    launch, an allocation, a copy) is a RuntimeError naming it."""

    def __init__(self, module, name, result_specs, opt_level=3, donated=()):
        self.shim = cuda_shim()
        self.free = self.shim.free
        # Arguments the code writes results into (dlc.jit's donate_argnums):
        # copied back into the caller's arrays after each call.
        self.donated = tuple(donated)
        super().__init__(module, name, result_specs, opt_level=opt_level,
                         shared_libs=[_build_config.DLC_CUDA_SHIM_LIB], initialize=True)

    def __call__(self, arrays):
        self.shim.take_error()  # an earlier failure of this thread is not this call's
        device = [self.shim.to_device(a, f"{self.name}: argument {i}")
                  for i, a in enumerate(arrays)]
        self.shim.synchronize(self.name)
        results = super().__call__(device)
        for j in self.donated:
            d = descriptor_type(arrays[j].ndim)()
            d.allocated = d.aligned = device[j].__array_interface__["data"][0]
            d.offset = 0
            for k, n in enumerate(arrays[j].shape):
                d.sizes[k] = n
                d.strides[k] = int(np.prod(arrays[j].shape[k + 1:], dtype=np.int64))
            np.copyto(arrays[j], self.shim.to_host(d, arrays[j].ndim, arrays[j].dtype,
                                                   f"{self.name}: argument {j}"))
        return results

    def _results(self, descriptors, ranges):
        """Results copied to the host; the device buffers the code allocated
        for them freed (the arguments' go with their arrays)."""
        try:
            self.shim.check(self.name)
            return [self.shim.to_host(d, rank, dtype, f"{self.name}: result {i}")
                    for i, (d, (rank, dtype)) in enumerate(zip(descriptors,
                                                               self._result_dtypes))]
        finally:
            freed = set()
            for d in descriptors:
                allocated = d.allocated or 0
                if (allocated and allocated not in freed
                        and not any(lo <= allocated < hi for lo, hi in ranges)):
                    freed.add(allocated)
                    self.free(allocated)
