//===- CudaShim.cpp - the mgpu* calls of GPU host code, on the driver -----===//
//
// The host side of a target="cuda" function calls a few `mgpu*` functions
// (module load, kernel launch, streams, device memory), which MLIR's
// libmlir_cuda_runtime.so implements on the CUDA driver API; that library
// needs libLLVM.so (1.8 GB of wheels), which a deployment must not. These are
// the same entry points, ours, on the driver API loaded lazily with dlopen:
// a library exported by dlc.export links this file, and needs libcuda.so.1
// only when a CUDA function runs. Two calls of dlc's own copy a function's
// arguments into device memory and its results out of it
// (dlc_cuda_copy_to_device/_host): the host code keeps every buffer in device
// memory (dl-gpu-device-memory).
//
// Errors: the first failed driver call (or a missing libcuda.so.1) is kept
// per thread and later calls do nothing but release memory, streams and
// modules; the exported entry point reads it
// with dlc_cuda_take_error() after the call and returns it as an error,
// where upstream's wrappers print and carry on.
//
// Device memory is stream-ordered where the driver has it (CUDA 11.2 on:
// cuMemAllocAsync/cuMemFreeAsync on the device's default pool, kept mapped
// between calls): a temporary freed by one kernel chain is reused by the
// next without the device-wide synchronization of cuMemFree or the mapping
// cost of cuMemAlloc. Older drivers get cuMemAlloc/cuMemFree.
//
// Constants (weights) the kernels read are uploaded once per loaded module
// (dlc_cuda_resident, called by the host code dl-gpu-device-memory writes)
// and stay in device memory for the life of the process.
//
// Signatures: those of the pinned MLIR's gpu-to-llvm and gpu.launch_func
// translation; trailing arguments some versions add (mgpuModuleLoad's size,
// mgpuLaunchKernel's parameter count) are accepted and not read.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <dlfcn.h>
#include <mutex>

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = uint64_t;
using Handle = void *;

constexpr unsigned kStreamNonBlocking = 1;
constexpr unsigned kEventDisableTiming = 2;
constexpr unsigned kMemAttachGlobal = 1;
constexpr int kMemPoolAttrReleaseThreshold = 4; // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD

struct Driver {
  void *library = nullptr;
  char loadError[256] = {0};
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(Handle *, CUdevice) = nullptr;
  CUresult (*cuCtxPushCurrent)(Handle) = nullptr;
  CUresult (*cuCtxPopCurrent)(Handle *) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char **) = nullptr;
  CUresult (*cuModuleLoadData)(Handle *, const void *) = nullptr;
  CUresult (*cuModuleLoadDataEx)(Handle *, const void *, unsigned, int *,
                                 void **) = nullptr;
  CUresult (*cuModuleUnload)(Handle) = nullptr;
  CUresult (*cuModuleGetFunction)(Handle *, Handle, const char *) = nullptr;
  CUresult (*cuLaunchKernel)(Handle, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, Handle, void **,
                             void **) = nullptr;
  CUresult (*cuStreamCreate)(Handle *, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(Handle) = nullptr;
  CUresult (*cuStreamSynchronize)(Handle) = nullptr;
  CUresult (*cuStreamWaitEvent)(Handle, Handle, unsigned) = nullptr;
  CUresult (*cuEventCreate)(Handle *, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(Handle) = nullptr;
  CUresult (*cuEventSynchronize)(Handle) = nullptr;
  CUresult (*cuEventRecord)(Handle, Handle) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t) = nullptr;
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, Handle) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, Handle) = nullptr;
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t,
                               Handle) = nullptr;
  CUresult (*cuCtxSynchronize)(void) = nullptr;
  // Stream-ordered allocation: all four, or none (then cuMemAlloc/Free).
  CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, Handle) = nullptr;
  CUresult (*cuMemFreeAsync)(CUdeviceptr, Handle) = nullptr;
  CUresult (*cuDeviceGetDefaultMemPool)(Handle *, CUdevice) = nullptr;
  CUresult (*cuMemPoolSetAttribute)(Handle, int, void *) = nullptr;
  Handle context = nullptr;
};

Driver driver;
std::once_flag loaded;
thread_local char lastError[512] = {0};
thread_local int32_t defaultDevice = 0;

