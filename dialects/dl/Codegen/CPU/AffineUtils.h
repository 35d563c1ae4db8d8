//===- AffineUtils.h - helpers shared by the dl-affine-* passes -*- C++ -*-===//
//
// What several affine passes ask of a loop nest, written once: the nests of
// a function, whether a nest is rectangular, the dependences between its
// accesses, the coefficient of a loop in an access.
//
//===----------------------------------------------------------------------===//

#ifndef DL_AFFINEUTILS_H
#define DL_AFFINEUTILS_H

#include "mlir/Analysis/FlatLinearValueConstraints.h"
#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/IR/AffineValueMap.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <algorithm>
#include <optional>

namespace mlir::dl {

/// Marks the outermost loop of a transpose dl-affine-transpose-squares
/// rewrote; dl-affine-interchange and dl-affine-tile leave such nests alone.
constexpr llvm::StringLiteral kTransposeSquaresAttr = "dl.transpose_squares";

/// The argument attribute dl-split-function{early} puts on an argument of a
/// part that is a buffer of its own in the caller (a memref.alloc): no other
/// argument, global or allocation shares its memory.
constexpr llvm::StringLiteral kFreshBufferAttr = "dl.fresh_buffer";

/// Whether `root` (the start of a view chain) is a buffer of its own: a
/// memref.alloc or memref.alloca, or an argument marked kFreshBufferAttr.
inline bool isFreshBuffer(Value root) {
  if (Operation *def = root.getDefiningOp())
    return isa<memref::AllocOp, memref::AllocaOp>(def);
  auto argument = cast<BlockArgument>(root);
  Block *block = argument.getOwner();
  auto func = dyn_cast_or_null<FunctionOpInterface>(block->getParentOp());
  return func && block->isEntryBlock() &&
         func.getArgAttr(argument.getArgNumber(), kFreshBufferAttr);
}

/// Whether memrefs `a` and `b` may share bytes (conservative). Views of one
/// root share its memory unless both lie within memref.views of it with a
/// constant shift and a static shape at disjoint byte ranges (dl-plan-memory's
/// arena slots; reshapes, casts, subviews and transposes stay within their
/// source's range). Different roots share nothing when one is a fresh buffer
/// (isFreshBuffer) or both are globals of different names; a global is no
/// argument's memory; two arguments may be one buffer passed twice.
bool mayShareMemory(Value a, Value b);

/// How many elements apart `access`'s addresses (`map`: its access map) are
/// for consecutive values of `iv`, when the memref's strides are static.
std::optional<int64_t> elementStride(const affine::MemRefAccess &access,
                                     affine::AffineValueMap &map, Value iv);

/// The iterations the busiest of `threads` runs when a parallel loop of
/// `trip` iterations is cut into tiles of `tile`: the runtime splits the
/// tiles into min(threads, tiles) contiguous chunks of ceil(tiles / chunks)
/// whole tiles (lib/Runtime/ParallelRuntime.cpp), so the first chunk is the
/// busiest. What dl-affine-tile and dl-affine-register-tile's column blocks
/// minimize when they size the loop the threads share.
int64_t busiestThreadIterations(int64_t trip, int64_t tile, int64_t threads);

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

/// Bytes of one element of `type` for the cache models: an integer's or a
/// float's (at least 1), 8 for `index` and any other type (whose
/// getIntOrFloatBitWidth asserts; dl-opt's fuzzer gave memref<4x8xindex>).
inline int64_t elementBytes(Type type) {
  if (type.isIntOrFloat())
    return std::max<int64_t>(type.getIntOrFloatBitWidth() / 8, 1);
  return 8;
}

/// The contract every dl-affine-* pass starts from, established in one place
/// (each pass calls this first, so a pass run alone is held to it too):
///  - no type in it has a size that overflows 64 bits (upstream's
///    strided-layout helpers assert on them; dl-check-sizes refuses them in
///    the pipelines, this refuses them for a pass run alone);
///  - every affine.for and affine.parallel step is positive. The parser
///    accepts `step 0` and negative steps; trip counts divide by the step
///    (upstream's getConstantTripCount asserts on 0) and a loop of step 0
///    never ends, so such IR is diagnosed at the loop ("must be positive")
///    and the pass fails;
///  - no affine map divides by zero or a negative constant (floordiv,
///    ceildiv, mod): the parser accepts `floordiv 0`, which does not flatten
///    (dl-affine-interchange once indexed the empty flattened form); such IR
///    is diagnosed at the op and the pass fails;
///  - no affine.for with constant bounds runs no iteration (upper bound at or
///    below the lower one: `0 to 0`, `0 to -1`, the loops over a size-0
///    dimension): such a loop is deleted (its results are its initial
///    values), so no pass computes a trip count of 0 or less.
/// Bounds that are not constants, and constants too large to analyze, are
/// left for hasAnalyzableConstants to keep away from the nest passes.
LogicalResult normalizeAffineLoops(Operation *root);

/// Whether every constant of the affine maps in `nest` (loop bounds, access
/// offsets and coefficients) and every step is under 2^32 in magnitude, and
/// every step is positive (the parser accepts `step 0`; trip counts divide
/// by it), and every floordiv, ceildiv and mod is by a positive constant
/// (the parser accepts `floordiv 0`; such an expression does not flatten).
/// Upstream's dependence analysis converts its results back to int64_t with
/// an assertion (computeDirectionVector), which larger constants (a loop
/// from INT64_MIN) trip: dlc's loop passes leave such nests alone.
bool hasAnalyzableConstants(Operation *nest);

/// The outermost affine loops under `root` (no affine loop encloses them;
/// loops in non-affine regions included), in program order: the nests the
/// affine passes work on one by one. Nests that hasAnalyzableConstants
/// refuses are left out.
SmallVector<affine::AffineForOp> outermostAffineLoops(Operation *root);

/// Whether no bound of a loop of `nest` depends on a loop of the nest: its
/// iteration space is a box, so loops can be reordered or moved as they are.
bool hasRectangularBounds(ArrayRef<affine::AffineForOp> nest);

/// Calls `visit(source, destination, result, components)` for each ordered
/// pair of `accesses` (affine loads and stores) of which one writes, with
/// affine dependence analysis's answer at loop depth `depth` (1-based, as
/// affine::checkMemrefAccessDependence counts); stops, returning false, as
/// soon as `visit` returns false. A pair whose touched elements provably
/// differ between iterations of the loop at `depth` (a weighted sum of their
/// indices is c * iv + e, e within fewer than |c| values for both) is
/// NoDependence without a constraint system; upstream's analysis decides
/// the others, once per class of equivalent pairs.
bool forEachDependence(
    ArrayRef<Operation *> accesses, unsigned depth,
    function_ref<bool(Operation *source, Operation *destination,
                      const affine::DependenceResult &result,
                      ArrayRef<affine::DependenceComponent> components)>
        visit);

} // namespace mlir::dl

#endif // DL_AFFINEUTILS_H
