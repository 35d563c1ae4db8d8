//===- AffineUtils.cpp - helpers shared by the dl-affine-* passes ---------===//

#include "dl/Codegen/CPU/AffineUtils.h"

using namespace mlir;
using affine::AffineForOp;

SmallVector<AffineForOp> mlir::dl::outermostAffineLoops(Operation *root) {
  SmallVector<AffineForOp> loops;
  root->walk<WalkOrder::PreOrder>([&](AffineForOp loop) {
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

bool mlir::dl::forEachDependence(
    ArrayRef<Operation *> accesses, unsigned depth,
    function_ref<bool(Operation *, Operation *, const affine::DependenceResult &,
                      ArrayRef<affine::DependenceComponent>)>
        visit) {
  for (Operation *source : accesses) {
    bool sourceWrites = isa<affine::AffineWriteOpInterface>(source);
    affine::MemRefAccess sourceAccess(source);
    for (Operation *destination : accesses) {
      if (!sourceWrites && !isa<affine::AffineWriteOpInterface>(destination))
        continue;
      SmallVector<affine::DependenceComponent, 2> components;
      affine::DependenceResult result = affine::checkMemrefAccessDependence(
          sourceAccess, affine::MemRefAccess(destination), depth, nullptr,
          &components);
      if (!visit(source, destination, result, components))
        return false;
    }
  }
  return true;
}
