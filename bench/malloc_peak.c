// A heap counter for bench/train_memory.py, loaded with LD_PRELOAD: it wraps
// malloc, calloc, realloc, free, posix_memalign and aligned_alloc, and keeps
// the bytes of live blocks (malloc_usable_size) and their peak since the last
// peak_reset(). Both dlc's runtime and PyTorch's CPU allocator allocate
// through these, so one counter measures both the same way.
//
//   cc -O2 -shared -fPIC -o libmalloc_peak.so bench/malloc_peak.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
static void *(*real_malloc)(size_t), *(*real_calloc)(size_t, size_t), *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static __thread int busy;
static long long current, peak;
static void init(void) {
  real_malloc = dlsym(RTLD_NEXT, "malloc"); real_calloc = dlsym(RTLD_NEXT, "calloc");
  real_realloc = dlsym(RTLD_NEXT, "realloc"); real_free = dlsym(RTLD_NEXT, "free");
  real_memalign = dlsym(RTLD_NEXT, "posix_memalign"); real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
}
static void add(void *p) { if (p) { long long n = malloc_usable_size(p); long long c = __atomic_add_fetch(&current, n, __ATOMIC_RELAXED); if (c > peak) peak = c; } }
static void sub(void *p) { if (p) __atomic_sub_fetch(&current, (long long)malloc_usable_size(p), __ATOMIC_RELAXED); }
// dlsym itself may allocate before the real functions are known: served
// from a static scratch area, never freed.
static char scratch[65536]; static size_t used;
void *malloc(size_t n) { if (!real_malloc) { if (busy) { void *p = scratch + used; used += (n + 15) & ~15; return p; } busy = 1; init(); busy = 0; } void *p = real_malloc(n); add(p); return p; }
void *calloc(size_t a, size_t b) { if (!real_calloc) { void *p = scratch + used; used += (a * b + 15) & ~15; memset(p, 0, a * b); return p; } void *p = real_calloc(a, b); add(p); return p; }
void *realloc(void *q, size_t n) { if (!real_realloc) init(); sub(q); void *p = real_realloc(q, n); add(p ? p : (n ? NULL : NULL)); return p; }
void free(void *p) { if ((char *)p >= scratch && (char *)p < scratch + sizeof scratch) return; if (!real_free) init(); sub(p); real_free(p); }
int posix_memalign(void **out, size_t a, size_t n) { if (!real_memalign) init(); int r = real_memalign(out, a, n); if (!r) add(*out); return r; }
void *aligned_alloc(size_t a, size_t n) { if (!real_aligned_alloc) init(); void *p = real_aligned_alloc(a, n); add(p); return p; }
void peak_reset(void) { peak = current; }
long long peak_get(void) { return peak; }
long long current_get(void) { return current; }
