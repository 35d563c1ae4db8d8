// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},convert-dl-to-linalg)' | FileCheck %s

// Unsigned tensors are stored as the signless integers of their width, in the
// signature too; the ops whose result depends on the sign use arith's unsigned
// forms, and the sign-agnostic ones (add, mul, matmul) stay as they are.
// CHECK-LABEL: func @unsigned_binary
// CHECK-SAME: (%{{.*}}: tensor<4xi8>, %{{.*}}: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi8>, tensor<4xi8>, tensor<4xi8>, tensor<4xi8>, tensor<4xi8>)
// CHECK: arith.maxui %{{.*}} : i8
// CHECK: arith.minui %{{.*}} : i8
// CHECK: arith.cmpi ult, %{{.*}} : i8
// CHECK: arith.cmpi uge, %{{.*}} : i8
// The divisor 0 gives 0 (numpy), not a trap.
// CHECK: arith.cmpi eq
// CHECK: arith.divui %{{.*}} : i8
// CHECK: arith.remui %{{.*}} : i8
// CHECK-NOT: arith.divsi
// CHECK-NOT: arith.maxsi
func.func @unsigned_binary(%a: tensor<4xui8>, %b: tensor<4xui8>)
    -> (tensor<4xui8>, tensor<4xui8>, tensor<4xi1>, tensor<4xi1>, tensor<4xui8>, tensor<4xui8>) {
  %0 = dl.maximum %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = dl.minimum %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %2 = dl.less %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %3 = dl.greater_equal %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %4 = dl.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %5 = dl.remainder %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0, %1, %2, %3, %4, %5 : tensor<4xui8>, tensor<4xui8>, tensor<4xi1>, tensor<4xi1>, tensor<4xui8>, tensor<4xui8>
}

// -----

// Casts zero-extend and convert as unsigned; a float becomes a narrow unsigned
// integer through i64 (wrapping as numpy does on x86, where fptoui of a
// negative value would be poison).
// CHECK-LABEL: func @unsigned_casts
// CHECK: arith.uitofp %{{.*}} : i8 to f32
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: arith.fptosi %{{.*}} : f32 to i64
// CHECK-NEXT: arith.trunci %{{.*}} : i64 to i8
// CHECK: arith.fptoui %{{.*}} : f32 to i64
func.func @unsigned_casts(%a: tensor<4xui8>, %f: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xi32>, tensor<4xui8>, tensor<4xui64>) {
  %0 = dl.cast %a : tensor<4xui8> -> tensor<4xf32>
  %1 = dl.cast %a : tensor<4xui8> -> tensor<4xi32>
  %2 = dl.cast %f : tensor<4xf32> -> tensor<4xui8>
  %3 = dl.cast %f : tensor<4xf32> -> tensor<4xui64>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xi32>, tensor<4xui8>, tensor<4xui64>
}

// -----

// Reductions start from the unsigned extremes (0 for max, 2^n - 1 for min);
// argmax compares unsigned; relu and abs of unsigned values are the values.
// CHECK-LABEL: func @unsigned_reductions
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i16
// CHECK: linalg.fill ins(%[[ZERO]] : i16)
// CHECK: linalg.reduce { arith.maxui }
// CHECK: %[[ALL:.*]] = arith.constant -1 : i16
// CHECK: linalg.fill ins(%[[ALL]] : i16)
// CHECK: linalg.reduce { arith.minui }
// CHECK: arith.cmpi ugt
// CHECK: arith.maxui
// CHECK-NOT: math.absi
func.func @unsigned_reductions(%a: tensor<3x4xui16>)
    -> (tensor<3xui16>, tensor<3xui16>, tensor<3xi64>, tensor<3x4xui16>, tensor<3x4xui16>) {
  %0 = dl.reduce_max %a axes = [1] : tensor<3x4xui16> -> tensor<3xui16>
  %1 = dl.reduce_min %a axes = [1] : tensor<3x4xui16> -> tensor<3xui16>
  %2 = dl.argmax %a axis = 1 : tensor<3x4xui16> -> tensor<3xi64>
  %3 = dl.relu %a : tensor<3x4xui16> -> tensor<3x4xui16>
  %4 = dl.abs %a : tensor<3x4xui16> -> tensor<3x4xui16>
  return %0, %1, %2, %3, %4 : tensor<3xui16>, tensor<3xui16>, tensor<3xi64>, tensor<3x4xui16>, tensor<3x4xui16>
}

