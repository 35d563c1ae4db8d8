//===- Donation.cpp - dl-donate-destinations, dl-return-donated -----------===//
//
// Donated arguments (dlc.jit(donate_argnums=...)): a function carrying
// `dl.donate = array<i64: ...>` (one entry per result: the argument the
// result is written into, or -1) returns those results in their arguments'
// buffers instead of new ones, which the runtime hands back in their place
// (a training step updates its parameters in place).
//
//   dl-donate-destinations (tensors, before one-shot bufferization): the
//     destination-style op computing a donated result, when its destination
//     is a fresh tensor.empty it does not read, gets the argument as its
//     destination instead; donated arguments are marked writable and the
//     others not, so bufferization writes into the argument in place where
//     no later read of the old value conflicts, and copies otherwise.
//   dl-return-donated (buffers, right after one-shot bufferization, before
//     the deallocation pipeline): a donated result already in its argument
//     is dropped from the results; any other is copied into its argument at
//     the return (after every returned buffer aliasing an argument being
//     written there is first snapshotted, so no write-back changes another
//     result), then dropped. The function's `dl.donate` stays for the
//     runtime; its results are the kept ones, in order.
//
// Ours: upstream's one-shot bufferization writes into writable arguments
// only where the IR already names them as destinations, and returns every
// result as a new buffer.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/Common/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLDONATEDESTINATIONS
#define GEN_PASS_DEF_DLRETURNDONATED
#include "dl/Codegen/Common/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

constexpr StringLiteral kDonate = "dl.donate";

/// The function's donation map (result -> argument or -1), checked against
/// its signature; empty where it has none (or donates nothing, or is a
/// declaration). Emits an error for a bad map.
FailureOr<SmallVector<int64_t>> donationMap(func::FuncOp func) {
  auto attr = func->getAttrOfType<DenseI64ArrayAttr>(kDonate);
  if (func.isExternal() || !attr)
    return SmallVector<int64_t>{};
  unsigned results = func.getNumResults();
  SmallVector<int64_t> map(attr.asArrayRef());
  if (map.size() != results)
    return func.emitError("dl.donate has ")
           << map.size() << " entries, but the function has " << results
           << " results";
  llvm::SmallDenseSet<int64_t> seen;
  for (auto [result, argument] : llvm::enumerate(map)) {
    if (argument < 0)
      continue;
    if (argument >= static_cast<int64_t>(func.getNumArguments()))
      return func.emitError("dl.donate: result ")
             << result << " names argument " << argument << ", but there are "
             << func.getNumArguments();
    if (!seen.insert(argument).second)
      return func.emitError("dl.donate: argument ")
             << argument << " receives two results";
    if (func.getArgument(argument).getType() !=
        func.getFunctionType().getResult(result))
      return func.emitError("dl.donate: result ")
             << result << " has type " << func.getFunctionType().getResult(result)
             << ", but argument " << argument << " is "
             << func.getArgument(argument).getType();
  }
  if (llvm::all_of(map, [](int64_t a) { return a < 0; }))
    return SmallVector<int64_t>{}; // nothing donated
  return map;
}

func::ReturnOp singleReturn(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return nullptr;
  return dyn_cast<func::ReturnOp>(func.getBody().front().getTerminator());
}

struct DLDonateDestinationsPass
    : public dl::impl::DLDonateDestinationsBase<DLDonateDestinationsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    FailureOr<SmallVector<int64_t>> map = donationMap(func);
    if (failed(map))
      return signalPassFailure();
    if (map->empty())
      return;
    func::ReturnOp ret = singleReturn(func);
    if (!ret)
      return;
    // Only donated arguments may be written: the others are the caller's.
    llvm::SmallDenseSet<int64_t> donated(map->begin(), map->end());
    Builder b(func.getContext());
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (isa<TensorType>(func.getArgument(i).getType()))
        func.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                        b.getBoolAttr(donated.contains(i)));

    for (auto [result, argument] : llvm::enumerate(*map)) {
      if (argument < 0)
        continue;
      auto value = dyn_cast<OpResult>(ret.getOperand(result));
      if (!value)
        continue;
      auto dps = dyn_cast<DestinationStyleOpInterface>(value.getOwner());
      if (!dps || !dps.hasPureTensorSemantics())
        continue;
      OpOperand *init = dps.getTiedOpOperand(value);
      if (!init || !init->get().getDefiningOp<tensor::EmptyOp>() ||
          init->get().getType() != func.getArgument(argument).getType())
        continue;
      // A destination the op reads (an accumulation) keeps its own value.
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(value.getOwner());
          !linalgOp || linalgOp.payloadUsesValueFromOperand(init))
        continue;
      init->set(func.getArgument(argument));
    }
  }
};

