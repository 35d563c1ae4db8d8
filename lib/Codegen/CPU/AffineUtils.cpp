//===- AffineUtils.cpp - helpers shared by the dl-affine-* passes ---------===//

#include "dl/Codegen/CPU/AffineUtils.h"
#include "dl/Support/TypeSize.h"

#include "mlir/Dialect/Affine/Analysis/Utils.h"

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

bool mlir::dl::hasAnalyzableConstants(Operation *nest) {
  constexpr int64_t kLimit = int64_t(1) << 32;
  auto small = [&](AffineMap map) {
    bool ok = true;
    for (AffineExpr result : map.getResults())
      result.walk([&](AffineExpr e) {
        if (auto constant = dyn_cast<AffineConstantExpr>(e))
          ok &= constant.getValue() > -kLimit && constant.getValue() < kLimit;
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

/// An access of forEachDependence, with what decides its dependences: its
/// block (its iteration domain), whether it writes, and its access function
/// split into a class (memref, operands, coefficients) and constant offsets.
struct Access {
  Operation *op;
  affine::MemRefAccess access;
  bool writes;
  int64_t cls = -1; // -1: not purely affine (mod, div): never shared
  SmallVector<int64_t> offsets;
};

Access describe(Operation *op,
                std::map<std::vector<intptr_t>, int64_t> &classes) {
  Access result{op, affine::MemRefAccess(op),
                isa<affine::AffineWriteOpInterface>(op), -1, {}};
  affine::AffineValueMap map;
  result.access.getAccessMap(&map);
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
  SmallVector<Access> described;
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
