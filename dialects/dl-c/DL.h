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

/// LLVM code generation in parallel parts (lib/CAPI/ObjectCode.cpp): a
/// module in the llvm dialect, translated to LLVM IR with the packed
/// `_mlir_<f>` wrappers the ExecutionEngine adds, split into at most
/// `numParts` parts of about equal size.
typedef struct {
  void *ptr;
} DlcObjectJob;

/// The job of compiling `module`, or a null job (`onError` says why). Reads
/// the MLIR module: call it as any other MLIR C API function.
MLIR_CAPI_EXPORTED DlcObjectJob dlcObjectJobCreate(MlirModule module,
                                                   int optLevel, int numParts,
                                                   MlirStringCallback onError,
                                                   void *userData);

/// How many parts the job has (fewer than asked for when the module has
/// fewer functions, or symbols that cannot be split apart).
MLIR_CAPI_EXPORTED int dlcObjectJobNumParts(DlcObjectJob job);

/// Optimizes and compiles every part on `numThreads` threads, writing part i
/// as the position-independent object file `<directory>/part<i>.o`. Touches
/// no MLIR object. False, with the first error given to `onError`, if a part
/// failed.
MLIR_CAPI_EXPORTED bool dlcObjectJobRun(DlcObjectJob job,
                                        MlirStringRef directory,
                                        int numThreads,
                                        MlirStringCallback onError,
                                        void *userData);

MLIR_CAPI_EXPORTED void dlcObjectJobDestroy(DlcObjectJob job);

/// The number of operations in `module`, nested ones included.
MLIR_CAPI_EXPORTED int64_t dlcModuleOperationCount(MlirModule module);

#ifdef __cplusplus
}
#endif

#endif // DL_C_DL_H
