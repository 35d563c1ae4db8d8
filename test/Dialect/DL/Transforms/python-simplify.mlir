// RUN: %dlc-opt-py %s -p dl-simplify | FileCheck %s

// Strength reduction of constant powers.
// CHECK-LABEL: func.func @powers
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-DAG: %[[ONE:.*]] = dl.constant dense<1.000000e+00> : tensor<f32>
// CHECK-DAG: %[[SQ:.*]] = dl.mul %[[X]], %[[X]] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-DAG: %[[CUBE:.*]] = dl.mul %[[SQ2:.*]], %[[X]]
// CHECK-DAG: %[[ROOT:.*]] = dl.sqrt %[[X]]
// CHECK-DAG: %[[INV:.*]] = dl.div %[[ONE]], %[[X]]
// CHECK-NOT: dl.pow
// CHECK: return
func.func @powers(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %two = dl.constant dense<2.0> : tensor<f32>
  %three = dl.constant dense<3.0> : tensor<f32>
  %half = dl.constant dense<0.5> : tensor<f32>
  %minus = dl.constant dense<-1.0> : tensor<f32>
  %a = dl.pow %x, %two : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %b = dl.pow %x, %three : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %c = dl.pow %x, %half : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %d = dl.pow %x, %minus : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  return %a, %b, %c, %d : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// Division by a power of two is an exact multiplication; by 3 it is not,
// and stays a division. Negations are absorbed into add and sub.
// CHECK-LABEL: func.func @divisions_and_negations
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>, %[[Y:.*]]: tensor<8xf32>)
// CHECK-DAG: %[[QUARTER:.*]] = dl.constant dense<2.500000e-01> : tensor<f32>
// CHECK-DAG: dl.mul %[[X]], %[[QUARTER]]
// CHECK-DAG: dl.div %[[X]], %{{.*}} : (tensor<8xf32>, tensor<f32>)
// CHECK-DAG: dl.sub %[[X]], %[[Y]]
// CHECK-DAG: dl.sub %[[Y]], %[[X]]
// CHECK-DAG: dl.add %[[X]], %[[Y]]
// CHECK-DAG: dl.neg %[[Y]]
// CHECK-NOT: dl.neg
func.func @divisions_and_negations(%x: tensor<8xf32>, %y: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %four = dl.constant dense<4.0> : tensor<f32>
  %three = dl.constant dense<3.0> : tensor<f32>
  %zero = dl.constant dense<0.0> : tensor<f32>
  %a = dl.div %x, %four : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %b = dl.div %x, %three : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %ny = dl.neg %y : tensor<8xf32> -> tensor<8xf32>
  %nx = dl.neg %x : tensor<8xf32> -> tensor<8xf32>
  %c = dl.add %x, %ny : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %d = dl.add %nx, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %ny2 = dl.neg %y : tensor<8xf32> -> tensor<8xf32>
  %e = dl.sub %x, %ny2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %f = dl.sub %zero, %y : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  return %a, %b, %c, %d, %e, %f : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// Left alone: an exponent that is not a constant splat, a power that
// broadcasts x to a larger shape, and an exponent without a rule (4).
// CHECK-LABEL: func.func @refused
// CHECK: dl.pow %arg0, %arg1
// CHECK: dl.pow %arg2
// CHECK: dl.pow %arg3
func.func @refused(%x: tensor<4xf32>, %e: tensor<4xf32>, %s: tensor<1xf32>, %i: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %two = dl.constant dense<2.0> : tensor<4xf32>
  %four = dl.constant dense<4.0> : tensor<f32>
  %a = dl.pow %x, %e : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = dl.pow %s, %two : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = dl.pow %i, %four : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
