//===- Target.h - what code generation knows of the target CPU -*- C++ -*-===//
//
// Every target decision in dlc (vector width, register tile shapes, cache
// blocks, threads, ISA-specific lowerings, the JIT's CPU and features) is
// made from one description, #dl.target, through this API. The description
// is resolved once (dl-resolve-target, the first step of every pipeline)
// from the host or from a named CPU, and carried by the module, so that IR
// printed at any stage replays with the same decisions. No pass keeps a
// hardware constant of its own.
//
// Modelled on IREE's #hal.executable.target and its helpers (hasFeature,
// getNativeVectorSizeInBytes, getRegisterSpaceBitsIfKnown).
//
//===----------------------------------------------------------------------===//
#ifndef DL_TARGET_TARGET_H
#define DL_TARGET_TARGET_H

#include "dl/IR/DLAttrs.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringSet.h"

#include <string>

namespace mlir::dl {

/// The CPUs dlc has a table for (vector FMA pipes and latency, cache sizes),
/// by LLVM name. Other CPUs LLVM knows are accepted with conservative
/// defaults for what the table would say.
ArrayRef<StringRef> knownCPUs();

/// `given` (possibly partial) completed: fields left at their defaults come
/// from the table of its CPU and LLVM's feature list for it, or, for an
/// empty or "host" CPU, from the machine the compiler runs on. Fields
/// written explicitly win. `given` has been verified (TargetAttr::verify),
/// so this cannot fail. Idempotent.
TargetAttr completeTarget(TargetAttr given);

/// completeTarget of an empty description: the host.
TargetAttr hostTarget(MLIRContext *context);

/// A completed target, and the questions passes ask of it.
class TargetInfo {
public:
  /// The target of `op`: the `dl.target` attribute of `op` or of its
  /// nearest ancestor that has one, completed; the host where none has.
  static TargetInfo of(Operation *op);

  /// `target` completed.
  explicit TargetInfo(TargetAttr target);

  TargetAttr getAttr() const { return attr; }
  StringRef getTriple() const { return attr.getTriple(); }
  StringRef getCPU() const { return attr.getCpu(); }
  bool isX86() const;
  bool isAArch64() const;

  /// Whether the CPU has the ISA feature `name` (LLVM's name, without a
  /// sign: "avx512f", "avx2", "fma", "neon"): the CPU's own features with
  /// the description's additions and removals applied.
  bool hasFeature(StringRef name) const;
  /// Every feature the CPU has, sorted.
  SmallVector<StringRef> getFeatures() const;

  /// Width in bits and number of the vector registers code may use.
  int64_t getVectorBits() const { return attr.getVectorBits(); }
  int64_t getVectorRegisters() const { return attr.getVectorRegisters(); }
  /// Elements of `elementType` in one vector register (at least 1).
  int64_t getLanes(Type elementType) const;
  /// Vector FMAs issued per cycle at getVectorBits() and their latency in
  /// cycles; 0 where unknown.
  int64_t getFMAUnits() const { return attr.getFmaUnits(); }
  int64_t getFMALatency() const { return attr.getFmaLatency(); }

  int64_t getL1DataBytes() const { return attr.getL1d(); }
  int64_t getL2Bytes() const { return attr.getL2(); }
  int64_t getL3Bytes() const { return attr.getL3(); }
  int64_t getCacheLineBytes() const { return attr.getCacheLine(); }
  /// Hardware threads compiled code is sized for (column blocks of a GEMM).
  int64_t getThreads() const { return attr.getThreads(); }

  /// The most bytes a block of data reused from L2 may take while other
  /// data streams through the cache: half of it. The limit of a filter a
  /// direct convolution rereads (dl-select-strategies), and of one that
  /// dl-layout keeps in NCHW.
  int64_t getL2ResidentBytes() const { return getL2Bytes() / 2; }

private:
  TargetAttr attr;
  llvm::StringSet<> features;
};

/// The register tile of a micro-kernel: `rows` output rows by `vectors`
/// vector registers per row.
struct RegisterTileShape {
  int64_t rows;
  int64_t vectors;
};

/// The register tile of a micro-kernel on `target` (see the model in
/// lib/Target/MicroKernel.cpp). With `wholeLines`, for a B read in rows of
/// its own layout (not in panels of the tile's width), only tiles whose
/// row of vectors spans whole cache lines, where the target has one.
RegisterTileShape chooseRegisterTile(const TargetInfo &target,
                                     bool wholeLines = false);

/// The register tile of a depthwise convolution on `target`, where both
/// operands are vectors along the channels (no broadcast element): the
/// fewest accumulators that hide the FMA latency, in rows of whole cache
/// lines (see lib/Target/MicroKernel.cpp).
RegisterTileShape chooseDepthwiseTile(const TargetInfo &target);

} // namespace mlir::dl

#endif // DL_TARGET_TARGET_H
