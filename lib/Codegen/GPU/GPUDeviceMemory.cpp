//===- GPUDeviceMemory.cpp - dl-gpu-device-memory -------------------------===//
//
// Memory the GPU kernels can reach, in the host functions of a
// gpu.container_module (after kernel outlining):
//
//   memref.alloc      -> gpu.alloc            (device memory, not managed)
//   memref.dealloc    -> gpu.dealloc
//   memref.get_global -> of a constant: its device copy, uploaded by the
//                        first call of the loaded module and kept
//                        (dlc_cuda_resident in dlc's CUDA shim, its address
//                        in a module global of the host code), so weights
//                        cross the bus once; of a mutable global, or a
//                        constant the function returns (the caller frees
//                        results): gpu.alloc + gpu.memcpy from the global,
//                        freed before each return
//
// The allocations, copies and deallocations are synchronous ops, which the
// pipeline's gpu-async-region (run next; gpu-to-llvm lowers only
// asynchronous ones) chains on the kernels' stream: the host waits for the
// device once per call, not at each buffer (ResNet-18's host code waited
// 205 times per call), and dlc's CUDA shim allocates and frees in stream
// order (cuMemAllocAsync/cuMemFreeAsync: a buffer is reused only once the
// kernels before its free are done).
//
// Device memory, not managed: the host code only launches kernels and handles
// pointers (dl-gpu-check-mapped refuses any host access to a buffer), so
// nothing needs the host to reach these buffers, and managed memory both
// moves data slowly (page faults) and can hang an over-subscribed GPU. The
// caller passes arguments in device memory and copies results back (dlc's
// Python runtime and dlc.export's entry points do both, at the function
// boundary), then frees them with cuMemFree. Upstream has the gpu.alloc op and
// its runtime lowering but no pass choosing it for host buffers, hence ours;
// nor a way to keep a constant on the device across calls: the resident
// copy is built here in the LLVM dialect (a call and a memref descriptor,
// cast back to the memref type; gpu-to-llvm's own casts meet it and
// reconcile-unrealized-casts removes both).
//
// Folded away: a shape buffer (a static 1-D buffer of indices that the host
// code only fills and hands to memref.reshape, as a reshape with several
// run-time sizes in one group lowers). Its memref.reshape becomes a
// memref.reinterpret_cast to the stored sizes with row-major strides (the
// source has the identity layout), its loads the stored values: no buffer,
// host or device, remains (upstream's gpu-to-llvm does not lower
// memref.reshape).
//
// Refused: any other memref.alloca in a host function (stack memory the
// device cannot reach), with a diagnostic naming it.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLGPUDEVICEMEMORY
#include "dl/Codegen/GPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

bool mlir::dl::isHostShapeBuffer(Value buffer) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!type || type.getRank() != 1 || !type.hasStaticShape() ||
      !type.getElementType().isIntOrIndex())
    return false;
  return llvm::all_of(buffer.getUsers(), [&](Operation *user) {
    if (auto store = dyn_cast<memref::StoreOp>(user))
      return store.getMemref() == buffer && store.getValueToStore() != buffer;
    if (auto load = dyn_cast<memref::LoadOp>(user)) // a size of the view
      return load.getMemref() == buffer;
    if (auto reshape = dyn_cast<memref::ReshapeOp>(user))
      return reshape.getShape() == buffer && reshape.getSource() != buffer;
    return isa<memref::DeallocOp>(user);
  });
}

