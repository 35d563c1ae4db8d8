//===- Target.cpp - completing #dl.target, and TargetInfo -----------------===//
//
// A #dl.target is completed from one of two sources: the host (LLVM's host
// detection, /sys, the affinity mask) or a named CPU (LLVM's feature list of
// that CPU and dlc's table). Features are kept, as in LLVM's
// `target-features` function attribute, as changes relative to the CPU's
// own list: a host whose hypervisor hides AVX-512 from a Zen 4 prints
// `cpu = "znver4", features = "-avx512f,..."`, and code generation (and
// LLVM's back end, which receives the same CPU and features) never uses it.
//
//===----------------------------------------------------------------------===//

#include "dl/Target/Target.h"

#include "CPUTable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/TargetParser/Triple.h"

#include <map>

using namespace mlir;
using namespace mlir::dl;
using namespace mlir::dl::target;

namespace {

// What completion falls back to for a CPU LLVM knows but dlc's table does
// not (and for a host whose /sys says nothing): the smallest caches of the
// table's x86 parts, a 64-byte line, FMA facts unknown.
constexpr int64_t kFallbackL1d = 32 * 1024;
constexpr int64_t kFallbackL2 = 256 * 1024;
constexpr int64_t kFallbackCacheLine = 64;

Arch archOfTriple(StringRef triple) {
  return llvm::Triple(triple).getArch() == llvm::Triple::aarch64 ? Arch::AArch64
                                                                 : Arch::X86;
}

/// The vector registers the features give: AVX-512: 32 x 512 bits; AVX:
/// 16 x 256; SSE: 16 x 128; NEON: 32 x 128 (SVE is not used: dlc emits
/// fixed-width vectors).
std::pair<int64_t, int64_t> vectorRegisterFile(Arch arch,
                                               const llvm::StringSet<> &features) {
  if (arch == Arch::AArch64)
    return {128, 32};
  if (features.contains("avx512f"))
    return {512, 32};
  if (features.contains("avx"))
    return {256, 16};
  return {128, 16};
}

/// The enabled features of `cpu` with `changes` ("+a,-b") applied.
llvm::StringSet<> enabledFeatures(Arch arch, StringRef cpu, StringRef changes) {
  llvm::StringSet<> enabled;
  for (const std::string &feature : cpuFeatures(arch, cpu))
    enabled.insert(feature);
  SmallVector<StringRef> parts;
  if (!changes.empty())
    changes.split(parts, ',');
  for (StringRef change : parts) {
    if (change.consume_front("+"))
      enabled.insert(change);
    else if (change.consume_front("-"))
      enabled.erase(change);
  }
  return enabled;
}

} // namespace

ArrayRef<StringRef> mlir::dl::knownCPUs() {
  static const SmallVector<StringRef> names = [] {
    SmallVector<StringRef> result;
    for (const CPUFacts &facts : cpuTable())
      result.push_back(facts.name);
    return result;
  }();
  return names;
}

