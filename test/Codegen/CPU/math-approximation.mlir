// RUN: dl-opt %s --split-input-file --dl-math-approximation --verify-diagnostics | FileCheck %s
// RUN: dl-opt %s --split-input-file --dl-math-approximation=functions=exp --verify-diagnostics | FileCheck %s --check-prefix=EXP
// RUN: not dl-opt %s --split-input-file --dl-math-approximation=functions=sin -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// f32 tanh, erf, exp, log, vectors or scalars, become arith polynomials;
// f64 (and f16) keep math ops, for libm.
// CHECK-LABEL: func @approximated
// CHECK-NOT: math.tanh {{.*}}vector
// CHECK-NOT: math.erf
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK: math.tanh %{{.*}} : f64
// CHECK-NOT: math.
// CHECK: return
// EXP-LABEL: func @approximated
// EXP: math.tanh %{{.*}} : vector<16xf32>
// EXP: math.erf
// EXP-NOT: math.exp
// EXP: math.log
// EXP: math.tanh %{{.*}} : f64
// BAD: error: dl-math-approximation: cannot approximate 'sin'; the functions it approximates are tanh, erf, exp, expm1, log, log1p and log2
func.func @approximated(%v: vector<16xf32>, %s: f32, %d: f64) -> (vector<16xf32>, f32, f32, f32, f64) {
  %0 = math.tanh %v : vector<16xf32>
  %1 = math.erf %s : f32
  %2 = math.exp %s : f32
  %3 = math.log %s : f32
  %4 = math.tanh %d : f64
  return %0, %1, %2, %3, %4 : vector<16xf32>, f32, f32, f32, f64
}

// -----

// f32 erf is one rational function in x^2 (not upstream's three pieces with
// per-lane coefficient selects): P of degree 4 and Q of degree 6 by Horner,
// x * P / Q, and +-1 where |x| >= erfinv(1 - 2^-23) (NaN unordered: kept).
// CHECK-LABEL: func @erf_rational
// CHECK: %[[X2:.*]] = arith.mulf %[[X:.*]], %[[X]] : vector<8xf32>
// CHECK-COUNT-10: math.fma %{{.*}}, %[[X2]], %{{.*}} : vector<8xf32>
// CHECK: %[[P:.*]] = arith.mulf %[[X]], %{{.*}} : vector<8xf32>
// CHECK: %[[R:.*]] = arith.divf %[[P]], %{{.*}} : vector<8xf32>
// CHECK: %[[C:.*]] = arith.constant dense<3.8325{{.*}}> : vector<8xf32>
// CHECK: %[[A:.*]] = math.absf %[[X]]
// CHECK: %[[IN:.*]] = arith.cmpf ult, %[[A]], %[[C]]
// CHECK: %[[ONE:.*]] = math.copysign %{{.*}}, %[[X]]
// CHECK: %[[E:.*]] = arith.select %[[IN]], %[[R]], %[[ONE]] : vector<8xi1>, vector<8xf32>
// CHECK-NOT: arith.select
// CHECK: return %[[E]]
// CHECK-LABEL: func @erf_f64
// CHECK: math.erf %{{.*}} : f64
func.func @erf_rational(%v: vector<8xf32>) -> vector<8xf32> {
  %0 = math.erf %v : vector<8xf32>
  return %0 : vector<8xf32>
}

func.func @erf_f64(%d: f64) -> f64 {
  %0 = math.erf %d : f64
  return %0 : f64
}
