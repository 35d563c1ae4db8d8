"""Runs the ONNX backend node test cases (``onnx.backend.test.case.node``)
through dlc's ONNX backend; shared by test/python/test_onnx_node.py and
tools/onnx/node_report.py."""

import warnings

import numpy as np

__all__ = ["cases", "run_case"]


def cases():
    """{name: TestCase} of every node case of the installed onnx."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases
        return {case.name: case for case in collect_testcases()}


def _compare(case, expected, actual):
    if len(expected) != len(actual):
        return f"{len(actual)} outputs, expected {len(expected)}"
    from onnx import TensorProto, numpy_helper
    for index, (want, got) in enumerate(zip(expected, actual)):
        if isinstance(want, TensorProto):
            want = numpy_helper.to_array(want)
        want, got = np.asarray(want), np.asarray(got)
        if want.dtype == object:
            return f"output {index} is a sequence or string"
        if want.dtype != got.dtype:
            return f"output {index} has dtype {got.dtype}, expected {want.dtype}"
        if want.shape != got.shape:
            return f"output {index} has shape {got.shape}, expected {want.shape}"
        try:
            np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)
        except AssertionError as error:
            lines = [l for l in str(error).splitlines() if "Max" in l or "Mismatch" in l]
            return f"output {index} differs: " + " ".join(l.strip() for l in lines)
    return None


def run_case(case):
    """(status, reason): status is "pass", "unsupported" (an operator, dtype
    or attribute dlc refuses with a clear error), "error" (another
    exception) or "wrong" (outputs differ)."""
    from dlc.errors import DLCError, ModelImportError, UnsupportedOpError
    from dlc.onnx_backend import DlcBackend
    try:
        rep = DlcBackend.prepare(case.model)
        for inputs, expected in case.data_sets:
            outputs = rep.run(list(inputs))
            problem = _compare(case, expected, outputs)
            if problem:
                return "wrong", problem
    except (UnsupportedOpError, ModelImportError) as error:
        return "unsupported", _first_line(error)
    except DLCError as error:
        return "error", f"{type(error).__name__}: {_first_line(error)}"
    except Exception as error:  # noqa: BLE001 - reported per case
        return "error", f"{type(error).__name__}: {_first_line(error)}"
    return "pass", ""


def _first_line(error):
    text = str(error).strip().splitlines()
    if not text:
        return type(error).__name__
    if len(text) > 1 and text[0].endswith(":"):
        return text[0] + " " + text[1].strip()
    return text[0][:300]
