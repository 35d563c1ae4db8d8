// RUN: not dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{from=llvm to=linalg})' 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{to=loops})' 2>&1 | FileCheck %s --check-prefix=STAGE

// dl-cpu-pipeline refuses a slice that runs backwards, and unknown stages.
// ORDER: dl-cpu-pipeline: `from` must not come after `to` in the stage order dl, graph, linalg, bufferized, affine, vector, llvm
// STAGE: Cannot find option named 'loops'!

func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {
  return %a : tensor<3xf32>
}
