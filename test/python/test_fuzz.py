"""A seeded slice of the dl-opt mutation fuzzer (tools/fuzz/dlopt_fuzz.py):
mutated lit inputs through their RUN lines' passes and the whole CPU
pipeline. dl-opt must answer each with output or a diagnostic, never an
abort, a segfault or a hang. `make fuzz` runs the long version."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "fuzz"))

import dlopt_fuzz  # noqa: E402


@pytest.mark.skipif(not os.path.exists(dlopt_fuzz.DL_OPT), reason="dl-opt is not built")
@pytest.mark.parametrize("seed", [1, 2])
def test_mutated_inputs_never_abort_dl_opt(seed, tmp_path):
    stats, findings = dlopt_fuzz.fuzz(300, seed, out=str(tmp_path), timeout=120,
                                      progress=False)
    assert stats["inputs"] == 300
    dlc_findings = {key: value[0] for key, value in findings.items()
                    if key[0] in ("dlc", "hang")}
    assert not dlc_findings, (
        f"dl-opt aborted or hung (reproducers in {tmp_path}): {dlc_findings}")


def _declared_passes():
    """Every pass the .td files declare."""
    import re
    names = set()
    for folder, _, files in os.walk(os.path.join(ROOT, "dialects")):
        for name in files:
            if name.endswith(".td"):
                text = open(os.path.join(folder, name)).read()
                names.update(re.findall(r'Pass<\s*"([a-z0-9-]+)"', text))
    return names


@pytest.mark.skipif(not os.path.exists(dlopt_fuzz.DL_OPT), reason="dl-opt is not built")
def test_the_fuzzer_finds_every_declared_pass():
    # A new pass is fuzzed alone without anyone listing it: the list comes
    # from dl-opt --help, and must hold every pass the .td files declare.
    declared = _declared_passes()
    assert len(declared) >= 30, declared
    assert set(dlopt_fuzz.registered_passes()) == declared


@pytest.mark.skipif(not os.path.exists(dlopt_fuzz.DL_OPT), reason="dl-opt is not built")
def test_each_pass_alone_never_aborts_or_hangs(tmp_path):
    # Every registered pass alone on mutated inputs, 8 each: the slice of
    # `make fuzz`'s alone-runs that make test affords.
    passes = dlopt_fuzz.registered_passes()
    stats, findings = dlopt_fuzz.fuzz(8 * len(passes), 3, out=str(tmp_path), timeout=120,
                                      progress=False, alone_fraction=1.0, passes=passes)
    assert stats["inputs"] == 8 * len(passes)
    dlc_findings = {key: value[0] for key, value in findings.items()
                    if key[0] in ("dlc", "hang")}
    assert not dlc_findings, (
        f"a pass alone aborted or hung (reproducers in {tmp_path}): {dlc_findings}")


def test_the_seeds_cover_every_lit_folder():
    names = {name.split("#")[0] for name, _, _ in dlopt_fuzz.seeds()}
    folders = {os.path.dirname(name) for name in names}
    assert {"test/Dialect/DL/IR", "test/Conversion/DLToLinalg", "test/Codegen/CPU",
            "test/Pipelines"} <= folders, folders


def test_classify():
    assert dlopt_fuzz.classify(0, "", False) is None
    assert dlopt_fuzz.classify(1, "error: bad", False) is None
    kind, signature = dlopt_fuzz.classify(
        -6, "dl-opt: X.cpp:1: f: Assertion `x' failed.\n #5 mlir::PassManager::run", False)
    assert kind == "dlc" and "Assertion" in signature
    kind, _ = dlopt_fuzz.classify(
        -6, "Assertion `y' failed.\n #3 mlir::detail::Parser::parseType\n"
            " #9 mlir::parseSourceFile", False)
    assert kind == "upstream-parser"
    # dlc's type inference asserting under the parser is dlc's (dl.pad's,
    # found by the 100,000-input run).
    kind, _ = dlopt_fuzz.classify(
        -6, "Assertion `z' failed.\n #9 mlir::RankedTensorType::get\n"
            " #10 mlir::dl::PadOp::inferReturnTypes\n #20 mlir::parseSourceFile", False)
    assert kind == "dlc"
    assert dlopt_fuzz.classify(0, "", True) == ("hang", "timeout")


import program_fuzz  # noqa: E402


@pytest.mark.parametrize("seed", [11])
def test_random_programs_match_numpy_with_each_optimization_off(seed):
    # Random dlc programs (elementwise, broadcasting, reductions, shapes,
    # slices, matmul, softmax, layer norm, convolutions incl. grouped,
    # dilated and depthwise, pooling, squeeze-excitation) against float64
    # numpy; each also with one optimization disabled (round robin).
    findings = program_fuzz.fuzz(60, seed, progress=False)
    assert not findings, "\n\n".join(f"program {i} (disable={o}): {p}\n{s}"
                                     for i, o, p, s in findings)


# -- the importer fuzzer (tools/fuzz/model_fuzz.py) --------------------------

import model_fuzz  # noqa: E402


def test_random_programs_are_reproducible_and_valid():
    torch = pytest.importorskip("torch")
    from dlc.zoo import random_models
    texts = [random_models.describe(7, i) for i in range(6)]
    assert texts == [random_models.describe(7, i) for i in range(6)]
    for i in range(6):
        module, args = random_models.build(7, i)
        with torch.no_grad():
            first = module(*args)
            again = random_models.build(7, i)[0](*args)
        first = first if isinstance(first, tuple) else (first,)
        again = again if isinstance(again, tuple) else (again,)
        for a, b in zip(first, again):
            assert torch.equal(a, b)
    # a prefix keeps the first steps and returns what they leave unread
    prog = random_models.program(7, 0)
    short = random_models.describe(7, 0, steps=1)
    assert prog.steps[0].text in short and prog.steps[-1].text not in short.split("\n")[-2:-1]


def test_a_slice_of_random_models_matches_eager_through_every_frontend(tmp_path,
                                                                       monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    monkeypatch.setenv("DLC_CACHE_DIR", "off")
    counts, findings = model_fuzz.fuzz(16, 5, ("torch", "onnx-dynamo", "onnx-torchscript"),
                                       out=str(tmp_path), jobs=1, progress=False)
    assert sum(counts.values()) == 48
    assert counts["ok"] >= 40, counts
    assert not findings, "\n".join(f"{r['status']} {r['frontend']} {key}: {r['detail'][:300]}"
                                   for key, r in findings)


def test_model_fuzz_reproducer_names_the_program_and_the_command(tmp_path):
    pytest.importorskip("torch")
    record = dict(model="random/7/0", frontend="torch", status="mismatch",
                  detail="max relative error 1e-2 > 0.0001")
    path = model_fuzz.write_reproducer(str(tmp_path), "random/7/0/1", record)
    text = open(path).read()
    assert "mismatch through torch" in text
    assert "--reproduce random/7/0/1 --frontends torch" in text
    assert "random program 7/0, first 1 steps" in text


def test_exporter_bugs_are_not_counted_against_dlc(monkeypatch):
    # torch 2.14's dynamo exporter folds this index_add of a clone into a
    # constant of other values (onnx's reference evaluator agrees with dlc):
    # export-wrong, not a dlc mismatch.
    pytest.importorskip("onnxscript")
    from dlc.zoo import catalog
    from dlc.zoo.check import check
    monkeypatch.setenv("DLC_CACHE_DIR", "off")
    result = check(catalog.find("random/1/11/2"), "onnx-dynamo")
    assert result.status in ("export-wrong", "ok"), result
