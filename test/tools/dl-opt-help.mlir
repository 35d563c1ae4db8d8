// RUN: dl-opt --help | FileCheck %s

// dl-opt lists dlc's passes and pipeline with their descriptions, beside the
// upstream ones.
// CHECK-DAG: --convert-dl-to-linalg {{.*}}- Lower dl ops to linalg, tensor, arith and math on tensors
// CHECK-DAG: --dl-affine-vectorize {{.*}}- Vectorize parallel affine loops along their contiguous accesses
// CHECK-DAG: --dl-cpu-pipeline {{.*}}- Lower dl to the llvm dialect for CPU execution
// CHECK-DAG: --one-shot-bufferize
// CHECK-DAG: --convert-linalg-to-affine-loops
