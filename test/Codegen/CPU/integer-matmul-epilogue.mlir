// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},dl-integer-matmul)' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},dl-integer-matmul)' | FileCheck %s --check-prefix=ZMM
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},dl-integer-matmul{epilogue=false})' | FileCheck %s --check-prefix=OFF

// The requantization of a quantized 1x1 convolution, as the memory plan
// leaves it: the int32 sums C (a view of the arena, zero-filled) read back
// through an expand_shape of its rows [16] -> [1, 4, 4] by one elementwise
// nest (the zero point's correction per column, int -> float, the scale,
// round, clamp to int8, back to float) that writes the interior of a padded
// buffer, whose border is filled between the product and it. The nest runs
// on the kernel's tiles: each row's (h, w) from divisions by 4, the
// correction loaded along the columns, the scale broadcast, the body's ops
// on vector<8> (vector<16> on zmm), stored into the interior; C is neither
// read nor written, its fill and the nest are gone, the border fills stay.
#mapA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mapB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mapC = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#col = affine_map<(d0, d1, d2, d3) -> (d3)>
#none = affine_map<(d0, d1, d2, d3) -> ()>
memref.global "private" constant @w : memref<8x24xi8> = dense<3>
func.func @requantize(%a: memref<16x8xi8>, %corr: memref<24xi32>, %scale: memref<f32>) {
  %arena = memref.alloc() : memref<8192xi8>
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : i32
  %w0 = memref.get_global @w : memref<8x24xi8>
  %w = memref.cast %w0 : memref<8x24xi8> to memref<8x24xi8>
  %c1536 = arith.constant 1536 : index
  %c = memref.view %arena[%c1536][] : memref<8192xi8> to memref<16x24xi32>
  linalg.fill ins(%zero : i32) outs(%c : memref<16x24xi32>)
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<16x8xi8>, memref<8x24xi8>) outs(%c : memref<16x24xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  %e = memref.expand_shape %c [[0, 1, 2], [3]] output_shape [1, 4, 4, 24] : memref<16x24xi32> into memref<1x4x4x24xi32>
  %c0b = arith.constant 0 : index
  %pad = memref.view %arena[%c0b][] : memref<8192xi8> to memref<1x6x6x24xf32>
  %border = memref.subview %pad[0, 0, 0, 0] [1, 1, 6, 24] [1, 1, 1, 1] : memref<1x6x6x24xf32> to memref<1x1x6x24xf32, strided<[864, 144, 24, 1]>>
  %fz = arith.constant 0.0 : f32
  linalg.fill ins(%fz : f32) outs(%border : memref<1x1x6x24xf32, strided<[864, 144, 24, 1]>>)
  %inner = memref.subview %pad[0, 1, 1, 0] [1, 4, 4, 24] [1, 1, 1, 1] : memref<1x6x6x24xf32> to memref<1x4x4x24xf32, strided<[864, 144, 24, 1], offset: 168>>
  linalg.generic {indexing_maps = [#id, #col, #none, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e, %corr, %scale : memref<1x4x4x24xi32>, memref<24xi32>, memref<f32>) outs(%inner : memref<1x4x4x24xf32, strided<[864, 144, 24, 1], offset: 168>>) {
  ^bb0(%s: i32, %k: i32, %f: f32, %o: f32):
    %lo = arith.constant -128.0 : f32
    %hi = arith.constant 127.0 : f32
    %0 = arith.subi %s, %k : i32
    %1 = arith.sitofp %0 : i32 to f32
    %2 = arith.mulf %1, %f : f32
    %3 = math.roundeven %2 : f32
    %4 = arith.maxnumf %3, %lo : f32
    %5 = arith.minnumf %4, %hi : f32
    %6 = arith.fptosi %5 : f32 to i8
    %7 = arith.sitofp %6 : i8 to f32
    linalg.yield %7 : f32
  }
  memref.dealloc %arena : memref<8192xi8>
  return
}
// CHECK-LABEL: func @requantize
// CHECK: %[[PAD:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<8192xi8> to memref<1x6x6x24xf32>
// CHECK: %[[INNER:.*]] = memref.subview %[[PAD]][0, 1, 1, 0] [1, 4, 4, 24]
// CHECK-NOT: linalg.fill ins(%{{.*}} : i32)
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK: arith.remui %{{.*}}, %{{.*}} : index
// CHECK: arith.divui %{{.*}}, %{{.*}} : index
// CHECK: vector.load %{{.*}} : memref<24xi32>, vector<8xi32>
// CHECK: memref.load %{{.*}}[] : memref<f32>
// CHECK: vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK: arith.subi %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: math.roundeven %{{.*}} : vector<8xf32>
// CHECK: arith.fptosi %{{.*}} : vector<8xf32> to vector<8xi8>
// CHECK: vector.store %{{.*}}, %[[INNER]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x4x4x24xf32, strided<[864, 144, 24, 1], offset: 168>>, vector<8xf32>
// CHECK-NOT: vector.maskedstore
// CHECK-NOT: linalg.generic
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<1x1x6x24xf32
// CHECK-NOT: linalg.generic
// CHECK: memref.dealloc
// ZMM-LABEL: func @requantize
// ZMM: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// ZMM: arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// ZMM: vector.maskedstore %{{.*}} : memref<1x4x4x24xf32, strided<[864, 144, 24, 1], offset: 168>>, vector<16xi1>, vector<16xf32>
// ZMM-NOT: linalg.generic
// ZMM: memref.dealloc
// OFF-LABEL: func @requantize
// OFF: linalg.fill ins(%{{.*}} : i32)
// OFF: vector.store %{{.*}} : memref<16x24xi32>, vector<8xi32>
// OFF: linalg.generic

// -----

// Refused, the product keeps its own output and the nest stays: a body
// reading its own output (@reads_output); a fill between the product and
// the nest of the very buffer it writes (@write_between); a nest writing
// the arena where the product's A lives (@output_over_a: tiles would
// overwrite A while others still read it; @output_over_a_nested: the same
// through a view of a view, whose offsets add); an input read across the
// columns (@across_columns: no vector load along them).
#mapA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mapB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mapC = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @reads_output(%a: memref<16x8xi8>, %b: memref<8x24xi8>, %out: memref<16x24xf32>) {
  %zero = arith.constant 0 : i32
  %c = memref.alloc() : memref<16x24xi32>
  linalg.fill ins(%zero : i32) outs(%c : memref<16x24xi32>)
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x8xi8>, memref<8x24xi8>) outs(%c : memref<16x24xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<16x24xi32>) outs(%out : memref<16x24xf32>) {
  ^bb0(%s: i32, %o: f32):
    %0 = arith.sitofp %s : i32 to f32
    %1 = arith.addf %0, %o : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %c : memref<16x24xi32>
  return
}
// CHECK-LABEL: func @reads_output
// CHECK: memref.alloc() : memref<16x24xi32>
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK: vector.store %{{.*}} : memref<16x24xi32>, vector<8xi32>
// CHECK: linalg.generic

