"""``dlc.jit``: trace, compile, cache and call.

Like ``jax.jit``: the first call with a new signature (argument shapes and
dtypes) traces the Python function into `dl`, compiles it through
`dl-cpu-pipeline` and the ExecutionEngine, and caches the result; later calls
with that signature run the compiled code directly. ``f.lower(*args)`` stops
before compiling and shows the IR at any stage (a :class:`dlc.Lowered`);
``.compile()`` finishes (a :class:`dlc.Compiled`). What to compile for and
how is a :class:`dlc.CompileOptions` (its common fields are keywords of
:func:`jit`).
"""

import collections
import contextlib
import functools
import inspect
import re
import threading
import time
import weakref

import numpy as np

from .errors import ArityError, ShapeError, TraceError
from .mlir import ir
from .nn import Module
from .options import CompileOptions
from .stages import ArgSpec, Lowered, _is_static, _to_array, check_dynamic_dim
from .tracing import Tensor, Trace, current_trace, gc_paused


class JitFunction:
    """A Python function compiled on first call per signature. See :func:`jit`."""

    def __init__(self, fn, options=CompileOptions(), dynamic_batch=False,
                 constants=False, donate_argnums=(), dynamic=None):
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
        if not isinstance(options, CompileOptions):
            raise TypeError(f"options must be a dlc.CompileOptions, but got {options!r}")
        self._options = options
        self._dynamic_batch = self._check_dynamic_batch(dynamic_batch)
        self._dynamic = self._check_dynamic(dynamic)
        self._donate = self._check_donate(donate_argnums)
        # Compiled versions by signature, least recently used first; at most
        # max_signatures() of them (each holds machine code and, JIT-compiled,
        # an LLVM session: about 2 MB).
        self._cache = collections.OrderedDict()
        # Guards changes of both caches: calls from several threads, and
        # clear_cache() from any of them.
        self._lock = threading.Lock()
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
        # (Exact shapes key the fast path: with dynamic dimensions a new size
        # would add an entry per call, so they take the general path.)
        self._fast_arity = len(parameters) if plain and not self._dynamic else -1
        self._fast_batched = tuple(
            self._is_batched(i, p.name, ("pos", None)) for i, p in enumerate(parameters)) \
            if plain else ()
        # The JIT links every symbol of the module into one namespace with the C
        # library: a function called `exp` would capture the calls that
        # math.exp lowers to. The prefix keeps user names out of that namespace.
        self._symbol = "dlc_" + re.sub(r"\W", "_", getattr(self, "__name__", "") or "fn")
        _functions.add(self)

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

    def _check_dynamic_batch(self, batch):
        """`batch` if it is a bool or a tuple/list of positions and names of
        this function's parameters; else a TypeError/ValueError naming what
        is accepted (an unknown name used to be ignored silently)."""
        if isinstance(batch, bool):
            return batch
        if isinstance(batch, (str, int)) or not isinstance(batch, (tuple, list)):
            raise TypeError(f"dynamic_batch must be True, False or a tuple of argument "
                            f"positions or names, but got {batch!r}")
        parameters = list(self._signature.parameters.values())
        for entry in batch:
            self._check_argument(entry, "dynamic_batch", "dynamic_batch entries")
        return tuple(batch)

    def _check_argument(self, entry, option, what):
        """`entry` names an argument of this function (a name, or a position
        in range unless it takes *args); else a TypeError/ValueError naming
        `option`."""
        parameters = list(self._signature.parameters.values())
        names = [p.name for p in parameters]
        variadic = any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in parameters)
        if isinstance(entry, bool) or not isinstance(entry, (int, str)):
            raise TypeError(f"{what} must be argument positions or names, but got "
                            f"{entry!r}")
        if isinstance(entry, str) and entry not in names:
            raise ValueError(f"{option} names {entry!r}, which is not an argument "
                             f"of {getattr(self, '__name__', 'the function')}; its "
                             f"arguments are {names}")
        if isinstance(entry, int) and not variadic and not 0 <= entry < len(names):
            raise ValueError(f"{option} position {entry} is out of range for "
                             f"{getattr(self, '__name__', 'the function')}, which takes "
                             f"{len(names)} argument(s)")

    def _check_dynamic(self, dynamic):
        """`dynamic` as {argument position or name: {axis: dimension name}}.
        Accepted: None, or a dict from argument positions or names to a dict
        {axis: name} (arguments' dimensions of one name must agree at a call)
        or a sequence of axes (each its own dimension, named "arg.axis")."""
        if dynamic is None:
            return {}
        if not isinstance(dynamic, dict):
            raise TypeError(f"dynamic must be a dict from argument names or positions "
                            f"to the dynamic axes ({{axis: name}} or a tuple of axes), "
                            f"but got {dynamic!r}")
        names = [p.name for p in self._signature.parameters.values()]
        result = {}
        for arg, axes in dynamic.items():
            self._check_argument(arg, "dynamic", "dynamic's keys")
            label = arg if isinstance(arg, str) else (
                names[arg] if 0 <= arg < len(names) else f"#{arg}")
            if isinstance(axes, dict):
                named = dict(axes)
            elif isinstance(axes, (tuple, list)):
                named = {axis: f"{label}.{axis}" for axis in axes}
            else:
                raise TypeError(f"dynamic[{arg!r}] must be {{axis: name}} or a tuple of "
                                f"axes, but got {axes!r}")
            for axis, name in named.items():
                if isinstance(axis, bool) or not isinstance(axis, int) or \
                        not isinstance(name, str):
                    raise TypeError(f"dynamic[{arg!r}]: expected int axes and str "
                                    f"names, but got {axis!r}: {name!r}")
            result[arg] = named
        return result

    def _dynamic_axes(self, index, name, ndim):
        """{axis: name} of the dynamic dimensions `dynamic` gives argument
        `index` (`name`), axes normalized; a ShapeError for an axis it does
        not have."""
        named = self._dynamic.get(name, self._dynamic.get(index))
        if not named:
            return {}
        axes = {}
        for axis, dim in named.items():
            if not -ndim <= axis < ndim:
                raise ShapeError(f"dynamic: argument {name!r} has {ndim} dimension(s), "
                                 f"so it has no axis {axis}")
            axes[axis % ndim] = dim
        return axes

    def _check_donate(self, positions):
        if isinstance(positions, int) and not isinstance(positions, bool):
            positions = (positions,)
        try:
            positions = tuple(positions)
        except TypeError:
            raise TypeError(f"donate_argnums must be an argument position or a tuple "
                            f"of them, but got {positions!r}") from None
        for p in positions:
            if not isinstance(p, int) or isinstance(p, bool) or p < 0:
                raise TypeError(f"donate_argnums entries must be argument positions "
                                f"(ints >= 0), but got {p!r}")
        parameters = list(self._signature.parameters.values())
        if not any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in parameters):
            count = sum(p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                   inspect.Parameter.POSITIONAL_OR_KEYWORD)
                        for p in parameters)
            for p in positions:
                if p >= count:
                    raise ValueError(f"donate_argnums position {p} is out of range for "
                                     f"{self.__name__}(), which takes {count} positional "
                                     f"argument(s)")
        return tuple(sorted(set(positions)))

    def _donations(self, specs, results):
        """Per result: the array argument (index among the array arguments)
        it is written into, or -1. Each result takes the first donated
        argument not yet taken with its exact shape and dtype."""
        if not self._donate:
            return ()
        array_index, index = {}, 0
        for position, spec in enumerate(specs):
            if not spec.is_static:
                array_index[position] = index
                index += 1
        free = []
        for position in self._donate:
            if position >= len(specs):
                raise ValueError(f"donate_argnums position {position} is out of range: "
                                 f"{self.__name__}() got {len(specs)} argument(s)")
            spec = specs[position]
            if spec.is_static:
                raise ValueError(f"donate_argnums names argument {spec.name!r}, a "
                                 f"compile-time constant ({spec.static!r}); only arrays "
                                 f"can be donated")
            if None in spec.shape:
                raise ValueError(f"donate_argnums names argument {spec.name!r}, whose "
                                 f"batch dimension is dynamic; only arguments of a fixed "
                                 f"shape can be donated")
            free.append((array_index[position], tuple(spec.shape), np.dtype(spec.dtype)))
        donations = []
        for r in results:
            shape, dtype = tuple(r.shape), np.dtype(r.dtype)
            match = next((f for f in free if f[1] == shape and f[2] == dtype), None)
            if match is None:
                donations.append(-1)
            else:
                free.remove(match)
                donations.append(match[0])
        return tuple(donations) if any(j >= 0 for j in donations) else ()

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
        seen = {}
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
            dims = None
            axes = self._dynamic_axes(index, name, array.ndim)
            if axes:
                dims = [None] * array.ndim
                if shape and shape[0] is None:
                    dims[0] = "batch"
                shape = list(shape)
                for axis, dim in axes.items():
                    check_dynamic_dim(seen, dim, array.shape[axis], name, axis)
                    shape[axis], dims[axis] = None, dim
                dims = tuple(dims)
            specs.append(ArgSpec(name, tuple(shape), array.dtype, dims=dims))
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
        donations = self._donations(specs, results)
        # Every stage carries the target its code is made for.
        with module.context:
            module.operation.attributes["dl.target"] = ir.Attribute.parse(
                str(self._options.cpu_target))
            if donations:
                for op in module.body.operations:
                    if op.operation.name == "func.func" and ir.StringAttr(
                            op.attributes["sym_name"]).value == self._symbol:
                        op.attributes["dl.donate"] = ir.DenseI64ArrayAttr.get(
                            list(donations))
        result_specs = [(len(r.shape), r.dtype) for r in results]
        return module, structure, result_specs, donations

    def lower(self, *args, **kwargs):
        """Traces for these arguments' signature and returns a :class:`Lowered`
        whose IR can be printed at every stage and which compiles on
        ``.compile()``."""
        names, values, layout = self._bind(args, kwargs)
        specs, _ = self._specs(names, values, layout)
        return self._lower(specs, layout)

    def _lower(self, specs, layout):
        start = time.perf_counter()
        with gc_paused():
            module, structure, result_specs, donations = self._trace(specs, layout)
        parameter_slots = [entry[1] for entry in layout if entry[0] == "param"]
        return Lowered(module, self._symbol, specs, structure, result_specs,
                       self._options, parameter_slots, donations,
                       trace_seconds=time.perf_counter() - start)

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
            hit = self._fast_cache.get(fast_key)
            if hit is not None:
                compiled, key = hit
                try:
                    self._cache.move_to_end(key)
                except KeyError:  # evicted or cleared by another thread
                    self._fast_cache.pop(fast_key, None)
                return compiled._run(list(args))
        names, values, layout = self._bind(args, kwargs)
        specs, arrays = self._specs(names, values, layout)
        key = (specs, layout)
        compiled = self._cache.get(key)
        if compiled is None:
            # Compiled outside the lock: other threads keep calling (and
            # compiling other signatures); the first version stored wins.
            fresh = self._lower(specs, layout).compile()
            with self._lock:
                compiled = self._cache.setdefault(key, fresh)
                self._cache.move_to_end(key)
                self._evict()
        else:
            with self._lock:
                if key in self._cache:
                    self._cache.move_to_end(key)
        if fast_key is not None and all(a is not None for a in arrays):
            with self._lock:
                if key in self._cache:
                    self._fast_cache[fast_key] = (compiled, key)
        return compiled._run([a for a in arrays if a is not None])

    def cache_size(self):
        """How many compiled signatures this function keeps."""
        return len(self._cache)

    def clear_cache(self):
        """Forgets every compiled signature (the next call compiles again, or
        loads from the disk cache)."""
        with self._lock:
            self._cache.clear()
            self._fast_cache.clear()

    def _evict(self):
        """Drops the least recently used signatures over the bound (called
        with the lock held)."""
        limit = max_signatures()
        while len(self._cache) > limit:
            _, old = self._cache.popitem(last=False)
            for fast_key in [k for k, v in self._fast_cache.items() if v[0] is old]:
                del self._fast_cache[fast_key]


