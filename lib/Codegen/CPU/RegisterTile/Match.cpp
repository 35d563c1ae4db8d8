//===- Match.cpp - which affine nests the micro-kernel takes --------------===//
//
// The contract of dl-affine-register-tile (see its Passes.td description):
// one output written at an address naming every non-reduction loop, read
// once at the same address (the accumulator), inputs invariant in or
// contiguous along the innermost output loop (or read transposed, then only
// through a packed copy), elementwise arithmetic, and an output no input
// may alias. Legality is structural: the only write is to the output, so
// the output loops are parallel and the reductions can move inside them.
//
//===----------------------------------------------------------------------===//

#include "RegisterTileImpl.h"

#include "dl/Support/TypeSize.h"
#include "dl/Codegen/CPU/AffineUtils.h"

#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineValueMap.h"
#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::dl::register_tile;

namespace {

/// The bytes [first, last) a memref.view at a constant shift covers in its
/// source (dl-plan-memory places temporaries so in one arena).
std::optional<std::pair<int64_t, int64_t>> viewBytes(memref::ViewOp view) {
  APInt shift;
  MemRefType type = view.getType();
  if (!matchPattern(view.getByteShift(), m_ConstantInt(&shift)) ||
      !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  std::optional<int64_t> bytes = mlir::dl::staticByteSize(type);
  int64_t first = shift.getSExtValue(), last;
  if (!bytes || llvm::AddOverflow(first, *bytes, last))
    return std::nullopt;
  return std::make_pair(first, last);
}

/// The memref.view of the root buffer that `memref` is (a view of), if any.
memref::ViewOp arenaView(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (auto view = dyn_cast<memref::ViewOp>(def))
      return view;
    auto viewLike = dyn_cast<ViewLikeOpInterface>(def);
    if (!viewLike)
      break;
    memref = viewLike.getViewSource();
  }
  return {};
}

} // namespace

