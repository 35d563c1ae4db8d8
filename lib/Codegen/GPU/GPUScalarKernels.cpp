//===- GPUScalarKernels.cpp - dl-gpu-scalar-kernels -----------------------===//
//
// Every linalg op without parallel loops (on rank-0 buffers, or a reduction
// over all of its dimensions, e.g. the sum of a whole tensor) into a
// one-iteration scf.parallel, a kernel of one thread: on the GPU the host must
// compute nothing on device buffers (convert-linalg-to-parallel-loops would
// leave a full reduction as scf.for loops in the host function). Copies become
// kernels through dl-memref-copy-to-linalg{all=true}.
//
// A full reduction along contiguous elements (32 or more) is taken before,
// by dl-gpu-row-reductions (one block of up to 256 threads); the others run
// here on one GPU thread: correct, but slow on large tensors.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLGPUSCALARKERNELS
#include "dl/Codegen/GPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

struct DLGPUScalarKernelsPass
    : public dl::impl::DLGPUScalarKernelsBase<DLGPUScalarKernelsPass> {
  using DLGPUScalarKernelsBase::DLGPUScalarKernelsBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> scalar;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.getNumParallelLoops() == 0 && !op->getParentOfType<scf::ParallelOp>())
        scalar.push_back(op);
    });
    for (linalg::LinalgOp op : scalar) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto loop = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                          ValueRange{one}, ValueRange{one});
      op->moveBefore(loop.getBody()->getTerminator());
    }
  }
};

} // namespace
