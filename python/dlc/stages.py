"""The stages of a compilation, as objects (like JAX's ``stages.py``).

``dlc.jit(f).lower(*args)`` gives a :class:`Lowered`: the function traced
for one signature, whose IR can be printed at every stage; its
``.compile()`` gives a :class:`Compiled`, which runs. :class:`ArgSpec` says
what a compiled function accepts at each argument position.
"""

import tempfile
import time
from dataclasses import dataclass, replace

import numpy as np

from . import cache, compiler, dtypes, passes, runtime, tracing
from .errors import ArityError, CompileError, DTypeError, ShapeError, TraceError
from .mlir import ir
from .runtime import CompiledFunction, JITCode, LibraryCode
from .tracing import Tensor, gc_paused


@dataclass(frozen=True)
class ArgSpec:
    """What a compiled function accepts at one argument position. `shape` has
    None for each dynamic dimension, and `dims` names them (None where static;
    dimensions of the same name must agree at a call; without names, a
    dynamic leading dimension is "batch"). `static` holds the value of a
    static argument (Python scalar, string, None or tuple of those), which is
    a compile-time constant."""

    name: str
    shape: tuple = None
    dtype: np.dtype = None
    static: object = None
    dims: tuple = None

    def dim_name(self, axis):
        """The name of dynamic dimension `axis`."""
        if self.dims is not None and self.dims[axis] is not None:
            return self.dims[axis]
        return "batch" if axis == 0 else f"{self.name}.{axis}"

    @property
    def is_static(self):
        return self.shape is None

    def describe(self):
        if self.is_static:
            return f"the constant {self.static!r}"
        return dtypes.format_type(self.shape, self.dtype)


def check_dynamic_dim(seen, name, size, arg, axis):
    """Records that dynamic dimension `name` is `size` in argument `arg`; a
    ShapeError naming the dimension when another argument gave it another
    size."""
    first = seen.setdefault(name, (size, arg, axis))
    if first[0] == size:
        return
    if name == "batch" and axis == 0 and first[2] == 0:
        raise ShapeError(f"batched arguments disagree on the batch size: {first[1]!r} "
                         f"has {first[0]} and {arg!r} has {size}")
    raise ShapeError(f"arguments disagree on dynamic dimension {name!r}: it is "
                     f"{first[0]} in {first[1]!r} (axis {first[2]}) and {size} in "
                     f"{arg!r} (axis {axis})")


def _describe_array(array):
    return dtypes.format_type(array.shape, array.dtype)


def _is_static(value):
    """Python scalars, strings, None and tuples of those are compile-time
    constants of a call (numpy scalars and lists are arrays)."""
    if isinstance(value, tuple):
        return all(_is_static(v) for v in value)
    return (value is None or isinstance(value, (bool, int, float, str))) and \
        not isinstance(value, np.generic)


def _to_array(value, name):
    # The common case first, cheaply: a C-contiguous aligned numpy array.
    if type(value) is np.ndarray:
        flags = value.flags
        if flags.c_contiguous and flags.aligned and dtypes.is_supported(value.dtype):
            return value
    if isinstance(value, Tensor):
        raise TraceError(f"argument {name!r} is a traced tensor: a dlc.jit function "
                         f"cannot be called while another one is being traced")
    try:
        array = np.asarray(value)
    except Exception as error:  # noqa: BLE001 - re-raised with the argument's name
        raise DTypeError(f"argument {name!r}: cannot convert {type(value).__name__} "
                         f"to an array: {error}") from None
    if not dtypes.is_supported(array.dtype):
        raise DTypeError(f"argument {name!r} has dtype {array.dtype}, which dlc does "
                         f"not support; supported: {dtypes.supported_names()}")
    # Passed by pointer: C order and aligned, copied only when not already so
    # (np.ascontiguousarray would turn a 0-d array into a 1-d one).
    return np.require(array, requirements=["C_CONTIGUOUS", "ALIGNED"])