template <typename F> bool bind(F &slot, const char *name, const char *v2) {
  void *symbol = v2 ? dlsym(driver.library, v2) : nullptr;
  if (!symbol)
    symbol = dlsym(driver.library, name);
  slot = reinterpret_cast<F>(symbol);
  if (!symbol)
    std::snprintf(driver.loadError, sizeof driver.loadError,
                  "libcuda.so.1 has no %s", name);
  return symbol != nullptr;
}

/// Binds what drivers before CUDA 11.2 lack; leaves `slot` null if absent.
template <typename F> void bindOptional(F &slot, const char *name) {
  slot = reinterpret_cast<F>(dlsym(driver.library, name));
}

/// The stream-ordered allocator, where the driver has it: the default pool
/// of `device` keeps what is freed mapped (release threshold: no limit), so
/// a call's temporaries are the previous call's memory again.
void enableStreamOrderedAllocation(CUdevice device) {
  bindOptional(driver.cuMemAllocAsync, "cuMemAllocAsync");
  bindOptional(driver.cuMemFreeAsync, "cuMemFreeAsync");
  bindOptional(driver.cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool");
  bindOptional(driver.cuMemPoolSetAttribute, "cuMemPoolSetAttribute");
  Handle pool = nullptr;
  uint64_t threshold = UINT64_MAX;
  bool usable =
      driver.cuMemAllocAsync && driver.cuMemFreeAsync &&
      driver.cuDeviceGetDefaultMemPool && driver.cuMemPoolSetAttribute &&
      driver.cuDeviceGetDefaultMemPool(&pool, device) == 0 &&
      driver.cuMemPoolSetAttribute(pool, kMemPoolAttrReleaseThreshold,
                                   &threshold) == 0;
  if (!usable) {
    driver.cuMemAllocAsync = nullptr;
    driver.cuMemFreeAsync = nullptr;
  }
}

void load() {
  const char *path = std::getenv("DLC_LIBCUDA") ? std::getenv("DLC_LIBCUDA")
                                                : "libcuda.so.1";
  driver.library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!driver.library) {
    const char *why = dlerror();
    std::snprintf(driver.loadError, sizeof driver.loadError,
                  "the CUDA driver (%s) could not be loaded: %s", path,
                  why ? why : "not found");
    return;
  }
  bool ok = bind(driver.cuInit, "cuInit", nullptr) &&
            bind(driver.cuDeviceGet, "cuDeviceGet", nullptr) &&
            bind(driver.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",
                 nullptr) &&
            bind(driver.cuCtxPushCurrent, "cuCtxPushCurrent",
                 "cuCtxPushCurrent_v2") &&
            bind(driver.cuCtxPopCurrent, "cuCtxPopCurrent",
                 "cuCtxPopCurrent_v2") &&
            bind(driver.cuGetErrorName, "cuGetErrorName", nullptr) &&
            bind(driver.cuModuleLoadData, "cuModuleLoadData", nullptr) &&
            bind(driver.cuModuleLoadDataEx, "cuModuleLoadDataEx", nullptr) &&
            bind(driver.cuModuleUnload, "cuModuleUnload", nullptr) &&
            bind(driver.cuModuleGetFunction, "cuModuleGetFunction", nullptr) &&
            bind(driver.cuLaunchKernel, "cuLaunchKernel", nullptr) &&
            bind(driver.cuStreamCreate, "cuStreamCreate", nullptr) &&
            bind(driver.cuStreamDestroy, "cuStreamDestroy",
                 "cuStreamDestroy_v2") &&
            bind(driver.cuStreamSynchronize, "cuStreamSynchronize", nullptr) &&
            bind(driver.cuStreamWaitEvent, "cuStreamWaitEvent", nullptr) &&
            bind(driver.cuEventCreate, "cuEventCreate", nullptr) &&
            bind(driver.cuEventDestroy, "cuEventDestroy",
                 "cuEventDestroy_v2") &&
            bind(driver.cuEventSynchronize, "cuEventSynchronize", nullptr) &&
            bind(driver.cuEventRecord, "cuEventRecord", nullptr) &&
            bind(driver.cuMemAlloc, "cuMemAlloc", "cuMemAlloc_v2") &&
            bind(driver.cuMemAllocManaged, "cuMemAllocManaged", nullptr) &&
            bind(driver.cuMemFree, "cuMemFree", "cuMemFree_v2") &&
            bind(driver.cuMemcpyAsync, "cuMemcpyAsync", nullptr) &&
            bind(driver.cuMemcpyHtoD, "cuMemcpyHtoD", "cuMemcpyHtoD_v2") &&
            bind(driver.cuMemcpyDtoH, "cuMemcpyDtoH", "cuMemcpyDtoH_v2") &&
            bind(driver.cuMemsetD32Async, "cuMemsetD32Async", nullptr) &&
            bind(driver.cuMemsetD16Async, "cuMemsetD16Async", nullptr) &&
            bind(driver.cuCtxSynchronize, "cuCtxSynchronize", nullptr);
  if (!ok) {
    dlclose(driver.library);
    driver.library = nullptr;
    return;
  }
  CUresult status = driver.cuInit(0);
  CUdevice device = 0;
  if (status == 0)
    status = driver.cuDeviceGet(&device, defaultDevice);
  if (status == 0)
    status = driver.cuDevicePrimaryCtxRetain(&driver.context, device);
  if (status != 0) {
    const char *name = nullptr;
    driver.cuGetErrorName(status, &name);
    std::snprintf(driver.loadError, sizeof driver.loadError,
                  "no CUDA device could be used (%s)", name ? name : "error");
    driver.library = nullptr;
    return;
  }
  enableStreamOrderedAllocation(device);
}