namespace {

/// A device buffer of `type`: a synchronous gpu.alloc, which gpu-async-region
/// (run next in dl-gpu-pipeline) chains on the stream of the kernels around
/// it, so that the host does not wait for the device at each allocation (the
/// shim's stream-ordered allocator makes the memory ready in stream order).
Value createAlloc(OpBuilder &b, Location loc, MemRefType type,
                  ValueRange dynamicSizes, ValueRange symbols) {
  return gpu::AllocOp::create(b, loc, type, Type(), ValueRange{}, dynamicSizes,
                              symbols, /*hostShared=*/false)
      .getMemref();
}

/// Copies `source` into `target`: a synchronous gpu.memcpy, chained by
/// gpu-async-region on the stream of the allocation before it and of the
/// kernels after it (a copy on a stream of its own would race with memory
/// the stream-ordered allocator hands out on the kernels' stream).
void createCopy(OpBuilder &b, Location loc, Value source, Value target) {
  gpu::MemcpyOp::create(b, loc, Type(), ValueRange{}, target, source);
}

/// Frees `memref`: a synchronous gpu.dealloc, chained by gpu-async-region
/// after the kernels that use the buffer (mgpuMemFree(ptr, stream): returned
/// to the pool in stream order).
void createDealloc(OpBuilder &b, Location loc, Value memref) {
  gpu::DeallocOp::create(b, loc, Type(), ValueRange{}, memref);
}

constexpr StringLiteral kResidentFunction = "dlc_cuda_resident";

/// Whether `global` (what a memref.get_global names) can be kept on the
/// device across calls: a constant with an initial value and a static,
/// strided layout (its descriptor is known at compile time).
bool residentCandidate(memref::GlobalOp global) {
  if (!global || !global.getConstant() || !global.getInitialValue())
    return false;
  MemRefType type = global.getType();
  int64_t offset;
  SmallVector<int64_t> strides;
  return type.hasStaticShape() &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic);
}

/// The device copy of the constant `global` (see the header): the module
/// global holding its address (null until the first call), the call that
/// fills it, and a memref descriptor around the address.
Value createResident(OpBuilder &b, memref::GetGlobalOp getGlobal,
                     memref::GlobalOp global, ModuleOp module,
                     llvm::StringMap<LLVM::GlobalOp> &slots,
                     Operation *&hostRead) {
  Location loc = getGlobal.getLoc();
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  OpBuilder top = OpBuilder::atBlockEnd(module.getBody());
  if (!module.lookupSymbol(kResidentFunction))
    LLVM::LLVMFuncOp::create(
        top, loc, kResidentFunction,
        LLVM::LLVMFunctionType::get(ptr, {ptr, ptr, i64}));
  LLVM::GlobalOp &slot = slots[global.getSymName()];
  if (!slot) {
    slot = LLVM::GlobalOp::create(top, loc, ptr, /*isConstant=*/false,
                                  LLVM::Linkage::Internal,
                                  ("__dlc_resident_" + global.getSymName()).str(),
                                  Attribute());
    SymbolTable(module).insert(slot); // a unique name
    OpBuilder inside(ctx);
    inside.createBlock(&slot.getInitializerRegion());
    LLVM::ReturnOp::create(inside, loc,
                           LLVM::ZeroOp::create(inside, loc, ptr).getResult());
  }

  MemRefType type = global.getType();
  int64_t elementBytes =
      DataLayout::closest(getGlobal).getTypeSize(type.getElementType());
  int64_t bytes = type.getNumElements() * elementBytes;
  Value address = LLVM::AddressOfOp::create(b, loc, slot);
  auto extract = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, getGlobal.getResult());
  hostRead = extract;
  Value hostIndex = extract.getResult();
  Value hostInt = arith::IndexCastOp::create(b, loc, i64, hostIndex);
  Value host = LLVM::IntToPtrOp::create(b, loc, ptr, hostInt);
  Value size = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(bytes));
  Value device = LLVM::CallOp::create(b, loc, TypeRange{ptr},
                                      kResidentFunction,
                                      ValueRange{address, host, size})
                     .getResult();

  // The descriptor of memref-to-llvm: {allocated, aligned, offset, sizes,
  // strides}, the last two left out at rank 0.
  int64_t offset;
  SmallVector<int64_t> strides;
  (void)type.getStridesAndOffset(strides, offset);
  int64_t rank = type.getRank();
  SmallVector<Type> fields = {ptr, ptr, i64};
  if (rank > 0) {
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
  }
  auto descriptorType = LLVM::LLVMStructType::getLiteral(ctx, fields);
  Value descriptor = LLVM::PoisonOp::create(b, loc, descriptorType);
  auto insert = [&](Value value, ArrayRef<int64_t> position) {
    descriptor =
        LLVM::InsertValueOp::create(b, loc, descriptor, value, position);
  };
  auto constant = [&](int64_t value) -> Value {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(value));
  };
  insert(device, {0});
  insert(device, {1});
  insert(constant(offset), {2});
  for (int64_t d = 0; d < rank; ++d) {
    insert(constant(type.getDimSize(d)), {3, d});
    insert(constant(strides[d]), {4, d});
  }
  return UnrealizedConversionCastOp::create(b, loc, type, descriptor)
      .getResult(0);
}

