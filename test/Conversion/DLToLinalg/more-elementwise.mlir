// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},convert-dl-to-linalg)' | FileCheck %s

// Trigonometric and hyperbolic functions are math ops, one generic each; on
// f16/bf16 they run in f32 and round back, like exp and erf. f64 stays f64.
// CHECK-LABEL: func @trig
// CHECK: math.sin %{{.*}} : f32
// CHECK: math.cos %{{.*}} : f32
// CHECK: math.tan %{{.*}} : f32
// CHECK: math.asin %{{.*}} : f32
// CHECK: math.acos %{{.*}} : f32
// CHECK: math.atan %{{.*}} : f32
// CHECK: math.sinh %{{.*}} : f32
// CHECK: math.cosh %{{.*}} : f32
// CHECK: math.asinh %{{.*}} : f32
// CHECK: math.acosh %{{.*}} : f32
// CHECK: math.atanh %{{.*}} : f32
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: math.sin %{{.*}} : f32
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-NEXT: math.atanh %{{.*}} : f32
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to bf16
// CHECK: math.cos %{{.*}} : f64
func.func @trig(%x: tensor<?x4xf32>, %h: tensor<4xf16>, %g: tensor<4xbf16>, %d: tensor<4xf64>)
    -> (tensor<?x4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf64>) {
  %0 = dl.sin %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = dl.cos %0 : tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = dl.tan %1 : tensor<?x4xf32> -> tensor<?x4xf32>
  %3 = dl.asin %2 : tensor<?x4xf32> -> tensor<?x4xf32>
  %4 = dl.acos %3 : tensor<?x4xf32> -> tensor<?x4xf32>
  %5 = dl.atan %4 : tensor<?x4xf32> -> tensor<?x4xf32>
  %6 = dl.sinh %5 : tensor<?x4xf32> -> tensor<?x4xf32>
  %7 = dl.cosh %6 : tensor<?x4xf32> -> tensor<?x4xf32>
  %8 = dl.asinh %7 : tensor<?x4xf32> -> tensor<?x4xf32>
  %9 = dl.acosh %8 : tensor<?x4xf32> -> tensor<?x4xf32>
  %10 = dl.atanh %9 : tensor<?x4xf32> -> tensor<?x4xf32>
  %11 = dl.sin %h : tensor<4xf16> -> tensor<4xf16>
  %12 = dl.atanh %g : tensor<4xbf16> -> tensor<4xbf16>
  %13 = dl.cos %d : tensor<4xf64> -> tensor<4xf64>
  return %10, %11, %12, %13 : tensor<?x4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf64>
}

// -----

// Rounding: floor, ceil, and round half to even (math.roundeven, not
// math.round, which rounds halfway cases away from zero).
// CHECK-LABEL: func @rounding
// CHECK: math.floor %{{.*}} : f32
// CHECK: math.ceil %{{.*}} : f32
// CHECK: math.roundeven %{{.*}} : f32
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: math.roundeven %{{.*}} : f32
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to f16
func.func @rounding(%x: tensor<3xf32>, %h: tensor<3xf16>) -> (tensor<3xf32>, tensor<3xf16>) {
  %0 = dl.floor %x : tensor<3xf32> -> tensor<3xf32>
  %1 = dl.ceil %0 : tensor<3xf32> -> tensor<3xf32>
  %2 = dl.round %1 : tensor<3xf32> -> tensor<3xf32>
  %3 = dl.round %h : tensor<3xf16> -> tensor<3xf16>
  return %2, %3 : tensor<3xf32>, tensor<3xf16>
}

// -----

// sign: compare with zero and select; on floats a NaN (unordered with
// itself) is selected through.
// CHECK-LABEL: func @sign
// CHECK: linalg.generic
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf uno
// CHECK: linalg.generic
// CHECK: arith.cmpi sgt
// CHECK: arith.cmpi slt
// CHECK-NOT: arith.cmpf
// CHECK: return
func.func @sign(%x: tensor<3xf32>, %i: tensor<3xi32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %0 = dl.sign %x : tensor<3xf32> -> tensor<3xf32>
  %1 = dl.sign %i : tensor<3xi32> -> tensor<3xi32>
  return %0, %1 : tensor<3xf32>, tensor<3xi32>
}

// -----

// isnan / isinf: float in, bool out (stored as i8).
// CHECK-LABEL: func @float_classes
// CHECK: linalg.generic
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X:.*]], %[[X]] : f16
// CHECK: arith.extui %[[NAN]] : i1 to i8
// CHECK: -> tensor<5xi8>
// CHECK: linalg.generic
// CHECK: %[[ABS:.*]] = math.absf %{{.*}} : f16
// CHECK: %[[INF:.*]] = arith.constant 0x7C00 : f16
// CHECK: arith.cmpf oeq, %[[ABS]], %[[INF]] : f16
func.func @float_classes(%x: tensor<5xf16>) -> (tensor<5xi1>, tensor<5xi1>) {
  %0 = dl.isnan %x : tensor<5xf16> -> tensor<5xi1>
  %1 = dl.isinf %x : tensor<5xf16> -> tensor<5xi1>
  return %0, %1 : tensor<5xi1>, tensor<5xi1>
}