TargetAttr mlir::dl::completeTarget(TargetAttr given) {
  MLIRContext *ctx = given.getContext();
  // The host, unless the description names a CPU, or an architecture other
  // than the host's (then that architecture's generic CPU).
  bool hostCPU = given.getCpu().empty() || given.getCpu() == "host";
  bool otherArch = !given.getTriple().empty() &&
                   archOfTriple(given.getTriple()) !=
                       archOfTriple(hostFacts().triple);
  bool fromHost = hostCPU && !otherArch;

  std::string triple, cpu;
  Arch arch;
  // Feature changes relative to the CPU's list, by name: true adds.
  std::map<std::string, bool> changes;
  int64_t l1d = 0, l2 = 0, l3 = 0, line = 0, threads = 0;
  if (fromHost) {
    const HostFacts &host = hostFacts();
    triple = host.triple;
    arch = archOfTriple(triple);
    cpu = host.cpu;
    if (archOfCPU(cpu) != arch)
      cpu = arch == Arch::X86 ? "x86-64" : "generic";
    std::vector<std::string> own = cpuFeatures(arch, cpu);
    for (const auto &[name, enabled] : host.features) {
      bool listed = llvm::binary_search(own, name);
      if (enabled != listed)
        changes[name] = enabled;
    }
    l1d = host.l1d;
    l2 = host.l2;
    l3 = host.l3;
    line = host.cacheLine;
    threads = host.threads;
  } else {
    arch = given.getTriple().empty() ? *archOfCPU(given.getCpu())
                                     : archOfTriple(given.getTriple());
    cpu = !hostCPU ? given.getCpu().str()
                   : (arch == Arch::X86 ? "x86-64" : "generic");
    triple = given.getTriple().empty() ? defaultTriple(arch).str()
                                       : given.getTriple().str();
    // A named CPU is not this machine: how many threads its code will have
    // is not known; 1 unless the description says.
    threads = 1;
  }
  const CPUFacts *row = findCPU(cpu);
  auto orTable = [&](int64_t value, int64_t CPUFacts::*field, int64_t fallback) {
    if (value > 0)
      return value;
    return row && row->*field > 0 ? row->*field : fallback;
  };
  l1d = orTable(l1d, &CPUFacts::l1d, kFallbackL1d);
  l2 = orTable(l2, &CPUFacts::l2, kFallbackL2);
  l3 = orTable(l3, &CPUFacts::l3, 0);
  line = orTable(line, &CPUFacts::cacheLine, kFallbackCacheLine);

  // The description's own changes apply last.
  SmallVector<StringRef> parts;
  if (!given.getFeatures().empty())
    given.getFeatures().split(parts, ',');
  for (StringRef change : parts)
    changes[change.drop_front().str()] = change.front() == '+';
  std::vector<std::string> own = cpuFeatures(arch, cpu);
  SmallVector<std::string> kept;
  for (const auto &[name, enabled] : changes)
    if (enabled != llvm::binary_search(own, name))
      kept.push_back((enabled ? "+" : "-") + name);
  std::string features = llvm::join(kept, ",");
  auto [vectorBits, vectorRegisters] =
      vectorRegisterFile(arch, enabledFeatures(arch, cpu, features));

  auto pick = [](int64_t written, int64_t derived) {
    return written > 0 ? written : derived;
  };
  return TargetAttr::get(
      ctx, given.getTriple().empty() ? StringRef(triple) : given.getTriple(),
      StringRef(cpu), StringRef(features), pick(given.getVectorBits(), vectorBits),
      pick(given.getVectorRegisters(), vectorRegisters),
      pick(given.getFmaUnits(), row ? row->fmaUnits : 0),
      pick(given.getFmaLatency(), row ? row->fmaLatency : 0),
      pick(given.getL1d(), l1d), pick(given.getL2(), l2),
      pick(given.getL3(), l3), pick(given.getCacheLine(), line),
      pick(given.getThreads(), threads));
}

TargetAttr mlir::dl::hostTarget(MLIRContext *context) {
  int64_t unset = 0;
  return completeTarget(TargetAttr::get(context, StringRef(), StringRef(),
                                        StringRef(), unset, unset, unset, unset,
                                        unset, unset, unset, unset, unset));
}

TargetInfo TargetInfo::of(Operation *op) {
  for (Operation *current = op; current; current = current->getParentOp())
    if (auto target = current->getAttrOfType<TargetAttr>(kTargetAttrName))
      return TargetInfo(target);
  return TargetInfo(hostTarget(op->getContext()));
}

TargetInfo::TargetInfo(TargetAttr target) : attr(completeTarget(target)) {
  features = enabledFeatures(isAArch64() ? Arch::AArch64 : Arch::X86,
                             attr.getCpu(), attr.getFeatures());
}

bool TargetInfo::isX86() const {
  return llvm::Triple(attr.getTriple()).getArch() == llvm::Triple::x86_64;
}

bool TargetInfo::isAArch64() const {
  return llvm::Triple(attr.getTriple()).getArch() == llvm::Triple::aarch64;
}

bool TargetInfo::hasFeature(StringRef name) const {
  name.consume_front("+");
  return features.contains(name);
}

SmallVector<StringRef> TargetInfo::getFeatures() const {
  SmallVector<StringRef> names;
  for (const auto &entry : features)
    names.push_back(entry.getKey());
  llvm::sort(names);
  return names;
}

int64_t TargetInfo::getLanes(Type elementType) const {
  int64_t bits = elementType.isIntOrFloat() ? elementType.getIntOrFloatBitWidth()
                                            : 64;
  return std::max<int64_t>(1, getVectorBits() / std::max<int64_t>(bits, 8));
}
