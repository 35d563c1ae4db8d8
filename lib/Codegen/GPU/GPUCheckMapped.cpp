//===- GPUCheckMapped.cpp - dl-gpu-check-mapped ---------------------------===//
//
// Fails when a parallel loop was not turned into a kernel: it would run on
// the host, on device buffers.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/GPU/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLGPUCHECKMAPPED
#include "dl/Codegen/GPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

struct DLGPUCheckMappedPass
    : public dl::impl::DLGPUCheckMappedBase<DLGPUCheckMappedPass> {
  using DLGPUCheckMappedBase::DLGPUCheckMappedBase;

  void runOnOperation() override {
    getOperation().walk([&](scf::ParallelOp loop) {
      loop.emitError("dl-gpu-check-mapped: this parallel loop could not be "
                     "mapped to GPU blocks and threads");
      signalPassFailure();
    });
  }
};

} // namespace
