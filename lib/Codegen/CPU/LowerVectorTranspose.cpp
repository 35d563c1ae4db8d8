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
    // AVX-512's sequence is for 16x16 squares of 32-bit elements; upstream's
    // Shuffle16x16 option lowers every other shape element by element, so
    // those get the 1-D shuffles.
    bool avx512 = target.hasFeature("avx512f");
    SmallVector<Operation *> squares16, others;
    getOperation()->walk([&](vector::TransposeOp op) {
      VectorType type = op.getSourceVectorType();
      bool is16x16 = type.getRank() == 2 && type.getDimSize(0) == 16 &&
                     type.getDimSize(1) == 16 &&
                     type.getElementType().getIntOrFloatBitWidth() == 32;
      (avx512 && is16x16 ? squares16 : others).push_back(op);
    });
    auto lower = [&](ArrayRef<Operation *> ops,
                     vector::VectorTransposeLowering lowering) {
      if (ops.empty())
        return success();
      RewritePatternSet patterns(&getContext());
      vector::populateVectorTransposeLoweringPatterns(patterns, lowering);
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
      return applyOpPatternsGreedily(ops, std::move(patterns), config);
    };
    if (failed(lower(squares16, vector::VectorTransposeLowering::Shuffle16x16)) ||
        failed(lower(others, vector::VectorTransposeLowering::Shuffle1D)))
      return signalPassFailure();
  }
};

} // namespace
