"""`make bench` on a fresh clone: the benchmark writes its results into a
folder that does not exist yet (bench/results is ignored by git, so a clone
has none). The smallest configuration (--smoke) runs every part that writes
a file: the JSON results and the plot."""

import json
import os
import subprocess
import sys


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
