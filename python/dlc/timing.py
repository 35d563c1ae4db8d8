"""Timing: medians of interleaved blocks of calls (dlc's benchmark), and
:func:`profile`, the time of a compiled function per parallel region."""

import ctypes
import os
import statistics
import time


def calls_per_block(fn, target_seconds):
    start = time.perf_counter()
    fn()
    elapsed = max(time.perf_counter() - start, 1e-7)
    return max(1, min(10000, int(target_seconds / elapsed)))


def measure(peers, rounds, block_seconds, options_pause=0.2):
    """Median seconds per call of each peer, over `rounds` interleaved blocks
    of calls (each block about `block_seconds`)."""
    counts = {name: calls_per_block(fn, block_seconds) for name, fn in peers.items()}
    samples = {name: [] for name in peers}
    for _ in range(rounds):
        for name, fn in peers.items():
            count = counts[name]
            start = time.perf_counter()
            for _ in range(count):
                fn()
            samples[name].append((time.perf_counter() - start) / count)
            # Let this library's worker threads go idle before timing the
            # next one: OpenBLAS and PyTorch's OpenMP spin for a while after
            # each call, and on a few cores they would steal the next
            # library's time.
            time.sleep(options_pause)
    return {name: statistics.median(values) for name, values in samples.items()}


class Region:
    """One parallel region of a profile: the outlined body `name`, the source
    line of the loop it was outlined from (`source`; equivalent loops of
    identical layers share one body, and the first one's line), the dl op
    the loop computes (`op`: "dl.conv2d 3x3/2 g72 8x56x56x72 -> 8x28x28x72"
    — a convolution's window, stride, groups, input and output shape; a
    product's operand shapes; other ops' result shape; "" where the loop has
    none), how many times it ran per call (`launches`) and its
    seconds per call (`seconds`, wall clock on the calling thread, fork and
    join included)."""

    def __init__(self, name, source, launches, seconds, op=""):
        self.name, self.source, self.launches, self.seconds = name, source, launches, seconds
        self.op = op

    @property
    def kind(self):
        """The op's name alone ("dl.conv2d"), "" where unknown."""
        return self.op.split(" ", 1)[0]

    def __repr__(self):
        return (f"Region({self.name!r}, {self.source!r}, {self.op!r}, "
                f"launches={self.launches:g}, seconds={self.seconds:.3g})")


class Profile:
    """Where a compiled function's time goes (see :func:`profile`)."""

    def __init__(self, seconds, regions, calls):
        #: mean seconds per call over the profiled calls
        self.seconds = seconds
        #: the parallel regions, slowest first
        self.regions = sorted(regions, key=lambda r: -r.seconds)
        #: how many calls were profiled
        self.calls = calls

    @property
    def serial_seconds(self):
        """Seconds per call outside every parallel region (serial loops,
        calls, argument checks and result conversion)."""
        return max(0.0, self.seconds - sum(r.seconds for r in self.regions))

    def by_source(self):
        """[(source line, launches per call, seconds per call)], slowest
        first: the regions of one source line (a layer's code) summed."""
        lines = {}
        for region in self.regions:
            launches, seconds = lines.get(region.source, (0, 0.0))
            lines[region.source] = (launches + region.launches, seconds + region.seconds)
        return sorted(((s, n, t) for s, (n, t) in lines.items()), key=lambda x: -x[2])

    def by_op(self, detail=False):
        """[(op, launches per call, seconds per call)], slowest first: the
        regions summed by op kind ("dl.conv2d"), or with `detail` by the
        whole op name (kind, window, stride, groups and shape), which tells a
        model's depthwise convolutions from its 1x1 ones where one source
        line holds them all."""
        ops = {}
        for region in self.regions:
            key = (region.op if detail else region.kind) or "?"
            launches, seconds = ops.get(key, (0, 0.0))
            ops[key] = (launches + region.launches, seconds + region.seconds)
        return sorted(((k, n, t) for k, (n, t) in ops.items()), key=lambda x: -x[2])

    def table(self, top=20):
        """The slowest `top` regions as a text table."""
        total = max(self.seconds, 1e-12)
        lines = [f"{self.seconds * 1e3:.3f} ms per call ({self.calls} calls); "
                 f"{len(self.regions)} parallel regions, "
                 f"{self.serial_seconds * 1e3:.3f} ms outside them",
                 f"{'ms/call':>9} {'share':>6} {'launches':>8}  region  source  op"]
        for region in self.regions[:top]:
            lines.append(f"{region.seconds * 1e3:9.3f} {region.seconds / total:6.1%} "
                         f"{region.launches:8g}  {region.name}  {region.source}  {region.op}")
        if len(self.regions) > top:
            rest = self.regions[top:]
            lines.append(f"{sum(r.seconds for r in rest) * 1e3:9.3f} "
                         f"{sum(r.seconds for r in rest) / total:6.1%} "
                         f"{sum(r.launches for r in rest):8g}  ({len(rest)} more regions)")
        lines.append(f"{self.serial_seconds * 1e3:9.3f} {self.serial_seconds / total:6.1%} "
                     f"{'':8}  (outside parallel regions)")
        return "\n".join(lines)

    def __str__(self):
        return self.table()


