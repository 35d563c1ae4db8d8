//===- GPUCheckMapped.cpp - dl-gpu-check-mapped ---------------------------===//
//
// Fails when a parallel loop was not turned into a kernel, or when any other
// operation of a host function reads or writes a buffer outside the kernels:
// either would run on the host, on device buffers (device memory, which the
// host cannot touch: dl-gpu-device-memory). Shape buffers, which
// dl-gpu-device-memory keeps on the host for memref.reshape, are the host's
// to touch.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLGPUCHECKMAPPED
#include "dl/Codegen/GPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// Whether `op` reads or writes the contents of a buffer (not only allocates,
/// frees or views one).
bool touchesBuffer(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    if (!isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect()))
      return false;
    Value value = e.getValue();
    if (!value || !isa<BaseMemRefType>(value.getType()))
      return false;
    return !dl::isHostShapeBuffer(value);
  });
}

struct DLGPUCheckMappedPass
    : public dl::impl::DLGPUCheckMappedBase<DLGPUCheckMappedPass> {
  using DLGPUCheckMappedBase::DLGPUCheckMappedBase;

  void runOnOperation() override {
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip(); // the kernels may touch device buffers
      if (isa<scf::ParallelOp>(op)) {
        op->emitError("dl-gpu-check-mapped: this parallel loop could not be "
                      "mapped to GPU blocks and threads");
        signalPassFailure();
        return WalkResult::skip();
      }
      if (!isa_and_nonnull<gpu::GPUDialect>(op->getDialect()) &&
          touchesBuffer(op)) {
        op->emitError("dl-gpu-check-mapped: this operation would read or "
                      "write a device buffer on the host, outside the GPU "
                      "kernels");
        signalPassFailure();
      }
      return WalkResult::advance();
    });
  }
};

} // namespace