/// The memref a view chain starts from.
Value mlir::dl::register_tile::rootMemRef(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

/// Whether `a` and `b` may share memory: views of one buffer do unless they
/// lie within memref.views of the same source at disjoint constant byte
/// ranges (dl-plan-memory's arena).
bool mlir::dl::register_tile::mayAlias(Value a, Value b) {
  if (rootMemRef(a) != rootMemRef(b))
    return false;
  memref::ViewOp viewA = arenaView(a), viewB = arenaView(b);
  if (!viewA || !viewB || viewA == viewB || viewA.getSource() != viewB.getSource())
    return true;
  auto bytesA = viewBytes(viewA), bytesB = viewBytes(viewB);
  return !bytesA || !bytesB ||
         (bytesA->first < bytesB->second && bytesB->first < bytesA->second);
}

std::optional<Accumulation>
mlir::dl::register_tile::matchAccumulation(AffineForOp root,
                                          int64_t lanesFor32Bits) {
  Accumulation acc;
  affine::getPerfectlyNestedLoops(acc.nest, root);
  if (acc.nest.size() < 2)
    return std::nullopt;
  DenseSet<Value> ivs;
  for (AffineForOp loop : acc.nest) {
    if (!loop.hasConstantLowerBound() || loop.getConstantLowerBound() != 0 ||
        loop.getStepAsInt() != 1 || loop.getNumIterOperands() != 0 ||
        loop.getUpperBoundMap().getNumResults() != 1)
      return std::nullopt;
    ivs.insert(loop.getInductionVar());
  }
  if (!dl::hasRectangularBounds(acc.nest))
    return std::nullopt;

  // The body: loads, one store, elementwise arithmetic.
  Block *body = acc.nest.back().getBody();
  for (Operation &op : body->without_terminator()) {
    if (auto store = dyn_cast<affine::AffineStoreOp>(op)) {
      if (acc.store)
        return std::nullopt;
      acc.store = store;
    } else if (auto load = dyn_cast<affine::AffineLoadOp>(op)) {
      acc.loads[load.getOperation()] = Along::Invariant;
    } else if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op) ||
               (op.getNumOperands() > 0 &&
                !op.hasTrait<OpTrait::Elementwise>()) ||
               llvm::any_of(op.getResultTypes(), [](Type t) {
                 return !t.isIntOrFloat();
               })) {
      return std::nullopt;
    }
  }
  if (!acc.store)
    return std::nullopt;
  Value output = acc.store.getMemRef();
  if (!isFreshBuffer(rootMemRef(output)) ||
      !cast<MemRefType>(output.getType()).isLastDimUnitStride())
    return std::nullopt; // the accumulators are vector loads and stores
  Type element = acc.store.getValueToStore().getType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() > 64)
    return std::nullopt;

  affine::MemRefAccess storeAccess(acc.store);
  for (auto &entry : acc.loads) {
    auto load = cast<affine::AffineLoadOp>(entry.first);
    if (mayAlias(load.getMemRef(), output)) {
      if (load.getMemRef() != output || acc.accumulator ||
          affine::MemRefAccess(load) != storeAccess)
        return std::nullopt;
      acc.accumulator = load;
    }
  }
  if (!acc.accumulator)
    return std::nullopt;
  acc.loads.erase(acc.accumulator.getOperation());

  // Output indices: distinct loop variables of the nest, each maybe plus a
  // constant (a slice of a larger buffer: a convolution writing its
  // channels into a concatenation, dl-linalg-to-affine-loops having folded
  // the subview into the indices).
  affine::AffineValueMap storeMap;
  storeAccess.getAccessMap(&storeMap);
  SmallVector<AffineForOp> outputLoops; // in index order
  for (unsigned r = 0; r < storeMap.getNumResults(); ++r) {
    AffineExpr index = storeMap.getResult(r);
    if (auto sum = dyn_cast<AffineBinaryOpExpr>(index);
        sum && sum.getKind() == AffineExprKind::Add &&
        isa<AffineConstantExpr>(sum.getRHS()))
      index = sum.getLHS();
    auto dim = dyn_cast<AffineDimExpr>(index);
    if (!dim)
      return std::nullopt;
    Value iv = storeMap.getOperand(dim.getPosition());
    AffineForOp loop = affine::getForInductionVarOwner(iv);
    if (!loop || !ivs.contains(iv) || llvm::is_contained(outputLoops, loop))
      return std::nullopt;
    outputLoops.push_back(loop);
  }
  if (outputLoops.empty())
    return std::nullopt;
  acc.columnLoop = outputLoops.back();
  acc.outputLoops = outputLoops;

  std::optional<uint64_t> columns = affine::getConstantTripCount(acc.columnLoop);
  int64_t lanes = lanesFor32Bits * 32 / element.getIntOrFloatBitWidth();
  if (!columns || static_cast<int64_t>(*columns) < lanes)
    return std::nullopt;

  // Inputs: invariant in or contiguous along the column loop; at most one
  // walks it along its second-to-last index (transposed, packed later).
  Value columnIv = acc.columnLoop.getInductionVar();
  unsigned transposed = 0;
  for (auto &entry : acc.loads) {
    affine::MemRefAccess access(entry.first);
    affine::AffineValueMap map;
    access.getAccessMap(&map);
    unsigned last = map.getNumResults() - 1;
    entry.second = Along::Invariant;
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      if (!map.isFunctionOf(r, columnIv))
        continue;
      if (dl::coefficientOf(map, r, columnIv) != 1 ||
          entry.second != Along::Invariant)
        return std::nullopt;
      if (r == last) {
        // read by vector loads: its columns must be adjacent in memory (a
        // view of every 8th element is not; found by the importer fuzzer:
        // `x[..., -1]` of a transposed matmul operand)
        if (!cast<MemRefType>(access.memref.getType()).isLastDimUnitStride())
          return std::nullopt;
        entry.second = Along::Contiguous;
      }
      else if (r + 1 == last && last > 0)
        entry.second = Along::Transposed;
      else
        return std::nullopt;
    }
    transposed += entry.second == Along::Transposed;
  }
  if (transposed > 1)
    return std::nullopt;

  // Rows: the innermost other output loop; reductions: loops not indexing
  // the output.
  for (AffineForOp loop : acc.nest) {
    if (!llvm::is_contained(outputLoops, loop))
      acc.reductions.push_back(loop);
    else if (loop != acc.columnLoop)
      acc.rowLoop = loop;
  }
  if (acc.reductions.empty())
    return std::nullopt; // nothing to keep in registers across iterations
  unsigned first = acc.nest.size() - 1;
  for (auto [index, loop] : llvm::enumerate(acc.nest))
    if (loop == acc.rowLoop || loop == acc.columnLoop ||
        llvm::is_contained(acc.reductions, loop))
      first = std::min<unsigned>(first, index);
  acc.firstMoved = first;
  for (unsigned index = first; index < acc.nest.size(); ++index) {
    AffineForOp loop = acc.nest[index];
    if (loop != acc.rowLoop && loop != acc.columnLoop &&
        !llvm::is_contained(acc.reductions, loop))
      acc.outerParallel.push_back(loop);
  }
  return acc;
}

Operation *mlir::dl::register_tile::packCandidate(Accumulation &acc,
                                                AffineForOp reduction) {
  DenseSet<Value> rebuilt;
  for (unsigned i = acc.firstMoved; i < acc.nest.size(); ++i)
    rebuilt.insert(acc.nest[i].getInductionVar());
  for (auto &entry : acc.loads) {
    if (entry.second == Along::Invariant)
      continue;
    bool transposed = entry.second == Along::Transposed;
    affine::MemRefAccess access(entry.first);
    affine::AffineValueMap map;
    access.getAccessMap(&map);
    unsigned rank = map.getNumResults();
    auto isLoop = [&](unsigned r, AffineForOp loop) {
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
      return dim && map.getOperand(dim.getPosition()) == loop.getInductionVar();
    };
    if (rank < 2 ||
        !isLoop(transposed ? rank - 2 : rank - 1, acc.columnLoop) ||
        !isLoop(transposed ? rank - 1 : rank - 2, reduction))
      continue;
    bool invariant = true;
    for (unsigned r = 0; r + 2 < rank; ++r)
      for (unsigned operand = 0; operand < map.getNumOperands(); ++operand)
        if (map.isFunctionOf(r, map.getOperand(operand)) &&
            rebuilt.contains(map.getOperand(operand)))
          invariant = false;
    if (invariant)
      return entry.first;
  }
  return nullptr;
}
