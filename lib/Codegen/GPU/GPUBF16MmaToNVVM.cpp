//===- GPUBF16MmaToNVVM.cpp - dl-gpu-bf16-mma-to-nvvm ---------------------===//
//
// nvgpu.mma.sync on bf16 operands as nvvm.mma.sync. Upstream's
// convert-nvgpu-to-nvvm maps f16, tf32, f64 and integer operands to PTX
// types but not bf16 ("failed to deduce operand PTX types"), while PTX has
// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 on sm_80 and newer.
// This pass fills that gap before the upstream conversion runs: each
// 32-bit register of the A and B fragments (two bf16, a row of the
// vector<Rx2xbf16> operand) is passed as an i32, C as four f32, and the
// result struct is unpacked into the vector<2x2xf32> nvgpu describes.
// Other mma.sync ops are left to upstream.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/GPU/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLGPUBF16MMATONVVM
#include "dl/Codegen/GPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// The rows of a vector<Rx2xbf16> fragment, each as the i32 holding it.
SmallVector<Value> registersOf(OpBuilder &b, Location loc, Value fragment) {
  // Row by row: the LLVM lowering of vector.bitcast takes 1-D vectors.
  auto type = cast<VectorType>(fragment.getType());
  auto word = VectorType::get({1}, b.getI32Type());
  SmallVector<Value> registers;
  for (int64_t r = 0; r < type.getDimSize(0); ++r) {
    Value row =
        vector::ExtractOp::create(b, loc, fragment, ArrayRef<int64_t>{r});
    Value packed = vector::BitCastOp::create(b, loc, word, row);
    registers.push_back(
        vector::ExtractOp::create(b, loc, packed, ArrayRef<int64_t>{0}));
  }
  return registers;
}

/// The elements of a vector<Rx2xf32> accumulator, row by row.
SmallVector<Value> elementsOf(OpBuilder &b, Location loc, Value fragment) {
  auto type = cast<VectorType>(fragment.getType());
  SmallVector<Value> elements;
  for (int64_t r = 0; r < type.getDimSize(0); ++r)
    for (int64_t e = 0; e < type.getDimSize(1); ++e)
      elements.push_back(vector::ExtractOp::create(b, loc, fragment,
                                                   ArrayRef<int64_t>{r, e}));
  return elements;
}

struct DLGPUBF16MmaToNVVM
    : public dl::impl::DLGPUBF16MmaToNVVMBase<DLGPUBF16MmaToNVVM> {
  void runOnOperation() override {
    SmallVector<nvgpu::MmaSyncOp> mmas;
    getOperation()->walk([&](nvgpu::MmaSyncOp mma) {
      if (mma.getMatrixA().getType().getElementType().isBF16())
        mmas.push_back(mma);
    });
    for (nvgpu::MmaSyncOp mma : mmas) {
      VectorType b16 = mma.getMatrixB().getType();
      VectorType acc = mma.getMatrixC().getType();
      if (!b16.getElementType().isBF16() || !acc.getElementType().isF32()) {
        mma.emitOpError("dl-gpu-bf16-mma-to-nvvm: bf16 mma.sync needs bf16 "
                        "B and an f32 accumulator, but got ")
            << b16 << " and " << acc;
        return signalPassFailure();
      }
      OpBuilder b(mma);
      Location loc = mma.getLoc();
      SmallVector<Value> operandC = elementsOf(b, loc, mma.getMatrixC());
      auto resultType = LLVM::LLVMStructType::getLiteral(
          b.getContext(), SmallVector<Type>(operandC.size(), b.getF32Type()));
      std::array<int64_t, 3> shape = mma.getMmaShapeAsArray();
      SmallVector<Value> operandA = registersOf(b, loc, mma.getMatrixA());
      SmallVector<Value> operandB = registersOf(b, loc, mma.getMatrixB());
      Value result = NVVM::MmaOp::create(
          b, loc, resultType, operandA, operandB, operandC, shape,
          /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
          std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                        NVVM::MMATypes::bf16},
          std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                         NVVM::MMALayout::col});
      SmallVector<Value> elements;
      for (int64_t i = 0, e = operandC.size(); i < e; ++i)
        elements.push_back(LLVM::ExtractValueOp::create(b, loc, result, i));
      mma.replaceAllUsesWith(
          vector::FromElementsOp::create(b, loc, acc, elements).getResult());
      mma.erase();
    }
  }
};

} // namespace
