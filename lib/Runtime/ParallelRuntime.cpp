//===- ParallelRuntime.cpp - dlc's fork/join thread pool ------------------===//
//
// The runtime the parallel loops of JIT-compiled code call
// (`dl-outline-parallel` outlines each outermost scf.parallel's body into a
// function of [begin, end); `dl-lower-parallel-launch` packs what it
// captures and calls dlc_parallel_for). Ours, replacing MLIR's async
// runtime: there, every parallel loop was a group of coroutines handed to an
// llvm::ThreadPool whose workers sleep on a condition variable, and a
// fork/join measured ~60 us on this 2-vCPU machine (x*2+1 over 16K floats:
// 12 us on one thread, 79 us on two). Here the workers spin for a while
// (DLC_SPIN_US, default 2000 us) after their last task before they sleep,
// like OpenMP runtimes (GOMP_SPINCOUNT, KMP_BLOCKTIME) and OpenBLAS do, so
// the nests of one call, and back-to-back calls, find them awake.
//
//   dlc_parallel_for(body, ctx, lb, ub, step, threads)
//     runs body(ctx, begin, end) over [lb, ub) by `step`, split into
//     min(threads, trip count) contiguous chunks (threads <= 0: the pool's
//     size + 1). The caller takes chunks too; chunks are claimed from a
//     counter, so a late (descheduled) worker costs no more than its chunk.
//     It returns once every chunk has run: no worker is in `body` after.
//
// A call from inside a chunk (a nested parallel loop) or while another
// thread owns the pool runs serially on the calling thread. A forked child
// starts a fresh pool.
//
// The profiler (dlc.profile): between dlc_runtime_profile(1) and
// dlc_runtime_profile(0), every outermost call is timed (wall clock on the
// launching thread, fork and join included) and summed by its body;
// dlc_runtime_profile_read copies the sums out. Off, it costs one relaxed
// load per loop.
//
//===----------------------------------------------------------------------===//

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>
#include <vector>

#include <pthread.h>
#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
static inline void cpuRelax() { _mm_pause(); }
#else
static inline void cpuRelax() {}
#endif

#include "Memory.h"

namespace {

using Clock = std::chrono::steady_clock;

int64_t hardwareThreads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int count = CPU_COUNT(&set);
    if (count > 0)
      return count;
  }
  unsigned count = std::thread::hardware_concurrency();
  return count > 0 ? count : 1;
}

int64_t envInt(const char *name, int64_t fallback) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return fallback;
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  return (end && *end == '\0' && value >= 0) ? value : fallback;
}

thread_local bool insideChunk = false;

/// One fork/join at a time. `state` packs the job's generation (high 32
/// bits) with the next unclaimed chunk (low 32 bits), so a worker that read
/// the fields of an old job can never claim a chunk of a newer one.
class Pool {
public:
  explicit Pool(int64_t workers)
      : spin(std::chrono::microseconds(envInt("DLC_SPIN_US", 2000))) {
    for (int64_t w = 0; w < workers; ++w) {
      std::thread thread([this] { workerLoop(); });
      thread.detach();
    }
    size = workers;
  }

  int64_t workers() const { return size; }

