// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline)' | FileCheck %s --check-prefix=LLVM
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline)' | FileCheck %s --check-prefix=NOEXP
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{approximate-math=false})' | FileCheck %s --check-prefix=LIBM
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{to=linalg})' | FileCheck %s --check-prefix=LINALG
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{to=bufferized})' | FileCheck %s --check-prefix=BUF
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{to=affine target-cpu=znver4 target-threads=1})' | FileCheck %s --check-prefix=AFFINE
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{to=vector target-cpu=znver4 target-threads=1})' | FileCheck %s --check-prefix=VECTOR
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{to=vector target-cpu=haswell target-threads=1})' | FileCheck %s --check-prefix=AVX2
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{to=vector vectorize=false})' | FileCheck %s --check-prefix=NOVEC
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{to=graph})' | FileCheck %s --check-prefix=TARGET
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{to=affine tile-size=4})' | FileCheck %s --check-prefix=TILED

// Replaying a stage from the printed IR of the previous one gives the same
// result as running straight through (printed with its locations: the
// profiler's region names say the source lines).
// RUN: dl-opt %s --mlir-print-debuginfo --pass-pipeline='builtin.module(dl-cpu-pipeline{to=bufferized})' \
// RUN:   | dl-opt --pass-pipeline='builtin.module(dl-cpu-pipeline{from=bufferized})' > %t.staged
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline)' > %t.direct
// RUN: diff %t.staged %t.direct

// The MLP of the README: every dl op is gone, every temporary is freed, and the
// function keeps its C interface for the ExecutionEngine.
func.func @mlp(%x: tensor<?x784xf32>, %w1: tensor<784x128xf32>, %b1: tensor<128xf32>,
               %w2: tensor<128x10xf32>, %b2: tensor<10xf32>) -> tensor<?x10xf32>
    attributes {llvm.emit_c_interface} {
  %0 = dl.matmul %x, %w1 : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
  %1 = dl.add %0, %b1 : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %2 = dl.relu %1 : tensor<?x128xf32> -> tensor<?x128xf32>
  %3 = dl.matmul %2, %w2 : (tensor<?x128xf32>, tensor<128x10xf32>) -> tensor<?x10xf32>
  %4 = dl.add %3, %b2 : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %5 = dl.softmax %4 axis = 1 : tensor<?x10xf32> -> tensor<?x10xf32>
  return %5 : tensor<?x10xf32>
}

// LLVM-NOT: = dl.
// LLVM-NOT: linalg.
// LLVM-NOT: memref.
// LLVM-NOT: affine.
// LLVM-NOT: unrealized_conversion_cast
// Allocations call dlc's runtime (lib/Runtime/Memory.cpp), not malloc/free:
// LLVM-NOT: llvm.func @malloc
// LLVM: llvm.func @_mlir_memref_to_llvm_alloc
// LLVM: llvm.func @mlp(
// LLVM-DAG: llvm.call @_mlir_memref_to_llvm_alloc
// LLVM-DAG: llvm.call @_mlir_memref_to_llvm_free
// The softmax's exp is a polynomial (dl-math-approximation), not a libm
// call per lane, unless approximate-math=false:
// NOEXP: llvm.func @mlp(
// NOEXP-NOT: llvm.intr.exp
// NOEXP: llvm.func @_mlir_ciface_mlp(
// LIBM: llvm.intr.exp
// LLVM: llvm.func @_mlir_ciface_mlp(

// LINALG-LABEL: func.func @mlp
// LINALG-NOT: dl.
// LINALG: linalg.matmul
// LINALG: linalg.matmul
// LINALG: linalg.reduce { arith.maximumf }
// LINALG: math.exp
// LINALG: linalg.reduce { arith.addf }
// LINALG: arith.divf

