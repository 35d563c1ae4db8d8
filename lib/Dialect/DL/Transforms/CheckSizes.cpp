//===- CheckSizes.cpp - dl-check-sizes ------------------------------------===//
//
// The pipelines' guard against shapes whose element count or byte size does
// not fit in int64_t: upstream's strided-layout and memref verifiers and
// several passes compute such sizes with asserting arithmetic, so a type like
// tensor<4294967296x4294967296xf32> anywhere in the IR would abort the
// process instead of failing the compile. dl ops check their own types
// (SizedTensors); this pass checks everything else. Ours: upstream has no
// such check.
//
//===----------------------------------------------------------------------===//

#include "dl/IR/DLDialect.h"
#include "dl/Transforms/Passes.h"

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
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