func.func @write_between(%a: memref<16x8xi8>, %b: memref<8x24xi8>, %out: memref<16x24xf32>) {
  %zero = arith.constant 0 : i32
  %fz = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<16x24xi32>
  linalg.fill ins(%zero : i32) outs(%c : memref<16x24xi32>)
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x8xi8>, memref<8x24xi8>) outs(%c : memref<16x24xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  linalg.fill ins(%fz : f32) outs(%out : memref<16x24xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<16x24xi32>) outs(%out : memref<16x24xf32>) {
  ^bb0(%s: i32, %o: f32):
    %0 = arith.sitofp %s : i32 to f32
    linalg.yield %0 : f32
  }
  memref.dealloc %c : memref<16x24xi32>
  return
}
// CHECK-LABEL: func @write_between
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK: vector.store %{{.*}} : memref<16x24xi32>, vector<8xi32>
// CHECK: linalg.fill ins(%{{.*}} : f32)
// CHECK: linalg.generic

func.func @output_over_a(%b: memref<8x24xi8>) {
  %arena = memref.alloc() : memref<4096xi8>
  %zero = arith.constant 0 : i32
  %c0 = arith.constant 0 : index
  %c2048 = arith.constant 2048 : index
  %a = memref.view %arena[%c0][] : memref<4096xi8> to memref<16x8xi8>
  %c = memref.view %arena[%c2048][] : memref<4096xi8> to memref<16x24xi32>
  %out = memref.view %arena[%c0][] : memref<4096xi8> to memref<16x24xi8>
  linalg.fill ins(%zero : i32) outs(%c : memref<16x24xi32>)
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x8xi8>, memref<8x24xi8>) outs(%c : memref<16x24xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<16x24xi32>) outs(%out : memref<16x24xi8>) {
  ^bb0(%s: i32, %o: i8):
    %0 = arith.trunci %s : i32 to i8
    linalg.yield %0 : i8
  }
  memref.dealloc %arena : memref<4096xi8>
  return
}
// CHECK-LABEL: func @output_over_a
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK: vector.store %{{.*}} : memref<16x24xi32>, vector<8xi32>
// CHECK: linalg.generic

