//===- Memory.cpp - allocation for compiled code, failures as errors -------===//
//
// The CPU pipeline lowers memref.alloc/dealloc to MLIR's generic allocation
// functions (finalize-memref-to-llvm{use-generic-functions}), defined here:
//
//   _mlir_memref_to_llvm_alloc(size)          malloc, or a cached block
//   _mlir_memref_to_llvm_aligned_alloc(a, size)
//   _mlir_memref_to_llvm_free(ptr)            free, or keep the block
//
// Two things plain malloc did not give:
//
// 1. An allocation that fails is an error, not a segfault. Compiled code
//    stored through the NULL that malloc returned (a 64 GiB temporary, a
//    result over the process's memory limit). Here a failed allocation
//    longjmps back to the guard the caller set up (dlc_call_guarded, which
//    Python turns into MemoryError), or, on a thread-pool worker, to the
//    guard around its chunk, which dlc_parallel_for re-raises on the calling
//    thread once every chunk has ended. Compiled code has no destructors to
//    skip; what the failed call allocated before the failure is leaked.
//    Without a guard (code called some other way) the process aborts with a
//    message naming the size.
//
// 2. Large blocks are reused across calls. glibc serves blocks over its mmap
//    threshold (at most 32 MiB) with a fresh mmap each time, so a network
//    whose temporaries share one 78 MB arena (MobileNetV2 at batch 8) paid
//    ~19,000 page faults and the kernel's zeroing of every page on every
//    call. Blocks of 1 MiB or more that compiled code frees are kept (at
//    most 8 blocks and DLC_ALLOC_CACHE_MB, default 1024 MiB) and handed to
//    the next allocation of a size they fit within 25%.
//    dlc_runtime_release_memory() frees them.
//
// 3. Blocks of 32 KiB up to 1 MiB freed by a thread are kept by that thread
//    (at most 8 blocks, 8 MiB) for its next allocations. Compiled code
//    allocates them inside parallel loops (a GEMM's packed block of B per
//    column block, dl-fuse-attention's score blocks per block of query
//    rows), the same sizes again and again; glibc served those over its
//    mmap threshold with a fresh mapping and trimmed the others back to the
//    system, and every call paid the page faults (Whisper's attention:
//    34,000 per layer, 130 against 42 ms, when V was packed in 192 KiB
//    blocks per block of rows). No lock: each thread its own.
//
// Ours: MLIR's runtime libraries define no such functions (the generic
// names exist for runtimes like this one).
//
//===----------------------------------------------------------------------===//

#include "Memory.h"

#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include <pthread.h>

#if defined(__GLIBC__)
#include <malloc.h>
#define DLC_HAVE_USABLE_SIZE 1
#endif

namespace {

thread_local std::jmp_buf *guard = nullptr;
thread_local int64_t failedBytes = 0;

constexpr size_t kCacheMinBytes = size_t(1) << 20;
constexpr size_t kCacheMaxBlocks = 8;

struct Block {
  void *pointer;
  size_t usable;
};

// Blocks below kCacheMinBytes: each thread's own (3. above).
constexpr size_t kLocalMinBytes = size_t(32) << 10;
constexpr size_t kLocalMaxBlocks = 8;
constexpr size_t kLocalMaxBytes = size_t(8) << 20;

struct LocalCache {
  Block blocks[kLocalMaxBlocks];
  size_t count = 0;
  size_t bytes = 0;

  /// A kept block of `size` bytes (within 25%), or null.
  void *take(size_t size) {
    size_t best = count;
    for (size_t i = 0; i < count; ++i) {
      size_t usable = blocks[i].usable;
      if (usable >= size && usable - size <= size / 4 &&
          (best == count || usable < blocks[best].usable))
        best = i;
    }
    if (best == count)
      return nullptr;
    void *pointer = blocks[best].pointer;
    bytes -= blocks[best].usable;
    for (size_t i = best + 1; i < count; ++i)
      blocks[i - 1] = blocks[i];
    --count;
    return pointer;
  }

  /// Keeps `pointer` (`usable` bytes), the oldest blocks making room.
  void keep(void *pointer, size_t usable) {
    while (count > 0 && (count == kLocalMaxBlocks ||
                         bytes + usable > kLocalMaxBytes)) {
      std::free(blocks[0].pointer);
      bytes -= blocks[0].usable;
      for (size_t i = 1; i < count; ++i)
        blocks[i - 1] = blocks[i];
      --count;
    }
    blocks[count++] = Block{pointer, usable};
    bytes += usable;
  }

  void release() {
    for (size_t i = 0; i < count; ++i)
      std::free(blocks[i].pointer);
    count = 0;
    bytes = 0;
  }

