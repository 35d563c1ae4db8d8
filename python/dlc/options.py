"""Compile options: what to compile for and how, as objects.

``dlc.jit(f, target=..., options=dlc.CompileOptions(...))``; the common
fields are also keywords of ``dlc.jit`` (``dlc.jit(f, vector_width=8,
chip="sm_80")``), which set them on top of ``options``.

- :class:`CPUOptions`: the CPU code generation (dl-cpu-pipeline);
- :class:`GPUOptions`: the GPU kernels (``target="cuda"``, dl-gpu-pipeline);
- :class:`CompileOptions`: the target, the passes turned off, and both.
"""

from dataclasses import dataclass, field, fields, replace

import numpy as np

from .mlir._mlir_libs import _site_initialize_0 as _capi
from .target import Target

#: The NVIDIA chips dl-gpu-pipeline compiles for (from lib/Pipelines).
CHIPS = tuple(_capi.gpu_chips())

#: GPUOptions.kernel_format's values, and dl-gpu-pipeline's format for each.
KERNEL_FORMATS = (None, "ptx", "cubin", "fatbin")
_PIPELINE_FORMATS = {"cubin": "bin", "fatbin": "fatbin"}

#: Optimization passes that ``dlc.jit(disable=...)`` can turn off.
GRAPH_PASSES = ("dl-simplify", "dl-raise-ops", "dl-fold-batchnorm", "dl-layout", "dl-winograd",
                "dl-pack-weights",
                "dl-linalg-fuse", "dl-fuse-epilogue", "dl-fuse-attention", "dl-plan-memory",
                "dl-affine-transpose-squares", "dl-affine-promote-accumulators",
                "dl-affine-collapse", "dl-outline-loops")


def _check_int(name, value, low, high=None, allow_none=False):
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
            value < low or (high is not None and value > high):
        bound = f"an int in {low}..{high}" if high is not None else \
            f"{'None or ' if allow_none else ''}a non-negative integer"
        raise ValueError(f"{name} must be {bound}, but got {value!r}")


@dataclass(frozen=True)
class CPUOptions:
    """How dl-cpu-pipeline generates code (the target decides the rest)."""

    #: lanes of the vectorized loops: None (per loop, from the target's
    #: vector registers), or a fixed count; 0 turns vector code off
    #: (register-tiled micro-kernels included)
    vector_width: object = None
    #: affine loop tile size of upstream's tiling (0: none; the cache tiles
    #: of dl-affine-tile come from the target)
    tile_size: int = 0
    #: run the outermost parallel loop of each nest on several threads (how
    #: many is decided at each call: dlc.set_num_threads)
    parallel: bool = True
    #: least estimated operations of a nest run on threads (None: the
    #: pipeline's, 2**13)
    parallel_min_work: object = None
    #: LLVM's optimization level (0-3) for the llvm dialect's IR and its
    #: machine code. 2 by default: dlc's passes already tile, vectorize and
    #: unroll, and -O3 ran no faster on the bench's matmuls, convolutions
    #: and ResNet-18 while compiling ResNet-18 3 s (60%) longer
    llvm_opt_level: int = 2
    #: operations above which a function is cut into calls of parts of about
    #: this size before LLVM, whose loop passes take time quadratic in a
    #: function's size (None: the pipeline's; 0: never cut)
    max_function_ops: object = None
    #: operations of linalg on memrefs above which a function is cut into
    #: parts of about this size before the affine stage, whose passes then
    #: run on the compiler's threads (None: the pipeline's; 0: never cut)
    early_split_ops: object = None
    #: dl-winograd's thresholds: a 3x3 convolution of stride 1 runs as
    #: Winograd's F(2x2, 3x3) from this many 2x2 output tiles and input and
    #: output channels on (None: the pipeline's, 32 tiles and 64 channels)
    winograd_min_tiles: object = None
    winograd_min_channels: object = None

    def __post_init__(self):
        _check_int("vector_width", self.vector_width, 0, allow_none=True)
        _check_int("llvm_opt_level", self.llvm_opt_level, 0, 3)
        _check_int("tile_size", self.tile_size, 0)
        _check_int("parallel_min_work", self.parallel_min_work, 0, allow_none=True)
        _check_int("max_function_ops", self.max_function_ops, 0, allow_none=True)
        _check_int("early_split_ops", self.early_split_ops, 0, allow_none=True)
        _check_int("winograd_min_tiles", self.winograd_min_tiles, 1, allow_none=True)
        _check_int("winograd_min_channels", self.winograd_min_channels, 1, allow_none=True)
        if not isinstance(self.parallel, bool):
            raise ValueError(f"parallel must be True or False, but got {self.parallel!r}")


