//===- CheckSizes.cpp - dl-check-sizes ------------------------------------===//
//
// The pipelines' guard against shapes whose element count or byte size does
// not fit in int64_t: upstream's strided-layout and memref verifiers and
// several passes compute such sizes with asserting arithmetic, so a type like
// tensor<4294967296x4294967296xf32> anywhere in the IR would abort the
// process instead of failing the compile. dl ops check their own types
// (SizedTensors); this pass checks everything else, and the padding widths
// of tensor.pad (negative ones crash upstream's folding) and the steps of
// affine.for (0 divides by zero in its folding) and scf.for (0 never ends).
// Ours: upstream has no such check.
//
//===----------------------------------------------------------------------===//

#include "dl/IR/DLDialect.h"
#include "dl/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLCHECKSIZES
#include "dl/Transforms/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {

/// True where `type`, or a type nested in it (function types), is a ranked
/// shaped type whose size staticByteSize refuses.
bool oversized(Type type) {
  if (auto function = dyn_cast<FunctionType>(type))
    return llvm::any_of(function.getInputs(), oversized) ||
           llvm::any_of(function.getResults(), oversized);
  return !sizeFits(type);
}

struct DLCheckSizesPass : public dl::impl::DLCheckSizesBase<DLCheckSizesPass> {
  void runOnOperation() override {
    bool failed = false;
    auto refuse = [&](Operation *op, Type type, const Twine &where) {
      op->emitError() << where << " has type " << type
                      << ", whose size in elements or bytes does not fit in "
                         "64 bits";
      failed = true;
    };
    getOperation()->walk([&](Operation *op) {
      if (auto function = dyn_cast<FunctionOpInterface>(op))
        if (oversized(function.getFunctionType())) {
          refuse(op, function.getFunctionType(), "the signature of @" +
                                                     function.getName());
          return;
        }
      for (auto [index, type] : llvm::enumerate(op->getResultTypes()))
        if (oversized(type))
          return refuse(op, type, "'" + op->getName().getStringRef() +
                                      "' result #" + Twine(index));
      // affine.for's verifier accepts a step of 0 (or less, written in the
      // generic form); upstream's loop folding then divides by it. An
      // scf.for of a constant step 0 never ends.
      StringRef name = op->getName().getStringRef();
      if (name == "affine.for") {
        auto step = op->getAttrOfType<IntegerAttr>("step");
        if (step && step.getValue().getSExtValue() <= 0) {
          // the words of dl::normalizeAffineLoops, which refuses it later
          op->emitError() << "affine.for has step " << step.getValue().getSExtValue()
                          << "; a loop's step must be positive";
          failed = true;
          return;
        }
      }
      if (name == "scf.for" && op->getNumOperands() >= 3) {
        APInt step;
        if (matchPattern(op->getOperand(2), m_ConstantInt(&step)) && step.isZero()) {
          op->emitError() << "'scf.for' has step 0: the loop would never end";
          failed = true;
          return;
        }
      }
      // tensor.pad's verifier accepts negative widths and a "dynamic" width
      // (INT64_MIN) written as a number, without its operand; upstream's
      // pad folding then indexes out of bounds.
      if (op->getName().getStringRef() == "tensor.pad") {
        auto segments =
            dyn_cast_or_null<DenseI32ArrayAttr>(op->getAttr("operandSegmentSizes"));
        const StringRef sides[] = {"low", "high"};
        for (auto [i, side] : llvm::enumerate(sides)) {
          auto widths = op->getAttrOfType<DenseI64ArrayAttr>(("static_" + side).str());
          if (!widths)
            continue;
          int64_t dynamic = llvm::count(widths.asArrayRef(), ShapedType::kDynamic);
          bool negative = llvm::any_of(widths.asArrayRef(), [](int64_t w) {
            return w < 0 && w != ShapedType::kDynamic;
          });
          bool unmatched = segments && segments.size() == 3 &&
                           dynamic != segments[i + 1];
          if (negative || unmatched) {
            op->emitError() << "'tensor.pad' has "
                            << (negative ? "a negative" : "an invalid") << " "
                            << side << " padding: " << widths;
            failed = true;
            return;
          }
        }
      }
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
