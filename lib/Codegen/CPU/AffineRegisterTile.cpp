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

#include "dl/Target/CacheModel.h"
#include "dl/Codegen/CPU/AffineUtils.h"
#include "dl/Codegen/CPU/Passes.h"

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
#include "mlir/IR/IntegerSet.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <cmath>
#include <thread>

namespace mlir::dl {
#define GEN_PASS_DEF_DLAFFINEREGISTERTILE
#include "dl/Codegen/CPU/Passes.h.inc"
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
  SmallVector<AffineForOp> outputLoops; // the loop of each output index
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

/// An elementwise nest right after the accumulation nest that reads its
/// output element by element: D[i, j] = f(C[i, j], bias[j], R[i, j], ...)
/// (bias, activation, residual add). It is computed on the output tile
/// while it is still in registers, after the last reduction step, and
/// stored to D instead of C; only the rows and columns the tiles leave to
/// the scalar remainder nests are left to (copies of) the nest itself.
struct Epilogue {
  AffineForOp root;
  SmallVector<AffineForOp> loops;          // loop d walks index d of C and D
  affine::AffineStoreOp store;             // of D, at [loops...]
  DenseMap<Operation *, Along> loads;      // other inputs (not C)
  DenseSet<Operation *> outputLoads;       // of C, at [loops...]
  SmallVector<Operation *> between;        // pure ops and allocs between them
  Value view;        // what it reads C as: C, or a memref.expand_shape of C
  AffineMap toView;  // C's indices -> the view's (null: the same)
};

/// The map from the indices of an expand_shape's source to those of its
/// result: each source index split over its group, row-major.
AffineMap expansionMap(memref::ExpandShapeOp expand) {
  MLIRContext *ctx = expand.getContext();
  ArrayRef<int64_t> shape = expand.getResultType().getShape();
  SmallVector<AffineExpr> results;
  for (auto [g, group] : llvm::enumerate(expand.getReassociationIndices())) {
    AffineExpr source = getAffineDimExpr(g, ctx);
    for (int64_t k : group) {
      int64_t stride = 1;
      for (int64_t inner : group)
        if (inner > k)
          stride *= shape[inner];
      AffineExpr e = source.floorDiv(stride);
      results.push_back(k == group.front() ? e : e % shape[k]);
    }
  }
  return AffineMap::get(expand.getSrcType().getRank(), 0, results, ctx);
}

/// Whether the access of `op` (affine load or store) is [loops...].
bool indexedBy(Operation *op, ArrayRef<AffineForOp> loops) {
  affine::MemRefAccess access(op);
  affine::AffineValueMap map;
  access.getAccessMap(&map);
  if (map.getNumResults() != loops.size())
    return false;
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
    AffineForOp loop = loops[r];
    if (!dim || map.getOperand(dim.getPosition()) != loop.getInductionVar())
      return false;
  }
  return true;
}

/// The value `size` is equal to, looking through memref.dim of an
/// allocation (to the size it was allocated with) and of the same memref:
/// convert-linalg-to-affine-loops takes each nest's bounds from its own
/// operands.
Value sameSize(Value size) {
  auto dim = size.getDefiningOp<memref::DimOp>();
  std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
  if (!index)
    return size;
  if (auto alloc = dim.getSource().getDefiningOp<memref::AllocOp>()) {
    MemRefType type = alloc.getType();
    if (*index < type.getRank() && type.isDynamicDim(*index))
      return sameSize(alloc.getDynamicSizes()[type.getDynamicDimIndex(*index)]);
  }
  return size;
}

bool sameSizes(ValueRange a, ValueRange b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip(a, b)) {
    if (x == y)
      continue;
    Value sx = sameSize(x), sy = sameSize(y);
    auto dx = sx.getDefiningOp<memref::DimOp>();
    auto dy = sy.getDefiningOp<memref::DimOp>();
    if (sx == sy)
      continue;
    if (!dx || !dy || dx.getSource() != dy.getSource() ||
        dx.getConstantIndex() != dy.getConstantIndex() || !dx.getConstantIndex())
      return false;
  }
  return true;
}

