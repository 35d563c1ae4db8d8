// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-register-tile{rows=4 vectors=2},canonicalize))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-register-tile{rows=4 vectors=2 prefetch=false}))' | FileCheck %s --check-prefix=OFF
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=2},dl-cpu-pipeline)' | FileCheck %s --check-prefix=LLVM
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4 threads=1},func.func(dl-affine-register-tile))' | FileCheck %s --check-prefix=ZEN4

// A grouped convolution in NHWC (2 groups of 16 channels, 3x3, stride 2):
// every pixel of the window is a run of 16 floats (64 bytes, one line of
// haswell's) of its group, 32 floats apart. Each tile fetches, at every
// (kh, kw), the runs of the next output row (oh + 1: input rows
// (oh + 1) * 2 + kh) for its 4 output columns: the first and the last
// element of the run, not after the last row. The micro-kernel itself
// reads the current row.
// CHECK-DAG: #[[NOTLAST:.+]] = affine_set<(d0) : (-d0 + 2 >= 0)>
// CHECK-LABEL: func @grouped
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<2x10x10x2x16xf32>
// CHECK: affine.for %[[N:.+]] = 0 to 2 {
// CHECK: affine.for %[[G:.+]] = 0 to 2 {
// CHECK: affine.for %[[OH:.+]] = 0 to 4 {
// CHECK: affine.for %[[OW:.+]] = 0 to 4 step 4 {
// CHECK: affine.for %[[KH:[a-z0-9]+]] = 0 to 3 iter_args
// CHECK: affine.for %[[KW:[a-z0-9]+]] = 0 to 3 iter_args
// CHECK-NEXT: affine.if #[[NOTLAST]](%[[OH]]) {
// CHECK-NEXT: affine.prefetch %[[X]][%[[N]], %[[KH]] + %[[OH]] * 2 + 2, %[[OW]] * 2 + %[[KW]], %[[G]], 0], read, locality<3>, data
// CHECK-NEXT: affine.prefetch %[[X]][%[[N]], %[[KH]] + %[[OH]] * 2 + 2, %[[OW]] * 2 + %[[KW]], %[[G]], 15], read, locality<3>, data
// CHECK-NEXT: affine.prefetch %[[X]][%[[N]], %[[KH]] + %[[OH]] * 2 + 2, %[[KW]] + %[[OW]] * 2 + 2, %[[G]], 0], read, locality<3>, data
// CHECK-NEXT: affine.prefetch %[[X]][%[[N]], %[[KH]] + %[[OH]] * 2 + 2, %[[KW]] + %[[OW]] * 2 + 2, %[[G]], 15], read, locality<3>, data
// CHECK-NEXT: affine.prefetch %[[X]][%[[N]], %[[KH]] + %[[OH]] * 2 + 2, %[[KW]] + %[[OW]] * 2 + 4, %[[G]], 0], read, locality<3>, data
// CHECK-NEXT: affine.prefetch %[[X]][%[[N]], %[[KH]] + %[[OH]] * 2 + 2, %[[KW]] + %[[OW]] * 2 + 4, %[[G]], 15], read, locality<3>, data
// CHECK-NEXT: affine.prefetch %[[X]][%[[N]], %[[KH]] + %[[OH]] * 2 + 2, %[[KW]] + %[[OW]] * 2 + 6, %[[G]], 0], read, locality<3>, data
// CHECK-NEXT: affine.prefetch %[[X]][%[[N]], %[[KH]] + %[[OH]] * 2 + 2, %[[KW]] + %[[OW]] * 2 + 6, %[[G]], 15], read, locality<3>, data
// CHECK-NEXT: }
// CHECK-NEXT: affine.for %{{.+}} = 0 to 16 iter_args
// CHECK-NOT: affine.prefetch
// CHECK: vector.fma
// With AVX-512 (a 16-channel group is one zmm vector) the same runs:
// ZEN4-LABEL: func @grouped
// ZEN4: affine.if
// ZEN4-COUNT-8: affine.prefetch
// ZEN4-NOT: affine.prefetch
// ZEN4: vector.fma
// ZEN4-NOT: affine.prefetch
// ZEN4: return
// OFF-LABEL: func @grouped
// OFF-NOT: affine.prefetch
// OFF: vector.fma
// The whole pipeline keeps the prefetches and still runs the nest on the
// threads (the prefetch writes nothing: no dependence between iterations).
// LLVM-LABEL: llvm.func @grouped(
// LLVM-LABEL: llvm.func internal @grouped_parallel_0(
// LLVM: "llvm.intr.prefetch"({{.*}}) <{cache = 1 : i32, hint = 3 : i32, rw = 0 : i32}>
func.func @grouped(%x: memref<2x10x10x2x16xf32>, %w: memref<3x3x16x2x16xf32>) -> memref<2x4x4x2x16xf32> {
  %y = memref.alloc() : memref<2x4x4x2x16xf32>
  affine.for %n = 0 to 2 {
    affine.for %g = 0 to 2 {
      affine.for %oc = 0 to 16 {
        affine.for %oh = 0 to 4 {
          affine.for %ow = 0 to 4 {
            affine.for %kh = 0 to 3 {
              affine.for %kw = 0 to 3 {
                affine.for %ic = 0 to 16 {
                  %0 = affine.load %x[%n, %oh * 2 + %kh, %ow * 2 + %kw, %g, %ic] : memref<2x10x10x2x16xf32>
                  %1 = affine.load %w[%kh, %kw, %ic, %g, %oc] : memref<3x3x16x2x16xf32>
                  %2 = affine.load %y[%n, %oh, %ow, %g, %oc] : memref<2x4x4x2x16xf32>
                  %3 = arith.mulf %0, %1 : f32
                  %4 = arith.addf %2, %3 : f32
                  affine.store %4, %y[%n, %oh, %ow, %g, %oc] : memref<2x4x4x2x16xf32>
                }
              }
            }
          }
        }
      }
    }
  }
  return %y : memref<2x4x4x2x16xf32>
}

