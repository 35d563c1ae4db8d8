"""The ONNX backend node test cases (defined in the `onnx` package) through
dlc's ONNX backend. Every case listed in onnx_node_expected.txt must pass (a
regression fails); any other case must be refused with a clear error
(UnsupportedOpError / ModelImportError) or be a known numerics difference,
never another exception; cases that pass without being expected are
reported in the summary (then add them with tools/onnx/node_report.py).
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "onnx"))

import node_cases  # noqa: E402

CASES = node_cases.cases()
EXPECTED = {line.strip() for line in open(os.path.join(HERE, "onnx_node_expected.txt"))
            if line.strip() and not line.startswith("#")}

#: name -> status, for the summary printed by conftest.py
RESULTS = {}


def test_expectations_name_real_cases():
    unknown = sorted(EXPECTED - set(CASES))
    assert not unknown, f"onnx_node_expected.txt names cases onnx does not have: {unknown[:5]}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_node_case(name):
    status, reason = node_cases.run_case(CASES[name])
    RESULTS[name] = status
    if name in EXPECTED:
        assert status == "pass", f"{name} used to pass: {status}: {reason}"
        return
    assert status != "error", f"{name} fails without a clear error: {reason}"
    if status != "pass":
        pytest.skip(f"{status}: {reason[:200]}")
