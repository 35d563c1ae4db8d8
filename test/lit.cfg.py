# lit configuration of dlc's FileCheck suites (test/Dialect, test/Conversion,
# test/Pipelines). `filecheck` is the Python FileCheck from requirements.txt.
import os
import shutil
import sys

import lit.formats

config.name = "dlc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dlc_obj_root, "test")
config.excludes = ["python", "Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]

venv_bin = os.path.dirname(sys.executable)
path = [config.dlc_tools_dir, venv_bin, config.llvm_tools_dir,
        config.environment.get("PATH", os.environ.get("PATH", ""))]
config.environment["PATH"] = os.pathsep.join(path)

filecheck = shutil.which("filecheck", path=os.pathsep.join(path))
if filecheck is None:
    lit_config.fatal("`filecheck` is not installed; run `make test` to set up .venv")
config.substitutions.append(("FileCheck", filecheck))

# mlir-translate (for tests that go down to LLVM IR and assembly) lives in
# the MLIR wheel beside the LLVM tools.
mlir_bin = os.path.join(os.path.dirname(os.path.dirname(config.llvm_tools_dir)), "mlir", "bin")
config.environment["PATH"] = os.pathsep.join([config.environment["PATH"], mlir_bin])

# Helper scripts of the tests (test/*/Inputs/*.py) run with the venv's Python.
config.substitutions.append(("%python", sys.executable))

# dlc's Python passes run through `python -m dlc.opt` (the venv's Python).
config.substitutions.append(("%dlc-opt-py", f"{sys.executable} -m dlc.opt"))

# NVIDIA's PTX assembler, when installed: tests that assemble the PTX dlc
# generates into cubins are `REQUIRES: ptxas` (skipped without it).
if shutil.which("ptxas", path=config.environment["PATH"]):
    config.available_features.add("ptxas")
