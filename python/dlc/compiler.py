"""The compiler driver: runs slices of `dl-cpu-pipeline` (and, for
``target="cuda"``, `dl-gpu-pipeline`) between named stages.

The pipelines themselves are defined once, in C++ (lib/Pipelines/);
Python picks the slice ``from=<stage> to=<stage>``, so the IR shown at a
stage is what ``dl-opt --pass-pipeline='builtin.module(
dl-cpu-pipeline{from=... to=...})'`` produces from the previous stage's text,
with one addition: the graph stage also runs dlc's Python passes
(dlc.passes: ``dl-simplify`` and ``dl-raise-ops`` before the C++ graph passes, ``dl-fusion-report``
after them) in the same PassManager; ``python -m dlc.opt`` replays them.
"""

import os
import shlex
import tempfile
import time

from . import _build_config, passes
from .errors import CompileError
from .mlir import ir
from .mlir._mlir_libs import _site_initialize_0 as _capi
from .mlir.passmanager import PassManager

#: The stages of the CPU pipeline, in order (dl::cpuStages, lib/Pipelines).
STAGES = tuple(name for name, _ in _capi.pipeline_stages(False))

#: The stages of ``target="cuda"`` (dl::gpuStages): the CPU pipeline's first
#: four, then the GPU kernels; "binary" (PTX in a gpu.binary, host side for
#: the CUDA runtime) and "emulated" (the kernels as CPU loops) both follow
#: "gpu".
GPU_STAGES = tuple(name for name, _ in _capi.pipeline_stages(True))

#: What the IR at each stage is.
STAGE_DESCRIPTIONS = dict(_capi.pipeline_stages(False) + _capi.pipeline_stages(True))


def _parents():
    """The stage each stage is lowered from: the previous one, except that
    the stages after "gpu" each come from "gpu"."""
    parent = dict(zip(STAGES[1:], STAGES))
    gpu = GPU_STAGES.index("gpu")
    parent["gpu"] = GPU_STAGES[gpu - 1]
    parent.update((stage, "gpu") for stage in GPU_STAGES[gpu + 1:])
    return parent


#: The stage each stage is lowered from.
PARENT = _parents()


def stages_for(options):
    """The stages of a compilation with `options` (dlc.CompileOptions)."""
    return GPU_STAGES if options.is_cuda else STAGES


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
                f"{options.cpu_pipeline_options()}}}")
    if start == "gpu" or start in STAGES:
        return (f"dl-gpu-pipeline{{from={start} to={stop} "
                f"{options.gpu_pipeline_options()}}}")
    raise ValueError(f"cannot lower from stage {start!r} to {stop!r}")


def pipeline_text(start, stop, options):
    """The textual pass pipeline taking IR at `start` to IR at `stop`."""
    return f"builtin.module({_step_text(start, stop, options)})"


def run_stages(source, start, stop, options, name="dlc", phases=None):
    """A copy of `source` (a module at stage `start`, left as it is) lowered
    to stage `stop`, which must come after `start` (see stage_path). On
    failure, raises a CompileError that says what failed, where, and the
    command that reproduces it from an IR file it writes (named after
    `name`) of `source`. With a dict `phases`, adds the seconds spent to
    its "graph" (up to the graph stage: the graph optimizations) and
    "codegen" (after it) entries."""
    started = time.perf_counter()
    check_stage(start, stages_for(options))
    check_stage(stop, stages_for(options))
    module = clone(source)
    path = stage_path(stop)
    if start == stop or start not in path:
        return module
    graph_done = []  # when the graph stage was reached, if it is on the way
    with module.context:
        pm = _pass_manager(start, stop, options,
                           lambda *_: graph_done.append(time.perf_counter()))
        try:
            pm.run(module.operation)
        except ir.MLIRError as error:
            text = source.operation.get_asm(enable_debug_info=True)
            raise CompileError(_describe_failure(start, stop, error) + "\n" +
                               reproducer(text, start, stop, options, name)) from None
    if phases is not None:
        finished = time.perf_counter()
        if start == "dl":
            middle = graph_done[0] if graph_done else finished
            phases["graph"] = phases.get("graph", 0.0) + middle - started
            started = middle
        phases["codegen"] = phases.get("codegen", 0.0) + finished - started
    return module