struct DLGPUDeviceMemory
    : public dl::impl::DLGPUDeviceMemoryBase<DLGPUDeviceMemory> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(convert(func)))
        return signalPassFailure();
  }

  /// The module globals holding resident constants' device addresses, one
  /// per constant (shared by the module's functions).
  llvm::StringMap<LLVM::GlobalOp> slots;

  /// Replaces the memref.reshape ops reading a shape buffer whose every
  /// element is stored once, at a constant index, by reinterpret casts; the
  /// buffer goes. Fails (leaving it) where it cannot.
  static void foldShapeBuffer(Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    SmallVector<Value> stored(type.getDimSize(0));
    SmallVector<Operation *> dead;
    for (Operation *user : buffer.getUsers()) {
      auto store = dyn_cast<memref::StoreOp>(user);
      if (!store) {
        if (isa<memref::DeallocOp>(user))
          dead.push_back(user);
        continue;
      }
      std::optional<int64_t> index =
          getConstantIntValue(store.getIndices().front());
      if (!index || *index < 0 || *index >= type.getDimSize(0) || stored[*index])
        return;
      stored[*index] = store.getValueToStore();
      dead.push_back(store);
    }
    if (llvm::any_of(stored, [](Value v) { return !v; }))
      return;
    // Each stored value is available wherever the buffer is read: stores
    // come before the reads in the host code bufferization wrote.
    for (Operation *user : llvm::to_vector(buffer.getUsers())) {
      OpBuilder b(user);
      Location loc = user->getLoc();
      auto asIndex = [&](Value v) -> Value {
        return v.getType().isIndex()
                   ? v
                   : arith::IndexCastOp::create(b, loc, b.getIndexType(), v)
                         .getResult();
      };
      if (auto load = dyn_cast<memref::LoadOp>(user)) {
        std::optional<int64_t> index =
            getConstantIntValue(load.getIndices().front());
        if (!index)
          return;
        load.replaceAllUsesWith(stored[*index]);
        load.erase();
      } else if (auto reshape = dyn_cast<memref::ReshapeOp>(user)) {
        auto result = cast<MemRefType>(reshape.getType());
        if (!result.getLayout().isIdentity())
          return;
        SmallVector<OpFoldResult> sizes, strides(result.getRank());
        for (int64_t dim = 0; dim < result.getRank(); ++dim)
          sizes.push_back(result.isDynamicDim(dim)
                              ? OpFoldResult(asIndex(stored[dim]))
                              : OpFoldResult(b.getIndexAttr(result.getDimSize(dim))));
        Value stride = arith::ConstantIndexOp::create(b, loc, 1);
        for (int64_t dim = result.getRank() - 1; dim >= 0; --dim) {
          strides[dim] = stride;
          stride = arith::MulIOp::create(
              b, loc, stride, getValueOrCreateConstantIndexOp(b, loc, sizes[dim]));
        }
        Value cast = memref::ReinterpretCastOp::create(
            b, loc, MemRefType::get(result.getShape(), result.getElementType(),
                                    StridedLayoutAttr::get(
                                        b.getContext(), 0,
                                        SmallVector<int64_t>(result.getRank(),
                                                             ShapedType::kDynamic)),
                                    result.getMemorySpace()),
            reshape.getSource(), b.getIndexAttr(0), sizes, strides);
        // Back to the identity layout the users expect (the strides are the
        // row-major ones).
        Value identity = memref::CastOp::create(b, loc, result, cast);
        reshape.replaceAllUsesWith(identity);
        reshape.erase();
      }
    }
    if (!buffer.getUsers().empty() &&
        llvm::any_of(buffer.getUsers(), [&](Operation *user) {
          return !llvm::is_contained(dead, user);
        }))
      return;
    for (Operation *op : dead)
      op->erase();
    buffer.getDefiningOp()->erase();
  }

  LogicalResult convert(func::FuncOp func) {
    SmallVector<Value> shapeBuffers;
    func.walk([&](Operation *op) {
      if (isa<memref::AllocOp, memref::AllocaOp>(op) &&
          dl::isHostShapeBuffer(op->getResult(0)))
        shapeBuffers.push_back(op->getResult(0));
    });
    for (Value buffer : shapeBuffers)
      foldShapeBuffer(buffer);

    WalkResult stack = func.walk([](memref::AllocaOp alloca) {
      if (dl::isHostShapeBuffer(alloca.getResult()))
        return WalkResult::advance();
      alloca.emitError("dl-gpu-device-memory: a stack buffer in a host "
                       "function cannot be reached by GPU kernels");
      return WalkResult::interrupt();
    });
    if (stack.wasInterrupted())
      return failure();

    SmallVector<memref::AllocOp> allocs;
    SmallVector<memref::DeallocOp> deallocs;
    SmallVector<memref::GetGlobalOp> globals;
    func.walk([&](Operation *op) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        if (!dl::isHostShapeBuffer(alloc.getResult()))
          allocs.push_back(alloc);
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        if (!dl::isHostShapeBuffer(dealloc.getMemref()))
          deallocs.push_back(dealloc);
      }
      else if (auto global = dyn_cast<memref::GetGlobalOp>(op))
        globals.push_back(global);
    });
    for (memref::AllocOp alloc : allocs) {
      OpBuilder b(alloc);
      Value device =
          createAlloc(b, alloc.getLoc(), alloc.getType(),
                      alloc.getDynamicSizes(), alloc.getSymbolOperands());
      alloc.replaceAllUsesWith(device);
      alloc.erase();
    }
    for (memref::DeallocOp dealloc : deallocs) {
      OpBuilder b(dealloc);
      createDealloc(b, dealloc.getLoc(), dealloc.getMemref());
      dealloc.erase();
    }
    SmallVector<Value> copies;
    auto module = getOperation();
    SymbolTableCollection symbols;
    for (memref::GetGlobalOp global : globals) {
      OpBuilder b(global);
      b.setInsertionPointAfter(global);
      auto type = cast<MemRefType>(global.getType());
      auto definition =
          symbols.lookupNearestSymbolFrom<memref::GlobalOp>(global,
                                                            global.getNameAttr());
      bool returned = llvm::any_of(global->getUsers(), [](Operation *user) {
        return isa<func::ReturnOp>(user);
      });
      if (!returned && residentCandidate(definition)) {
        Operation *hostRead = nullptr;
        Value device =
            createResident(b, global, definition, module, slots, hostRead);
        global.getResult().replaceAllUsesExcept(device, hostRead);
        continue;
      }
      Value device =
          createAlloc(b, global.getLoc(), type, ValueRange{}, ValueRange{});
      global.getResult().replaceAllUsesWith(device);
      createCopy(b, global.getLoc(), global.getResult(), device);
      copies.push_back(device);
    }
    if (!copies.empty())
      func.walk([&](func::ReturnOp ret) {
        OpBuilder b(ret);
        for (Value copy : copies)
          if (!llvm::is_contained(ret.getOperands(), copy)) // the caller's
            createDealloc(b, ret.getLoc(), copy);
      });
    return success();
  }
};

} // namespace