// -----

// What it refuses. All channels in one group: kw x channels is one run of
// 3 x 16 floats the hardware prefetchers follow.
// CHECK-LABEL: func @one_group
// CHECK-NOT: affine.prefetch
// CHECK: vector.fma
// CHECK-NOT: affine.prefetch
// CHECK: return
func.func @one_group(%x: memref<2x10x10x16xf32>, %w: memref<3x3x16x16xf32>) -> memref<2x4x4x16xf32> {
  %y = memref.alloc() : memref<2x4x4x16xf32>
  affine.for %n = 0 to 2 {
    affine.for %oc = 0 to 16 {
      affine.for %oh = 0 to 4 {
        affine.for %ow = 0 to 4 {
          affine.for %kh = 0 to 3 {
            affine.for %kw = 0 to 3 {
              affine.for %ic = 0 to 16 {
                %0 = affine.load %x[%n, %oh * 2 + %kh, %ow * 2 + %kw, %ic] : memref<2x10x10x16xf32>
                %1 = affine.load %w[%kh, %kw, %ic, %oc] : memref<3x3x16x16xf32>
                %2 = affine.load %y[%n, %oh, %ow, %oc] : memref<2x4x4x16xf32>
                %3 = arith.mulf %0, %1 : f32
                %4 = arith.addf %2, %3 : f32
                affine.store %4, %y[%n, %oh, %ow, %oc] : memref<2x4x4x16xf32>
              }
            }
          }
        }
      }
    }
  }
  return %y : memref<2x4x4x16xf32>
}

// -----

// Groups of 64 channels: runs of 256 bytes (four lines) are streams too.
// CHECK-LABEL: func @long_runs
// CHECK-NOT: affine.prefetch
// CHECK: vector.fma
// CHECK-NOT: affine.prefetch
// CHECK: return
func.func @long_runs(%x: memref<1x10x10x2x64xf32>, %w: memref<3x3x64x2x16xf32>) -> memref<1x4x4x2x16xf32> {
  %y = memref.alloc() : memref<1x4x4x2x16xf32>
  affine.for %n = 0 to 1 {
    affine.for %g = 0 to 2 {
      affine.for %oc = 0 to 16 {
        affine.for %oh = 0 to 4 {
          affine.for %ow = 0 to 4 {
            affine.for %kh = 0 to 3 {
              affine.for %kw = 0 to 3 {
                affine.for %ic = 0 to 64 {
                  %0 = affine.load %x[%n, %oh * 2 + %kh, %ow * 2 + %kw, %g, %ic] : memref<1x10x10x2x64xf32>
                  %1 = affine.load %w[%kh, %kw, %ic, %g, %oc] : memref<3x3x64x2x16xf32>
                  %2 = affine.load %y[%n, %oh, %ow, %g, %oc] : memref<1x4x4x2x16xf32>
                  %3 = arith.mulf %0, %1 : f32
                  %4 = arith.addf %2, %3 : f32
                  affine.store %4, %y[%n, %oh, %ow, %g, %oc] : memref<1x4x4x2x16xf32>
                }
              }
            }
          }
        }
      }
    }
  }
  return %y : memref<1x4x4x2x16xf32>
}

// -----

// One output row: no next row to fetch.
// CHECK-LABEL: func @one_row
// CHECK-NOT: affine.prefetch
// CHECK: vector.fma
// CHECK-NOT: affine.prefetch
// CHECK: return
func.func @one_row(%x: memref<1x3x10x2x16xf32>, %w: memref<3x3x16x2x16xf32>) -> memref<1x1x4x2x16xf32> {
  %y = memref.alloc() : memref<1x1x4x2x16xf32>
  affine.for %n = 0 to 1 {
    affine.for %g = 0 to 2 {
      affine.for %oc = 0 to 16 {
        affine.for %oh = 0 to 1 {
          affine.for %ow = 0 to 4 {
            affine.for %kh = 0 to 3 {
              affine.for %kw = 0 to 3 {
                affine.for %ic = 0 to 16 {
                  %0 = affine.load %x[%n, %oh * 2 + %kh, %ow * 2 + %kw, %g, %ic] : memref<1x3x10x2x16xf32>
                  %1 = affine.load %w[%kh, %kw, %ic, %g, %oc] : memref<3x3x16x2x16xf32>
                  %2 = affine.load %y[%n, %oh, %ow, %g, %oc] : memref<1x1x4x2x16xf32>
                  %3 = arith.mulf %0, %1 : f32
                  %4 = arith.addf %2, %3 : f32
                  affine.store %4, %y[%n, %oh, %ow, %g, %oc] : memref<1x1x4x2x16xf32>
                }
              }
            }
          }
        }
      }
    }
  }
  return %y : memref<1x1x4x2x16xf32>
}