@dataclass(frozen=True)
class GPUOptions:
    """How dl-gpu-pipeline generates kernels (``target="cuda"``)."""

    #: the NVIDIA chip the PTX is for (one of CHIPS)
    chip: str = "sm_90"
    #: threads per block of the elementwise and reduction kernels
    block_size: int = 256
    #: edge of the shared-memory tiles of matmul kernels
    matmul_tile: int = 16
    #: f16/bf16 matmuls on tensor cores (chips from sm_80 on)
    tensor_cores: bool = True
    #: run the very kernels on the CPU instead (dl-gpu-to-cpu): for checking
    emulate: bool = False
    #: how the kernels are embedded in the host code: "ptx" (the driver
    #: compiles it for the GPU it finds), "cubin" (machine code for `chip`
    #: only, assembled here by CUDA's ptxas), "fatbin" (that cubin plus the
    #: PTX, for newer GPUs); None: PTX for dlc.jit, a fatbin for dlc.export
    #: where ptxas can assemble for the chip
    kernel_format: object = None

    def __post_init__(self):
        if self.chip not in CHIPS:
            raise ValueError(f"unknown chip {self.chip!r}; chips are: {', '.join(CHIPS)}")
        if not isinstance(self.block_size, int) or not 1 <= self.block_size <= 1024:
            raise ValueError(f"block_size must be an int in 1..1024, but got "
                             f"{self.block_size!r}")
        if self.kernel_format not in KERNEL_FORMATS:
            raise ValueError(f"kernel_format must be one of "
                             f"{', '.join(map(repr, KERNEL_FORMATS))}, but got "
                             f"{self.kernel_format!r}")
        if not isinstance(self.matmul_tile, int) or not 1 <= self.matmul_tile <= 32:
            raise ValueError(f"matmul_tile must be an int in 1..32, but got "
                             f"{self.matmul_tile!r}")


def _check_disable(names):
    """`disable=`: a pass name or an iterable of them, as a frozenset."""
    names = frozenset([names] if isinstance(names, str) else names)
    unknown = sorted(names - set(GRAPH_PASSES))
    if unknown:
        raise ValueError(f"cannot disable unknown pass(es) {', '.join(unknown)}; "
                         f"the passes that can be disabled are: "
                         f"{', '.join(GRAPH_PASSES)}")
    return names


