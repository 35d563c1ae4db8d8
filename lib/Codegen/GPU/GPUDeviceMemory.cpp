//===- GPUDeviceMemory.cpp - dl-gpu-device-memory -------------------------===//
//
// Memory the GPU kernels can reach, in the host functions of a
// gpu.container_module (after kernel outlining):
//
//   memref.alloc      -> gpu.alloc            (device memory, cuMemAlloc) on a
//                        stream, waited for
//   memref.dealloc    -> gpu.dealloc on a stream, waited for
//   memref.get_global -> gpu.alloc + gpu.memcpy from the global (host to
//                        device, waited for), freed before each return
//
// Device memory, not managed: the host code only launches kernels and handles
// pointers (dl-gpu-check-mapped refuses any host access to a buffer), so
// nothing needs the host to reach these buffers, and managed memory both
// moves data slowly (page faults) and can hang an over-subscribed GPU. The
// caller passes arguments in device memory and copies results back (dlc's
// Python runtime and dlc.export's entry points do both, at the function
// boundary), then frees them with cuMemFree. Upstream has the gpu.alloc op and
// its runtime lowering but no pass choosing it for host buffers, hence ours.
//
// Refused: memref.alloca in a host function (stack memory the device cannot
// reach), with a diagnostic naming it.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLGPUDEVICEMEMORY
#include "dl/Codegen/GPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// A device buffer of `type`, allocated on a stream of its own, waited for
/// (gpu-to-llvm lowers a synchronous gpu.alloc only for host_shared memory).
Value createAlloc(OpBuilder &b, Location loc, MemRefType type,
                  ValueRange dynamicSizes, ValueRange symbols) {
  Type token = gpu::AsyncTokenType::get(b.getContext());
  Value stream =
      gpu::WaitOp::create(b, loc, token, ValueRange{}).getAsyncToken();
  auto alloc = gpu::AllocOp::create(b, loc, type, token, ValueRange{stream},
                                    dynamicSizes, symbols, /*hostShared=*/false);
  gpu::WaitOp::create(b, loc, Type(), ValueRange{alloc.getAsyncToken()});
  return alloc.getMemref();
}

/// Copies `source` into `target` on a stream of its own, waited for (like
/// deallocations, gpu-to-llvm lowers only asynchronous copies).
void createCopy(OpBuilder &b, Location loc, Value source, Value target) {
  Type token = gpu::AsyncTokenType::get(b.getContext());
  Value stream =
      gpu::WaitOp::create(b, loc, token, ValueRange{}).getAsyncToken();
  Value done = gpu::MemcpyOp::create(b, loc, token, ValueRange{stream}, target,
                                     source)
                   .getAsyncToken();
  gpu::WaitOp::create(b, loc, Type(), ValueRange{done});
}

/// Frees `memref` on a stream of its own, waited for:
///   %s = gpu.wait async; %d = gpu.dealloc async [%s] %m; gpu.wait [%d]
/// gpu-to-llvm lowers only asynchronous deallocs (mgpuMemFree(ptr, stream));
/// a synchronous one stayed gpu.dealloc, and the host code could not be
/// translated to LLVM IR (every function with a temporary failed to JIT).
void createDealloc(OpBuilder &b, Location loc, Value memref) {
  Type token = gpu::AsyncTokenType::get(b.getContext());
  Value stream =
      gpu::WaitOp::create(b, loc, token, ValueRange{}).getAsyncToken();
  Value done = gpu::DeallocOp::create(b, loc, token, ValueRange{stream}, memref)
                   .getAsyncToken();
  gpu::WaitOp::create(b, loc, Type(), ValueRange{done});
}

struct DLGPUDeviceMemory
    : public dl::impl::DLGPUDeviceMemoryBase<DLGPUDeviceMemory> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(convert(func)))
        return signalPassFailure();
  }

  LogicalResult convert(func::FuncOp func) {
    WalkResult stack = func.walk([](memref::AllocaOp alloca) {
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
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        allocs.push_back(alloc);
      else if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
        deallocs.push_back(dealloc);
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
    for (memref::GetGlobalOp global : globals) {
      OpBuilder b(global);
      b.setInsertionPointAfter(global);
      auto type = cast<MemRefType>(global.getType());
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