// The same through a view of a view: the output's bytes are 2048 + 0, over A's.
func.func @output_over_a_nested(%b: memref<8x24xi8>) {
  %arena = memref.alloc() : memref<8192xi8>
  %zero = arith.constant 0 : i32
  %c0 = arith.constant 0 : index
  %c2048 = arith.constant 2048 : index
  %c4096 = arith.constant 4096 : index
  %a = memref.view %arena[%c2048][] : memref<8192xi8> to memref<16x8xi8>
  %c = memref.view %arena[%c4096][] : memref<8192xi8> to memref<16x24xi32>
  %half = memref.view %arena[%c2048][] : memref<8192xi8> to memref<2048xi8>
  %out = memref.view %half[%c0][] : memref<2048xi8> to memref<16x24xi8>
  linalg.fill ins(%zero : i32) outs(%c : memref<16x24xi32>)
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x8xi8>, memref<8x24xi8>) outs(%c : memref<16x24xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<16x24xi32>) outs(%out : memref<16x24xi8>) {
  ^bb0(%s: i32, %o: i8):
    %0 = arith.trunci %s : i32 to i8
    linalg.yield %0 : i8
  }
  memref.dealloc %arena : memref<8192xi8>
  return
}
// CHECK-LABEL: func @output_over_a_nested
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK: vector.store %{{.*}} : memref<16x24xi32>, vector<8xi32>
// CHECK: linalg.generic

func.func @across_columns(%a: memref<16x8xi8>, %b: memref<8x24xi8>, %t: memref<24x16xi32>, %out: memref<16x24xi32>) {
  %zero = arith.constant 0 : i32
  %c = memref.alloc() : memref<16x24xi32>
  linalg.fill ins(%zero : i32) outs(%c : memref<16x24xi32>)
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x8xi8>, memref<8x24xi8>) outs(%c : memref<16x24xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  linalg.generic {indexing_maps = [#id, #tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %t : memref<16x24xi32>, memref<24x16xi32>) outs(%out : memref<16x24xi32>) {
  ^bb0(%s: i32, %u: i32, %o: i32):
    %0 = arith.addi %s, %u : i32
    linalg.yield %0 : i32
  }
  memref.dealloc %c : memref<16x24xi32>
  return
}
// CHECK-LABEL: func @across_columns
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK: vector.store %{{.*}} : memref<16x24xi32>, vector<8xi32>
// CHECK: linalg.generic

// -----

// Refused: a body with an op that is not scalar arith/math (linalg.index:
// the element's position, which the tile's vectors do not carry).
#mapA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mapB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mapC = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @index_in_body(%a: memref<16x8xi8>, %b: memref<8x24xi8>, %out: memref<16x24xi32>) {
  %zero = arith.constant 0 : i32
  %c = memref.alloc() : memref<16x24xi32>
  linalg.fill ins(%zero : i32) outs(%c : memref<16x24xi32>)
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x8xi8>, memref<8x24xi8>) outs(%c : memref<16x24xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<16x24xi32>) outs(%out : memref<16x24xi32>) {
  ^bb0(%s: i32, %o: i32):
    %i = linalg.index 1 : index
    %j = arith.index_cast %i : index to i32
    %0 = arith.addi %s, %j : i32
    linalg.yield %0 : i32
  }
  memref.dealloc %c : memref<16x24xi32>
  return
}
// CHECK-LABEL: func @index_in_body
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK: vector.store %{{.*}} : memref<16x24xi32>, vector<8xi32>
// CHECK: linalg.generic
// CHECK: linalg.index

// -----