/// Whether two loops starting at 0 with step 1 run the same iterations.
bool sameExtent(AffineForOp a, AffineForOp b) {
  if (!b.hasConstantLowerBound() || b.getConstantLowerBound() != 0 ||
      b.getStepAsInt() != 1 || b.getNumIterOperands() != 0)
    return false;
  std::optional<uint64_t> tripA = affine::getConstantTripCount(a);
  std::optional<uint64_t> tripB = affine::getConstantTripCount(b);
  if (tripA || tripB)
    return tripA == tripB;
  return a.getUpperBoundMap() == b.getUpperBoundMap() &&
         sameSizes(a.getUpperBoundOperands(), b.getUpperBoundOperands());
}

/// The epilogue of `acc`, if the nest that follows it is one and fusing it
/// is legal: it reads C only at [i, j], C has no user after it (its main
/// tiles will never hold the final sums) unless D is C, D does not overlap anything the
/// accumulation reads (D is written while they are still read) and its
/// other inputs neither overlap C nor D (other than D itself at [i, j]).
std::optional<Epilogue> matchEpilogue(Accumulation &acc, std::string &why) {
  AffineForOp root = acc.nest.front();
  Value output = acc.store.getMemRef();
  Epilogue epi;
  Operation *next = root->getNextNode();
  while (next && next->getNumRegions() == 0 &&
         (isMemoryEffectFree(next) || isa<memref::AllocOp>(next))) {
    epi.between.push_back(next);
    next = next->getNextNode();
  }
  epi.root = dyn_cast_or_null<AffineForOp>(next);
  if (!epi.root)
    return std::nullopt;
  // A candidate reads the output; anything else is no epilogue of it.
  bool readsOutput = false;
  epi.root.walk([&](affine::AffineLoadOp load) {
    readsOutput |= mayAlias(load.getMemRef(), output);
  });
  if (!readsOutput)
    return std::nullopt;
  auto refuse = [&](const Twine &reason) -> std::optional<Epilogue> {
    why = reason.str();
    return std::nullopt;
  };
  if (!output.getDefiningOp<memref::AllocOp>() &&
      !output.getDefiningOp<memref::ViewOp>())
    return refuse("the output is not a buffer of its own (a memref.alloc, "
                  "or an arena view)");
  affine::getPerfectlyNestedLoops(epi.loops, epi.root);
  // C itself, or C expanded (an im2col GEMM's [N*OH*OW, F] as [N,OH,OW,F])
  // with the columns left whole and static sizes (its remainder rows, a
  // dynamic count, would not be a box of the view).
  epi.view = output;
  epi.root.walk([&](affine::AffineLoadOp load) {
    if (auto expand = load.getMemRef().getDefiningOp<memref::ExpandShapeOp>())
      if (expand.getSrc() == output)
        epi.view = expand;
  });
  if (epi.view == output) {
    if (epi.loops.size() != acc.outputLoops.size())
      return refuse("its loops are not a perfect nest over the output's "
                    "dimensions");
    for (auto [accLoop, loop] : llvm::zip(acc.outputLoops, epi.loops))
      if (!sameExtent(accLoop, loop))
        return refuse("its loops do not run over the output's dimensions "
                      "(from 0, step 1, in order)");
  } else {
    auto expand = epi.view.getDefiningOp<memref::ExpandShapeOp>();
    MemRefType viewType = expand.getResultType();
    if (!viewType.hasStaticShape() ||
        expand.getReassociationIndices().back().size() != 1 ||
        (acc.rowLoop && !affine::getConstantTripCount(acc.rowLoop)))
      return refuse("it reads the output through an expand_shape that is "
                    "dynamic or splits the columns");
    if (epi.loops.size() != static_cast<size_t>(viewType.getRank()))
      return refuse("its loops are not a perfect nest over the output's "
                    "dimensions");
    for (auto [size, loop] : llvm::zip(viewType.getShape(), epi.loops))
      if (!loop.hasConstantLowerBound() || loop.getConstantLowerBound() != 0 ||
          loop.getStepAsInt() != 1 || loop.getNumIterOperands() != 0 ||
          affine::getConstantTripCount(loop) != static_cast<uint64_t>(size))
        return refuse("its loops do not run over the output's dimensions "
                      "(from 0, step 1, in order)");
    epi.toView = expansionMap(expand);
  }
  DenseSet<Value> ivs;
  for (AffineForOp loop : epi.loops)
    ivs.insert(loop.getInductionVar());
  Value columnIv = epi.loops.back().getInductionVar();
  for (Operation &op : epi.loops.back().getBody()->without_terminator()) {
    if (auto store = dyn_cast<affine::AffineStoreOp>(op)) {
      if (epi.store)
        return refuse("it stores more than once");
      if (!indexedBy(store, epi.loops))
        return refuse("it stores at another index than its loops'");
      epi.store = store;
    } else if (auto load = dyn_cast<affine::AffineLoadOp>(op)) {
      if (load.getMemRef() == epi.view) {
        if (!indexedBy(load, epi.loops))
          return refuse("it reads the output at another index than its "
                        "loops' (an element the tile does not hold)");
        epi.outputLoads.insert(load);
        continue;
      }
      if (mayAlias(load.getMemRef(), output))
        return refuse("it reads a buffer that may overlap the output");
      if (!load.getMemRefType().isLastDimUnitStride())
        return refuse("it reads a buffer with strided columns");
      affine::MemRefAccess access(load);
      affine::AffineValueMap map;
      access.getAccessMap(&map);
      Along along = Along::Invariant;
      for (unsigned r = 0; r < map.getNumResults(); ++r) {
        if (!map.isFunctionOf(r, columnIv))
          continue;
        if (r + 1 != map.getNumResults() ||
            dl::coefficientOf(map, r, columnIv) != 1)
          return refuse("it reads an input neither invariant in nor "
                        "contiguous along the columns");
        along = Along::Contiguous;
      }
      epi.loads[load] = along;
    } else if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op) ||
               (op.getNumOperands() > 0 &&
                !op.hasTrait<OpTrait::Elementwise>()) ||
               llvm::any_of(op.getResultTypes(),
                            [](Type t) { return !t.isIntOrFloat(); })) {
      return refuse("'" + op.getName().getStringRef() +
                    "' is not elementwise arithmetic");
    } else if (llvm::any_of(op.getOperands(),
                            [&](Value v) { return ivs.contains(v); })) {
      return refuse("it uses a loop index as a value");
    }
  }
  if (!epi.store)
    return refuse("it stores nothing");
  Value result = epi.store.getMemRef();
  bool inPlace = result == epi.view;
  if (!epi.store.getMemRefType().isLastDimUnitStride())
    return refuse("it writes a buffer with strided columns");
  if (!inPlace) {
    if (mayAlias(result, output))
      return refuse("its result may overlap the output");
    for (auto &entry : acc.loads)
      if (mayAlias(cast<affine::AffineLoadOp>(entry.first).getMemRef(), result))
        return refuse("its result may overlap an input of the accumulation, "
                      "which the tiles still read while it is written");
  }
  for (auto &entry : epi.loads) {
    auto load = cast<affine::AffineLoadOp>(entry.first);
    if (mayAlias(load.getMemRef(), result) &&
        (load.getMemRef() != result || !indexedBy(load, epi.loops)))
      return refuse("it reads its own result at another element");
  }
  // In place (D is C), C ends up holding D everywhere: later users are fine.
  if (!inPlace) {
    Block *block = root->getBlock();
    for (Value value : {output, epi.view})
      for (Operation *user : value.getUsers()) {
        if (isa<memref::DeallocOp>(user) || user == epi.view.getDefiningOp())
          continue;
        Operation *top = block->findAncestorOpInBlock(*user);
        if (!top ||
            !(top == root || top == epi.root || top->isBeforeInBlock(root)))
          return refuse("the output is used after it (it would keep partial "
                        "sums in the tiles' place)");
      }
  }
  return epi;
}

