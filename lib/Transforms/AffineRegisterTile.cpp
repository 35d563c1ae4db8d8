//===- AffineRegisterTile.cpp - dl-affine-register-tile -------------------===//
//
// Turns a perfect affine nest that accumulates into one output into a
// register-blocked micro-kernel (see Passes.td for the contract). Ours:
// upstream has the pieces (unroll-and-jam, scalar replacement within an
// iteration, the super-vectorizer) but nothing that keeps an output tile in
// registers across the reduction loops, and that is what makes a matmul or a
// direct convolution compute-bound. For a matmul nest (i, k, j):
//
//   for i0 in 0..M-M%R step R:                 rows of the tile
//     for j0 in 0..N-N%C step C:               columns: C = vectors * lanes
//       acc[r][c] = C[i0+r, j0+16c : +16]       vector loads
//       for k in 0..K iter_args(acc):          reduction loops, order kept
//         b[c] = B[k, j0+16c : +16]            contiguous along j: vectors
//         a[r] = broadcast(A[i0+r, k])         invariant along j: broadcast
//         acc[r][c] = fma(a[r], b[c], acc[r][c])
//       C[i0+r, j0+16c : +16] = acc[r][c]
//   the original nest over columns N-N%C..N, and over rows M-M%R..M
//
// Around the tiles, columns and k are blocked for the cache (column-block,
// reduction-block), and where a block of B is strided (columns blocked) and
// read by more than one row tile it is first copied into a contiguous,
// aligned buffer (packing, as in GotoBLAS/BLIS). A static M smaller than R
// shrinks the tile to M rows.
//
// Each output element receives the same updates in the same order as in the
// original nest (only the multiply-add is fused), so the result is the
// original one up to FMA rounding. Legality is structural: the only write is
// to the output, at an address that names every non-reduction loop, so those
// loops are parallel and the reductions can move inside them.
//
//===----------------------------------------------------------------------===//

#include "dl/CacheModel.h"
#include "dl/AffineUtils.h"
#include "dl/Passes.h"

#include "mlir/Analysis/FlatLinearValueConstraints.h"
#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Affine/IR/AffineValueMap.h"
#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <cmath>
#include <thread>

