//===- InitAllPasses.h - register every dlc pass and pipeline ---*- C++ -*-===//
//
// What dl-opt and the Python bindings call once: every pass of every level
// (each level's Passes.td generates its own registration) and the named
// pipelines.
//
//===----------------------------------------------------------------------===//
#ifndef DL_INITALLPASSES_H
#define DL_INITALLPASSES_H

#include "dl/Codegen/CPU/Passes.h"
#include "dl/Codegen/Common/Passes.h"
#include "dl/Codegen/GPU/Passes.h"
#include "dl/Codegen/GPUToCPU/Passes.h"
#include "dl/Conversion/Passes.h"
#include "dl/Pipelines/Pipelines.h"
#include "dl/Target/Passes.h"
#include "dl/Transforms/Passes.h"

namespace mlir::dl {

inline void registerAllDLPasses() {
  registerDLTargetPasses();
  registerDLGraphPasses();
  registerDLConversionPasses();
  registerDLCommonPasses();
  registerDLCPUPasses();
  registerDLGPUPasses();
  registerDLGPUToCPUPasses();
  registerPipelines();
}

} // namespace mlir::dl

#endif // DL_INITALLPASSES_H
