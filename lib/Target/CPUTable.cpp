//===- CPUTable.cpp - named CPUs and the host -----------------------------===//
//
// The table of CPUs dlc knows beyond what LLVM's TargetParser says (their
// features): vector FMA pipes and latency, and cache sizes, from the vendors'
// optimization manuals and published measurements (uops.info, Agner Fog,
// Chips and Cheese). And the host's own facts: LLVM's host detection for the
// CPU name and features, /sys for the caches, the affinity mask for the
// threads.
//
//===----------------------------------------------------------------------===//

#include "CPUTable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Threading.h"
#include "llvm/TargetParser/AArch64TargetParser.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include <algorithm>
#include <cstdlib>

using namespace mlir::dl::target;

namespace {

constexpr int64_t KiB = 1024, MiB = 1024 * 1024;

const CPUFacts kTable[] = {
    // name              arch         fma  lat  L1d       L2          L3          line
    {"x86-64-v3",        Arch::X86,     2,  4,  32 * KiB,  256 * KiB,   8 * MiB,  64},
    {"x86-64-v4",        Arch::X86,     2,  4,  32 * KiB,    1 * MiB,  32 * MiB,  64},
    {"haswell",          Arch::X86,     2,  5,  32 * KiB,  256 * KiB,   8 * MiB,  64},
    {"broadwell",        Arch::X86,     2,  5,  32 * KiB,  256 * KiB,   8 * MiB,  64},
    {"skylake",          Arch::X86,     2,  4,  32 * KiB,  256 * KiB,   8 * MiB,  64},
    {"skylake-avx512",   Arch::X86,     2,  4,  32 * KiB,    1 * MiB,  32 * MiB,  64},
    {"cascadelake",      Arch::X86,     2,  4,  32 * KiB,    1 * MiB,  32 * MiB,  64},
    {"icelake-server",   Arch::X86,     2,  4,  48 * KiB, 1280 * KiB,  48 * MiB,  64},
    {"sapphirerapids",   Arch::X86,     2,  4,  48 * KiB,    2 * MiB,  64 * MiB,  64},
    {"znver2",           Arch::X86,     2,  5,  32 * KiB,  512 * KiB,  16 * MiB,  64},
    {"znver3",           Arch::X86,     2,  4,  32 * KiB,  512 * KiB,  32 * MiB,  64},
    {"znver4",           Arch::X86,     1,  4,  32 * KiB,    1 * MiB,  32 * MiB,  64},
    {"znver5",           Arch::X86,     2,  4,  48 * KiB,    1 * MiB,  32 * MiB,  64},
    {"neoverse-n1",      Arch::AArch64, 2,  4,  64 * KiB,    1 * MiB,  32 * MiB,  64},
    {"neoverse-v1",      Arch::AArch64, 4,  4,  64 * KiB,    1 * MiB,  32 * MiB,  64},
    {"neoverse-v2",      Arch::AArch64, 4,  4,  64 * KiB,    2 * MiB,  32 * MiB,  64},
    {"cortex-a72",       Arch::AArch64, 2,  7,  32 * KiB,    1 * MiB,         0,  64},
    {"apple-m1",         Arch::AArch64, 4,  4, 128 * KiB,   12 * MiB,   8 * MiB, 128},
    {"apple-m2",         Arch::AArch64, 4,  4, 128 * KiB,   16 * MiB,   8 * MiB, 128},
};

/// The trimmed contents of a small text file, or "" if it cannot be read.
std::string readText(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFileAsStream(path);
  if (!buffer)
    return "";
  return (*buffer)->getBuffer().trim().str();
}

/// "48K", "2048K", "1M" -> bytes; 0 if unparsable.
int64_t parseSize(const std::string &text) {
  if (text.empty())
    return 0;
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (value <= 0)
    return 0;
  switch (*end) {
  case 'K': return value * 1024;
  case 'M': return value * 1024 * 1024;
  case 'G': return value * 1024 * 1024 * 1024;
  case '\0': return value;
  default: return 0;
  }
}

/// The data caches of cpu0, from /sys/devices/system/cpu/cpu0/cache (Linux);
/// zeros where they cannot be read.
void readHostCaches(HostFacts &host) {
  for (int index = 0; index < 8; ++index) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::string level = readText(dir + "level");
    if (level.empty())
      break;
    std::string type = readText(dir + "type");
    int64_t size = parseSize(readText(dir + "size"));
    if (size <= 0 || type == "Instruction")
      continue;
    if (level == "1")
      host.l1d = size;
    else if (level == "2")
      host.l2 = size;
    else if (level == "3")
      host.l3 = size;
    int64_t line = parseSize(readText(dir + "coherency_line_size"));
    if (line > 0 && level == "1")
      host.cacheLine = line;
  }
}

HostFacts detectHost() {
  HostFacts host;
  host.triple = llvm::sys::getProcessTriple();
  host.cpu = llvm::sys::getHostCPUName().str();
  for (const auto &entry : llvm::sys::getHostCPUFeatures())
    host.features.emplace_back(entry.getKey().str(), entry.getValue());
  llvm::sort(host.features);
  readHostCaches(host);
  // The CPUs this process may run on (its affinity mask), as the runtime's
  // thread pool counts them.
  host.threads = llvm::hardware_concurrency().compute_thread_count();
  return host;
}

} // namespace

llvm::ArrayRef<CPUFacts> mlir::dl::target::cpuTable() { return kTable; }

const CPUFacts *mlir::dl::target::findCPU(llvm::StringRef cpu) {
  const CPUFacts *row = llvm::find_if(
      kTable, [&](const CPUFacts &facts) { return facts.name == cpu; });
  return row == std::end(kTable) ? nullptr : row;
}

std::optional<Arch> mlir::dl::target::archOfCPU(llvm::StringRef cpu) {
  if (llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) != llvm::X86::CK_None)
    return Arch::X86;
  if (llvm::AArch64::parseCpu(cpu))
    return Arch::AArch64;
  return std::nullopt;
}

llvm::StringRef mlir::dl::target::defaultTriple(Arch arch) {
  return arch == Arch::X86 ? "x86_64-unknown-linux-gnu"
                           : "aarch64-unknown-linux-gnu";
}

std::vector<std::string> mlir::dl::target::cpuFeatures(Arch arch,
                                                       llvm::StringRef cpu) {
  std::vector<std::string> names;
  auto add = [&](llvm::StringRef feature) {
    feature.consume_front("+");
    if (!feature.empty() && !feature.starts_with("-"))
      names.push_back(feature.str());
  };
  if (arch == Arch::X86) {
    llvm::SmallVector<llvm::StringRef> features;
    llvm::X86::getFeaturesForCPU(cpu, features);
    for (llvm::StringRef feature : features)
      add(feature);
  } else if (std::optional<llvm::AArch64::CpuInfo> info =
                 llvm::AArch64::parseCpu(cpu)) {
    std::vector<llvm::StringRef> features;
    llvm::AArch64::getExtensionFeatures(
        info->Arch.DefaultExts | info->getImpliedExtensions(), features);
    add(info->Arch.ArchFeature);
    for (llvm::StringRef feature : features)
      add(feature);
  }
  llvm::sort(names);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

const HostFacts &mlir::dl::target::hostFacts() {
  static const HostFacts host = detectHost();
  return host;
}
