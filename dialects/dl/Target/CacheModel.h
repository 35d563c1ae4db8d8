//===- CacheModel.h - cache sizes of the target -----------------*- C++ -*-===//
//
// The data cache sizes the loop transformations size their blocks and tiles
// by. Read from the machine the compiler runs on (it JIT-compiles for that
// machine); every pass that uses them takes options that override them.
//
//===----------------------------------------------------------------------===//
#ifndef DL_CACHEMODEL_H
#define DL_CACHEMODEL_H

#include <cstdint>

namespace mlir::dl {

struct CacheSizes {
  int64_t l1 = 32 * 1024;   // bytes of L1 data cache per core
  int64_t l2 = 1024 * 1024; // bytes of L2 cache per core
};

/// This machine's L1 data and L2 cache sizes, read once from
/// /sys/devices/system/cpu/cpu0/cache (Linux); the defaults above where that
/// cannot be read.
CacheSizes hostCacheSizes();

/// `requested` if positive, else the host's size of that level.
inline int64_t cacheBytes(int64_t requested, int64_t host) {
  return requested > 0 ? requested : host;
}

} // namespace mlir::dl

#endif // DL_CACHEMODEL_H