def max_signatures():
    """How many compiled signatures each jit function keeps, least recently
    used evicted first: ``$DLC_JIT_CACHE_SIZE``, default 64."""
    from .runtime import positive_int_from_env
    value = positive_int_from_env("DLC_JIT_CACHE_SIZE")
    return 64 if value is None else value


_functions = weakref.WeakSet()


def clear_cache(disk=False):
    """Forgets the compiled signatures of every ``dlc.jit`` function, frees
    the blocks dlc's runtime keeps for reuse, and with ``disk=True`` empties
    the disk cache (:mod:`dlc.cache`) too."""
    for function in list(_functions):
        function.clear_cache()
    from . import runtime
    runtime.release_memory()
    if disk:
        from . import cache
        cache.clear()


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
        for i, item in enumerate(outputs):
            if not isinstance(item, (Tensor, np.ndarray, np.generic, int, float, bool)):
                raise TraceError(
                    f"{fn_name}() returned a {type(outputs).__name__} whose item {i} is a "
                    f"{type(item).__name__}; a dlc.jit function returns a tensor (or a "
                    f"number or array) or a flat tuple/list of them")
        return type(outputs), list(outputs)
    if outputs is None:
        raise TraceError(f"{fn_name}() returned None; a dlc.jit function must return "
                         f"a tensor or a tuple/list of tensors")
    if not isinstance(outputs, (Tensor, np.ndarray, np.generic, int, float, bool)):
        raise TraceError(f"{fn_name}() returned a {type(outputs).__name__}; a dlc.jit "
                         f"function returns a tensor (or a number or array) or a flat "
                         f"tuple/list of them")
    return None, [outputs]


