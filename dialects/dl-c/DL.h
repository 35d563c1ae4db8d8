//===- DL.h - C API of the dl dialect and dlc passes --------------*- C -*-===//
#ifndef DL_C_DL_H
#define DL_C_DL_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(DL, dl);

/// Registers dlc's passes and pipelines (convert-dl-to-linalg,
/// dl-cpu-pipeline, ...) in the global pass registry.
MLIR_CAPI_EXPORTED void dlcRegisterPasses(void);

#ifdef __cplusplus
}
#endif

#endif // DL_C_DL_H
