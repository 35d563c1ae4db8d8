"""dlc's own MLIR Python bindings: the dl dialect and dlc's passes are there in
every Context, with the whole upstream API beside them."""

import numpy as np
import pytest

from dlc.mlir import ir
from dlc.mlir.dialects import arith, dl, func
from dlc.mlir.execution_engine import ExecutionEngine
from dlc.mlir.passmanager import PassManager

MODULE = """
func.func @f(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = dl.add %a, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %1 = dl.relu %0 : tensor<?x4xf32> -> tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}
"""


def test_dl_dialect_is_registered_in_every_context():
    with ir.Context():
        module = ir.Module.parse(MODULE)
        assert module.operation.verify()
        ops = [op.operation.name for op in module.body.operations[0].regions[0].blocks[0].operations]
        assert ops == ["dl.add", "dl.relu", "func.return"]


def test_generated_builders_infer_result_types():
    with ir.Context(), ir.Location.unknown():
        f32 = ir.F32Type.get()
        dynamic = ir.ShapedType.get_dynamic_size()
        lhs_type = ir.RankedTensorType.get([dynamic, 784], f32)
        rhs_type = ir.RankedTensorType.get([784, 128], f32)
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("g", ([lhs_type, rhs_type], []))
            with ir.InsertionPoint(fn.add_entry_block()):
                product = dl.MatmulOp(*fn.arguments)
                summed = dl.ReduceSumOp(product.result, [1], keepdims=True)
                func.ReturnOp([summed.result])
        assert str(product.result.type) == "tensor<?x128xf32>"
        assert str(summed.result.type) == "tensor<?x1xf32>"


def test_builder_reports_inference_errors_with_location():
    with ir.Context(), ir.Location.file("model.py", 12, 3):
        t = ir.RankedTensorType.get([2, 3], ir.F32Type.get())
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("h", ([t, t], []))
            with ir.InsertionPoint(fn.add_entry_block()):
                with pytest.raises(ir.MLIRError, match=r'model.py":12:3.*contraction dimensions differ'):
                    dl.MatmulOp(*fn.arguments)


def test_dlc_passes_run_from_python_with_upstream_ones():
    with ir.Context():
        module = ir.Module.parse(MODULE)
        PassManager.parse("builtin.module(convert-dl-to-linalg, canonicalize)").run(module.operation)
        assert "linalg.generic" in str(module) and "dl." not in str(module)
        module = ir.Module.parse(MODULE)
        PassManager.parse("builtin.module(dl-cpu-pipeline{to=affine tile-size=2})").run(module.operation)
        assert "affine.for" in str(module)
        with pytest.raises(ValueError, match="dl-cpu-pipeline"):
            PassManager.parse("builtin.module(dl-cpu-pipeline{from=llvm to=dl})")


def test_execution_engine_runs_the_pipeline_output():
    with ir.Context():
        module = ir.Module.parse("""
        func.func @scale(%a: tensor<4xf32>) -> tensor<4xf32> attributes {llvm.emit_c_interface} {
          %c = dl.constant dense<2.0> : tensor<4xf32>
          %0 = dl.mul %a, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
          return %0 : tensor<4xf32>
        }""")
        PassManager.parse("builtin.module(dl-cpu-pipeline)").run(module.operation)
        # The code allocates through libdlc_runtime (lib/Runtime/Memory.cpp).
        from dlc import _build_config
        engine = ExecutionEngine(module, opt_level=2,
                                 shared_libs=[_build_config.DLC_RUNTIME_LIB])
        assert engine.raw_lookup("_mlir_ciface_scale")
