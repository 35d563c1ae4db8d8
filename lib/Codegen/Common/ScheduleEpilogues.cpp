//===- ScheduleEpilogues.cpp - dl-schedule-epilogues ----------------------===//
//
// Before bufferization: the elementwise consumer of each accumulation moved
// to just after it (see Passes.td). Ours: upstream schedules nothing for
// the memory plan or for epilogue fusion (linalg's producer/consumer fusion
// makes loops of the two, which the register-tiled kernels do not want).
//
// Why it matters: dl-plan-memory reuses the bytes of a buffer once its last
// reader has run, in program order. The importers and the graph passes leave
// BERT's attention projections as Q, K, V products (one shared input) and
// then their consumers: the plan gives Q's consumer the shared input's
// bytes, which the K and V products still read when the epilogue would run
// on Q's tiles, and K's consumer Q's sums; dl-integer-matmul and
// dl-affine-register-tile then keep each consumer as its own pass over
// memory. Scheduled next to its product, the consumer's output is allocated
// while the later products still hold their inputs.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/Common/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLSCHEDULEEPILOGUES
#include "dl/Codegen/Common/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// The only user of `value`, if it has exactly one.
Operation *onlyUser(Value value) {
  if (!value.hasOneUse())
    return nullptr;
  return *value.getUsers().begin();
}

/// The ops strictly between `begin` and `end` (one block) that `op`
/// depends on, through its operands and the values its regions capture,
/// transitively; false if one of them has memory effects (or its effects
/// are unknown).
bool dependencesBetween(Operation *op, Operation *begin, Operation *end,
                        llvm::SetVector<Operation *> &slice) {
  SmallVector<Operation *> worklist{op};
  while (!worklist.empty()) {
    Operation *current = worklist.pop_back_val();
    SmallVector<Value> used(current->getOperands());
    current->walk([&](Operation *inner) {
      if (inner == current)
        return;
      for (Value v : inner->getOperands())
        if (!current->isAncestor(v.getParentBlock()->getParentOp()))
          used.push_back(v);
    });
    for (Value v : used) {
      Operation *def = v.getDefiningOp();
      // Block arguments, ops of enclosing blocks and ops before `begin`
      // already dominate the new place.
      if (!def || def->getBlock() != begin->getBlock() ||
          !begin->isBeforeInBlock(def) || !def->isBeforeInBlock(end) ||
          slice.contains(def))
        continue;
      if (!isMemoryEffectFree(def))
        return false;
      slice.insert(def);
      worklist.push_back(def);
    }
  }
  return true;
}

struct DLScheduleEpiloguesPass
    : public dl::impl::DLScheduleEpiloguesBase<DLScheduleEpiloguesPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> accumulations;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && op.getNumReductionLoops() > 0 &&
          op->getNumResults() == 1)
        accumulations.push_back(op);
    });
    for (linalg::LinalgOp acc : accumulations) {
      Operation *user = onlyUser(acc->getResult(0));
      Operation *reshape = nullptr;
      if (user && isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user)) {
        reshape = user;
        user = onlyUser(reshape->getResult(0));
      }
      auto consumer = dyn_cast_or_null<linalg::GenericOp>(user);
      if (!consumer || !consumer.hasPureTensorSemantics() ||
          consumer.getNumReductionLoops() != 0 ||
          consumer->getBlock() != acc->getBlock() ||
          (reshape && reshape->getBlock() != acc->getBlock()) ||
          !isMemoryEffectFree(consumer))
        continue;
      // Already next to it (the reshape, views and constants between count
      // as next).
      bool adjacent = true;
      for (Operation *op = acc->getNextNode(); op != consumer.getOperation();
           op = op->getNextNode())
        adjacent &= op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
                    !isa<linalg::LinalgOp>(op);
      if (adjacent)
        continue;
      // The reshape first (with what it needs), then what the consumer
      // needs, each group in program order.
      llvm::SetVector<Operation *> forReshape, forConsumer;
      if ((reshape && !dependencesBetween(reshape, acc, reshape, forReshape)) ||
          !dependencesBetween(consumer, acc, consumer, forConsumer))
        continue;
      Operation *point = acc;
      auto moveInOrder = [&](ArrayRef<Operation *> ops) {
        SmallVector<Operation *> sorted(ops);
        llvm::sort(sorted, [](Operation *x, Operation *y) {
          return x->isBeforeInBlock(y);
        });
        for (Operation *op : sorted) {
          op->moveAfter(point);
          point = op;
        }
      };
      moveInOrder(forReshape.getArrayRef());
      if (reshape) {
        reshape->moveAfter(point);
        point = reshape;
      }
      SmallVector<Operation *> rest;
      for (Operation *op : forConsumer)
        if (op != reshape && !forReshape.contains(op))
          rest.push_back(op);
      moveInOrder(rest);
      consumer->moveAfter(point);
    }
  }
};

} // namespace