// BERT's dynamically quantized projections, as the memory plan leaves them
// (dl-schedule-epilogues has put Q's consumer next to its product): between
// Q's product and its consumer, the zero point widened (a scalar nest) and
// its correction per column (a [24] nest) that the consumer reads, then K's
// product. The two nests move above Q's product (they touch neither C nor
// write A or B); K's fill and product stay (the consumer, moved up past
// them, shares no memory with them); the consumer runs on Q's tiles.
// Refused (@correction_over_a): a correction written over A's bytes cannot
// move above the product that reads A, and the consumer, which reads it,
// cannot move above it: the consumer keeps its own nest.
#mapA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mapB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mapC = affine_map<(d0, d1, d2) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#s0 = affine_map<() -> ()>
#s1 = affine_map<(d0) -> ()>
#id1 = affine_map<(d0) -> (d0)>
func.func @correction_between(%a: memref<16x8xi8>, %wq: memref<8x24xi8>, %wk: memref<8x24xi8>,
                              %zp: memref<i8>, %colq: memref<24xi32>) {
  %arena = memref.alloc() : memref<8192xi8>
  %zero = arith.constant 0 : i32
  %c0 = arith.constant 0 : index
  %c6144 = arith.constant 6144 : index
  %out = memref.view %arena[%c6144][] : memref<8192xi8> to memref<16x24xf32>
  %q = memref.view %arena[%c0][] : memref<8192xi8> to memref<16x24xi32>
  linalg.fill ins(%zero : i32) outs(%q : memref<16x24xi32>)
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %wq : memref<16x8xi8>, memref<8x24xi8>) outs(%q : memref<16x24xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  %c4096 = arith.constant 4096 : index
  %zw = memref.view %arena[%c4096][] : memref<8192xi8> to memref<i32>
  linalg.generic {indexing_maps = [#s0, #s0], iterator_types = []} ins(%zp : memref<i8>) outs(%zw : memref<i32>) {
  ^bb0(%x: i8, %o: i32):
    %0 = arith.extui %x : i8 to i32
    linalg.yield %0 : i32
  }
  %c4160 = arith.constant 4160 : index
  %corr = memref.view %arena[%c4160][] : memref<8192xi8> to memref<24xi32>
  linalg.generic {indexing_maps = [#s1, #id1, #id1], iterator_types = ["parallel"]} ins(%zw, %colq : memref<i32>, memref<24xi32>) outs(%corr : memref<24xi32>) {
  ^bb0(%x: i32, %y: i32, %o: i32):
    %0 = arith.muli %x, %y : i32
    linalg.yield %0 : i32
  }
  %c2048 = arith.constant 2048 : index
  %k = memref.view %arena[%c2048][] : memref<8192xi8> to memref<16x24xi32>
  linalg.fill ins(%zero : i32) outs(%k : memref<16x24xi32>)
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %wk : memref<16x8xi8>, memref<8x24xi8>) outs(%k : memref<16x24xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q, %corr : memref<16x24xi32>, memref<24xi32>) outs(%out : memref<16x24xf32>) {
  ^bb0(%s: i32, %cc: i32, %o: f32):
    %0 = arith.subi %s, %cc : i32
    %1 = arith.sitofp %0 : i32 to f32
    linalg.yield %1 : f32
  }
  memref.dealloc %arena : memref<8192xi8>
  return
}
// CHECK-LABEL: func @correction_between
// CHECK:      linalg.generic {{.*}} ins(%{{.*}} : memref<i8>) outs(%[[ZW:.*]] : memref<i32>)
// CHECK:      linalg.generic {{.*}} ins(%[[ZW]], %{{.*}} : memref<i32>, memref<24xi32>) outs(%[[CORR:.*]] : memref<24xi32>)
// CHECK:      llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK:      vector.load %[[CORR]][%{{.*}}] : memref<24xi32>, vector<8xi32>
// CHECK:      arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK:      vector.store %{{.*}} : memref<16x24xf32>, vector<8xf32>
// CHECK:      llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK-NOT:  linalg.generic
// CHECK:      memref.dealloc

func.func @correction_over_a(%wq: memref<8x24xi8>, %zp: memref<i8>, %colq: memref<24xi32>) {
  %arena = memref.alloc() : memref<8192xi8>
  %zero = arith.constant 0 : i32
  %c0 = arith.constant 0 : index
  %c6144 = arith.constant 6144 : index
  %out = memref.view %arena[%c6144][] : memref<8192xi8> to memref<16x24xf32>
  %c4096 = arith.constant 4096 : index
  %a = memref.view %arena[%c4096][] : memref<8192xi8> to memref<16x8xi8>
  %three = arith.constant 3 : i8
  linalg.fill ins(%three : i8) outs(%a : memref<16x8xi8>)
  %q = memref.view %arena[%c0][] : memref<8192xi8> to memref<16x24xi32>
  linalg.fill ins(%zero : i32) outs(%q : memref<16x24xi32>)
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %wq : memref<16x8xi8>, memref<8x24xi8>) outs(%q : memref<16x24xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  %corr = memref.view %arena[%c4096][] : memref<8192xi8> to memref<24xi32>
  linalg.generic {indexing_maps = [#s1, #id1, #id1], iterator_types = ["parallel"]} ins(%zp, %colq : memref<i8>, memref<24xi32>) outs(%corr : memref<24xi32>) {
  ^bb0(%x: i8, %y: i32, %o: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.muli %0, %y : i32
    linalg.yield %1 : i32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q, %corr : memref<16x24xi32>, memref<24xi32>) outs(%out : memref<16x24xf32>) {
  ^bb0(%s: i32, %cc: i32, %o: f32):
    %0 = arith.subi %s, %cc : i32
    %1 = arith.sitofp %0 : i32 to f32
    linalg.yield %1 : f32
  }
  memref.dealloc %arena : memref<8192xi8>
  return
}
// CHECK-LABEL: func @correction_over_a
// CHECK:      llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK:      vector.store %{{.*}} : memref<16x24xi32>, vector<8xi32>
// CHECK:      linalg.generic {{.*}} outs(%{{.*}} : memref<24xi32>)
// CHECK:      linalg.generic {{.*}} outs(%{{.*}} : memref<16x24xf32>)