@dataclass(frozen=True)
class CompileOptions:
    """Everything a compilation depends on besides the function and its
    argument types."""

    #: what the code runs on: "cpu" (this machine), a :class:`dlc.Target`
    #: (a named CPU; its code runs here only if this CPU has its features),
    #: or "cuda" (NVIDIA GPU kernels; the host code for this machine)
    target: object = "cpu"
    #: optimization passes turned off, by name (see GRAPH_PASSES)
    disable: frozenset = frozenset()
    cpu: CPUOptions = field(default_factory=CPUOptions)
    gpu: GPUOptions = field(default_factory=GPUOptions)
    #: strategies measured by dlc.tune (a records file's path, or
    #: dlc.tune.Records), applied to the ops they were tuned for on this
    #: target (CPU only); None: the heuristics alone
    tuning_records: object = None

    def __post_init__(self):
        if self.tuning_records is not None:
            from .tune.records import from_option
            object.__setattr__(self, "tuning_records", from_option(self.tuning_records))
        if not (isinstance(self.target, Target) or self.target in ("cpu", "cuda")):
            raise ValueError(f"unknown target {self.target!r}; targets are: 'cpu', "
                             f"'cuda', or a dlc.Target (e.g. dlc.Target('znver4'))")
        object.__setattr__(self, "disable", _check_disable(self.disable))
        if self.gpu.emulate and not self.is_cuda:
            raise ValueError("emulate=True runs GPU kernels on the CPU: it needs "
                             "target='cuda'")

    @property
    def is_cuda(self):
        return self.target == "cuda"

    @property
    def cpu_target(self):
        """The :class:`dlc.Target` of the CPU code (the host code for cuda)."""
        return self.target if isinstance(self.target, Target) else Target.host()

    def with_shortcuts(self, **shortcuts):
        """A copy with fields of :class:`CPUOptions`/:class:`GPUOptions` set by
        name (dlc.jit's keywords); TypeError for other names."""
        cpu = {k: v for k, v in shortcuts.items() if k in _CPU_FIELDS}
        gpu = {k: v for k, v in shortcuts.items() if k in _GPU_FIELDS}
        unknown = sorted(set(shortcuts) - set(cpu) - set(gpu))
        if unknown:
            raise TypeError(f"unknown option(s) {', '.join(unknown)}; the options "
                            f"are: {', '.join(_CPU_FIELDS + _GPU_FIELDS)}")
        return replace(self, cpu=replace(self.cpu, **cpu), gpu=replace(self.gpu, **gpu))

    # -- pipeline options ------------------------------------------------

    def _common_pipeline_options(self):
        """The options both pipelines share: which C++ graph passes run."""
        def flag(name):
            return "false" if name in self.disable else "true"
        return (f"fold-batchnorm={flag('dl-fold-batchnorm')} "
                f"fuse={flag('dl-linalg-fuse')} "
                f"layout={flag('dl-layout')} "
                f"plan-memory={flag('dl-plan-memory')}")

    def gpu_pipeline_options(self):
        gpu = self.gpu
        kernels = _PIPELINE_FORMATS.get(gpu.kernel_format)
        return (f"chip={gpu.chip} block-size={gpu.block_size} "
                f"{f'format={kernels} ' if kernels else ''}"
                f"matmul-tile={gpu.matmul_tile} "
                f"tensor-cores={'true' if gpu.tensor_cores else 'false'} "
                f"{self._common_pipeline_options()}")

    def cpu_pipeline_options(self):
        cpu = self.cpu
        min_work = ("" if cpu.parallel_min_work is None
                    else f"parallel-min-work={cpu.parallel_min_work} ")
        split = ("" if cpu.max_function_ops is None
                 else f"max-function-ops={cpu.max_function_ops} ")
        if cpu.early_split_ops is not None:
            split += f"early-split-ops={cpu.early_split_ops} "
        winograd_limits = "".join(
            f"{name}={value} " for name, value in (
                ("winograd-min-tiles", cpu.winograd_min_tiles),
                ("winograd-min-channels", cpu.winograd_min_channels)) if value is not None)
        vector = ("vectorize=false " if cpu.vector_width == 0 else
                  "" if cpu.vector_width is None else
                  f"vector-width={cpu.vector_width} ")
        epilogue = "false" if "dl-fuse-epilogue" in self.disable else "true"
        promote = "false" if "dl-affine-promote-accumulators" in self.disable else "true"
        squares = "false" if "dl-affine-transpose-squares" in self.disable else "true"
        outline = "false" if "dl-outline-loops" in self.disable else "true"
        attention = "false" if "dl-fuse-attention" in self.disable else "true"
        collapse = "false" if "dl-affine-collapse" in self.disable else "true"
        # GPU: the graph stage is shared; dense convolutions as im2col + GEMM
        # for the matmul kernels, and every convolution in NHWC.
        direct = -1 if self.is_cuda else 0
        # Weight panels are the CPU micro-kernel's layout.
        pack = "false" if "dl-pack-weights" in self.disable or self.is_cuda else "true"
        # Winograd's batched product is measured on the CPU micro-kernel only.
        winograd = "false" if "dl-winograd" in self.disable or self.is_cuda else "true"
        return (f"{vector}tile-size={cpu.tile_size} "
                f"parallel={'true' if cpu.parallel else 'false'} {min_work}{split}"
                f"epilogue={epilogue} max-direct-filter-bytes={direct} "
                f"promote-accumulators={promote} transpose-squares={squares} "
                f"nchw-min-filter-bytes={direct} pack-weights={pack} winograd={winograd} "
                f"{winograd_limits}"
                f"outline-loops={outline} fuse-attention={attention} "
                f"collapse-loops={collapse} "
                f"{self._common_pipeline_options()}")


_CPU_FIELDS = tuple(f.name for f in fields(CPUOptions))
_GPU_FIELDS = tuple(f.name for f in fields(GPUOptions))