// -----

// Constants keep their bits (200 : ui8 is -56 : i8); a product of unsigned
// matrices is the signless matmul (same-width products wrap alike).
// CHECK-LABEL: func @unsigned_constant_and_matmul
// CHECK: arith.constant dense<[-56, 3]> : tensor<2xi8>
// CHECK: linalg.matmul {{.*}}ins(%{{.*}}, %{{.*}} : tensor<2x3xi8>, tensor<3x2xi8>)
func.func @unsigned_constant_and_matmul(%a: tensor<2x3xui8>, %b: tensor<3x2xui8>) -> (tensor<2xui8>, tensor<2x2xui8>) {
  %c = dl.constant dense<[200, 3]> : tensor<2xui8>
  %m = dl.matmul %a, %b : (tensor<2x3xui8>, tensor<3x2xui8>) -> tensor<2x2xui8>
  return %c, %m : tensor<2xui8>, tensor<2x2xui8>
}

// -----

// dl.quantize: the quotient in the input's type, round half to even, the zero
// point added and the result clamped in f32 (maxnumf first: NaN becomes the
// low end), then converted; the per-axis scale and zero point are read
// through the axis' loop.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[AXIS:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @quantize_per_axis
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[AXIS]], #[[AXIS]], #[[ID]]]
// CHECK: arith.divf %{{.*}} : f32
// CHECK-NEXT: math.roundeven
// CHECK-NEXT: arith.uitofp %{{.*}} : i8 to f32
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.constant 0.000000e+00 : f32
// CHECK-NEXT: arith.constant 2.550000e+02 : f32
// CHECK-NEXT: arith.maxnumf
// CHECK-NEXT: arith.minnumf
// CHECK-NEXT: arith.fptoui %{{.*}} : f32 to i8
// The inverse: (q - z) * s in f32.
// CHECK: arith.uitofp %{{.*}} : i8 to f32
// CHECK-NEXT: arith.uitofp %{{.*}} : i8 to f32
// CHECK-NEXT: arith.subf
// CHECK-NEXT: arith.mulf
func.func @quantize_per_axis(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %z: tensor<3xui8>) -> (tensor<2x3xui8>, tensor<2x3xf32>) {
  %q = dl.quantize %x, %s, %z axis = 1 : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xui8>
  %d = dl.dequantize %q, %s, %z axis = 1 : (tensor<2x3xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xf32>
  return %q, %d : tensor<2x3xui8>, tensor<2x3xf32>
}

// -----

// Per tensor: the parameters' map has no result. An i32 result is clamped in
// f64, which holds its range exactly (f32 would round 2^31 - 1 up to 2^31).
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func @quantize_to_i32
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[SCALAR]], #[[SCALAR]], #{{.*}}]
// CHECK: arith.divf %{{.*}} : f32
// CHECK-NEXT: arith.extf %{{.*}} : f32 to f64
// CHECK: arith.constant 0x41DFFFFFFFC00000 : f64
// CHECK: arith.fptosi %{{.*}} : f64 to i32
func.func @quantize_to_i32(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i32>) -> tensor<4xi32> {
  %q = dl.quantize %x, %s, %z axis = 0 : (tensor<4xf32>, tensor<f32>, tensor<i32>) -> tensor<4xi32>
  return %q : tensor<4xi32>
}

// -----

// dl.matmul_integer: a generic whose body extends each operand by its sign
// (zero for ui8, sign for i8) and accumulates in i32 from a zero fill.
// CHECK-LABEL: func @matmul_integer
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: linalg.fill ins(%[[ZERO]] : i32)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: ^bb0(%[[A:.*]]: i8, %[[B:.*]]: i8, %[[ACC:.*]]: i32):
// CHECK-NEXT: arith.extui %[[A]] : i8 to i32
// CHECK-NEXT: arith.extsi %[[B]] : i8 to i32
// CHECK-NEXT: arith.muli
// CHECK-NEXT: arith.addi %[[ACC]]
func.func @matmul_integer(%a: tensor<4x16xui8>, %b: tensor<16x8xi8>) -> tensor<4x8xi32> {
  %r = dl.matmul_integer %a, %b : (tensor<4x16xui8>, tensor<16x8xi8>) -> tensor<4x8xi32>
  return %r : tensor<4x8xi32>
}
