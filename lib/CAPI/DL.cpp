//===- DL.cpp - C API of the dl dialect and dlc passes --------------------===//

#include "dl-c/DL.h"
#include "dl/IR/DLDialect.h"
#include "dl/InitAllPasses.h"
#include "dl/Target/Target.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"

using namespace mlir;
using namespace mlir::dl;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(DL, dl, mlir::dl::DLDialect)

void dlcRegisterPasses(void) { registerAllDLPasses(); }

bool dlcAttributeIsATarget(MlirAttribute attribute) {
  return isa<TargetAttr>(unwrap(attribute));
}

MlirAttribute dlcTargetComplete(MlirAttribute target) {
  return wrap(completeTarget(cast<TargetAttr>(unwrap(target))));
}

void dlcTargetFields(MlirAttribute target, DlcPairCallback callback,
                     void *userData) {
  auto attr = cast<TargetAttr>(unwrap(target));
  auto emit = [&](StringRef name, const std::string &value) {
    callback(wrap(name), wrap(StringRef(value)), userData);
  };
  emit("triple", attr.getTriple().str());
  emit("cpu", attr.getCpu().str());
  emit("features", attr.getFeatures().str());
  std::pair<StringRef, int64_t> numbers[] = {
      {"vector_bits", attr.getVectorBits()},
      {"vector_registers", attr.getVectorRegisters()},
      {"fma_units", attr.getFmaUnits()},
      {"fma_latency", attr.getFmaLatency()},
      {"l1d", attr.getL1d()},
      {"l2", attr.getL2()},
      {"l3", attr.getL3()},
      {"cache_line", attr.getCacheLine()},
      {"threads", attr.getThreads()}};
  for (auto [name, value] : numbers)
    emit(name, std::to_string(value));
}

void dlcTargetFeatures(MlirAttribute target, MlirStringCallback callback,
                       void *userData) {
  TargetInfo info(cast<TargetAttr>(unwrap(target)));
  for (StringRef feature : info.getFeatures())
    callback(wrap(feature), userData);
}

void dlcTargetRegisterTile(MlirAttribute target, int64_t *rows,
                           int64_t *vectors) {
  RegisterTileShape tile =
      chooseRegisterTile(TargetInfo(cast<TargetAttr>(unwrap(target))));
  *rows = tile.rows;
  *vectors = tile.vectors;
}

void dlcKnownCPUs(MlirStringCallback callback, void *userData) {
  for (StringRef cpu : knownCPUs())
    callback(wrap(cpu), userData);
}

void dlcPipelineStages(bool gpu, DlcPairCallback callback, void *userData) {
  for (const StageInfo &stage : gpu ? gpuStages() : cpuStages())
    callback(wrap(StringRef(stage.name)), wrap(StringRef(stage.description)),
             userData);
}

void dlcGPUChips(MlirStringCallback callback, void *userData) {
  for (StringRef chip : gpuChips())
    callback(wrap(chip), userData);
}