constexpr llvm::StringLiteral kFusedEpilogue = "dl.fused_epilogue";

/// The ops of the epilogue's computation, by name (the attribute that marks
/// a tile loop as computing it).
ArrayAttr epilogueNames(Epilogue &epi) {
  Builder b(epi.root.getContext());
  SmallVector<Attribute> names;
  for (Operation &op : epi.loops.back().getBody()->without_terminator())
    if (!isa<affine::AffineLoadOp, affine::AffineStoreOp>(op) &&
        op.getNumOperands() > 0)
      names.push_back(b.getStringAttr(op.getName().getStringRef()));
  return b.getArrayAttr(names);
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

/// Clones the elementwise `op` with `mapping`: as it is where all its
/// (mapped) operands are scalars, else on vectors shaped like `shape`, scalar
/// operands broadcast; its results are mapped to the clone's.
void cloneWidened(OpBuilder &b, Operation &op, IRMapping &mapping,
                  VectorType shape) {
  bool vectorOperands = llvm::any_of(op.getOperands(), [&](Value v) {
    return isa<VectorType>(mapping.lookupOrDefault(v).getType());
  });
  if (!vectorOperands) {
    b.clone(op, mapping);
    return;
  }
  IRMapping local = mapping;
  for (Value operand : op.getOperands()) {
    Value value = mapping.lookupOrDefault(operand);
    local.map(operand,
              broadcastTo(b, op.getLoc(), value,
                          VectorType::get(shape.getShape(),
                                          getElementTypeOrSelf(value))));
  }
  Operation *clone = b.clone(op, local);
  for (OpResult result : clone->getResults())
    result.setType(VectorType::get(shape.getShape(), result.getType()));
  for (auto [old, fresh] : llvm::zip(op.getResults(), clone->getResults()))
    mapping.map(old, fresh);
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
    cloneWidened(b, op, mapping, vectorType);
  }
  Value stored = mapping.lookupOrDefault(acc.store.getValueToStore());
  return broadcastTo(b, loc, stored, vectorType);
}

