//===- Memory.h - allocation failures inside parallel loops -----*- C++ -*-===//
//
// What the thread pool (ParallelRuntime.cpp) needs from Memory.cpp: running
// a chunk of a parallel loop under a guard that catches a failed
// allocation, and re-raising it on the thread that launched the loop.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_MEMORY_H
#define DLC_RUNTIME_MEMORY_H

#include <cstdint>

extern "C" {
typedef void (*dlc_body_fn)(void *ctx, int64_t begin, int64_t end);
}

namespace dlc_runtime {

/// body(ctx, begin, end); false if an allocation in it failed (lastFailure()
/// says how many bytes).
bool runGuarded(dlc_body_fn body, void *ctx, int64_t begin, int64_t end);

/// The bytes of the last failed allocation on this thread.
int64_t lastFailure();

/// Reports a failed allocation of `bytes` to this thread's innermost guard
/// (longjmp), or aborts with a message where there is none.
[[noreturn]] void raiseAllocationFailure(int64_t bytes);

} // namespace dlc_runtime

#endif // DLC_RUNTIME_MEMORY_H
