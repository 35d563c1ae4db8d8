"""The compiler driver: runs slices of `dl-cpu-pipeline` between named stages.

The pipeline itself is defined once, in C++ (lib/Pipelines/CPUPipeline.cpp);
Python picks the slice ``from=<stage> to=<stage>``, so the IR shown at a
stage is what ``dl-opt --pass-pipeline='builtin.module(
dl-cpu-pipeline{from=... to=...})'`` produces from the previous stage's text,
with one addition: the graph stage also runs dlc's Python passes
(dlc.passes: ``dl-simplify`` before the C++ graph passes, ``dl-fusion-report``
after them) in the same PassManager; ``python -m dlc.opt`` replays them.
"""

from dataclasses import dataclass

from . import passes
from .errors import CompileError
from .mlir import ir
from .mlir.passmanager import PassManager

#: The stages of the CPU pipeline, in order.
STAGES = ("dl", "graph", "linalg", "bufferized", "affine", "vector", "llvm")

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
    #: graph optimizations turned off, by pass name (see GRAPH_PASSES)
    disable: frozenset = frozenset()

    def pipeline_options(self):
        def flag(name):
            return "false" if name in self.disable else "true"
        return (f"vector-width={self.vector_width} tile-size={self.tile_size} "
                f"parallel={'true' if self.parallel else 'false'} "
                f"fold-batchnorm={flag('dl-fold-batchnorm')} "
                f"fuse={flag('dl-linalg-fuse')} "
                f"plan-memory={flag('dl-plan-memory')}")


#: Optimization passes that ``dlc.jit(disable=...)`` can turn off.
GRAPH_PASSES = ("dl-simplify", "dl-fold-batchnorm", "dl-linalg-fuse", "dl-plan-memory")


def check_disable(names):
    """Validates `disable=` of dlc.jit: a name or an iterable of names."""
    names = frozenset([names] if isinstance(names, str) else names)
    unknown = sorted(names - set(GRAPH_PASSES))
    if unknown:
        raise ValueError(f"cannot disable unknown pass(es) {', '.join(unknown)}; "
                         f"the passes that can be disabled are: "
                         f"{', '.join(GRAPH_PASSES)}")
    return names


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
        pm.add(f"dl-cpu-pipeline{{from=graph to={stop} {options.pipeline_options()}}}")
    return pm


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