namespace mlir::dl {
#define GEN_PASS_DEF_DLAFFINEREGISTERTILE
#include "dl/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using affine::AffineForOp;

namespace {

/// How an input load varies along the vectorized loop: not at all, along
/// its last index with unit stride, or along the index before the last
/// (B of a matmul with B transposed: it is only read through its packed,
/// contiguous copy).
enum class Along { Invariant, Contiguous, Transposed };

/// A nest that matches the micro-kernel contract.
struct Accumulation {
  SmallVector<AffineForOp> nest;
  affine::AffineStoreOp store;
  affine::AffineLoadOp accumulator;
  AffineForOp rowLoop;     // unrolled; null when the output has one dimension
  AffineForOp columnLoop;  // vectorized: indexes the output's last dimension
  SmallVector<AffineForOp> reductions; // output invariant in them
  SmallVector<AffineForOp> outerParallel; // other output loops, moved outside
  unsigned firstMoved;     // nest[firstMoved...] is rebuilt
  DenseMap<Operation *, Along> loads;
};

/// The memref a view chain starts from.
Value rootMemRef(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

/// The bytes [first, last) a memref.view at a constant shift covers in its
/// source (dl-plan-memory places temporaries so in one arena).
std::optional<std::pair<int64_t, int64_t>> viewBytes(memref::ViewOp view) {
  APInt shift;
  MemRefType type = view.getType();
  if (!matchPattern(view.getByteShift(), m_ConstantInt(&shift)) ||
      !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t first = shift.getSExtValue();
  return std::make_pair(first, first + type.getNumElements() *
                                           type.getElementTypeBitWidth() / 8);
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

/// Whether `a` and `b` may share memory: views of one buffer do unless they
/// lie within memref.views of the same source at disjoint constant byte
/// ranges (dl-plan-memory's arena).
bool mayAlias(Value a, Value b) {
  if (rootMemRef(a) != rootMemRef(b))
    return false;
  memref::ViewOp viewA = arenaView(a), viewB = arenaView(b);
  if (!viewA || !viewB || viewA == viewB || viewA.getSource() != viewB.getSource())
    return true;
  auto bytesA = viewBytes(viewA), bytesB = viewBytes(viewB);
  return !bytesA || !bytesB ||
         (bytesA->first < bytesB->second && bytesB->first < bytesA->second);
}

std::optional<Accumulation> match(AffineForOp root, int64_t lanesFor32Bits) {
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
  for (AffineForOp loop : acc.nest)
    for (Value operand : loop.getUpperBoundOperands())
      if (ivs.contains(operand))
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
  if (!rootMemRef(output).getDefiningOp<memref::AllocOp>())
    return std::nullopt;
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

  // Output indices: distinct loop variables of the nest.
  affine::AffineValueMap storeMap;
  storeAccess.getAccessMap(&storeMap);
  SmallVector<AffineForOp> outputLoops; // in index order
  for (unsigned r = 0; r < storeMap.getNumResults(); ++r) {
    auto dim = dyn_cast<AffineDimExpr>(storeMap.getResult(r));
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
      if (r == last)
        entry.second = Along::Contiguous;
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

/// `map` (one result) rounded down to a multiple of `factor`.
AffineMap roundedDown(AffineMap map, int64_t factor) {
  AffineExpr e = map.getResult(0);
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(),
                        e.floorDiv(factor) * factor, map.getContext());
}

Value broadcastTo(OpBuilder &b, Location loc, Value value, VectorType type) {
  if (isa<VectorType>(value.getType()))
    return value;
  return vector::BroadcastOp::create(b, loc, type, value);
}

/// The vector of `lanes` like `shape` with the element type of `value`.
VectorType vectorOf(Value value, VectorType shape) {
  return VectorType::get(shape.getShape(), getElementTypeOrSelf(value));
}

/// The input copied into a contiguous buffer per cache block: element
/// [k, j] of the block is buffer[k - reductionBase, j - columnBase].
struct Packing {
  Operation *load = nullptr;
  Value buffer;
  Value reductionIv;    // the blocked reduction loop's new induction variable
  Value reductionBase;  // null: 0
  Value columnBase;     // null: 0
};

/// `index - base` (base null: index).
Value minus(OpBuilder &b, Location loc, Value index, Value base) {
  if (!base)
    return index;
  MLIRContext *ctx = b.getContext();
  AffineMap map = AffineMap::get(2, 0, getAffineDimExpr(0, ctx) - getAffineDimExpr(1, ctx));
  return affine::AffineApplyOp::create(b, loc, map, ValueRange{index, base});
}

/// Clones the original body into the micro-kernel for output row `row` and
/// vector column `column`, with loads turned into vector loads or broadcasts;
/// returns the new accumulator value.
Value cloneBody(OpBuilder &b, Accumulation &acc, IRMapping mapping,
                Value rowIndex, Value columnIndex, Value accumulator,
                VectorType vectorType, const Packing &packing) {
  Location loc = acc.store.getLoc();
  if (acc.rowLoop)
    mapping.map(acc.rowLoop.getInductionVar(), rowIndex);
  mapping.map(acc.columnLoop.getInductionVar(), columnIndex);
  mapping.map(acc.accumulator.getResult(), accumulator);
  for (Operation &op : acc.nest.back().getBody()->without_terminator()) {
    if (&op == acc.store.getOperation() || &op == acc.accumulator.getOperation())
      continue;
    if (auto load = dyn_cast<affine::AffineLoadOp>(op)) {
      SmallVector<Value> operands;
      for (Value operand : load.getMapOperands())
        operands.push_back(mapping.lookupOrDefault(operand));
      Value loaded;
      if (load.getOperation() == packing.load) {
        Value k = minus(b, loc, packing.reductionIv, packing.reductionBase);
        Value j = minus(b, loc, columnIndex, packing.columnBase);
        loaded = affine::AffineVectorLoadOp::create(
            b, loc, VectorType::get(vectorType.getShape(), load.getType()),
            packing.buffer, b.getMultiDimIdentityMap(2), ValueRange{k, j});
      } else if (acc.loads.lookup(load.getOperation()) == Along::Contiguous)
        loaded = affine::AffineVectorLoadOp::create(
            b, loc, VectorType::get(vectorType.getShape(),
                                    load.getType()),
            load.getMemRef(), load.getAffineMap(), operands);
      else
        loaded = affine::AffineLoadOp::create(b, loc, load.getMemRef(),
                                              load.getAffineMap(), operands);
      mapping.map(load.getResult(), loaded);
      continue;
    }
    bool vectorOperands = llvm::any_of(op.getOperands(), [&](Value v) {
      return isa<VectorType>(mapping.lookupOrDefault(v).getType());
    });
    if (!vectorOperands) {
      b.clone(op, mapping);
      continue;
    }
    // Elementwise op on vectors: broadcast scalar operands, vector results.
    IRMapping local = mapping;
    for (Value operand : op.getOperands()) {
      Value mapped = mapping.lookupOrDefault(operand);
      local.map(operand,
                broadcastTo(b, loc, mapped,
                            VectorType::get(vectorType.getShape(),
                                            getElementTypeOrSelf(mapped))));
    }
    Operation *clone = b.clone(op, local);
    for (OpResult result : clone->getResults())
      result.setType(VectorType::get(vectorType.getShape(), result.getType()));
    for (auto [old, fresh] : llvm::zip(op.getResults(), clone->getResults()))
      mapping.map(old, fresh);
  }
  Value stored = mapping.lookupOrDefault(acc.store.getValueToStore());
  return broadcastTo(b, loc, stored, vectorType);
}

/// The input worth packing: contiguous along the column loop, indexed
/// [..., reduction, column] by exactly the blocked reduction loop and the
/// column loop (or [..., column, reduction] when transposed), its other
/// indices invariant in the rebuilt loops.
Operation *packCandidate(Accumulation &acc, AffineForOp reduction) {
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

/// addf(x, mulf(y, z)) -> fma(y, z, x) on the micro-kernel's vectors.
void fuseMultiplyAdds(Operation *root) {
  SmallVector<arith::AddFOp> adds;
  root->walk([&](arith::AddFOp add) {
    if (isa<VectorType>(add.getType()))
      adds.push_back(add);
  });
  for (arith::AddFOp add : adds) {
    for (unsigned side = 0; side < 2; ++side) {
      auto mul = add->getOperand(side).getDefiningOp<arith::MulFOp>();
      if (!mul || !mul->hasOneUse())
        continue;
      OpBuilder b(add);
      Value fma = vector::FMAOp::create(b, add.getLoc(), mul.getLhs(),
                                        mul.getRhs(), add->getOperand(1 - side));
      add.replaceAllUsesWith(fma);
      add.erase();
      mul.erase();
      break;
    }
  }
}

struct DLAffineRegisterTilePass
    : public dl::impl::DLAffineRegisterTileBase<DLAffineRegisterTilePass> {
  using DLAffineRegisterTileBase::DLAffineRegisterTileBase;

  // Block sizes of the nest being rewritten (options or cache model).
  int64_t colBlock = 0;
  int64_t redBlock = 0;

  void runOnOperation() override {
    if (rows < 1 || vectors < 1 || vectorBits < 32 || vectorBits % 32) {
      getOperation().emitError()
          << "dl-affine-register-tile: rows and vectors must be positive and "
             "vector-bits a multiple of 32, but got rows = "
          << static_cast<int64_t>(rows) << ", vectors = "
          << static_cast<int64_t>(vectors) << ", vector-bits = "
          << static_cast<int64_t>(vectorBits);
      return signalPassFailure();
    }
    SmallVector<AffineForOp> roots;
    getOperation().walk([&](AffineForOp loop) {
      if (!loop->getParentOfType<AffineForOp>())
        roots.push_back(loop);
    });
    for (AffineForOp root : roots)
      if (std::optional<Accumulation> acc = match(root, vectorBits / 32))
        rewrite(*acc);
  }

  void rewrite(Accumulation &acc) {
    // A transposed input is read only through its packed copy: without one
    // (its indices do not allow it) the nest stays as it is.
    Operation *transposedLoad = nullptr;
    for (auto &entry : acc.loads)
      if (entry.second == Along::Transposed)
        transposedLoad = entry.first;
    if (transposedLoad) {
      AffineForOp reduction = acc.reductions.front();
      if (!affine::getConstantTripCount(reduction) ||
          reduction.getStepAsInt() != 1 ||
          packCandidate(acc, reduction) != transposedLoad)
        return;
    }
    AffineForOp subnest = acc.nest[acc.firstMoved];
    Location loc = subnest.getLoc();
    MLIRContext *ctx = subnest.getContext();
    AffineExpr d0 = getAffineDimExpr(0, ctx);
    Type element = acc.store.getValueToStore().getType();
    int64_t lanes = vectorBits / element.getIntOrFloatBitWidth();
    int64_t columnCount = *affine::getConstantTripCount(acc.columnLoop);
    int64_t vectorCount = std::min<int64_t>(vectors, columnCount / lanes);
    int64_t tileColumns = vectorCount * lanes;
    int64_t fullColumns = columnCount - columnCount % tileColumns;
    // Fewer rows than a tile: the tile shrinks to them rather than leaving
    // the whole nest to the remainder loops.
    std::optional<uint64_t> rowCount =
        acc.rowLoop ? affine::getConstantTripCount(acc.rowLoop) : std::nullopt;
    int64_t tileRows = acc.rowLoop ? static_cast<int64_t>(rows) : 1;
    if (rowCount && *rowCount >= 1 && static_cast<int64_t>(*rowCount) < tileRows)
      tileRows = static_cast<int64_t>(*rowCount);
    auto vectorType = VectorType::get({lanes}, element);

    // The cache model (unless the options fix the blocks): a square block
    // of B of L2/8 bytes, so that it stays in L2 beside the streams of A and
    // C, with at most 3/4 of L1 for the micro-panel of B (block rows x tile
    // columns) a row tile reads again for each of its k steps... rounded to
    // the tile. The reduction is blocked only when the panel of B the row
    // tiles share (K x block columns) would take more than a quarter of L2.
    int64_t elementBytes = std::max<int64_t>(element.getIntOrFloatBitWidth() / 8, 1);
    dl::CacheSizes host = dl::hostCacheSizes();
    int64_t l1 = dl::cacheBytes(l1Bytes, host.l1);
    int64_t l2 = dl::cacheBytes(l2Bytes, host.l2);
    int64_t square = static_cast<int64_t>(
        std::sqrt(static_cast<double>(l2) / 8 / elementBytes));
    colBlock = columnBlock > 0
                   ? static_cast<int64_t>(columnBlock)
                   : std::max(tileColumns, square / tileColumns * tileColumns);
    // At least one block of columns per core where the columns allow: the
    // column blocks are what dl-affine-parallelize runs on threads with one
    // fork/join per GEMM (inside them, every reduction block would pay one).
    if (columnBlock <= 0) {
      int64_t cores = threads > 0 ? static_cast<int64_t>(threads)
                                  : std::thread::hardware_concurrency();
      int64_t tiles = fullColumns / tileColumns;
      if (tiles >= 2 && cores >= 2) {
        int64_t blocks = std::min(cores, tiles);
        int64_t perBlock = (tiles + blocks - 1) / blocks * tileColumns;
        colBlock = std::min(colBlock, perBlock);
      }
    }
    redBlock = reductionBlock > 0
                   ? static_cast<int64_t>(reductionBlock)
                   : std::max<int64_t>(
                         16, std::min(square, l1 * 3 / 4 /
                                                  (tileColumns * elementBytes)) /
                                 16 * 16);
    bool forcedReductionBlock = reductionBlock > 0;

    // Cache blocks: columns in blocks of `colBlock`, the outermost
    // reduction loop in blocks of `redBlock`, both outside the row
    // tiles, so that the block of the input indexed by (reduction, column)
    // stays in cache while every row tile of the output uses it. Each output
    // element still receives its updates in the original order.
    AffineForOp blockedReduction = acc.reductions.front();
    std::optional<uint64_t> reductionCount =
        affine::getConstantTripCount(blockedReduction);
    bool blockColumns = fullColumns > colBlock && colBlock % tileColumns == 0;
    int64_t sharedPanel = reductionCount
                              ? static_cast<int64_t>(*reductionCount) *
                                    std::min(fullColumns, colBlock) * elementBytes
                              : 0;
    bool blockReduction = reductionCount && blockedReduction.getStepAsInt() == 1 &&
                          static_cast<int64_t>(*reductionCount) > redBlock &&
                          (forcedReductionBlock || sharedPanel > l2 / 4);
    int64_t columnsPerBlock = blockColumns ? colBlock : fullColumns;
    int64_t reductionPerBlock =
        blockReduction ? redBlock
                       : (reductionCount ? static_cast<int64_t>(*reductionCount) : 0);

    OpBuilder b(subnest);
    IRMapping mapping;
    Packing packing;
    // Packing pays only where a block of the input is not already contiguous
    // (its columns are blocked) and more than one row tile reads it.
    bool reused = acc.rowLoop && (!rowCount || static_cast<int64_t>(*rowCount) >=
                                                   2 * tileRows);
    if (transposedLoad)
      packing.load = transposedLoad;
    else if (pack && blockColumns && reused && reductionCount &&
             blockedReduction.getStepAsInt() == 1)
      packing.load = packCandidate(acc, blockedReduction);
    auto allocatePackBuffer = [&]() {
      packing.buffer = memref::AllocOp::create(
          b, loc,
          MemRefType::get({reductionPerBlock, columnsPerBlock},
                          cast<affine::AffineLoadOp>(packing.load).getType()),
          b.getI64IntegerAttr(64));
    };
    // The buffer is private to a block of columns when columns are blocked
    // (so the column blocks are independent: dl-affine-parallelize can run
    // them on threads), else one for the whole nest.
    if (packing.load && !blockColumns)
      allocatePackBuffer();
    // Other output loops move outside the tile loops, bounds unchanged.
    for (AffineForOp loop : acc.outerParallel) {
      auto moved = AffineForOp::create(b, loc, loop.getLowerBoundOperands(),
                                       loop.getLowerBoundMap(),
                                       loop.getUpperBoundOperands(),
                                       loop.getUpperBoundMap());
      mapping.map(loop.getInductionVar(), moved.getInductionVar());
      b.setInsertionPointToStart(moved.getBody());
    }
    AffineForOp columnBlocks;
    if (blockColumns) {
      columnBlocks = AffineForOp::create(b, loc, 0, fullColumns, colBlock);
      b.setInsertionPointToStart(columnBlocks.getBody());
      packing.columnBase = columnBlocks.getInductionVar();
      if (packing.load)
        allocatePackBuffer(); // freed at the end of the block, below
    }
    if (blockReduction) {
      auto blocks = AffineForOp::create(b, loc, 0, *reductionCount, redBlock);
      b.setInsertionPointToStart(blocks.getBody());
      packing.reductionBase = blocks.getInductionVar();
    }
    if (packing.load)
      emitPackingCopy(b, acc, mapping, packing, blockedReduction,
                      *reductionCount, fullColumns, reductionPerBlock,
                      columnsPerBlock);

    // One row of tiles (tileRows rows from rowBase) across the columns
    // of the block: the column tile loop, the output tile loaded into
    // registers, the reduction loops carrying it, and its store.
    IRMapping blockMapping = mapping;
    auto emitTiles = [&](int64_t tileRows, Value rowBase) {
      IRMapping mapping = blockMapping;
      AffineForOp columnTiles;
      if (blockColumns)
        columnTiles = AffineForOp::create(
            b, loc, packing.columnBase, AffineMap::get(1, 0, d0), packing.columnBase,
            AffineMap::get(1, 0, {d0 + colBlock, getAffineConstantExpr(fullColumns, ctx)},
                           ctx),
            tileColumns);
      else
        columnTiles = AffineForOp::create(b, loc, 0, fullColumns, tileColumns);
      b.setInsertionPointToStart(columnTiles.getBody());

      // Row and column indices of the tile's elements.
      auto plus = [&](Value base, int64_t offset) -> Value {
        AffineMap map = AffineMap::get(1, 0, d0 + offset);
        return affine::AffineApplyOp::create(b, loc, map, ValueRange{base});
      };
      SmallVector<Value> rowIndex, columnIndex;
      for (int64_t r = 0; r < tileRows; ++r)
        rowIndex.push_back(acc.rowLoop ? plus(rowBase, r) : Value());
      for (int64_t c = 0; c < vectorCount; ++c)
        columnIndex.push_back(plus(columnTiles.getInductionVar(), c * lanes));

      // Load the output tile into registers.
      auto outputOperands = [&](int64_t r, int64_t c) {
        IRMapping local = mapping;
        if (acc.rowLoop)
          local.map(acc.rowLoop.getInductionVar(), rowIndex[r]);
        local.map(acc.columnLoop.getInductionVar(), columnIndex[c]);
        SmallVector<Value> operands;
        for (Value operand : acc.store.getMapOperands())
          operands.push_back(local.lookupOrDefault(operand));
        return operands;
      };
      SmallVector<Value> accumulators;
      for (int64_t r = 0; r < tileRows; ++r)
        for (int64_t c = 0; c < vectorCount; ++c)
          accumulators.push_back(affine::AffineVectorLoadOp::create(
              b, loc, vectorType, acc.store.getMemRef(),
              acc.store.getAffineMap(), outputOperands(r, c)));

      // The reduction loops, carrying the tile.
      SmallVector<AffineForOp> reductionLoops;
      ValueRange carried = accumulators;
      for (AffineForOp loop : acc.reductions) {
        AffineForOp moved;
        if (loop == blockedReduction && blockReduction)
          moved = AffineForOp::create(
              b, loc, packing.reductionBase, AffineMap::get(1, 0, d0),
              packing.reductionBase,
              AffineMap::get(1, 0,
                             {d0 + redBlock,
                              getAffineConstantExpr(*reductionCount, ctx)},
                             ctx),
              1, carried);
        else
          moved = AffineForOp::create(
              b, loc, loop.getLowerBoundOperands(), loop.getLowerBoundMap(),
              loop.getUpperBoundOperands(), loop.getUpperBoundMap(),
              loop.getStepAsInt(), carried);
        mapping.map(loop.getInductionVar(), moved.getInductionVar());
        if (loop == blockedReduction)
          packing.reductionIv = moved.getInductionVar();
        if (!reductionLoops.empty())
          affine::AffineYieldOp::create(b, loc, moved.getResults());
        reductionLoops.push_back(moved);
        b.setInsertionPointToStart(moved.getBody());
        carried = moved.getRegionIterArgs();
      }
      SmallVector<Value> updated;
      for (int64_t r = 0; r < tileRows; ++r)
        for (int64_t c = 0; c < vectorCount; ++c)
          updated.push_back(cloneBody(b, acc, mapping, rowIndex[r],
                                      columnIndex[c],
                                      carried[r * vectorCount + c], vectorType,
                                      packing));
      affine::AffineYieldOp::create(b, loc, updated);
      b.setInsertionPointAfter(reductionLoops.front());
      ValueRange results = reductionLoops.front().getResults();
      for (int64_t r = 0; r < tileRows; ++r)
        for (int64_t c = 0; c < vectorCount; ++c)
          affine::AffineVectorStoreOp::create(
              b, loc, results[r * vectorCount + c], acc.store.getMemRef(),
              acc.store.getAffineMap(), outputOperands(r, c));
      fuseMultiplyAdds(columnTiles);
    };

    AffineMap fullRowsMap;
    bool rowRemainderInBlock = false;
    if (acc.rowLoop) {
      fullRowsMap = roundedDown(acc.rowLoop.getUpperBoundMap(), tileRows);
      auto rowTiles = AffineForOp::create(
          b, loc, ValueRange{}, b.getConstantAffineMap(0),
          acc.rowLoop.getUpperBoundOperands(), fullRowsMap, tileRows);
      b.setInsertionPointToStart(rowTiles.getBody());
      emitTiles(tileRows, rowTiles.getInductionVar());
      // Rows left over (a static count): one narrower tile in the same
      // block, reading the same packed buffer, rather than the scalar nest.
      if (rowCount && *rowCount % tileRows != 0) {
        b.setInsertionPointAfter(rowTiles);
        Value base = arith::ConstantIndexOp::create(
            b, loc, static_cast<int64_t>(*rowCount - *rowCount % tileRows));
        emitTiles(static_cast<int64_t>(*rowCount % tileRows), base);
        rowRemainderInBlock = true;
      }
    } else {
      emitTiles(tileRows, Value());
    }

    // Remainders: the original nest over the columns left over, and over the
    // rows left over (tile columns only).
    b.setInsertionPoint(subnest);
    unsigned columnDepth =
        llvm::find(acc.nest, acc.columnLoop) - acc.nest.begin() - acc.firstMoved;
    if (fullColumns < columnCount) {
      auto rest = cast<AffineForOp>(b.clone(*subnest));
      nestedLoop(rest, columnDepth)
          .setLowerBound({}, b.getConstantAffineMap(fullColumns));
    }
    if (acc.rowLoop && !rowRemainderInBlock) {
      std::optional<uint64_t> rowCount = affine::getConstantTripCount(acc.rowLoop);
      if (!rowCount || *rowCount % tileRows != 0) {
        unsigned rowDepth = llvm::find(acc.nest, acc.rowLoop) - acc.nest.begin() -
                            acc.firstMoved;
        auto rest = cast<AffineForOp>(b.clone(*subnest));
        nestedLoop(rest, rowDepth)
            .setLowerBound(acc.rowLoop.getUpperBoundOperands(), fullRowsMap);
        nestedLoop(rest, columnDepth)
            .setUpperBound({}, b.getConstantAffineMap(fullColumns));
      }
    }
    if (packing.buffer && !blockColumns)
      memref::DeallocOp::create(b, loc, packing.buffer);
    if (packing.buffer && blockColumns) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(columnBlocks.getBody()->getTerminator());
      memref::DeallocOp::create(b, loc, packing.buffer);
    }
    subnest.erase();
  }

  /// The copy of the current (reduction, column) block of the packed input
  /// into the buffer, vectorizable along the columns.
  /// Blocks are `reductionPerBlock` x `columnsPerBlock` (the whole extent
  /// along a dimension that is not blocked).
  void emitPackingCopy(OpBuilder &b, Accumulation &acc, IRMapping &mapping,
                       Packing &packing, AffineForOp reduction,
                       int64_t reductionCount, int64_t fullColumns,
                       int64_t reductionPerBlock, int64_t columnsPerBlock) {
    Location loc = packing.load->getLoc();
    MLIRContext *ctx = b.getContext();
    AffineExpr d0 = getAffineDimExpr(0, ctx);
    auto bound = [&](Value base, int64_t block, int64_t extent) {
      // min(block, extent - base) rows/columns of this block.
      SmallVector<Value> operands;
      if (base)
        operands.push_back(base);
      AffineMap map =
          base ? AffineMap::get(1, 0, {getAffineConstantExpr(block, ctx),
                                       getAffineConstantExpr(extent, ctx) - d0},
                                ctx)
               : b.getConstantAffineMap(std::min(block, extent));
      return std::make_pair(operands, map);
    };
    auto [rowOperands, rowMap] =
        bound(packing.reductionBase, reductionPerBlock, reductionCount);
    auto [columnOperands, columnMap] =
        bound(packing.columnBase, columnsPerBlock, fullColumns);
    // Rows outside for a B read along its rows; for a transposed B the
    // columns go outside, so that the reads walk B's rows contiguously and
    // the strided writes stay within the (cache-resident) buffer.
    bool transposed = acc.loads.lookup(packing.load) == Along::Transposed;
    OpBuilder::InsertionGuard guard(b);
    AffineForOp rows, columns;
    if (!transposed) {
      rows = AffineForOp::create(b, loc, ValueRange{}, b.getConstantAffineMap(0),
                                 rowOperands, rowMap);
      b.setInsertionPointToStart(rows.getBody());
      columns = AffineForOp::create(b, loc, ValueRange{},
                                    b.getConstantAffineMap(0), columnOperands,
                                    columnMap);
      b.setInsertionPointToStart(columns.getBody());
    } else {
      columns = AffineForOp::create(b, loc, ValueRange{},
                                    b.getConstantAffineMap(0), columnOperands,
                                    columnMap);
      b.setInsertionPointToStart(columns.getBody());
      rows = AffineForOp::create(b, loc, ValueRange{}, b.getConstantAffineMap(0),
                                 rowOperands, rowMap);
      b.setInsertionPointToStart(rows.getBody());
    }
    auto offset = [&](Value index, Value base) -> Value {
      if (!base)
        return index;
      AffineMap map = AffineMap::get(2, 0, getAffineDimExpr(0, ctx) + getAffineDimExpr(1, ctx));
      return affine::AffineApplyOp::create(b, loc, map, ValueRange{index, base});
    };
    IRMapping local = mapping;
    local.map(reduction.getInductionVar(),
              offset(rows.getInductionVar(), packing.reductionBase));
    local.map(acc.columnLoop.getInductionVar(),
              offset(columns.getInductionVar(), packing.columnBase));
    auto load = cast<affine::AffineLoadOp>(packing.load);
    SmallVector<Value> operands;
    for (Value operand : load.getMapOperands())
      operands.push_back(local.lookupOrDefault(operand));
    Value value = affine::AffineLoadOp::create(b, loc, load.getMemRef(),
                                               load.getAffineMap(), operands);
    affine::AffineStoreOp::create(
        b, loc, value, packing.buffer, b.getMultiDimIdentityMap(2),
        ValueRange{rows.getInductionVar(), columns.getInductionVar()});
  }

  static AffineForOp nestedLoop(AffineForOp root, unsigned depth) {
    AffineForOp loop = root;
    for (unsigned i = 0; i < depth; ++i)
      loop = cast<AffineForOp>(&loop.getBody()->front());
    return loop;
  }
};

} // namespace