  ~LocalCache() { release(); }
};

thread_local LocalCache local;

std::mutex cacheMutex;
std::vector<Block> *cache = nullptr; // never destroyed (exit-time frees)
size_t cachedBytes = 0;

size_t cacheLimitBytes() {
  static const size_t limit = [] {
    const char *text = std::getenv("DLC_ALLOC_CACHE_MB");
    if (text && *text) {
      char *end = nullptr;
      long long value = std::strtoll(text, &end, 10);
      if (end && *end == '\0' && value >= 0)
        return static_cast<size_t>(value) << 20;
    }
    return size_t(1024) << 20;
  }();
  return limit;
}

struct AtFork {
  AtFork() {
    // A forked child starts with an empty cache and a free mutex (another
    // thread may have held it at the fork).
    pthread_atfork(nullptr, nullptr, [] {
      new (&cacheMutex) std::mutex();
      cache = nullptr;
      cachedBytes = 0;
    });
  }
} atFork;

/// A cached block for `size` bytes, or null.
void *takeCached(size_t size) {
#if DLC_HAVE_USABLE_SIZE
  if (size >= kLocalMinBytes && size < kCacheMinBytes)
    return local.take(size);
  if (size < kCacheMinBytes)
    return nullptr;
  std::lock_guard<std::mutex> lock(cacheMutex);
  if (!cache)
    return nullptr;
  size_t best = cache->size();
  for (size_t i = 0; i < cache->size(); ++i) {
    size_t usable = (*cache)[i].usable;
    if (usable >= size && usable - size <= size / 4 &&
        (best == cache->size() || usable < (*cache)[best].usable))
      best = i;
  }
  if (best == cache->size())
    return nullptr;
  Block block = (*cache)[best];
  cache->erase(cache->begin() + best);
  cachedBytes -= block.usable;
  return block.pointer;
#else
  (void)size;
  return nullptr;
#endif
}

/// Keeps `pointer` for reuse; false where it is not worth keeping (the
/// caller frees it).
bool keepCached(void *pointer) {
#if DLC_HAVE_USABLE_SIZE
  size_t usable = malloc_usable_size(pointer);
  if (usable >= kLocalMinBytes && usable < kCacheMinBytes) {
    local.keep(pointer, usable);
    return true;
  }
  if (usable < kCacheMinBytes)
    return false;
  std::vector<void *> evicted;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    if (usable > cacheLimitBytes())
      return false;
    if (!cache)
      cache = new std::vector<Block>();
    // The oldest blocks make room.
    while (!cache->empty() && (cache->size() >= kCacheMaxBlocks ||
                               cachedBytes + usable > cacheLimitBytes())) {
      evicted.push_back(cache->front().pointer);
      cachedBytes -= cache->front().usable;
      cache->erase(cache->begin());
    }
    cache->push_back(Block{pointer, usable});
    cachedBytes += usable;
  }
  for (void *old : evicted)
    std::free(old);
  return true;
#else
  (void)pointer;
  return false;
#endif
}

} // namespace

namespace dlc_runtime {

bool runGuarded(dlc_body_fn body, void *ctx, int64_t begin, int64_t end) {
  std::jmp_buf buffer;
  std::jmp_buf *outer = guard;
  guard = &buffer;
  if (setjmp(buffer) != 0) {
    guard = outer;
    return false;
  }
  body(ctx, begin, end);
  guard = outer;
  return true;
}

int64_t lastFailure() { return failedBytes; }

[[noreturn]] void raiseAllocationFailure(int64_t bytes) {
  failedBytes = bytes > 0 ? bytes : 1;
  if (guard)
    std::longjmp(*guard, 1);
  std::fprintf(stderr,
               "dlc: compiled code could not allocate %lld bytes, and its "
               "caller set no guard to report it to (call it through "
               "dlc_call_guarded)\n",
               static_cast<long long>(bytes));
  std::abort();
}

} // namespace dlc_runtime

extern "C" {

int64_t dlc_call_guarded(void (*entry)(void **), void **packed) {
  std::jmp_buf buffer;
  std::jmp_buf *outer = guard;
  guard = &buffer;
  if (setjmp(buffer) != 0) {
    guard = outer;
    return failedBytes > 0 ? failedBytes : 1;
  }
  entry(packed);
  guard = outer;
  return 0;
}

void *_mlir_memref_to_llvm_alloc(size_t size) {
  void *pointer = takeCached(size);
  if (!pointer)
    pointer = std::malloc(size);
  if (!pointer && size)
    dlc_runtime::raiseAllocationFailure(static_cast<int64_t>(size));
  return pointer;
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  // aligned_alloc wants a size that is a multiple of the alignment.
  size_t rounded = alignment ? (size + alignment - 1) / alignment * alignment
                             : size;
  if (rounded < size)
    dlc_runtime::raiseAllocationFailure(INT64_MAX);
  void *pointer = alignment ? std::aligned_alloc(alignment, rounded)
                            : std::malloc(rounded);
  if (!pointer && rounded)
    dlc_runtime::raiseAllocationFailure(static_cast<int64_t>(rounded));
  return pointer;
}

void _mlir_memref_to_llvm_free(void *pointer) {
  if (pointer && !keepCached(pointer))
    std::free(pointer);
}

void dlc_runtime_release_memory(void) {
  local.release();
  std::vector<Block> blocks;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    if (cache)
      blocks.swap(*cache);
    cachedBytes = 0;
  }
  for (const Block &block : blocks)
    std::free(block.pointer);
}

} // extern "C"
