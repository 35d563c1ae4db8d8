//===- TypeSize.h - Overflow-checked sizes of shaped types ------*- C++ -*-===//
//
// Header-only, so that every level (dialect, graph passes, codegen) can ask
// without linking the dl dialect. Upstream's getNumElements and strided-layout
// helpers assert on overflow; dlc's passes ask this first and leave a type it
// refuses alone (dl ops and dl-check-sizes refuse such types with an error).
//
//===----------------------------------------------------------------------===//
#ifndef DL_SUPPORT_TYPESIZE_H
#define DL_SUPPORT_TYPESIZE_H

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <optional>

namespace mlir::dl {

/// The number of bytes the static dimensions of `type` span (a dynamic
/// dimension counts as 1; sub-byte elements round up to a byte; index and
/// other non-numeric elements count 8 bytes), or nullopt where the element
/// count or the byte size does not fit in int64_t. Code may multiply the
/// sizes of any type this accepts without overflow checks.
inline std::optional<int64_t> staticByteSize(ShapedType type) {
  if (!type.hasRank())
    return std::nullopt;
  int64_t count = 1;
  for (int64_t dim : type.getShape())
    if (!ShapedType::isDynamic(dim) && llvm::MulOverflow(count, dim, count))
      return std::nullopt;
  Type element = type.getElementType();
  int64_t bytes = 8;
  if (element.isIntOrFloat())
    bytes = std::max<int64_t>(1, (element.getIntOrFloatBitWidth() + 7) / 8);
  else if (auto shaped = dyn_cast<ShapedType>(element)) {
    std::optional<int64_t> inner = staticByteSize(shaped);
    if (!inner)
      return std::nullopt;
    bytes = *inner;
  }
  int64_t total;
  if (llvm::MulOverflow(count, bytes, total))
    return std::nullopt;
  return total;
}

/// staticByteSize for any type: true where it is not a ranked shaped type or
/// its size fits.
inline bool sizeFits(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return !shaped || !shaped.hasRank() || staticByteSize(shaped).has_value();
}

} // namespace mlir::dl

#endif // DL_SUPPORT_TYPESIZE_H
