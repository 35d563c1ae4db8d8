//===- RegisterTileImpl.h - pieces of dl-affine-register-tile --*- C++ -*-===//
//
// Private to lib/Codegen/CPU/RegisterTile: the micro-kernel's match
// (Match.cpp), its epilogue (Epilogue.cpp), the packing of B (Packing.cpp),
// the prefetches of a gapped A (Prefetch.cpp), the blocking policy
// (Blocking.cpp) and the IR builder (RegisterTile.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DL_LIB_CODEGEN_CPU_REGISTERTILE_REGISTERTILEIMPL_H
#define DL_LIB_CODEGEN_CPU_REGISTERTILE_REGISTERTILEIMPL_H

#include "dl/Codegen/CPU/RegisterTile.h"

#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include <optional>
#include <string>

namespace mlir::dl::register_tile {

using affine::AffineForOp;

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

/// The nest at `root` if it matches the micro-kernel contract, with
/// vectors of `lanesFor32Bits` f32 lanes (scaled by the element width).
std::optional<Accumulation> matchAccumulation(AffineForOp root,
                                              int64_t lanesFor32Bits);

/// The memref a view chain starts from.
Value rootMemRef(Value memref);

/// Whether `a` and `b` may share memory: views of one buffer do unless they
/// lie within memref.views of the same source at disjoint constant byte
/// ranges (dl-plan-memory's arena).
bool mayAlias(Value a, Value b);

/// The value `nest` stores into every element of `memref` (static shape), if
/// that is all it does: linalg.fill's nest (loops 0..size over each
/// dimension, one affine.store at the loops' indices of a value defined
/// outside it). Null otherwise.
Value filledWith(AffineForOp nest, Value memref);

/// An elementwise nest right after the accumulation nest that reads its
/// output element by element: D[i, j] = f(C[i, j], bias[j], R[i, j], ...)
/// (bias, activation, residual add). It is computed on the output tile
/// while it is still in registers, after the last reduction step, and
/// stored to D instead of C; only the rows and columns the tiles leave to
/// the scalar remainder nests are left to (copies of) the nest itself.
struct Epilogue {
  AffineForOp root;
  SmallVector<AffineForOp> loops;          // loop d walks index d of C and D
  SmallVector<unsigned> depths;            // the depth of loops[d] in its nest
  affine::AffineStoreOp store;             // of D, at [loops...]
  DenseMap<Operation *, Along> loads;      // other inputs (not C)
  DenseSet<Operation *> outputLoads;       // of C, at [loops...]
  SmallVector<Operation *> between;        // pure ops and allocs between them
  Value view;        // what it reads C as: C, or a memref.expand_shape of C
  AffineMap toView;  // C's indices -> the view's (null: the same)
};

/// The epilogue of `acc`, if the nest that follows it is one and fusing it
/// is legal; else why not in `why` (empty when the next nest is no
/// candidate at all).
std::optional<Epilogue> matchEpilogue(Accumulation &acc, std::string &why);

/// Marks a tile loop computing an epilogue: the names of its ops.
constexpr llvm::StringLiteral kFusedEpilogue = "dl.fused_epilogue";

/// The ops of the epilogue's computation, by name.
ArrayAttr epilogueNames(Epilogue &epi);

/// The epilogue on one vector of the output tile, `tile` (the final sums of
/// C at the indices `mapping` gives the epilogue's loops).
void emitEpilogueVector(OpBuilder &b, Epilogue &epi, IRMapping mapping,
                        Value tile, VectorType vectorType);

/// The input copied into a contiguous buffer per cache block: element
/// [k, j] of the block is buffer[k - reductionBase, j - columnBase].
struct Packing {
  Operation *load = nullptr;
  Value buffer;
  Value reductionIv;    // the blocked reduction loop's new induction variable
  Value reductionBase;  // null: 0
  Value columnBase;     // null: 0
};

/// The input worth packing: contiguous along the column loop, indexed
/// [..., reduction, column] by exactly the blocked reduction loop and the
/// column loop (or [..., column, reduction] when transposed), its other
/// indices invariant in the rebuilt loops.
Operation *packCandidate(Accumulation &acc, AffineForOp reduction);

/// The copy of the current (reduction, column) block of the packed input
/// into the buffer (see Packing.cpp), vectors of `vectorBits` bits.
void emitPackingCopy(OpBuilder &b, Accumulation &acc, IRMapping &mapping,
                     Packing &packing, AffineForOp reduction,
                     int64_t reductionCount, int64_t fullColumns,
                     int64_t reductionPerBlock, int64_t columnsPerBlock,
                     int64_t vectorBits);

/// Whether `load` walks its last index with unit stride along `iv`, and
/// no other index with it, in a memref whose last dimension is contiguous.
bool contiguousAlong(affine::AffineLoadOp load, Value iv);

/// An input read in short runs with gaps between them (a grouped
/// convolution's channels of one group at every pixel, NHWC), prefetched
/// one iteration of an outer loop ahead (see Prefetch.cpp).
struct Prefetch {
  affine::AffineLoadOp load; // in the original nest
  AffineForOp next;          // the outer loop whose next iteration is fetched
  AffineForOp run;           // the innermost reduction loop, along the run
  SmallVector<int64_t> offsets; // iterations of `run` that cover its lines
};

/// The inputs of `acc` worth prefetching, with cache lines of `lineBytes`.
SmallVector<Prefetch> planPrefetches(Accumulation &acc, int64_t lineBytes);

/// The prefetches of one tile's rows (`rowIndex`), at the current
/// iterations of the reduction loops around the run (`mapping` maps the
/// original loops to the rebuilt ones); emitted at `b`'s insertion point,
/// just outside the rebuilt `run` loop.
void emitPrefetches(OpBuilder &b, Location loc, ArrayRef<Prefetch> prefetches,
                    Accumulation &acc, const IRMapping &mapping,
                    ArrayRef<Value> rowIndex);

/// The micro-kernel's geometry and cache blocks for one nest.
struct TilePlan {
  int64_t lanes;             // elements per vector
  int64_t tileRows;          // rows of a tile (fewer than asked if M is)
  int64_t vectorCount;       // vectors per tile row
  int64_t tileColumns;       // vectorCount * lanes
  int64_t columnCount;       // the column loop's trip count
  int64_t fullColumns;       // columns the tiles cover
  int64_t columnBlock;       // columns per cache block
  int64_t reductionBlock;    // reduction iterations per cache block
  bool blockColumns;         // whether the columns are blocked
  bool blockReduction;       // whether the reduction is blocked
  int64_t columnsPerBlock;   // columnBlock, or every full column
  int64_t reductionPerBlock; // reductionBlock, or the whole reduction
};

/// The plan for `acc` on `target`: the tile from `rows` x `vectors` and
/// the cache blocks from the target's L1, L2 and threads, unless
/// `columnBlock`/`reductionBlock` fix them (0: the cache model).
TilePlan planTile(Accumulation &acc, const TargetInfo &target, int64_t rows,
                  int64_t vectors, int64_t columnBlock, int64_t reductionBlock);

/// `value` as a vector of `type` (a broadcast of a scalar).
Value broadcastTo(OpBuilder &b, Location loc, Value value, VectorType type);

/// Clones the elementwise `op` with `mapping`: as it is where all its
/// (mapped) operands are scalars, else on vectors shaped like `shape`, scalar
/// operands broadcast; its results are mapped to the clone's.
void cloneWidened(OpBuilder &b, Operation &op, IRMapping &mapping,
                  VectorType shape);

/// The loop `depth` levels into the perfect nest at `root`.
inline AffineForOp nestedLoop(AffineForOp root, unsigned depth) {
  AffineForOp loop = root;
  for (unsigned i = 0; i < depth; ++i)
    loop = cast<AffineForOp>(&loop.getBody()->front());
  return loop;
}

} // namespace mlir::dl::register_tile

#endif // DL_LIB_CODEGEN_CPU_REGISTERTILE_REGISTERTILEIMPL_H
