//===- AffineUtils.h - helpers shared by the dl-affine-* passes -*- C++ -*-===//

#ifndef DL_AFFINEUTILS_H
#define DL_AFFINEUTILS_H

#include "mlir/Dialect/Affine/IR/AffineValueMap.h"
#include "mlir/Analysis/FlatLinearValueConstraints.h"

#include <optional>

namespace mlir::dl {

/// Coefficient of the loop variable `iv` in result `r` of `map` (summed over
/// the operands that are `iv`), if the result is affine.
inline std::optional<int64_t> coefficientOf(affine::AffineValueMap &map,
                                            unsigned r, Value iv) {
  SmallVector<int64_t> flat;
  AffineMap affineMap = map.getAffineMap();
  if (failed(getFlattenedAffineExpr(affineMap.getResult(r),
                                    affineMap.getNumDims(),
                                    affineMap.getNumSymbols(), &flat)))
    return std::nullopt;
  int64_t coefficient = 0;
  for (unsigned operand = 0; operand < map.getNumOperands(); ++operand)
    if (map.getOperand(operand) == iv)
      coefficient += flat[operand];
  return coefficient;
}

} // namespace mlir::dl

#endif // DL_AFFINEUTILS_H