/// The epilogue on one vector of the output tile, `tile` (the final sums of
/// C at the indices `mapping` gives the epilogue's loops): loads of C become
/// `tile`, other loads vector loads (contiguous along the columns) or
/// scalars (broadcast where they meet a vector), the arithmetic works on
/// vectors, and the store to D is a vector store.
void emitEpilogueVector(OpBuilder &b, Epilogue &epi, IRMapping mapping,
                        Value tile, VectorType vectorType) {
  Location loc = epi.store.getLoc();
  auto widened = [&](Type element) {
    return VectorType::get(vectorType.getShape(), element);
  };
  auto mapped = [&](ValueRange operands) {
    SmallVector<Value> values;
    for (Value operand : operands)
      values.push_back(mapping.lookupOrDefault(operand));
    return values;
  };
  for (Operation &op : epi.loops.back().getBody()->without_terminator()) {
    if (epi.outputLoads.contains(&op)) {
      mapping.map(op.getResult(0), tile);
    } else if (auto load = dyn_cast<affine::AffineLoadOp>(op)) {
      Value loaded;
      if (epi.loads.lookup(load) == Along::Contiguous)
        loaded = affine::AffineVectorLoadOp::create(
            b, loc, widened(load.getType()), load.getMemRef(),
            load.getAffineMap(), mapped(load.getMapOperands()));
      else
        loaded = affine::AffineLoadOp::create(b, loc, load.getMemRef(),
                                              load.getAffineMap(),
                                              mapped(load.getMapOperands()));
      mapping.map(load.getResult(), loaded);
    } else if (auto store = dyn_cast<affine::AffineStoreOp>(op)) {
      Value value = mapping.lookupOrDefault(store.getValueToStore());
      affine::AffineVectorStoreOp::create(
          b, loc,
          broadcastTo(b, loc, value, widened(getElementTypeOrSelf(value))),
          store.getMemRef(), store.getAffineMap(),
          mapped(store.getMapOperands()));
    } else {
      cloneWidened(b, op, mapping, vectorType);
    }
  }
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
    for (AffineForOp root : roots) {
      if (fusedEpilogues.contains(root))
        continue; // erased: computed in the tiles of the nest before it
      if (std::optional<Accumulation> acc = match(root, vectorBits / 32))
        rewrite(*acc);
    }
    // How many elementwise nests now run inside register tiles (the
    // kernels fusion saved at this level), for reports.
    if (!fusedEpilogues.empty())
      getOperation()->setAttr(
          "dl.fused_epilogues",
          IntegerAttr::get(IntegerType::get(&getContext(), 64),
                           static_cast<int64_t>(fusedEpilogues.size())));
  }

  DenseSet<Operation *> fusedEpilogues;

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
    std::optional<Epilogue> epi;
    if (epilogue) {
      std::string why;
      epi = matchEpilogue(acc, why);
      if (!epi && report && !why.empty())
        acc.nest.front().emitRemark()
            << "dl-affine-register-tile: the elementwise nest after this "
               "accumulation is not fused: "
            << why;
    }
    if (epi)
      for (Operation *op : epi->between)
        op->moveBefore(acc.nest.front());
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
      auto storeOutput = [&]() {
        for (int64_t r = 0; r < tileRows; ++r)
          for (int64_t c = 0; c < vectorCount; ++c)
            affine::AffineVectorStoreOp::create(
                b, loc, results[r * vectorCount + c], acc.store.getMemRef(),
                acc.store.getAffineMap(), outputOperands(r, c));
      };
      auto storeEpilogue = [&]() {
        for (int64_t r = 0; r < tileRows; ++r)
          for (int64_t c = 0; c < vectorCount; ++c) {
            IRMapping local = mapping;
            if (acc.rowLoop)
              local.map(acc.rowLoop.getInductionVar(), rowIndex[r]);
            local.map(acc.columnLoop.getInductionVar(), columnIndex[c]);
            SmallVector<Value> outputIndices;
            for (AffineForOp loop : acc.outputLoops)
              outputIndices.push_back(
                  local.lookupOrDefault(loop.getInductionVar()));
            IRMapping indices;
            for (auto [k, loop] : llvm::enumerate(epi->loops))
              indices.map(loop.getInductionVar(),
                          epi->toView
                              ? affine::AffineApplyOp::create(
                                    b, loc, epi->toView.getSubMap({unsigned(k)}),
                                    outputIndices)
                                    .getResult()
                              : outputIndices[k]);
            emitEpilogueVector(b, *epi, indices, results[r * vectorCount + c],
                               vectorType);
          }
      };
      if (!epi) {
        storeOutput();
      } else if (!blockReduction) {
        storeEpilogue();
      } else {
        // Only the last reduction block holds the final sums: the others
        // store their partial sums to C for the next block to resume from.
        int64_t last = (*reductionCount - 1) / redBlock * redBlock;
        auto isLast = affine::AffineIfOp::create(
            b, loc, IntegerSet::get(1, 0, {d0 - last}, {false}),
            ValueRange{packing.reductionBase}, /*withElseRegion=*/true);
        b.setInsertionPointToStart(isLast.getThenBlock());
        storeEpilogue();
        b.setInsertionPointToStart(isLast.getElseBlock());
        storeOutput();
        b.setInsertionPointAfter(isLast);
      }
      if (epi)
        columnTiles->setAttr(kFusedEpilogue, epilogueNames(*epi));
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
    // The epilogue over the same remainders, after the accumulation nest.
    if (epi) {
      OpBuilder after(epi->root);
      unsigned epiColumn = epi->loops.size() - 1;
      if (fullColumns < columnCount) {
        auto rest = cast<AffineForOp>(after.clone(*epi->root));
        nestedLoop(rest, epiColumn)
            .setLowerBound({}, after.getConstantAffineMap(fullColumns));
      }
      if (acc.rowLoop && !rowRemainderInBlock &&
          (!rowCount || *rowCount % tileRows != 0)) {
        unsigned epiRow = llvm::find(acc.outputLoops, acc.rowLoop) -
                          acc.outputLoops.begin();
        auto rest = cast<AffineForOp>(after.clone(*epi->root));
        nestedLoop(rest, epiRow)
            .setLowerBound(acc.rowLoop.getUpperBoundOperands(), fullRowsMap);
        nestedLoop(rest, epiColumn)
            .setUpperBound({}, after.getConstantAffineMap(fullColumns));
      }
      fusedEpilogues.insert(epi->root);
      epi->root.erase();
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
  ///
  /// A transposed input (B^T[j, k], contiguous along k) is copied by
  /// lanes x lanes squares where it can be: `lanes` vector loads along k
  /// (one per column j), one vector.transpose in registers (lowered to
  /// shuffles: 16x16 f32 on AVX-512), `lanes` vector stores along j. A
  /// scalar copy of such an input (strided stores, nothing to vectorize)
  /// cost more than transposing it beforehand: 512x4608 floats of a
  /// convolution filter, 5.0 ms scalar vs 2.5 ms for a transpose + GEMM.
  /// The edges that do not fill a square are copied by scalar loops.
  void emitPackingCopy(OpBuilder &b, Accumulation &acc, IRMapping &mapping,
                       Packing &packing, AffineForOp reduction,
                       int64_t reductionCount, int64_t fullColumns,
                       int64_t reductionPerBlock, int64_t columnsPerBlock) {
    Location loc = packing.load->getLoc();
    MLIRContext *ctx = b.getContext();
    AffineExpr d0 = getAffineDimExpr(0, ctx);
    auto load = cast<affine::AffineLoadOp>(packing.load);
    // Extent of this block along a dimension: [0, min(block, extent - base))
    // (the whole extent when not blocked: no base).
    struct Extent {
      SmallVector<Value> operands; // the base, if blocked
      AffineMap upper;             // min(block, extent - base)
      AffineMap squaresUpper;      // where whole squares end
      AffineMap edgeLower;         // where the scalar edge begins
    };
    auto extent = [&](Value base, int64_t block, int64_t total,
                      int64_t lanes) {
      Extent e;
      auto c = [&](int64_t v) { return getAffineConstantExpr(v, ctx); };
      if (base) {
        e.operands.push_back(base);
        e.upper = AffineMap::get(1, 0, {c(block), c(total) - d0}, ctx);
        // With block a multiple of lanes: floor(min(block, total - base))
        // = min(block, floor(total - base)); the edge [floor(total - base),
        // min(...)) is empty except in the last block.
        e.squaresUpper = AffineMap::get(
            1, 0, {c(block), ((c(total) - d0).floorDiv(lanes)) * lanes}, ctx);
        e.edgeLower = AffineMap::get(
            1, 0, ((c(total) - d0).floorDiv(lanes)) * lanes, ctx);
      } else {
        int64_t size = std::min(block, total);
        e.upper = b.getConstantAffineMap(size);
        e.squaresUpper = b.getConstantAffineMap(size / lanes * lanes);
        e.edgeLower = e.squaresUpper;
      }
      return e;
    };
    bool transposed = acc.loads.lookup(packing.load) == Along::Transposed;
    Type element = load.getType();
    int64_t lanes = element.isIntOrFloat()
                        ? vectorBits / element.getIntOrFloatBitWidth()
                        : 0;
    bool squares = transposed && lanes >= 2 &&
                   (!packing.reductionBase || reductionPerBlock % lanes == 0) &&
                   (!packing.columnBase || columnsPerBlock % lanes == 0) &&
                   contiguousAlong(load, reduction.getInductionVar());
    int64_t unit = squares ? lanes : 1;
    Extent rows = extent(packing.reductionBase, reductionPerBlock,
                         reductionCount, unit);
    Extent columns =
        extent(packing.columnBase, columnsPerBlock, fullColumns, unit);

    auto offset = [&](OpBuilder &builder, Value index, Value base) -> Value {
      if (!base)
        return index;
      AffineMap map = AffineMap::get(2, 0, getAffineDimExpr(0, ctx) + getAffineDimExpr(1, ctx));
      return affine::AffineApplyOp::create(builder, loc, map, ValueRange{index, base});
    };
    auto plus = [&](OpBuilder &builder, Value index, int64_t constant) -> Value {
      if (constant == 0)
        return index;
      return affine::AffineApplyOp::create(
          builder, loc, AffineMap::get(1, 0, d0 + constant), ValueRange{index});
    };
    // The input's indices with the reduction at `k` and the column at `j`
    // (both relative to the block).
    auto inputIndices = [&](OpBuilder &builder, Value k, Value j) {
      IRMapping local = mapping;
      local.map(reduction.getInductionVar(),
                offset(builder, k, packing.reductionBase));
      local.map(acc.columnLoop.getInductionVar(),
                offset(builder, j, packing.columnBase));
      SmallVector<Value> operands;
      for (Value operand : load.getMapOperands())
        operands.push_back(local.lookupOrDefault(operand));
      return operands;
    };
    auto loop = [&](OpBuilder &builder, ArrayRef<Value> lowerOperands,
                    AffineMap lower, ArrayRef<Value> upperOperands,
                    AffineMap upper, int64_t step = 1) {
      return AffineForOp::create(builder, loc, lowerOperands, lower,
                                 upperOperands, upper, step);
    };
    auto zero = b.getConstantAffineMap(0);
    // A scalar copy of rows [r0, r1) x columns [c0, c1). Rows outside for a
    // B read along its rows; for a transposed B the columns go outside, so
    // that the reads walk B's rows contiguously and the strided writes stay
    // within the (cache-resident) buffer.
    auto scalarCopy = [&](ArrayRef<Value> r0Ops, AffineMap r0,
                          ArrayRef<Value> r1Ops, AffineMap r1,
                          ArrayRef<Value> c0Ops, AffineMap c0,
                          ArrayRef<Value> c1Ops, AffineMap c1) {
      auto empty = [](AffineMap lower, AffineMap upper) {
        return lower.isSingleConstant() && upper.isConstant() &&
               llvm::any_of(upper.getConstantResults(), [&](int64_t u) {
                 return u <= lower.getSingleConstantResult();
               });
      };
      if (empty(r0, r1) || empty(c0, c1))
        return; // an edge the squares cover
      OpBuilder::InsertionGuard guard(b);
      AffineForOp rowLoop, columnLoop;
      if (!transposed) {
        rowLoop = loop(b, r0Ops, r0, r1Ops, r1);
        b.setInsertionPointToStart(rowLoop.getBody());
        columnLoop = loop(b, c0Ops, c0, c1Ops, c1);
        b.setInsertionPointToStart(columnLoop.getBody());
      } else {
        columnLoop = loop(b, c0Ops, c0, c1Ops, c1);
        b.setInsertionPointToStart(columnLoop.getBody());
        rowLoop = loop(b, r0Ops, r0, r1Ops, r1);
        b.setInsertionPointToStart(rowLoop.getBody());
      }
      Value k = rowLoop.getInductionVar(), j = columnLoop.getInductionVar();
      Value value = affine::AffineLoadOp::create(
          b, loc, load.getMemRef(), load.getAffineMap(), inputIndices(b, k, j));
      affine::AffineStoreOp::create(b, loc, value, packing.buffer,
                                    b.getMultiDimIdentityMap(2),
                                    ValueRange{k, j});
    };
    if (!squares) {
      scalarCopy({}, zero, rows.operands, rows.upper, {}, zero,
                 columns.operands, columns.upper);
      return;
    }

    {
      OpBuilder::InsertionGuard guard(b);
      AffineForOp columnSquares =
          loop(b, {}, zero, columns.operands, columns.squaresUpper, lanes);
      b.setInsertionPointToStart(columnSquares.getBody());
      AffineForOp rowSquares =
          loop(b, {}, zero, rows.operands, rows.squaresUpper, lanes);
      b.setInsertionPointToStart(rowSquares.getBody());
      Value k = rowSquares.getInductionVar();
      Value j = columnSquares.getInductionVar();
      auto rowType = VectorType::get({lanes}, element);
      auto squareType = VectorType::get({lanes, lanes}, element);
      Value square = arith::ConstantOp::create(b, loc, squareType,
                                               b.getZeroAttr(squareType));
      for (int64_t r = 0; r < lanes; ++r) {
        // Column j + r of the square: lanes consecutive k, contiguous.
        Value row = affine::AffineVectorLoadOp::create(
            b, loc, rowType, load.getMemRef(), load.getAffineMap(),
            inputIndices(b, k, plus(b, j, r)));
        square = vector::InsertOp::create(b, loc, row, square, r);
      }
      Value flipped = vector::TransposeOp::create(b, loc, square,
                                                  ArrayRef<int64_t>{1, 0});
      for (int64_t r = 0; r < lanes; ++r) {
        Value row = vector::ExtractOp::create(b, loc, flipped, r);
        affine::AffineVectorStoreOp::create(
            b, loc, row, packing.buffer, b.getMultiDimIdentityMap(2),
            ValueRange{plus(b, k, r), j});
      }
    }
    // The edges: the columns past the last square (every row), then the
    // rows past the last square of the other columns.
    scalarCopy({}, zero, rows.operands, rows.upper, columns.operands,
               columns.edgeLower, columns.operands, columns.upper);
    scalarCopy(rows.operands, rows.edgeLower, rows.operands, rows.upper, {},
               zero, columns.operands, columns.squaresUpper);
  }

  /// Whether `load` walks its last index with unit stride along `iv`, and
  /// no other index with it, in a memref whose last dimension is contiguous.
  static bool contiguousAlong(affine::AffineLoadOp load, Value iv) {
    if (!cast<MemRefType>(load.getMemRef().getType()).isLastDimUnitStride())
      return false;
    affine::MemRefAccess access(load);
    affine::AffineValueMap map;
    access.getAccessMap(&map);
    unsigned last = map.getNumResults() - 1;
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      if (!map.isFunctionOf(r, iv))
        continue;
      if (r != last || dl::coefficientOf(map, r, iv) != 1)
        return false;
    }
    return map.isFunctionOf(last, iv);
  }

  static AffineForOp nestedLoop(AffineForOp root, unsigned depth) {
    AffineForOp loop = root;
    for (unsigned i = 0; i < depth; ++i)
      loop = cast<AffineForOp>(&loop.getBody()->front());
    return loop;
  }
};

} // namespace
