"""``dlc.jit``: trace, compile, cache and call.

Like ``jax.jit``: the first call with a new signature (argument shapes and
dtypes) traces the Python function into `dl`, compiles it through
`dl-cpu-pipeline` and the ExecutionEngine, and caches the result; later calls
with that signature run the compiled code directly. ``f.lower(*args)`` stops
before compiling and shows the IR at any stage; ``.compile()`` finishes.
"""

import contextlib
import functools
import inspect
import numbers
import re
import time
from dataclasses import dataclass

import numpy as np

from . import compiler, dtypes, passes, runtime
from .mlir import ir
from .errors import ArityError, DTypeError, ShapeError, TraceError
from .nn import Module
from .runtime import CompiledFunction
from .tracing import Tensor, Trace, current_trace


@dataclass(frozen=True)
class ArgSpec:
    """What a compiled function accepts at one argument position. `shape` has
    None for the dynamic (batch) dimension. `static` holds the value of a
    static argument (Python scalar, string, None or tuple of those), which is
    a compile-time constant."""

    name: str
    shape: tuple = None
    dtype: np.dtype = None
    static: object = None

    @property
    def is_static(self):
        return self.shape is None

    def describe(self):
        if self.is_static:
            return f"the constant {self.static!r}"
        return dtypes.format_type(self.shape, self.dtype)


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