/// The function argument `value` views (through view-like ops), or null.
BlockArgument rootArgument(Value value) {
  while (true) {
    if (auto argument = dyn_cast<BlockArgument>(value))
      return argument;
    Operation *op = value.getDefiningOp();
    if (auto view = dyn_cast_or_null<ViewLikeOpInterface>(op)) {
      value = view.getViewSource();
      continue;
    }
    if (auto cast = dyn_cast_or_null<bufferization::ToBufferOp>(op)) {
      value = cast.getTensor();
      continue;
    }
    if (auto cast = dyn_cast_or_null<bufferization::ToTensorOp>(op)) {
      value = cast.getBuffer();
      continue;
    }
    return nullptr;
  }
}

struct DLReturnDonatedPass
    : public dl::impl::DLReturnDonatedBase<DLReturnDonatedPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    FailureOr<SmallVector<int64_t>> map = donationMap(func);
    if (failed(map))
      return signalPassFailure();
    if (map->empty())
      return;
    func::ReturnOp ret = singleReturn(func);
    if (!ret) {
      func.emitError("dl-return-donated: a function with donated arguments "
                     "must have one block");
      return signalPassFailure();
    }
    for (Type type : func.getArgumentTypes())
      if (!isa<MemRefType>(type)) {
        func.emitError("dl-return-donated: expected buffers (run after "
                       "one-shot bufferization), but an argument is ")
            << type;
        return signalPassFailure();
      }

    OpBuilder b(ret);
    Location loc = ret.getLoc();
    SmallVector<Value> operands(ret.getOperands());
    // Arguments written at the return: donated results not computed in place.
    llvm::SmallDenseSet<unsigned> written;
    for (auto [result, argument] : llvm::enumerate(*map))
      if (argument >= 0 && operands[result] != func.getArgument(argument))
        written.insert(argument);
    // Every returned buffer viewing one of them: snapshotted first.
    for (Value &operand : operands) {
      BlockArgument root = rootArgument(operand);
      if (!root || !written.contains(root.getArgNumber()))
        continue;
      auto type = cast<MemRefType>(operand.getType());
      SmallVector<Value> sizes;
      for (auto [d, size] : llvm::enumerate(type.getShape()))
        if (ShapedType::isDynamic(size))
          sizes.push_back(memref::DimOp::create(b, loc, operand, d));
      auto plain = MemRefType::get(type.getShape(), type.getElementType());
      Value copy = memref::AllocOp::create(b, loc, plain, sizes);
      memref::CopyOp::create(b, loc, operand, copy);
      if (plain != type)
        copy = memref::CastOp::create(b, loc, type, copy);
      operand = copy;
    }
    SmallVector<Value> kept;
    SmallVector<unsigned> dropped;
    for (auto [result, argument] : llvm::enumerate(*map)) {
      if (argument < 0) {
        kept.push_back(operands[result]);
        continue;
      }
      Value target = func.getArgument(argument);
      if (operands[result] != target)
        memref::CopyOp::create(b, loc, operands[result], target);
      dropped.push_back(result);
    }
    func::ReturnOp::create(b, loc, kept);
    ret.erase();
    BitVector erase(func.getNumResults());
    for (unsigned result : dropped)
      erase.set(result);
    if (failed(func.eraseResults(erase)))
      return signalPassFailure();
  }
};

} // namespace
