//===- MemoryPlan.cpp - dl-plan-memory ------------------------------------===//
//
// Static memory planning after bufferization: the temporary buffers of a
// function (statically shaped memref.alloc in its entry block, neither
// returned nor passed to calls) are placed in one arena, allocated once,
// where buffers whose lifetimes do not overlap share bytes. A lifetime runs
// from the alloc to the last top-level op that uses the buffer or a view of
// it (an op nested in a loop counts as the loop nest that holds it); two
// buffers used by the same top-level op never share. The inputs of an op
// with reduction loops (a matmul, a convolution) stay live through the next
// op when that op is elementwise (all loops parallel), and on through the
// first elementwise op after it that reads the reduction's output (past
// elementwise ops that do not: a dynamic quantization's zero-point nests):
// dl-affine-register-tile and dl-integer-matmul compute it inside the
// reduction's tiles, while the inputs are still read, so its output must
// not take their bytes. Offsets are chosen
// greedily, largest buffer first, at the lowest 64-byte aligned offset free
// over its lifetime (first fit); then a local search (`search-tries` random
// swaps of two buffers in that order, each kept when the arena does not
// grow; a fixed seed, so every compile plans the same) packs tighter where
// long-lived buffers fragment the arena: the digits CNN's training step
// 3.43 -> 3.17 MB, against 3.08 MB live at its peak. Each alloc becomes a memref.view of the
// arena; its deallocs go, and the arena is freed before the return.
//
// The function gets `dl.memory_plan = {buffers, peak_bytes,
// unplanned_peak_bytes}`: the planned buffers, the arena's size, and the
// peak of the same buffers live at once under the original allocs and
// deallocs. Dynamically shaped buffers (a dynamic batch) are not planned and
// not counted. Nothing changes where planning saves nothing.
//
// Upstream MLIR has buffer hoisting and promotion to the stack but no reuse
// of memory between buffers, hence this pass.
//
//===----------------------------------------------------------------------===//

#include "dl/Support/TypeSize.h"
#include "dl/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <limits>
#include <random>

namespace mlir::dl {
#define GEN_PASS_DEF_DLPLANMEMORY
#include "dl/Codegen/Common/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

constexpr int64_t kAlignment = 64;

struct Buffer {
  memref::AllocOp alloc;
  int64_t bytes = 0;
  int64_t start = 0, end = 0; // top-level positions, inclusive
  SmallVector<memref::DeallocOp> deallocs;
  int64_t freedAt = std::numeric_limits<int64_t>::max(); // first dealloc
  int64_t offset = -1;
};

int64_t alignUp(int64_t value) {
  return (value + kAlignment - 1) / kAlignment * kAlignment;
}

/// The bytes of a statically shaped, identity-layout buffer of whole-byte
/// elements in the default memory space; 0 if it is not one.
int64_t plannableBytes(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace() || !alloc.getSymbolOperands().empty())
    return 0;
  Type element = type.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return 0;
  if (auto alignment = alloc.getAlignment(); alignment && *alignment > kAlignment)
    return 0;
  return dl::staticByteSize(type).value_or(0);
}

/// The buffer `value` is a view of (through view-like ops), or `value`.
Value rootOf(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>()) {
    if (view.getViewSource() == value)
      break;
    value = view.getViewSource();
  }
  return value;
}

/// Fills the lifetime and deallocs of `buffer`; false when it escapes
/// (returned, passed to a call) or is used outside `block`'s ops.
bool analyze(Buffer &buffer, Block &block,
             const DenseMap<Operation *, int64_t> &position,
             const DenseMap<Operation *, int64_t> &liveThrough) {
  SmallVector<Value> worklist = {buffer.alloc.getResult()};
  buffer.start = buffer.end = position.lookup(buffer.alloc);
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<func::ReturnOp, CallOpInterface>(user))
        return false;
      if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
        if (value != buffer.alloc.getResult())
          return false;
        Operation *top = block.findAncestorOpInBlock(*dealloc);
        if (!top)
          return false;
        buffer.deallocs.push_back(dealloc);
        buffer.freedAt = std::min(buffer.freedAt, position.lookup(top));
        continue;
      }
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == value)
          for (Value result : user->getResults())
            worklist.push_back(result);
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top)
        return false;
      buffer.end = std::max(buffer.end, position.lookup(top));
      if (auto through = liveThrough.find(top); through != liveThrough.end())
        buffer.end = std::max(buffer.end, through->second);
    }
  }
  return true;
}

