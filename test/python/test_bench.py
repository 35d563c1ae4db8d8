"""`make bench` on a fresh clone: the benchmark writes its results into a
folder that does not exist yet (bench/results is ignored by git, so a clone
has none). The smallest configuration (--smoke) runs every part that writes
a file: the JSON results and the plot."""

import json
import os
import subprocess
import sys

import pytest


def test_bench_creates_its_output_folder(tmp_path):
    out = tmp_path / "not" / "yet" / "results"
    run = subprocess.run([sys.executable, "-m", "dlc.bench", "--smoke", "--threads", "1",
                          "--out", str(out)], capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((out / "latest.json").read_text())
    assert [row["name"] for row in report["results"]][:1] == ["matmul 64"]
    assert len(report["graph"]) == 1
    assert (out / "bench.png").stat().st_size > 0
    assert len([f for f in os.listdir(out) if f.startswith("bench-")]) == 1


def test_zoo_speed_table_checks_and_times_each_system(tmp_path):
    # bench/zoo_speed.py on its small test model: every system in its own
    # process, outputs checked against eager, dlc's compile split in phases.
    systems = ["dlc-torch", "dlc-onnx", "torch"]
    script = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "zoo_speed.py")
    run = subprocess.run([sys.executable, script, "--models", "test-resnet", "--batches", "1",
                          "--systems", *systems, "--repeats", "3", "--seconds", "0.5",
                          "--json", str(tmp_path / "zoo.json"),
                          "--markdown", str(tmp_path / "zoo.md"), "--profile", "2"],
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((tmp_path / "zoo.json").read_text())
    (row,) = report["rows"]
    assert row["failed"] == {}
    assert sorted(row["systems"]) == sorted(systems)
    for facts in row["systems"].values():
        assert facts["ms"] > 0 and facts["rel_error"] <= 1e-3
    dlc_torch = row["systems"]["dlc-torch"]
    assert set(dlc_torch["phases"]) == {"trace", "graph", "codegen", "llvm"}
    assert dlc_torch["cached_from_disk"] and dlc_torch["cached_s"] < dlc_torch["compile_s"]
    assert set(row["ratio"]) == {"dlc-onnx", "torch"}
    assert "| timm ResNet-10t 64x64 (test) | 1 |" in (tmp_path / "zoo.md").read_text()
    # --profile: dlc.profile's slowest source lines of each dlc system.
    assert "profile" not in row["systems"]["torch"]
    for system in ("dlc-torch", "dlc-onnx"):
        profile = row["systems"][system]["profile"]
        assert profile["ms"] > 0 and profile["regions"] >= 1
        assert 1 <= len(profile["lines"]) <= 2
    assert "test-resnet b1 dlc-torch:" in run.stdout


@pytest.mark.parametrize("systems", [["dlc-torch"], ["dlc-torch", "onnxruntime", "torch"]])
def test_zoo_speed_markdown_has_one_cell_per_column(systems):
    # A header cell for each column, whichever systems ran (dlc-torch
    # alone once gave the header an empty column more than its rows).
    import importlib.util
    script = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "zoo_speed.py")
    spec = importlib.util.spec_from_file_location("zoo_speed_table", script)
    zoo_speed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(zoo_speed)
    facts = {"ms": 5.0, "compile_s": 7.0, "cached_s": 0.1, "import_s": 1.0,
             "phases": {"trace": 0.1, "graph": 0.5, "codegen": 2.0, "llvm": 3.0}}
    row = {"model": "test-resnet", "batch": 1, "failed": {},
           "systems": {s: dict(facts) for s in systems},
           "ratio": {s: 1.0 for s in systems if s != "dlc-torch"}}
    page = zoo_speed.markdown([row], systems, {"cpu": "test", "threads": 2, "date": "today"})
    table = [line for line in page.splitlines() if line.startswith("|")]
    assert len(table) == 3
    widths = {line.count("|") for line in table}
    assert widths == {1 + 2 + len(systems) + (len(systems) - 1) + 3}
    assert "|  |" not in table[0]


def test_int8_table_times_each_system_and_measures_agreement(tmp_path):
    # bench/int8_speed.py on the small test model: onnxruntime's quantizer
    # writes the QDQ file, each system runs alone, agreement is measured.
    script = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "int8_speed.py")
    run = subprocess.run([sys.executable, script, "--models", "test-resnet", "--repeats", "3",
                          "--seconds", "0.5", "--agreement", "8", "--calibration", "4",
                          "--json", str(tmp_path / "int8.json")],
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    (row,) = json.loads((tmp_path / "int8.json").read_text())["rows"]
    assert row["failed"] == {}
    assert sorted(row["systems"]) == ["dlc-fp32", "dlc-int8", "ort-fp32", "ort-int8"]
    assert all(facts["ms"] > 0 for facts in row["systems"].values())
    assert "quantize_static" in row["quantization"]
    assert row["top1_vs_ort_int8"] >= 0.75
    assert "| test-resnet |" in run.stdout


def test_tune_table_tunes_then_times_each_system(tmp_path):
    # bench/tune_speed.py with tiny budgets: one matmul against numpy, the
    # small test model against onnxruntime, untuned and tuned dlc each in its
    # own process (the records the tuning process wrote applied by the other).
    script = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "tune_speed.py")
    run = subprocess.run([sys.executable, script, "--models", "test-resnet", "--matmuls", "64",
                          "--seconds", "4", "--repeats", "3",
                          "--records-dir", str(tmp_path / "records"),
                          "--json", str(tmp_path / "tune.json")],
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    matmul, model = json.loads((tmp_path / "tune.json").read_text())["rows"]
    for key in ("numpy", "dlc-untuned", "dlc-tuned"):
        assert matmul[key] > 0
    for key in ("onnxruntime", "dlc-untuned", "dlc-tuned"):
        assert model[key] > 0
    assert "failed" not in model
    assert model["tuning"]["tasks"] >= 5 and model["tuning"]["trials"] >= model["tuning"]["tasks"]
    assert (tmp_path / "records" / "test-resnet-b1.jsonl").stat().st_size > 0
    assert "| matmul 64x64x64 |" in run.stdout and "| test-resnet |" in run.stdout