def jit(fn=None, *, target="cpu", options=None, dynamic_batch=False,
        constants=False, disable=None, donate_argnums=(), dynamic=None,
        tuning_records=None, **shortcuts):
    """Compiles `fn` with dlc on first call per argument signature.

    Usable as ``@dlc.jit``, ``@dlc.jit(dynamic_batch=True)`` or
    ``dlc.jit(fn, ...)``.

    Arguments of the compiled function are numpy arrays (or anything
    ``numpy.asarray`` accepts, lists included); Python ``int``/``float``/
    ``bool``/``str``/``None`` arguments and tuples of them are compile-time
    constants instead (a new value compiles a new version).

    Args:
      target: what the code runs on: ``"cpu"`` (default: this machine, as
        :meth:`dlc.Target.host` describes it), a :class:`dlc.Target` (a
        named CPU, e.g. ``dlc.Target("znver3")``: every decision is made for
        it and LLVM compiles for it; it runs here only where this CPU has
        its features), or ``"cuda"``: NVIDIA GPU kernels through
        `dl-gpu-pipeline` (``as_text("gpu")`` shows them mapped to blocks and
        threads, ``as_text("ptx")`` their PTX; running them needs an NVIDIA
        GPU and its driver, else :class:`dlc.CUDAUnavailableError`).
      options: a :class:`dlc.CompileOptions` (its ``target`` is replaced by
        `target` unless `target` is left at "cpu"); the keywords below set
        fields on top of it.
      dynamic_batch: ``True`` makes the leading dimension of every array
        argument dynamic, so one compiled version serves every batch size; a
        tuple of argument positions or names restricts this to those
        arguments. Batched arguments must agree on the batch size.
      dynamic: dimensions beyond the batch that one compiled version serves at
        every size: ``{argument: {axis: name}}`` (argument by name or
        position; dimensions of the same name must agree at each call, which
        checks it and names the dimension when they do not) or
        ``{argument: (axis, ...)}``. E.g. ``dynamic={"ids": {0: "batch", 1:
        "seq"}, "mask": {0: "batch", 1: "seq"}}``. Inside the function a
        dynamic dimension is None in ``x.shape``; ``dlc.dim(x, axis)`` is its
        run-time size, for reshape, broadcast_to, slicing and ``dlc.arange``.
      constants: for a dlc.nn.Module, bake its parameters into the compiled
        code as constants (graph passes can fold them; a parameter change is
        not seen). By default they are arguments, read from the module at
        each call. numpy arrays a plain function captures are always
        constants.
      donate_argnums: positions of array arguments whose memory the call
        may reuse for its results (as in JAX): a result with the exact shape
        and dtype of a donated argument (each result takes the first such
        argument not yet taken, in order) is computed into that argument's
        buffer, in place where nothing reads the old value afterwards, and
        the call returns the argument's array itself, updated. A donated
        argument that is not a writeable C-contiguous ndarray of its dtype,
        or shares memory with another argument, is copied first (its copy is
        returned; the caller's array is left as it was). Dynamic-batch and
        compile-time constant arguments cannot be donated.
      disable: optimizations to turn off, by pass name: ``"dl-simplify"``
        (algebraic simplification, a Python pass), ``"dl-raise-ops"``
        (decomposed layer norms, GELUs, SiLUs and hard-swishes back to one
        op each, a Python pass), ``"dl-fold-batchnorm"``,
        ``"dl-layout"`` (NCHW convolutions and poolings run in NHWC),
        ``"dl-winograd"`` (3x3 convolutions of stride 1 by Winograd's
        F(2x2, 3x3); CPU only),
        ``"dl-pack-weights"`` (constant weights of products with few rows
        packed into column panels at compile time; CPU only),
        ``"dl-linalg-fuse"`` (elementwise fusion), ``"dl-fuse-epilogue"``
        (the elementwise op after a matmul or convolution computed in its
        register tiles; CPU only), ``"dl-fuse-attention"`` (attention's
        scores, softmax and weighted sum by blocks of query rows in one
        loop; CPU only), ``"dl-plan-memory"`` (temporaries
        sharing memory), ``"dl-affine-transpose-squares"`` (transposes
        copied by vector squares; CPU only),
        ``"dl-affine-promote-accumulators"`` (reductions' accumulators in
        registers, so that they vectorize; CPU only) and
        ``"dl-affine-collapse"`` (the loops of a fill, copy or elementwise
        nest over contiguous memory merged into one; CPU only). Constant folding and
        canonicalization always run.
      tuning_records: a records file written by :func:`dlc.tune` (or its
        :class:`dlc.tune.Records`): each matmul and convolution tuned for
        this target and dlc version is compiled with the strategy measured
        fastest, the others with the heuristics (nothing is measured).
        Default: ``$DLC_TUNING_RECORDS`` where set; ``"off"`` ignores it.
      **shortcuts: fields of :class:`dlc.CPUOptions` (``vector_width``: lanes
        of the vectorized loops, None from the target, 0 no vector code;
        ``tile_size``; ``parallel``: run loops with enough work on
        ``dlc.set_num_threads`` threads; ``parallel_min_work``: the least
        estimated operations of a nest on threads, default 2**13;
        ``max_function_ops``: operations above which a function is cut into
        calls of parts of about that size before LLVM, 0 never;
        ``early_split_ops``: operations of linalg on memrefs above which a
        function is cut into parts before the affine stage, so that its
        passes run on the compiler's threads, 0 never;
        ``winograd_min_tiles``, ``winograd_min_channels``: the fewest 2x2
        output tiles and channels of a 3x3 convolution run as Winograd's
        F(2x2, 3x3), default 32 and 64) and of
        :class:`dlc.GPUOptions` (``chip``, ``block_size``, ``matmul_tile``,
        ``tensor_cores``, ``emulate``: run the GPU kernels on the CPU).
    """
    base = options if options is not None else CompileOptions()
    if not isinstance(base, CompileOptions):
        raise TypeError(f"options must be a dlc.CompileOptions, but got {base!r}")
    changes = {}
    if target != "cpu" or options is None:
        changes["target"] = target
    if disable is not None:
        changes["disable"] = disable
    from .tune.records import from_option
    records = from_option(tuning_records) if tuning_records is not None else \
        base.tuning_records if base.tuning_records is not None else from_option(None)
    resolved = CompileOptions(
        target=changes.get("target", base.target),
        disable=changes.get("disable", base.disable),
        cpu=base.cpu, gpu=base.gpu, tuning_records=records).with_shortcuts(**shortcuts)

    def wrap(function):
        return JitFunction(function, resolved, dynamic_batch=dynamic_batch,
                           constants=constants, donate_argnums=donate_argnums,
                           dynamic=dynamic)
    return wrap(fn) if fn is not None else wrap