def _short_source(path_line):
    """A source line with the path cut after site-packages/ (timm/models/...)."""
    marker = os.sep + "site-packages" + os.sep
    if marker in path_line:
        return path_line.split(marker, 1)[1]
    return path_line


def _compiled_functions(function):
    """The CompiledFunctions behind `function`: a Compiled, a dlc.jit
    function or an imported model (every signature compiled so far)."""
    from .jit import JitFunction
    from .stages import Compiled
    if isinstance(function, Compiled):
        return [function._function]
    if isinstance(function, JitFunction):
        return [c._function for c in list(function._cache.values())]
    for inner in ("_jit", "function"):  # an imported model, its parameters wrapper
        if hasattr(function, inner):
            return _compiled_functions(getattr(function, inner))
    raise TypeError(f"dlc.profile expects a dlc.jit function, a Compiled or an imported "
                    f"model, but got {type(function).__name__}")


def _region_names(compiled_functions):
    """{trampoline address: (body, source line, op)} from the region tables
    dl-lower-parallel-launch emits (dlc_parallel_regions: "body file:line |
    op", either part after the body may be missing)."""
    names = {}
    for function in compiled_functions:
        code = function.code
        count_address = code.address("dlc_parallel_region_count")
        table_address = code.address("dlc_parallel_regions")
        if not count_address or not table_address:
            continue
        count = ctypes.c_int64.from_address(count_address).value
        table = (ctypes.c_void_p * (2 * count)).from_address(table_address)
        for i in range(count):
            text = ctypes.string_at(table[2 * i + 1]).decode()
            head, _, op = text.partition(" | ")
            body, _, source = head.partition(" ")
            names[table[2 * i]] = (body, _short_source(source), op)
    return names


def profile(function, *args, calls=10, warmup=2):
    """Runs ``function(*args)`` `warmup` times, then `calls` times with dlc's
    runtime timing every parallel region (the outermost ``dlc_parallel_for``
    of each loop nest: convolutions, matmuls, fused elementwise nests), and
    returns a :class:`Profile`: seconds per call in all, per region (with the
    source line of the model the loop comes from) and outside every region.
    `function` is a dlc.jit function, a :class:`dlc.Compiled` or a model
    imported by :func:`dlc.from_torch` / :func:`dlc.from_onnx`. CPU code only.

    Launches that run nested in another region count as their parent's time.
    Equivalent loops of identical layers share one outlined body (and one
    row: its launches say how many); ``Profile.by_source()`` sums by line."""
    from . import runtime
    if not isinstance(calls, int) or calls < 1:
        raise ValueError(f"dlc.profile: calls must be a positive int, but got {calls!r}")
    for _ in range(max(1, warmup)):  # compiles (when needed) and warms up
        function(*args)
    names = _region_names(_compiled_functions(function))
    library = runtime._load_parallel_runtime()
    library.dlc_runtime_profile_read.restype = ctypes.c_int64
    library.dlc_runtime_profile(ctypes.c_int64(1))
    try:
        start = time.perf_counter()
        for _ in range(calls):
            function(*args)
        seconds = (time.perf_counter() - start) / calls
    finally:
        library.dlc_runtime_profile(ctypes.c_int64(0))
    capacity = 4096
    while True:
        bodies = (ctypes.c_void_p * capacity)()
        launches = (ctypes.c_int64 * capacity)()
        nanoseconds = (ctypes.c_int64 * capacity)()
        count = library.dlc_runtime_profile_read(bodies, launches, nanoseconds,
                                                  ctypes.c_int64(capacity))
        if count <= capacity:
            break
        capacity = count
    regions = []
    for i in range(count):
        body, source, op = names.get(bodies[i], (f"0x{bodies[i]:x}", "?", ""))
        regions.append(Region(body, source, launches[i] / calls,
                              nanoseconds[i] * 1e-9 / calls, op))
    return Profile(seconds, regions, calls)
