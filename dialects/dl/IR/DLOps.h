//===- DLOps.h - dl dialect operations --------------------------*- C++ -*-===//
#ifndef DL_DLOPS_H
#define DL_DLOPS_H

#include "dl/IR/DLAttrs.h"
#include "dl/IR/DLDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dl/IR/DLOps.h.inc"

#endif // DL_DLOPS_H
