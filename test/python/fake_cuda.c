/* A stand-in for libcuda.so.1 on machines without a GPU: the driver calls
 * dlc's CUDA shim (lib/Runtime/CudaShim.cpp) makes, with host memory and no
 * kernel execution, each logged as one line to $FAKE_CUDA_LOG. test_export.py
 * checks with it the plumbing of an exported CUDA library: which modules and
 * kernels are loaded and launched, that every allocation is freed, and how a
 * failed launch ($FAKE_CUDA_FAIL_LAUNCH) reaches the caller. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  logf_("load %.8s %lld %lld", (const char *)image, 0, 0);
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
  (void)gz; (void)by; (void)bz; (void)smem; (void)stream; (void)params; (void)extra;
  logf_("launch %s %lld %lld", (const char *)function, (long long)gx * gy, bx);
  return getenv("FAKE_CUDA_FAIL_LAUNCH") ? 719 : 0;
}
int cuStreamCreate(void **stream, unsigned flags) { (void)flags; *stream = malloc(1); return 0; }
int cuStreamDestroy_v2(void *stream) { free(stream); return 0; }
int cuStreamSynchronize(void *stream) { (void)stream; return 0; }
int cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
  (void)stream; (void)event; (void)flags; return 0;
}
int cuEventCreate(void **event, unsigned flags) { (void)flags; *event = malloc(1); return 0; }
int cuEventDestroy_v2(void *event) { free(event); return 0; }
int cuEventSynchronize(void *event) { (void)event; return 0; }
int cuEventRecord(void *event, void *stream) { (void)event; (void)stream; return 0; }
int cuMemAlloc_v2(uint64_t *pointer, size_t bytes) {
  *pointer = (uint64_t)(uintptr_t)calloc(1, bytes);
  logf_("alloc%s %lld %lld", "", (long long)bytes, 0);
  return 0;
}
int cuMemAllocManaged(uint64_t *pointer, size_t bytes, unsigned flags) {
  (void)flags;
  *pointer = (uint64_t)(uintptr_t)calloc(1, bytes);
  logf_("alloc%s %lld %lld", "", (long long)bytes, 1);
  return 0;
}
int cuMemFree_v2(uint64_t pointer) {
  free((void *)(uintptr_t)pointer); logf_("free%s %lld %lld", "", 0, 0); return 0;
}
int cuMemcpyAsync(uint64_t dst, uint64_t src, size_t bytes, void *stream) {
  (void)stream; memcpy((void *)(uintptr_t)dst, (void *)(uintptr_t)src, bytes); return 0;
}
int cuMemsetD32Async(uint64_t dst, unsigned value, size_t count, void *stream) {
  (void)stream; unsigned *p = (unsigned *)(uintptr_t)dst;
  for (size_t i = 0; i < count; ++i) p[i] = value;
  return 0;
}
int cuMemsetD16Async(uint64_t dst, unsigned short value, size_t count, void *stream) {
  (void)stream; unsigned short *p = (unsigned short *)(uintptr_t)dst;
  for (size_t i = 0; i < count; ++i) p[i] = value;
  return 0;
}
