//===- AffineUtils.cpp - helpers shared by the dl-affine-* passes ---------===//

#include "dl/Codegen/CPU/AffineUtils.h"
#include "dl/Support/TypeSize.h"

#include "mlir/Dialect/Affine/Analysis/Utils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <map>
#include <vector>

using namespace mlir;
using affine::AffineForOp;

LogicalResult mlir::dl::normalizeAffineLoops(Operation *root) {
  bool invalid = false;
  // Types whose size overflows 64 bits (dl-check-sizes refuses them in the
  // pipelines; a pass run alone meets them too): upstream's strided-layout
  // helpers assert on them.
  auto refuseOversized = [&](Operation *op, Type type, const Twine &where) {
    if (dl::sizeFits(type))
      return;
    op->emitError() << where << " has type " << type
                    << ", whose size in elements or bytes does not fit in 64 "
                       "bits";
    invalid = true;
  };
  root->walk([&](Operation *op) {
    for (auto [index, type] : llvm::enumerate(op->getResultTypes()))
      refuseOversized(op, type,
                      "'" + op->getName().getStringRef() + "' result #" +
                          Twine(index));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          refuseOversized(op, argument.getType(),
                          "block argument #" + Twine(argument.getArgNumber()));
  });
  if (invalid)
    return failure();
  root->walk([&](Operation *op) {
    if (auto loop = dyn_cast<AffineForOp>(op)) {
      if (loop.getStepAsInt() < 1) {
        loop.emitError() << "affine.for has step " << loop.getStepAsInt()
                         << "; a loop's step must be positive";
        invalid = true;
      }
    } else if (auto parallel = dyn_cast<affine::AffineParallelOp>(op)) {
      for (int64_t step : parallel.getSteps())
        if (step < 1) {
          parallel.emitError() << "affine.parallel has step " << step
                               << "; a loop's step must be positive";
          invalid = true;
        }
    }
    // A floordiv, ceildiv or mod by zero or a negative constant: the parser
    // accepts it, but it does not flatten (the dependence and stride
    // analyses fail or index an empty flattened form) and upstream's
    // lowering refuses it only after a partial rewrite.
    for (NamedAttribute attribute : op->getAttrs()) {
      auto mapAttr = dyn_cast<AffineMapAttr>(attribute.getValue());
      if (!mapAttr)
        continue;
      for (AffineExpr result : mapAttr.getValue().getResults())
        result.walk([&](AffineExpr e) {
          auto binary = dyn_cast<AffineBinaryOpExpr>(e);
          if (!binary || (binary.getKind() != AffineExprKind::FloorDiv &&
                          binary.getKind() != AffineExprKind::CeilDiv &&
                          binary.getKind() != AffineExprKind::Mod))
            return;
          auto divisor = dyn_cast<AffineConstantExpr>(binary.getRHS());
          if (divisor && divisor.getValue() <= 0) {
            std::string expr;
            llvm::raw_string_ostream(expr) << e;
            op->emitError() << "'" << op->getName().getStringRef() << "' "
                            << attribute.getName().getValue() << " "
                            << mapAttr << " has `" << expr
                            << "`; a floordiv, ceildiv or mod must be by a "
                               "positive constant";
            invalid = true;
          }
        });
    }
  });
  if (invalid)
    return failure();
  // Post-order: an inner loop of no iteration goes first; a loop of no
  // iteration around it then goes with everything inside.
  SmallVector<AffineForOp> empty;
  root->walk([&](AffineForOp loop) {
    if (loop.hasConstantBounds() &&
        loop.getConstantUpperBound() <= loop.getConstantLowerBound())
      empty.push_back(loop);
  });
  for (AffineForOp loop : empty) {
    loop.replaceAllUsesWith(loop.getInits());
    loop.erase();
  }
  return success();
}