// Buffers: one allocation per live temporary; the hidden layer is freed, the
// result is returned to the caller.
// BUF-LABEL: func.func @mlp(%{{.*}}: memref<?x784xf32>, %{{.*}}: memref<784x128xf32>, %{{.*}}: memref<128xf32>, %{{.*}}: memref<128x10xf32>, %{{.*}}: memref<10xf32>) -> memref<?x10xf32>
// BUF-NOT: tensor<
// BUF: %[[HIDDEN:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?x128xf32>
// BUF: %[[OUT:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?x10xf32>
// BUF: %[[ROWS:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?xf32>
// BUF-DAG: memref.dealloc %[[HIDDEN]]
// BUF-DAG: memref.dealloc %[[ROWS]]
// BUF: return %[[OUT]]

// The matmul nest, interchanged to (i, k, j) by dl-affine-interchange; A[i, k]
// is hoisted out of the j loop. Its strategy (chosen for Zen 4 on the graph)
// is on the outermost loop; dl-affine-register-tile records what it applied.
// B's 784 x 128 panel (392 KiB) is under half of Zen 4's 1 MiB L2: the
// reduction is not blocked, the tiles run all 784 steps in registers.
// AFFINE-LABEL: func.func @mlp
// AFFINE-NOT: linalg.
// AFFINE: affine.for %[[I:.*]] = 0 to #{{.*}}()[%{{.*}}] step 6 {
// AFFINE: affine.for %[[J:.*]] = 0 to 128 step 64 {
// AFFINE: affine.for %{{.*}} = 0 to 784 iter_args
// AFFINE: } {dl.fused_epilogue = ["arith.addf", "arith.maximumf"]}
// AFFINE: } {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 6, vectors = 4>}

// The target decides: on Zen 4 (32 zmm registers) the first matmul is a
// micro-kernel of 6 rows x 4 vectors of 16 lanes, FMAs on registers carried
// across k; its row tiles, the outer parallel loop, run on threads
// (affine.parallel); the rows left over form a second, scalar nest whose
// loop over the columns is vectorized by 16 (on threads too: its dynamic
// row count does not bound its work).
// VECTOR-LABEL: func.func @mlp
// VECTOR: affine.parallel (%[[I:.*]]) = (0) to ((symbol(%{{.*}}) floordiv 6) * 6) step (6) {
// VECTOR: affine.for %[[J:.*]] = 0 to 128 step 64 {
// VECTOR: affine.for %[[K:.*]] = 0 to 784 iter_args
// VECTOR: affine.vector_load %{{.*}}[%[[K]], %[[J]]] : memref<784x128xf32>, vector<16xf32>
// VECTOR: vector.fma {{.*}} : vector<16xf32>
// VECTOR: affine.parallel (%{{.*}}) = ((symbol(%{{.*}}) floordiv 6) * 6) to (symbol(%{{.*}})) {
// VECTOR: affine.for %{{.*}} = 0 to 128 step 16 {
// VECTOR: affine.vector_load {{.*}} : memref<784x128xf32>, vector<16xf32>
// VECTOR: arith.mulf {{.*}} : vector<16xf32>
// On Haswell (16 ymm registers, 256 KiB of L2), 6 rows x 2 vectors of 8
// lanes (B read in its own rows: a tile of whole 64-byte lines), in column
// blocks of B packed to stay in L2, the reduction in blocks of 80 (a 784 x
// 80 panel, 245 KiB, is more than half of its L2).
// AVX2-LABEL: func.func @mlp
// AVX2: affine.parallel (%{{.*}}) = (0) to (128) step (80) {
// AVX2: affine.for %{{.*}} = 0 to 784 step 80 {
// AVX2: affine.for %{{.*}} = 0 to #{{.*}}()[%{{.*}}] step 6 {
// AVX2: affine.for %{{.*}} = #{{.*}}(%{{.*}}) to min #{{.*}}(%{{.*}}) step 16 {
// AVX2: vector.fma {{.*}} : vector<8xf32>

// Every stage carries the target it is compiled for (here the host's).
// TARGET: module attributes {dl.target = #dl.target<triple = "{{.*}}", cpu = "{{.*}}"

// NOVEC-LABEL: func.func @mlp
// NOVEC-NOT: vector<

// TILED-LABEL: func.func @mlp
// TILED: affine.for %{{.*}} = 0 to 784 step 4 {
// TILED: affine.for %{{.*}} = 0 to 128 step 4 {
