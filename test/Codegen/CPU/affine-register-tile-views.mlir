// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-register-tile{rows=4 vectors=2 pack=false}))' | FileCheck %s

// Temporaries placed by dl-plan-memory in one arena: A and C are views at
// disjoint byte ranges, so C is not read through A and the nest is tiled.
// CHECK-LABEL: func.func @disjoint_views
// CHECK: vector.fma
func.func @disjoint_views(%b: memref<16x16xf32>) {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<2048xi8>
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %a = memref.view %arena[%c0][] : memref<2048xi8> to memref<16x16xf32>
  %c = memref.view %arena[%c1024][] : memref<2048xi8> to memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 16 {
      affine.for %j = 0 to 16 {
        %x = affine.load %a[%i, %k] : memref<16x16xf32>
        %y = affine.load %b[%k, %j] : memref<16x16xf32>
        %z = affine.load %c[%i, %j] : memref<16x16xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %z, %p : f32
        affine.store %s, %c[%i, %j] : memref<16x16xf32>
      }
    }
  }
  memref.dealloc %arena : memref<2048xi8>
  return
}

// -----

// Overlapping byte ranges (C starts inside A): C may be read through A, so
// keeping C's tile in registers would be wrong; the nest is left alone.
// CHECK-LABEL: func.func @overlapping_views
// CHECK-NOT: vector.fma
// CHECK: arith.mulf
func.func @overlapping_views(%b: memref<16x16xf32>) {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<2048xi8>
  %c0 = arith.constant 0 : index
  %c512 = arith.constant 512 : index
  %a = memref.view %arena[%c0][] : memref<2048xi8> to memref<16x16xf32>
  %c = memref.view %arena[%c512][] : memref<2048xi8> to memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 16 {
      affine.for %j = 0 to 16 {
        %x = affine.load %a[%i, %k] : memref<16x16xf32>
        %y = affine.load %b[%k, %j] : memref<16x16xf32>
        %z = affine.load %c[%i, %j] : memref<16x16xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %z, %p : f32
        affine.store %s, %c[%i, %j] : memref<16x16xf32>
      }
    }
  }
  memref.dealloc %arena : memref<2048xi8>
  return
}
