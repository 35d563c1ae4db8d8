"""The compiler driver: runs slices of `dl-cpu-pipeline` (and, for
``target="cuda"``, `dl-gpu-pipeline`) between named stages.

The pipelines themselves are defined once, in C++ (lib/Pipelines/);
Python picks the slice ``from=<stage> to=<stage>``, so the IR shown at a
stage is what ``dl-opt --pass-pipeline='builtin.module(
dl-cpu-pipeline{from=... to=...})'`` produces from the previous stage's text,
with one addition: the graph stage also runs dlc's Python passes
(dlc.passes: ``dl-simplify`` before the C++ graph passes, ``dl-fusion-report``
after them) in the same PassManager; ``python -m dlc.opt`` replays them.
"""

from dataclasses import dataclass

import numpy as np

from . import passes
from .errors import CompileError
from .mlir import ir
from .mlir.passmanager import PassManager

#: The stages of the CPU pipeline, in order.
STAGES = ("dl", "graph", "linalg", "bufferized", "affine", "vector", "llvm")

#: The stages of ``target="cuda"``: the CPU pipeline's first four, then the
#: GPU kernels; "binary" (PTX in a gpu.binary, host side for the CUDA
#: runtime) and "emulated" (the kernels as CPU loops) both follow "gpu".
GPU_STAGES = ("dl", "graph", "linalg", "bufferized", "gpu", "binary", "emulated")

#: The stage each stage is lowered from.
PARENT = {"graph": "dl", "linalg": "graph", "bufferized": "linalg",
          "affine": "bufferized", "vector": "affine", "llvm": "vector",
          "gpu": "bufferized", "binary": "gpu", "emulated": "gpu"}

TARGETS = ("cpu", "cuda")

#: The NVIDIA chips dl-gpu-pipeline accepts.
CHIPS = ("sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90")

STAGE_DESCRIPTIONS = {
    "dl": "dl as traced from Python",
    "graph": "dl after graph-level simplification, batch-norm folding and "
             "fusion grouping (dl.fusion_group)",
    "linalg": "linalg, tensor, arith and math on tensors",
    "bufferized": "linalg on memrefs, with explicit deallocation; temporaries "
                  "share one arena where their lifetimes allow (dl-plan-memory)",
    "affine": "affine loop nests (tiled when tile_size > 0)",
    "vector": "affine loops with vector ops; affine.parallel marks the loops run on threads",
    "llvm": "llvm dialect, as handed to the ExecutionEngine",
    "gpu": "GPU kernels: parallel loops mapped to blocks and threads, "
           "outlined into a gpu.module launched by the host function",
    "binary": "the kernels compiled to PTX (in a gpu.binary), the host side "
              "calling the CUDA runtime, in the llvm dialect",
    "emulated": "the kernels of the gpu stage run as loops over blocks and "
                "threads on the CPU (dl-gpu-to-cpu), in the llvm dialect",
}