// -----

// Logical ops work on the bool storage bytes (0 or 1): and/or/xor are the
// integer ops, and `not` flips the low bit; they broadcast like the other
// binary ops.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @logical
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]]
// CHECK: arith.andi %{{.*}}, %{{.*}} : i8
// CHECK: arith.ori %{{.*}}, %{{.*}} : i8
// CHECK: arith.xori %{{.*}}, %{{.*}} : i8
// CHECK: %[[ONE:.*]] = arith.constant 1 : i8
// CHECK: arith.xori %{{.*}}, %[[ONE]] : i8
func.func @logical(%a: tensor<?x4xi1>, %b: tensor<4xi1>) -> tensor<?x4xi1> {
  %0 = dl.logical_and %a, %b : (tensor<?x4xi1>, tensor<4xi1>) -> tensor<?x4xi1>
  %1 = dl.logical_or %0, %b : (tensor<?x4xi1>, tensor<4xi1>) -> tensor<?x4xi1>
  %2 = dl.logical_xor %1, %a : (tensor<?x4xi1>, tensor<?x4xi1>) -> tensor<?x4xi1>
  %3 = dl.logical_not %2 : tensor<?x4xi1> -> tensor<?x4xi1>
  return %3 : tensor<?x4xi1>
}

// -----

// Bitwise ops: integers and bools; ~ is xor with all ones on integers and
// with 1 on bools (whose storage holds 0 or 1).
// CHECK-LABEL: func @bitwise
// CHECK: arith.andi %{{.*}}, %{{.*}} : i32
// CHECK: arith.ori %{{.*}}, %{{.*}} : i32
// CHECK: arith.xori %{{.*}}, %{{.*}} : i32
// CHECK: %[[ONES:.*]] = arith.constant -1 : i32
// CHECK: arith.xori %{{.*}}, %[[ONES]] : i32
// CHECK: %[[ONE:.*]] = arith.constant 1 : i8
// CHECK: arith.xori %{{.*}}, %[[ONE]] : i8
func.func @bitwise(%a: tensor<3xi32>, %b: tensor<i32>, %c: tensor<3xi1>) -> (tensor<3xi32>, tensor<3xi1>) {
  %0 = dl.bitwise_and %a, %b : (tensor<3xi32>, tensor<i32>) -> tensor<3xi32>
  %1 = dl.bitwise_or %0, %b : (tensor<3xi32>, tensor<i32>) -> tensor<3xi32>
  %2 = dl.bitwise_xor %1, %a : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %3 = dl.bitwise_not %2 : tensor<3xi32> -> tensor<3xi32>
  %4 = dl.bitwise_not %c : tensor<3xi1> -> tensor<3xi1>
  return %3, %4 : tensor<3xi32>, tensor<3xi1>
}

// -----

// Integer remainders never trap: a divisor of 0 or -1 becomes 1 (the
// remainder is then 0, which is right for -1 and numpy's answer for 0).
// remainder then moves a non-zero result into the divisor's sign.
// CHECK-LABEL: func @int_remainders
// CHECK: linalg.generic
// CHECK: %[[Z:.*]] = arith.cmpi eq, %[[Y:.*]], %{{.*}} : i64
// CHECK: %[[M:.*]] = arith.cmpi eq, %[[Y]], %{{.*}} : i64
// CHECK: %[[UNSAFE:.*]] = arith.ori %[[Z]], %[[M]] : i1
// CHECK: %[[D:.*]] = arith.select %[[UNSAFE]], %{{.*}}, %[[Y]] : i64
// CHECK: %[[R:.*]] = arith.remsi %{{.*}}, %[[D]] : i64
// CHECK: arith.xori %[[R]], %[[Y]] : i64
// CHECK: arith.addi %[[R]], %[[Y]] : i64
// CHECK: linalg.generic
// CHECK: arith.remsi
// CHECK-NOT: arith.addi
// CHECK: return
func.func @int_remainders(%a: tensor<3xi64>, %b: tensor<3xi64>) -> (tensor<3xi64>, tensor<3xi64>) {
  %0 = dl.remainder %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %1 = dl.fmod %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %0, %1 : tensor<3xi64>, tensor<3xi64>
}

// -----

// Float remainders: fmod is arith.remf (C's fmod); remainder adds the
// divisor when the signs differ and gives a zero the divisor's sign. f16
// runs in f32.
// CHECK-LABEL: func @float_remainders
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: %[[R:.*]] = arith.remf %{{.*}}, %[[W:.*]] : f32
// CHECK: arith.addf %[[R]], %[[W]] : f32
// CHECK: math.copysign %{{.*}}, %[[W]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: linalg.generic
// CHECK: arith.remf %{{.*}}, %{{.*}} : f64
// CHECK-NOT: arith.addf
// CHECK: return
func.func @float_remainders(%a: tensor<3xf16>, %b: tensor<f16>, %c: tensor<3xf64>) -> (tensor<3xf16>, tensor<3xf64>) {
  %0 = dl.remainder %a, %b : (tensor<3xf16>, tensor<f16>) -> tensor<3xf16>
  %1 = dl.fmod %c, %c : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %0, %1 : tensor<3xf16>, tensor<3xf64>
}
