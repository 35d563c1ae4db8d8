//===- DLOps.td - Python bindings for dl ---------------------*- tablegen -*-===//
// Wrapper so that declare_mlir_dialect_python_bindings places _dl_ops_gen.py
// under dialects/.
#ifndef PYTHON_BINDINGS_DL_OPS
#define PYTHON_BINDINGS_DL_OPS
include "dl/IR/DLOps.td"
#endif