/// Whether driver calls can be made on this thread: the driver is loaded and
/// no earlier call of this thread failed.
bool ready() {
  std::call_once(loaded, load);
  if (!driver.library) {
    if (!lastError[0])
      std::snprintf(lastError, sizeof lastError, "%s", driver.loadError);
    return false;
  }
  return lastError[0] == 0;
}

/// Whether the driver is loaded, an earlier error or not: releases (frees,
/// stream and module destruction) still run after a failed call.
bool loadedDriver() {
  std::call_once(loaded, load);
  return driver.library != nullptr;
}

void check(CUresult status, const char *call) {
  if (status == 0 || lastError[0])
    return;
  const char *name = nullptr;
  driver.cuGetErrorName(status, &name);
  std::snprintf(lastError, sizeof lastError, "%s failed with %s", call,
                name ? name : "an unknown error");
}

/// The device's primary context, current for the scope of one call.
struct Scoped {
  Scoped() { check(driver.cuCtxPushCurrent(driver.context), "cuCtxPushCurrent"); }
  ~Scoped() {
    Handle previous = nullptr;
    driver.cuCtxPopCurrent(&previous);
  }
};

/// Runs the driver calls of `copy` (each through check()) in the device's
/// context, unless there is nothing to copy; returns whether they all
/// worked (the first error is kept, as for the other calls).
template <typename F> int synchronousCopy(size_t bytes, F copy) {
  if (bytes == 0)
    return 1;
  if (!ready())
    return 0;
  Scoped scoped;
  copy();
  return lastError[0] == 0;
}

} // namespace

extern "C" {

/// The first error of this thread's CUDA calls since the last take, or
/// NULL; clears it.
const char *dlc_cuda_take_error(void) {
  static thread_local char taken[512];
  if (!lastError[0])
    return nullptr;
  std::memcpy(taken, lastError, sizeof taken);
  lastError[0] = 0;
  return taken;
}

/// Whether a CUDA device can be used; `why` (if not NULL) gets the reason
/// when not.
int dlc_cuda_available(const char **why) {
  std::call_once(loaded, load);
  if (why)
    *why = driver.library ? nullptr : driver.loadError;
  return driver.library != nullptr;
}

/// Copies `bytes` from host memory into device memory allocated by
/// mgpuMemAlloc, synchronously: the arguments of a function, before it runs.
int dlc_cuda_copy_to_device(void *device, const void *host, size_t bytes) {
  return synchronousCopy(bytes, [&] {
    check(driver.cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(device), host,
                              bytes),
          "cuMemcpyHtoD");
  });
}

