//===- LowerVectorTranspose.cpp - dl-lower-vector-transpose ---------------===//
//
// vector.transpose lowered by upstream's patterns, the lowering chosen from
// #dl.target rather than fixed in the pipeline: AVX-512's 16x16 shuffle
// sequence where the target has it, 1-D shuffles (which LLVM selects for
// the ISA at hand) elsewhere.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/CPU/Passes.h"
#include "dl/Target/Target.h"

#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLLOWERVECTORTRANSPOSE
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

struct DLLowerVectorTransposePass
    : public dl::impl::DLLowerVectorTransposeBase<DLLowerVectorTransposePass> {
  using DLLowerVectorTransposeBase::DLLowerVectorTransposeBase;

  void runOnOperation() override {
    dl::TargetInfo target = dl::TargetInfo::of(getOperation());
    vector::VectorTransposeLowering lowering =
        target.hasFeature("avx512f")
            ? vector::VectorTransposeLowering::Shuffle16x16
            : vector::VectorTransposeLowering::Shuffle1D;
    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransposeLoweringPatterns(patterns, lowering);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
