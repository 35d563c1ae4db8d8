// RUN: not dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{from=llvm to=linalg})' 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{to=loops})' 2>&1 | FileCheck %s --check-prefix=STAGE

// dl-cpu-pipeline refuses a slice that runs backwards, and unknown stages.
// ORDER: dl-cpu-pipeline: `from` must not come after `to` in the stage order dl, graph, linalg, bufferized, affine, vector, llvm
// STAGE: dl-cpu-pipeline: unknown stage 'loops' for `to`; the stages are, in order: dl, graph, linalg, bufferized, affine, vector, llvm

func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {
  return %a : tensor<3xf32>
}

// So does dl-gpu-pipeline, naming what it accepts.
// RUN: not dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{chip=sm_20})' 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{to=ptx})' 2>&1 | FileCheck %s --check-prefix=GPUTO
// CHIP: dl-gpu-pipeline: unsupported chip 'sm_20'; supported: sm_70, sm_75, sm_80, sm_86, sm_89, sm_90
// GPUTO: dl-gpu-pipeline: to must be gpu, binary or emulated, but got 'ptx'

// And an unknown target CPU is named.
// RUN: not dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{target-cpu=pentium9})' 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: error: #dl.target: unknown CPU 'pentium9'