def reproducer_command(path, start, stop, options):
    """The shell command that runs the slice `start` -> `stop` of the
    pipeline on the IR file `path`: dl-opt, or ``python -m dlc.opt`` where
    the slice includes dlc's Python passes (the graph stage)."""
    if start != "dl":
        return (f"{shlex.quote(_build_config.DL_OPT)} {shlex.quote(path)} "
                f"--pass-pipeline={shlex.quote(pipeline_text(start, stop, options))}")
    return "python -m dlc.opt " + shlex.quote(path) + "".join(
        f" -p {shlex.quote(step)}" for step in _steps_from_dl(stop, options))


def reproducer(text, start, stop, options, name):
    """Writes `text` (the IR at `start`) to a new file under
    ``$DLC_REPRO_DIR`` (default: the system's temporary directory) and says
    how to replay the failing lowering from it."""
    directory = os.environ.get("DLC_REPRO_DIR") or tempfile.gettempdir()
    try:
        os.makedirs(directory, exist_ok=True)
        handle, path = tempfile.mkstemp(prefix=f"dlc-{name}-{start}-", suffix=".mlir",
                                        dir=directory)
        with os.fdopen(handle, "w") as file:
            file.write(text)
    except OSError as error:
        return f"(the IR could not be saved to reproduce this: {error})"
    return (f"the IR at stage '{start}' is in {path}; reproduce with:\n"
            f"  {reproducer_command(path, start, stop, options)}")


def _steps_from_dl(stop, options):
    """The passes from "dl" to `stop`: the graph stage runs dlc's Python
    passes around the C++ graph passes, in one PassManager. Each step is a
    Python pass's name or a pipeline element."""
    # CSE first: an importer gives every use of a weight its own constant and
    # transpose (ALBERT's one layer, run 12 times: 72 uses of 6 weights of
    # 64-256 MB), which dl-simplify would fold one by one; merged, each
    # weight's transpose is folded once (ALBERT-xxlarge's dl-simplify 6.7 ->
    # 2.2 s on a Zen 3; the CSE itself takes 3 ms there).
    steps = ["cse"]
    if "dl-simplify" not in options.disable:
        steps.append("dl-simplify")
    if "dl-raise-ops" not in options.disable:
        steps.append("dl-raise-ops")
    steps.append(f"dl-cpu-pipeline{{from=dl to=graph {options.cpu_pipeline_options()}}}")
    if options.tuning_records is not None and not options.is_cuda:
        steps.append("dl-apply-tuning")
    if "dl-linalg-fuse" not in options.disable:
        steps.append("dl-fusion-report")
    if stop != "graph":
        steps.append(_step_text("graph", stop, options))
    return steps


def _pass_manager(start, stop, options, at_graph=None):
    """The PassManager of stages `start` -> `stop`; from "dl", `at_graph`
    (a function of the module and the pass) runs as a pass where the graph
    stage is reached and codegen begins (dlc.Compiled.phase_seconds)."""
    if start != "dl":
        return PassManager.parse(pipeline_text(start, stop, options))
    pm = PassManager("builtin.module")
    for step in _steps_from_dl(stop, options):
        if at_graph is not None and "{from=graph " in step:
            pm.add(at_graph, name="dl-graph-reached", argument="dl-graph-reached",
                   description="notes the time the graph stage was reached")
        if step == "dl-apply-tuning":
            pm.add(options.tuning_records.graph_pass(options.cpu_target),
                   name=step, argument=step,
                   description="writes the strategies of dlc.tune's records on their ops")
        elif step in passes.PYTHON_PASSES:
            passes.add_pass(pm, step)
        else:
            pm.add(step)
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
    """An independent copy of a module (in the same context): its ops
    cloned one by one, their attributes shared (a model's weights are dense
    attributes: immutable and uniqued in the context, so never copied).
    Through bytecode, as first, GPT-2 small's 500 MB of weights were written
    and parsed back at each copy (2.1 s on Zen 3, twice per compile); the
    text form prints and parses every number."""
    with module.context:
        copy = ir.Module.create(module.operation.location)
        attributes = module.operation.attributes
        for i in range(len(attributes)):
            named = attributes[i]
            copy.operation.attributes[named.name] = named.attr
        point = ir.InsertionPoint(copy.body)
        for op in module.body.operations:
            op.operation.clone(point)
    return copy


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
