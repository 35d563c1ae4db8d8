"""The compiler driver: runs slices of `dl-cpu-pipeline` between named stages.

The pipeline itself is defined once, in C++ (lib/Pipelines/CPUPipeline.cpp);
Python only picks the slice ``from=<stage> to=<stage>``, so the IR shown at a
stage is exactly what ``dl-opt --pass-pipeline='builtin.module(
dl-cpu-pipeline{from=... to=...})'`` produces from the previous stage's text.
"""

from dataclasses import dataclass

from .errors import CompileError
from .mlir import ir
from .mlir.passmanager import PassManager

#: The stages of the CPU pipeline, in order.
STAGES = ("dl", "graph", "linalg", "bufferized", "affine", "vector", "llvm")

STAGE_DESCRIPTIONS = {
    "dl": "dl as traced from Python",
    "graph": "dl after graph-level simplification",
    "linalg": "linalg, tensor, arith and math on tensors",
    "bufferized": "linalg on memrefs, with explicit deallocation",
    "affine": "affine loop nests (tiled when tile_size > 0)",
    "vector": "affine loops with vector ops; affine.parallel marks the loops run on threads",
    "llvm": "llvm dialect, as handed to the ExecutionEngine",
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

    def pipeline_options(self):
        return (f"vector-width={self.vector_width} tile-size={self.tile_size} "
                f"parallel={'true' if self.parallel else 'false'}")


def check_stage(stage):
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; stages are: {', '.join(STAGES)}")
    return stage


def pipeline_text(start, stop, options):
    """The textual pass pipeline taking IR at `start` to IR at `stop`."""
    return (f"builtin.module(dl-cpu-pipeline{{from={start} to={stop} "
            f"{options.pipeline_options()}}})")


def run_stages(module, start, stop, options):
    """Lowers `module` (at stage `start`) in place to stage `stop`."""
    check_stage(start)
    check_stage(stop)
    if STAGES.index(stop) <= STAGES.index(start):
        return module
    with module.context:
        pm = PassManager.parse(pipeline_text(start, stop, options))
        try:
            pm.run(module.operation)
        except ir.MLIRError as error:
            raise CompileError(_describe_failure(start, stop, error)) from None
    return module


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