namespace {

/// The memory a memref value refers to: the value it is ultimately a view of,
/// and, for a `memref.view` with a constant shift and a static shape, the
/// byte range it covers there.
struct Extent {
  Value root;
  std::optional<int64_t> begin, end;
};

Value rootOf(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

Extent extentOf(Value memref) {
  // Views that stay within their source's memory (a reshape, a cast, an
  // in-bounds subview, a transpose): the source's extent bounds theirs.
  while (Operation *def = memref.getDefiningOp()) {
    if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp, memref::CastOp,
             memref::SubViewOp, memref::TransposeOp>(def))
      break;
    memref = def->getOperand(0);
  }
  auto view = memref.getDefiningOp<memref::ViewOp>();
  if (!view)
    return {rootOf(memref), std::nullopt, std::nullopt};
  Extent extent{rootOf(view.getSource()), std::nullopt, std::nullopt};
  auto type = cast<MemRefType>(view.getType());
  APInt shift;
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat() ||
      !matchPattern(view.getByteShift(), m_ConstantInt(&shift)) ||
      view.getSource().getDefiningOp<ViewLikeOpInterface>())
    return extent;
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  if (bits % 8 != 0)
    return extent;
  extent.begin = shift.getSExtValue();
  extent.end = *extent.begin + type.getNumElements() * (bits / 8);
  return extent;
}

} // namespace

bool mlir::dl::mayShareMemory(Value a, Value b) {
  if (a == b)
    return true;
  Extent x = extentOf(a), y = extentOf(b);
  if (x.root != y.root) {
    if (isFreshBuffer(x.root) || isFreshBuffer(y.root))
      return false;
    auto gx = x.root.getDefiningOp<memref::GetGlobalOp>();
    auto gy = y.root.getDefiningOp<memref::GetGlobalOp>();
    if (gx && gy)
      return gx.getName() == gy.getName();
    if (gx || gy)
      return false; // a global is no argument's or allocation's memory
    return true;    // e.g. two function arguments: the caller may pass one twice
  }
  if (x.begin && y.begin)
    return *x.begin < *y.end && *y.begin < *x.end;
  return true;
}

std::optional<int64_t>
mlir::dl::elementStride(const affine::MemRefAccess &access,
                        affine::AffineValueMap &map, Value iv) {
  auto memrefType = dyn_cast<MemRefType>(access.memref.getType());
  if (!memrefType || !dl::staticByteSize(memrefType))
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memrefType.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  int64_t total = 0;
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    if (!map.isFunctionOf(r, iv))
      continue;
    std::optional<int64_t> coefficient = dl::coefficientOf(map, r, iv);
    if (!coefficient)
      return std::nullopt;
    total += *coefficient * strides[r];
  }
  return total;
}

int64_t mlir::dl::busiestThreadIterations(int64_t trip, int64_t tile,
                                          int64_t threads) {
  int64_t tiles = (trip + tile - 1) / tile;
  int64_t chunks = std::max<int64_t>(1, std::min(threads, tiles));
  return std::min(trip, (tiles + chunks - 1) / chunks * tile);
}