@dataclass(frozen=True)
class CompileOptions:
    """Options of dl-cpu-pipeline that dlc.jit exposes."""

    #: lanes of the affine super-vectorizer (0 disables vectorization)
    vector_width: int = 8
    #: affine loop tile size (0 disables tiling)
    tile_size: int = 0
    #: run the outermost parallel loop of each nest on several threads
    #: (how many is decided at run time: dlc.set_num_threads)
    parallel: bool = True
    #: least estimated operations of a nest run on threads (None: the
    #: pipeline's default)
    parallel_min_work: object = None
    #: graph optimizations turned off, by pass name (see GRAPH_PASSES)
    disable: frozenset = frozenset()
    #: "cpu" or "cuda"
    target: str = "cpu"
    #: for target="cuda": run the GPU kernels on the CPU
    emulate: bool = False
    #: for target="cuda": the NVIDIA chip and the threads per block
    chip: str = "sm_90"
    block_size: int = 256
    #: for target="cuda": edge of the shared-memory tiles of matmul kernels
    matmul_tile: int = 16
    #: for target="cuda": f16/bf16 matmuls on tensor cores (chips sm_80 on)
    tensor_cores: bool = True

    @property
    def stages(self):
        return GPU_STAGES if self.target == "cuda" else STAGES

    def _graph_pass_options(self):
        """The options both pipelines share: which C++ graph passes run."""
        def flag(name):
            return "false" if name in self.disable else "true"
        return (f"fold-batchnorm={flag('dl-fold-batchnorm')} "
                f"fuse={flag('dl-linalg-fuse')} "
                f"layout={flag('dl-layout')} "
                f"plan-memory={flag('dl-plan-memory')}")

    def gpu_pipeline_options(self):
        return (f"chip={self.chip} block-size={self.block_size} "
                f"matmul-tile={self.matmul_tile} "
                f"tensor-cores={'true' if self.tensor_cores else 'false'} "
                f"{self._graph_pass_options()}")

    def pipeline_options(self):
        min_work = ("" if self.parallel_min_work is None
                    else f"parallel-min-work={self.parallel_min_work} ")
        epilogue = "false" if "dl-fuse-epilogue" in self.disable else "true"
        # GPU: dense convolutions as im2col + GEMM, for the shared-memory
        # matmul kernel (the graph stage is shared).
        # and every convolution in NHWC.
        direct = -1 if self.target == "cuda" else 0
        return (f"vector-width={self.vector_width} tile-size={self.tile_size} "
                f"parallel={'true' if self.parallel else 'false'} {min_work}"
                f"epilogue={epilogue} max-direct-filter-bytes={direct} "
                f"nchw-min-filter-bytes={direct} "
                f"{self._graph_pass_options()}")


#: Optimization passes that ``dlc.jit(disable=...)`` can turn off.
GRAPH_PASSES = ("dl-simplify", "dl-fold-batchnorm", "dl-layout", "dl-linalg-fuse",
                "dl-fuse-epilogue", "dl-plan-memory")


def check_disable(names):
    """Validates `disable=` of dlc.jit: a name or an iterable of names."""
    names = frozenset([names] if isinstance(names, str) else names)
    unknown = sorted(names - set(GRAPH_PASSES))
    if unknown:
        raise ValueError(f"cannot disable unknown pass(es) {', '.join(unknown)}; "
                         f"the passes that can be disabled are: "
                         f"{', '.join(GRAPH_PASSES)}")
    return names


def check_min_work(value):
    """Validates `parallel_min_work=` of dlc.jit: None or an int >= 0."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"parallel_min_work must be None or a non-negative integer, "
                         f"but got {value!r}")
    return int(value)


def check_target(target, emulate, chip, block_size, matmul_tile=16):
    """Validates the target options of dlc.jit."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; targets are: {', '.join(TARGETS)}")
    if emulate and target != "cuda":
        raise ValueError("emulate=True runs GPU kernels on the CPU: it needs "
                         "target='cuda'")
    if chip not in CHIPS:
        raise ValueError(f"unknown chip {chip!r}; chips are: {', '.join(CHIPS)}")
    if not isinstance(block_size, int) or not 1 <= block_size <= 1024:
        raise ValueError(f"block_size must be an int in 1..1024, but got {block_size!r}")
    if not isinstance(matmul_tile, int) or not 1 <= matmul_tile <= 32:
        raise ValueError(f"matmul_tile must be an int in 1..32, but got {matmul_tile!r}")


def check_stage(stage, stages=STAGES):
    if stage not in stages:
        raise ValueError(f"unknown stage {stage!r}; stages are: {', '.join(stages)}")
    return stage


def stage_path(stage):
    """The stages from "dl" to `stage`, in lowering order."""
    path = [stage]
    while path[-1] in PARENT:
        path.append(PARENT[path[-1]])
    return path[::-1]


