/* A stand-in for libcuda.so.1 on machines without a GPU: the driver calls
 * dlc's CUDA shim (lib/Runtime/CudaShim.cpp) and Python runtime make, with
 * host memory and no kernel execution, each logged as one line to
 * $FAKE_CUDA_LOG. test_export.py and test_gpu.py check with it the plumbing
 * of CUDA functions: which modules and kernels are loaded and launched, that
 * every allocation is freed, what is copied at the function boundary, and how
 * a failed launch ($FAKE_CUDA_FAIL_LAUNCH) reaches the caller.
 *
 * "Device" memory (cuMemAlloc) is like a GPU's to the host: pages mapped with
 * no access, which only the copy calls open for the time of a copy, so host
 * code reading or writing a device buffer directly dies with SIGSEGV. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void logf_(const char *format, const char *text, long long a, long long b) {
  const char *path = getenv("FAKE_CUDA_LOG");
  if (!path) return;
  FILE *log = fopen(path, "a");
  if (!log) return;
  fprintf(log, format, text, a, b);
  fputc('\n', log);
  fclose(log);
}

int cuInit(unsigned flags) { (void)flags; logf_("init%s %lld %lld", "", 0, 0); return 0; }
int cuDeviceGet(int *device, int ordinal) { *device = ordinal; return 0; }
int cuDevicePrimaryCtxRetain(void **context, int device) {
  (void)device; *context = (void *)0x1; return 0;
}
int cuCtxPushCurrent_v2(void *context) { (void)context; return 0; }
int cuCtxPopCurrent_v2(void **context) { if (context) *context = (void *)0x1; return 0; }
int cuGetErrorName(int status, const char **name) {
  *name = status == 719 ? "CUDA_ERROR_LAUNCH_FAILED" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
int cuModuleLoadData(void **module, const void *image) {
  const unsigned char *bytes = (const unsigned char *)image;
  const char *kind = bytes[0] == 0x50 && bytes[1] == 0xED && bytes[2] == 0x55 &&
                     bytes[3] == 0xBA ? "fatbin"
                   : bytes[0] == 0x7F && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F'
                     ? "cubin" : "other";
  logf_("load %s %lld %lld", kind, 0, 0);
  *module = malloc(1); return 0;
}
int cuModuleLoadDataEx(void **module, const void *image, unsigned n, int *options,
                       void **values) {
  (void)options; (void)values;
  const char *ptx = (const char *)image;
  const char *version = strstr(ptx, ".version");
  logf_("load-ptx %s %lld %lld", version ? "version" : "none", n, (long long)strlen(ptx));
  *module = malloc(1); return 0;
}
int cuModuleUnload(void *module) { free(module); logf_("unload%s %lld %lld", "", 0, 0); return 0; }
int cuModuleGetFunction(void **function, void *module, const char *name) {
  (void)module; logf_("function %s %lld %lld", name, 0, 0);
  *function = strdup(name); return 0;
}
int cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                   unsigned by, unsigned bz, unsigned smem, void *stream, void **params,
                   void **extra) {
  (void)by; (void)bz; (void)smem; (void)stream; (void)params; (void)extra;
  if (gx == 0 || gy == 0 || gz == 0)
    return 1; /* CUDA_ERROR_INVALID_VALUE, as the real driver answers */
  logf_("launch %s %lld %lld", (const char *)function, (long long)gx * gy, bx);
  logf_("on-stream%s %lld %lld", "", stream ? *(long long *)stream : 0, 0);
  return getenv("FAKE_CUDA_FAIL_LAUNCH") ? 719 : 0;
}
static long long streams_made;
int cuStreamCreate(void **stream, unsigned flags) {
  (void)flags;
  long long *id = malloc(sizeof *id);
  *id = ++streams_made;
  *stream = id;
  logf_("stream%s %lld %lld", "", *id, 0);
  return 0;
}
int cuStreamDestroy_v2(void *stream) { free(stream); return 0; }
int cuStreamSynchronize(void *stream) { (void)stream; return 0; }
int cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
  (void)stream; (void)event; (void)flags; return 0;
}
int cuEventCreate(void **event, unsigned flags) { (void)flags; *event = malloc(1); return 0; }
int cuEventDestroy_v2(void *event) { free(event); return 0; }
int cuEventSynchronize(void *event) { (void)event; return 0; }
int cuEventRecord(void *event, void *stream) { (void)event; (void)stream; return 0; }
#define MAX_BLOCKS 65536
static struct { char *start; size_t bytes; } blocks[MAX_BLOCKS];

/* The device block holding `address`, or -1. */
static int block_of(uint64_t address) {
  for (int i = 0; i < MAX_BLOCKS; ++i)
    if (blocks[i].start && (char *)(uintptr_t)address >= blocks[i].start &&
        (char *)(uintptr_t)address < blocks[i].start + blocks[i].bytes)
      return i;
  return -1;
}