bool mlir::dl::hasAnalyzableConstants(Operation *nest) {
  constexpr int64_t kLimit = int64_t(1) << 32;
  auto small = [&](AffineMap map) {
    bool ok = true;
    for (AffineExpr result : map.getResults())
      result.walk([&](AffineExpr e) {
        if (auto constant = dyn_cast<AffineConstantExpr>(e))
          ok &= constant.getValue() > -kLimit && constant.getValue() < kLimit;
        // A floordiv, ceildiv or mod by anything but a positive constant
        // does not flatten (getFlattenedAffineExpr fails; the parser
        // accepts `floordiv 0` and `mod -3`), and the dependence and stride
        // analyses index the flattened form.
        if (auto binary = dyn_cast<AffineBinaryOpExpr>(e))
          if (binary.getKind() == AffineExprKind::FloorDiv ||
              binary.getKind() == AffineExprKind::CeilDiv ||
              binary.getKind() == AffineExprKind::Mod) {
            auto divisor = dyn_cast<AffineConstantExpr>(binary.getRHS());
            ok &= divisor && divisor.getValue() > 0;
          }
      });
    return ok;
  };
  WalkResult walked = nest->walk([&](Operation *op) {
    if (auto loop = dyn_cast<AffineForOp>(op))
      if (loop.getStepAsInt() < 1 || loop.getStepAsInt() >= kLimit ||
          !small(loop.getLowerBoundMap()) ||
          !small(loop.getUpperBoundMap()))
        return WalkResult::interrupt();
    for (NamedAttribute attribute : op->getAttrs())
      if (auto map = dyn_cast<AffineMapAttr>(attribute.getValue()))
        if (!small(map.getValue()))
          return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !walked.wasInterrupted();
}

SmallVector<AffineForOp> mlir::dl::outermostAffineLoops(Operation *root) {
  SmallVector<AffineForOp> loops;
  root->walk<WalkOrder::PreOrder>([&](AffineForOp loop) {
    if (hasAnalyzableConstants(loop))
      loops.push_back(loop);
    return WalkResult::skip(); // its inner loops belong to its nest
  });
  return loops;
}

bool mlir::dl::hasRectangularBounds(ArrayRef<AffineForOp> nest) {
  DenseSet<Value> ivs;
  for (AffineForOp loop : nest)
    ivs.insert(loop.getInductionVar());
  for (AffineForOp loop : nest)
    for (Value operand : llvm::concat<Value>(loop.getLowerBoundOperands(),
                                             loop.getUpperBoundOperands()))
      if (ivs.contains(operand))
        return false;
  return true;
}

namespace {

/// A sum of memref indices weighted by `weights` as a linear function of the
/// access's operands: `coefficients` per operand, `constant`, and `extent`,
/// how far above its value the elements a vector access touches reach.
struct WeightedIndex {
  llvm::SmallDenseMap<Value, int64_t, 8> coefficients;
  int64_t constant = 0;
  int64_t extent = 0;
};

/// An access of forEachDependence, with what decides its dependences: its
/// block (its iteration domain), whether it writes, and its access function
/// split into a class (memref, operands, coefficients) and constant offsets.
struct Access {
  Operation *op;
  affine::MemRefAccess access;
  bool writes;
  int64_t cls = -1; // -1: not purely affine (mod, div): never shared
  SmallVector<int64_t> offsets;
  affine::AffineValueMap map;        // the access function, composed
  SmallVector<AffineForOp> loops;    // the affine.for ops around it, outermost
                                     // first (empty: another loop kind is)
  // weightedIndex(first, last), computed on first use (index first * rank +
  // last; the outer optional: not computed yet).
  mutable std::vector<std::optional<std::optional<WeightedIndex>>>
      weighted;
};

/// The affine.for ops around `op`, outermost first, up to its affine scope;
/// empty when a loop of another kind (affine.parallel, scf) is among them.
SmallVector<AffineForOp> enclosingForLoops(Operation *op) {
  SmallVector<AffineForOp> loops;
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (auto loop = dyn_cast<AffineForOp>(parent)) {
      loops.push_back(loop);
      continue;
    }
    if (isa<affine::AffineIfOp>(parent))
      continue;
    if (isa<LoopLikeOpInterface>(parent))
      return {};
    break; // the scope (a function): no loop around it
  }
  std::reverse(loops.begin(), loops.end());
  return loops;
}

Access describe(Operation *op,
                std::map<std::vector<intptr_t>, int64_t> &classes) {
  Access result{op, affine::MemRefAccess(op),
                isa<affine::AffineWriteOpInterface>(op), -1, {}, {}, {}};
  affine::AffineValueMap &map = result.map;
  result.access.getAccessMap(&map);
  result.loops = enclosingForLoops(op);
  AffineMap affineMap = map.getAffineMap();
  std::vector<intptr_t> key;
  key.push_back(reinterpret_cast<intptr_t>(result.access.memref.getAsOpaquePointer()));
  key.push_back(reinterpret_cast<intptr_t>(op->getBlock()));
  for (Value operand : map.getOperands())
    key.push_back(reinterpret_cast<intptr_t>(operand.getAsOpaquePointer()));
  key.push_back(affineMap.getNumDims());
  for (AffineExpr expr : affineMap.getResults()) {
    SmallVector<int64_t> flat;
    if (failed(getFlattenedAffineExpr(expr, affineMap.getNumDims(),
                                      affineMap.getNumSymbols(), &flat)) ||
        flat.size() != affineMap.getNumInputs() + 1)
      return result;
    key.insert(key.end(), flat.begin(), flat.end() - 1);
    result.offsets.push_back(flat.back());
  }
  result.cls = classes.try_emplace(std::move(key), int64_t(classes.size()))
                   .first->second;
  return result;
}

struct Answer {
  affine::DependenceResult result;
  SmallVector<affine::DependenceComponent, 2> components;
};

/// Magnitudes beyond which the interval arithmetic below gives up.
constexpr __int128 kBig = __int128(1) << 62;

/// The weighted sum of the access's indices over dimensions [first, last]
/// with row-major weights of the memref's shape there, or nullopt when it is
/// not linear in the operands (a floor division or remainder that the
/// weighting does not cancel: (p floordiv 7, p mod 7) weighted by (7, 1) is p)
/// or the weights are not static.
std::optional<WeightedIndex> weightedIndex(const Access &access,
                                           unsigned first, unsigned last) {
  auto type = dyn_cast<MemRefType>(access.access.memref.getType());
  AffineMap map = access.map.getAffineMap();
  if (!type || map.getNumResults() != type.getRank() || last >= type.getRank())
    return std::nullopt;
  SmallVector<int64_t> weights(last - first + 1, 1);
  for (int k = int(last) - 1; k >= int(first); --k) {
    int64_t size = type.getDimSize(k + 1);
    if (ShapedType::isDynamic(size) || size <= 0)
      return std::nullopt;
    __int128 weight = __int128(weights[k + 1 - first]) * size;
    if (weight > kBig)
      return std::nullopt;
    weights[k - first] = static_cast<int64_t>(weight);
  }
  MLIRContext *ctx = map.getContext();
  AffineExpr sum = getAffineConstantExpr(0, ctx);
  for (unsigned k = first; k <= last; ++k)
    sum = sum + map.getResult(k) * weights[k - first];
  SmallVector<int64_t> flat;
  if (failed(getFlattenedAffineExpr(sum, map.getNumDims(), map.getNumSymbols(),
                                    &flat)))
    return std::nullopt;
  unsigned inputs = map.getNumInputs();
  for (unsigned i = inputs; i + 1 < flat.size(); ++i)
    if (flat[i] != 0)
      return std::nullopt; // a division the weights do not cancel
  WeightedIndex result;
  for (unsigned i = 0; i < inputs; ++i)
    if (flat[i] != 0)
      result.coefficients[access.map.getOperand(i)] += flat[i];
  result.constant = flat.back();
  // A vector access touches the trailing dimensions' vector shape.
  if (auto vector = dyn_cast<VectorType>(
          isa<affine::AffineReadOpInterface>(access.op)
              ? access.op->getResult(0).getType()
              : access.op->getOperand(0).getType())) {
    unsigned rank = type.getRank();
    if (vector.getRank() > rank || vector.isScalable())
      return std::nullopt;
    __int128 extent = 0;
    for (auto [j, size] : llvm::enumerate(vector.getShape())) {
      unsigned dim = rank - vector.getRank() + j;
      if (dim < first || dim > last)
        continue;
      extent += __int128(size - 1) * weights[dim - first];
    }
    if (extent > kBig)
      return std::nullopt;
    result.extent = static_cast<int64_t>(extent);
  }
  return result;
}

/// Whether `value` is defined in `loop` (its induction variable included).
bool definedInside(Value value, AffineForOp loop) {
  Operation *owner = isa<BlockArgument>(value)
                         ? cast<BlockArgument>(value).getOwner()->getParentOp()
                         : value.getDefiningOp();
  return owner && loop->isAncestor(owner);
}

/// weightedIndex, computed once per access and range.
const std::optional<WeightedIndex> &cachedWeightedIndex(const Access &access,
                                                        unsigned first,
                                                        unsigned last,
                                                        unsigned rank) {
  if (access.weighted.empty())
    access.weighted.resize(rank * rank);
  std::optional<std::optional<WeightedIndex>> &slot =
      access.weighted[first * rank + last];
  if (!slot)
    slot = weightedIndex(access, first, last);
  return *slot;
}

/// [lo, hi] of the induction variable `iv` of a loop inside `loop`, from its
/// constant lower bound and its constant (or min-with-a-constant) upper bound.
std::optional<std::pair<int64_t, int64_t>> ivRange(Value iv, AffineForOp loop) {
  AffineForOp inner = affine::getForInductionVarOwner(iv);
  if (!inner || inner == loop || !loop->isProperAncestor(inner))
    return std::nullopt;
  if (!inner.hasConstantLowerBound())
    return std::nullopt;
  std::optional<int64_t> upper;
  for (AffineExpr result : inner.getUpperBoundMap().getResults())
    if (auto constant = dyn_cast<AffineConstantExpr>(result))
      upper = upper ? std::min(*upper, constant.getValue()) : constant.getValue();
  if (!upper)
    return std::nullopt;
  return std::make_pair(inner.getConstantLowerBound(), *upper - 1);
}

/// Whether `a` and `b` provably touch no common element in two different
/// iterations of `loop` (whatever the loops outside it do, as long as they
/// are in the same iteration): a weighted sum of some of their indices is
/// c * iv + e with the same c, the same terms in everything defined outside
/// `loop`, and e (plus the vector's reach) within fewer than |c| consecutive
/// values for both, so different iterations give different sums. Sound but
/// incomplete: the caller asks the full analysis when it says no.
bool disjointAcrossIterations(const Access &a, const Access &b,
                              AffineForOp loop) {
  Value iv = loop.getInductionVar();
  auto memrefType = dyn_cast<MemRefType>(a.access.memref.getType());
  if (!memrefType)
    return false;
  unsigned rank = memrefType.getRank();
  for (unsigned first = 0; first < rank; ++first) {
    for (unsigned last = first; last < rank; ++last) {
      const std::optional<WeightedIndex> &wa =
          cachedWeightedIndex(a, first, last, rank);
      if (!wa)
        continue;
      const std::optional<WeightedIndex> &wb =
          cachedWeightedIndex(b, first, last, rank);
      if (!wb)
        continue;
      int64_t c = wa->coefficients.lookup(iv);
      if (c == 0 || wb->coefficients.lookup(iv) != c)
        continue;
      bool ok = true;
      __int128 lo[2] = {0, 0}, hi[2] = {0, 0};
      const WeightedIndex *sides[2] = {&*wa, &*wb};
      for (int side = 0; side < 2 && ok; ++side) {
        const WeightedIndex &w = *sides[side];
        const WeightedIndex &other = *sides[1 - side];
        lo[side] = hi[side] = w.constant;
        for (auto [value, coefficient] : w.coefficients) {
          if (value == iv)
            continue;
          if (!definedInside(value, loop)) {
            // Defined outside the loop: the same in both accesses' iterations
            // of interest, so it must weigh the same in both.
            if (other.coefficients.lookup(value) != coefficient) {
              ok = false;
              break;
            }
            continue;
          }
          std::optional<std::pair<int64_t, int64_t>> range = ivRange(value, loop);
          if (!range) {
            ok = false;
            break;
          }
          __int128 x = __int128(coefficient) * range->first;
          __int128 y = __int128(coefficient) * range->second;
          lo[side] += std::min(x, y);
          hi[side] += std::max(x, y);
          if (lo[side] < -kBig || hi[side] > kBig) {
            ok = false;
            break;
          }
        }
        hi[side] += w.extent;
      }
      // (A value defined outside the loop that one side does not use fails
      // the equal-weight check from the side that uses it.)
      if (!ok)
        continue;
      __int128 width = std::max(hi[0], hi[1]) - std::min(lo[0], lo[1]);
      __int128 magnitude = c < 0 ? -__int128(c) : __int128(c);
      if (width < magnitude)
        return true;
    }
  }
  return false;
}

/// The loop at `depth` (1-based) among the loops common to `a` and `b`, or
/// null when they have fewer common affine.for loops (or another loop kind).
AffineForOp loopAtDepth(const Access &a, const Access &b, unsigned depth) {
  if (depth == 0 || a.loops.size() < depth || b.loops.size() < depth)
    return nullptr;
  for (unsigned i = 0; i < depth; ++i)
    if (a.loops[i] != b.loops[i])
      return nullptr;
  return a.loops[depth - 1];
}

} // namespace

bool mlir::dl::forEachDependence(
    ArrayRef<Operation *> accesses, unsigned depth,
    function_ref<bool(Operation *, Operation *, const affine::DependenceResult &,
                      ArrayRef<affine::DependenceComponent>)>
        visit) {
  // Two pairs of accesses whose access functions differ from each other by
  // the same constants, in the same blocks, over the same operands, have the
  // same dependence (the problem is the same but for those constants): a
  // register-tiled micro-kernel's 24 accumulator loads and stores give 77
  // distinct problems instead of 2,300. Each problem is solved once. (At a
  // depth within the pair's common loops, where program order plays no
  // part.)
  std::map<std::vector<intptr_t>, int64_t> classes;
  std::vector<Access> described;
  described.reserve(accesses.size());
  for (Operation *op : accesses)
    described.push_back(describe(op, classes));
  std::map<std::vector<int64_t>, Answer> solved;
  for (const Access &source : described) {
    for (const Access &destination : described) {
      if (!source.writes && !destination.writes)
        continue;
      if (source.access.memref != destination.access.memref)
        continue; // no dependence (what the analysis would say, cheaply)
      std::vector<int64_t> key;
      // Beyond their common loops, the analysis also asks which of the two
      // comes first in the program: not a function of the classes alone.
      bool shared = source.cls >= 0 && destination.cls >= 0 &&
                    depth <= affine::getNumCommonSurroundingLoops(
                                 *source.op, *destination.op);
      if (shared) {
        key = {source.cls, destination.cls, source.writes, destination.writes};
        for (auto [a, b] : llvm::zip(source.offsets, destination.offsets))
          key.push_back(b - a);
        auto found = solved.find(key);
        if (found != solved.end()) {
          if (!visit(source.op, destination.op, found->second.result,
                     found->second.components))
            return false;
          continue;
        }
      }
      // The common case, decided without solving a constraint system: the
      // two touch different elements in different iterations of the loop
      // at `depth` (a tile's rows of the loop's own block).
      if (AffineForOp loop = loopAtDepth(source, destination, depth))
        if (disjointAcrossIterations(source, destination, loop)) {
          Answer none{affine::DependenceResult::NoDependence, {}};
          if (!visit(source.op, destination.op, none.result, none.components))
            return false;
          continue;
        }
      Answer answer{affine::DependenceResult::Failure, {}};
      answer.result = affine::checkMemrefAccessDependence(
          source.access, destination.access, depth, nullptr,
          &answer.components);
      if (!visit(source.op, destination.op, answer.result, answer.components))
        return false;
      if (shared)
        solved.emplace(std::move(key), std::move(answer));
    }
  }
  return true;
}