class Lowered:
    """A traced function before compilation: its IR at every stage.

    Constants of 64 KiB or more (weights; tracing.RESOURCE_BYTES) reference
    the arrays they were traced from until the IR is first needed (compiled
    on a cache miss, or printed), when they are copied: an array changed in
    place between ``lower`` and ``compile`` is compiled as it is then."""

    def __init__(self, module, symbol, arg_specs, structure, result_specs, options,
                 parameter_slots=(), donations=(), trace_seconds=None):
        #: the module as traced: its large constants may still be resource
        #: blobs referencing the caller's arrays (tracing.RESOURCE_BYTES);
        #: the cache key reads them there, the stages from the "dl" module,
        #: where they are dense attributes (made on first use)
        self._traced = module
        self._modules = {}
        #: seconds spent per phase of the compilation so far: "trace" (the
        #: function traced to dl, where known), "graph" (graph passes),
        #: "codegen" (lowering to the llvm dialect), "llvm" (LLVM's code
        #: generation) or "cache" (the code loaded from the disk cache)
        self.phase_seconds = {} if trace_seconds is None else {"trace": trace_seconds}
        self.parameter_slots = list(parameter_slots)
        self.symbol = symbol
        self.arg_specs = arg_specs
        self._structure = structure
        self.result_specs = result_specs
        self.options = options
        #: per result, the array argument (its index among the array
        #: arguments) it is written into and returned as, or -1: see
        #: dlc.jit's donate_argnums; () where nothing is donated
        self.donations = tuple(donations)

    @property
    def _compiled_result_specs(self):
        """The results the compiled code returns: donated ones are written
        into their arguments instead (dl-return-donated)."""
        if not self.donations:
            return self.result_specs
        return [spec for spec, j in zip(self.result_specs, self.donations) if j < 0]

    @property
    def stages(self):
        """The stages of this target (:data:`dlc.STAGES`, or
        :data:`dlc.GPU_STAGES` for ``target="cuda"``)."""
        return compiler.stages_for(self.options)

    @property
    def target(self):
        """The :class:`dlc.Target` the CPU code is compiled for (every stage
        carries it as ``dl.target``)."""
        return self.options.cpu_target

    def _module_at(self, stage):
        compiler.check_stage(stage, self.stages)
        if "dl" not in self._modules:
            self._modules["dl"] = tracing.materialized(self._traced)
        if stage not in self._modules:
            path = compiler.stage_path(stage)
            start = [s for s in path if s in self._modules][-1]
            self._modules[stage] = compiler.run_stages(self._modules[start], start, stage,
                                                       self.options, self.symbol,
                                                       phases=self.phase_seconds)
        return self._modules[stage]

    def as_text(self, stage="dl", *, debug_info=False):
        """The module's IR at `stage` (one of :attr:`stages`). With
        `debug_info`, every op shows its location (the user's file:line).
        ``"fused"`` gives the fusion report of the graph stage instead: the
        kernels the graph is compiled into and the dl ops in each; for
        ``target="cuda"``, ``"ptx"`` gives the PTX of the kernels."""
        if stage == "fused":
            report = passes.fusion_report(self._module_at("graph"))
            epilogues = self.fused_epilogues()
            if epilogues:
                report += (f"\n  + {epilogues} elementwise kernel(s) computed in the "
                           f"register tiles of the matmul/convolution before them")
            return report
        if stage == "ptx":
            if not self.options.is_cuda:
                raise ValueError("as_text('ptx') needs a function compiled with "
                                 "target='cuda'")
            if self.options.gpu.kernel_format in ("cubin", "fatbin"):
                return compiler.ptx_text(self.binary_module("ptx"))
            return compiler.ptx_text(self._module_at("binary"))
        return self._module_at(stage).operation.get_asm(enable_debug_info=debug_info)

    def binary_module(self, kernel_format):
        """A new module at the "binary" stage with the kernels embedded as
        `kernel_format` ("ptx", "cubin" or "fatbin"; see
        :class:`dlc.GPUOptions`), whatever the function was compiled with."""
        options = replace(self.options, gpu=replace(self.options.gpu,
                                                    kernel_format=kernel_format))
        return compiler.run_stages(self._module_at("gpu"), "gpu", "binary",
                                   options, self.symbol)

    def kernel_count(self):
        """How many kernels the compiled function runs: its linalg operations
        at the linalg stage (after fusion), each one loop nest, less the
        elementwise ones computed in a matmul's or convolution's register
        tiles (:meth:`fused_epilogues`)."""
        return (compiler.kernel_counts(self._module_at("linalg"))[self.symbol]
                - self.fused_epilogues())

    def fused_epilogues(self):
        """How many elementwise loop nests dl-affine-register-tile (float)
        and dl-integer-matmul (int8) compute in the register tiles of the
        matmul or convolution before them (0 for ``target="cuda"``, and with
        ``disable="dl-fuse-epilogue"``)."""
        if self.options.is_cuda:
            return 0
        # The function and the parts dl-split-function{early} cut it into.
        count = 0
        for op in self._module_at("affine").body.operations:
            if op.operation.name != "func.func":
                continue
            name = ir.StringAttr(op.attributes["sym_name"]).value
            if (name == self.symbol or (name.startswith(self.symbol + "_part_")
                                        and "dl.split_part" in op.attributes)) \
                    and "dl.fused_epilogues" in op.attributes:
                count += ir.IntegerAttr(op.attributes["dl.fused_epilogues"]).value
        return count

    def memory_plan(self):
        """The temporaries of the compiled function, from dl-plan-memory: a
        dict with ``buffers`` (statically shaped temporaries), ``peak_bytes``
        (the bytes they take at most, as planned) and
        ``unplanned_peak_bytes`` (the same without sharing; equal to
        ``peak_bytes`` when dl-plan-memory is disabled). Returned buffers and
        dynamically shaped ones are not counted."""
        module = self._module_at("bufferized")
        for op in module.body.operations:
            if op.operation.name == "func.func" and \
                    ir.StringAttr(op.attributes["sym_name"]).value == self.symbol:
                plan = ir.DictAttr(op.attributes["dl.memory_plan"])
                return {name: ir.IntegerAttr(plan[name]).value
                        for name in ("buffers", "peak_bytes", "unplanned_peak_bytes")}
        raise LookupError(f"no function @{self.symbol} in the module")

    def compile(self):
        """JIT-compiles the function; returns a :class:`Compiled`. For
        ``target="cuda"`` without ``emulate``, raises
        :class:`dlc.CUDAUnavailableError` where no CUDA driver and device
        exist; for a :class:`dlc.Target` this CPU cannot run (another
        architecture, or ISA features it lacks), a :class:`dlc.CompileError`
        saying so (``as_text`` still shows every stage)."""
        with gc_paused():
            return self._compile()

    def _compile(self):
        start_time = time.perf_counter()
        if self.options.is_cuda and not self.options.gpu.emulate:
            runtime.require_cuda()
            function = runtime.CUDAFunction(self._module_at("binary"), self.symbol,
                                            self._compiled_result_specs,
                                            donated=[j for j in self.donations if j >= 0])
        else:
            why_not = self.target.why_not_runnable()
            if why_not is not None:
                raise CompileError(
                    f"{self.symbol}: the compiled code cannot run on this machine: "
                    f"{why_not}. Use .lower(...).as_text(stage) to see its code, or "
                    f"target='cpu' to compile for this machine.")
            function = self._compile_for_cpu()
        seconds = time.perf_counter() - start_time
        return Compiled(self, function, seconds)

    def _compile_for_cpu(self):
        """The CPU code (of the llvm stage, or the emulated GPU one): from
        dlc's disk cache (:mod:`dlc.cache`) when an earlier compile stored
        it, else JIT-compiled and stored there."""
        stage = "emulated" if self.options.is_cuda else "llvm"
        opt_level = self.options.cpu.llvm_opt_level
        entry_key = None
        if cache.directory() is not None:
            # The key (the dl module's bytecode, weights included, hashed)
            # counts as the cache's time, hit or miss.
            start = time.perf_counter()
            tuning = self.options.tuning_records
            entry_key = cache.key(self._traced,
                                  compiler.pipeline_text("dl", stage, self.options)
                                  + f" llvm -O{opt_level}"
                                  + ("" if tuning is None or self.options.is_cuda
                                     else tuning.key_text(self.target)),
                                  self.symbol, self._compiled_result_specs)
            key_seconds = time.perf_counter() - start
            entry = cache.lookup(entry_key)
            if entry is not None:
                try:
                    function = CompiledFunction(LibraryCode(*entry), self.symbol,
                                                self._compiled_result_specs)
                    self.phase_seconds["cache"] = time.perf_counter() - start
                    return function
                except (OSError, RuntimeError):
                    cache.remove(entry_key)  # unloadable: compile it again
        module = self._module_at(stage)
        start = time.perf_counter()
        # Large constants (weights) stay numpy arrays the code reads through
        # pointers: LLVM compiles no megabytes of data (runtime's
        # externalize_constants; on a copy, so that as_text("llvm") shows the
        # module as the pipeline made it).
        weights = {}
        if runtime.large_constants(module):
            module = compiler.clone(module)
            weights = runtime.externalize_constants(module)
        function = None
        if runtime.wants_library(module):
            function = self._compile_library(module, opt_level, weights, entry_key, start)
        if function is None:
            code = JITCode(module, opt_level=opt_level, pic=entry_key is not None,
                           weights=weights)
            function = CompiledFunction(code, self.symbol, self._compiled_result_specs)
            if entry_key is not None and self._worth_storing(start):
                cache.store(entry_key, code)
        self.phase_seconds["llvm"] = time.perf_counter() - start
        if entry_key is not None:
            self.phase_seconds["llvm"] += key_seconds
        return function

    def _worth_storing(self, llvm_start):
        """Whether the whole compile (tracing, passes, and LLVM since
        `llvm_start`) took the cache's minimum time: a compile from the
        cache saves all of it, not only LLVM's part."""
        spent = sum(self.phase_seconds.values()) + time.perf_counter() - llvm_start
        return spent >= cache.min_seconds()

    def _compile_library(self, module, opt_level, weights, entry_key, start):
        """A large module's code: compiled by LLVM in parallel parts and
        linked into a library (runtime.compile_library), built in the disk
        cache's folder and stored there when the cache is on; None (the
        caller JIT-compiles) where it could not be linked or loaded."""
        folder = cache.begin(entry_key) if entry_key is not None else None
        in_cache = folder is not None
        if folder is None:
            folder = tempfile.mkdtemp(prefix="dlc-code-")
        try:
            library = cache.library_path(folder)
            runtime.compile_library(module, library, opt_level)
            function = CompiledFunction(LibraryCode(library, weights), self.symbol,
                                        self._compiled_result_specs)
        except (OSError, runtime.LinkError):
            cache.abandon(folder)
            return None
        except RuntimeError as error:
            cache.abandon(folder)
            raise CompileError(f"{self.symbol}: {error}") from None
        # The library stays loaded once its file is gone (moved into place,
        # or removed when nothing is stored).
        if in_cache and self._worth_storing(start):
            cache.commit(entry_key, folder, weights)
        else:
            cache.abandon(folder)
        return function


