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
// Before converting, every dl op's location is wrapped in a name that says
// what it computes ("dl.conv2d 3x3/2 g72 8x56x56x72 -> 8x28x28x72"): the
// loops lowered from it keep its location, and dl-lower-parallel-launch puts
// the name of the loop's op in the profiler's region table beside the source
// line (one line of a model's source often holds all its convolutions).
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

void appendShape(llvm::raw_ostream &os, Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank())
    return;
  os << ' ';
  llvm::interleave(
      shaped.getShape(), os,
      [&](int64_t size) {
        if (ShapedType::isDynamic(size))
          os << '?';
        else
          os << size;
      },
      "x");
}

/// The profiler's name of `op` (see the file comment): the op; a
/// convolution's window, stride (where not 1), groups (where not 1), input
/// and output shapes; a product's operand shapes (B as packed, where
/// dl-pack-weights packed it); any other op's result shape.
std::string profileName(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName().getStringRef();
  if (auto conv = dyn_cast<Conv2dOp>(op)) {
    auto filter = cast<ShapedType>(conv.getFilter().getType());
    bool nhwc = conv.getLayout() == "NHWC";
    if (filter.hasRank() && filter.getRank() == 4) {
      auto size = [&](int64_t dim) {
        int64_t n = filter.getDimSize(dim);
        return ShapedType::isDynamic(n) ? std::string("?") : std::to_string(n);
      };
      os << ' ' << size(nhwc ? 0 : 2) << 'x' << size(nhwc ? 1 : 3);
    }
    ArrayRef<int64_t> strides = conv.getStrides();
    if (llvm::any_of(strides, [](int64_t s) { return s != 1; })) {
      os << '/';
      if (strides.size() == 2 && strides[0] == strides[1])
        os << strides[0];
      else
        llvm::interleave(strides, os, "x");
    }
    if (conv.getGroups() != 1)
      os << " g" << conv.getGroups();
    appendShape(os, conv.getInput().getType());
    os << " ->";
  } else if (isa<MatmulOp>(op)) {
    appendShape(os, op->getOperand(0).getType());
    os << " *";
    appendShape(os, op->getOperand(1).getType());
    return text;
  }
  if (op->getNumResults() > 0)
    appendShape(os, op->getResult(0).getType());
  return text;
}

struct ConvertDLToLinalgPass
    : public dl::impl::ConvertDLToLinalgBase<ConvertDLToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    getOperation()->walk([&](Operation *op) {
      if (isa<DLDialect>(op->getDialect()) && op->getNumResults() > 0 &&
          !isa<ConstantOp>(op))
        op->setLoc(NameLoc::get(StringAttr::get(ctx, profileName(op)),
                                op->getLoc()));
    });
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