/// Copies `bytes` from device memory into host memory, synchronously: the
/// results of a function, after it returned (its kernels have finished: the
/// host code waits for every stream it used).
int dlc_cuda_copy_to_host(void *host, const void *device, size_t bytes) {
  return synchronousCopy(bytes, [&] {
    check(driver.cuMemcpyDtoH(host, reinterpret_cast<CUdeviceptr>(device),
                              bytes),
          "cuMemcpyDtoH");
  });
}

/// Copies `bytes` between two device buffers, synchronously (an output of a
/// device-resident call that must not alias an input).
int dlc_cuda_copy_on_device(void *target, const void *source, size_t bytes) {
  return synchronousCopy(bytes, [&] {
    check(driver.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(target),
                               reinterpret_cast<CUdeviceptr>(source), bytes,
                               nullptr),
          "cuMemcpyAsync");
    if (!lastError[0])
      check(driver.cuCtxSynchronize(), "cuCtxSynchronize");
  });
}

/// Waits for all work of the device (the caller's, on any stream): what a
/// function's kernels read must be written first. Returns whether it worked.
int dlc_cuda_synchronize(void) {
  if (!ready())
    return 0;
  Scoped scoped;
  check(driver.cuCtxSynchronize(), "cuCtxSynchronize");
  return lastError[0] == 0;
}

/// The device copy of the constant `host` (`bytes` long), made at the first
/// call and kept in `*slot` (a global of the loaded module's host code): a
/// module's weights cross the bus once, not at every call. Null (with the
/// error kept) if the upload failed.
void *dlc_cuda_resident(void **slot, const void *host, uint64_t bytes) {
  static std::mutex uploading;
  auto *cell = reinterpret_cast<std::atomic<void *> *>(slot);
  if (void *device = cell->load(std::memory_order_acquire))
    return device;
  if (!ready())
    return nullptr;
  std::lock_guard<std::mutex> lock(uploading);
  if (void *device = cell->load(std::memory_order_relaxed))
    return device;
  Scoped scoped;
  CUdeviceptr pointer = 0;
  check(driver.cuMemAlloc(&pointer, bytes ? bytes : 1), "cuMemAlloc");
  if (!lastError[0] && bytes)
    check(driver.cuMemcpyHtoD(pointer, host, bytes), "cuMemcpyHtoD");
  // A pageable upload may still be in flight when cuMemcpyHtoD returns, and
  // the kernels run on non-blocking streams: waited for here, once.
  if (!lastError[0])
    check(driver.cuCtxSynchronize(), "cuCtxSynchronize");
  if (lastError[0]) {
    if (pointer)
      driver.cuMemFree(pointer);
    return nullptr;
  }
  cell->store(reinterpret_cast<void *>(pointer), std::memory_order_release);
  return reinterpret_cast<void *>(pointer);
}

void mgpuSetDefaultDevice(int32_t device) { defaultDevice = device; }

Handle mgpuModuleLoad(void *data, size_t /*size*/) {
  Handle module = nullptr;
  if (!ready())
    return nullptr;
  Scoped scoped;
  check(driver.cuModuleLoadData(&module, data), "cuModuleLoadData");
  return module;
}

Handle mgpuModuleLoadJIT(void *data, int optLevel, size_t /*size*/) {
  Handle module = nullptr;
  if (!ready())
    return nullptr;
  Scoped scoped;
  int options[] = {7 /*CU_JIT_OPTIMIZATION_LEVEL*/};
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  check(driver.cuModuleLoadDataEx(&module, data, 1, options, values),
        "cuModuleLoadDataEx (PTX)");
  return module;
}

void mgpuModuleUnload(Handle module) {
  if (module && loadedDriver())
    check(driver.cuModuleUnload(module), "cuModuleUnload");
}

Handle mgpuModuleGetFunction(Handle module, const char *name) {
  Handle function = nullptr;
  if (!ready())
    return nullptr;
  if (!module) {
    // The module loader (a global constructor of the host code) did not run:
    // an error, not a launch silently skipped.
    std::snprintf(lastError, sizeof lastError,
                  "the GPU module of kernel %s was not loaded", name);
    return nullptr;
  }
  check(driver.cuModuleGetFunction(&function, module, name),
        "cuModuleGetFunction");
  return function;
}

