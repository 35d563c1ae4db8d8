//===- DLToLinalg.cpp - convert-dl-to-linalg ------------------------------===//
//
// Lowers every dl op to upstream ops on tensors. Ours, because upstream has no
// dl; the output uses upstream named ops (matmul, batch_matmul, convolutions,
// poolings, transpose, reduce) and linalg.generic, so that every upstream
// linalg transformation (fusion, tiling, vectorization, bufferization) applies
// afterwards. The patterns live by family in Elementwise.cpp, Reductions.cpp,
// Structured.cpp and Shape.cpp; this file holds the pass and the storage type
// conversion:
//
// bool (i1) tensors become i8 tensors holding 0/1, function signatures
// included: numpy stores a bool in a byte, and MLIR's memref lowering cannot
// address i1 elements. Unsigned tensors (ui8 ... ui64) become the signless
// integers of their width (arith computes on signless integers only); the
// patterns of the ops whose result depends on the sign read it from the dl
// type (`isUnsignedTensor`) and use arith's unsigned operations.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"

namespace mlir::dl {
#define GEN_PASS_DEF_CONVERTDLTOLINALG
#include "dl/Conversion/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {

struct ConvertDLToLinalgPass
    : public dl::impl::ConvertDLToLinalgBase<ConvertDLToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    DLStorageTypeConverter typeConverter;
    ConversionTarget target(*ctx);
    target.addIllegalDialect<DLDialect>();
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return typeConverter.isLegal(op); });
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return typeConverter.isSignatureLegal(op.getFunctionType()) &&
             typeConverter.isLegal(&op.getBody());
    });
    RewritePatternSet patterns(ctx);
    populateDLToLinalgConversionPatterns(typeConverter, patterns);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(
        patterns, typeConverter);
    populateReturnOpTypeConversionPattern(patterns, typeConverter);
    populateCallOpTypeConversionPattern(patterns, typeConverter);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

mlir::dl::DLStorageTypeConverter::DLStorageTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](RankedTensorType type) -> Type {
    Type element = type.getElementType();
    if (element.isInteger(1))
      return type.clone(IntegerType::get(type.getContext(), 8));
    if (isDLUnsignedElement(element))
      return type.clone(
          IntegerType::get(type.getContext(), element.getIntOrFloatBitWidth()));
    return type;
  });
}

void mlir::dl::populateDLToLinalgConversionPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  lowering::populateElementwisePatterns(typeConverter, patterns);
  lowering::populateReductionPatterns(typeConverter, patterns);
  lowering::populateStructuredPatterns(typeConverter, patterns);
  lowering::populateShapePatterns(typeConverter, patterns);
}
