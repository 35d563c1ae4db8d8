//===- DLDialect.cpp - dl dialect registration and type predicates --------===//

#include "dl/IR/DLDialect.h"

#include "dl/IR/DLOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::dl;

#include "dl/IR/DLOpsDialect.cpp.inc"

void DLDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dl/IR/DLOps.cpp.inc"
      >();
  registerAttributes();
}

Operation *DLDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type || !isDLTensor(type))
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

static bool isDLElementType(Type type) {
  return isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(type) ||
         type.isSignlessInteger(1) || type.isSignlessInteger(8) ||
         type.isSignlessInteger(16) || type.isSignlessInteger(32) ||
         type.isSignlessInteger(64) || isDLUnsignedElement(type);
}

bool mlir::dl::isDLUnsignedElement(Type type) {
  return type.isUnsignedInteger(8) || type.isUnsignedInteger(16) ||
         type.isUnsignedInteger(32) || type.isUnsignedInteger(64);
}

bool mlir::dl::isUnsignedTensor(Type type) {
  return isDLUnsignedElement(getElementTypeOrSelf(type));
}

bool mlir::dl::isDLTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getEncoding() ||
      !isDLElementType(tensor.getElementType()))
    return false;
  return true;
}

LogicalResult mlir::dl::verifyTypeSizes(Operation *op) {
  auto check = [&](Type type, StringRef what,
                   unsigned index) -> LogicalResult {
    if (sizeFits(type))
      return success();
    return op->emitOpError() << what << " #" << index << " has type " << type
                             << ", whose size in elements or bytes does not "
                                "fit in 64 bits";
  };
  for (auto [index, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(type, "operand", index)))
      return failure();
  for (auto [index, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(type, "result", index)))
      return failure();
  return success();
}

bool mlir::dl::isDLNumericTensor(Type type) {
  return isDLTensor(type) &&
         !cast<RankedTensorType>(type).getElementType().isInteger(1);
}

bool mlir::dl::isDLFloatTensor(Type type) {
  return isDLTensor(type) &&
         isa<FloatType>(cast<RankedTensorType>(type).getElementType());
}

bool mlir::dl::isDLTensorOfIntegers(Type type, ArrayRef<unsigned> widths) {
  if (!isDLTensor(type))
    return false;
  Type element = cast<RankedTensorType>(type).getElementType();
  return llvm::any_of(widths, [&](unsigned width) {
    return element.isSignlessInteger(width);
  });
}

bool mlir::dl::isDLIntegerTensor(Type type) {
  return isDLTensorOfIntegers(type, {1, 8, 16, 32, 64}) ||
         (isDLTensor(type) &&
          isDLUnsignedElement(cast<RankedTensorType>(type).getElementType()));
}
