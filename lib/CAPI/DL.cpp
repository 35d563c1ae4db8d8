//===- DL.cpp - C API of the dl dialect and dlc passes --------------------===//

#include "dl-c/DL.h"
#include "dl/IR/DLDialect.h"
#include "dl/InitAllPasses.h"

#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(DL, dl, mlir::dl::DLDialect)

void dlcRegisterPasses(void) {
  mlir::dl::registerAllDLPasses();
}
