//===- GPUFloatRemainderToLibdevice.cpp ---------------------------------===//
//
// Scalar f32 / f64 arith.remf in a gpu.module becomes a call of libdevice's
// __nv_fmodf / __nv_fmod (C's fmod, which arith.remf is), declared in the
// module: upstream's NVVM pipeline lowers arith to llvm before its libdevice
// patterns run, and NVPTX cannot select the llvm.frem that would reach it.
// Everything else is left alone.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLGPUFLOATREMAINDERTOLIBDEVICE
#include "dl/Codegen/GPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// The declaration of `name` : (type, type) -> type in `module`, made on
/// first use.
func::FuncOp libdeviceFunction(gpu::GPUModuleOp module, StringRef name,
                               Type type) {
  SymbolTable symbols(module);
  if (auto existing = symbols.lookup<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto function = func::FuncOp::create(
      b, module.getLoc(), name, b.getFunctionType({type, type}, {type}));
  function.setPrivate();
  return function;
}

struct DLGPUFloatRemainderToLibdevicePass
    : public dl::impl::DLGPUFloatRemainderToLibdeviceBase<
          DLGPUFloatRemainderToLibdevicePass> {
  using DLGPUFloatRemainderToLibdeviceBase::DLGPUFloatRemainderToLibdeviceBase;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    SmallVector<arith::RemFOp> remainders;
    module.walk([&](arith::RemFOp op) {
      if (op.getType().isF32() || op.getType().isF64())
        remainders.push_back(op);
    });
    for (arith::RemFOp op : remainders) {
      Type type = op.getType();
      func::FuncOp function = libdeviceFunction(
          module, type.isF32() ? "__nv_fmodf" : "__nv_fmod", type);
      OpBuilder b(op);
      auto call = func::CallOp::create(b, op.getLoc(), function,
                                       ValueRange{op.getLhs(), op.getRhs()});
      op.replaceAllUsesWith(call.getResult(0));
      op.erase();
    }
  }
};

} // namespace
