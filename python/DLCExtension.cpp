//===- DLCExtension.cpp - site initializer of dlc's MLIR bindings ---------===//
//
// Loaded by dlc.mlir._mlir_libs at import (as `_site_initialize_0`): every
// Context created through dlc.mlir knows the dl dialect, and the pass registry
// holds dlc's passes and pipelines, so Python builds and runs the same
// pipelines as dl-opt.
//
//===----------------------------------------------------------------------===//

#include "dl-c/DL.h"

#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

NB_MODULE(_site_initialize_0, m) {
  m.doc() = "dlc: registers the dl dialect, dlc passes and pipelines";
  m.def("register_dialects", [](MlirDialectRegistry registry) {
    mlirDialectHandleInsertDialect(mlirGetDialectHandle__dl__(), registry);
  });
  dlcRegisterPasses();
}