class JitFunction:
    """A Python function compiled on first call per signature. See :func:`jit`."""

    def __init__(self, fn, dynamic_batch=False, vector_width=8, tile_size=0,
                 constants=False, parallel=True, disable=(), target="cpu",
                 emulate=False, chip="sm_90", block_size=256, matmul_tile=16,
                 tensor_cores=True, parallel_min_work=None):
        if not callable(fn):
            raise TypeError(f"dlc.jit expects a function, but got {fn!r}")
        functools.update_wrapper(self, fn)
        self._fn = fn
        # A dlc.nn.Module's parameters are arguments of the compiled function
        # (read from the module at each call) unless they are constants.
        self._module = fn if isinstance(fn, Module) and not constants else None
        if isinstance(fn, Module):
            self.__name__ = type(fn).__name__
            self._signature = inspect.signature(fn.forward)
        else:
            self._signature = inspect.signature(fn)
        compiler.check_target(target, emulate, chip, block_size, matmul_tile)
        self._options = compiler.CompileOptions(vector_width=vector_width,
                                                tile_size=tile_size,
                                                parallel=bool(parallel),
                                                parallel_min_work=compiler.check_min_work(
                                                    parallel_min_work),
                                                disable=compiler.check_disable(disable),
                                                target=target, emulate=bool(emulate),
                                                chip=chip, block_size=block_size,
                                                matmul_tile=matmul_tile,
                                                tensor_cores=bool(tensor_cores))
        self._dynamic_batch = dynamic_batch
        self._cache = {}
        # Fast path of calls with positional numpy arrays only: the compiled
        # version by (shape, dtype) of each array, without binding the
        # signature. Only for plain signatures (no defaults, *args, **kwargs
        # or module parameters).
        self._fast_cache = {}
        parameters = list(self._signature.parameters.values())
        plain = self._module is None and all(
            p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                       inspect.Parameter.POSITIONAL_OR_KEYWORD)
            and p.default is inspect.Parameter.empty for p in parameters)
        self._fast_arity = len(parameters) if plain else -1
        self._fast_batched = tuple(
            self._is_batched(i, p.name, ("pos", None)) for i, p in enumerate(parameters)) \
            if plain else ()
        # The JIT links every symbol of the module into one namespace with the C
        # library: a function called `exp` would capture the calls that
        # math.exp lowers to. The prefix keeps user names out of that namespace.
        self._symbol = "dlc_" + re.sub(r"\W", "_", getattr(self, "__name__", "") or "fn")

    # -- arguments -------------------------------------------------------

    def _bind(self, args, kwargs):
        """(names, values, layout) of the call's arguments, flattened in
        parameter order (`*args` and `**kwargs` expanded); `layout` rebuilds
        the call from flat values (see _unflatten)."""
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as error:
            raise ArityError(f"{self.__name__}(): {error}") from None
        bound.apply_defaults()
        names, values, layout = [], [], []
        for name, value in bound.arguments.items():
            kind = self._signature.parameters[name].kind
            if kind == inspect.Parameter.VAR_POSITIONAL:
                names += [f"{name}[{i}]" for i in range(len(value))]
                values += list(value)
                layout.append(("*", len(value)))
            elif kind == inspect.Parameter.VAR_KEYWORD:
                names += list(value)
                values += list(value.values())
                layout.append(("**", tuple(value)))
            elif kind == inspect.Parameter.KEYWORD_ONLY:
                names.append(name)
                values.append(value)
                layout.append(("kw", name))
            else:
                names.append(name)
                values.append(value)
                layout.append(("pos", None))
        if self._module is not None:
            for name, owner, attr in self._module.parameter_slots():
                names.append(name)
                values.append(getattr(owner, attr))
                layout.append(("param", (owner, attr)))
        return names, values, tuple(layout)

    def _is_batched(self, index, name, layout_entry):
        if layout_entry[0] == "param":
            return False
        batch = self._dynamic_batch
        if isinstance(batch, bool):
            return batch
        return index in batch or name in batch

    def _specs(self, names, values, layout):
        """ArgSpecs and arrays (None for static scalars) of a call."""
        specs, arrays = [], []
        batch_size, batch_arg = None, None
        entries = [entry for entry in layout
                   for _ in range(entry[1] if entry[0] == "*" else
                                  len(entry[1]) if entry[0] == "**" else 1)]
        for index, (name, value) in enumerate(zip(names, values)):
            if _is_static(value):
                specs.append(ArgSpec(name, static=value))
                arrays.append(None)
                continue
            array = _to_array(value, name)
            shape = array.shape
            if self._is_batched(index, name, entries[index]):
                if array.ndim == 0:
                    raise ShapeError(
                        f"argument {name!r} is a scalar, but dynamic_batch makes its "
                        f"leading dimension the batch; pass an array with a batch "
                        f"dimension or exclude it from dynamic_batch")
                if batch_size is None:
                    batch_size, batch_arg = shape[0], name
                elif shape[0] != batch_size:
                    raise ShapeError(
                        f"batched arguments disagree on the batch size: "
                        f"{batch_arg!r} has {batch_size} and {name!r} has {shape[0]}")
                shape = (None,) + shape[1:]
            specs.append(ArgSpec(name, tuple(shape), array.dtype))
            arrays.append(array)
        return tuple(specs), arrays

    # -- tracing ---------------------------------------------------------

    def _trace(self, specs, layout):
        source = self._fn.forward if isinstance(self._fn, Module) else self._fn
        try:
            file = inspect.getsourcefile(source) or "<unknown>"
            line = source.__code__.co_firstlineno
        except (TypeError, AttributeError):
            file, line = "<unknown>", 0
        array_specs = [(s.shape, s.dtype) for s in specs if not s.is_static]
        trace = Trace(self._symbol, array_specs, (file, line, 1))
        with trace:
            arguments = iter(trace.arguments)
            flat = [s.static if s.is_static else next(arguments) for s in specs]
            call_args, call_kwargs, parameters = _unflatten(layout, flat)
            with _parameters_replaced(parameters):
                outputs = self._fn(*call_args, **call_kwargs)
            structure, flat = _flatten_outputs(outputs, self.__name__)
            results = [o if isinstance(o, Tensor) else trace.constant(np.asarray(o))
                       for o in flat]
            module = trace.finish(results)
        result_specs = [(len(r.shape), r.dtype) for r in results]
        return module, structure, result_specs

    def lower(self, *args, **kwargs):
        """Traces for these arguments' signature and returns a :class:`Lowered`
        whose IR can be printed at every stage and which compiles on
        ``.compile()``."""
        names, values, layout = self._bind(args, kwargs)
        specs, _ = self._specs(names, values, layout)
        return self._lower(specs, layout)

    def _lower(self, specs, layout):
        module, structure, result_specs = self._trace(specs, layout)
        parameter_slots = [entry[1] for entry in layout if entry[0] == "param"]
        return Lowered(module, self._symbol, specs, structure, result_specs,
                       self._options, parameter_slots)

    def _fast_key(self, args):
        """The fast-path cache key of a call, or None when the call needs the
        general path (not only C-contiguous, aligned numpy arrays, or batched
        arguments that disagree on the batch size)."""
        if len(args) != self._fast_arity:
            return None
        key, batch = [], None
        for array, batched in zip(args, self._fast_batched):
            if type(array) is not np.ndarray or not array.flags.carray:
                return None
            shape = array.shape
            if batched:
                if not shape or (batch is not None and shape[0] != batch):
                    return None
                batch = shape[0]
                shape = (None,) + shape[1:]
            key.append((shape, array.dtype))
        return tuple(key)

    def __call__(self, *args, **kwargs):
        if current_trace() is not None:
            # Called from another traced function: inline it.
            return self._fn(*args, **kwargs)
        fast_key = None if kwargs else self._fast_key(args)
        if fast_key is not None:
            compiled = self._fast_cache.get(fast_key)
            if compiled is not None:
                return compiled._run(list(args))
        names, values, layout = self._bind(args, kwargs)
        specs, arrays = self._specs(names, values, layout)
        key = (specs, layout)
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self._lower(specs, layout).compile()
            self._cache[key] = compiled
        if fast_key is not None and all(a is not None for a in arrays):
            self._fast_cache[fast_key] = compiled
        return compiled._run([a for a in arrays if a is not None])

    def cache_size(self):
        """How many signatures have been compiled."""
        return len(self._cache)


