//===- DL.h - C API of the dl dialect and dlc's passes ------------*- C -*-===//
//
// What dlc's Python package needs from the C++ side beyond the upstream C
// API: the dialect's registration, dlc's passes and pipelines, the target
// description (#dl.target) and the names of the pipelines' stages.
//
//===----------------------------------------------------------------------===//
#ifndef DL_C_DL_H
#define DL_C_DL_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(DL, dl);

/// Registers every dlc pass and both pipelines.
MLIR_CAPI_EXPORTED void dlcRegisterPasses(void);

/// Calls `callback(name, userData)` then `callback(value, userData)` for
/// each field of a #dl.target, in order (values as text).
typedef void (*DlcPairCallback)(MlirStringRef first, MlirStringRef second,
                                void *userData);

/// Whether `attribute` is a #dl.target.
MLIR_CAPI_EXPORTED bool dlcAttributeIsATarget(MlirAttribute attribute);

/// `target` (a #dl.target, possibly partial) completed from its CPU's table
/// or from the host (see dl::completeTarget).
MLIR_CAPI_EXPORTED MlirAttribute dlcTargetComplete(MlirAttribute target);

/// Each field of `target` as (name, value as text), in order.
MLIR_CAPI_EXPORTED void dlcTargetFields(MlirAttribute target,
                                        DlcPairCallback callback,
                                        void *userData);

/// Each ISA feature `target` has (its CPU's with its changes applied).
MLIR_CAPI_EXPORTED void dlcTargetFeatures(MlirAttribute target,
                                          MlirStringCallback callback,
                                          void *userData);

/// The register tile (rows x vectors) of a micro-kernel on `target`.
MLIR_CAPI_EXPORTED void dlcTargetRegisterTile(MlirAttribute target,
                                              int64_t *rows, int64_t *vectors);

/// Each CPU of dlc's table.
MLIR_CAPI_EXPORTED void dlcKnownCPUs(MlirStringCallback callback,
                                     void *userData);

/// Each stage (name, description) of dl-cpu-pipeline (`gpu` false) or of
/// dl-gpu-pipeline (`gpu` true), in order.
MLIR_CAPI_EXPORTED void dlcPipelineStages(bool gpu, DlcPairCallback callback,
                                          void *userData);

/// Each NVIDIA chip dl-gpu-pipeline compiles for.
MLIR_CAPI_EXPORTED void dlcGPUChips(MlirStringCallback callback,
                                    void *userData);

#ifdef __cplusplus
}
#endif

#endif // DL_C_DL_H