  /// Runs the job; returns the bytes of an allocation that failed in one
  /// of its chunks (0: none did).
  int64_t run(dlc_body_fn fn, void *context, int64_t lower, int64_t upper,
              int64_t stepSize, int64_t chunks, int64_t chunkIters) {
    failed.store(0, std::memory_order_relaxed);
    body.store(fn, std::memory_order_relaxed);
    ctx.store(context, std::memory_order_relaxed);
    lb.store(lower, std::memory_order_relaxed);
    ub.store(upper, std::memory_order_relaxed);
    step.store(stepSize, std::memory_order_relaxed);
    chunkIterations.store(chunkIters, std::memory_order_relaxed);
    numChunks.store(chunks, std::memory_order_relaxed);
    remaining.store(chunks, std::memory_order_relaxed);
    uint64_t generation = (state.load(std::memory_order_relaxed) >> 32) + 1;
    generation &= 0xffffffffu;
    // Publishes the fields (release) and the job (seq_cst, against the
    // sleepers check below).
    state.store(generation << 32, std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lock(mutex);
      wake.notify_all();
    }
    work(static_cast<uint32_t>(generation));
    // The others' chunks: they are running, spin until they end.
    while (remaining.load(std::memory_order_acquire) > 0)
      cpuRelax();
    return failed.load(std::memory_order_relaxed);
  }

private:
  /// Claims and runs chunks of job `generation` while there are any.
  void work(uint32_t generation) {
    dlc_body_fn fn = body.load(std::memory_order_relaxed);
    void *context = ctx.load(std::memory_order_relaxed);
    int64_t lower = lb.load(std::memory_order_relaxed);
    int64_t upper = ub.load(std::memory_order_relaxed);
    int64_t stepSize = step.load(std::memory_order_relaxed);
    int64_t chunkIters = chunkIterations.load(std::memory_order_relaxed);
    int64_t chunks = numChunks.load(std::memory_order_relaxed);
    uint64_t current = state.load(std::memory_order_acquire);
    while (true) {
      if ((current >> 32) != generation)
        return;
      uint64_t index = current & 0xffffffffu;
      if (static_cast<int64_t>(index) >= chunks)
        return;
      if (!state.compare_exchange_weak(current, current + 1,
                                       std::memory_order_acq_rel,
                                       std::memory_order_acquire))
        continue;
      // The claim succeeded on this generation: the fields read above are
      // this job's (the job cannot end before this chunk has run).
      int64_t begin = lower + static_cast<int64_t>(index) * chunkIters * stepSize;
      int64_t end = begin + chunkIters * stepSize;
      if (end > upper || end < begin)
        end = upper;
      insideChunk = true;
      if (!dlc_runtime::runGuarded(fn, context, begin, end))
        failed.store(dlc_runtime::lastFailure(), std::memory_order_relaxed);
      insideChunk = false;
      remaining.fetch_sub(1, std::memory_order_acq_rel);
      current = state.load(std::memory_order_acquire);
    }
  }

  void workerLoop() {
    uint32_t seen = 0;
    while (true) {
      // Spin for a new job, then sleep until one comes.
      Clock::time_point deadline = Clock::now() + spin;
      uint32_t generation = seen;
      unsigned polls = 0;
      while ((generation = state.load(std::memory_order_acquire) >> 32) ==
             seen) {
        cpuRelax();
        if (++polls % 256 == 0 && Clock::now() > deadline)
          break;
      }
      if (generation == seen) {
        std::unique_lock<std::mutex> lock(mutex);
        sleepers.fetch_add(1, std::memory_order_seq_cst);
        while ((generation = state.load(std::memory_order_seq_cst) >> 32) ==
               seen)
          wake.wait(lock);
        sleepers.fetch_sub(1, std::memory_order_relaxed);
      }
      seen = generation;
      work(generation);
    }
  }

  std::chrono::microseconds spin;
  int64_t size = 0;
  std::atomic<dlc_body_fn> body{nullptr};
  std::atomic<void *> ctx{nullptr};
  std::atomic<int64_t> lb{0}, ub{0}, step{1}, chunkIterations{0}, numChunks{0};
  std::atomic<uint64_t> state{0};
  std::atomic<int64_t> remaining{0};
  std::atomic<int64_t> failed{0}; // bytes of a failed allocation in a chunk
  std::atomic<int> sleepers{0};
  std::mutex mutex;
  std::condition_variable wake;
};

// Never destroyed: detached workers may still be waiting on its members
// when the process exits.
std::atomic<Pool *> pool{nullptr};
std::mutex poolMutex; // creation, and one fork/join at a time
std::once_flag atforkOnce;

Pool *getPool() {
  Pool *current = pool.load(std::memory_order_acquire);
  if (current)
    return current;
  std::call_once(atforkOnce, [] {
    // The child of a fork has none of the workers: it builds its own pool
    // (the parent's is leaked there, its mutexes may be held).
    pthread_atfork(nullptr, nullptr, [] {
      pool.store(nullptr, std::memory_order_relaxed);
      new (&poolMutex) std::mutex();
    });
  });
  current = new Pool(hardwareThreads() - 1);
  pool.store(current, std::memory_order_release);
  return current;
}