void mgpuLaunchKernel(Handle function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, Handle stream,
                      void **params, void **extra, size_t /*count*/) {
  if (!ready())
    return;
  if (!function) {
    std::snprintf(lastError, sizeof lastError, "no kernel to launch");
    return;
  }
  // A grid without blocks (a batch of 0 rows) computes nothing; the driver
  // would refuse it as an invalid value.
  if (gridX <= 0 || gridY <= 0 || gridZ <= 0)
    return;
  Scoped scoped;
  check(driver.cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                              blockZ, sharedBytes, stream, params, extra),
        "cuLaunchKernel");
}

Handle mgpuStreamCreate(void) {
  Handle stream = nullptr;
  if (!ready())
    return nullptr;
  Scoped scoped;
  check(driver.cuStreamCreate(&stream, kStreamNonBlocking), "cuStreamCreate");
  return stream;
}

void mgpuStreamDestroy(Handle stream) {
  if (stream && loadedDriver())
    check(driver.cuStreamDestroy(stream), "cuStreamDestroy");
}

void mgpuStreamSynchronize(Handle stream) {
  if (stream && ready())
    check(driver.cuStreamSynchronize(stream), "cuStreamSynchronize");
}

void mgpuStreamWaitEvent(Handle stream, Handle event) {
  if (stream && event && ready())
    check(driver.cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent");
}

Handle mgpuEventCreate(void) {
  Handle event = nullptr;
  if (!ready())
    return nullptr;
  Scoped scoped;
  check(driver.cuEventCreate(&event, kEventDisableTiming), "cuEventCreate");
  return event;
}

void mgpuEventDestroy(Handle event) {
  if (event && loadedDriver())
    check(driver.cuEventDestroy(event), "cuEventDestroy");
}

void mgpuEventSynchronize(Handle event) {
  if (event && ready())
    check(driver.cuEventSynchronize(event), "cuEventSynchronize");
}

void mgpuEventRecord(Handle event, Handle stream) {
  if (event && ready())
    check(driver.cuEventRecord(event, stream), "cuEventRecord");
}

void *mgpuMemAlloc(uint64_t bytes, Handle stream, bool hostShared) {
  CUdeviceptr pointer = 0;
  if (bytes == 0 || !ready())
    return nullptr;
  Scoped scoped;
  if (hostShared)
    check(driver.cuMemAllocManaged(&pointer, bytes, kMemAttachGlobal),
          "cuMemAllocManaged");
  else if (driver.cuMemAllocAsync)
    // Usable by the work queued on `stream` after this (the host code
    // allocates on the stream that then uses the buffer), or by any stream
    // once `stream` has been waited for.
    check(driver.cuMemAllocAsync(&pointer, bytes, stream), "cuMemAllocAsync");
  else
    check(driver.cuMemAlloc(&pointer, bytes), "cuMemAlloc");
  return reinterpret_cast<void *>(pointer);
}

void mgpuMemFree(void *pointer, Handle stream) {
  if (pointer && loadedDriver()) {
    Scoped scoped;
    if (driver.cuMemFreeAsync) {
      // Returned to the pool once the work queued on `stream` before it
      // (the kernels that read the buffer) is done.
      check(driver.cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(pointer),
                                  stream),
            "cuMemFreeAsync");
      return;
    }
    // The free is ordered after the work queued on `stream` (the kernels
    // that read the buffer: gpu-async-region chains them on it): waited for
    // first, rather than relying on cuMemFree's implicit synchronization.
    if (stream)
      check(driver.cuStreamSynchronize(stream), "cuStreamSynchronize");
    check(driver.cuMemFree(reinterpret_cast<CUdeviceptr>(pointer)),
          "cuMemFree");
  }
}

void mgpuMemcpy(void *destination, void *source, size_t bytes, Handle stream) {
  if (bytes && ready())
    check(driver.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(destination),
                               reinterpret_cast<CUdeviceptr>(source), bytes,
                               stream),
          "cuMemcpyAsync");
}

void mgpuMemset32(void *destination, unsigned value, size_t count,
                  Handle stream) {
  if (count && ready())
    check(driver.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(destination),
                                  value, count, stream),
          "cuMemsetD32Async");
}

void mgpuMemset16(void *destination, unsigned short value, size_t count,
                  Handle stream) {
  if (count && ready())
    check(driver.cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(destination),
                                  value, count, stream),
          "cuMemsetD16Async");
}

} // extern "C"
