"""The shape of the code base, checked: no hardware constant outside the
target description, every pass registered and tested alone, lit folders
mirroring the libraries, no Python import cycle."""

import ast
import os
import re
import subprocess

import pytest

from dlc import _build_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _files(top, suffixes):
    for directory, _, names in os.walk(os.path.join(ROOT, top)):
        for name in names:
            if name.endswith(suffixes):
                yield os.path.join(directory, name)


def _relative(path):
    return os.path.relpath(path, ROOT)


# What passes used to keep of the hardware (options and constants) before
# #dl.target: none may come back outside the target description.
FORBIDDEN = [
    (r"hostCacheSizes|CacheModel|kCacheLine", "the old cache model"),
    (r"getHostCPUName|getHostCPUFeatures|/sys/devices/system/cpu", "host detection"),
    (r"\"vector-bits\"|\"register-bits\"|\"l1-bytes\"|\"l2-bytes\"", "a hardware pass option"),
    (r"hardware_concurrency", "the host's thread count"),
    (r"PEAK_LANES|PEAK_CHAINS", "a fixed vector width"),
]
ALLOWED = ("lib/Target/", "dialects/dl/Target/", "python/dlc/target.py",
           "lib/Runtime/")  # the runtime counts threads at run time


def test_no_hardware_constant_outside_the_target_description():
    offenders = []
    for path in list(_files("lib", (".cpp", ".h"))) + list(_files("dialects", (".td", ".h"))) + \
            list(_files("python/dlc", (".py",))):
        relative = _relative(path)
        if relative.startswith(ALLOWED):
            continue
        text = open(path).read()
        for pattern, what in FORBIDDEN:
            for match in re.finditer(pattern, text):
                line = text.count("\n", 0, match.start()) + 1
                offenders.append(f"{relative}:{line}: {what} ({match.group(0)})")
    assert not offenders, "hardware facts outside #dl.target:\n" + "\n".join(offenders)


def _registered_passes():
    """{pass argument: Passes.td} of every dlc pass."""
    passes = {}
    for path in _files("dialects", ("Passes.td",)):
        for name in re.findall(r'Pass<"([a-z0-9-]+)"', open(path).read()):
            passes[name] = _relative(path)
    return passes


def test_every_pass_is_registered_and_runs_alone_in_a_lit_test():
    passes = _registered_passes()
    assert len(passes) >= 29
    help_text = subprocess.run([_build_config.DL_OPT, "--help"], capture_output=True,
                               text=True, check=True).stdout
    runs = "\n".join(line for path in _files("test", (".mlir",))
                     for line in open(path) if "RUN:" in line)
    for name, source in passes.items():
        assert f"--{name} " in help_text, f"{name} ({source}) is not registered in dl-opt"
        assert re.search(rf"(--{name}\b|[(,]{name}[{{),])", runs), \
            f"no lit test runs {name} ({source}) alone"


def test_lit_folders_mirror_the_libraries():
    """Each library of passes has its lit folder: lib/X <-> test/X."""
    for library in ["Dialect/DL/IR", "Dialect/DL/Transforms", "Conversion/DLToLinalg",
                    "Codegen/Common", "Codegen/CPU", "Codegen/GPU", "Codegen/GPUToCPU",
                    "Target", "Pipelines"]:
        assert os.path.isdir(os.path.join(ROOT, "lib", library)), library
        tests = list(_files(os.path.join("test", library), (".mlir",)))
        assert tests, f"test/{library} has no lit tests"


def test_no_python_import_cycle():
    """The import graph of the dlc package, counting imports inside
    functions too, is acyclic."""
    package = os.path.join(ROOT, "python", "dlc")
    modules = {name[:-3] for name in os.listdir(package) if name.endswith(".py")}
    graph = {}
    for module in modules:
        tree = ast.parse(open(os.path.join(package, module + ".py")).read())
        edges = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    edges.add(node.module.split(".")[0])
                else:
                    edges.update(alias.name for alias in node.names)
        graph[module] = {m for m in edges if m in modules and m != module}
    state = {}

    def visit(module, path):
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                cycle = path[path.index(target):] + [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, path + [target])
        state[module] = "done"

    for module in sorted(modules):
        if module not in state:
            visit(module, [module])