def _unflatten(layout, flat):
    """(args, kwargs, parameters) of a call from its flattened argument values;
    parameters are ((owner, attribute), value) pairs."""
    args, kwargs, parameters, values = [], {}, [], iter(flat)
    for kind, detail in layout:
        if kind == "pos":
            args.append(next(values))
        elif kind == "*":
            args.extend(next(values) for _ in range(detail))
        elif kind == "kw":
            kwargs[detail] = next(values)
        elif kind == "**":
            kwargs.update((key, next(values)) for key in detail)
        else:
            parameters.append((detail, next(values)))
    return args, kwargs, parameters


@contextlib.contextmanager
def _parameters_replaced(parameters):
    """Module attributes temporarily set to the traced parameter tensors."""
    saved = [(owner, attr, getattr(owner, attr)) for (owner, attr), _ in parameters]
    try:
        for (owner, attr), value in parameters:
            setattr(owner, attr, value)
        yield
    finally:
        for owner, attr, value in saved:
            setattr(owner, attr, value)


def _flatten_outputs(outputs, fn_name):
    if isinstance(outputs, (tuple, list)):
        if not outputs:
            raise TraceError(f"{fn_name}() returned an empty {type(outputs).__name__}; "
                             f"a dlc.jit function must return at least one tensor")
        return type(outputs), list(outputs)
    if outputs is None:
        raise TraceError(f"{fn_name}() returned None; a dlc.jit function must return "
                         f"a tensor or a tuple/list of tensors")
    return None, [outputs]


