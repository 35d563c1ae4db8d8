// RUN: %dlc-opt-py %s -p dl-autodiff | FileCheck %s
// RUN: %dlc-opt-py %s -p dl-autodiff -p "dl-cpu-pipeline{to=graph}" | FileCheck %s --check-prefix=GRAPH

// Reverse mode: @loss_grad returns the value and the gradient with respect
// to each float argument: through reduce_sum (broadcast back), tanh
// (g * (1 - y*y)) and matmul (g @ w^T for x, x^T @ g for w). The original
// function is left as it was.
// CHECK-LABEL: func.func @loss(
// CHECK-NEXT: dl.matmul
// CHECK-NEXT: dl.tanh
// CHECK-NEXT: dl.reduce_sum
// CHECK-NEXT: return
// CHECK-LABEL: func.func @loss_grad(
// CHECK-SAME: %[[W:.*]]: tensor<3x2xf32>, %[[X:.*]]: tensor<4x3xf32>) -> (tensor<f32>, tensor<3x2xf32>, tensor<4x3xf32>)
// CHECK: %[[Y:.*]] = dl.tanh
// CHECK: %[[V:.*]] = dl.reduce_sum
// CHECK: %[[ONES:.*]] = dl.broadcast_to %{{.*}} shape = [4, 2]
// CHECK: %[[YY:.*]] = dl.mul %[[Y]], %[[Y]]
// CHECK: %[[D:.*]] = dl.sub %{{.*}}, %[[YY]]
// CHECK: %[[G:.*]] = dl.mul %[[ONES]], %[[D]]
// CHECK: %[[WT:.*]] = dl.transpose %[[W]] perm = [1, 0]
// CHECK: %[[GX:.*]] = dl.matmul %[[G]], %[[WT]]
// CHECK: %[[XT:.*]] = dl.transpose %[[X]] perm = [1, 0]
// CHECK: %[[GW:.*]] = dl.matmul %[[XT]], %[[G]]
// CHECK: return %[[V]], %[[GW]], %[[GX]]

// The backward graph goes through the graph passes like any other (its
// broadcast ones folded away; the matmuls with transposed operands stay).
// GRAPH-LABEL: func.func @loss_grad(
// GRAPH-NOT: dl.broadcast_to
// GRAPH: return
func.func @loss(%w: tensor<3x2xf32>, %x: tensor<4x3xf32>) -> tensor<f32> attributes {dl.autodiff} {
  %0 = dl.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = dl.tanh %0 : tensor<4x2xf32> -> tensor<4x2xf32>
  %2 = dl.reduce_sum %1 axes = [0, 1] : tensor<4x2xf32> -> tensor<f32>
  return %2 : tensor<f32>
}