class Compiled:
    """A compiled function for one signature. Calling it with arguments of
    another shape, dtype or count raises a DTypeError, ShapeError or
    ArityError naming the argument, what it expects and what it got."""

    def __init__(self, lowered, function, compile_seconds):
        self.lowered = lowered
        #: seconds per phase of its compilation (see Lowered.phase_seconds)
        self.phase_seconds = dict(lowered.phase_seconds)
        self.arg_specs = lowered.arg_specs
        self.compile_seconds = compile_seconds
        self._function = function
        # The common call, checked cheaply: every argument an array of a
        # fully static shape, passed as a C-contiguous, aligned ndarray of
        # exactly that dtype and shape (else the full check below runs).
        specs = self.arg_specs
        self._fast_specs = None
        if all(not s.is_static and None not in s.shape for s in specs):
            self._fast_specs = tuple((np.dtype(s.dtype), tuple(s.shape)) for s in specs)

    def as_text(self, stage="dl", *, debug_info=False):
        return self.lowered.as_text(stage, debug_info=debug_info)

    def _check(self, args):
        fast = self._fast_specs
        if fast is not None and len(args) == len(fast):
            for value, (dtype, shape) in zip(args, fast):
                if type(value) is not np.ndarray or value.dtype != dtype or \
                        value.shape != shape:
                    break
                flags = value.flags
                if not (flags.c_contiguous and flags.aligned):
                    break
            else:
                return list(args)
        specs = self.arg_specs
        if len(args) != len(specs):
            parameters = len(self.lowered.parameter_slots)
            user_specs = specs[:len(specs) - parameters]
            names = ", ".join(s.name for s in user_specs)
            raise ArityError(f"compiled function takes {len(user_specs)} arguments "
                             f"({names}), but got {len(args) - parameters}")
        arrays, seen = [], {}
        for spec, value in zip(specs, args):
            if spec.is_static:
                if value != spec.static or type(value) is not type(spec.static):
                    raise ShapeError(
                        f"argument {spec.name!r} was {spec.static!r} when compiled, "
                        f"but got {value!r}; Python scalars, strings, None and tuples "
                        f"are compile-time constants")
                continue
            array = _to_array(value, spec.name)
            if array.dtype != spec.dtype:
                raise DTypeError(f"argument {spec.name!r}: expected {spec.describe()}, "
                                 f"but got {_describe_array(array)}")
            if array.ndim != len(spec.shape) or any(
                    e is not None and e != g for e, g in zip(spec.shape, array.shape)):
                raise ShapeError(f"argument {spec.name!r}: expected {spec.describe()}, "
                                 f"but got {_describe_array(array)}")
            for axis, expected in enumerate(spec.shape):
                if expected is None:
                    check_dynamic_dim(seen, spec.dim_name(axis), array.shape[axis],
                                      spec.name, axis)
            arrays.append(array)
        return arrays

    def __call__(self, *args):
        """Runs on `args`; for a dlc.nn.Module compiled with its parameters as
        arguments, pass the forward() arguments only: the parameters are read
        from the module."""
        args += tuple(getattr(owner, attr) for owner, attr in self.lowered.parameter_slots)
        return self._run(self._check(args))

    def _run(self, arrays):
        donations = self.lowered.donations
        if donations:
            arrays = _donatable(arrays, donations)
            kept = iter(self._function(arrays))
            # A donated result is its argument's array, updated in place.
            results = [arrays[j] if j >= 0 else next(kept) for j in donations]
        else:
            results = self._function(arrays)
        structure = self.lowered._structure
        if structure is None:
            return results[0]
        return structure(results)


def _donatable(arrays, donations):
    """The arrays of a call with donated arguments: each donated one is
    written in place, so it must be a writeable ndarray that no other
    argument shares memory with (the same array passed twice, or views of
    one); one that is not is copied first (the call then returns the copy,
    and the caller's array is left as it was)."""
    donated = {j for j in donations if j >= 0}
    owners = {}
    for a in arrays:
        owner = id(a.base if a.base is not None else a)
        owners[owner] = owners.get(owner, 0) + 1
    arrays = list(arrays)
    for j in donated:
        a = arrays[j]
        owner = id(a.base if a.base is not None else a)
        if owners[owner] > 1 or not a.flags.writeable:
            arrays[j] = a.copy()
    return arrays