void runParallelFor(dlc_body_fn body, void *ctx, int64_t lb, int64_t ub,
                    int64_t step, int64_t threads) {
  int64_t trips = (ub - lb + step - 1) / step;
  if (threads <= 0)
    threads = hardwareThreads();
  int64_t chunks = threads < trips ? threads : trips;
  if (chunks > 0xffffffffLL)
    chunks = 0xffffffffLL;
  // Every body runs under a guard (Memory.cpp): an allocation that fails in
  // it is re-raised here, on the launching thread, once no chunk runs any
  // more and no lock is held.
  int64_t failed = 0;
  auto serial = [&] {
    if (!dlc_runtime::runGuarded(body, ctx, lb, ub))
      failed = dlc_runtime::lastFailure();
  };
  if (chunks <= 1 || insideChunk) {
    serial();
  } else {
    std::unique_lock<std::mutex> lock(poolMutex, std::try_to_lock);
    Pool *current = lock.owns_lock() ? getPool() : nullptr;
    if (!current || current->workers() == 0) {
      // Another thread's fork/join owns the pool (or it is being created),
      // or there is no worker.
      serial();
    } else {
      int64_t chunkIters = (trips + chunks - 1) / chunks;
      chunks = (trips + chunkIters - 1) / chunkIters;
      failed = current->run(body, ctx, lb, ub, step, chunks, chunkIters);
    }
  }
  if (failed)
    dlc_runtime::raiseAllocationFailure(failed);
}

std::atomic<bool> profiling{false};
struct RegionTime {
  int64_t launches = 0;
  int64_t nanoseconds = 0;
};
std::mutex profileMutex;
thread_local bool insideTimed = false; // a nested loop is its parent's time
// Never destroyed, like the pool.
auto *profile = new std::unordered_map<const void *, RegionTime>();

} // namespace

extern "C" {

/// Starts (`on` != 0: the sums are cleared) or stops timing parallel loops.
void dlc_runtime_profile(int64_t on) {
  std::lock_guard<std::mutex> lock(profileMutex);
  if (on)
    profile->clear();
  profiling.store(on != 0, std::memory_order_relaxed);
}

/// Copies up to `capacity` (body, launches, nanoseconds) sums into the
/// arrays; returns how many there are.
int64_t dlc_runtime_profile_read(const void **bodies, int64_t *launches,
                                 int64_t *nanoseconds, int64_t capacity) {
  std::lock_guard<std::mutex> lock(profileMutex);
  int64_t i = 0;
  for (const auto &[body, time] : *profile) {
    if (i < capacity) {
      bodies[i] = body;
      launches[i] = time.launches;
      nanoseconds[i] = time.nanoseconds;
    }
    ++i;
  }
  return i;
}

/// Threads a parallel loop runs on when it asks for "all" (threads <= 0).
int64_t dlc_runtime_num_threads(void) { return hardwareThreads(); }

void dlc_parallel_for(dlc_body_fn body, void *ctx, int64_t lb, int64_t ub,
                      int64_t step, int64_t threads) {
  if (ub <= lb || step <= 0)
    return;
  if (profiling.load(std::memory_order_relaxed) && !insideChunk &&
      !insideTimed) {
    Clock::time_point start = Clock::now();
    insideTimed = true;
    struct Timed {
      Clock::time_point start;
      const void *body;
      ~Timed() {
        insideTimed = false;
        int64_t nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            Clock::now() - start)
                            .count();
        std::lock_guard<std::mutex> lock(profileMutex);
        RegionTime &time = (*profile)[body];
        time.launches += 1;
        time.nanoseconds += nanos;
      }
    } timed{start, reinterpret_cast<const void *>(body)};
    runParallelFor(body, ctx, lb, ub, step, threads);
    return;
  }
  runParallelFor(body, ctx, lb, ub, step, threads);
}

} // extern "C"
