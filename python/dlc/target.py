"""``dlc.Target``: the CPU dlc compiles for.

A Python view of ``#dl.target``, the one description of the machine that
every target decision of the compiler is made from (vector width and
register count, FMA pipes, caches, threads, ISA features)::

    dlc.Target.host()                  # this machine, as LLVM and /sys see it
    dlc.Target("znver3")               # AMD Zen 3: AVX2, 16 ymm registers
    dlc.Target("znver4", l2=2 << 20, threads=8)
    dlc.Target("haswell", features="-fma")
    dlc.jit(f, target=dlc.Target("skylake-avx512"))

Named CPUs are LLVM's names; ``Target.known_cpus()`` lists the ones dlc has
a table of FMA pipes and caches for (others LLVM knows get conservative
defaults). Fields given explicitly win over the table. ``str(target)`` is
the ``#dl.target<...>`` attribute every compiled module carries.
"""

from .mlir import ir
from .mlir._mlir_libs import _site_initialize_0 as _capi
from .tracing import context as _context

_host = None

#: ISA features of instructions LLVM emits only for their intrinsics (OS,
#: security and cache-control instructions), which dlc's code never calls:
#: a host without them (hypervisors often hide some) still runs the code.
_OS_ONLY_FEATURES = frozenset({
    "clflushopt", "clwb", "cldemote", "clzero", "enqcmd", "fsgsbase", "hreset",
    "invpcid", "kl", "widekl", "monitorx", "mwaitx", "movdir64b", "movdiri",
    "pconfig", "pku", "prefetchi", "ptwrite", "rdpid", "rdpru", "rdrnd", "rdseed",
    "serialize", "sgx", "shstk", "tsxldtrk", "uintr", "usermsr", "waitpkg",
    "wbnoinvd", "xsave", "xsavec", "xsaveopt", "xsaves", "sahf", "lwp",
})

#: The integer fields of #dl.target, in order.
_INT_FIELDS = ("vector_bits", "vector_registers", "fma_units", "fma_latency",
               "l1d", "l2", "l3", "cache_line", "threads")


def _quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Target:
    """The CPU to compile for, completed on construction (see the module's
    docstring). Raises ValueError on a CPU, feature list or field the
    description refuses (the message says what is accepted)."""

    def __init__(self, cpu="host", *, features="", triple=None, **fields):
        unknown = sorted(set(fields) - set(_INT_FIELDS))
        if unknown:
            raise TypeError(f"dlc.Target: unknown field(s) {', '.join(unknown)}; "
                            f"the fields are: triple, features, "
                            f"{', '.join(_INT_FIELDS)}")
        if not isinstance(cpu, str) or not isinstance(features, str):
            raise TypeError("dlc.Target: cpu and features are strings, e.g. "
                            "dlc.Target('znver4', features='-avx512f')")
        parts = []
        if triple is not None:
            parts.append(f"triple = {_quote(triple)}")
        if cpu:
            parts.append(f"cpu = {_quote(cpu)}")
        if features:
            parts.append(f"features = {_quote(features)}")
        for name in _INT_FIELDS:
            value = fields.get(name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"dlc.Target: {name} must be a positive integer, "
                                 f"but got {value!r}")
            parts.append(f"{name} = {value}")
        text = "#dl.target<" + ", ".join(parts) + ">"
        with _context():
            try:
                given = ir.Attribute.parse(text)
            except ir.MLIRError as error:
                messages = [d.message for d in error.error_diagnostics] or [str(error)]
                raise ValueError(f"dlc.Target({cpu!r}): " + "; ".join(messages)) from None
            complete = _capi.complete_target(given)
            self._text = str(complete)
            values = dict(_capi.target_fields(complete))
            self._features = frozenset(_capi.target_features(complete))
            self._register_tile = tuple(_capi.target_register_tile(complete))
        self.triple = values["triple"]
        self.cpu = values["cpu"]
        #: ISA features added (+) or removed (-) relative to the CPU's own
        self.features = values["features"]
        for name in _INT_FIELDS:
            setattr(self, name, int(values[name]))

    @classmethod
    def host(cls):
        """The machine dlc runs on: LLVM's host detection for the CPU and its
        features, /sys for the caches, the CPUs this process may use
        (resolved once per process)."""
        global _host
        if _host is None:
            _host = cls("host")
        return _host

    @staticmethod
    def known_cpus():
        """The CPUs (LLVM names) dlc has a table of FMA pipes and caches for."""
        return tuple(_capi.known_cpus())

    @property
    def isa_features(self):
        """Every ISA feature of the target (LLVM names), as a frozenset."""
        return self._features

    def has_feature(self, name):
        """Whether the target has the ISA feature `name` ("avx512f", "neon")."""
        return name.lstrip("+") in self._features

    @property
    def register_tile(self):
        """(rows, vectors) of the register-tiled micro-kernel on this target."""
        return self._register_tile

    def lanes(self, dtype):
        """Elements of `dtype` (a numpy dtype) in one vector register."""
        import numpy as np
        return max(1, self.vector_bits // (np.dtype(dtype).itemsize * 8))

    @property
    def arch(self):
        """The architecture of the triple ("x86_64", "aarch64")."""
        return self.triple.split("-")[0]

    def why_not_runnable(self, host=None):
        """None where code for this target runs on `host` (default: this
        machine), else why not: another architecture, or ISA features the
        host lacks (code using them would stop with an illegal
        instruction)."""
        host = host or Target.host()
        if self.arch != host.arch:
            return (f"it is compiled for {self.arch} ({self.cpu}) and this "
                    f"machine is {host.arch}")
        missing = sorted(self._features - host._features - _OS_ONLY_FEATURES)
        if missing:
            shown = ", ".join(missing[:8]) + (", ..." if len(missing) > 8 else "")
            return (f"it is compiled for {self.cpu}, whose features {shown} "
                    f"this machine's CPU ({host.cpu}) lacks")
        return None

    def __str__(self):
        return self._text

    def __repr__(self):
        return f"dlc.Target({self._text})"

    def __eq__(self, other):
        return isinstance(other, Target) and other._text == self._text

    def __hash__(self):
        return hash(self._text)


def describe_host():
    """One line naming this machine's CPU for a report: the model name the
    kernel gives, LLVM's name for it (the one dlc compiles for), its vector
    width and threads: "AMD EPYC (znver3, 256-bit vectors, 2 threads)"."""
    name = None
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    host = Target.host()
    return (f"{name or host.arch} ({host.cpu}, {host.vector_bits}-bit vectors, "
            f"{host.threads} threads)")
