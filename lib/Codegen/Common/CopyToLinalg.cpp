//===- CopyToLinalg.cpp - dl-memref-copy-to-linalg ------------------------===//
//
// Rewrites memref.copy between buffers that are not both contiguous into
// linalg.copy, so that the copy becomes an affine loop nest the rest of the
// pipeline vectorizes and parallelizes. Bufferization emits memref.copy for
// tensor.pad (into a strided subview) and tensor.insert_slice; the LLVM
// lowering turns a copy between non-contiguous buffers into a call to the
// generic `memrefCopy` of the runtime library, which walks elements with a
// division per index: padding a 64x56x56 input took 1.5 ms that way.
// Contiguous copies stay memref.copy (they become memcpy), unless `all`
// asks for every copy (the GPU pipeline, where the host must not copy
// device buffers).
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/Common/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLMEMREFCOPYTOLINALG
#include "dl/Codegen/Common/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

bool isContiguous(Type type) {
  auto memrefType = dyn_cast<MemRefType>(type);
  return memrefType && memrefType.getLayout().isIdentity();
}

struct DLMemRefCopyToLinalgPass
    : public dl::impl::DLMemRefCopyToLinalgBase<DLMemRefCopyToLinalgPass> {
  using DLMemRefCopyToLinalgBase::DLMemRefCopyToLinalgBase;

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (all || !isContiguous(copy.getSource().getType()) ||
          !isContiguous(copy.getTarget().getType()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      auto sourceType = dyn_cast<MemRefType>(copy.getSource().getType());
      if (!sourceType)
        continue;
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};

} // namespace