def _step_text(start, stop, options):
    """The pass pipeline (without builtin.module) from `start` to `stop`,
    `stop` a descendant of `start`, neither being "dl"."""
    if stop in STAGES:
        return (f"dl-cpu-pipeline{{from={start} to={stop} "
                f"{options.pipeline_options()}}}")
    to = {"gpu": "gpu", "binary": "binary", "emulated": "cpu"}[stop]
    if start == "gpu" or start in STAGES:
        return (f"dl-gpu-pipeline{{from={start} to={to} "
                f"{options.gpu_pipeline_options()}}}")
    raise ValueError(f"cannot lower from stage {start!r} to {stop!r}")


def pipeline_text(start, stop, options):
    """The textual pass pipeline taking IR at `start` to IR at `stop`."""
    return f"builtin.module({_step_text(start, stop, options)})"


def run_stages(module, start, stop, options):
    """Lowers `module` (at stage `start`) in place to stage `stop`, which
    must come after `start` (see stage_path)."""
    check_stage(start, options.stages)
    check_stage(stop, options.stages)
    path = stage_path(stop)
    if start == stop or start not in path:
        return module
    with module.context:
        pm = _pass_manager(start, stop, options)
        try:
            pm.run(module.operation)
        except ir.MLIRError as error:
            raise CompileError(_describe_failure(start, stop, error)) from None
    return module


def _pass_manager(start, stop, options):
    if start != "dl":
        return PassManager.parse(pipeline_text(start, stop, options))
    # The graph stage: Python passes around the C++ graph passes.
    pm = PassManager("builtin.module")
    if "dl-simplify" not in options.disable:
        passes.add_pass(pm, "dl-simplify")
    pm.add(f"dl-cpu-pipeline{{from=dl to=graph {options.pipeline_options()}}}")
    if "dl-linalg-fuse" not in options.disable:
        passes.add_pass(pm, "dl-fusion-report")
    if stop != "graph":
        pm.add(_step_text("graph", stop, options))
    return pm


#: The line before the PTX of each kernel module in as_text("ptx").
PTX_HEADER = "// ---- gpu.binary @{} ----"


def ptx_modules(module):
    """{name: PTX text} of every gpu.binary of `module` (a module at the
    "binary" stage), each one PTX module."""
    from .mlir.dialects import gpu
    texts = {}
    for op in module.body.operations:
        if op.operation.name != "gpu.binary":
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        for obj in ir.ArrayAttr(op.attributes["objects"]):
            data = gpu.ObjectAttr(obj).object
            texts[name] = data.decode() if isinstance(data, bytes) else str(data)
    return texts


def ptx_text(module):
    """The PTX modules of `module`, one after the other, each after a
    PTX_HEADER line naming it."""
    return "\n".join(PTX_HEADER.format(name) + "\n" + text
                     for name, text in ptx_modules(module).items())


def kernel_counts(module):
    """The kernels of every function of `module` at the linalg stage, by
    function name: its linalg operations, each of which becomes one loop nest
    (before the affine passes split remainders off)."""
    counts = {}
    for op in module.body.operations:
        if op.operation.name != "func.func":
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        counts[name] = sum(1 for inner in op.regions[0].blocks[0].operations
                           if inner.operation.name.startswith("linalg."))
    return counts


def clone(module):
    """An independent copy of a module (in the same context)."""
    return ir.Module.parse(module.operation.get_asm(enable_debug_info=True),
                           context=module.context)


def _describe_failure(start, stop, error):
    lines = [f"lowering from stage '{start}' to '{stop}' failed:"]
    for diagnostic in error.error_diagnostics:
        lines.append(f"  {_location_text(diagnostic.location)}: {diagnostic.message}")
        for note in diagnostic.notes:
            lines.append(f"    note: {_location_text(note.location)}: {note.message}")
    if len(lines) == 1:
        lines.append(f"  {error}")
    return "\n".join(lines)


def _location_text(location):
    text = str(location)
    return text[4:-1] if text.startswith("loc(") else text
