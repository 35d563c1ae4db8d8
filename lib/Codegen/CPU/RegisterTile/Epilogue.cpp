//===- Epilogue.cpp - the elementwise nest computed on the tiles ----------===//
//
// Epilogue fusion: the elementwise nest right after an accumulation that
// reads its output C element by element (D[i, j] = f(C[i, j], bias[j],
// R[i, j], ...): bias, activation, residual add) is computed on each output
// tile while it is in registers, after the last reduction step, and stored
// to D; C's final sums never go through memory. What may not be fused
// (see matchEpilogue) keeps its own nest.
//
//===----------------------------------------------------------------------===//

#include "RegisterTileImpl.h"

#include "dl/Codegen/CPU/AffineUtils.h"

#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineValueMap.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::dl::register_tile;

namespace {

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

/// Whether the access of `op` (affine load or store) is [loops...], or with
/// `shifted` [loops... + constants] (a store into the interior of a padded
/// buffer: [n, h + 1, w + 1, c]).
bool indexedBy(Operation *op, ArrayRef<AffineForOp> loops,
               bool shifted = false) {
  affine::MemRefAccess access(op);
  affine::AffineValueMap map;
  access.getAccessMap(&map);
  if (map.getNumResults() != loops.size())
    return false;
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    AffineExpr e = map.getResult(r);
    if (auto sum = dyn_cast<AffineBinaryOpExpr>(e);
        shifted && sum && sum.getKind() == AffineExprKind::Add &&
        isa<AffineConstantExpr>(sum.getRHS()))
      e = sum.getLHS();
    auto dim = dyn_cast<AffineDimExpr>(e);
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

/// Whether the loop nest `op`, between an accumulation and its epilogue,
/// may run before the accumulation instead: it only loads and stores
/// (affine), writing nothing the accumulation reads or writes and reading
/// nothing it writes. dl-unshare-fills puts a padded buffer's zero borders
/// there, between the producer and the nest that writes its interior (a
/// depthwise convolution's input: the activation after the convolution
/// before it).
bool independentNest(Operation *op, Accumulation &acc, Value output) {
  if (!isa<AffineForOp>(op))
    return false;
  WalkResult result = op->walk([&](Operation *inner) {
    if (auto write = dyn_cast<affine::AffineWriteOpInterface>(inner)) {
      Value memref = write.getMemRef();
      if (mayAlias(memref, output) ||
          llvm::any_of(acc.loads, [&](auto &entry) {
            return mayAlias(
                cast<affine::AffineLoadOp>(entry.first).getMemRef(), memref);
          }))
        return WalkResult::interrupt();
      return WalkResult::advance();
    }
    if (auto read = dyn_cast<affine::AffineReadOpInterface>(inner))
      return mayAlias(read.getMemRef(), output) ? WalkResult::interrupt()
                                                : WalkResult::advance();
    if (isa<AffineForOp, affine::AffineYieldOp>(inner) ||
        isMemoryEffectFree(inner))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

} // namespace

Value mlir::dl::register_tile::filledWith(AffineForOp nest, Value memref) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type || !type.hasStaticShape())
    return {};
  SmallVector<AffineForOp> loops;
  affine::getPerfectlyNestedLoops(loops, nest);
  if (loops.size() != static_cast<size_t>(type.getRank()))
    return {};
  Block *body = loops.back().getBody();
  auto store = dyn_cast<affine::AffineStoreOp>(&body->front());
  if (!store || body->getOperations().size() != 2 ||
      store.getMemRef() != memref ||
      !store.getValueToStore().getParentRegion()->isProperAncestor(
          &nest.getRegion()))
    return {};
  for (auto [dim, loop] : llvm::enumerate(loops))
    if (!loop.hasConstantBounds() || loop.getConstantLowerBound() != 0 ||
        loop.getConstantUpperBound() != type.getDimSize(dim) ||
        loop.getStepAsInt() != 1)
      return {};
  return indexedBy(store, loops) ? store.getValueToStore() : Value();
}

/// The epilogue of `acc`, if the nest that follows it is one and fusing it
/// is legal: it reads C only at [i, j], C has no user after it (its main
/// tiles will never hold the final sums) unless D is C, D does not overlap
/// anything the accumulation reads (D is written while they are still read)
/// and its other inputs neither overlap C nor D (other than D itself at
/// [i, j]). Pure ops, allocations and nests independent of the accumulation
/// may stand between the two: they move before it.
std::optional<Epilogue>
mlir::dl::register_tile::matchEpilogue(Accumulation &acc, std::string &why) {
  AffineForOp root = acc.nest.front();
  Value output = acc.store.getMemRef();
  Epilogue epi;
  Operation *next = root->getNextNode();
  while (next && ((next->getNumRegions() == 0 &&
                   (isMemoryEffectFree(next) || isa<memref::AllocOp>(next))) ||
                  independentNest(next, acc, output))) {
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
  // The tiles hold C at the accumulation's loop indices; one written at
  // shifted ones (a slice of a concatenation, matchAccumulation) would have
  // the epilogue read other elements than the tiles hold.
  affine::AffineValueMap storeMap;
  affine::MemRefAccess(acc.store).getAccessMap(&storeMap);
  if (llvm::any_of(storeMap.getAffineMap().getResults(),
                   [](AffineExpr e) { return !isa<AffineDimExpr>(e); }))
    return refuse("the accumulation writes its output at shifted indices (a "
                  "slice of a larger buffer)");
  // C is a buffer of its own (an alloc, an arena view), or an expand_shape
  // of one (a grouped convolution's [N, OH, OW, G, F/G] of [N, OH, OW, F]).
  Value buffer = output;
  if (auto expand = output.getDefiningOp<memref::ExpandShapeOp>())
    buffer = expand.getSrc();
  if (!isFreshBuffer(buffer) && !buffer.getDefiningOp<memref::ViewOp>())
    return refuse("the output is not a buffer of its own (a memref.alloc, "
                  "an arena view, or an expand_shape of one)");
  // The loops by the index they walk, from the store: any order of the
  // nest (dl-affine-interchange may have put a grouped convolution's group
  // loop outside its rows), the columns' loop innermost.
  SmallVector<AffineForOp> nest;
  affine::getPerfectlyNestedLoops(nest, epi.root);
  epi.loops = nest;
  affine::AffineStoreOp firstStore;
  for (Operation &op : nest.back().getBody()->without_terminator())
    if ((firstStore = dyn_cast<affine::AffineStoreOp>(op)))
      break;
  if (firstStore) {
    affine::MemRefAccess access(firstStore);
    affine::AffineValueMap map;
    access.getAccessMap(&map);
    SmallVector<AffineForOp> byIndex;
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
      auto *loop = dim ? llvm::find_if(nest,
                                       [&](AffineForOp l) {
                                         return l.getInductionVar() ==
                                                map.getOperand(dim.getPosition());
                                       })
                       : nest.end();
      if (loop == nest.end() || llvm::is_contained(byIndex, *loop))
        break;
      byIndex.push_back(*loop);
    }
    if (byIndex.size() == nest.size()) {
      if (byIndex.back() != nest.back())
        return refuse("its innermost loop does not walk the output's last "
                      "dimension");
      epi.loops = byIndex;
    }
  }
  for (AffineForOp loop : epi.loops)
    epi.depths.push_back(llvm::find(nest, loop) - nest.begin());
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
      if (!indexedBy(store, epi.loops, /*shifted=*/true))
        return refuse("it stores at another index than its loops' (plus "
                      "constants)");
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
  if (inPlace && !indexedBy(epi.store, epi.loops))
    return refuse("it stores into the output at another element");
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
  // Otherwise C must be dead after the epilogue: no later user, or the first
  // later one fills all of it (the memory plan gives several outputs one
  // arena view, which CSE merges: the next convolution's fill of that view
  // is C's next value, not a read of the sums).
  // A view of C (a collapse_shape made before the accumulation, as
  // dl-split-function{early} makes every view at the start of a part) is
  // not a use: the ops that use it are.
  if (!inPlace) {
    Block *block = root->getBlock();
    SmallVector<Operation *> later;
    SmallVector<Value> worklist = {buffer, output, epi.view};
    DenseSet<Value> seen;
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      if (!seen.insert(value).second)
        continue;
      for (Operation *user : value.getUsers()) {
        if (isa<memref::DeallocOp>(user) || user == epi.view.getDefiningOp() ||
            user == output.getDefiningOp())
          continue;
        if (auto view = dyn_cast<ViewLikeOpInterface>(user);
            view && view.getViewSource() == value && isMemoryEffectFree(user)) {
          for (Value result : user->getResults())
            worklist.push_back(result);
          continue;
        }
        // A user outside this block (null) is a later use no fill ends.
        Operation *top = block->findAncestorOpInBlock(*user);
        if (!top || !(top == root || top == epi.root || top->isBeforeInBlock(root)))
          later.push_back(top);
      }
    }
    if (!later.empty()) {
      Operation *first =
          llvm::is_contained(later, nullptr)
              ? nullptr
              : *llvm::min_element(later, [](Operation *a, Operation *b) {
                  return a->isBeforeInBlock(b);
                });
      auto fill = dyn_cast_or_null<AffineForOp>(first);
      if (!fill || !(filledWith(fill, buffer) || filledWith(fill, output)))
        return refuse("the output is used after it (it would keep partial "
                      "sums in the tiles' place)");
    }
  }
  return epi;
}

/// The ops of the epilogue's computation, by name (the attribute that marks
/// a tile loop as computing it).
ArrayAttr mlir::dl::register_tile::epilogueNames(Epilogue &epi) {
  Builder b(epi.root.getContext());
  SmallVector<Attribute> names;
  for (Operation &op : epi.loops.back().getBody()->without_terminator())
    if (!isa<affine::AffineLoadOp, affine::AffineStoreOp>(op) &&
        op.getNumOperands() > 0)
      names.push_back(b.getStringAttr(op.getName().getStringRef()));
  return b.getArrayAttr(names);
}

/// The epilogue on one vector of the output tile, `tile` (the final sums of
/// C at the indices `mapping` gives the epilogue's loops): loads of C become
/// `tile`, other loads vector loads (contiguous along the columns) or
/// scalars (broadcast where they meet a vector), the arithmetic works on
/// vectors, and the store to D is a vector store.
void mlir::dl::register_tile::emitEpilogueVector(OpBuilder &b, Epilogue &epi,
                                                 IRMapping mapping, Value tile,
                                                 VectorType vectorType) {
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