/// Peak bytes live at once with the original allocs and deallocs.
int64_t unplannedPeak(ArrayRef<Buffer> buffers,
                      const DenseMap<Operation *, int64_t> &position) {
  std::vector<std::pair<int64_t, int64_t>> events; // (position, +-bytes)
  for (const Buffer &buffer : buffers) {
    events.push_back({position.lookup(buffer.alloc), buffer.bytes});
    events.push_back({buffer.freedAt, -buffer.bytes});
  }
  // At one position, frees come before allocations (they cannot coincide).
  llvm::sort(events);
  int64_t live = 0, peak = 0;
  for (auto [at, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

/// The position where the most bytes of `buffers` are live (by their
/// planned lifetimes), and those bytes: no arena can be smaller.
std::pair<int64_t, int64_t> livePeak(ArrayRef<Buffer> buffers) {
  std::vector<std::pair<int64_t, int64_t>> events; // (position, +-bytes)
  for (const Buffer &buffer : buffers) {
    events.push_back({buffer.start, alignUp(buffer.bytes)});
    events.push_back({buffer.end + 1, -alignUp(buffer.bytes)});
  }
  llvm::sort(events, [](auto a, auto b) {
    return a.first != b.first ? a.first < b.first : a.second < b.second;
  });
  int64_t live = 0, peak = 0, at = 0;
  for (auto [position, delta] : events) {
    live += delta;
    if (live > peak) {
      peak = live;
      at = position;
    }
  }
  return {at, peak};
}

/// First-fit offsets, in `order`; returns the arena size.
int64_t firstFit(ArrayRef<Buffer *> order) {
  SmallVector<Buffer *> placed;
  int64_t arena = 0;
  for (Buffer *buffer : order) {
    SmallVector<std::pair<int64_t, int64_t>> busy; // [offset, end) in bytes
    for (Buffer *other : placed)
      if (other->start <= buffer->end && buffer->start <= other->end)
        busy.push_back({other->offset, other->offset + alignUp(other->bytes)});
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [from, to] : busy) {
      if (offset + alignUp(buffer->bytes) <= from)
        break;
      offset = std::max(offset, to);
    }
    buffer->offset = offset;
    arena = std::max(arena, offset + alignUp(buffer->bytes));
    placed.push_back(buffer);
  }
  return arena;
}

/// Offsets by first fit, largest buffer first, then improved by local
/// search: random swaps of two buffers in the order, kept when the arena
/// does not grow (a fixed-seed generator: the same plan every compile); the
/// first plan of the smallest arena wins. Returns the arena size.
int64_t assignOffsets(MutableArrayRef<Buffer> buffers, int64_t tries) {
  SmallVector<Buffer *> order;
  for (Buffer &buffer : buffers)
    order.push_back(&buffer);
  llvm::stable_sort(order, [](Buffer *a, Buffer *b) {
    return a->bytes != b->bytes ? a->bytes > b->bytes : a->start < b->start;
  });
  int64_t arena = firstFit(order);
  SmallVector<int64_t> offsets;
  for (Buffer &buffer : buffers)
    offsets.push_back(buffer.offset);
  // Each try costs a first fit, quadratic in the buffers: at most about
  // 2e7 buffer pairs in all (milliseconds), whatever `tries` says.
  int64_t n = static_cast<int64_t>(order.size());
  tries = std::min<int64_t>(tries, 20000000 / std::max<int64_t>(n * n, 1));
  std::mt19937_64 random(0x646c63);
  int64_t current = arena;
  for (int64_t i = 0; i < tries && order.size() > 1; ++i) {
    size_t x = random() % order.size(), y = random() % order.size();
    std::swap(order[x], order[y]);
    int64_t size = firstFit(order);
    if (size > current) {
      std::swap(order[x], order[y]);
      continue;
    }
    current = size; // equal arenas: kept, to move across plateaus
    if (size < arena) {
      arena = size;
      for (auto [buffer, offset] : llvm::zip(buffers, offsets))
        offset = buffer.offset;
    }
  }
  for (auto [buffer, offset] : llvm::zip(buffers, offsets))
    buffer.offset = offset;
  return arena;
}

struct DLPlanMemoryPass : public dl::impl::DLPlanMemoryBase<DLPlanMemoryPass> {
  using DLPlanMemoryBase::DLPlanMemoryBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    Block &block = func.getBody().front();
    DenseMap<Operation *, int64_t> position;
    int64_t index = 0;
    for (Operation &op : block)
      position[&op] = index++;
    // Reductions followed by an elementwise op: the reduction's operands
    // live through it.
    DenseMap<Operation *, int64_t> liveThrough;
    for (Operation &op : block) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (!linalgOp || linalgOp.getNumReductionLoops() == 0)
        continue;
      Operation *next = op.getNextNode();
      while (next && (isMemoryEffectFree(next) ||
                      isa<memref::AllocOp, memref::DeallocOp>(next)))
        next = next->getNextNode();
      auto elementwise = [](Operation *candidate) {
        auto l = dyn_cast_or_null<linalg::LinalgOp>(candidate);
        return l && l.getNumLoops() == l.getNumParallelLoops();
      };
      if (!elementwise(next))
        continue;
      liveThrough[&op] = position.lookup(next);
      // Past elementwise ops that do not read the reduction's output (a
      // dynamic quantization's zero-point nests), through the first that
      // does: the one the register tiles compute.
      llvm::SmallPtrSet<Value, 2> outputs;
      for (Value init : linalgOp.getDpsInits())
        outputs.insert(rootOf(init));
      auto readsOutput = [&](Operation *candidate) {
        return llvm::any_of(candidate->getOperands(), [&](Value v) {
          return isa<MemRefType>(v.getType()) && outputs.contains(rootOf(v));
        });
      };
      for (int steps = 0; next && steps < 32; next = next->getNextNode()) {
        if (isMemoryEffectFree(next) ||
            isa<memref::AllocOp, memref::DeallocOp>(next))
          continue;
        ++steps;
        if (!elementwise(next))
          break;
        if (readsOutput(next)) {
          liveThrough[&op] = position.lookup(next);
          break;
        }
      }
    }

    SmallVector<Buffer> buffers;
    for (Operation &op : block) {
      auto alloc = dyn_cast<memref::AllocOp>(op);
      if (!alloc)
        continue;
      Buffer buffer;
      buffer.alloc = alloc;
      buffer.bytes = plannableBytes(alloc);
      if (buffer.bytes > 0 && analyze(buffer, block, position, liveThrough))
        buffers.push_back(std::move(buffer));
    }
    int64_t before = unplannedPeak(buffers, position);
    int64_t arena = buffers.empty() ? 0 : assignOffsets(buffers, searchTries);
    bool rewrite = apply && arena < before;
    if (!rewrite)
      arena = before;

    Builder b(func.getContext());
    func->setAttr("dl.memory_plan",
                  b.getDictionaryAttr({
                      b.getNamedAttr("buffers", b.getI64IntegerAttr(buffers.size())),
                      b.getNamedAttr("peak_bytes", b.getI64IntegerAttr(arena)),
                      b.getNamedAttr("unplanned_peak_bytes",
                                     b.getI64IntegerAttr(before)),
                  }));
    if (report) {
      func.emitRemark() << "dl-plan-memory: " << buffers.size()
                        << " temporary buffers, peak " << before
                        << " bytes unplanned, " << arena << " bytes planned"
                        << (rewrite ? "" : apply ? " (nothing to share)" : " (not applied)");
      // What is live at the tightest point, largest first: where a smaller
      // plan has to start (rematerialization, fewer copies).
      auto [at, bytes] = livePeak(buffers);
      SmallVector<Buffer *> live;
      for (Buffer &buffer : buffers)
        if (buffer.start <= at && at <= buffer.end)
          live.push_back(&buffer);
      llvm::stable_sort(live, [](Buffer *a, Buffer *b) {
        return a->bytes > b->bytes;
      });
      Operation *point = nullptr;
      for (auto [op, index] : position)
        if (index == at)
          point = op;
      InFlightDiagnostic diag =
          (point ? point : func.getOperation())->emitRemark()
          << "dl-plan-memory: " << bytes << " bytes of " << live.size()
          << " buffers live here, the most at any point";
      for (Buffer *buffer : live)
        diag.attachNote(buffer->alloc.getLoc())
            << buffer->bytes << " bytes " << buffer->alloc.getType()
            << ", live from op " << buffer->start << " to op " << buffer->end;
    }
    if (!rewrite)
      return;

    OpBuilder builder(func.getContext());
    builder.setInsertionPointToStart(&block);
    Location loc = func.getLoc();
    auto arenaType = MemRefType::get({arena}, builder.getI8Type());
    Value arenaBuffer = memref::AllocOp::create(
        builder, loc, arenaType, builder.getI64IntegerAttr(kAlignment));
    for (Buffer &buffer : buffers) {
      builder.setInsertionPoint(buffer.alloc);
      Value offset = arith::ConstantIndexOp::create(builder, buffer.alloc.getLoc(),
                                                    buffer.offset);
      Value view = memref::ViewOp::create(builder, buffer.alloc.getLoc(),
                                          buffer.alloc.getType(), arenaBuffer,
                                          offset, ValueRange{});
      for (memref::DeallocOp dealloc : buffer.deallocs)
        dealloc.erase();
      buffer.alloc.replaceAllUsesWith(view);
      buffer.alloc.erase();
    }
    builder.setInsertionPoint(block.getTerminator());
    memref::DeallocOp::create(builder, loc, arenaBuffer);
  }
};

} // namespace
