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
