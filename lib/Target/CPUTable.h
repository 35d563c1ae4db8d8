//===- CPUTable.h - what dlc knows of named CPUs and of the host -*- C++ -*-===//
//
// Private to lib/Target: the facts completeTarget() fills a #dl.target from.
//
//===----------------------------------------------------------------------===//
#ifndef DL_LIB_TARGET_CPUTABLE_H
#define DL_LIB_TARGET_CPUTABLE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::dl::target {

enum class Arch { X86, AArch64 };

/// One row of the table: a CPU by LLVM name. FMA units count vector FMAs
/// issued per cycle at the register width the features give (Zen 4 runs a
/// 512-bit FMA on both of its 256-bit pipes: 1); cache sizes are per core
/// for L1d and L2, typical of the part for L3.
struct CPUFacts {
  llvm::StringRef name;
  Arch arch;
  int64_t fmaUnits, fmaLatency;
  int64_t l1d, l2, l3, cacheLine;
};

/// The table, in the order knownCPUs() lists it.
llvm::ArrayRef<CPUFacts> cpuTable();

/// The row of `cpu`, or null.
const CPUFacts *findCPU(llvm::StringRef cpu);

/// The architecture of an LLVM CPU name (x86-64 first), if LLVM knows it.
std::optional<Arch> archOfCPU(llvm::StringRef cpu);

/// The default triple of an architecture.
llvm::StringRef defaultTriple(Arch arch);

/// LLVM's feature names (no sign) of a CPU.
std::vector<std::string> cpuFeatures(Arch arch, llvm::StringRef cpu);

/// What the machine the compiler runs on says of itself: LLVM's host
/// detection, the cache sizes in /sys (Linux), the CPUs this process may
/// run on. Computed once.
struct HostFacts {
  std::string triple;
  std::string cpu;
  /// Features LLVM detects, each enabled (true) or not (false).
  std::vector<std::pair<std::string, bool>> features;
  int64_t l1d = 0, l2 = 0, l3 = 0, cacheLine = 0, threads = 0;
};
const HostFacts &hostFacts();

} // namespace mlir::dl::target

#endif // DL_LIB_TARGET_CPUTABLE_H
