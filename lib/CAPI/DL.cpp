//===- DL.cpp - C API of the dl dialect and dlc passes --------------------===//

#include "dl-c/DL.h"
#include "dl/DLDialect.h"
#include "dl/Passes.h"
#include "dl/Pipelines.h"

#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(DL, dl, mlir::dl::DLDialect)

void dlcRegisterPasses(void) {
  mlir::dl::registerDLPasses();
  mlir::dl::registerPipelines();
}