static void protect(uint64_t address, int access) {
  int i = block_of(address);
  if (i >= 0)
    mprotect(blocks[i].start, blocks[i].bytes, access ? PROT_READ | PROT_WRITE : PROT_NONE);
}

int cuMemAlloc_v2(uint64_t *pointer, size_t bytes) {
  for (int i = 0; i < MAX_BLOCKS; ++i)
    if (!blocks[i].start) {
      void *start = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (start == MAP_FAILED) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
      blocks[i].start = start; blocks[i].bytes = bytes;
      *pointer = (uint64_t)(uintptr_t)start;
      logf_("alloc%s %lld %lld", "", (long long)bytes, 0);
      return 0;
    }
  return 2;
}
int cuMemAllocManaged(uint64_t *pointer, size_t bytes, unsigned flags) {
  (void)flags;
  *pointer = (uint64_t)(uintptr_t)calloc(1, bytes);
  logf_("alloc%s %lld %lld", "", (long long)bytes, 1);
  return 0;
}
int cuMemFree_v2(uint64_t pointer) {
  int i = block_of(pointer);
  if (i >= 0) {
    munmap(blocks[i].start, blocks[i].bytes);
    blocks[i].start = NULL;
  } else {
    free((void *)(uintptr_t)pointer);
  }
  logf_("free%s %lld %lld", "", 0, 0);
  return 0;
}
/* Copies between any memories (unified addressing), device pages opened for
 * the copy. */
static void copy(uint64_t dst, uint64_t src, size_t bytes) {
  protect(dst, 1); protect(src, 1);
  memcpy((void *)(uintptr_t)dst, (void *)(uintptr_t)src, bytes);
  protect(dst, 0); protect(src, 0);
}
int cuMemcpyAsync(uint64_t dst, uint64_t src, size_t bytes, void *stream) {
  (void)stream; copy(dst, src, bytes);
  logf_("copy%s %lld %lld", "", (long long)bytes, 0);
  return 0;
}
int cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t bytes) {
  if (block_of(dst) < 0) { logf_("h2d-not-device%s %lld %lld", "", 0, 0); return 1; }
  copy(dst, (uint64_t)(uintptr_t)src, bytes);
  logf_("h2d%s %lld %lld", "", (long long)bytes, 0);
  return 0;
}
int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t bytes) {
  if (block_of(src) < 0) { logf_("d2h-not-device%s %lld %lld", "", 0, 0); return 1; }
  copy((uint64_t)(uintptr_t)dst, src, bytes);
  logf_("d2h%s %lld %lld", "", (long long)bytes, 0);
  return 0;
}
int cuMemsetD32Async(uint64_t dst, unsigned value, size_t count, void *stream) {
  (void)stream; unsigned *p = (unsigned *)(uintptr_t)dst;
  protect(dst, 1);
  for (size_t i = 0; i < count; ++i) p[i] = value;
  protect(dst, 0);
  return 0;
}
int cuMemsetD16Async(uint64_t dst, unsigned short value, size_t count, void *stream) {
  (void)stream; unsigned short *p = (unsigned short *)(uintptr_t)dst;
  protect(dst, 1);
  for (size_t i = 0; i < count; ++i) p[i] = value;
  protect(dst, 0);
  return 0;
}
int cuCtxSynchronize(void) { logf_("sync%s %lld %lld", "", 0, 0); return 0; }
/* The stream-ordered allocator (CUDA 11.2): the same device blocks, logged
 * with "-async" and the stream; $FAKE_CUDA_NO_POOL makes the default pool
 * unavailable (a driver without it: the shim falls back to cuMemAlloc). */
int cuDeviceGetDefaultMemPool(void **pool, int device) {
  (void)device;
  if (getenv("FAKE_CUDA_NO_POOL")) return 801; /* CUDA_ERROR_NOT_SUPPORTED */
  *pool = (void *)0x2; return 0;
}
int cuMemPoolSetAttribute(void *pool, int attribute, void *value) {
  (void)pool;
  logf_("pool-attribute%s %lld %lld", "", attribute, (long long)*(uint64_t *)value);
  return 0;
}
int cuMemAllocAsync(uint64_t *pointer, size_t bytes, void *stream) {
  int status = cuMemAlloc_v2(pointer, bytes);
  logf_("async-alloc%s %lld %lld", "", (long long)bytes, stream ? *(long long *)stream : 0);
  return status;
}
int cuMemFreeAsync(uint64_t pointer, void *stream) {
  int status = cuMemFree_v2(pointer);
  logf_("async-free%s %lld %lld", "", 0, stream ? *(long long *)stream : 0);
  return status;
}
/* For dlc's Python runtime. */
int cuDeviceGetCount(int *count) { *count = 1; return 0; }
int cuCtxSetCurrent(void *context) { (void)context; return 0; }