class Lowered:
    """A traced function before compilation: its IR at every stage."""

    stages = compiler.STAGES

    def __init__(self, module, symbol, arg_specs, structure, result_specs, options,
                 parameter_slots=()):
        self._modules = {"dl": module}
        self.parameter_slots = list(parameter_slots)
        self.symbol = symbol
        self.arg_specs = arg_specs
        self._structure = structure
        self.result_specs = result_specs
        self.options = options

    @property
    def stages(self):
        """The stages of this target (:data:`dlc.STAGES`, or
        :data:`dlc.GPU_STAGES` for ``target="cuda"``)."""
        return self.options.stages

    def _module_at(self, stage):
        compiler.check_stage(stage, self.options.stages)
        if stage not in self._modules:
            path = compiler.stage_path(stage)
            start = [s for s in path if s in self._modules][-1]
            module = compiler.clone(self._modules[start])
            self._modules[stage] = compiler.run_stages(module, start, stage, self.options)
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
            if self.options.target != "cuda":
                raise ValueError("as_text('ptx') needs a function compiled with "
                                 "target='cuda'")
            return compiler.ptx_text(self._module_at("binary"))
        return self._module_at(stage).operation.get_asm(enable_debug_info=debug_info)

    def kernel_count(self):
        """How many kernels the compiled function runs: its linalg operations
        at the linalg stage (after fusion), each one loop nest, less the
        elementwise ones computed in a matmul's or convolution's register
        tiles (:meth:`fused_epilogues`)."""
        return (compiler.kernel_counts(self._module_at("linalg"))[self.symbol]
                - self.fused_epilogues())

    def fused_epilogues(self):
        """How many elementwise loop nests dl-affine-register-tile computes
        in the register tiles of the matmul or convolution before them (0 for
        ``target="cuda"``, and with ``disable="dl-fuse-epilogue"``)."""
        if self.options.target == "cuda":
            return 0
        for op in self._module_at("affine").body.operations:
            if op.operation.name == "func.func" and \
                    ir.StringAttr(op.attributes["sym_name"]).value == self.symbol:
                if "dl.fused_epilogues" in op.attributes:
                    return ir.IntegerAttr(op.attributes["dl.fused_epilogues"]).value
        return 0

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
        exist."""
        start_time = time.perf_counter()
        if self.options.target == "cuda" and not self.options.emulate:
            runtime.require_cuda()
            function = runtime.CUDAFunction(self._module_at("binary"), self.symbol,
                                            self.result_specs)
        else:
            stage = "emulated" if self.options.target == "cuda" else "llvm"
            function = CompiledFunction(self._module_at(stage), self.symbol,
                                        self.result_specs)
        seconds = time.perf_counter() - start_time
        return Compiled(self, function, seconds)


class Compiled:
    """A compiled function for one signature. Calling it with arguments of
    another shape, dtype or count raises a DTypeError, ShapeError or
    ArityError naming the argument, what it expects and what it got."""

    def __init__(self, lowered, function, compile_seconds):
        self.lowered = lowered
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
        arrays, batch_size, batch_arg = [], None, None
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
            if spec.shape and spec.shape[0] is None:
                if batch_size is None:
                    batch_size, batch_arg = array.shape[0], spec.name
                elif array.shape[0] != batch_size:
                    raise ShapeError(
                        f"batched arguments disagree on the batch size: "
                        f"{batch_arg!r} has {batch_size} and {spec.name!r} has "
                        f"{array.shape[0]}")
            arrays.append(array)
        return arrays

    def __call__(self, *args):
        """Runs on `args`; for a dlc.nn.Module compiled with its parameters as
        arguments, pass the forward() arguments only: the parameters are read
        from the module."""
        args += tuple(getattr(owner, attr) for owner, attr in self.lowered.parameter_slots)
        return self._run(self._check(args))

    def _run(self, arrays):
        results = self._function(arrays)
        structure = self.lowered._structure
        if structure is None:
            return results[0]
        return structure(results)


def jit(fn=None, *, dynamic_batch=False, vector_width=8, tile_size=0, constants=False,
        parallel=True, disable=(), target="cpu", emulate=False, chip="sm_90",
        block_size=256, matmul_tile=16, tensor_cores=True, parallel_min_work=None):
    """Compiles `fn` with dlc on first call per argument signature.

    Usable as ``@dlc.jit``, ``@dlc.jit(dynamic_batch=True)`` or
    ``dlc.jit(fn, ...)``.

    Arguments of the compiled function are numpy arrays (or anything
    ``numpy.asarray`` accepts, lists included); Python ``int``/``float``/
    ``bool``/``str``/``None`` arguments and tuples of them are compile-time
    constants instead (a new value compiles a new version).

    Args:
      dynamic_batch: ``True`` makes the leading dimension of every array
        argument dynamic, so one compiled version serves every batch size; a
        tuple of argument positions or names restricts this to those
        arguments. Batched arguments must agree on the batch size.
      vector_width: lanes of the vectorizer (0 disables vectorization).
      tile_size: affine loop tile size (0 disables tiling).
      constants: for a dlc.nn.Module, bake its parameters into the compiled
        code as constants (graph passes can fold them; a parameter change is
        not seen). By default they are arguments, read from the module at
        each call. numpy arrays a plain function captures are always
        constants.
      parallel: run the outermost parallel loop of each loop nest with
        enough work on several threads; how many is read at each call from
        ``dlc.set_num_threads`` (default: ``DLC_NUM_THREADS``, else the
        number of cores). ``False`` compiles single-threaded code.
      parallel_min_work: the least estimated number of (vector) operations
        a loop nest must run to go on threads; ``None`` (default) takes the
        pipeline's, 2**16 (a fork/join on dlc's thread pool costs a few
        microseconds; smaller nests gain less than that). 0 puts every
        parallel nest on threads.
      disable: optimizations to turn off, by pass name: ``"dl-simplify"``
        (algebraic simplification, a Python pass), ``"dl-fold-batchnorm"``,
        ``"dl-layout"`` (NCHW convolutions and poolings run in NHWC),
        ``"dl-linalg-fuse"`` (elementwise fusion), ``"dl-fuse-epilogue"``
        (the elementwise op after a matmul or convolution computed in its
        register tiles; CPU only) and ``"dl-plan-memory"`` (temporaries
        sharing memory). Constant
        folding and canonicalization always run.
      target: ``"cpu"`` (default) or ``"cuda"``: compile with
        `dl-gpu-pipeline` into GPU kernels (``as_text("gpu")`` shows them
        mapped to blocks and threads, ``as_text("ptx")`` their PTX). Running
        them needs an NVIDIA GPU and its driver (``libcuda.so.1``); without
        one a call raises :class:`dlc.CUDAUnavailableError`.
      emulate: with ``target="cuda"``, run the very GPU kernels on the CPU
        instead, as loops over blocks and threads (`dl-gpu-to-cpu`), to check
        them where no GPU exists. Slow: for testing, not for speed.
      chip: with ``target="cuda"``, the NVIDIA chip (``"sm_70"`` ...
        ``"sm_90"``) the PTX is generated for.
      block_size: with ``target="cuda"``, threads per block of the
        elementwise and reduction kernels, spread over the innermost
        dimensions (1..1024).
      matmul_tile: with ``target="cuda"``, matmul kernels stage
        ``matmul_tile`` x ``matmul_tile`` tiles of their operands in shared
        memory, one thread per output element (1..32).
      tensor_cores: with ``target="cuda"`` and a chip from ``"sm_80"`` on,
        float16 and bfloat16 matmuls (f32 accumulation) run on tensor cores
        (``mma.sync`` m16n8k16, 4 warps per 64 x 64 tile of the result);
        ``False`` gives them the kernels of other matmuls. float32 matmuls
        never use them (TF32 would round their inputs).
    """
    def wrap(function):
        return JitFunction(function, dynamic_batch=dynamic_batch,
                           vector_width=vector_width, tile_size=tile_size,
                           constants=constants, parallel=parallel, disable=disable,
                           target=target, emulate=emulate, chip=chip,
                           block_size=block_size, matmul_tile=matmul_tile,
                           tensor_cores=tensor_cores,
                           parallel_min_work=parallel_min_work)
    return wrap(fn) if fn is not None else wrap
